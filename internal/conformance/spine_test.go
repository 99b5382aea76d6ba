package conformance_test

import (
	"context"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/changer"
)

// lu is one logical unit under test.
type lu struct {
	kind string
	h    scsi.Handler
	// stop makes the unit not ready for the commands that need a medium
	// (a disk is stopped; a drive is empty already) and returns such a
	// command; nil for a kind without one (a changer).
	stop func(t *testing.T) scsi.CDB
	// closeFn closes the unit; nil for a kind that serves until removed.
	closeFn func() error
}

func send(h scsi.Handler, cdb scsi.CDB) scsi.Response {
	return h.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: scsi.NewBuffer(make([]byte, 512))})
}

// units builds a fresh unit of each kind: its power-on unit attention is
// still pending.
func units(t *testing.T) []lu {
	t.Helper()
	log := zaptest.NewLogger(t)

	dcfg, err := disk.ParseConfig("size=1MiB")
	if err != nil {
		t.Fatal(err)
	}
	dk, err := disk.New("disk0", dcfg, log)
	if err != nil {
		t.Fatal(err)
	}

	tcfg, err := tape.ParseConfig("memory=1")
	if err != nil {
		t.Fatal(err)
	}
	dr, err := tape.New("tape0", tcfg, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dr.Close() })

	ccfg, err := changer.ParseConfig("media=" + t.TempDir() + ";slots=4;mailslots=1")
	if err != nil {
		t.Fatal(err)
	}
	ch, err := changer.Open("lib0", ccfg, nil, log)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = ch.Close() })

	return []lu{
		{kind: "disk", h: dk, stop: func(t *testing.T) scsi.CDB {
			// START STOP UNIT, START=0: the medium commands are NOT READY.
			if r := send(dk, scsi.CDB{0x1b, 0, 0, 0, 0, 0}); r.Status != scsi.StatusGood {
				t.Fatalf("START STOP UNIT: %+v", r)
			}
			return scsi.CDB{0x28, 0, 0, 0, 0, 0, 0, 0, 1, 0} // READ(10)
		}},
		{kind: "tape", h: dr, closeFn: dr.Close, stop: func(*testing.T) scsi.CDB {
			return scsi.CDB{0x08, 0, 0, 0, 1, 0} // READ(6), no cartridge loaded
		}},
		{kind: "changer", h: ch, closeFn: ch.Close},
	}
}

func check(t *testing.T, u lu, what string, r scsi.Response, want scsi.Sense) {
	t.Helper()
	if r.Status != scsi.StatusCheckCondition || r.Sense.Key != want.Key || r.Sense.ASC != want.ASC || r.Sense.Pointer != want.Pointer {
		t.Errorf("%s, %s: status %s sense %s %s pointer %+v, want CHECK CONDITION %s %s pointer %+v",
			u.kind, what, r.Status, r.Sense.Key, r.Sense.ASC, r.Sense.Pointer, want.Key, want.ASC, want.Pointer)
	}
}

// TestSameAnswers sends the same bad commands to a disk, a tape drive
// and a changer, and requires the same sense from each.
func TestSameAnswers(t *testing.T) {
	illegal := func(asc scsi.ASC) scsi.Sense { return scsi.Sense{Key: scsi.IllegalRequest, ASC: asc} }
	for _, u := range units(t) {
		// A pending unit attention comes before anything else, an
		// unsupported opcode included; INQUIRY passes it.
		if r := send(u.h, scsi.CDB{0x12, 0, 0, 0, 36, 0}); r.Status != scsi.StatusGood {
			t.Errorf("%s: INQUIRY with a unit attention pending: %+v", u.kind, r)
		}
		check(t, u, "unit attention", send(u.h, scsi.CDB{0xff, 0, 0, 0, 0, 0}),
			scsi.Sense{Key: scsi.UnitAttention, ASC: scsi.PowerOnResetOrBusDeviceReset})

		for _, tc := range []struct {
			what string
			cdb  scsi.CDB
			want scsi.Sense
		}{
			// SAM-5 5.9: NACA=1 without ACA support; the field pointer
			// is bit 2 of the CONTROL byte.
			{"NACA=1", scsi.CDB{0x12, 0, 0, 0, 36, 0x04}, scsi.InvalidFieldSense(5, 2)},
			{"NACA=1 in a 12-byte CDB", scsi.CDB{0xa3, 0x0c, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0x04}, scsi.InvalidFieldSense(11, 2)},
			// A CDB shorter than its opcode's length.
			{"short CDB", scsi.CDB{0x12, 0, 0, 0, 36}, illegal(scsi.InvalidFieldInCDB)},
			{"empty CDB", scsi.CDB{}, illegal(scsi.InvalidCommandOperationCode)},
			// Opcodes no kind serves.
			{"unsupported opcode", scsi.CDB{0xff, 0, 0, 0, 0, 0}, illegal(scsi.InvalidCommandOperationCode)},
			{"ATA PASS-THROUGH(16)", make16(0x85), illegal(scsi.InvalidCommandOperationCode)},
			// A service action not served of an opcode that is:
			// MAINTENANCE IN / REPORT IDENTIFYING INFORMATION.
			{"unsupported service action", scsi.CDB{0xa3, 0x05, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0}, scsi.InvalidFieldSense(1, 4)},
			// An invalid field in a supported CDB: INQUIRY with CMDDT.
			{"invalid field", scsi.CDB{0x12, 0x02, 0, 0, 36, 0}, scsi.InvalidFieldSense(1, 1)},
			// EVPD=0 with a page code.
			{"invalid page code", scsi.CDB{0x12, 0, 0x80, 0, 36, 0}, scsi.InvalidFieldSense(2, -1)},
		} {
			check(t, u, tc.what, send(u.h, tc.cdb), tc.want)
		}
		// LINK and FLAG (obsolete) are ignored, not refused.
		if r := send(u.h, scsi.CDB{0x12, 0, 0, 0, 36, 0x03}); r.Status != scsi.StatusGood {
			t.Errorf("%s: INQUIRY with LINK and FLAG set: %+v", u.kind, r)
		}

		if u.stop != nil {
			cdb := u.stop(t)
			r := send(u.h, cdb)
			if r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.NotReady {
				t.Errorf("%s: %s without a ready medium: %+v, want NOT READY", u.kind, scsi.OpCode(cdb[0]), r)
			}
			// NACA is refused before readiness is looked at.
			naca := append(scsi.CDB(nil), cdb...)
			naca[len(naca)-1] |= 0x04
			check(t, u, "NACA=1 on a medium command while not ready", send(u.h, naca), scsi.InvalidFieldSense(len(naca)-1, 2))
		}
		if u.closeFn != nil {
			if err := u.closeFn(); err != nil {
				t.Fatal(err)
			}
			check(t, u, "closed", send(u.h, scsi.CDB{0x12, 0, 0, 0, 36, 0}), scsi.Sense{Key: scsi.NotReady, ASC: scsi.LogicalUnitNotReadyCause})
		}
	}
}

func make16(op byte) scsi.CDB {
	c := make(scsi.CDB, 16)
	c[0] = op
	return c
}
