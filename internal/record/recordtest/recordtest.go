// Package recordtest holds what tests of recordings share: a device with
// a deliberate bug, to show that a replay catches a behaviour change.
package recordtest

import (
	"context"

	"github.com/vscsid/vscsid/scsi"
)

// NegatedInfo wraps h so that the INFORMATION of its sense has the wrong
// sign: a tape drive that reports the ILI and filemark residues the way
// st would count backwards.
func NegatedInfo(h scsi.Handler) scsi.Handler { return negatedInfo{h} }

type negatedInfo struct{ scsi.Handler }

func (n negatedInfo) HandleCommand(ctx context.Context, cmd *scsi.Command) scsi.Response {
	r := n.Handler.HandleCommand(ctx, cmd)
	r.Sense.Info = -r.Sense.Info
	return r
}
