package changer

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/scsi"
)

// TestInventoryCrash cuts a MOVE MEDIUM's journal record (a torn record;
// a record written but not synced) and restarts the changer over what is
// on disk: every cartridge is in exactly one element, the move is done or
// not (a torn record never counts), the command was not reported GOOD,
// and the restarted changer moves normally.
func TestInventoryCrash(t *testing.T) {
	barcodes := []string{"A00001", "A00002", "A00003"}
	for _, step := range []saveStep{stepJournalWrite, stepJournalSync} {
		l := newLab(t, "slots=3;mailslots=1", barcodes...)
		l.c.store.crash = func(s saveStep) bool { return s == step }
		if r, _ := l.do(move(0x1000, 0x0010), 0); r.Status == scsi.StatusGood {
			t.Errorf("step %d: status GOOD", step)
		}
		at := l.restartAndCheck(step, barcodes)
		if step == stepJournalWrite && at != (Loc{Storage, 0}) || at != (Loc{Storage, 0}) && at != (Loc{ImportExport, 0}) {
			t.Errorf("step %d: A00001 at %+v", step, at)
		}
		dst := uint16(0x1000)
		if at.Type == Storage {
			dst = 0x0010
		}
		l.ok(move(0x1001, dst), 0)
	}
}

// TestSnapshotCrash cuts the snapshot a move writes once the journal is
// due for compaction, at every step (nothing written, a torn temporary
// file, written but not synced, synced but not renamed, renamed but the
// directory not synced): the move is already durable in the journal, so
// it is reported GOOD and is there after the restart, whether the
// snapshot got written or not; the temporary files are gone.
func TestSnapshotCrash(t *testing.T) {
	barcodes := []string{"A00001", "A00002", "A00003"}
	for step := range numSteps {
		l := newLab(t, "slots=3;mailslots=1", barcodes...)
		l.c.store.compact = 1
		l.c.store.crash = func(s saveStep) bool { return s == step }
		l.ok(move(0x1000, 0x0010), 0)
		if at := l.restartAndCheck(step, barcodes); at != (Loc{ImportExport, 0}) {
			t.Errorf("step %d: A00001 at %+v, want the mail slot", step, at)
		}
		l.ok(move(0x1001, 0x1000), 0)
	}
}

// restartAndCheck closes and reopens the changer, checks that each
// cartridge is in one element and no temporary file is left, and returns
// where A00001 is.
func (l *lab) restartAndCheck(step saveStep, barcodes []string) Loc {
	l.t.Helper()
	if err := l.c.Close(); err != nil {
		l.t.Fatal(err)
	}
	l.open()
	inv := l.c.Inventory()
	got := inv.Barcodes()
	slices.Sort(got)
	if !slices.Equal(got, barcodes) {
		l.t.Errorf("step %d: cartridges after restart %v, want each of %v once", step, got, barcodes)
	}
	ents, _ := os.ReadDir(l.dir)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp-") {
			l.t.Errorf("step %d: %s left behind", step, e.Name())
		}
	}
	return l.where("A00001")
}

// TestJournal: moves go to the journal, not the snapshot, until it is
// due for compaction; a restart replays them; a torn last record (a cut
// write) is dropped and cut off the file; a bad record before a good one
// is corruption, and Open fails rather than lose placements.
func TestJournal(t *testing.T) {
	l := newLab(t, "slots=4;mailslots=0", "A00001")
	snap := filepath.Join(l.dir, ".library-lib0.json")
	jpath := filepath.Join(l.dir, ".library-lib0.journal")
	before, _ := os.ReadFile(snap)
	l.ok(move(0x1000, 0x1001), 0)
	l.ok(move(0x1001, 0x1002), 0)
	if after, _ := os.ReadFile(snap); !bytes.Equal(before, after) {
		t.Fatal("a move rewrote the snapshot")
	}
	if lines := bytes.Count(mustRead(t, jpath), []byte("\n")); lines != 2 {
		t.Fatalf("journal has %d records, want 2", lines)
	}
	if err := l.c.Close(); err != nil {
		t.Fatal(err)
	}
	// A torn third record: dropped, and cut off the file.
	good := mustRead(t, jpath)
	torn := append(slices.Clone(good), []byte(`0badc0de {"set":[{"at":{"type":"storage","index":2},"slot":{}}`)...)
	if err := os.WriteFile(jpath, torn, 0o600); err != nil {
		t.Fatal(err)
	}
	l.open()
	if at := l.where("A00001"); at != (Loc{Storage, 2}) {
		t.Fatalf("after replay A00001 at %+v, want storage 2", at)
	}
	if b := mustRead(t, jpath); !bytes.Equal(b, good) {
		t.Fatalf("torn record not cut: %q", b)
	}
	// Compaction: the snapshot takes the moves, the journal empties.
	l.c.store.compact = 1
	l.ok(move(0x1002, 0x1003), 0)
	if b := mustRead(t, jpath); len(b) != 0 {
		t.Fatalf("journal after compaction: %q", b)
	}
	l.open()
	if at := l.where("A00001"); at != (Loc{Storage, 3}) {
		t.Fatalf("after compaction A00001 at %+v, want storage 3", at)
	}
	// A corrupt record before a good one.
	l.ok(move(0x1003, 0x1000), 0)
	l.ok(move(0x1000, 0x1001), 0)
	if err := l.c.Close(); err != nil {
		t.Fatal(err)
	}
	b := mustRead(t, jpath)
	b[0] ^= 0x01
	if err := os.WriteFile(jpath, b, 0o600); err != nil {
		t.Fatal(err)
	}
	// Open keeps the corrupt journal aside, byte for byte, with the
	// inventory it belongs to, and rebuilds the inventory from the
	// media directory: the library serves, nothing is lost.
	c, err := Open("lib0", l.cfg, nil, nil)
	if err != nil {
		t.Fatalf("Open over a corrupt journal: %v", err)
	}
	defer c.Close() //nolint:errcheck // test cleanup
	kept, _ := filepath.Glob(jpath + ".damaged-*")
	if len(kept) != 1 || !bytes.Equal(mustRead(t, kept[0]), b) {
		t.Fatalf("the corrupt journal was not kept aside as it was: %v", kept)
	}
	if len(c.Elements()) == 0 {
		t.Fatal("no elements after the rebuild")
	}
}

func mustRead(t *testing.T, path string) []byte {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestInventoryFileIsTheTruth: the saved file is what a restart reads;
// a corrupt one is kept aside as it is (the placements it holds are not
// lost) and the library is rebuilt from the media directory, so it
// still serves.
func TestInventoryFileIsTheTruth(t *testing.T) {
	l := newLab(t, "slots=2;mailslots=0", "A00001")
	l.ok(move(0x1000, 0x1001), 0)
	l.open()
	if at := l.where("A00001"); at != (Loc{Storage, 1}) {
		t.Fatalf("A00001 at %+v", at)
	}
	inv := filepath.Join(l.dir, ".library-lib0.json")
	if err := os.WriteFile(inv, []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := l.c.Close(); err != nil {
		t.Fatal(err)
	}
	l.open()
	if at := l.where("A00001"); at.Type != Storage {
		t.Fatalf("after the rebuild A00001 at %+v, want a storage slot", at)
	}
	kept, _ := filepath.Glob(inv + ".damaged-*")
	if len(kept) != 1 || string(mustRead(t, kept[0])) != "{" {
		t.Fatalf("the corrupt inventory was not kept aside: %v", kept)
	}
}

// An inventory or journal that is a FIFO, a symbolic link to /dev/zero or
// a huge file is refused, saying what it is. Only the FIFO could hang a
// wrong implementation, so only it runs under a hang guard.
func TestInventoryHostileFiles(t *testing.T) {
	for _, file := range []string{".library-lib0.json", ".library-lib0.journal"} {
		for _, c := range []struct {
			name string
			make func(p string) error
			want string
		}{
			{"fifo", func(p string) error { return unix.Mkfifo(p, 0o600) }, "is a FIFO"},
			{"symlink", func(p string) error { return os.Symlink("/dev/zero", p) }, "is a symbolic link"},
			{"huge", func(p string) error { return os.Truncate(p, maxInventoryFile+1) }, "larger than"},
		} {
			t.Run(file+"/"+c.name, func(t *testing.T) {
				dir := t.TempDir()
				s := store{dir: dir, name: "lib0"}
				if file == ".library-lib0.journal" {
					// A valid snapshot, so that the journal is read.
					if err := s.save(&Inventory{Version: inventoryVersion}); err != nil {
						t.Fatal(err)
					}
					os.Remove(filepath.Join(dir, file)) //nolint:errcheck // may not exist
				}
				p := filepath.Join(dir, file)
				if c.name == "huge" {
					if err := os.WriteFile(p, nil, 0o600); err != nil {
						t.Fatal(err)
					}
				}
				if err := c.make(p); err != nil {
					t.Fatal(err)
				}
				load := func() error {
					inv, ok, err := s.load()
					if err == nil && ok {
						err = s.replay(&inv)
					}
					return err
				}
				var err error
				if c.name != "fifo" {
					err = load()
				} else {
					done := make(chan error, 1)
					go func() { done <- load() }()
					select {
					case err = <-done:
					case <-time.After(time.Minute):
						t.Fatal("load blocked on a FIFO")
					}
				}
				if err == nil || !strings.Contains(err.Error(), c.want) {
					t.Fatalf("load: %v, want %q", err, c.want)
				}
			})
		}
	}
}
