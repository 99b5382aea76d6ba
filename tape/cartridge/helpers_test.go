package cartridge

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"testing"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
)

// obj is one object of a test model: a block's content is derived from its
// seed, so every block written in a test is distinct and checkable.
type obj struct {
	kind tape.Kind
	n    int
	seed uint64
	// packed: the content compresses (about 8:1) and the block is
	// written with compression asked for.
	packed bool
}

func (o obj) String() string {
	switch o.kind {
	case tape.KindFilemark:
		return "FM"
	case tape.KindSetmark:
		return "SM"
	}
	if o.packed {
		return fmt.Sprintf("P%d/%d", o.seed, o.n)
	}
	return fmt.Sprintf("B%d/%d", o.seed, o.n)
}

// content returns the data of block o (deterministic from seed): the seed
// in the first 8 bytes, pseudo-random bytes after; in a packed block each
// random word repeats 8 times.
func (o obj) content() []byte {
	b := make([]byte, o.n)
	r := rand.New(rand.NewPCG(o.seed, o.seed^0x9E3779B97F4A7C15))
	var v uint64
	for i := 0; i < len(b); i += 8 {
		if !o.packed || i%64 == 0 {
			v = r.Uint64()
		}
		if i == 0 {
			v = o.seed
		}
		for j := 0; j < 8 && i+j < len(b); j++ {
			b[i+j] = byte(v >> (8 * j))
		}
	}
	return b
}

// stored is the data bytes o takes in the image: a packed block is
// stored compressed, with the encoding prefix, when that is smaller.
func (o obj) stored() int {
	if !o.packed {
		return o.n
	}
	out, ok := tape.Compress(make([]byte, tape.CompressBound(o.n)), o.content())
	if !ok || len(out)+encPrefixSize >= o.n {
		return o.n
	}
	return len(out) + encPrefixSize
}

// newCart creates a cartridge in a temporary directory and opens it.
func newCart(t testing.TB, opts Options) (*Image, string) {
	t.Helper()
	dir := t.TempDir()
	if err := Create(dir, "TEST01", opts); err != nil {
		t.Fatal(err)
	}
	m, err := Open(dir, "TEST01")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !m.closed {
			_ = m.Close()
		}
	})
	return m, dir
}

func reopen(t testing.TB, m *Image) *Image {
	t.Helper()
	if err := m.Close(); err != nil {
		t.Fatal(err)
	}
	n, err := OpenFile(m.path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if !n.closed {
			_ = n.Close()
		}
	})
	return n
}

// put writes o at the current position, the block data arriving through a
// scsi.Buffer split into 4 KiB segments as TCMU delivers it.
func put(t testing.TB, m *Image, o obj) error {
	t.Helper()
	if o.kind != tape.KindBlock {
		return m.WriteMark(o.kind)
	}
	data := o.content()
	_, err := m.WriteBlock(scsi.NewBuffer(segments(data, 4096)...), o.n, tape.Encoding{Compress: o.packed})
	return err
}

// errOf drops WriteBlock's stored size.
func errOf(_ int, err error) error { return err }

func mustPut(t testing.TB, m *Image, objs ...obj) {
	t.Helper()
	for _, o := range objs {
		if err := put(t, m, o); err != nil {
			t.Fatalf("write %v at %+v: %v", o, m.Pos(), err)
		}
	}
}

func segments(b []byte, n int) [][]byte {
	var segs [][]byte
	for len(b) > n {
		segs = append(segs, b[:n])
		b = b[n:]
	}
	return append(segs, b)
}

// readBlock reads the block at the current position the way the drive
// does: into a scsi.Buffer with WriteFromAt.
func readBlock(m *Image, n int) ([]byte, error) {
	out := make([]byte, n)
	buf := scsi.NewBuffer(segments(out, 4096)...)
	k, err := buf.WriteFromAt(m, 0, n)
	return out[:k], err
}

// readAll reads partition part from BOP to EOD, checking every block
// against want when want is not nil, and returns the objects found. It
// fails the test on any unexpected error.
func readAll(t testing.TB, m *Image, part int) []obj {
	t.Helper()
	if err := m.Locate(part, 0); err != nil && !errors.Is(err, tape.ErrEndOfData) {
		t.Fatal(err)
	}
	var got []obj
	for {
		o, err := m.Peek()
		if err != nil {
			t.Fatalf("peek at %+v: %v", m.Pos(), err)
		}
		if o.Kind == tape.KindEOD {
			return got
		}
		g := obj{kind: o.Kind, n: o.Len}
		if o.Kind == tape.KindBlock {
			data, err := readBlock(m, o.Len)
			if err != nil {
				t.Fatalf("read at %+v: %v", m.Pos(), err)
			}
			g.seed, g.packed = identify(data)
		}
		got = append(got, g)
		if err := m.Next(); err != nil {
			t.Fatal(err)
		}
	}
}

// identify returns the seed of block data made by content, and whether
// it is a packed block's, or a value no test uses if the data is not
// exactly such a block.
func identify(data []byte) (seed uint64, packed bool) {
	if len(data) < 8 {
		return garbage, false
	}
	for j := 7; j >= 0; j-- {
		seed = seed<<8 | uint64(data[j])
	}
	for _, packed := range []bool{false, true} {
		if bytes.Equal(obj{kind: tape.KindBlock, n: len(data), seed: seed, packed: packed}.content(), data) {
			return seed, packed
		}
	}
	return garbage, false
}

const garbage = ^uint64(0)

// gen makes test objects: blocks of random sizes (registered for
// identify) and marks.
type gen struct {
	r    *rand.Rand
	next uint64
	max  int
}

func newGen(seed uint64, maxBlock int) *gen {
	return &gen{r: rand.New(rand.NewPCG(seed, 1)), next: seed<<32 | 1, max: maxBlock}
}

func (g *gen) block(n int) obj {
	o := obj{kind: tape.KindBlock, n: max(n, 8), seed: g.next}
	g.next++
	return o
}

// packed returns a compressible block written compressed (at least 16
// bytes, so that its content differs from a plain block's).
func (g *gen) packed(n int) obj {
	o := g.block(max(n, 16))
	o.packed = true
	return o
}

func (g *gen) any() obj {
	switch x := g.r.IntN(24); {
	case x < 2:
		return obj{kind: tape.KindFilemark}
	case x < 3:
		return obj{kind: tape.KindSetmark}
	case x < 6:
		return g.block(8 + g.r.IntN(300)) // small, odd sizes included
	case x >= 20:
		return g.packed(1 + g.r.IntN(g.max))
	default:
		return g.block(1 + g.r.IntN(g.max))
	}
}

func equalObjs(a, b []obj) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if a[i] != b[i] {
			return false
		}
	}
	return true
}

var _ io.ReaderAt = (*Image)(nil)

// seedOf is identify's seed.
func seedOf(data []byte) uint64 {
	seed, _ := identify(data)
	return seed
}
