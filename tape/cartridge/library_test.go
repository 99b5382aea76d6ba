package cartridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
)

func TestValidateBarcode(t *testing.T) {
	for _, ok := range []string{"A", "ABC123L9", "00000001", "Z9"} {
		if err := ValidateBarcode(ok); err != nil {
			t.Errorf("%q: %v", ok, err)
		}
	}
	for _, bad := range []string{"", "ABCDEFGHI", "abc123", "AB/C", "..", "A.B", "A B", "../ETC", "ÄBC", "AB\x00"} {
		if err := ValidateBarcode(bad); !errors.Is(err, ErrBadBarcode) {
			t.Errorf("%q accepted: %v", bad, err)
		}
	}
}

func TestCreateListOpen(t *testing.T) {
	dir := t.TempDir()
	for _, b := range []string{"VOL002", "VOL001", "CLN001"} {
		if err := Create(dir, b, Options{}); err != nil {
			t.Fatal(err)
		}
	}
	if err := Create(dir, "VOL001", Options{}); !errors.Is(err, ErrExists) {
		t.Errorf("second create: %v", err)
	}
	if err := Create(dir, "bad/one", Options{}); !errors.Is(err, ErrBadBarcode) {
		t.Errorf("bad barcode: %v", err)
	}
	// A missing directory is named, not the temporary file Create opens.
	missing := filepath.Join(dir, "missing")
	if err := Create(missing, "VOL003", Options{}); err == nil || err.Error() != "cartridge: media directory "+missing+" does not exist" {
		t.Errorf("missing directory: %v", err)
	}
	if _, err := List(missing); err == nil || err.Error() != "cartridge: media directory "+missing+" does not exist" {
		t.Errorf("list of a missing directory: %v", err)
	}
	if err := Create(dir, "VOL004", Options{Capacity: 1024}); err == nil || !strings.Contains(err.Error(), "capacity 1KiB is out of range 1MiB..") {
		t.Errorf("small capacity: %v", err)
	}
	// An empty directory name is not the current directory.
	t.Chdir(t.TempDir())
	if err := Create("", "D1", Options{}); !errors.Is(err, ErrNoDirectory) {
		t.Errorf("empty directory: %v", err)
	}
	if _, err := Open("", "D1"); !errors.Is(err, ErrNoDirectory) {
		t.Errorf("open in an empty directory: %v", err)
	}
	if _, err := NewLibrary(""); !errors.Is(err, ErrNoDirectory) {
		t.Errorf("library of an empty directory: %v", err)
	}
	if ents, _ := os.ReadDir("."); len(ents) != 0 {
		t.Errorf("created %v in the current directory", ents)
	}
	for _, o := range []Options{{Capacity: 1000}, {EarlyWarning: -1}, {Capacity: 4 << 20, EarlyWarning: 4 << 20},
		{Capacity: 4 << 20, EarlyWarning: 1<<20 + 1}, {Partitions: []int64{1, 0}}} {
		if err := Create(dir, "BAD", o); err == nil {
			t.Errorf("options %+v accepted", o)
		}
	}
	// Not cartridges: other names, temporary files, directories.
	if err := os.WriteFile(filepath.Join(dir, "notes.txt"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, ".VOL003.vtape.tmp-1234"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "lower.vtape"), nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Mkdir(filepath.Join(dir, "DIR.vtape"), 0o700); err != nil {
		t.Fatal(err)
	}
	got, err := List(dir)
	if err != nil || !slices.Equal(got, []string{"CLN001", "VOL001", "VOL002"}) {
		t.Errorf("list: %v %v", got, err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 7 {
		t.Errorf("%d directory entries: a temporary file was left behind?", len(entries))
	}
	_, err = Open(dir, "NOPE")
	if !errors.Is(err, ErrNotFound) || !strings.HasPrefix(err.Error(), "no cartridge NOPE in "+dir+": ") {
		t.Errorf("missing cartridge: %v", err)
	}
	if _, err := NewLibrary(filepath.Join(dir, "notes.txt")); err == nil {
		t.Error("library on a file")
	}
}

func TestCreateOptionsRecorded(t *testing.T) {
	dir := t.TempDir()
	now = func() time.Time { return time.Date(2025, 3, 4, 5, 6, 7, 0, time.UTC) }
	defer func() { now = time.Now }()
	opts := Options{Capacity: 100 << 20, EarlyWarning: 2 << 20, Partitions: []int64{10 << 20, 0}, Density: 0x5A, WORM: true}
	if err := Create(dir, "LTO6X1", opts); err != nil {
		t.Fatal(err)
	}
	m, err := OpenReadOnly(dir, "LTO6X1")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	info := m.Info()
	want := tape.MediumInfo{Barcode: "LTO6X1", Density: 0x5A, WriteProtected: true, WORM: true, Partitions: 2,
		Capacity: []int64{10 << 20, 90 << 20}, EarlyWarning: []int64{2 << 20, 2 << 20}}
	// read-only opens report write protection
	if info.Barcode != want.Barcode || info.Density != want.Density || info.WriteProtected != want.WriteProtected ||
		info.WORM != want.WORM || info.Partitions != want.Partitions || !slices.Equal(info.Capacity, want.Capacity) ||
		!slices.Equal(info.EarlyWarning, want.EarlyWarning) {
		t.Errorf("info %+v\nwant %+v", info, want)
	}
	if v, _ := m.Attribute(AttrManufactureDate); string(v) != "20250304" {
		t.Errorf("manufacture date %q", v)
	}
	if v, _ := m.Attribute(AttrBarcode); string(v) != "LTO6X1"+strings.Repeat(" ", 26) {
		t.Errorf("barcode attribute %q", v)
	}
	if st, _ := os.Stat(Path(dir, "LTO6X1")); st.Mode().Perm() != 0o600 || st.Size() != dataStart {
		t.Errorf("image file mode %v size %d", st.Mode(), st.Size())
	}
}

func TestLocking(t *testing.T) {
	dir := t.TempDir()
	if err := Create(dir, "LOCK01", Options{}); err != nil {
		t.Fatal(err)
	}
	lib, err := NewLibrary(dir)
	if err != nil {
		t.Fatal(err)
	}
	a, err := lib.Open("LOCK01")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := lib.Open("LOCK01"); !errors.Is(err, ErrInUse) {
		t.Errorf("second exclusive open: %v", err)
	}
	if _, err := OpenReadOnly(dir, "LOCK01"); !errors.Is(err, ErrInUse) {
		t.Errorf("inspection while loaded: %v", err)
	}
	if err := a.Close(); err != nil {
		t.Fatal(err)
	}
	r1, err := OpenReadOnly(dir, "LOCK01")
	if err != nil {
		t.Fatal(err)
	}
	r2, err := OpenReadOnly(dir, "LOCK01")
	if err != nil {
		t.Errorf("two inspections: %v", err)
	} else {
		if err := r2.Close(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := Open(dir, "LOCK01"); !errors.Is(err, ErrInUse) {
		t.Errorf("load while inspected: %v", err)
	}
	if err := r1.Close(); err != nil {
		t.Fatal(err)
	}
	b, err := lib.Open("LOCK01")
	if err != nil {
		t.Fatalf("open after release: %v", err)
	}
	if err := b.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestLoadCount(t *testing.T) {
	dir := t.TempDir()
	if err := Create(dir, "LC", Options{WriteProtected: true}); err != nil {
		t.Fatal(err)
	}
	lib, _ := NewLibrary(dir)
	for i := range 3 {
		med, err := lib.Open("LC")
		if err != nil {
			t.Fatal(err)
		}
		v, ok := med.Attribute(AttrLoadCount)
		if !ok || binary.BigEndian.Uint64(v) != uint64(i+1) {
			t.Errorf("load %d: load count %x", i+1, v)
		}
		if err := med.Close(); err != nil {
			t.Fatal(err)
		}
	}
}

func TestAttributes(t *testing.T) {
	m, _ := newCart(t, Options{Partitions: []int64{1 << 20, 0}})
	vendor := []byte("VSCSID  ")
	if err := m.SetAttribute(AttrApplicationVendor, vendor); err != nil {
		t.Fatal(err)
	}
	vci0 := bytes.Repeat([]byte{0xA0}, 70)
	vci1 := bytes.Repeat([]byte{0xB1}, 70)
	if err := m.SetAttributeIn(0, AttrVolumeCoherency, vci0); err != nil {
		t.Fatal(err)
	}
	if err := m.SetAttributeIn(1, AttrVolumeCoherency, vci1); err != nil {
		t.Fatal(err)
	}
	if err := m.SetAttribute(AttrVolumeLock, []byte{1}); err != nil {
		t.Fatal(err)
	}
	// Host values are durable immediately: a crash copy has them.
	c := crashCopy(t, m)
	m = reopen(t, m)
	for _, img := range []*Image{c, m} {
		if v, ok := img.Attribute(AttrApplicationVendor); !ok || !bytes.Equal(v, vendor) {
			t.Errorf("vendor %q %v", v, ok)
		}
		if v, _ := img.AttributeIn(1, AttrApplicationVendor); !bytes.Equal(v, vendor) {
			t.Errorf("volume attribute in partition 1: %q", v)
		}
		if v, _ := img.AttributeIn(0, AttrVolumeCoherency); !bytes.Equal(v, vci0) {
			t.Errorf("VCI 0 %x", v)
		}
		if v, _ := img.AttributeIn(1, AttrVolumeCoherency); !bytes.Equal(v, vci1) {
			t.Errorf("VCI 1 %x", v)
		}
		if v, _ := img.Attribute(AttrVolumeLock); !bytes.Equal(v, []byte{1}) {
			t.Errorf("volume lock %x", v)
		}
		if _, ok := img.AttributeIn(2, AttrVolumeLock); ok {
			t.Error("attribute of partition 2 of 2")
		}
	}
	ids := m.AttributeIDs(1)
	if !slices.Contains(ids, AttrVolumeCoherency) || !slices.Contains(ids, AttrApplicationVendor) || !slices.IsSorted(ids) {
		t.Errorf("attribute ids %x", ids)
	}
	// Deleting.
	if err := m.SetAttribute(AttrVolumeLock, nil); err != nil {
		t.Fatal(err)
	}
	if _, ok := m.Attribute(AttrVolumeLock); ok {
		t.Error("deleted attribute still there")
	}
	// Read-only, too long, full: refused with the sense the drive reports.
	for _, tc := range []struct {
		id    uint16
		val   []byte
		is    error
		sense scsi.Sense
	}{
		{AttrLoadCount, []byte{1}, ErrAttributeReadOnly, scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.InvalidFieldInParameterList}},
		{AttrVolumeChangeRef, []byte{0, 0, 0, 1}, ErrAttributeReadOnly, scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.InvalidFieldInParameterList}},
		{AttrApplicationVendor, make([]byte, 9), ErrAttributeLength, scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.InvalidFieldInParameterList}},
	} {
		err := m.SetAttribute(tc.id, tc.val)
		if !errors.Is(err, tc.is) || scsi.ResponseFor(err).Sense != tc.sense {
			t.Errorf("set %#04x: %v → %+v", tc.id, err, scsi.ResponseFor(err).Sense)
		}
	}
	var err error
	for i := uint16(0); err == nil; i++ {
		err = m.SetAttribute(0x1800+i, make([]byte, 1000))
	}
	if !errors.Is(err, ErrMAMFull) || scsi.ResponseFor(err).Sense.ASC != 0x5506 {
		t.Errorf("filling the MAM: %v", err)
	}
	rem, _ := m.Attribute(AttrMAMSpaceRemaining)
	if r := binary.BigEndian.Uint64(rem); r >= 1005 {
		t.Errorf("MAM space remaining %d after filling", r)
	}
	// The superblock with a full attribute area still reads back.
	m = reopen(t, m)
	if _, ok := m.Attribute(0x1800); !ok {
		t.Error("attributes lost with a full MAM")
	}
}

func TestVolumeChangeReference(t *testing.T) {
	m, _ := newCart(t, Options{})
	vcr := func() uint32 {
		v, ok := m.Attribute(AttrVolumeChangeRef)
		if !ok || len(v) != 4 {
			t.Fatalf("VCR %x %v", v, ok)
		}
		return binary.BigEndian.Uint32(v)
	}
	g := newGen(30, 1)
	v0 := vcr()
	mustPut(t, m, g.block(10))
	v1 := vcr()
	if v1 == v0 {
		t.Error("VCR unchanged by a write")
	}
	mustPut(t, m, g.block(10))
	v2 := vcr()
	if v2 == v1 {
		t.Error("VCR unchanged by a write after it was read")
	}
	if err := m.Locate(0, 0); err != nil {
		t.Fatal(err)
	}
	if err := m.Erase(); err != nil {
		t.Fatal(err)
	}
	if vcr() == v2 {
		t.Error("VCR unchanged by an erase")
	}
	v3 := vcr()
	m = reopen(t, m)
	if vcr() != v3 {
		t.Error("VCR not persisted")
	}
	m.sb.vcr = 0xFFFFFFFE
	m.vcrFresh = false
	mustPut(t, m, g.block(10))
	if v := vcr(); v == 0xFFFFFFFF || v == 0 {
		t.Errorf("VCR wrapped to %#x", v)
	}
}

func TestLibraryOpenReturnsNilMediumOnError(t *testing.T) {
	lib, _ := NewLibrary(t.TempDir())
	med, err := lib.Open("MISSING")
	if err == nil || med != nil {
		t.Errorf("Open of a missing cartridge: %v, %v (want a nil interface)", med, err)
	}
}

// A cartridge in the media directory is a regular file with its own
// barcode in its header: a symbolic link (which could lead out of the
// directory), a FIFO or a copied image is refused, and nothing outside
// the directory is written.
func TestOpenRefusesWhatIsNotItsCartridge(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	if err := Create(outside, "VICTIM", Options{Capacity: 4 << 20}); err != nil {
		t.Fatal(err)
	}
	victim := Path(outside, "VICTIM")
	before, err := os.ReadFile(victim)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.Symlink(victim, Path(dir, "LINK1")); err != nil {
		t.Fatal(err)
	}
	for _, open := range []func(string, string) (*Image, error){Open, OpenReadOnly} {
		if m, err := open(dir, "LINK1"); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "symbolic link") {
			t.Errorf("symlinked cartridge: %v", err)
			if m != nil {
				_ = m.Close()
			}
		}
	}
	if err := unix.Mkfifo(Path(dir, "FIFO1"), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, "FIFO1"); !errors.Is(err, ErrNotRegular) || !strings.Contains(err.Error(), "FIFO") {
		t.Errorf("FIFO: %v", err)
	}
	// A copy under another name: its header still says VICTIM.
	if err := os.WriteFile(Path(dir, "COPY1"), before, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(dir, "COPY1"); !errors.Is(err, tape.ErrCorrupt) || !strings.Contains(err.Error(), `says it is cartridge "VICTIM"`) {
		t.Errorf("copied image: %v", err)
	}
	if after, _ := os.ReadFile(victim); !bytes.Equal(before, after) {
		t.Error("the file outside the media directory changed")
	}
}
