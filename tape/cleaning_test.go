package tape

import (
	"errors"
	"testing"
	"testing/synctest"
	"time"

	"github.com/vscsid/vscsid/scsi"
)

// alertsSet reads the TapeAlert log page and returns the flags set.
func (h *harness) alertsSet() []uint16 {
	h.t.Helper()
	var set []uint16
	for _, p := range parseLogPage(h.t.(*testing.T), h.ok(logSenseCDB(0x2e, 0, 0), nil, 4096), 0x2e) {
		if len(p.val) == 1 && p.val[0] != 0 {
			set = append(set, p.code)
		}
	}
	return set
}

func (h *harness) wantAlerts(what string, want ...uint16) {
	h.t.Helper()
	got := h.alertsSet()
	if len(got) != len(want) {
		h.t.Fatalf("%s: TapeAlert flags %v, want %v", what, got, want)
	}
	for i := range got {
		if got[i] != want[i] {
			h.t.Fatalf("%s: TapeAlert flags %v, want %v", what, got, want)
		}
	}
}

// TestCleaning: a drive asks for cleaning after cleanafter loads, a CLN
// cartridge cleans it (NOT READY 30/03 meanwhile, then unloaded), and a
// cleaning cartridge used cleaninglife times is expired. It runs in a
// synctest bubble: the cleaning's 50 ms are the bubble's clock, which moves
// only when every goroutine in it waits, so that the checks made during a
// cleaning see it in progress however slow the machine is.
func TestCleaning(t *testing.T) { synctest.Test(t, testCleaning) }

func testCleaning(t *testing.T) {
	h := newHarness(t, "cleanafter=2;cleaninglife=2;cleantime=50ms")
	d := h.d
	h.wantAlerts("one load")
	swap := func(barcode string) {
		t.Helper()
		if err := d.Unload(); err != nil && !errors.Is(err, ErrNoMedium) {
			t.Fatal(err)
		}
		if err := d.Load(barcode); err != nil {
			t.Fatal(err)
		}
		h.clearUA()
	}
	swap("T00002")
	h.wantAlerts("two loads", alertCleanNow)
	// Reading the page does not clear Clean Now; a third load keeps it.
	swap("T00001")
	h.wantAlerts("three loads", alertCleanNow)
	if v := h.mam(0x0002); len(v) != 8 || v[7] != 0 || v[5] != 0x08 { // flag 20 = bit 19
		t.Errorf("MAM TAPEALERT FLAGS % x, want bit 19", v)
	}

	for use := 1; use <= 2; use++ {
		swap("CLN001L1")
		if s := d.Stats(); s.Loaded || s.Barcode != "CLN001L1" {
			t.Fatalf("cleaning: stats %+v, want the cleaning cartridge shown, not loaded", s)
		}
		h.wantSense(cdb(0, 0, 0, 0, 0, 0), scsi.NotReady, scsi.CleaningCartridgeInstalled)
		h.wantSense(read6(false, false, 512), scsi.NotReady, scsi.CleaningCartridgeInstalled)
		if err := d.Load("T00003"); !errors.Is(err, ErrMediumPresent) {
			t.Errorf("load during the cleaning: %v", err)
		}
		time.Sleep(49 * time.Millisecond)
		synctest.Wait()
		if s := d.Stats(); s.Barcode != "CLN001L1" {
			t.Fatalf("cleaning: done after 49 of its 50 ms: %+v", s)
		}
		time.Sleep(time.Millisecond)
		synctest.Wait()
		if s := d.Stats(); s.Barcode != "" {
			t.Fatalf("cleaning: not done after its 50 ms: %+v", s)
		}
		h.wantSense(cdb(0, 0, 0, 0, 0, 0), scsi.NotReady, scsi.MediumNotPresent)
		if s := d.Stats(); s.Cleanings != uint64(use) {
			t.Fatalf("after cleaning %d: %d cleanings", use, s.Cleanings)
		}
		h.wantAlerts("cleaned")
		// The robot takes it out of the empty drive.
		if err := d.Unload(); !errors.Is(err, ErrNoMedium) {
			t.Errorf("unload after the cleaning: %v", err)
		}
	}
	// The third use is past its life: no cleaning, Expired Cleaning Media.
	swap("T00001")
	swap("T00002")
	h.wantAlerts("dirty again", alertCleanNow)
	swap("CLN001L1")
	h.wantSense(cdb(0, 0, 0, 0, 0, 0), scsi.NotReady, scsi.MediumNotPresent)
	h.wantAlerts("expired", alertCleanNow, alertExpiredCleaning)
	if d.Stats().Cleanings != 2 {
		t.Errorf("an expired cartridge cleaned: %d", d.Stats().Cleanings)
	}
	// A fresh cleaning cartridge, taken out before it finished: the drive
	// still asks; the next load clears the expiry flag.
	swap("CLN002L1")
	h.wantAlerts("fresh cleaning cartridge", alertCleanNow)
	if err := d.Unload(); err != nil {
		t.Fatalf("unload during the cleaning: %v", err)
	}
	if s := d.Stats(); s.Barcode != "" || s.Cleanings != 2 {
		t.Errorf("after an interrupted cleaning: %+v", s)
	}
	h.wantSense(cdb(0, 0, 0, 0, 0, 0), scsi.NotReady, scsi.MediumNotPresent)
}

// TestCleaningAtOnce: cleantime=0 cleans inside Load; a Close during a
// cleaning stops its timer.
func TestCleaningAtOnce(t *testing.T) {
	h := newHarness(t, "cleanafter=1;cleantime=0s")
	h.wantAlerts("loaded", alertCleanNow)
	if err := h.d.Unload(); err != nil {
		t.Fatal(err)
	}
	if err := h.d.Load("CLNU01L9"); err != nil {
		t.Fatal(err)
	}
	if s := h.d.Stats(); s.Barcode != "" || s.Cleanings != 1 {
		t.Fatalf("stats %+v", s)
	}
	h.clearUA()
	h.wantAlerts("cleaned")

	h2 := newHarness(t, "cleantime=10m")
	if err := h2.d.Unload(); err != nil {
		t.Fatal(err)
	}
	if err := h2.d.Load("CLN001L1"); err != nil {
		t.Fatal(err)
	}
	if err := h2.d.Close(); err != nil {
		t.Fatal(err)
	}
	if h2.d.clean != nil {
		t.Error("Close left the cleaning running")
	}
}

// wantSense runs c and checks its CHECK CONDITION sense key and code.
func (h *harness) wantSense(c []byte, key scsi.SenseKey, asc scsi.ASC) {
	h.t.Helper()
	r, _ := h.do(c, nil, 4096)
	if r.Status != scsi.StatusCheckCondition || r.Sense.Key != key || r.Sense.ASC != asc {
		h.t.Fatalf("% x: %v %v/%v, want %v %v", c, r.Status, r.Sense.Key, r.Sense.ASC, key, asc)
	}
}

// mam reads attribute id of partition 0.
func (h *harness) mam(id uint16) []byte {
	h.t.Helper()
	return parseAttrs(h.t.(*testing.T), h.ok(readAttrCDB(0, 0, id), nil, 4096))[id]
}
