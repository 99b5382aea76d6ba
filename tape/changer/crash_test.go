package changer

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// TestInventoryCrash cuts the inventory save of a MOVE MEDIUM at every
// step (nothing written, a torn temporary file, written but not synced,
// synced but not renamed, renamed but the directory not synced) and
// restarts the changer over what is on disk: every cartridge is in
// exactly one element, the move is either done or not, the command was
// not reported GOOD unless the save completed, and the temporary files
// are gone.
func TestInventoryCrash(t *testing.T) {
	barcodes := []string{"A00001", "A00002", "A00003"}
	for step := range numSteps {
		l := newLab(t, "slots=3;mailslots=1", barcodes...)
		l.c.store.crash = func(s saveStep) bool { return s == step }
		r, _ := l.do(move(0x1000, 0x0010), 0)
		wantGood := false // the crash hook cuts every step, so no save completes
		if (r.Status == scsi.StatusGood) != wantGood {
			t.Errorf("step %d: status %v", step, r.Status)
		}
		if err := l.c.Close(); err != nil {
			t.Fatal(err)
		}
		l.open() // restart
		inv := l.c.Inventory()
		got := inv.Barcodes()
		slices.Sort(got)
		if !slices.Equal(got, barcodes) {
			t.Errorf("step %d: cartridges after restart %v, want each of %v once", step, got, barcodes)
		}
		at := l.where("A00001")
		if step >= stepSyncDir && at != (Loc{ImportExport, 0}) || step < stepRename && at != (Loc{Storage, 0}) {
			t.Errorf("step %d: A00001 at %+v", step, at)
		}
		ents, _ := os.ReadDir(l.dir)
		for _, e := range ents {
			if strings.Contains(e.Name(), ".tmp-") {
				t.Errorf("step %d: %s left behind", step, e.Name())
			}
		}
		// The restarted changer moves normally.
		dst := uint16(0x1000)
		if at.Type == Storage {
			dst = 0x0010
		}
		l.ok(move(0x1001, dst), 0)
	}
}

// TestInventoryFileIsTheTruth: the saved file is what a restart reads,
// and a corrupt file stops Open rather than losing the placements.
func TestInventoryFileIsTheTruth(t *testing.T) {
	l := newLab(t, "slots=2;mailslots=0", "A00001")
	l.ok(move(0x1000, 0x1001), 0)
	l.open()
	if at := l.where("A00001"); at != (Loc{Storage, 1}) {
		t.Fatalf("A00001 at %+v", at)
	}
	if err := os.WriteFile(filepath.Join(l.dir, ".library-lib0.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open("lib0", l.cfg, nil, nil); err == nil {
		t.Fatal("Open over a corrupt inventory succeeded")
	}
}
