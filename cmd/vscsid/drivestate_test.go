package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
	"github.com/vscsid/vscsid/target"
)

func TestDriveStateSurvivesRestart(t *testing.T) {
	media := t.TempDir()
	for _, b := range []string{"AAA001L9", "BBB002L9"} {
		if err := cartridge.CreateCartridge(media, b, cartridge.CartridgeOptions{}); err != nil {
			t.Fatal(err)
		}
	}
	log := zaptest.NewLogger(t)
	cfg := "media=" + media + ";barcode=AAA001L9"
	dc := target.DeviceConfig{Name: "tape0", Subtype: "vtape", Config: cfg}
	hs := &handlers{m: map[string]target.Handler{}, tapes: map[string]trackedTape{}}
	h, err := hs.wrap(newTape)(dc, log)
	if err != nil {
		t.Fatal(err)
	}
	tr := &tapeTracker{}
	tt := hs.trackedTapes()
	if len(tt) != 1 || tt[0].drive == nil || tt[0].media != media {
		t.Fatalf("tracked %+v", tt)
	}
	d := tt[0].drive
	tr.note(tt[0], log)
	if s, ok, err := loadDriveState(media, "tape0"); err != nil || !ok || s.Barcode != "AAA001L9" || s.ConfigBarcode != "AAA001L9" {
		t.Fatalf("state after start: %+v %v %v", s, ok, err)
	}
	// The operator swaps the cartridge; the daemon restarts.
	if err := d.Unload(); err != nil {
		t.Fatal(err)
	}
	if err := d.Load("BBB002L9"); err != nil {
		t.Fatal(err)
	}
	tr.note(tt[0], log)
	if err := h.(interface{ Close() error }).Close(); err != nil {
		t.Fatal(err)
	}
	h2, err := newTape(dc, log)
	if err != nil {
		t.Fatal(err)
	}
	d2 := h2.(interface{ Close() error })
	defer d2.Close()
	if got := tt[0].drive.Stats().Barcode; got != "" {
		t.Errorf("closed drive still reports %q", got)
	}
	hs2 := &handlers{m: map[string]target.Handler{}, tapes: map[string]trackedTape{}}
	if _, err := hs2.wrap(func(target.DeviceConfig, *zap.Logger) (target.Handler, error) { return h2, nil })(dc, log); err != nil {
		t.Fatal(err)
	}
	if got := hs2.trackedTapes()[0].drive.Stats().Barcode; got != "BBB002L9" {
		t.Errorf("after restart the drive holds %q, want the swapped-in BBB002L9", got)
	}
	// No temporary files are left next to the cartridges.
	ents, _ := os.ReadDir(media)
	for _, e := range ents {
		if strings.HasSuffix(e.Name(), ".tmp") {
			t.Errorf("left %s", e.Name())
		}
	}

	// An edited config (another barcode=) wins over the saved state.
	c2 := "media=" + media + ";barcode=AAA001L9"
	if err := saveDriveState(media, "tape1", driveState{Barcode: "BBB002L9", ConfigBarcode: "OLD000L9"}); err != nil {
		t.Fatal(err)
	}
	h3, err := newTape(target.DeviceConfig{Name: "tape1", Subtype: "vtape", Config: c2}, log)
	if err != nil {
		t.Fatal(err)
	}
	defer h3.(*tape.Drive).Close()
	if got := h3.(*tape.Drive).Stats().Barcode; got != "AAA001L9" {
		t.Errorf("config edited since the save: drive holds %q, want the configured AAA001L9", got)
	}

	// A corrupt state file is ignored with a warning, not fatal.
	if err := os.WriteFile(filepath.Join(media, ".drive-tape2.json"), []byte("{"), 0o600); err != nil {
		t.Fatal(err)
	}
	h4, err := newTape(target.DeviceConfig{Name: "tape2", Subtype: "vtape", Config: "media=" + media}, log)
	if err != nil {
		t.Fatal(err)
	}
	h4.(interface{ Close() error }).Close()
}

// A clean stop keeps the position and block size for the next start,
// which uses them once: a crash after that start begins at BOT again.
func TestDriveResumesAfterCleanStop(t *testing.T) {
	media := t.TempDir()
	if err := cartridge.CreateCartridge(media, "RES001L9", cartridge.CartridgeOptions{}); err != nil {
		t.Fatal(err)
	}
	log := zaptest.NewLogger(t)
	dc := target.DeviceConfig{Name: "tape0", Subtype: "vtape", Config: "media=" + media + ";barcode=RES001L9"}
	start := func() (*tape.Drive, trackedTape) {
		t.Helper()
		hs := &handlers{m: map[string]target.Handler{}, tapes: map[string]trackedTape{}}
		if _, err := hs.wrap(newTape)(dc, log); err != nil {
			t.Fatal(err)
		}
		tt := hs.trackedTapes()[0]
		for range 2 { // the power-on and load unit attentions
			tt.drive.HandleCommand(context.Background(), &scsi.Command{CDB: scsi.CDB{0, 0, 0, 0, 0, 0}, Data: scsi.NewBuffer()})
		}
		return tt.drive, tt
	}
	cmd := func(d *tape.Drive, cdb scsi.CDB, data []byte) {
		t.Helper()
		if r := d.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: scsi.NewBuffer(data)}); r.Status != scsi.StatusGood {
			t.Fatalf("% x: %v %+v", cdb, r.Status, r.Sense)
		}
	}
	tr := &tapeTracker{}
	d, tt := start()
	tr.note(tt, log)
	for range 3 { // three 1000-byte records, then mt setblk 1000
		cmd(d, scsi.CDB{0x0a, 0, 0, 0x03, 0xe8, 0}, make([]byte, 1000))
	}
	cmd(d, scsi.CDB{0x15, 0x10, 0, 0, 12, 0}, []byte{0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0x03, 0xe8})
	d.Close()
	tr.stopped(tt, log) // what run does after Target.Close

	d2, tt2 := start()
	if _, obj, _ := d2.Position(); obj != 3 {
		t.Fatalf("after a clean restart the drive is at object %d, want 3", obj)
	}
	// Fixed mode with 1000-byte blocks was kept: one block reads a record.
	cmd(d2, scsi.CDB{0x2b, 0, 0, 0, 0, 0, 1, 0, 0, 0}, nil) // LOCATE 1
	cmd(d2, scsi.CDB{0x08, 0x01, 0, 0, 1, 0}, make([]byte, 1000))
	if s, _, _ := loadDriveState(media, "tape0"); s.Resume != nil {
		t.Fatalf("the start kept the resume point: %+v", s.Resume)
	}
	// A crash: no stopped. The next start begins at BOT.
	d2.Close()
	tr.note(tt2, log)
	d3, _ := start()
	defer d3.Close()
	if _, obj, _ := d3.Position(); obj != 0 {
		t.Fatalf("after a crash the drive is at object %d, want 0", obj)
	}
}
