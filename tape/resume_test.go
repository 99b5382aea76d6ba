package tape_test

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"errors"
	"reflect"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

// A clean restart: the state Close found (cartridge, position, block
// size, the mode parameters and PREVENT the initiator set) put back into a
// new drive by Resume. The restart is invisible to the initiator: no unit
// attention, READ POSITION, MODE SENSE and the sense format as the old
// drive left them, medium removal still prevented, and reads go on from
// there.
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
	// Compression off (page 0Fh, DCE=0), descriptor sense (control page
	// 0Ah, D_SENSE), medium removal prevented (st's MTLOCK).
	// (The page as MODE SENSE gives it, DCE cleared, as st's
	// MTCOMPRESSION sends it back.)
	ms := good(t, d, []byte{0x1a, 0x08, 0x0f, 0, 255, 0}, nil, 255)
	comp := append([]byte{0, 0, 0, 0}, ms[4:4+2+int(ms[5])]...)
	comp[6] &^= 0x80
	good(t, d, []byte{0x15, 0x10, 0, 0, byte(len(comp)), 0}, comp, 0)
	ctl := append([]byte{0, 0, 0, 0}, 0x0a, 0x0a, 0x04, 0, 0, 0, 0, 0, 0, 0, 0, 0)
	good(t, d, []byte{0x15, 0x10, 0, 0, byte(len(ctl)), 0}, ctl, 0)
	good(t, d, []byte{0x1e, 0, 0, 0, 1, 0}, nil, 0)
	for i := range 4 {
		good(t, d, []byte{0x0a, 0x01, 0, 0, 1, 0}, bytes.Repeat([]byte{0x40 + byte(i)}, 512), 0)
	}
	// Back to object 8: the third fixed block (6 is the first).
	locate := []byte{0x2b, 0, 0, 0, 0, 0, 8, 0, 0, 0}
	good(t, d, locate, nil, 0)
	// Close is the daemon's stop; it ejects whatever PREVENT says.
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	s, ok := d.ClosedState()
	want := tape.Snapshot{Barcode: "RES001", Object: 8, BlockSize: 512,
		Mode: &tape.ModeSnapshot{Compression: false, DSense: true, Prevent: true}}
	if !ok || !reflect.DeepEqual(s, want) {
		t.Fatalf("ClosedState = %+v %+v, %v; want %+v %+v", s, s.Mode, ok, want, want.Mode)
	}

	d2 := resumed(t, cfg, lib, s)
	good(t, d2, []byte{0, 0, 0, 0, 0, 0}, nil, 0) // no unit attention
	pos := good(t, d2, []byte{0x34, 0, 0, 0, 0, 0, 0, 0, 0, 0}, nil, 20)
	if got := binary.BigEndian.Uint32(pos[4:]); got != 8 {
		t.Fatalf("READ POSITION after resume: block %d, want 8", got)
	}
	ms = good(t, d2, []byte{0x1a, 0, 0x3f, 0, 255, 0}, nil, 255)
	if bl := uint32(ms[9])<<16 | uint32(ms[10])<<8 | uint32(ms[11]); ms[3] != 8 || bl != 512 {
		t.Fatalf("MODE SENSE block descriptor after resume: % x", ms[:12])
	}
	if cp := good(t, d2, []byte{0x1a, 0x08, 0x0f, 0, 255, 0}, nil, 255); len(cp) < 7 || cp[6]&0x80 != 0 {
		t.Fatalf("compression page after resume: % x, want DCE=0", cp)
	}
	// Fixed-mode READ(6) of one block continues where the old drive was.
	if data := good(t, d2, []byte{0x08, 0x01, 0, 0, 1, 0}, nil, 512); !bytes.Equal(data, bytes.Repeat([]byte{0x42}, 512)) {
		t.Fatalf("read after resume: % x...", data[:8])
	}
	// Descriptor-format sense (response code 72h), and the removal still
	// prevented: the initiator's MTLOCK outlived the restart.
	r, _ := run(t, d2, []byte{0x1b, 0, 0, 0, 0, 0}, nil, 0)
	if r.Status != scsi.StatusCheckCondition || r.Sense.ASC != scsi.MediumRemovalPrevented {
		t.Fatalf("UNLOAD after resume: %v %+v, want MEDIUM REMOVAL PREVENTED", r.Status, r.Sense)
	}
}

// resumed is the daemon's next start: a new drive over the same library,
// resumed at s.
func resumed(t *testing.T, cfg tape.Config, lib tape.Library, s tape.Snapshot) *tape.Drive {
	t.Helper()
	d, err := tape.New("tape0", cfg, lib, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	if err := d.Resume(s); err != nil {
		t.Fatal(err)
	}
	return d
}

// A state saved before vscsid kept the mode parameters (no "mode" in the
// JSON) resumes the position and block size only, and the drive reports
// the restart: 29/00, then 28/00.
func TestResumeWithoutModeReportsTheRestart(t *testing.T) {
	d, cfg, lib := cartridgeDrive(t, "RES003", cartridge.Options{Capacity: 16 << 20})
	for range 2 {
		run(t, d, []byte{0, 0, 0, 0, 0, 0}, nil, 0)
	}
	for range 3 {
		good(t, d, []byte{0x0a, 0, 0, 0x03, 0xe8, 0}, bytes.Repeat([]byte{7}, 1000), 0)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	var s tape.Snapshot
	if err := json.Unmarshal([]byte(`{"barcode":"RES003","partition":0,"object":3,"blocksize":0}`), &s); err != nil {
		t.Fatal(err)
	}
	d2 := resumed(t, cfg, lib, s)
	for _, asc := range []scsi.ASC{scsi.PowerOnResetOrBusDeviceReset, scsi.NotReadyToReadyChange} {
		r, _ := run(t, d2, []byte{0, 0, 0, 0, 0, 0}, nil, 0)
		if r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.UnitAttention || r.Sense.ASC != asc {
			t.Fatalf("first commands after an old state's resume: %v %+v, want UNIT ATTENTION %v", r.Status, r.Sense, asc)
		}
	}
	pos := good(t, d2, []byte{0x34, 0, 0, 0, 0, 0, 0, 0, 0, 0}, nil, 20)
	if got := binary.BigEndian.Uint32(pos[4:]); got != 3 {
		t.Fatalf("READ POSITION after resume: block %d, want 3", got)
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
		{Barcode: "RES002", Mode: &tape.ModeSnapshot{LBPMethod: 9}},
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

// A drive that was encrypting resumes without its key (it was never
// saved) and says so: the first command gets UNIT ATTENTION 2A/12, the
// status page shows encryption off, and the encrypted block is DATA
// PROTECT 74/01 until the key is set again.
func TestResumeEncryptingDriveReportsIt(t *testing.T) {
	d, cfg, lib := cartridgeDrive(t, "RES003", cartridge.Options{Capacity: 16 << 20})
	for range 2 {
		run(t, d, []byte{0, 0, 0, 0, 0, 0}, nil, 0)
	}
	page := []byte{0x00, 0x10, 0x00, 0x30, 0x40, 0x00, 0x02, 0x02, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x20}
	page = append(page, bytes.Repeat([]byte{0x77}, 32)...)
	spout := []byte{0xb5, 0x20, 0x00, 0x10, 0, 0, 0, 0, 0, byte(len(page)), 0, 0}
	good(t, d, spout, page, 0)
	good(t, d, []byte{0x0a, 0, 0, 0x04, 0x00, 0}, bytes.Repeat([]byte("s"), 1024), 0)
	good(t, d, []byte{0x01, 0, 0, 0, 0, 0}, nil, 0) // rewind
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	s, ok := d.ClosedState()
	if !ok || s.Mode == nil || !s.Mode.Encryption {
		t.Fatalf("ClosedState %+v: want the encryption flag", s.Mode)
	}
	raw, err := json.Marshal(s)
	if err != nil || bytes.Contains(raw, []byte("777777")) || bytes.Contains(raw, bytes.Repeat([]byte{0x77}, 4)) {
		t.Fatalf("saved state %s holds the key (%v)", raw, err)
	}
	d2 := resumed(t, cfg, lib, s)
	r, _ := run(t, d2, []byte{0, 0, 0, 0, 0, 0}, nil, 0)
	if r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.UnitAttention || r.Sense.ASC != scsi.EncryptionChangedByVendorEvent {
		t.Fatalf("first command after the resume: %v %+v, want UNIT ATTENTION 2A/12", r.Status, r.Sense)
	}
	good(t, d2, []byte{0, 0, 0, 0, 0, 0}, nil, 0) // then nothing else
	des := good(t, d2, []byte{0xa2, 0x20, 0x00, 0x20, 0, 0, 0, 0, 0x10, 0, 0, 0}, nil, 4096)
	if des[5] != 0 || des[6] != 0 {
		t.Errorf("status page after the resume: modes %d/%d, want 0/0", des[5], des[6])
	}
	r, _ = run(t, d2, []byte{0x08, 0, 0, 0x04, 0x00, 0}, nil, 1024)
	if r.Sense.Key != scsi.DataProtect || r.Sense.ASC != scsi.UnableToDecryptData {
		t.Errorf("read after the resume: %+v, want DATA PROTECT 74/01", r.Sense)
	}
}
