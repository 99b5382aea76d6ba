package disk

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sync/atomic"
)

// A Backend holds the disk's data, addressed in bytes. The Disk maps LBAs
// onto it (and wraps them in store mode); a Backend never sees SCSI.
type Backend interface {
	io.ReaderAt
	io.WriterAt
}

// A Flusher is a Backend with a volatile cache: SYNCHRONIZE CACHE, a
// WRITE with FUA and START STOP UNIT (stop) call Flush.
type Flusher interface {
	Flush() error
}

// A Zeroer is a Backend that can deallocate or zero a byte range cheaply
// (UNMAP, WRITE SAME with UNMAP or NDOB). Reads of the range return zeros
// afterwards.
type Zeroer interface {
	Zero(off, n int64) error
}

// FakeRW is the fake_rw backend: reads return zeros and writes are
// discarded. The Disk short-cuts it (Buffer.WriteZeros and Buffer.Discard
// instead of per-segment calls); the methods exist so that FakeRW is a
// complete Backend on its own.
type FakeRW struct{}

// ReadAt zero-fills p.
func (FakeRW) ReadAt(p []byte, _ int64) (int, error) {
	clear(p)
	return len(p), nil
}

// WriteAt discards p.
func (FakeRW) WriteAt(p []byte, _ int64) (int, error) { return len(p), nil }

// Zero does nothing: FakeRW always reads zeros.
func (FakeRW) Zero(_, _ int64) error { return nil }

// storeChunkShift sets the allocation unit of the RAM store: 64 KiB, so a
// 4 KiB write costs at most 64 KiB of memory, and the chunk table of the
// largest store (64 GiB) is 8 MiB of pointers.
const (
	storeChunkShift = 16
	storeChunkSize  = 1 << storeChunkShift
)

type storeChunk [storeChunkSize]byte

// ErrStoreRange is returned for an access outside the store; the Disk never
// makes one, so it indicates a bug.
var ErrStoreRange = errors.New("disk: access outside the store")

// Store is a RAM backend of fixed size whose memory is allocated in 64 KiB
// chunks on first write, so an unwritten store costs only its chunk table.
// Never-written and zeroed ranges read as zeros; zeroing a whole chunk
// frees it. The Disk wraps LBAs modulo the store size.
//
// A Store is not safe for concurrent reads and writes (the Disk serialises
// commands), but Allocated may be called from any goroutine.
type Store struct {
	size      int64
	chunks    []*storeChunk
	allocated atomic.Int64
}

// NewStore returns an empty store of size bytes.
func NewStore(size int64) (*Store, error) { return newStore(size, size) }

// newStore returns an empty store of size bytes whose chunk table has room
// for limit bytes, so that resize up to limit allocates nothing.
func newStore(size, limit int64) (*Store, error) {
	if size <= 0 || size > MaxStoreSize {
		return nil, fmt.Errorf("store size %d: out of range 1..%d", size, int64(MaxStoreSize))
	}
	limit = min(max(limit, size), MaxStoreSize)
	n := (size + storeChunkSize - 1) >> storeChunkShift
	return &Store{size: size, chunks: make([]*storeChunk, n, (limit+storeChunkSize-1)>>storeChunkShift)}, nil
}

// resize makes the store n bytes, 0 < n <= the limit given to newStore.
// Shrinking frees what lies past n (a later growth reads zeros there).
// Like ReadAt and WriteAt, it must not run concurrently with them.
func (s *Store) resize(n int64) {
	if n < s.size {
		_ = s.Zero(n, s.size-n) // in range: cannot fail
	}
	s.chunks = s.chunks[:(n+storeChunkSize-1)>>storeChunkShift]
	s.size = n
}

// Size is the store size in bytes.
func (s *Store) Size() int64 { return s.size }

// Allocated is the memory held by written chunks, in bytes.
func (s *Store) Allocated() int64 { return s.allocated.Load() }

func (s *Store) check(off int64, n int) error {
	if off < 0 || off > s.size || int64(n) > s.size-off {
		return ErrStoreRange
	}
	return nil
}

// ReadAt copies store bytes into p; never-written bytes read as zeros.
func (s *Store) ReadAt(p []byte, off int64) (int, error) {
	if err := s.check(off, len(p)); err != nil {
		return 0, err
	}
	done := 0
	for done < len(p) {
		pos := off + int64(done)
		c := s.chunks[pos>>storeChunkShift]
		in := int(pos & (storeChunkSize - 1))
		n := min(len(p)-done, storeChunkSize-in)
		if c == nil {
			clear(p[done : done+n])
		} else {
			copy(p[done:done+n], c[in:in+n])
		}
		done += n
	}
	return done, nil
}

// WriteAt copies p into the store, allocating chunks on first write.
func (s *Store) WriteAt(p []byte, off int64) (int, error) {
	if err := s.check(off, len(p)); err != nil {
		return 0, err
	}
	done := 0
	for done < len(p) {
		pos := off + int64(done)
		i := pos >> storeChunkShift
		c := s.chunks[i]
		if c == nil {
			c = new(storeChunk)
			s.chunks[i] = c
			s.allocated.Add(storeChunkSize)
		}
		in := int(pos & (storeChunkSize - 1))
		n := copy(c[in:], p[done:])
		done += n
	}
	return done, nil
}

// Mapped reports whether the byte at off is in an allocated chunk: one
// written since it was last freed. off must be within the store.
func (s *Store) Mapped(off int64) bool { return s.chunks[off>>storeChunkShift] != nil }

// Zero makes [off, off+n) read as zeros, freeing the chunks it covers
// entirely and those it leaves all zero.
func (s *Store) Zero(off, n int64) error {
	if n < 0 || off < 0 || off > s.size || n > s.size-off {
		return ErrStoreRange
	}
	end := off + n
	for pos := off; pos < end; {
		i := pos >> storeChunkShift
		start := i << storeChunkShift
		stop := min(start+storeChunkSize, end)
		c := s.chunks[i]
		switch {
		case c == nil:
		case pos == start && (stop == start+storeChunkSize || stop == s.size):
			s.chunks[i] = nil
			s.allocated.Add(-storeChunkSize)
		default:
			clear(c[pos-start : stop-start])
			if allZero(c[:min(storeChunkSize, s.size-start)]) {
				s.chunks[i] = nil
				s.allocated.Add(-storeChunkSize)
			}
		}
		pos = stop
	}
	return nil
}

var zeroChunk storeChunk

// allZero reports whether p (at most a chunk) is all zero bytes.
func allZero(p []byte) bool { return bytes.Equal(p, zeroChunk[:len(p)]) }
