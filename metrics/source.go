package metrics

import (
	"time"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/changer"
	"github.com/vscsid/vscsid/target"
)

// The collector reads what the producers publish, node_exporter style:
// the transport's target.DeviceStatus of every device and, found behind
// the device's decorators with scsi.As, the snapshot of its emulation
// (disk.Stats, tape.Stats, changer.Stats) and of its fault injector
// (fault.Stats, fault.RuleStats). There are no mirror types in between: a
// new counter is a field of its producer's snapshot, a descriptor in
// names.go, a line of the collector and a row of README.md.

// A Source returns every device at scrape time; *target.Target is one.
// Devices is called once per scrape, possibly from several goroutines at
// once (one per concurrent scrape); it must be safe for that and must not
// block for long. The collector does not retain the returned slice.
type Source interface {
	Devices() []target.DeviceStatus
}

// SourceFunc adapts a function to the Source interface.
type SourceFunc func() []target.DeviceStatus

// Devices returns f().
func (f SourceFunc) Devices() []target.DeviceStatus { return f() }

// Options configure a Collector.
type Options struct {
	// CmdTimeOut is the attrib/cmd_time_out the daemon sets on its
	// devices (0: the kernel never times a command out); nil: unknown,
	// vscsi_ring_cmd_time_out_seconds is not exported.
	CmdTimeOut *time.Duration
}

// Device types: the values of the `type` label, by the emulation found
// behind the device's handler.
const (
	TypeDisk    = "disk"
	TypeTape    = "tape"
	TypeChanger = "changer"
)

// The snapshots the collector reads behind a device's handler (scsi.As).
// *disk.Disk, *tape.Drive, *changer.Changer and *fault.Device provide
// them.
type (
	diskSource    interface{ Stats() disk.Stats }
	tapeSource    interface{ Stats() tape.Stats }
	changerSource interface{ Stats() changer.Stats }
	faultSource   interface {
		Stats() fault.Stats
		Injected() []fault.RuleStats
	}
	// identified gives the standard INQUIRY identification.
	identified interface{ UnitIdentity() scsi.Identity }
)

var (
	_ diskSource    = (*disk.Disk)(nil)
	_ tapeSource    = (*tape.Drive)(nil)
	_ changerSource = (*changer.Changer)(nil)
	_ faultSource   = (*fault.Device)(nil)
	_ identified    = (*disk.Disk)(nil)
	_ identified    = (*tape.Drive)(nil)
	_ identified    = (*changer.Changer)(nil)
)

// Ring capabilities (TCMU_MAILBOX_FLAG_CAP_*), the values of the
// `capability` label.
const (
	CapOOOC    = "oooc"
	CapReadLen = "read_len"
	CapTMR     = "tmr"
	CapKeepBuf = "keep_buf"
)
