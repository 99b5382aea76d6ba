package cartridge

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/vscsid/vscsid/tape"
)

// Fuzz inputs for FuzzImage describe an image file compactly, so that the
// mutator works on the bytes that matter rather than on megabytes of
// zeros (the file is sparse): a little-endian uint16 length a, a uint16
// length b, a bytes of superblock slot A, b bytes of slot B, then the data
// area as segments {uint32 zero bytes to skip, uint16 length, bytes}.
//
// An input that starts with the superblock magic is used as the file as
// is, so raw image files can be fuzzed too.
func fuzzImageFile(in []byte) []byte {
	le := binary.LittleEndian
	if len(in) < 4 || bytes.HasPrefix(in, []byte(headerMagic)) {
		return in
	}
	a, b := int(le.Uint16(in)), int(le.Uint16(in[2:]))
	in = in[4:]
	a = min(a, len(in), slotSize)
	file := make([]byte, dataStart, dataStart+len(in))
	copy(file, in[:a])
	in = in[a:]
	b = min(b, len(in), slotSize)
	copy(file[slotSize:], in[:b])
	in = in[b:]
	for len(in) >= 6 {
		skip, n := int(le.Uint32(in)), int(le.Uint16(in[4:]))
		in = in[6:]
		n = min(n, len(in))
		if skip > 64<<20 || len(file)+skip > 64<<20 {
			break // keep test files small
		}
		file = append(file, make([]byte, skip)...)
		file = append(file, in[:n]...)
		in = in[n:]
	}
	return file
}

// fuzzImageInput is the inverse of fuzzImageFile for a real image.
func fuzzImageInput(file []byte) []byte {
	le := binary.LittleEndian
	trim := func(b []byte) []byte { return bytes.TrimRight(b, "\x00") }
	a := trim(file[:slotSize])
	b := trim(file[slotSize:dataStart])
	in := le.AppendUint16(nil, uint16(len(a)))
	in = le.AppendUint16(in, uint16(len(b)))
	in = append(in, a...)
	in = append(in, b...)
	data := file[dataStart:]
	for len(data) > 0 {
		skip := len(data) - len(bytes.TrimLeft(data, "\x00"))
		data = data[skip:]
		n := min(len(data), 0xFFFF)
		// end the segment at a long run of zeros
		if z := bytes.Index(data[:n], make([]byte, 64)); z >= 0 {
			n = z
		}
		in = le.AppendUint32(in, uint32(skip))
		in = le.AppendUint16(in, uint16(n))
		in = append(in, data[:n]...)
		data = data[n:]
	}
	return in
}

// fuzzSeedImages returns a few small real images: one partition with
// blocks (compressed and encrypted ones too) and marks, two partitions with attributes,
// and a torn tail.
func fuzzSeedImages(t testing.TB) [][]byte {
	var out [][]byte
	m, _ := newCart(t, Options{Capacity: 4 << 20, EarlyWarning: 64 << 10})
	g := newGen(40, 300)
	mustPut(t, m, g.block(10), g.block(33), obj{kind: tape.KindFilemark}, g.block(200), g.packed(300),
		obj{kind: tape.KindSetmark}, g.packed(250), obj{kind: tape.KindFilemark})
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	mustPut(t, m, g.block(50)) // after the sync point
	// An encrypted block (with KAD) and a compressed encrypted one.
	key, err := tape.NewKey(bytes.Repeat([]byte{0x42}, tape.KeySize), []byte("AK"), []byte("UKAD"))
	if err != nil {
		t.Fatal(err)
	}
	for _, enc := range []tape.Encoding{{Key: key}, {Key: key, Compress: true}} {
		data := bytes.Repeat([]byte("encrypted fuzz seed "), 10)
		if _, err := m.WriteBlock(bytes.NewReader(data), len(data), enc); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := os.ReadFile(m.path)
	out = append(out, b, b[:len(b)-20])

	p, _ := newCart(t, Options{Capacity: 8 << 20, Partitions: []int64{2 << 20, 0}, WORM: true})
	if err := p.SetAttribute(AttrApplicationVendor, []byte("VENDOR")); err != nil {
		t.Fatal(err)
	}
	if err := p.SetAttributeIn(1, AttrVolumeCoherency, bytes.Repeat([]byte{7}, 70)); err != nil {
		t.Fatal(err)
	}
	mustPut(t, p, g.block(20), obj{kind: tape.KindFilemark})
	if err := p.Locate(1, 0); err != nil && !errors.Is(err, tape.ErrEndOfData) {
		t.Fatal(err)
	}
	mustPut(t, p, g.block(40))
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ = os.ReadFile(p.path)
	out = append(out, b)
	return out
}

func FuzzImage(f *testing.F) {
	for _, img := range fuzzSeedImages(f) {
		f.Add(fuzzImageInput(img))
	}
	f.Add([]byte(headerMagic + "\x01\x00")) // raw: a truncated superblock
	dir := f.TempDir()
	f.Fuzz(func(t *testing.T, in []byte) {
		path := filepath.Join(dir, "FUZZ.vtape")
		if err := os.WriteFile(path, fuzzImageFile(in), 0o600); err != nil {
			t.Fatal(err)
		}
		m, err := OpenFileReadOnly(path)
		if err != nil {
			return // a clear error is fine; a panic is not
		}
		walkImage(m)
		_ = m.Close() // read-only

		// Writing at the end of data of partition 0 either works and
		// reads back, or fails with an error.
		w, err := OpenFile(path)
		if err != nil {
			t.Fatalf("opens read-only but not read-write: %v", err)
		}
		w.noSync = true
		_ = w.Locate(0, ^uint64(0)) // to the end of data: ErrEndOfData, or where a damaged image stops; the write below works or fails with an error
		pos := w.Pos()
		block := bytes.Repeat([]byte("fuzz block"), 30) // compresses
		_, werr := w.WriteBlock(bytes.NewReader(block), len(block), tape.Encoding{Compress: true})
		if err := w.Close(); werr == nil {
			werr = err // a failed Close is a failed write
		}
		if werr != nil {
			return
		}
		r, err := OpenFileReadOnly(path)
		if err != nil {
			t.Fatalf("reopen after write: %v", err)
		}
		defer func() { _ = r.Close() }()
		if err := r.Locate(0, pos.Object); err != nil {
			t.Fatalf("locate the written block: %v", err)
		}
		got, err := readBlock(r, len(block))
		if err != nil || !bytes.Equal(got, block) {
			t.Fatalf("written block reads %q, %v", got, err)
		}
	})
}

// walkImage moves over every partition forwards and backwards, reading
// every block; errors are fine, panics and endless loops are not.
func walkImage(m *Image) {
	buf := make([]byte, 4096)
	for part := range m.Info().Partitions {
		if err := m.Locate(part, 0); err != nil && !errors.Is(err, tape.ErrEndOfData) {
			continue
		}
		for range 10_000 {
			o, err := m.Peek()
			if err != nil || o.Kind == tape.KindEOD {
				break
			}
			for off := 0; o.Kind == tape.KindBlock && off < o.Len; off += len(buf) {
				if _, err := m.ReadAt(buf, int64(off)); err != nil {
					break
				}
			}
			if m.Next() != nil {
				break
			}
		}
		for range 10_000 {
			if _, err := m.Prev(); err != nil {
				break
			}
		}
		_, _ = m.SpaceFilemarks(2) // the input decides whether these succeed; they must not panic
		_, _ = m.SpaceFilemarks(-2)
		_ = m.Locate(part, 3)
		_ = m.Used(part)
	}
	for _, id := range m.AttributeIDs(0) {
		m.Attribute(id)
	}
}

func FuzzSIMH(f *testing.F) {
	for _, s := range fuzzSIMHSeeds() {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, in []byte) {
		m := openTemplate(t, Options{Capacity: 8 << 20})
		m.noSync = true
		st, err := ImportSIMH(context.Background(), m, bytes.NewReader(in), SIMHAuto)
		if err != nil {
			return
		}
		// What was imported exports and re-imports to the same objects.
		var out bytes.Buffer
		format := st.Format
		if format == SIMHAuto {
			format = SIMHPadded
		}
		if _, err := ExportSIMH(m, 0, &out, SIMHExportOptions{Format: format}); err != nil {
			t.Fatalf("export of an import: %v", err)
		}
		m2 := openTemplate(t, Options{Capacity: 8 << 20})
		m2.noSync = true
		if _, err := ImportSIMH(context.Background(), m2, bytes.NewReader(out.Bytes()), format); err != nil {
			t.Fatalf("re-import: %v", err)
		}
		var again bytes.Buffer
		if _, err := ExportSIMH(m2, 0, &again, SIMHExportOptions{Format: format}); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), again.Bytes()) {
			t.Fatal("export → import → export is not stable")
		}
	})
}

func fuzzSIMHSeeds() [][]byte {
	return [][]byte{
		tap(3, "abc\x00", 3, 0, 4, "wxyz", 4, 0, 0),
		tap(3, "abc", 3, 0, 1, "z", 1),
		tap(uint32(0xFFFFFFFE), "\xff\xff", uint32(0xFFFFFFFE), 2, "hi", 2, uint32(0xFFFFFFFF)),
		tap(uint32(0x80000002), "xy", uint32(0x80000002), uint32(0x10000004), "priv", uint32(0x10000004), uint32(0x70000123)),
		tap(5, "hello", 5),
	}
}

// TestWriteFuzzSeeds writes the seed corpus under testdata/fuzz when
// VSCSI_WRITE_FUZZ_SEEDS is set (go test -run TestWriteFuzzSeeds).
func TestWriteFuzzSeeds(t *testing.T) {
	if os.Getenv("VSCSI_WRITE_FUZZ_SEEDS") == "" {
		t.Skip("set VSCSI_WRITE_FUZZ_SEEDS=1 to regenerate testdata/fuzz")
	}
	write := func(fuzz string, i int, b []byte) {
		dir := filepath.Join("testdata", "fuzz", fuzz)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		body := "go test fuzz v1\n[]byte(" + strconv.Quote(string(b)) + ")\n"
		if err := os.WriteFile(filepath.Join(dir, fmt.Sprintf("seed%d", i)), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for i, img := range fuzzSeedImages(t) {
		write("FuzzImage", i, fuzzImageInput(img))
	}
	for i, s := range fuzzSIMHSeeds() {
		write("FuzzSIMH", i, s)
	}
}

func TestFuzzImageLayout(t *testing.T) {
	for _, img := range fuzzSeedImages(t) {
		if got := fuzzImageFile(fuzzImageInput(img)); !bytes.Equal(got, img) {
			t.Fatal("fuzz input encoding does not round-trip a real image")
		}
	}
}
