package record

import (
	"context"
	"fmt"
	"time"

	"github.com/vscsid/vscsid/internal/sgio"
	"github.com/vscsid/vscsid/internal/trace"
	"github.com/vscsid/vscsid/scsi"
)

// SGTarget replays on live devices through the kernel: each recorded
// device is a SCSI generic node (/dev/sgN) open read-write, and each
// command goes to it with SG_IO as an initiator's would, through the
// kernel's SCSI midlayer, the fabric and the TCMU ring.
//
// What the initiator sees is less than what the handler saw: SG_IO
// reports one residual, so a Data-In byte count is compared (the
// transfer length less the residual) and a Data-Out count is not. The
// direction is the recorded one: Data-Out for a command whose handler
// read data when it was recorded, Data-In otherwise, so a write command
// that was refused before its data was read is sent as a read of the
// same length (it is refused again before any transfer).
type SGTarget struct {
	FDs     []int         // the node of each device of the recording, by index; -1: none
	Timeout time.Duration // per command (0: 60 s)
	sense   [252]byte
}

// Run sends c to device dev's node.
func (t *SGTarget) Run(_ context.Context, dev int, c *Call) error {
	if dev >= len(t.FDs) || t.FDs[dev] < 0 {
		return fmt.Errorf("no node for device %d of the recording", dev)
	}
	req := sgio.Request{CDB: c.CDB, Data: c.Data, Sense: t.sense[:], Timeout: t.Timeout, Dir: sgio.FromDevice}
	if c.Out {
		req.Dir = sgio.ToDevice
	}
	r, err := sgio.Do(t.FDs[dev], &req)
	if err == nil {
		err = r.Err()
	}
	if err != nil {
		return err
	}
	c.Status, c.Sense, c.Consumed = scsi.Status(r.Status), nil, -1
	if c.Status == scsi.StatusCheckCondition {
		s, err := scsi.ParseSense(t.sense[:r.SenseLen])
		if err != nil {
			return fmt.Errorf("CHECK CONDITION with sense % x: %w", t.sense[:r.SenseLen], err)
		}
		c.Sense = trace.SenseOf(s)
	}
	c.Written = 0
	if req.Dir == sgio.FromDevice {
		c.Written = max(len(c.Data)-r.Resid, 0)
	}
	return nil
}
