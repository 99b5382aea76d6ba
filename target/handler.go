package target

import (
	"context"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
)

// A Handler emulates one SCSI logical unit (see scsi.Handler). HandleCommand
// is called from the device's loop; commands for one device are delivered
// in ring order and are never concurrent (unless the Handler is a
// ConcurrentHandler).
//
// If a Handler, or one it wraps, implements io.Closer, the device calls
// Close after the loop has stopped (an optional interface, like
// http.Flusher). A decorator (fault injection) that wraps another Handler
// exposes it with Unwrap() Handler; scsi.As walks that chain, and finds
// every optional interface (scsi.CommandNamer, scsi.Resetter, ...) that
// way.
type Handler = scsi.Handler

// A ConcurrentHandler opts in to serving up to Concurrent() commands at
// once, from that many goroutines, completing them out of ring order. The
// device honours it only when the kernel offers out-of-order completion
// (TCMU_MAILBOX_FLAG_CAP_OOOC); otherwise, or when Concurrent returns 1 or
// less, commands are delivered one at a time in ring order. A disk whose
// commands are independent may opt in; a tape drive must not.
type ConcurrentHandler interface {
	Handler
	Concurrent() int
}

// HandlerFunc adapts a function to the Handler interface.
type HandlerFunc func(context.Context, *scsi.Command) scsi.Response

// HandleCommand calls f(ctx, cmd).
func (f HandlerFunc) HandleCommand(ctx context.Context, cmd *scsi.Command) scsi.Response {
	return f(ctx, cmd)
}

// DeviceConfig describes one TCMU device as the kernel (or our own config
// file) created it.
type DeviceConfig struct {
	Name      string // configfs storage object name, e.g. "disk0"
	HBA       int    // N of core/user_N
	Subtype   string // handler subtype: "vdisk", "vtape"
	Config    string // cfgstring after "<subtype>/"
	Size      uint64 // dev_size in bytes
	BlockSize uint32 // hw_block_size
	UIO       string // "uio0"
}

// A Factory builds a Handler for a device whose subtype matches. It
// validates cfg.Config and returns a descriptive error that says what is
// wrong (the error is reported to the operator or the kernel).
type Factory func(cfg DeviceConfig, log *zap.Logger) (Handler, error)

