package fault_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"testing"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
)

// realDevices returns a disk (with UNMAP) and a memory tape drive.
func realDevices(t testing.TB) (*disk.Disk, *tape.Drive) { return realDevicesCfg(t, "", "") }

// realDevicesCfg is realDevices with extra cfgstring keys for each.
func realDevicesCfg(t testing.TB, diskCfg, tapeCfg string) (*disk.Disk, *tape.Drive) {
	t.Helper()
	dc, err := disk.ParseConfig("size=1MiB;lbs=512;lbpu=1" + diskCfg)
	if err != nil {
		t.Fatal(err)
	}
	dk, err := disk.New("d0", dc, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	tc, err := tape.ParseConfig("memory=1;barcode=T00001" + tapeCfg)
	if err != nil {
		t.Fatal(err)
	}
	dr, err := tape.New("tape0", tc, nil, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dr.Close() })
	return dk, dr
}

// sbcSSCBytes are the opcodes SBC and SSC assign to different commands
// that both a disk and a tape drive serve: there the names differ, as
// the commands do.
var sbcSSCBytes = map[scsi.OpCode]bool{scsi.StartStopUnit: true, scsi.SynchronizeCache16: true, scsi.PreFetch10: true}

// A command has one name, the `command` metric label and the op= of the
// rules, whatever the device: every opcode a disk and a tape drive both
// serve as the same command is named alike (0xa3 report_supported_opcodes
// on both), and the names come from scsi's table.
func TestCommandNamesAgreeAcrossDevices(t *testing.T) {
	dk, dr := realDevices(t)
	both := 0
	for op := range 256 {
		o := scsi.OpCode(op)
		dn, tn := dk.CommandName(scsi.CommandID(o)), dr.CommandName(scsi.CommandID(o))
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
	for _, d := range []scsi.CommandNamer{dk, dr} {
		if got := d.CommandName(scsi.CommandID(scsi.MaintenanceIn)); got != "report_supported_opcodes" {
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
			kind scsi.CommandTable
		}{{dk, diskCmds}, {dr, tapeCmds}} {
			if _, err := fault.New(dev.h, fault.Options{Commands: dev.kind, Rules: []fault.Rule{r}}); err != nil {
				t.Errorf("%s on a %s: %v", name, dev.kind, err)
			}
		}
	}
}

// An error becomes sense in one place (scsi.ResponseFor): the same
// condition reads the same on a disk and on a tape drive, in either sense
// format.
func TestSameErrorSameSenseOnEveryDevice(t *testing.T) {
	cdbs := map[string]scsi.CDB{
		"inquiry cmddt":          {0x12, 0x02, 0, 0, 0xff, 0},
		"inquiry bad page":       {0x12, 0x01, 0x77, 0, 0xff, 0},
		"mode sense saved":       {0x1a, 0, 0xc0 | 0x0a, 0, 0xff, 0},
		"mode sense no page":     {0x1a, 0, 0x3e, 0, 0xff, 0},
		"rsoc reserved option":   {0xa3, 0x0c, 0x07, 0, 0, 0, 0, 0, 0x10, 0, 0, 0},
		"mode select6 saved":     {0x15, 0x11, 0, 0, 0, 0},
		"mode select10 short pl": {0x55, 0x10, 0, 0, 0, 0, 0, 0, 4, 0},
	}
	for _, format := range []string{"0", "1"} {
		dk, dr := realDevicesCfg(t, ";dsense="+format, ";dsense="+format)
		for name, cdb := range cdbs {
			var got [2][]byte
			for i, h := range []fault.Handler{dk, dr} {
				for range 4 { // the first commands of a tape report unit attentions
					r := h.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: scsi.NewBuffer(make([]byte, 256))})
					if r.Status != scsi.StatusCheckCondition {
						t.Fatalf("%s dsense=%s: %T answered %v", name, format, h, r.Status)
					}
					if r.Sense.Key == scsi.UnitAttention {
						continue
					}
					got[i] = r.Sense.Append(nil)
					break
				}
			}
			if !bytes.Equal(got[0], got[1]) {
				t.Errorf("%s dsense=%s: disk sense % x, tape % x", name, format, got[0], got[1])
			}
		}
	}
	// A tape sentinel is a *scsi.Error like scsi's own, wrapped or not.
	for _, err := range []error{tape.ErrWriteProtected, fmt.Errorf("medium: %w", tape.ErrWriteProtected), errors.Join(errors.New("x"), tape.ErrWriteProtected)} {
		if a, b := scsi.ResponseFor(err), scsi.ResponseFor(scsi.ErrWriteProtected); a != b {
			t.Errorf("%v: %+v, scsi.ErrWriteProtected %+v", err, a, b)
		}
	}
}

// Two service actions of one opcode are two commands: op= by name selects
// one of them, op= by opcode both.
func TestOpSelectsServiceAction(t *testing.T) {
	rc := scsi.CDB{0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0}
	gls := scsi.CDB{0x9e, 0x12, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0}
	for _, c := range []struct {
		rule            string
		busyRC, busyGLS bool
	}{
		{"op=get_lba_status;busy", false, true},
		{"op=read_capacity_16;busy", true, false},
		{"op=0x9e;busy", true, true},
	} {
		dk, _ := realDevices(t)
		d := newDevice(t, dk, fault.Options{}, c.rule)
		for range 3 { // the power-on unit attention
			run(d, []byte{0, 0, 0, 0, 0, 0}, 0)
		}
		for _, x := range []struct {
			cdb  scsi.CDB
			busy bool
		}{{rc, c.busyRC}, {gls, c.busyGLS}} {
			if r, _ := run(d, x.cdb, 32); (r.Status == scsi.StatusBusy) != x.busy {
				t.Errorf("%s: %x/%x answered %v, want busy %v", c.rule, x.cdb[0], x.cdb[1], r.Status, x.busy)
			}
		}
	}
}

// COMPARE AND WRITE, WRITE AND VERIFY and WRITE ATOMIC(16) are writes:
// op=write with an lba= range selects them where their blocks meet it, and
// nothing else; PRE-FETCH, which addresses blocks but moves no data, is
// not a write.
func TestWriteClassCoversNewWrites(t *testing.T) {
	dk, _ := realDevicesCfg(t, ";mode=store;atomic_wr=1", "")
	d := newDevice(t, dk, fault.Options{}, "op=write;lba=100+4;sense=medium_error")
	for range 3 { // the power-on unit attention
		run(d, []byte{0, 0, 0, 0, 0, 0}, 0)
	}
	caw := func(lba byte) []byte { return []byte{0x89, 0, 0, 0, 0, 0, 0, 0, 0, lba, 0, 0, 0, 1, 0, 0} }
	wv := func(lba byte) []byte { return []byte{0x2e, 0, 0, 0, 0, lba, 0, 0, 1, 0} }
	atomic := func(lba byte) []byte { return []byte{0x9c, 0, 0, 0, 0, 0, 0, 0, 0, lba, 0, 0, 0, 1, 0, 0} }
	prefetch := func(lba byte) []byte { return []byte{0x34, 0, 0, 0, 0, lba, 0, 0, 1, 0} }
	for _, c := range []struct {
		name string
		cdb  []byte
		n    int
		hit  bool
	}{
		{"COMPARE AND WRITE in range", caw(101), 1024, true},
		{"COMPARE AND WRITE outside", caw(99), 1024, false},
		{"WRITE AND VERIFY in range", wv(103), 512, true},
		{"WRITE ATOMIC(16) in range", atomic(100), 512, true},
		{"WRITE ATOMIC(16) outside", atomic(104), 512, false},
		{"PRE-FETCH in range", prefetch(100), 0, false},
	} {
		r, _ := run(d, c.cdb, c.n)
		if hit := r.Status == scsi.StatusCheckCondition && r.Sense.Key == scsi.MediumError; hit != c.hit {
			t.Errorf("%s: %v %v %v, want the rule to fire: %v", c.name, r.Status, r.Sense.Key, r.Sense.ASC, c.hit)
		}
	}
}
