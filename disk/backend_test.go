package disk_test

import (
	"bytes"
	"errors"
	"math/rand/v2"
	"testing"

	"github.com/vscsid/vscsid/disk"
)

func TestStoreLazyAllocation(t *testing.T) {
	s, err := disk.NewStore(64 << 20)
	if err != nil {
		t.Fatal(err)
	}
	if s.Allocated() != 0 {
		t.Fatalf("new store allocated %d bytes", s.Allocated())
	}
	// Never-written bytes read as zeros, even into a dirty buffer.
	p := bytes.Repeat([]byte{0xa5}, 8192)
	if n, err := s.ReadAt(p, 1<<20); err != nil || n != len(p) {
		t.Fatalf("ReadAt = %d, %v", n, err)
	}
	if !bytes.Equal(p, make([]byte, len(p))) {
		t.Fatal("unwritten store did not read as zeros")
	}
	// A 4 KiB write straddling a 64 KiB chunk boundary allocates two chunks.
	w := bytes.Repeat([]byte{0x5a}, 4096)
	off := int64(64<<10 - 2048)
	if n, err := s.WriteAt(w, off); err != nil || n != len(w) {
		t.Fatalf("WriteAt = %d, %v", n, err)
	}
	if got := s.Allocated(); got != 128<<10 {
		t.Fatalf("Allocated = %d, want 128 KiB", got)
	}
	r := make([]byte, 8192)
	if _, err := s.ReadAt(r, off-2048); err != nil {
		t.Fatal(err)
	}
	want := append(append(make([]byte, 2048), w...), make([]byte, 2048)...)
	if !bytes.Equal(r, want) {
		t.Fatal("read-back across the chunk boundary differs")
	}
}

func TestStoreZero(t *testing.T) {
	s, _ := disk.NewStore(256 << 10) // 4 chunks
	all := bytes.Repeat([]byte{1}, 256<<10)
	if _, err := s.WriteAt(all, 0); err != nil {
		t.Fatal(err)
	}
	if s.Allocated() != 256<<10 {
		t.Fatalf("Allocated = %d", s.Allocated())
	}
	// Zero [1000, 64K+1000): chunk 0 partly (cleared, kept), chunk 1 partly.
	if err := s.Zero(1000, 64<<10); err != nil {
		t.Fatal(err)
	}
	if s.Allocated() != 256<<10 {
		t.Fatalf("partial zero freed memory: %d", s.Allocated())
	}
	// Zero chunks 2 and 3 entirely: freed.
	if err := s.Zero(128<<10, 128<<10); err != nil {
		t.Fatal(err)
	}
	if s.Allocated() != 128<<10 {
		t.Fatalf("Allocated after freeing 2 chunks = %d, want 128 KiB", s.Allocated())
	}
	got := make([]byte, 256<<10)
	if _, err := s.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	for i, b := range got {
		want := byte(1)
		if (i >= 1000 && i < 1000+64<<10) || i >= 128<<10 {
			want = 0
		}
		if b != want {
			t.Fatalf("byte %d = %d, want %d", i, b, want)
		}
	}
}

func TestStoreOddSizeLastChunk(t *testing.T) {
	// A store whose size is not a chunk multiple: zeroing through its end
	// frees the partial last chunk.
	s, _ := disk.NewStore(64<<10 + 512)
	if _, err := s.WriteAt([]byte{1}, 64<<10); err != nil {
		t.Fatal(err)
	}
	if s.Allocated() != 64<<10 {
		t.Fatalf("Allocated = %d", s.Allocated())
	}
	if err := s.Zero(64<<10, 512); err != nil {
		t.Fatal(err)
	}
	if s.Allocated() != 0 {
		t.Fatalf("Allocated = %d after zeroing the tail chunk", s.Allocated())
	}
}

func TestStoreBounds(t *testing.T) {
	s, _ := disk.NewStore(4096)
	for _, tc := range []struct {
		off int64
		n   int
	}{{-1, 1}, {4096, 1}, {4000, 97}, {1 << 62, 1}} {
		if _, err := s.ReadAt(make([]byte, tc.n), tc.off); !errors.Is(err, disk.ErrStoreRange) {
			t.Errorf("ReadAt(%d, %d) = %v, want ErrStoreRange", tc.off, tc.n, err)
		}
		if _, err := s.WriteAt(make([]byte, tc.n), tc.off); !errors.Is(err, disk.ErrStoreRange) {
			t.Errorf("WriteAt(%d, %d) = %v, want ErrStoreRange", tc.off, tc.n, err)
		}
		if err := s.Zero(tc.off, int64(tc.n)); !errors.Is(err, disk.ErrStoreRange) {
			t.Errorf("Zero(%d, %d) = %v, want ErrStoreRange", tc.off, tc.n, err)
		}
	}
	if _, err := s.ReadAt(nil, 4096); err != nil {
		t.Errorf("empty read at the end: %v", err)
	}
	for _, size := range []int64{0, -1, disk.MaxStoreSize + 1} {
		if _, err := disk.NewStore(size); err == nil {
			t.Errorf("NewStore(%d) succeeded", size)
		}
	}
}

func TestStoreRandomAgainstModel(t *testing.T) {
	const size = 1<<20 + 4096
	s, _ := disk.NewStore(size)
	model := make([]byte, size)
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		off := rng.Int64N(size)
		n := rng.Int64N(min(size-off, 200<<10) + 1)
		switch rng.IntN(3) {
		case 0:
			p := make([]byte, n)
			for i := range p {
				p[i] = byte(rng.Uint32())
			}
			if _, err := s.WriteAt(p, off); err != nil {
				t.Fatal(err)
			}
			copy(model[off:], p)
		case 1:
			if err := s.Zero(off, n); err != nil {
				t.Fatal(err)
			}
			clear(model[off : off+n])
		case 2:
			p := make([]byte, n)
			if _, err := s.ReadAt(p, off); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(p, model[off:off+n]) {
				t.Fatalf("read %d@%d differs from model", n, off)
			}
		}
	}
	got := make([]byte, size)
	if _, err := s.ReadAt(got, 0); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got, model) {
		t.Fatal("final store differs from model")
	}
}

func TestFakeRW(t *testing.T) {
	var b disk.Backend = disk.FakeRW{}
	p := bytes.Repeat([]byte{0xff}, 100)
	if n, err := b.ReadAt(p, 12345); n != 100 || err != nil || !bytes.Equal(p, make([]byte, 100)) {
		t.Fatalf("FakeRW.ReadAt = %d, %v, %x", n, err, p[:4])
	}
	if n, err := b.WriteAt(p, 1<<40); n != 100 || err != nil {
		t.Fatalf("FakeRW.WriteAt = %d, %v", n, err)
	}
}
