package tcmu

import "github.com/vscsid/vscsid/scsi"

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

// A UIO is an open TCMU device (OpenUIO): its mapping, which NewDevice
// serves, and its doorbell.
type UIO interface {
	Notifier
	Memory() []byte
	Close() error
}
