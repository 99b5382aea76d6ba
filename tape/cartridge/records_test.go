package cartridge

import (
	"bytes"
	"errors"
	"io"
	"os"
	"testing"

	"github.com/vscsid/vscsid/tape"
)

// walk reads every record of partition part with a RecordReader, the data
// of each block with io.ReadAll, and returns them with the error that
// ended the walk.
func walk(t *testing.T, m *Image, part int) ([]*Record, [][]byte, error) {
	t.Helper()
	r := m.Records(part)
	var recs []*Record
	var data [][]byte
	for {
		rec, err := r.Next()
		if err != nil {
			return recs, data, err
		}
		b, err := io.ReadAll(r)
		if err != nil {
			t.Fatalf("read record %+v: %v", rec, err)
		}
		recs = append(recs, rec)
		data = append(data, b)
	}
}

func TestRecordReader(t *testing.T) {
	m, _ := newCart(t, Options{Capacity: 64 << 20, Partitions: []int64{4 << 20, 0}})
	g := newGen(21, 1)
	fm, sm := obj{kind: tape.KindFilemark}, obj{kind: tape.KindSetmark}
	// Small, odd, a buffered 1 MiB one and one read in pieces (> 1 MiB),
	// and compressed ones: too small to shrink (stored as written), odd,
	// 1 MiB and larger.
	want := []obj{
		g.block(80), fm, g.block(5001), sm, g.block(1 << 20), g.block(3<<20 + 7), fm, fm,
		g.packed(12), g.packed(5001), g.packed(1 << 20), g.packed(3<<20 + 7), fm,
	}
	if err := m.Locate(1, 0); !errors.Is(err, tape.ErrEndOfData) {
		t.Fatal(err)
	}
	mustPut(t, m, want...)
	m = reopen(t, m)

	recs, data, err := walk(t, m, 1)
	if !errors.Is(err, io.EOF) {
		t.Fatalf("walk ended with %v", err)
	}
	if len(recs) != len(want) {
		t.Fatalf("%d records, want %d", len(recs), len(want))
	}
	off := m.Stat().Partitions[1].Start
	var file, set uint64
	for i, o := range want {
		rec := recs[i]
		wantRec := Record{Position: tape.Position{Partition: 1, Object: uint64(i), File: file, Set: set}, Kind: o.kind, Offset: off}
		if o.kind == tape.KindBlock {
			wantRec.Len, wantRec.Stored = o.n, o.n
			if o.packed && o.n > 64 {
				// The content compresses about 8:1; the record keeps
				// the logical length in a prefix.
				wantRec.Compressed, wantRec.Stored = true, rec.Stored
				if rec.Stored > o.n/4 || rec.Stored < o.n/16 {
					t.Errorf("record %d: %d bytes stored for %d, want about an eighth", i, rec.Stored, o.n)
				}
			}
		}
		if *rec != wantRec {
			t.Errorf("record %d: %+v, want %+v", i, *rec, wantRec)
		}
		switch {
		case o.kind == tape.KindBlock && !bytes.Equal(data[i], o.content()):
			t.Errorf("record %d: data differs (%d bytes)", i, len(data[i]))
		case o.kind != tape.KindBlock && len(data[i]) != 0:
			t.Errorf("record %d: a mark with %d bytes of data", i, len(data[i]))
		}
		off += recHeaderSize + int64(rec.Stored)
		file += b2u(o.kind == tape.KindFilemark)
		set += b2u(o.kind == tape.KindSetmark)
	}
	if p := m.Pos(); p.Partition != 1 || p.Object != uint64(len(want)) {
		t.Errorf("after the walk the image is at %+v, want end of data", p)
	}

	// The end stays the end.
	r := m.Records(1)
	for range want {
		if _, err := r.Next(); err != nil {
			t.Fatal(err) // data left unread is skipped
		}
	}
	for range 3 {
		if rec, err := r.Next(); rec != nil || !errors.Is(err, io.EOF) {
			t.Errorf("Next after the end: %v, %v", rec, err)
		}
		if n, err := r.Read(make([]byte, 8)); n != 0 || err != io.EOF { //nolint:errorlint // io.Reader's contract: io.EOF itself, unwrapped (callers compare with ==)
			t.Errorf("Read after the end: %d, %v", n, err)
		}
	}

	// Part of a block, then the next record.
	r = m.Records(1)
	if _, err := r.Next(); err != nil {
		t.Fatal(err)
	}
	b := make([]byte, 50)
	if n, err := r.Read(b); n != 50 || err != nil || !bytes.Equal(b, want[0].content()[:50]) {
		t.Errorf("Read of 50 bytes: %d, %v", n, err)
	}
	if rec, err := r.Next(); err != nil || rec.Kind != tape.KindFilemark {
		t.Errorf("Next after a partial read: %+v, %v", rec, err)
	}

	// An empty partition, and none.
	if rec, err := m.Records(0).Next(); rec != nil || !errors.Is(err, io.EOF) {
		t.Errorf("empty partition: %v, %v", rec, err)
	}
	r = m.Records(2)
	for range 2 {
		if _, err := r.Next(); !errors.Is(err, tape.ErrNoPartition) {
			t.Errorf("partition 2: %v", err)
		}
	}
}

// damage writes b at off into the image file at path.
func damage(t *testing.T, path string, off int64, b []byte) {
	t.Helper()
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if _, err := f.WriteAt(b, off); err != nil {
		t.Fatal(err)
	}
}

func TestRecordReaderTornTail(t *testing.T) {
	m, _ := newCart(t, Options{})
	g := newGen(22, 1)
	a, b, c, d := g.block(700), g.block(900), g.block(1100), g.block(1300)
	mustPut(t, m, a, b)
	if err := m.Sync(); err != nil {
		t.Fatal(err)
	}
	mustPut(t, m, c, d)
	// What a crash could leave: c complete, d cut inside its data, the
	// superblock vouching for a and b only.
	img, err := os.ReadFile(m.path)
	if err != nil {
		t.Fatal(err)
	}
	end := int64(dataStart) + 3*recHeaderSize + 700 + 900 + 1100 + recHeaderSize + 500
	cut := m.path + ".cut"
	if err := os.WriteFile(cut, img[:end], 0o600); err != nil {
		t.Fatal(err)
	}
	n, err := OpenFileReadOnly(cut)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = n.Close() }()
	recs, data, err := walk(t, n, 0)
	if !errors.Is(err, io.EOF) || len(recs) != 3 || !bytes.Equal(data[2], c.content()) {
		t.Fatalf("walk of a torn tail: %d records, %v", len(recs), err)
	}
	if r := n.Recovery()[0]; r.SyncedObjects != 2 || r.Objects != 3 || r.Stop != stopData {
		t.Errorf("recovery %+v", r)
	}
}

func TestRecordReaderDamaged(t *testing.T) {
	g := newGen(23, 1)
	a, b, c := g.block(500), g.block(600), g.block(3<<20+1)
	aOff := int64(dataStart)
	bOff := aOff + recHeaderSize + 500
	cOff := bOff + recHeaderSize + 600
	setup := func(t *testing.T) string {
		m, _ := newCart(t, Options{Capacity: 64 << 20})
		mustPut(t, m, a, b, c)
		if err := m.Close(); err != nil {
			t.Fatal(err)
		}
		return m.path
	}
	openRO := func(t *testing.T, path string) *Image {
		m, err := OpenFileReadOnly(path)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = m.Close() })
		return m
	}

	t.Run("header", func(t *testing.T) {
		path := setup(t)
		damage(t, path, bOff+20, []byte{0x55})
		r := openRO(t, path).Records(0)
		if rec, err := r.Next(); err != nil || rec.Len != 500 {
			t.Fatalf("first record: %+v, %v", rec, err)
		}
		_, err := r.Next()
		if !errors.Is(err, tape.ErrCorrupt) {
			t.Fatalf("Next onto a damaged header: %v", err)
		}
		if _, again := r.Next(); !errors.Is(again, err) {
			t.Errorf("Next again: %v, want %v", again, err)
		}
		if _, rerr := r.Read(make([]byte, 8)); !errors.Is(rerr, err) {
			t.Errorf("Read after the walk ended: %v", rerr)
		}
	})

	t.Run("file cut", func(t *testing.T) {
		path := setup(t)
		if err := os.Truncate(path, cOff+10); err != nil {
			t.Fatal(err)
		}
		recs, _, err := walk(t, openRO(t, path), 0)
		if len(recs) != 2 || !errors.Is(err, tape.ErrCorrupt) {
			t.Errorf("walk of a cut file: %d records, %v", len(recs), err)
		}
	})

	t.Run("data", func(t *testing.T) {
		path := setup(t)
		damage(t, path, bOff+recHeaderSize+99, []byte{0xFF ^ b.content()[99]})
		damage(t, path, cOff+recHeaderSize+2<<20, []byte{0xFF ^ c.content()[2<<20]})
		r := openRO(t, path).Records(0)
		for _, o := range []obj{a, b, c} {
			rec, err := r.Next()
			if err != nil {
				t.Fatal(err) // a bad block does not end the walk
			}
			_, err = io.Copy(io.Discard, r)
			if bad := o != a; bad != errors.Is(err, tape.ErrCorrupt) {
				t.Errorf("object %d: copy: %v", rec.Object, err)
			}
			if _, again := r.Read(make([]byte, 8)); o != a && !errors.Is(again, err) {
				t.Errorf("object %d: Read again: %v, want %v", rec.Object, again, err)
			}
		}
		if _, err := r.Next(); !errors.Is(err, io.EOF) {
			t.Errorf("end: %v", err)
		}
	})
}
