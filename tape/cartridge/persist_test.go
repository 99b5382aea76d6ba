package cartridge

import (
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
)

// openDrive opens tape0 over the media directory as the daemon does.
func openDrive(t *testing.T, media, cfgstring string) *tape.Drive {
	t.Helper()
	c, err := tape.ParseConfig(cfgstring)
	if err != nil {
		t.Fatal(err)
	}
	lib, err := MakeLibrary(media)
	if err != nil {
		t.Fatal(err)
	}
	d, err := tape.Open("tape0", c, lib, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func savedState(t *testing.T, media string) tape.DriveState {
	t.Helper()
	lib, err := NewLibrary(media)
	if err != nil {
		t.Fatal(err)
	}
	s, ok, err := lib.LoadDriveState("tape0")
	if err != nil || !ok {
		t.Fatalf("no saved state: %v", err)
	}
	return s
}

// A cartridge swapped by the operator, or by the initiator's LOAD UNLOAD,
// is the one the drive holds after a restart; the configured cartridge is
// created on first start; an edited config wins; no temporary file stays.
func TestOpenSurvivesRestart(t *testing.T) {
	media := filepath.Join(t.TempDir(), "media") // created by the first start
	cfg := "media=" + media + ";barcode=AAA001L9"
	d := openDrive(t, media, cfg)
	if s := savedState(t, media); s.Barcode != "AAA001L9" || s.ConfigBarcode != "AAA001L9" || s.Resume != nil {
		t.Fatalf("state after the first start: %+v", s)
	}
	lib, _ := NewLibrary(media)
	if err := lib.Create("BBB002L9", Options{}); err != nil {
		t.Fatal(err)
	}
	if err := d.Change("BBB002L9"); err != nil {
		t.Fatal(err)
	}
	if s := savedState(t, media); s.Barcode != "BBB002L9" {
		t.Fatalf("state after Change: %+v", s)
	}
	// A refused change ejects nothing.
	if err := d.Change("NOPE01"); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("Change to a missing cartridge: %v, want fs.ErrNotExist", err)
	}
	if err := d.Change("bad/name"); !errors.Is(err, ErrBadBarcode) {
		t.Errorf("Change to a bad barcode: %v, want ErrBadBarcode", err)
	}
	if got := d.Stats().Barcode; got != "BBB002L9" {
		t.Fatalf("a refused Change left %q", got)
	}
	// The initiator unloads (mt offline): saved at once.
	for range 3 { // the unit attentions of the power on and the loads
		d.HandleCommand(context.Background(), &scsi.Command{CDB: scsi.CDB{0, 0, 0, 0, 0, 0}, Data: scsi.NewBuffer()})
	}
	if r := d.HandleCommand(context.Background(), &scsi.Command{CDB: scsi.CDB{0x1b, 0, 0, 0, 0, 0}, Data: scsi.NewBuffer()}); r.Status != scsi.StatusGood {
		t.Fatalf("LOAD UNLOAD (unload): %v %+v", r.Status, r.Sense)
	}
	if s := savedState(t, media); s.Barcode != "" || d.Stats().Barcode != "" {
		t.Fatalf("after LOAD UNLOAD (unload): state %+v, drive %q", s, d.Stats().Barcode)
	}
	if err := d.Change("BBB002L9"); err != nil {
		t.Fatal(err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	d2 := openDrive(t, media, cfg)
	if got := d2.Stats().Barcode; got != "BBB002L9" {
		t.Errorf("after a restart the drive holds %q, want the swapped-in BBB002L9", got)
	}
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	ents, _ := os.ReadDir(media)
	for _, e := range ents {
		if strings.Contains(e.Name(), ".tmp") {
			t.Errorf("left %s", e.Name())
		}
	}

	// An edited config (another barcode=) wins over the saved state.
	d3 := openDrive(t, media, "media="+media+";barcode=CCC003L9")
	if got := d3.Stats().Barcode; got != "CCC003L9" {
		t.Errorf("config edited since the save: drive holds %q, want the configured CCC003L9", got)
	}
	if err := d3.Close(); err != nil {
		t.Fatal(err)
	}

	// A corrupt state file is ignored with a warning, not fatal.
	if err := os.WriteFile(filepath.Join(media, ".drive-tape0.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := openDrive(t, media, "media="+media).Close(); err != nil {
		t.Fatal(err)
	}
}

// A clean stop keeps the position and block size for the next start,
// which uses them once: a crash after that start begins at BOT again.
func TestOpenResumesAfterCleanStop(t *testing.T) {
	media := t.TempDir()
	cfg := "media=" + media + ";barcode=RES001L9"
	start := func() *tape.Drive {
		t.Helper()
		d := openDrive(t, media, cfg)
		for range 2 { // the power-on and load unit attentions
			d.HandleCommand(context.Background(), &scsi.Command{CDB: scsi.CDB{0, 0, 0, 0, 0, 0}, Data: scsi.NewBuffer()})
		}
		return d
	}
	cmd := func(d *tape.Drive, cdb scsi.CDB, data []byte) {
		t.Helper()
		if r := d.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: scsi.NewBuffer(data)}); r.Status != scsi.StatusGood {
			t.Fatalf("% x: %v %+v", cdb, r.Status, r.Sense)
		}
	}
	d := start()
	for range 3 { // three 1000-byte records, then mt setblk 1000
		cmd(d, scsi.CDB{0x0a, 0, 0, 0x03, 0xe8, 0}, make([]byte, 1000))
	}
	cmd(d, scsi.CDB{0x15, 0x10, 0, 0, 12, 0}, []byte{0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0x03, 0xe8})
	if err := d.Close(); err != nil { // a clean stop
		t.Fatal(err)
	}
	if s := savedState(t, media); s.Resume == nil || s.Resume.Object != 3 || s.Resume.BlockSize != 1000 {
		t.Fatalf("clean stop saved %+v", s)
	}

	d2 := start()
	if _, obj, _ := d2.Position(); obj != 3 {
		t.Fatalf("after a clean restart the drive is at object %d, want 3", obj)
	}
	// Fixed mode with 1000-byte blocks was kept: one block reads a record.
	cmd(d2, scsi.CDB{0x2b, 0, 0, 0, 0, 0, 1, 0, 0, 0}, nil) // LOCATE 1
	cmd(d2, scsi.CDB{0x08, 0x01, 0, 0, 1, 0}, make([]byte, 1000))
	if s := savedState(t, media); s.Resume != nil {
		t.Fatalf("the start kept the resume point: %+v", s.Resume)
	}
	// A crash: what is on disk is what the start saved; the Close that
	// the crash never ran must not count (its lock goes with it).
	statePath := filepath.Join(media, ".drive-tape0.json")
	atCrash, err := os.ReadFile(statePath)
	if err != nil {
		t.Fatal(err)
	}
	if err := d2.Close(); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(statePath, atCrash, 0o600); err != nil {
		t.Fatal(err)
	}
	d3 := start()
	defer func() { _ = d3.Close() }()
	if _, obj, _ := d3.Position(); obj != 0 {
		t.Fatalf("after a crash the drive is at object %d, want 0", obj)
	}
}

// A drive's state file that is a FIFO (start-up would block on it), a
// symbolic link to /dev/zero (memory without bound) or a huge file is
// refused with what it is. Only the FIFO could hang a wrong
// implementation, so only it runs under a hang guard.
func TestDriveStateHostileFiles(t *testing.T) {
	for _, c := range []struct {
		name string
		make func(p string) error
		want string
	}{
		{"fifo", func(p string) error { return unix.Mkfifo(p, 0o600) }, "is a FIFO"},
		{"symlink to /dev/zero", func(p string) error { return os.Symlink("/dev/zero", p) }, "is a symbolic link"},
		{"huge", func(p string) error { return os.WriteFile(p, make([]byte, maxDriveState+1), 0o600) }, "larger than"},
	} {
		t.Run(c.name, func(t *testing.T) {
			media := t.TempDir()
			if err := c.make(filepath.Join(media, ".drive-tape0.json")); err != nil {
				t.Fatal(err)
			}
			lib, err := NewLibrary(media)
			if err != nil {
				t.Fatal(err)
			}
			load := func() error { _, _, err := lib.LoadDriveState("tape0"); return err }
			if c.name != "fifo" {
				err = load()
			} else {
				done := make(chan error, 1)
				go func() { done <- load() }()
				select {
				case err = <-done:
				case <-time.After(time.Minute):
					t.Fatal("LoadDriveState blocked on a FIFO")
				}
			}
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("LoadDriveState: %v, want %q", err, c.want)
			}
		})
	}
}

// A configured cartridge whose image is damaged does not keep the drive
// from starting: it starts empty, saves no state that would keep it empty,
// and loads the cartridge once the image is good again.
func TestOpenWithDamagedCartridgeStartsEmpty(t *testing.T) {
	media := t.TempDir()
	lib, err := MakeLibrary(media)
	if err != nil {
		t.Fatal(err)
	}
	if err := lib.Create("BAD001L9", Options{}); err != nil {
		t.Fatal(err)
	}
	img := filepath.Join(media, "BAD001L9.vtape")
	good, err := os.ReadFile(img)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(img, good[:100], 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := "media=" + media + ";barcode=BAD001L9"
	d := openDrive(t, media, cfg)
	if b := d.Stats().Barcode; b != "" {
		t.Fatalf("drive holds %q, want nothing", b)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if _, ok, err := lib.LoadDriveState("tape0"); ok || err != nil {
		t.Fatalf("a state was saved for the degraded start (ok %v, %v)", ok, err)
	}
	if err := os.WriteFile(img, good, 0o600); err != nil {
		t.Fatal(err)
	}
	d = openDrive(t, media, cfg)
	defer d.Close() //nolint:errcheck // test cleanup
	if b := d.Stats().Barcode; b != "BAD001L9" {
		t.Fatalf("after the repair the drive holds %q", b)
	}
}
