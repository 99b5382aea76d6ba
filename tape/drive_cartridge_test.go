package tape_test

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"encoding/hex"
	"io/fs"
	"os"
	"path/filepath"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

// The daemon lists a drive's cartridge through this optional operation.
var _ scsi.MediumHolder = (*tape.Drive)(nil)

// run sends one command straight to the drive (no ring).
func run(t *testing.T, d *tape.Drive, cdb []byte, out []byte, in int) (scsi.Response, []byte) {
	t.Helper()
	var buf *scsi.Buffer
	var data []byte
	if out != nil {
		buf = scsi.NewBuffer(out)
	} else {
		data = make([]byte, in)
		buf = scsi.NewBuffer(data)
	}
	r := d.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: buf})
	return r, data[:buf.Written()]
}

func good(t *testing.T, d *tape.Drive, cdb []byte, out []byte, in int) []byte {
	t.Helper()
	r, data := run(t, d, cdb, out, in)
	if r.Status != scsi.StatusGood {
		t.Fatalf("% x: %v %+v", cdb, r.Status, r.Sense)
	}
	return data
}

// TestDriveOnCartridgeImage runs the drive over a real cartridge image in
// a temporary media directory: an st-like session (files of records,
// filemarks, fsf, read back with ILI), partitioning, MAM, and the data
// surviving unload, a new drive, and reload.
// cartridgeDrive creates the cartridge barcode in a new media directory
// and an LTO-6 drive loaded with it; the library and config serve a second
// drive on the same media.
func cartridgeDrive(t *testing.T, barcode string, o cartridge.Options) (*tape.Drive, tape.Config, *cartridge.Library) {
	t.Helper()
	dir := t.TempDir()
	lib, err := cartridge.NewLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	if err := lib.Create(barcode, o); err != nil {
		t.Fatal(err)
	}
	cfg, err := tape.ParseConfig("personality=lto6;media=" + dir + ";barcode=" + barcode)
	if err != nil {
		t.Fatal(err)
	}
	d, err := tape.New("tape0", cfg, lib, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	return d, cfg, lib
}

// secondDrive is a new drive of cfg on lib (as after a daemon restart),
// loaded with cfg's cartridge, its unit attentions consumed.
func secondDrive(t *testing.T, cfg tape.Config, lib *cartridge.Library) *tape.Drive {
	t.Helper()
	d, err := tape.New("tape1", cfg, lib, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = d.Close() })
	for range 2 {
		run(t, d, []byte{0, 0, 0, 0, 0, 0}, nil, 0) // UA 29/00, 28/00
	}
	return d
}

func TestDriveOnCartridgeImage(t *testing.T) {
	d, cfg, lib := cartridgeDrive(t, "TAPE01", cartridge.Options{Capacity: 64 << 20, EarlyWarning: 1 << 20})
	for range 2 {
		run(t, d, []byte{0, 0, 0, 0, 0, 0}, nil, 0) // UA 29/00, 28/00
	}
	good(t, d, []byte{0, 0, 0, 0, 0, 0}, nil, 0)

	rec := func(file, i int) []byte { return bytes.Repeat([]byte{byte(file*16 + i)}, 10240) } // tar's record
	for file := range 3 {
		for i := range 4 {
			good(t, d, []byte{0x0a, 0, 0, 0x28, 0x00, 0}, rec(file, i), 0)
		}
		good(t, d, []byte{0x10, 0, 0, 0, 1, 0}, nil, 0)
	}
	good(t, d, []byte{0x01, 0, 0, 0, 0, 0}, nil, 0)
	good(t, d, []byte{0x11, 0x01, 0, 0, 2, 0}, nil, 0) // mt fsf 2
	if st := d.Stats(); st.File != 2 || st.Object != 10 {
		t.Fatalf("after fsf 2: %+v", st)
	}
	// tar reads with a larger request: ILI, the record arrives.
	r, data := run(t, d, []byte{0x08, 0, 0, 0x50, 0x00, 0}, nil, 20480)
	if r.Status != scsi.StatusCheckCondition || !r.Sense.ILI || r.Sense.Info != 10240 || !bytes.Equal(data, rec(2, 0)) {
		t.Fatalf("read: %v %+v %d bytes", r.Status, r.Sense, len(data))
	}
	// MAM through the image: a host attribute and LOAD COUNT.
	list := []byte{0, 0, 0, 13, 0x08, 0x00, 0x01, 0, 8}
	list = append(list, []byte("VSCSITST")...)
	good(t, d, attrCDB(0x8d, 0, 0, uint32(len(list))), list, 0)

	// Partition it the LTFS way: page 11h, FORMAT MEDIUM.
	good(t, d, []byte{0x01, 0, 0, 0, 0, 0}, nil, 0)
	page := []byte{0, 0, 0, 0, 0, 0, 0, 0, 0x11, 0x0a, 0x03, 0x01, 0x3c, 0x03, 0x06, 0, 0x00, 0x10, 0xff, 0xff}
	good(t, d, []byte{0x55, 0x10, 0, 0, 0, 0, 0, 0, byte(len(page)), 0}, page, 0)
	good(t, d, []byte{0x04, 0, 0x01, 0, 0, 0}, nil, 0)
	locate := make([]byte, 16)
	locate[0], locate[1], locate[3] = 0x92, 0x02, 1
	good(t, d, locate, nil, 0)
	good(t, d, []byte{0x0a, 0, 0, 0x00, 0x10, 0}, []byte("index partition!"), 0)
	pos := good(t, d, []byte{0x34, 0x06, 0, 0, 0, 0, 0, 0, 0, 0}, nil, 32)
	if binary.BigEndian.Uint32(pos[4:]) != 1 || binary.BigEndian.Uint64(pos[8:]) != 1 {
		t.Fatalf("READ POSITION long % x", pos)
	}
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}

	// A new drive loads the cartridge again: partitions, data and MAM
	// persisted in the image.
	d2 := secondDrive(t, cfg, lib)
	good(t, d2, locate, nil, 0)
	if data := good(t, d2, []byte{0x08, 0, 0, 0x00, 0x10, 0}, nil, 16); string(data) != "index partition!" {
		t.Fatalf("partition 1 after reload: %q", data)
	}
	attrs := good(t, d2, attrCDB(0x8c, 0, 0x0800, 4096), nil, 4096)
	if len(attrs) < 13 || string(attrs[9:17]) != "VSCSITST" {
		t.Fatalf("MAM after reload % x", attrs)
	}
	attrs = good(t, d2, attrCDB(0x8c, 0, 0x0003, 4096), nil, 4096)
	if binary.BigEndian.Uint16(attrs[4:]) != 0x0003 {
		t.Fatalf("LOAD COUNT not first % x", attrs)
	}
}

// attrCDB builds READ ATTRIBUTE (0x8c, ATTRIBUTE VALUES) or WRITE ATTRIBUTE
// (0x8d) for partition part.
func attrCDB(op byte, part byte, first uint16, n uint32) []byte {
	c := make([]byte, 16)
	c[0], c[7] = op, part
	binary.BigEndian.PutUint16(c[8:], first)
	binary.BigEndian.PutUint32(c[10:], n)
	return c
}

// TestEncryptedCartridgeAcrossDrives: a block written encrypted on an
// image is ciphertext in the file; the key is in no file of the media
// directory (image, drive state); a new drive on the cartridge (as after a
// daemon restart) cannot read it (DATA PROTECT 74/01) until it is given
// the key, and the status page's VCELB says the cartridge holds encrypted
// blocks.
func TestEncryptedCartridgeAcrossDrives(t *testing.T) {
	d, cfg, lib := cartridgeDrive(t, "ENC001", cartridge.Options{Capacity: 16 << 20})
	for range 2 {
		run(t, d, []byte{0, 0, 0, 0, 0, 0}, nil, 0)
	}
	key := bytes.Repeat([]byte{0x3c, 0xc3}, 16)
	page := []byte{0x00, 0x10, 0x00, 0x30, 0x40, 0x00, 0x02, 0x02, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x20}
	page = append(page, key...)
	spout := []byte{0xb5, 0x20, 0x00, 0x10, 0, 0, 0, 0, 0, byte(len(page)), 0, 0}
	good(t, d, spout, page, 0)
	marker := bytes.Repeat([]byte("ENCRYPTED-BLOCK-MARKER "), 400)
	good(t, d, []byte{0x0a, 0, byte(len(marker) >> 16), byte(len(marker) >> 8), byte(len(marker)), 0}, marker, 0)
	good(t, d, []byte{0x10, 0, 0, 0, 1, 0}, nil, 0)
	if err := d.Close(); err != nil {
		t.Fatal(err)
	}
	err := filepath.WalkDir(lib.Dir(), func(path string, e fs.DirEntry, err error) error {
		if err != nil || e.IsDir() {
			return err
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		if bytes.Contains(b, marker[:40]) {
			t.Errorf("%s holds the plaintext", path)
		}
		if bytes.Contains(b, key) || bytes.Contains(b, []byte(hex.EncodeToString(key))) || bytes.Contains(b, []byte(base64.StdEncoding.EncodeToString(key)[:20])) {
			t.Errorf("%s holds the key", path)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}

	d2 := secondDrive(t, cfg, lib)
	des := good(t, d2, []byte{0xa2, 0x20, 0x00, 0x20, 0, 0, 0, 0, 0x10, 0, 0, 0}, nil, 4096)
	if des[5] != 0 || des[6] != 0 || des[12]&0x08 == 0 {
		t.Errorf("new drive: status page % x, want modes 0/0 and VCELB", des[:16])
	}
	r, _ := run(t, d2, []byte{0x08, 0, 0, 0x40, 0x00, 0}, nil, 16384)
	if r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.DataProtect || r.Sense.ASC != scsi.UnableToDecryptData {
		t.Fatalf("read on a new drive: %v %+v, want DATA PROTECT 74/01", r.Status, r.Sense)
	}
	good(t, d2, spout, page, 0)
	if got := good(t, d2, []byte{0x08, 0, byte(len(marker) >> 16), byte(len(marker) >> 8), byte(len(marker)), 0}, nil, len(marker)); !bytes.Equal(got, marker) {
		t.Fatal("the block reads back different with the key")
	}
}
