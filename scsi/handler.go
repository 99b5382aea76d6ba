package scsi

import "context"

// A Handler emulates one SCSI logical unit: it answers each Command with a
// Response. It is the one seam between the transport (package target) and
// the emulations (packages disk and tape); packages that need the name
// without importing the transport (the fault injector) alias it, so that a
// decorator's Unwrap() Handler has one signature everywhere.
//
// Commands for one logical unit are delivered in ring order and are never
// concurrent unless the transport says otherwise (target.ConcurrentHandler).
// A Handler reports every SCSI outcome in the Response; it has no error
// return. cmd and cmd.Data are valid only during the call.
type Handler interface {
	HandleCommand(ctx context.Context, cmd *Command) Response
}

// As reports whether h, or a Handler it wraps (a decorator's Unwrap()
// Handler, followed as errors.As follows Unwrap() error), is a T, and
// returns the first one found. It is the one way to reach the emulation
// or an optional interface behind decorators (fault injection) without
// knowing their order.
func As[T any](h Handler) (T, bool) {
	for h != nil {
		if t, ok := h.(T); ok {
			return t, true
		}
		u, ok := h.(interface{ Unwrap() Handler })
		if !ok {
			break
		}
		h = u.Unwrap()
	}
	var zero T
	return zero, false
}
