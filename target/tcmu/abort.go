package tcmu

import "context"

// Aborted reports whether the initiator has aborted the command being
// served under ctx since its handler started: a TMR entry listing it
// (ABORT TASK, or the LUN RESET that aborts every task) entered the ring.
// A handler that may hold a command for long, such as the fault
// wrapper's no-response rule, polls it and gives the command up as a
// real device drops an aborted task; the kernel then completes the abort
// at once instead of at cmd_time_out, and ignores the status returned.
//
// It needs tmr_notification (the kernel reports aborts only then) and a
// device served in ring order; it must be called from the goroutine that
// called HandleCommand. Otherwise, and for a ctx that does not come from
// a Device, it reports false. Without new ring entries it costs one
// atomic load.
func Aborted(ctx context.Context) bool {
	d, _ := ctx.Value(deviceKey{}).(*Device)
	if d == nil || !d.running {
		return false
	}
	return d.pollAbort()
}

// CanReportAborts reports whether Aborted can ever be true under ctx:
// ctx is a command's of a device served in ring order.
func CanReportAborts(ctx context.Context) bool {
	d, _ := ctx.Value(deviceKey{}).(*Device)
	return d != nil && d.running
}

type deviceKey struct{}

// pollAbort scans the entries the kernel queued since the command
// started, applying their TMRs (a LUN RESET's Reset waits until the
// handler returns: the handler is running on this goroutine).
func (d *Device) pollAbort() bool {
	if d.curAborted {
		return true
	}
	head, err := d.r.loadHead()
	if err != nil || head == d.scanPos {
		return false
	}
	// A bad entry is left for the loop to find and report after the
	// command; the poll only says "not aborted".
	_ = d.scan(head)
	return d.curAborted
}
