package scsi

import "context"

// A Handler emulates one SCSI logical unit: it answers each Command with a
// Response. It is the one seam between the transport (package target) and
// the emulations (packages disk and tape); packages that need the name
// without importing the transport (the fault injector) alias it, so that a
// decorator's Unwrap() Handler has one signature everywhere.
//
// Commands for one logical unit are delivered in ring order and are never
// concurrent unless the transport says otherwise (tcmu.ConcurrentHandler).
// A Handler reports every SCSI outcome in the Response; it has no error
// return. cmd and cmd.Data are valid only during the call.
type Handler interface {
	HandleCommand(ctx context.Context, cmd *Command) Response
}

// HandlerFunc adapts a function to the Handler interface.
type HandlerFunc func(context.Context, *Command) Response

// HandleCommand calls f(ctx, cmd).
func (f HandlerFunc) HandleCommand(ctx context.Context, cmd *Command) Response {
	return f(ctx, cmd)
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

// The optional operations of a Handler: a logical unit implements those
// that apply to it, and the transport and the daemon find them with As,
// through any decorator, so a decorator (fault injection) need not forward
// them.
type (
	// A CommandNamer identifies and names the commands of its command
	// table (Table.CommandID, Table.CommandName): the bounded `command`
	// label of the metrics and the op= of fault rules. CommandName
	// returns "" for a command the handler does not support.
	CommandNamer interface {
		CommandID(cdb CDB) CommandID
		CommandName(id CommandID) string
	}
	// A Resetter learns of a LUN RESET (a tape drive queues UNIT
	// ATTENTION 29/00 and restores its mode defaults). The transport
	// calls Reset from the device's loop when a LUN RESET arrives, before
	// it serves the commands queued after it, and only for handlers
	// served in ring order.
	Resetter interface {
		Reset()
	}
	// A Reconfigurer accepts a new cfgstring (the part of dev_config
	// after "<subtype>/"), validated as strictly as at creation.
	Reconfigurer interface {
		Reconfigure(cfgstring string) error
	}
	// A Resizer accepts a new capacity (dev_size), in bytes.
	Resizer interface {
		Resize(size uint64) error
	}
	// A WriteCacher turns the write cache on or off
	// (emulate_write_cache).
	WriteCacher interface {
		SetWriteCache(enabled bool) error
	}
	// A UnitSerialer reports the unit serial number of its VPD page 80h.
	UnitSerialer interface {
		UnitSerial() string
	}
	// A MediumHolder holds a removable medium (a tape drive's cartridge):
	// LoadedBarcode returns its barcode, "" when none is loaded. The
	// daemon's device listing shows it without knowing the kind.
	MediumHolder interface {
		LoadedBarcode() string
	}
)
