package scsi

import (
	"errors"
	"io"
)

// A Command is one SCSI command as a Handler receives it.
//
// The CDB and the Data buffer point into memory owned by the transport
// (for TCMU, the kernel's shared data area); they are valid only until the
// Handler returns and must not be retained.
type Command struct {
	CDB  CDB     // the command descriptor block, length as the initiator sent it
	Data *Buffer // never nil; Len() == 0 for commands without data
	// Acted is set by the layers around a unit that changed the
	// command's outcome or timing (fault injection), for traces; the
	// transport clears it for each command.
	Acted Acted
}

// Acted says which layers acted on a command.
type Acted uint8

// What can act on a command besides its unit.
const (
	ActedFault  Acted = 1 << iota // a fault rule injected a response, a delay or a post-action
	ActedTiming                   // the timing model delayed it
)

// A Response is the outcome of one Command. The zero value is GOOD status.
type Response struct {
	Status Status // zero value is Good
	Sense  Sense  // meaningful only when Status == CheckCondition
}

// Good is the successful response.
var Good = Response{}

// CheckCondition returns a CHECK CONDITION response carrying s.
func CheckCondition(s Sense) Response {
	return Response{Status: StatusCheckCondition, Sense: s}
}

// Buffer is a scatter/gather view over a command's data segments (for TCMU,
// the iovecs of one ring entry). A Handler reads Data-Out from it with Read
// (or Discard) and writes Data-In with Write, WriteZeros or WriteFromAt.
// The two directions have independent cursors.
//
// Written reports how many Data-In bytes were produced; the transport uses it
// to report a short read (TCMU READ_LEN), so a Handler never has to pad.
//
// A Buffer is reused from command to command by its owner (Reset) and never
// allocates after its segment table has grown to the largest iovec count seen.
type Buffer struct {
	segs    [][]byte
	size    int
	rseg    int // Data-Out cursor: segment index
	roff    int // and offset inside it
	nread   int
	wseg    int // Data-In cursor
	woff    int
	written int
	zp      *ZeroPages // nil unless ResetTracked
	offs    []int      // data-area offset of each segment, with zp
	prefix  [][]byte   // ResetPrefix's segment table, reused
}

// NewBuffer returns a Buffer over the given segments.
func NewBuffer(segs ...[]byte) *Buffer {
	b := &Buffer{}
	b.Reset(segs)
	return b
}

// Reset points b at new segments and rewinds both cursors. The slice segs is
// retained (not copied) until the next Reset.
func (b *Buffer) Reset(segs [][]byte) {
	b.segs = segs
	b.size = 0
	for _, s := range segs {
		b.size += len(s)
	}
	b.rseg, b.roff, b.nread = 0, 0, 0
	b.wseg, b.woff, b.written = 0, 0, 0
	b.zp, b.offs = nil, nil
}

// ResetTracked is Reset for segments of a data area whose zero pages z
// records: offs[i] is the data-area offset of segs[i]. Zero fills then
// skip the pages z knows to be zero, and the transport calls Settle when
// the handler returns. offs is retained like segs.
func (b *Buffer) ResetTracked(segs [][]byte, offs []int, z *ZeroPages) {
	b.Reset(segs)
	b.zp, b.offs = z, offs
}

// ResetPrefix points b at the first n bytes of src's segments (the same
// memory, not a copy) with both cursors rewound: a command run on part of
// another's data (a fault rule's prefix transfer). b's own segment table
// is reused, so it allocates only while growing to the most segments seen.
// b does not track zero pages; src's owner settles src.
func (b *Buffer) ResetPrefix(src *Buffer, n int) {
	t := b.prefix[:0]
	for _, s := range src.segs {
		if n <= 0 {
			break
		}
		k := min(len(s), n)
		t = append(t, s[:k])
		n -= k
	}
	b.prefix = t
	b.Reset(t)
}

// Settle tells the buffer's ZeroPages what the command did to its pages:
// unless the handler wrote Data-In and consumed no Data-Out, every page of
// the command is forgotten, as the kernel may have copied Data-Out into
// it. The transport calls it once the handler has returned, before the
// command completes and its data blocks can be reused. Without tracking it
// does nothing.
func (b *Buffer) Settle() {
	if b.zp == nil || (b.nread == 0 && b.written > 0) {
		return
	}
	for i, s := range b.segs {
		b.zp.forget(b.offs[i], len(s))
	}
}

// dirty forgets the tracked pages under the Data-In bytes seg[off:off+n]
// of segment i.
func (b *Buffer) dirty(i, off, n int) {
	if b.zp != nil {
		b.zp.forget(b.offs[i]+off, n)
	}
}

// Len is the total size of the buffer: the initiator's transfer length.
func (b *Buffer) Len() int {
	if b == nil {
		return 0
	}
	return b.size
}

// Segments is the number of data segments (iovecs) the buffer spans.
func (b *Buffer) Segments() int {
	if b == nil {
		return 0
	}
	return len(b.segs)
}

// Scan calls fn with the bytes [off, off+n) of the buffer, segment piece
// by segment piece, whatever the cursors say; it stops at the end of the
// buffer. Handlers use it to check Data-Out before consuming it, or to
// checksum Data-In they wrote, without a copy. fn must not modify p (a
// write through it would bypass ZeroPages).
func (b *Buffer) Scan(off, n int, fn func(p []byte)) {
	for _, s := range b.segs {
		if n <= 0 {
			return
		}
		if off >= len(s) {
			off -= len(s)
			continue
		}
		p := s[off:min(len(s), off+n)]
		fn(p)
		n -= len(p)
		off = 0
	}
}

// Written is the number of Data-In bytes written so far.
func (b *Buffer) Written() int { return b.written }

// Consumed is the number of Data-Out bytes read (or discarded) so far.
func (b *Buffer) Consumed() int { return b.nread }

// Read copies Data-Out bytes into p. It returns io.EOF at the end.
func (b *Buffer) Read(p []byte) (int, error) {
	n := 0
	for n < len(p) && b.rseg < len(b.segs) {
		seg := b.segs[b.rseg][b.roff:]
		c := copy(p[n:], seg)
		n += c
		b.roff += c
		if b.roff == len(b.segs[b.rseg]) {
			b.rseg++
			b.roff = 0
		}
	}
	b.nread += n
	if n == 0 && len(p) > 0 {
		return 0, io.EOF
	}
	return n, nil
}

// Discard skips up to n Data-Out bytes, as a fake_rw WRITE does, and returns
// how many were skipped.
func (b *Buffer) Discard(n int) int {
	done := 0
	for done < n && b.rseg < len(b.segs) {
		left := len(b.segs[b.rseg]) - b.roff
		c := min(left, n-done)
		done += c
		b.roff += c
		if b.roff == len(b.segs[b.rseg]) {
			b.rseg++
			b.roff = 0
		}
	}
	b.nread += done
	return done
}

// ErrShortBuffer is returned by Write when the initiator's buffer is full.
var ErrShortBuffer = errors.New("scsi: data-in buffer full")

// Write copies p into the Data-In segments. If p does not fit, it writes what
// fits and returns ErrShortBuffer (allocation-length truncation is normal in
// SCSI, so callers that truncate on purpose ignore it).
func (b *Buffer) Write(p []byte) (int, error) {
	n := 0
	for n < len(p) && b.wseg < len(b.segs) {
		seg := b.segs[b.wseg][b.woff:]
		c := copy(seg, p[n:])
		b.dirty(b.wseg, b.woff, c)
		n += c
		b.woff += c
		if b.woff == len(b.segs[b.wseg]) {
			b.wseg++
			b.woff = 0
		}
	}
	b.written += n
	if n < len(p) {
		return n, ErrShortBuffer
	}
	return n, nil
}

// WriteZeros writes up to n zero bytes of Data-In and returns how many fit.
// With tracking (ResetTracked) it skips the pages known to be zero already.
func (b *Buffer) WriteZeros(n int) int {
	done := 0
	for done < n && b.wseg < len(b.segs) {
		seg := b.segs[b.wseg][b.woff:]
		c := min(len(seg), n-done)
		if b.zp != nil {
			b.zp.fill(seg[:c], b.offs[b.wseg]+b.woff)
		} else {
			clear(seg[:c])
		}
		done += c
		b.woff += c
		if b.woff == len(b.segs[b.wseg]) {
			b.wseg++
			b.woff = 0
		}
	}
	b.written += done
	return done
}

// WriteFromAt copies n bytes read from r at offset off into the Data-In
// segments, segment by segment, without an intermediate buffer. It stops at
// the end of the buffer and returns the bytes copied and the first error of r.
func (b *Buffer) WriteFromAt(r io.ReaderAt, off int64, n int) (int, error) {
	done := 0
	for done < n && b.wseg < len(b.segs) {
		seg := b.segs[b.wseg][b.woff:]
		c := min(len(seg), n-done)
		b.dirty(b.wseg, b.woff, c) // before: ReadAt may write some of it and fail
		m, err := r.ReadAt(seg[:c], off+int64(done))
		done += m
		b.written += m
		b.woff += m
		if b.woff == len(b.segs[b.wseg]) {
			b.wseg++
			b.woff = 0
		}
		if err != nil && (!errors.Is(err, io.EOF) || m != c) {
			return done, err
		}
	}
	return done, nil
}

// ReadToAt copies n Data-Out bytes into w at offset off, segment by segment.
func (b *Buffer) ReadToAt(w io.WriterAt, off int64, n int) (int, error) {
	done := 0
	for done < n && b.rseg < len(b.segs) {
		seg := b.segs[b.rseg][b.roff:]
		c := min(len(seg), n-done)
		m, err := w.WriteAt(seg[:c], off+int64(done))
		done += m
		b.nread += m
		b.roff += m
		if b.roff == len(b.segs[b.rseg]) {
			b.rseg++
			b.roff = 0
		}
		if err != nil {
			return done, err
		}
	}
	return done, nil
}

// WriteTo writes the remaining Data-Out bytes to w segment by segment
// (io.WriterTo), so io.Copy and tape images move data without a copy buffer.
func (b *Buffer) WriteTo(w io.Writer) (int64, error) {
	var total int64
	for b.rseg < len(b.segs) {
		seg := b.segs[b.rseg][b.roff:]
		m, err := w.Write(seg)
		total += int64(m)
		b.nread += m
		b.roff += m
		if b.roff == len(b.segs[b.rseg]) {
			b.rseg++
			b.roff = 0
		}
		if err != nil {
			return total, err
		}
	}
	return total, nil
}
