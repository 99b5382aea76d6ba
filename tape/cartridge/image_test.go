package cartridge

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"io"
	"math/rand/v2"
	"os"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
)

func TestRoundTripMixed(t *testing.T) {
	m, _ := newCart(t, Options{Capacity: 256 << 20})
	g := newGen(1, 1<<20)
	var want []obj
	for range 300 {
		o := g.any()
		mustPut(t, m, o)
		want = append(want, o)
	}
	// Bit-exact before and after a close/reopen.
	if got := readAll(t, m, 0); !equalObjs(got, want) {
		t.Fatalf("before reopen: got %v\nwant %v", got, want)
	}
	m = reopen(t, m)
	if got := readAll(t, m, 0); !equalObjs(got, want) {
		t.Fatalf("after reopen: got %v\nwant %v", got, want)
	}
	for _, r := range m.Recovery() {
		if !r.Clean() {
			t.Errorf("clean close recovered as %+v", r)
		}
	}
	// Positions count files and sets.
	var files, sets uint64
	for _, o := range want {
		switch o.kind {
		case tape.KindFilemark:
			files++
		case tape.KindSetmark:
			sets++
		}
	}
	if p := m.Pos(); p.Object != uint64(len(want)) || p.File != files || p.Set != sets {
		t.Errorf("EOD position %+v, want object %d file %d set %d", p, len(want), files, sets)
	}
}

func TestBlockSizesEdge(t *testing.T) {
	m, _ := newCart(t, Options{Capacity: 64 << 20})
	sizes := []int{1, 2, 7, 8, 63, 64, 65, 4095, 4096, 4097, wbufSize - recHeaderSize, wbufSize - recHeaderSize + 1, 3<<20 + 5}
	var blocks [][]byte
	for i, n := range sizes {
		b := bytes.Repeat([]byte{byte(i + 1)}, n)
		b[n-1] = 0xEE
		blocks = append(blocks, b)
		if _, err := m.WriteBlock(bytes.NewReader(b), n, tape.Encoding{}); err != nil {
			t.Fatalf("write %d bytes: %v", n, err)
		}
	}
	m = reopen(t, m)
	for i, n := range sizes {
		o, err := m.Peek()
		if err != nil || o.Kind != tape.KindBlock || o.Len != n {
			t.Fatalf("block %d: %+v %v, want %d bytes", i, o, err, n)
		}
		got, err := readBlock(m, n)
		if err != nil || !bytes.Equal(got, blocks[i]) {
			t.Fatalf("block %d of %d bytes: %v, data equal %v", i, n, err, bytes.Equal(got, blocks[i]))
		}
		if err := m.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.WriteBlock(bytes.NewReader(nil), 0, tape.Encoding{}); err == nil {
		t.Error("zero-length block accepted")
	}
	if _, err := m.WriteBlock(bytes.NewReader(nil), MaxBlockLen+1, tape.Encoding{}); err == nil {
		t.Error("oversize block accepted")
	}
}

func TestReadAtSemantics(t *testing.T) {
	m, _ := newCart(t, Options{})
	data := []byte("0123456789")
	if _, err := m.WriteBlock(bytes.NewReader(data), len(data), tape.Encoding{}); err != nil {
		t.Fatal(err)
	}
	mustPut(t, m, obj{kind: tape.KindFilemark})
	if err := m.Locate(0, 0); err != nil {
		t.Fatal(err)
	}
	p := make([]byte, 4)
	if n, err := m.ReadAt(p, 8); n != 2 || err != io.EOF || string(p[:2]) != "89" { //nolint:errorlint // io.ReaderAt's contract: io.EOF itself, unwrapped (callers compare with ==)
		t.Errorf("ReadAt past end: %d %v %q", n, err, p[:n])
	}
	if n, err := m.ReadAt(p, 10); n != 0 || err != io.EOF { //nolint:errorlint // io.ReaderAt's contract: io.EOF itself, unwrapped (callers compare with ==)
		t.Errorf("ReadAt at end: %d %v", n, err)
	}
	if n, err := m.ReadAt(p, 2); n != 4 || err != nil || string(p) != "2345" {
		t.Errorf("ReadAt middle: %d %v %q", n, err, p)
	}
	// A shorter read than the block (an ILI case) is fine.
	short := make([]byte, 3)
	buf := scsi.NewBuffer(short)
	if n, err := buf.WriteFromAt(m, 0, 10); n != 3 || err != nil || string(short) != "012" {
		t.Errorf("short WriteFromAt: %d %v %q", n, err, short)
	}
	if err := m.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ReadAt(p, 0); err == nil {
		t.Error("ReadAt on a filemark succeeded")
	}
	if err := m.Next(); err != nil {
		t.Fatal(err)
	}
	if _, err := m.ReadAt(p, 0); !errors.Is(err, tape.ErrEndOfData) {
		t.Errorf("ReadAt at EOD: %v", err)
	}
	if err := m.Next(); !errors.Is(err, tape.ErrEndOfData) {
		t.Errorf("Next at EOD: %v", err)
	}
}

func TestShortReaderWritesNothing(t *testing.T) {
	m, _ := newCart(t, Options{})
	g := newGen(2, 1000)
	mustPut(t, m, g.block(100), g.block(100))
	if err := m.Locate(0, 1); err != nil {
		t.Fatal(err)
	}
	for _, n := range []int{1000, 3 << 20} { // buffered and chunked paths
		_, err := m.WriteBlock(bytes.NewReader(make([]byte, n/2)), n, tape.Encoding{})
		if !errors.Is(err, io.ErrUnexpectedEOF) {
			t.Fatalf("short reader of %d: %v", n, err)
		}
	}
	if p := m.Pos(); p.Object != 1 {
		t.Errorf("position moved to %+v", p)
	}
	// The buffered path leaves the tape untouched; the chunked one has
	// already truncated at the write position (it streams).
	m = reopen(t, m)
	if got := readAll(t, m, 0); len(got) != 1 {
		t.Errorf("after failed writes: %v", got)
	}
}

func TestMidTapeWriteTruncates(t *testing.T) {
	for _, tc := range []struct {
		name  string
		parts []int64
		part  int
	}{
		{"last region", nil, 0},
		{"inner region", []int64{8 << 20, 0}, 0}, // partition 0 is smaller: not last in the file
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newCart(t, Options{Capacity: 64 << 20, Partitions: tc.parts})
			g := newGen(3, 64<<10)
			var want []obj
			for range 20 {
				o := g.any()
				want = append(want, o)
			}
			if err := m.Locate(tc.part, 0); err != nil && !errors.Is(err, tape.ErrEndOfData) {
				t.Fatal(err)
			}
			mustPut(t, m, want...)
			if err := m.Sync(); err != nil {
				t.Fatal(err)
			}
			if err := m.Locate(tc.part, 7); err != nil {
				t.Fatal(err)
			}
			nb := g.block(1000)
			mustPut(t, m, nb)
			want = append(want[:7:7], nb)
			if o, _ := m.Peek(); o.Kind != tape.KindEOD {
				t.Errorf("after mid-tape write: %+v, want EOD", o)
			}
			if err := m.Locate(tc.part, 10); !errors.Is(err, tape.ErrEndOfData) {
				t.Errorf("locate past new EOD: %v", err)
			}
			if u := m.Used(tc.part); u != sizeOf(want) {
				t.Errorf("Used %d, want %d", u, sizeOf(want))
			}
			if got := readAll(t, m, tc.part); !equalObjs(got, want) {
				t.Fatalf("got %v\nwant %v", got, want)
			}
			// Neither a clean reopen nor a crash (no Sync: copy the file)
			// brings the discarded records back.
			crashed := crashCopy(t, m)
			m = reopen(t, m)
			if got := readAll(t, m, tc.part); !equalObjs(got, want) {
				t.Fatalf("after reopen: got %v\nwant %v", got, want)
			}
			if got := readAll(t, crashed, tc.part); !equalObjs(got, want[:7]) && !equalObjs(got, want) {
				t.Fatalf("after crash: got %v\nwant %v", got, want)
			}
			if tc.parts == nil {
				st, _ := os.Stat(m.path)
				if end := int64(dataStart) + sizeOf(want); st.Size() != end {
					t.Errorf("file size %d, want %d (truncated)", st.Size(), end)
				}
			}
		})
	}
}

func sizeOf(objs []obj) int64 {
	var n int64
	for _, o := range objs {
		n += recHeaderSize + int64(o.stored())
	}
	return n
}

// crashCopy copies m's file as it is now (what a crash would leave if the
// page cache reached the disk) and opens the copy.
func crashCopy(t testing.TB, m *Image) *Image {
	t.Helper()
	b, err := os.ReadFile(m.path)
	if err != nil {
		t.Fatal(err)
	}
	return openBytes(t, b)
}

func openBytes(t testing.TB, b []byte) *Image {
	t.Helper()
	path := t.TempDir() + "/CRASH.vtape"
	if err := os.WriteFile(path, b, 0o600); err != nil {
		t.Fatal(err)
	}
	c, err := OpenFile(path)
	if err != nil {
		t.Fatalf("open crashed image: %v", err)
	}
	c.noSync = true // a scratch copy
	t.Cleanup(func() {
		if !c.closed {
			if err := c.Close(); err != nil {
				t.Fatal(err)
			}
		}
	})
	return c
}

func TestEraseAndStaleRecordsStayGone(t *testing.T) {
	for _, parts := range [][]int64{nil, {4 << 20, 0}} {
		m, _ := newCart(t, Options{Capacity: 32 << 20, Partitions: parts})
		g := newGen(4, 32<<10)
		var want []obj
		for range 30 {
			want = append(want, g.any())
		}
		mustPut(t, m, want...)
		if err := m.Sync(); err != nil {
			t.Fatal(err)
		}
		if err := m.Locate(0, 12); err != nil {
			t.Fatal(err)
		}
		if err := m.Erase(); err != nil {
			t.Fatal(err)
		}
		if err := m.Sync(); err != nil {
			t.Fatal(err)
		}
		// The synced erase holds across a clean reopen and a crash copy.
		crashed := crashCopy(t, m)
		m = reopen(t, m)
		for _, img := range []*Image{m, crashed} {
			if got := readAll(t, img, 0); !equalObjs(got, want[:12]) {
				t.Fatalf("partitions %v: after erase got %v\nwant %v", parts, got, want[:12])
			}
		}
		// Rewriting the same content at the same place does not chain to
		// the stale records after it either.
		if err := m.Locate(0, 12); err != nil && !errors.Is(err, tape.ErrEndOfData) {
			t.Fatal(err)
		}
		mustPut(t, m, want[12])
		crashed = crashCopy(t, m)
		if got := readAll(t, crashed, 0); !equalObjs(got, want[:13]) && !equalObjs(got, want[:12]) {
			t.Fatalf("partitions %v: rewrite then crash: got %v", parts, got)
		}
	}
}

func TestPrevAcrossFilemarks(t *testing.T) {
	m, _ := newCart(t, Options{})
	g := newGen(5, 5000)
	fm, sm := obj{kind: tape.KindFilemark}, obj{kind: tape.KindSetmark}
	want := []obj{g.block(100), g.block(200), fm, g.block(300), fm, fm, sm, g.block(400), fm}
	mustPut(t, m, want...)
	m = reopen(t, m)
	if err := m.Locate(0, uint64(len(want))); err != nil && !errors.Is(err, tape.ErrEndOfData) { // EOD
		t.Fatal(err)
	}
	files := uint64(4)
	sets := uint64(1)
	for i := len(want) - 1; i >= 0; i-- {
		o, err := m.Prev()
		if err != nil {
			t.Fatalf("Prev to %d: %v", i, err)
		}
		if o.Kind != want[i].kind || o.Len != want[i].n {
			t.Errorf("Prev to %d: %+v, want %v", i, o, want[i])
		}
		switch want[i].kind {
		case tape.KindFilemark:
			files--
		case tape.KindSetmark:
			sets--
		}
		if p := m.Pos(); p.Object != uint64(i) || p.File != files || p.Set != sets {
			t.Errorf("at %d: position %+v, want file %d set %d", i, p, files, sets)
		}
		if o.Kind == tape.KindBlock {
			got, err := readBlock(m, o.Len)
			if err != nil || seedOf(got) != want[i].seed {
				t.Errorf("block %d after Prev: %v", i, err)
			}
		}
	}
	if _, err := m.Prev(); !errors.Is(err, tape.ErrBeginningOfPart) {
		t.Errorf("Prev at BOP: %v", err)
	}
	if p := m.Pos(); p.Object != 0 {
		t.Errorf("Prev at BOP moved to %+v", p)
	}
}

func TestLocate(t *testing.T) {
	m, _ := newCart(t, Options{Capacity: 64 << 20})
	const n = 3000 // enough for a dozen checkpoints
	g := newGen(6, 64)
	var want []obj
	var files []uint64
	f := uint64(0)
	for i := range n {
		o := g.block(8 + i%50)
		if i%97 == 96 {
			o = obj{kind: tape.KindFilemark}
		}
		want = append(want, o)
		files = append(files, f)
		if o.kind == tape.KindFilemark {
			f++
		}
	}
	mustPut(t, m, want...)
	check := func(m *Image, target uint64) {
		t.Helper()
		if err := m.Locate(0, target); err != nil {
			t.Fatalf("Locate %d: %v", target, err)
		}
		if p := m.Pos(); p.Object != target || p.File != files[target] {
			t.Fatalf("Locate %d: at %+v, want file %d", target, p, files[target])
		}
		o, err := m.Peek()
		if err != nil || o.Kind != want[target].kind {
			t.Fatalf("Locate %d: Peek %+v %v", target, o, err)
		}
		if o.Kind == tape.KindBlock {
			b, err := readBlock(m, o.Len)
			if err != nil || seedOf(b) != want[target].seed {
				t.Fatalf("Locate %d: wrong block", target)
			}
		}
	}
	targets := []uint64{0, 1, 255, 256, 257, 1500, 2999, 10, 2000, 512, 511, 0, 2998}
	for _, tg := range targets {
		check(m, tg)
	}
	// After a reopen the index is empty and is rebuilt while moving.
	m = reopen(t, m)
	for _, tg := range append([]uint64{2500, 100}, targets...) {
		check(m, tg)
	}
	if err := m.Locate(0, n); !errors.Is(err, tape.ErrEndOfData) {
		t.Errorf("Locate EOD: %v", err)
	}
	if err := m.Locate(0, n+100); !errors.Is(err, tape.ErrEndOfData) || m.Pos().Object != n {
		t.Errorf("Locate past EOD: %v at %+v", err, m.Pos())
	}
	if err := m.Locate(1, 0); !errors.Is(err, tape.ErrNoPartition) {
		t.Errorf("Locate partition 1: %v", err)
	}
}

func TestIndexBounded(t *testing.T) {
	var x index
	x.init()
	off := int64(0)
	for obj := range uint64(5_000_000) {
		x.note(obj, off, obj%1000 == 999)
		off += 100
	}
	if len(x.cps) > maxCheckpoints || cap(x.cps) != maxCheckpoints || len(x.fms) > maxFilemarks {
		t.Fatalf("index grew: %d checkpoints (cap %d), %d filemarks", len(x.cps), cap(x.cps), len(x.fms))
	}
	if x.every < 5_000_000/maxCheckpoints {
		t.Errorf("spacing %d too small", x.every)
	}
	for i, c := range x.cps {
		if c.obj%x.every != 0 || c.off != int64(c.obj)*100 || i > 0 && x.cps[i-1].obj >= c.obj {
			t.Fatalf("bad checkpoint %d: %+v", i, c)
		}
	}
	if c, ok := x.floor(1_234_567); !ok || c.obj > 1_234_567 || 1_234_567-c.obj >= x.every {
		t.Errorf("floor: %+v %v", c, ok)
	}
	if c, ok := x.ceil(1_234_567); !ok || c.obj < 1_234_567 || c.obj-1_234_567 >= x.every {
		t.Errorf("ceil: %+v %v", c, ok)
	}
	if fm, ok := x.filemark(5); !ok || fm.obj != 5999 {
		t.Errorf("filemark 5: %+v %v", fm, ok)
	}
	x.truncate(3000)
	if c := x.cps[len(x.cps)-1]; c.obj > 3000 {
		t.Errorf("truncate kept %+v", c)
	}
	if len(x.fms) != 3 || x.fmKnown != 3000 {
		t.Errorf("truncate: %d filemarks, known %d", len(x.fms), x.fmKnown)
	}
}

func TestSpaceFilemarks(t *testing.T) {
	m, _ := newCart(t, Options{Capacity: 64 << 20})
	g := newGen(7, 64)
	fm := obj{kind: tape.KindFilemark}
	// file k has k%4 blocks; 40 filemarks; then 3 blocks
	var want []obj
	for k := range 40 {
		for range k % 4 {
			want = append(want, g.block(16))
		}
		want = append(want, fm)
	}
	want = append(want, g.block(16), g.block(16), g.block(16))
	mustPut(t, m, want...)
	// reference positions: object number after filemark k
	var after []uint64
	for i, o := range want {
		if o.kind == tape.KindFilemark {
			after = append(after, uint64(i+1))
		}
	}
	for _, fresh := range []bool{false, true} {
		if fresh {
			m = reopen(t, m) // index empty: scans
		}
		if err := m.Locate(0, 0); err != nil {
			t.Fatal(err)
		}
		if n, err := m.SpaceFilemarks(5); n != 5 || err != nil || m.Pos().Object != after[4] || m.Pos().File != 5 {
			t.Fatalf("fresh=%v fsf 5: %d %v at %+v", fresh, n, err, m.Pos())
		}
		if n, err := m.SpaceFilemarks(30); n != 30 || err != nil || m.Pos().Object != after[34] {
			t.Fatalf("fresh=%v fsf 30: %d %v at %+v", fresh, n, err, m.Pos())
		}
		// Backward over filemarks 34 and 33: before filemark 33.
		if n, err := m.SpaceFilemarks(-2); n != 2 || err != nil || m.Pos().Object != after[33]-1 || m.Pos().File != 33 {
			t.Fatalf("fresh=%v bsf 2: %d %v at %+v (want object %d)", fresh, n, err, m.Pos(), after[33]-1)
		}
		if n, err := m.SpaceFilemarks(100); n != 7 || !errors.Is(err, tape.ErrEndOfData) || m.Pos().Object != uint64(len(want)) {
			t.Fatalf("fresh=%v fsf past EOD: %d %v at %+v", fresh, n, err, m.Pos())
		}
		if n, err := m.SpaceFilemarks(-100); n != 40 || !errors.Is(err, tape.ErrBeginningOfPart) || m.Pos().Object != 0 {
			t.Fatalf("fresh=%v bsf past BOP: %d %v at %+v", fresh, n, err, m.Pos())
		}
	}
}

func TestCapacityAndEndOfMedium(t *testing.T) {
	// An early warning over a quarter of the capacity is refused, not
	// stored and clamped.
	if err := Create(t.TempDir(), "EW1", Options{Capacity: 2 << 20, EarlyWarning: 1 << 20}); err == nil ||
		!strings.Contains(err.Error(), "more than a quarter") {
		t.Errorf("early warning of half the capacity: %v", err)
	}
	m, _ := newCart(t, Options{Capacity: 2 << 20, EarlyWarning: 512 << 10})
	info := m.Info()
	if info.Capacity[0] != 2<<20 || info.EarlyWarning[0] != 512<<10 {
		t.Errorf("info %+v", info)
	}
	g := newGen(8, 1)
	blk := 100_000
	var n int
	for {
		before, pos := m.Used(0), m.Pos()
		err := put(t, m, g.block(blk))
		if errors.Is(err, tape.ErrEndOfMedium) {
			if m.Used(0) != before || m.Pos() != pos {
				t.Errorf("failed write changed used %d→%d pos %+v→%+v", before, m.Used(0), pos, m.Pos())
			}
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		n++
	}
	if want := (2 << 20) / (blk + recHeaderSize); n != want {
		t.Errorf("%d blocks fit, want %d", n, want)
	}
	if m.Used(0) > 2<<20 {
		t.Errorf("used %d beyond capacity", m.Used(0))
	}
	// A filemark still fits in the remaining space.
	if err := m.WriteMark(tape.KindFilemark); err != nil {
		t.Errorf("filemark at the end: %v", err)
	}
}

func TestWriteProtected(t *testing.T) {
	m, dir := newCart(t, Options{})
	mustPut(t, m, newGen(9, 1).block(100))
	if err := m.SetWriteProtected(true); err != nil {
		t.Fatal(err)
	}
	m = reopen(t, m)
	if !m.Info().WriteProtected {
		t.Fatal("not write protected after reopen")
	}
	if err := m.Locate(0, 1); err != nil && !errors.Is(err, tape.ErrEndOfData) {
		t.Fatal(err)
	}
	for name, err := range map[string]error{
		"block":     errOf(m.WriteBlock(bytes.NewReader(make([]byte, 10)), 10, tape.Encoding{})),
		"filemark":  m.WriteMark(tape.KindFilemark),
		"erase":     m.Erase(),
		"format":    m.Format([]int64{0}),
		"attribute": m.SetAttribute(AttrApplicationVendor, []byte("X")),
	} {
		if !errors.Is(err, tape.ErrWriteProtected) {
			t.Errorf("%s on a write-protected cartridge: %v", name, err)
		}
	}
	if got := readAll(t, m, 0); len(got) != 1 {
		t.Errorf("reads: %v", got)
	}
	if err := m.SetWriteProtected(false); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteMark(tape.KindFilemark); err != nil {
		t.Errorf("write after clearing the tab: %v", err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	// A file the process cannot write opens write-protected.
	if os.Geteuid() != 0 {
		if err := os.Chmod(Path(dir, "TEST01"), 0o400); err != nil {
			t.Fatal(err)
		}
		ro, err := Open(dir, "TEST01")
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = ro.Close() }()
		if !ro.Info().WriteProtected || !errors.Is(ro.WriteMark(tape.KindFilemark), tape.ErrWriteProtected) {
			t.Error("read-only file is writable")
		}
	}
}

func TestWORM(t *testing.T) {
	m, _ := newCart(t, Options{WORM: true, Partitions: []int64{1 << 20, 0}})
	g := newGen(10, 1)
	mustPut(t, m, g.block(100), obj{kind: tape.KindFilemark}, g.block(100))
	if err := m.Locate(0, 1); err != nil {
		t.Fatal(err)
	}
	if err := put(t, m, g.block(10)); !errors.Is(err, tape.ErrWORMOverwrite) {
		t.Errorf("overwrite: %v", err)
	}
	if err := m.WriteMark(tape.KindFilemark); !errors.Is(err, tape.ErrWORMOverwrite) {
		t.Errorf("overwrite with a filemark: %v", err)
	}
	if err := m.Erase(); !errors.Is(err, tape.ErrWORMOverwrite) {
		t.Errorf("erase: %v", err)
	}
	if err := m.Format([]int64{0}); !errors.Is(err, tape.ErrWORMOverwrite) {
		t.Errorf("format with data: %v", err)
	}
	if err := m.Locate(0, 3); err != nil && !errors.Is(err, tape.ErrEndOfData) {
		t.Fatal(err)
	}
	if err := put(t, m, g.block(10)); err != nil {
		t.Errorf("append: %v", err)
	}
	if err := m.Erase(); err != nil {
		t.Errorf("erase at EOD: %v", err)
	}
	if v, _ := m.Attribute(AttrMediumType); !bytes.Equal(v, []byte{0x80}) {
		t.Errorf("medium type %x, want 80 (WORM)", v)
	}
	// An empty WORM cartridge may be formatted.
	e, _ := newCart(t, Options{WORM: true})
	if err := e.Format([]int64{1 << 20, 0}); err != nil {
		t.Errorf("format empty WORM: %v", err)
	}
}

func TestPartitionsAndFormat(t *testing.T) {
	m, _ := newCart(t, Options{Capacity: 64 << 20, EarlyWarning: 1 << 20, Partitions: []int64{4 << 20, 0}})
	info := m.Info()
	if info.Partitions != 2 || info.Capacity[0] != 4<<20 || info.Capacity[1] != 60<<20 {
		t.Fatalf("info %+v", info)
	}
	g := newGen(11, 200<<10)
	w0 := []obj{g.block(1000), {kind: tape.KindFilemark}, g.block(2000)}
	w1 := []obj{g.block(3000), g.block(4000), {kind: tape.KindSetmark}}
	if err := m.Locate(1, 0); err != nil && !errors.Is(err, tape.ErrEndOfData) {
		t.Fatal(err)
	}
	mustPut(t, m, w1...)
	if err := m.Locate(0, 0); err != nil && !errors.Is(err, tape.ErrEndOfData) {
		t.Fatal(err)
	}
	mustPut(t, m, w0...)
	if m.Used(0) != sizeOf(w0) || m.Used(1) != sizeOf(w1) || m.Used(2) != 0 {
		t.Errorf("used %d %d", m.Used(0), m.Used(1))
	}
	m = reopen(t, m)
	if got := readAll(t, m, 0); !equalObjs(got, w0) {
		t.Errorf("partition 0: %v", got)
	}
	if got := readAll(t, m, 1); !equalObjs(got, w1) {
		t.Errorf("partition 1: %v", got)
	}
	if p := m.Pos(); p.Partition != 1 || p.Object != 3 || p.Set != 1 {
		t.Errorf("position %+v", p)
	}
	// Partition 0 cannot grow past its capacity into partition 1.
	if err := m.Locate(0, 3); err != nil && !errors.Is(err, tape.ErrEndOfData) {
		t.Fatal(err)
	}
	for {
		if err := put(t, m, g.block(200<<10)); err != nil {
			if !errors.Is(err, tape.ErrEndOfMedium) {
				t.Fatal(err)
			}
			break
		}
	}
	if got := readAll(t, m, 1); !equalObjs(got, w1) {
		t.Errorf("partition 1 after filling partition 0: %v", got)
	}

	// Format: three partitions, the data is gone.
	if err := m.Format([]int64{2 << 20, 30 << 20, 0}); err != nil {
		t.Fatal(err)
	}
	for _, bad := range [][]int64{{}, {1, 0}, {64 << 20, 1 << 20}, {1 << 20, 1 << 20, 1 << 20, 1 << 20, 0}, {63<<20 + 1, 0}} {
		if err := m.Format(bad); !errors.Is(err, ErrBadPartitions) {
			t.Errorf("Format %v: %v", bad, err)
		}
	}
	m = reopen(t, m)
	info = m.Info()
	if info.Partitions != 3 || info.Capacity[2] != 32<<20 {
		t.Fatalf("after format: %+v", info)
	}
	for p := range 3 {
		if got := readAll(t, m, p); len(got) != 0 || m.Used(p) != 0 {
			t.Errorf("partition %d after format: %v", p, got)
		}
	}
	if v, _ := m.Attribute(AttrInitializationCount); !bytes.Equal(v, []byte{0, 1}) {
		t.Errorf("initialization count %x", v)
	}
	st, _ := os.Stat(m.path)
	if st.Size() != dataStart {
		t.Errorf("file size after format %d", st.Size())
	}
}

func TestCorruptDataDetectedOnRead(t *testing.T) {
	m, _ := newCart(t, Options{})
	g := newGen(12, 1)
	b := g.block(100_000)
	mustPut(t, m, g.block(500), b)
	path := m.path
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_RDWR, 0)
	off := int64(dataStart) + recHeaderSize + 500 + recHeaderSize + 77_777
	if _, err := f.WriteAt([]byte{0xFF ^ b.content()[77_777]}, off); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	if err := m.Locate(0, 1); err != nil {
		t.Fatal(err)
	}
	_, err = readBlock(m, b.n)
	if !errors.Is(err, tape.ErrCorrupt) {
		t.Errorf("read of a corrupted block: %v", err)
	}
	// The header is still fine: positioning works.
	if err := m.Next(); err != nil {
		t.Errorf("Next over it: %v", err)
	}
}

func TestCorruptLargeBlockDetected(t *testing.T) {
	m, _ := newCart(t, Options{Capacity: 64 << 20})
	g := newGen(15, 1)
	b := g.block(3 << 20) // read straight from the file, CRC at the last byte
	mustPut(t, m, b)
	path := m.path
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_RDWR, 0)
	if _, err := f.WriteAt([]byte{0xFF ^ b.content()[1<<20]}, dataStart+recHeaderSize+1<<20); err != nil {
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	if _, err := readBlock(m, b.n); !errors.Is(err, tape.ErrCorrupt) {
		t.Errorf("read of a corrupted large block: %v", err)
	}
}

func TestCorruptHeaderIsAnError(t *testing.T) {
	m, _ := newCart(t, Options{})
	g := newGen(13, 1)
	mustPut(t, m, g.block(500), g.block(500), g.block(500), g.block(500), g.block(500), g.block(500))
	path := m.path
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	f, _ := os.OpenFile(path, os.O_RDWR, 0)
	if _, err := f.WriteAt([]byte{0x55}, dataStart+recHeaderSize+500+20); err != nil { // object 1's header
		t.Fatal(err)
	}
	if err := f.Close(); err != nil {
		t.Fatal(err)
	}
	m, err := OpenFile(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = m.Close() }()
	if err := m.Locate(0, 2); !errors.Is(err, tape.ErrCorrupt) { // walks forward from BOP
		t.Errorf("Locate across: %v", err)
	}
	if err := m.Locate(0, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := m.Peek(); !errors.Is(err, tape.ErrCorrupt) {
		t.Errorf("Peek: %v", err)
	}
	if err := m.Locate(0, 5); err != nil { // walks back from EOD
		t.Fatal(err)
	}
	for range 3 {
		if _, err := m.Prev(); err != nil { // objects 4, 3, 2 are fine
			t.Errorf("Prev: %v", err)
		}
	}
	if _, err := m.Prev(); !errors.Is(err, tape.ErrCorrupt) {
		t.Errorf("Prev to 1: %v", err)
	}
}

func TestBadSuperblock(t *testing.T) {
	m, _ := newCart(t, Options{})
	mustPut(t, m, newGen(14, 1).block(100))
	if err := m.Sync(); err != nil { // slot B now newest
		t.Fatal(err)
	}
	path := m.path
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	b, _ := os.ReadFile(path)
	// Damaging the newest slot falls back to the older one.
	c := bytes.Clone(b)
	c[slotSize+100] ^= 1
	img := openBytes(t, c)
	if got := readAll(t, img, 0); len(got) != 1 {
		t.Errorf("fallback slot: %v", got)
	}
	// Both slots bad: a clear error, not a panic.
	c[100] ^= 1
	p := t.TempDir() + "/X.vtape"
	if err := os.WriteFile(p, c, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(p); !errors.Is(err, tape.ErrCorrupt) || !strings.Contains(err.Error(), "no valid header") {
		t.Errorf("open with both slots bad: %v", err)
	}
	// A future version is named as such.
	c = bytes.Clone(b)
	c[8], c[slotSize+8] = 9, 9
	if err := os.WriteFile(p, c, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := OpenFile(p); err == nil || !strings.Contains(err.Error(), "unsupported format version 9") {
		t.Errorf("open future version: %v", err)
	}
}

func TestClosed(t *testing.T) {
	m, _ := newCart(t, Options{})
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	if err := m.Close(); !errors.Is(err, ErrClosed) {
		t.Errorf("second Close: %v", err)
	}
	if _, err := m.Peek(); !errors.Is(err, ErrClosed) {
		t.Errorf("Peek after Close: %v", err)
	}
	if err := m.WriteMark(tape.KindFilemark); !errors.Is(err, ErrClosed) {
		t.Errorf("write after Close: %v", err)
	}
	// One sentinel for every closed tape object: the drive's matches too.
	if _, err := m.Peek(); !errors.Is(err, tape.ErrClosed) || err.Error() != "cartridge: image closed" {
		t.Errorf("Peek after Close: %v, want a cartridge error matching tape.ErrClosed", err)
	}
}

// TestSteadyStateZeroAlloc: writing and reading blocks allocates nothing
// once the buffers are grown, plain or compressed, whether the data
// compresses or not.
func TestSteadyStateZeroAlloc(t *testing.T) {
	random := make([]byte, 256<<10)
	_, _ = rand.NewChaCha8([32]byte{3}).Read(random)
	for _, tc := range []struct {
		name string
		data []byte
		enc  tape.Encoding
	}{
		{"plain", make([]byte, 256<<10), tape.Encoding{}},
		{"compressed", make([]byte, 256<<10), tape.Encoding{Compress: true}},
		{"incompressible", random, tape.Encoding{Compress: true}},
	} {
		t.Run(tc.name, func(t *testing.T) { steadyStateZeroAlloc(t, tc.data, tc.enc) })
	}
}

func steadyStateZeroAlloc(t *testing.T, data []byte, enc tape.Encoding) {
	m, _ := newCart(t, Options{Capacity: 1 << 30})
	segs := segments(data, 4096)
	buf := scsi.NewBuffer(segs...)
	write := func() {
		buf.Reset(segs)
		if _, err := m.WriteBlock(buf, len(data), enc); err != nil {
			t.Fatal(err)
		}
	}
	write()
	if a := testing.AllocsPerRun(200, write); a != 0 {
		t.Errorf("WriteBlock: %v allocs per block", a)
	}
	if a := testing.AllocsPerRun(100, func() {
		if err := m.WriteMark(tape.KindFilemark); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("WriteMark: %v allocs", a)
	}
	if err := m.Locate(0, 0); err != nil {
		t.Fatal(err)
	}
	read := func() {
		o, err := m.Peek()
		if err != nil {
			t.Fatal(err)
		}
		if o.Kind == tape.KindBlock {
			buf.Reset(segs)
			if _, err := buf.WriteFromAt(m, 0, o.Len); err != nil {
				t.Fatal(err)
			}
		}
		if err := m.Next(); err != nil {
			t.Fatal(err)
		}
	}
	if a := testing.AllocsPerRun(200, read); a != 0 {
		t.Errorf("read: %v allocs per block", a)
	}
	if a := testing.AllocsPerRun(50, func() {
		if _, err := m.Prev(); err != nil {
			t.Fatal(err)
		}
		_ = m.Pos()
		_ = m.Info()
		_ = m.Used(0)
	}); a != 0 {
		t.Errorf("Prev/Pos/Info/Used: %v allocs", a)
	}
	if a := testing.AllocsPerRun(50, func() {
		if err := m.Locate(0, 150); err != nil {
			t.Fatal(err)
		}
	}); a != 0 {
		t.Errorf("Locate: %v allocs", a)
	}
}

// TestFormatVersion: an image is version 1 until it holds a compressed
// block, version 2 from then on (reopened too); a version this program
// does not know is refused with a message that says so.
func TestFormatVersion(t *testing.T) {
	m, dir := newCart(t, Options{Capacity: 8 << 20})
	zeros := make([]byte, 32<<10)
	if _, err := m.WriteBlock(bytes.NewReader(zeros), len(zeros), tape.Encoding{}); err != nil {
		t.Fatal(err)
	}
	random := make([]byte, 32<<10)
	_, _ = rand.NewChaCha8([32]byte{5}).Read(random)
	if stored, err := m.WriteBlock(bytes.NewReader(random), len(random), tape.Encoding{Compress: true}); err != nil || stored != len(random) {
		t.Fatalf("incompressible block: stored %d, %v; want %d (as written)", stored, err, len(random))
	}
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	if v := m.Stat().Version; v != 1 {
		t.Fatalf("version %d without a compressed block, want 1", v)
	}
	stored, err := m.WriteBlock(bytes.NewReader(zeros), len(zeros), tape.Encoding{Compress: true})
	if err != nil || stored >= len(zeros)/10 {
		t.Fatalf("zeros: stored %d, %v", stored, err)
	}
	if v := m.Stat().Version; v != 2 {
		t.Fatalf("version %d after a compressed block, want 2", v)
	}
	// The superblock said version 2 before the block was written: a
	// crash right after it (no sync) still opens as version 2.
	crashed := crashCopy(t, m)
	if v := crashed.Stat().Version; v != 2 {
		t.Errorf("crash copy: version %d, want 2", v)
	}
	if got := readAll(t, crashed, 0); len(got) != 3 {
		t.Errorf("crash copy holds %v, want the 3 blocks (written before the copy)", got)
	}
	m = reopen(t, m)
	if v := m.Stat().Version; v != 2 {
		t.Errorf("after reopen: version %d, want 2", v)
	}
	if err := m.Locate(0, 2); err != nil {
		t.Fatal(err)
	}
	if o, err := m.Peek(); err != nil || o.Len != len(zeros) || o.Stored != stored {
		t.Errorf("compressed block: %+v %v, want length %d stored %d", o, err, len(zeros), stored)
	}
	if got, err := readBlock(m, len(zeros)); err != nil || !bytes.Equal(got, zeros) {
		t.Errorf("compressed block reads back %d bytes, %v", len(got), err)
	}
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}

	// Version 3 in both slots, CRC fixed: refused, naming the version.
	path := Path(dir, "TEST01")
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	for slot := range 2 {
		b := make([]byte, slotSize)
		if _, err := f.ReadAt(b, int64(slot)*slotSize); err != nil {
			t.Fatal(err)
		}
		b[8] = 3
		mam := binary.LittleEndian.Uint32(b[84:])
		crc := crc32.Update(crc32.Checksum(b[:slotCRCOff], castagnoli), castagnoli, b[slotFixed:slotFixed+mam])
		binary.LittleEndian.PutUint32(b[slotCRCOff:], crc)
		if _, err := f.WriteAt(b, int64(slot)*slotSize); err != nil {
			t.Fatal(err)
		}
	}
	_ = f.Close()
	if _, err := OpenFile(path); err == nil || !strings.Contains(err.Error(), "unsupported format version 3 (this program reads versions 1 to 2)") {
		t.Errorf("version 3 image: %v", err)
	}
}

// TestEncryptedRecords: an encrypted block is ciphertext in the file (a
// marker written in it is nowhere in the image), reads back with its key,
// fails with ErrNoKey and ErrWrongKey otherwise, survives a reopen, and a
// plain block after it reads without a key.
func TestEncryptedRecords(t *testing.T) {
	m, _ := newCart(t, Options{Capacity: 8 << 20})
	key, err := tape.NewKey(bytes.Repeat([]byte{0x11}, tape.KeySize), []byte("A1"), []byte("TAPE01"))
	if err != nil {
		t.Fatal(err)
	}
	marker := []byte("VSCSID-PLAINTEXT-MARKER-0123456789")
	block := bytes.Repeat(marker, 1000) // compresses too
	for _, enc := range []tape.Encoding{{Key: key}, {Key: key, Compress: true}} {
		if _, err := m.WriteBlock(bytes.NewReader(block), len(block), enc); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := m.WriteBlock(bytes.NewReader(marker), len(marker), tape.Encoding{}); err != nil {
		t.Fatal(err)
	}
	m = reopen(t, m)
	raw, err := os.ReadFile(m.path)
	if err != nil {
		t.Fatal(err)
	}
	if n := bytes.Count(raw, marker); n != 1 { // only the plain block
		t.Errorf("the marker is %d times in the image, want once (the plain block)", n)
	}
	for i, wantEnc := range []uint8{tape.EncEncrypted, tape.EncEncrypted | tape.EncCompressed} {
		if err := m.Locate(0, uint64(i)); err != nil {
			t.Fatal(err)
		}
		o, err := m.Peek()
		if err != nil || o.Len != len(block) || o.Encoding != wantEnc {
			t.Fatalf("block %d: %+v %v", i, o, err)
		}
		m.SetKey(nil)
		if _, err := m.ReadAt(make([]byte, 10), 0); !errors.Is(err, tape.ErrNoKey) {
			t.Errorf("block %d without a key: %v", i, err)
		}
		other, _ := tape.NewKey(bytes.Repeat([]byte{0x22}, tape.KeySize), []byte("A1"), nil)
		m.SetKey(other)
		if _, err := m.ReadAt(make([]byte, 10), 0); !errors.Is(err, tape.ErrWrongKey) {
			t.Errorf("block %d with another key: %v", i, err)
		}
		m.SetKey(key)
		if got, err := readBlock(m, len(block)); err != nil || !bytes.Equal(got, block) {
			t.Errorf("block %d with its key: %v", i, err)
		}
	}
	m.SetKey(nil)
	if err := m.Locate(0, 2); err != nil {
		t.Fatal(err)
	}
	if got, err := readBlock(m, len(marker)); err != nil || !bytes.Equal(got, marker) {
		t.Errorf("plain block without a key: %q %v", got, err)
	}
	// Without the key a record reader still checks every record's CRC.
	r := m.Records(0)
	for i := range 3 {
		if _, err := r.Next(); err != nil {
			t.Fatal(err)
		}
		if err := r.Verify(); err != nil {
			t.Errorf("record %d: Verify without a key: %v", i, err)
		}
	}
	m.SetKey(key)
	recs, _, err := walk(t, m, 0)
	if !errors.Is(err, io.EOF) || len(recs) != 3 || !recs[0].Encrypted || recs[0].Compressed || !recs[1].Encrypted || !recs[1].Compressed || recs[2].Encrypted {
		t.Errorf("records: %v %+v", err, recs)
	}
}

// The write buffer follows the blocks written: 64 KiB blocks, plain or
// compressed, and a thousand filemarks keep it near 64 KiB; a 1 MiB block
// takes it to wbufSize.
func TestWriteBufferFollowsBlocks(t *testing.T) {
	m, _ := newCart(t, Options{Capacity: 64 << 20})
	b := bytes.Repeat([]byte("vscsid soak block "), 64<<10/18+1)[:64<<10]
	for _, enc := range []tape.Encoding{{}, {Compress: true}} {
		for range 4 {
			if _, err := m.WriteBlock(bytes.NewReader(b), len(b), enc); err != nil {
				t.Fatal(err)
			}
		}
	}
	if _, err := m.WriteMarks(tape.KindFilemark, 1000); err != nil {
		t.Fatal(err)
	}
	if c := cap(m.wbuf); c < 64<<10 || c > 64<<10+recHeaderSize {
		t.Errorf("after 64 KiB blocks the write buffer is %d bytes, want 64 KiB and a header", c)
	}
	big := make([]byte, 1<<20)
	if _, err := m.WriteBlock(bytes.NewReader(big), len(big), tape.Encoding{}); err != nil {
		t.Fatal(err)
	}
	if c := cap(m.wbuf); c != wbufSize {
		t.Errorf("after a 1 MiB block the write buffer is %d bytes, want %d", c, wbufSize)
	}
}
