package fault_test

import (
	"testing"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/target/fault"
)

// realDevices returns a disk (with UNMAP) and a memory tape drive.
func realDevices(t testing.TB) (*disk.Disk, *tape.Drive) {
	t.Helper()
	dc, err := disk.ParseConfig("size=1MiB;lbs=512;lbpu=1")
	if err != nil {
		t.Fatal(err)
	}
	dk, err := disk.New("d0", dc, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	tc, err := tape.ParseConfig("memory=1;barcode=T00001")
	if err != nil {
		t.Fatal(err)
	}
	dr, err := tape.New("tape0", tc, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { dr.Close() })
	return dk, dr
}

// sbcSSCBytes are the opcodes SBC and SSC assign to different commands
// that both a disk and a tape drive serve: there the names differ, as
// the commands do.
var sbcSSCBytes = map[scsi.OpCode]bool{scsi.StartStopUnit: true, scsi.SynchronizeCache16: true}

// A command has one name, the `command` metric label and the op= of the
// rules, whatever the device: every opcode a disk and a tape drive both
// serve as the same command is named alike (0xa3 report_supported_opcodes
// on both), and the names come from scsi's table.
func TestCommandNamesAgreeAcrossDevices(t *testing.T) {
	dk, dr := realDevices(t)
	both := 0
	for op := range 256 {
		o := scsi.OpCode(op)
		dn, tn := dk.CommandName(o), dr.CommandName(o)
		if dn != "" && dn != scsi.SBC.Name(o) && o != scsi.ServiceActionIn16 && o != scsi.MaintenanceIn {
			t.Errorf("disk names %#02x %q, scsi.SBC %q", op, dn, scsi.SBC.Name(o))
		}
		if tn != "" && tn != scsi.SSC.Name(o) && o != scsi.MaintenanceIn {
			t.Errorf("tape names %#02x %q, scsi.SSC %q", op, tn, scsi.SSC.Name(o))
		}
		if dn == "" || tn == "" {
			continue
		}
		both++
		if sbcSSCBytes[o] {
			if dn == tn {
				t.Errorf("%#02x: disk and tape both say %q for different commands", op, dn)
			}
			continue
		}
		if dn != tn {
			t.Errorf("%#02x: disk names it %q, tape %q", op, dn, tn)
		}
	}
	if both < 10 {
		t.Errorf("only %d opcodes served by both", both)
	}
	for _, d := range []fault.CommandNamer{dk, dr} {
		if got := d.CommandName(scsi.MaintenanceIn); got != "report_supported_opcodes" {
			t.Errorf("%T: 0xa3 is %q, want report_supported_opcodes", d, got)
		}
	}
}

// op= resolves the same name to the same opcode on a disk and a tape.
func TestOpNameSameOnEveryDevice(t *testing.T) {
	dk, dr := realDevices(t)
	for _, name := range []string{"report_supported_opcodes", "maintenance_in", "inquiry", "mode_sense_10", "read_6"} {
		r, err := fault.ParseRule("op=" + name + ";busy")
		if err != nil {
			t.Fatal(err)
		}
		for _, dev := range []struct {
			h    fault.Handler
			kind fault.Kind
		}{{dk, fault.Disk}, {dr, fault.Tape}} {
			if _, err := fault.New(dev.h, fault.Options{Kind: dev.kind, Rules: []fault.Rule{r}}); err != nil {
				t.Errorf("%s on a %s: %v", name, dev.kind, err)
			}
		}
	}
}
