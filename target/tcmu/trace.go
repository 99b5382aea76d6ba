package tcmu

import (
	"errors"
	"hash/crc32"
	"os"
	"slices"
	"sync/atomic"
	"time"

	"github.com/vscsid/vscsid/scsi"
)

// Tracing: a device copies each completed command into every TraceRing
// attached to it (Device.Trace). The ring is preallocated and written by
// the device's loop only; a reader that falls behind loses records (they
// are counted) and never slows the loop. When no ring is attached the
// loop pays one atomic load per command.

// TraceCDB is how many CDB bytes a TraceRecord keeps: every fixed-length
// CDB and the start of a variable-length one (its length is kept).
const TraceCDB = 32

// TraceRecord is one completed command as the device saw it. It holds no
// pointers, so a ring of them is one allocation the collector never
// scans. Times are nanoseconds on the device's clock (TraceRing.Epoch).
type TraceRecord struct {
	Seq uint64 // the device's count of traced commands, from 1: gaps are lost records
	// Seen is when the loop first saw the entry in the ring (the ring
	// carries no arrival time, so this is as early as it can be known),
	// Start when the handler was called, End when it returned. A command
	// that never ran (aborted, bidirectional) has Start == End.
	Seen, Start, End int64
	Tag              uint16         // the ring's cmd_id
	ID               scsi.CommandID // the command in the handler's table
	CDBLen           uint16         // the CDB's length (may exceed TraceCDB)
	CDB              [TraceCDB]byte
	Length           uint32 // data-area bytes of the command
	Written          uint32 // Data-In the handler produced
	Consumed         uint32 // Data-Out the handler read
	Segments         uint32 // data segments (iovecs)
	Seg0Offset       uint32 // the first segment's offset in the data area
	Seg0Length       uint32
	// Unaligned counts the segments whose data-area offset or length is
	// not a multiple of the page size.
	Unaligned uint32
	Status    scsi.Status
	Flags     TraceFlags
	Acted     scsi.Acted // which layer around the unit acted (fault rule, timing model)
	Sense     scsi.Sense // meaningful when Status is CHECK CONDITION
	// Capture rings only (NewCaptureRing): the CRC-32C of the Data-In
	// written and of the Data-Out buffer (all Length bytes, when the
	// handler consumed any); and the Data-Out payload, DataLen bytes at
	// DataOff of what ReadCapture returns (0 without payloads).
	InCRC, OutCRC uint32
	DataOff       uint64
	DataLen       uint32
}

// TraceFlags say how a traced command ended besides its status.
type TraceFlags uint8

// Trace flags.
const (
	TraceAborted  TraceFlags = 1 << iota // a TMR aborted it before it ran
	TraceBidi                            // bidirectional, refused
	TraceReadLen                         // the completion reported READ_LEN
	TraceCaptured                        // InCRC and OutCRC are set (a capture ring)
)

// TraceRing is one reader's view of one device's commands: a fixed ring of
// records, written by the device's loop, read by Read from one other
// goroutine.
type TraceRing struct {
	recs  []TraceRecord
	mask  uint64
	epoch time.Time
	head  atomic.Uint64 // next record the loop writes
	tail  atomic.Uint64 // next record Read returns
	lost  atomic.Uint64

	// Capture rings: digests always, payloads into data (a byte ring of
	// dmask+1 bytes, positions counted from 0 for ever) when payloads.
	capture, payloads bool
	payloadMax        int // the largest payload kept; negative: any
	data              []byte
	dmask             uint64
	dhead, dtail      atomic.Uint64
}

// NewTraceRing returns a ring of n records, n rounded up to a power of two
// (at least 2).
func NewTraceRing(n int) *TraceRing {
	size := uint64(2)
	for size < uint64(n) {
		size <<= 1
	}
	return &TraceRing{recs: make([]TraceRecord, size), mask: size - 1}
}

// NewCaptureRing returns a ring of n records that also keeps digests of
// each command's data and the Data-Out bytes of the commands whose data
// area is at most payloadMax bytes (every command: a negative payloadMax;
// none: 0) in a byte ring of dataBytes (rounded up to a power of two):
// what a recording needs (vscsictl record). A command whose payload does
// not fit is lost like a record that does not.
func NewCaptureRing(n, dataBytes, payloadMax int) *TraceRing {
	r := NewTraceRing(n)
	r.capture, r.payloads, r.payloadMax = true, payloadMax != 0, payloadMax
	if r.payloads {
		size := uint64(4096)
		for size < uint64(dataBytes) {
			size <<= 1
		}
		r.data, r.dmask = make([]byte, size), size-1
	}
	return r
}

// Epoch is the wall-clock time of the device clock's zero: a record's End
// is at Epoch().Add(time.Duration(End)). Set by Device.Trace.
func (r *TraceRing) Epoch() time.Time { return r.epoch }

// Lost is how many records the ring dropped because Read fell behind.
func (r *TraceRing) Lost() uint64 { return r.lost.Load() }

// Read copies the records written since the previous Read into dst, oldest
// first, and returns how many it copied. Only one goroutine may Read.
func (r *TraceRing) Read(dst []TraceRecord) int {
	t, h := r.tail.Load(), r.head.Load()
	n := 0
	for ; t != h && n < len(dst); t++ {
		dst[n] = r.recs[t&r.mask]
		n++
	}
	r.tail.Store(t)
	return n
}

// ReadCapture is Read for a capture ring: it also copies the payloads of
// the records it returns into buf (grown as needed) and sets their
// DataOff to where each payload starts in the returned slice. A capture
// ring is read with ReadCapture only: Read frees no payload space.
func (r *TraceRing) ReadCapture(dst []TraceRecord, buf []byte) (int, []byte) {
	t, h := r.tail.Load(), r.head.Load()
	n := 0
	buf = buf[:0]
	dt := r.dtail.Load()
	for ; t != h && n < len(dst); t++ {
		rec := r.recs[t&r.mask]
		if rec.DataLen > 0 {
			start := len(buf)
			off, n := rec.DataOff&r.dmask, uint64(rec.DataLen)
			first := min(n, r.dmask+1-off)
			buf = append(buf, r.data[off:off+first]...)
			buf = append(buf, r.data[:n-first]...)
			dt = rec.DataOff + uint64(rec.DataLen)
			rec.DataOff = uint64(start)
		}
		dst[n] = rec
		n++
	}
	r.dtail.Store(dt)
	r.tail.Store(t)
	return n, buf
}

// slot is the loop's side: the record the next put will publish, filled
// in place (no copy of the record for the usual single reader); nil and
// counted lost when the ring is full.
func (r *TraceRing) slot() *TraceRecord {
	h := r.head.Load()
	if h-r.tail.Load() > r.mask {
		r.lost.Add(1)
		return nil
	}
	return &r.recs[h&r.mask]
}

// put publishes the record slot returned, which holds the command c,
// with c's Data-Out payload (capture rings with payloads), or counts it
// lost when the payload does not fit.
func (r *TraceRing) put(c *cmdCtx) bool {
	h := r.head.Load()
	rec := &r.recs[h&r.mask]
	rec.Flags &^= TraceCaptured
	if r.capture {
		rec.Flags |= TraceCaptured
	}
	if r.payloads && rec.Consumed > 0 && (r.payloadMax < 0 || rec.Length <= uint32(r.payloadMax)) {
		n := uint64(rec.Length)
		dh := r.dhead.Load()
		if n > r.dmask+1-(dh-r.dtail.Load()) {
			r.lost.Add(1)
			return false
		}
		at := dh
		c.buf.Scan(0, int(n), func(p []byte) {
			for len(p) > 0 {
				k := copy(r.data[at&r.dmask:], p)
				p, at = p[k:], at+uint64(k)
			}
		})
		rec.DataOff, rec.DataLen = dh, uint32(n)
		r.dhead.Store(dh + n)
	}
	r.head.Store(h + 1)
	return true
}

// crc32c is the Castagnoli table: hardware CRC on amd64 and arm64.
var crc32c = crc32.MakeTable(crc32.Castagnoli)

// digests sets rec's InCRC and OutCRC from c's buffer.
func digests(rec *TraceRecord, c *cmdCtx) {
	var in, out uint32
	if w := c.buf.Written(); w > 0 {
		c.buf.Scan(0, w, func(p []byte) { in = crc32.Update(in, crc32c, p) })
	}
	if c.buf.Consumed() > 0 {
		c.buf.Scan(0, c.buf.Len(), func(p []byte) { out = crc32.Update(out, crc32c, p) })
	}
	rec.InCRC, rec.OutCRC = in, out
	rec.Flags |= TraceCaptured
}

// tracers is the set of rings attached to a device. It is replaced, never
// changed, so the loop reads it with one atomic load. capture: one of
// them is a capture ring.
type tracers struct {
	rings   []*TraceRing
	capture bool
}

func newTracers(rings []*TraceRing) *tracers {
	t := &tracers{rings: rings}
	for _, r := range rings {
		t.capture = t.capture || r.capture
	}
	return t
}

// ErrTraceAttached is returned by Trace for a ring already attached.
var ErrTraceAttached = errors.New("trace ring already attached")

// Trace attaches r to d: every command d completes from now on is copied
// into it. The returned function detaches it; it may be called more than
// once. Several rings may be attached to a device, one ring to one device
// only.
func (d *Device) Trace(r *TraceRing) (detach func(), err error) {
	d.traceMu.Lock()
	defer d.traceMu.Unlock()
	if r.epoch != (time.Time{}) {
		return nil, ErrTraceAttached
	}
	r.epoch = d.epoch
	var rings []*TraceRing
	if t := d.tracers.Load(); t != nil {
		rings = slices.Clone(t.rings)
	}
	d.tracers.Store(newTracers(append(rings, r)))
	return func() {
		d.traceMu.Lock()
		defer d.traceMu.Unlock()
		t := d.tracers.Load()
		if t == nil || !slices.Contains(t.rings, r) {
			return
		}
		rest := slices.DeleteFunc(slices.Clone(t.rings), func(x *TraceRing) bool { return x == r })
		if len(rest) == 0 {
			d.tracers.Store(nil)
			return
		}
		d.tracers.Store(newTracers(rest))
	}, nil
}

// pageSize is the alignment Unaligned counts against.
var pageSize = uint32(os.Getpagesize())

// trace copies the completed command c into every ring of t: built in
// the first ring's slot, copied to the others'.
func (d *Device) trace(t *tracers, c *cmdCtx, status, uflags uint8) {
	d.traceSeq++
	var rec *TraceRecord
	first := 0
	for ; first < len(t.rings) && rec == nil; first++ {
		if rec = t.rings[first].slot(); rec == nil {
			d.st.traceLost.Add(1)
		}
	}
	if rec == nil {
		return
	}
	// Field by field: a composite literal would be built aside and
	// copied into the ring.
	*rec = TraceRecord{}
	rec.Seq = d.traceSeq
	rec.Seen = c.seen
	rec.Start = c.end - c.dur
	rec.End = c.end
	rec.Tag = c.id
	rec.ID = d.commandID(c)
	rec.CDBLen = uint16(c.cdbLen)
	rec.Length = uint32(c.buf.Len())
	rec.Written = uint32(c.buf.Written())
	rec.Consumed = uint32(c.buf.Consumed())
	rec.Segments = uint32(len(c.segs))
	rec.Status = scsi.Status(status)
	rec.Acted = c.cmd.Acted
	copy(rec.CDB[:], c.cdb[:c.cdbLen])
	if len(c.segs) > 0 {
		rec.Seg0Offset, rec.Seg0Length = uint32(c.offs[0]), uint32(len(c.segs[0]))
	}
	for i, s := range c.segs {
		if uint32(c.offs[i])%pageSize != 0 || uint32(len(s))%pageSize != 0 {
			rec.Unaligned++
		}
	}
	switch {
	case c.aborted:
		rec.Flags |= TraceAborted
	case c.bidi:
		rec.Flags |= TraceBidi
	}
	if uflags&UFlagReadLen != 0 {
		rec.Flags |= TraceReadLen
	}
	if rec.Status == scsi.StatusCheckCondition {
		rec.Sense = c.resp.Sense
	}
	if c.end == 0 { // never ran
		rec.End = d.now()
		rec.Start = rec.End
	}
	if rec.Seen == 0 || rec.Seen > rec.Start {
		rec.Seen = rec.Start
	}
	if t.capture {
		digests(rec, c)
	}
	for _, r := range t.rings[first:] {
		if s := r.slot(); s != nil {
			*s = *rec
			if r.put(c) {
				continue
			}
		}
		d.st.traceLost.Add(1)
	}
	if !t.rings[first-1].put(c) {
		d.st.traceLost.Add(1)
	}
}

// The scan marks tell a traced command when the loop first saw it: each
// scan that found new entries while tracing pushes the ring offset it
// scanned up to and the time; step pops the marks a loaded command is
// past. They are kept only while tracing (Device.tracing).
type scanMark struct {
	end uint32
	at  int64
}

const scanMarks = 64

// markScan records that the entries before head were seen at now.
func (d *Device) markScan(head uint32) {
	at := d.now()
	if d.marks.n == scanMarks { // full: the newest mark covers these too
		d.marks.buf[(d.marks.first+d.marks.n-1)%scanMarks].end = head
		return
	}
	d.marks.buf[(d.marks.first+d.marks.n)%scanMarks] = scanMark{end: head, at: at}
	d.marks.n++
}

// seenAt returns when the entry at pos was first seen (0: not known), and
// drops the marks of entries before it.
func (d *Device) seenAt(pos uint32) int64 {
	ahead := d.r.used(pos, d.scanPos)
	for d.marks.n > 0 {
		m := d.marks.buf[d.marks.first]
		if dist := d.r.used(pos, m.end); dist != 0 && dist <= ahead {
			return m.at
		}
		d.marks.first = (d.marks.first + 1) % scanMarks
		d.marks.n--
	}
	return 0
}
