package tape_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

// A clean restart: the state Close found (cartridge, position, block
// size) put back into a new drive by Resume. The new drive still reports
// the power-on and load unit attentions, then answers READ POSITION and
// MODE SENSE as the old one would have, and reads on from there.
func TestResumeAfterClose(t *testing.T) {
	d, cfg, lib := cartridgeDrive(t, "RES001", cartridge.Options{Capacity: 16 << 20})
	for range 2 {
		run(t, d, []byte{0, 0, 0, 0, 0, 0}, nil, 0)
	}
	if _, ok := d.ClosedState(); ok {
		t.Fatal("ClosedState of an open drive")
	}
	// Five variable records, a filemark, then fixed 512-byte blocks
	// (mt setblk 512) holding the record numbers.
	for i := range 5 {
		good(t, d, []byte{0x0a, 0, 0, 0x03, 0xe8, 0}, bytes.Repeat([]byte{byte(i)}, 1000), 0)
	}
	good(t, d, []byte{0x10, 0, 0, 0, 1, 0}, nil, 0)
	setblk := []byte{0, 0, 0, 8, 0, 0, 0, 0, 0, 0, 0x02, 0x00}
	good(t, d, []byte{0x15, 0x10, 0, 0, byte(len(setblk)), 0}, setblk, 0)
	for i := range 4 {
		good(t, d, []byte{0x0a, 0x01, 0, 0, 1, 0}, bytes.Repeat([]byte{0x40 + byte(i)}, 512), 0)
	}
	// Back to object 8: the third fixed block (6 is the first).
	locate := []byte{0x2b, 0, 0, 0, 0, 0, 8, 0, 0, 0}
	good(t, d, locate, nil, 0)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	s, ok := d.ClosedState()
	if want := (tape.Snapshot{Barcode: "RES001", Object: 8, BlockSize: 512}); !ok || s != want {
		t.Fatalf("ClosedState = %+v, %v; want %+v", s, ok, want)
	}

	d2, err := tape.New("tape0", cfg, lib, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d2.Close() }()
	if err := d2.Resume(s); err != nil {
		t.Fatal(err)
	}
	for _, asc := range []scsi.ASC{scsi.PowerOnResetOrBusDeviceReset, scsi.NotReadyToReadyChange} {
		r, _ := run(t, d2, []byte{0, 0, 0, 0, 0, 0}, nil, 0)
		if r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.UnitAttention || r.Sense.ASC != asc {
			t.Fatalf("first commands after resume: %v %+v, want UNIT ATTENTION %v", r.Status, r.Sense, asc)
		}
	}
	pos := good(t, d2, []byte{0x34, 0, 0, 0, 0, 0, 0, 0, 0, 0}, nil, 20)
	if got := binary.BigEndian.Uint32(pos[4:]); got != 8 {
		t.Fatalf("READ POSITION after resume: block %d, want 8", got)
	}
	ms := good(t, d2, []byte{0x1a, 0, 0x3f, 0, 255, 0}, nil, 255)
	if bl := uint32(ms[9])<<16 | uint32(ms[10])<<8 | uint32(ms[11]); ms[3] != 8 || bl != 512 {
		t.Fatalf("MODE SENSE block descriptor after resume: % x", ms[:12])
	}
	// Fixed-mode READ(6) of one block continues where the old drive was.
	if data := good(t, d2, []byte{0x08, 0x01, 0, 0, 1, 0}, nil, 512); !bytes.Equal(data, bytes.Repeat([]byte{0x42}, 512)) {
		t.Fatalf("read after resume: % x...", data[:8])
	}
}

// Resume refuses what does not fit and leaves the drive as a plain load
// left it: at the beginning, in the configured block size.
func TestResumeRefuses(t *testing.T) {
	d := newMemDrive(t, "memory=1;barcode=RES002")
	if err := d.Resume(tape.Snapshot{Barcode: "OTHER1"}); !errors.Is(err, tape.ErrSnapshotMismatch) {
		t.Errorf("another cartridge's state: %v", err)
	}
	for _, s := range []tape.Snapshot{
		{Barcode: "RES002", BlockSize: 1 << 30},
		{Barcode: "RES002", Partition: 3},
		{Barcode: "RES002", Object: 5}, // the memory cartridge is blank
	} {
		if err := d.Resume(s); err == nil {
			t.Errorf("Resume(%+v) accepted", s)
		}
		if _, obj, _ := d.Position(); obj != 0 {
			t.Errorf("after refusing %+v the drive is at object %d", s, obj)
		}
	}
	if err := d.Resume(tape.Snapshot{Barcode: "RES002"}); err != nil {
		t.Errorf("Resume at BOT of an empty cartridge: %v", err)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	if err := d.Resume(tape.Snapshot{Barcode: "RES002"}); !errors.Is(err, tape.ErrNoMedium) {
		t.Errorf("Resume of a closed drive: %v", err)
	}
	if _, ok := d.ClosedState(); !ok {
		t.Error("ClosedState of a drive closed with a cartridge: not ok")
	}
}

func newMemDrive(t *testing.T, cfgstring string) *tape.Drive {
	t.Helper()
	cfg, err := tape.ParseConfig(cfgstring)
	if err != nil {
		t.Fatal(err)
	}
	d, err := tape.New("tape0", cfg, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	return d
}
