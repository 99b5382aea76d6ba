package cartridge

import (
	"bytes"
	crand "crypto/rand"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"time"

	"github.com/vscsid/vscsid/tape"
)

// Image is a cartridge image file opened for a drive (Open) or for
// inspection (OpenReadOnly). It implements tape.Medium.
//
// An Image is used by one goroutine at a time and is not safe for
// concurrent use. It holds a flock on the file while open, so a second
// Open of the same file, from this or another process, fails with ErrInUse.
//
// Block data is read with ReadAt straight from the file and written with one
// pwrite per block through a reused buffer: reading or writing a block in
// steady state does not allocate.
type Image struct {
	f        *os.File
	path     string
	readOnly bool // opened read-only: every write fails with ErrWriteProtected
	closed   bool

	sb    superblock // state as the next superblock write will record it
	slot  int        // slot holding the newest valid superblock
	parts []partition
	mam   map[mamKey][]byte
	info  tape.MediumInfo // cached for Info; rebuilt by Format

	part  int // current partition
	cur   pos // current position in it
	hdr   recHeader
	hdrOK bool // hdr is the header of the record at cur

	rbuf    []byte // read buffer, allocated by the first read of a block in pieces
	rbufOK  bool   // rbuf holds the verified data of the block at cur
	crc     uint32 // running CRC of a large block's data, for reads in order
	crcNext int64  // data offset the running CRC has reached

	dirty    bool // records written since the last fdatasync
	sbDirty  bool // superblock fields changed since the last superblock write
	vcrFresh bool // the volume change reference was bumped and not read since

	rng     *rand.ChaCha8
	scratch [recHeaderSize]byte
	wbuf    []byte // record write buffer, allocated by the first write
	sbuf    []byte // superblock buffer

	recovery []Recovery

	// Test seams for the crash tests, which simulate power loss with file
	// snapshots: afterSync runs after every fdatasync (the durable state),
	// and noSync skips the fdatasync itself, which only costs time there.
	afterSync func()
	noSync    bool
}

// pos is a position in a partition: before object obj, whose record starts
// at off (relative to the partition's region), with the numbering and chain
// values a record written there must carry.
type pos struct {
	off     int64
	obj     uint64
	file    uint64
	set     uint64
	prevID  uint64 // id of the record before (the partition's bop id at BOP)
	prevLen uint32 // size of the record before (0 at BOP)
}

type partition struct {
	start    int64 // file offset of the region
	capacity int64
	ew       int64
	bop      uint64
	last     bool // the region is the last in the file: shrink with ftruncate
	eod      pos  // end of data
	synced   pos  // end of data as the superblock on disk records it
	fileEnd  int64
	// tailDirty: bytes after eod may hold stale or torn records; the next
	// write there cleans them (ftruncate, or EOD marker + hole punch).
	tailDirty bool
	idx       index
}

func (p *partition) bopPos() pos { return pos{prevID: p.bop} }

// Recovery reports what opening found after the last sync point of a
// partition.
type Recovery struct {
	Partition int `json:"partition"`
	// SyncedObjects is the object count the superblock vouched for.
	SyncedObjects uint64 `json:"synced_objects"`
	// Objects is the object count after recovery: SyncedObjects plus the
	// records written after the last sync that were found complete.
	Objects uint64 `json:"objects"`
	// Stop says why the walk past the sync point stopped.
	Stop string `json:"stop"`
	// TailBytes counts bytes after the recovered end of data (last region
	// in the file only; -1 when unknown). They are discarded by the next
	// write, never by opening.
	TailBytes int64 `json:"tail_bytes"`
}

// Clean reports whether the partition ended exactly where it was synced.
func (r Recovery) Clean() bool {
	return r.Objects == r.SyncedObjects && r.TailBytes <= 0 && (r.Stop == stopEOF || r.Stop == stopEODMarker || r.Stop == stopBlank)
}

// Reasons a recovery walk stops.
const (
	stopEOF       = "end of file"
	stopBlank     = "blank"
	stopEODMarker = "end-of-data marker"
	stopFull      = "end of partition"
	stopHeader    = "invalid record header"
	stopChain     = "record not linked to the previous one"
	stopData      = "data checksum mismatch"
)

// Errors of the image store besides the tape.Err* sentinels.
var (
	ErrInUse = errors.New("cartridge: in use")
	// ErrClosed is an image used after Close; it matches tape.ErrClosed.
	ErrClosed error = &tape.ClosedError{Object: "cartridge: image"}
)

// corrupt returns an error matching tape.ErrCorrupt.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", tape.ErrCorrupt, fmt.Sprintf(format, args...))
}

// Open opens the image at path for reading and writing and locks it. A
// file the process may not write is opened read-only and reported as
// write-protected.
func Open(path string) (*Image, error) {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	readOnly := false
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, errReadOnlyFS) {
		f, err = os.Open(path)
		readOnly = true
	}
	if err != nil {
		return nil, err
	}
	return open(f, path, readOnly, true)
}

// OpenReadOnly opens the image at path for inspection with a shared lock:
// it fails with ErrInUse while a drive has the cartridge loaded. Nothing is
// ever written to the file.
func OpenReadOnly(path string) (*Image, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	return open(f, path, true, false)
}

func open(f *os.File, path string, readOnly, exclusive bool) (*Image, error) {
	if err := lockFile(f, exclusive); err != nil {
		f.Close()
		if errors.Is(err, errWouldBlock) {
			return nil, fmt.Errorf("%w: %s is locked by another drive or process", ErrInUse, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	m := &Image{f: f, path: path, readOnly: readOnly}
	if err := m.load(); err != nil {
		f.Close() // releases the lock
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return m, nil
}

func (m *Image) load() error {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return err
	}
	m.rng = rand.NewChaCha8(seed)
	st, err := m.f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	size := st.Size()

	// Superblock: the valid slot with the higher sequence number.
	buf := make([]byte, slotSize)
	var best *superblock
	var errs [2]error
	for i := range 2 {
		n, err := m.f.ReadAt(buf, int64(i)*slotSize)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		sb, err := unmarshalSuperblock(buf[:n])
		if err != nil {
			errs[i] = err
			continue
		}
		if best == nil || sb.seq > best.seq {
			best, m.slot = sb, i
		}
	}
	if best == nil {
		return corrupt("no valid header (slot A: %v; slot B: %v)", errs[0], errs[1])
	}
	m.sb = *best
	m.mam, _ = decodeMAM(m.sb.mam) // validated by unmarshalSuperblock
	m.sb.mam = nil

	m.parts = make([]partition, len(m.sb.parts))
	var lastStart int64 = -1
	for i, e := range m.sb.parts {
		p := &m.parts[i]
		p.start, p.capacity, p.ew, p.bop = e.start, e.capacity, e.ew, e.bop
		p.synced = pos{off: e.end, obj: e.objects, file: e.files, set: e.sets, prevID: e.lastID, prevLen: e.lastLen}
		p.idx.init()
		lastStart = max(lastStart, e.start)
	}
	for i := range m.parts {
		p := &m.parts[i]
		p.last = p.start == lastStart
		if p.last {
			p.fileEnd = max(0, size-p.start)
		}
		r, err := m.recover(i)
		if err != nil {
			return err
		}
		m.recovery = append(m.recovery, r)
	}
	m.buildInfo()
	m.setPos(0, m.parts[0].bopPos())
	return nil
}

// recover walks partition i from its synced end of data over the records
// written after the last sync point, checking each header, its link to the
// previous record and its data checksum, and sets the end of data after
// the last good one. It reads; it never writes.
func (m *Image) recover(i int) (Recovery, error) {
	p := &m.parts[i]
	s := p.synced
	r := Recovery{Partition: i, SyncedObjects: s.obj, TailBytes: -1}
	var data []byte
	var h recHeader
	for {
		if s.off+recHeaderSize > p.capacity {
			r.Stop = stopFull
			break
		}
		n, err := m.f.ReadAt(m.scratch[:], p.start+s.off)
		if err != nil && !errors.Is(err, io.EOF) {
			return r, err
		}
		if n == 0 {
			r.Stop = stopEOF
			break
		}
		if n == recHeaderSize && bytes.Count(m.scratch[:], []byte{0}) == recHeaderSize {
			r.Stop = stopBlank
			break
		}
		if n < recHeaderSize || h.parse(m.scratch[:]) != nil {
			r.Stop = stopHeader
			p.tailDirty = true
			break
		}
		if !h.follows(uint8(i), s) {
			r.Stop = stopChain
			p.tailDirty = true
			break
		}
		if h.typ == recEOD {
			r.Stop = stopEODMarker
			break
		}
		if s.off+h.size() > p.capacity {
			r.Stop = stopHeader
			p.tailDirty = true
			break
		}
		if h.length > 0 {
			if data == nil {
				data = make([]byte, 256<<10)
			}
			ok, err := m.checkData(p.start+s.off+recHeaderSize, &h, data)
			if err != nil {
				return r, err
			}
			if !ok {
				r.Stop = stopData
				p.tailDirty = true
				break
			}
		}
		s = s.next(&h)
	}
	p.eod = s
	r.Objects = s.obj
	if p.last {
		r.TailBytes = max(0, p.fileEnd-s.off)
		p.tailDirty = r.TailBytes > 0
	}
	return r, nil
}

// checkData reports whether the data of the record with header h, at file
// offset off, matches its checksum. A short file is a mismatch.
func (m *Image) checkData(off int64, h *recHeader, buf []byte) (bool, error) {
	var crc uint32
	for done := int64(0); done < int64(h.length); {
		n := min(int64(len(buf)), int64(h.length)-done)
		k, err := m.f.ReadAt(buf[:n], off+done)
		if errors.Is(err, io.EOF) || int64(k) < n && err == nil {
			return false, nil
		}
		if err != nil {
			return false, err
		}
		crc = crc32.Update(crc, castagnoli, buf[:n])
		done += n
	}
	return crc == h.dataCRC, nil
}

// follows reports whether h is the record that belongs at position s of
// partition part: same partition, numbering and link to the previous record.
func (h *recHeader) follows(part uint8, s pos) bool {
	return h.part == part && h.obj == s.obj && h.file == s.file && h.set == s.set &&
		h.prev == s.prevID && h.prevLen == s.prevLen
}

// next returns the position after the record h at s.
func (s pos) next(h *recHeader) pos {
	n := pos{off: s.off + h.size(), obj: s.obj + 1, file: s.file, set: s.set, prevID: h.id, prevLen: uint32(h.size())}
	switch h.typ {
	case recFilemark:
		n.file++
	case recSetmark:
		n.set++
	}
	return n
}

func (m *Image) setPos(part int, s pos) {
	m.part, m.cur = part, s
	m.hdrOK = false
	m.rbufOK = false
	m.crcNext = 0
}

// Path returns the file name the image was opened with.
func (m *Image) Path() string { return m.path }

// Recovery returns what opening found after the last sync point, per
// partition.
func (m *Image) Recovery() []Recovery { return append([]Recovery(nil), m.recovery...) }

func (m *Image) checkOpen() error {
	if m.closed {
		return ErrClosed
	}
	return nil
}

func (m *Image) writeProtected() bool {
	return m.readOnly || m.sb.flags&flagWriteProtected != 0
}

func (m *Image) checkWritable() error {
	if m.closed {
		return ErrClosed
	}
	if m.writeProtected() {
		return tape.ErrWriteProtected
	}
	return nil
}

func (m *Image) buildInfo() {
	m.info = tape.MediumInfo{
		Barcode:        m.sb.barcode,
		Density:        m.sb.density,
		WriteProtected: m.writeProtected(),
		WORM:           m.sb.flags&flagWORM != 0,
		Partitions:     len(m.parts),
		Capacity:       make([]int64, len(m.parts)),
		EarlyWarning:   make([]int64, len(m.parts)),
	}
	for i, p := range m.parts {
		m.info.Capacity[i] = p.capacity
		m.info.EarlyWarning[i] = p.ew
	}
}

// Info describes the cartridge. The slices are shared: do not modify them.
func (m *Image) Info() tape.MediumInfo { return m.info }

// Used returns the bytes used in partition part: record headers and data
// up to the end of data.
func (m *Image) Used(part int) int64 {
	if part < 0 || part >= len(m.parts) {
		return 0
	}
	return m.parts[part].eod.off
}

// Pos returns the current position.
func (m *Image) Pos() tape.Position {
	return tape.Position{Partition: m.part, Object: m.cur.obj, File: m.cur.file, Set: m.cur.set}
}

// header returns the header of the record at the current position, which
// must be before the end of data.
func (m *Image) header() (*recHeader, error) {
	if m.hdrOK {
		return &m.hdr, nil
	}
	p := &m.parts[m.part]
	if err := m.readHeader(p, m.cur, &m.hdr); err != nil {
		return nil, err
	}
	m.hdrOK = true
	return &m.hdr, nil
}

// readHeader reads and checks the header of the record at s.
func (m *Image) readHeader(p *partition, s pos, h *recHeader) error {
	if err := m.readScratch(p.start + s.off); err != nil {
		return err
	}
	if h.parse(m.scratch[:]) != nil || !h.follows(uint8(m.part), s) || h.typ == recEOD ||
		s.off+h.size() > p.eod.off {
		return corrupt("partition %d object %d: invalid record header at offset %d", m.part, s.obj, p.start+s.off)
	}
	return nil
}

// readScratch reads the 64 bytes at off into m.scratch. A file that ends
// before is corrupt (the caller expects a record there).
func (m *Image) readScratch(off int64) error {
	n, err := m.f.ReadAt(m.scratch[:], off)
	if n == recHeaderSize {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return corrupt("image file ends inside the record header at offset %d", off)
	}
	return err
}

func kindOf(typ uint8) tape.Kind {
	switch typ {
	case recBlock:
		return tape.KindBlock
	case recFilemark:
		return tape.KindFilemark
	case recSetmark:
		return tape.KindSetmark
	}
	return tape.KindEOD
}

// Peek reports the object at the current position without moving.
func (m *Image) Peek() (tape.Object, error) {
	if err := m.checkOpen(); err != nil {
		return tape.Object{}, err
	}
	if m.cur.off >= m.parts[m.part].eod.off {
		return tape.Object{Kind: tape.KindEOD}, nil
	}
	h, err := m.header()
	if err != nil {
		return tape.Object{}, err
	}
	return tape.Object{Kind: kindOf(h.typ), Len: int(h.length)}, nil
}

// ReadAt reads data of the block at the current position; off is relative
// to the start of the block. Block data is checked against its CRC before
// any of it is returned: a block that does not match fails with an error
// matching tape.ErrCorrupt. (Blocks larger than the read buffer, 1 MiB,
// are checked as they are read in order from offset 0: the call that
// reads the last byte fails.)
//
// The drive reads a block segment by segment (scsi.Buffer.WriteFromAt), and
// TCMU segments can be as small as a page: the first call reads the whole
// block into a reused buffer with one pread and verifies it; the next calls
// copy from there. A call that takes the whole block at once reads
// straight into the caller's slice.
func (m *Image) ReadAt(b []byte, off int64) (int, error) {
	if err := m.checkOpen(); err != nil {
		return 0, err
	}
	if m.cur.off >= m.parts[m.part].eod.off {
		return 0, tape.ErrEndOfData
	}
	h, err := m.header()
	if err != nil {
		return 0, err
	}
	if h.typ != recBlock {
		return 0, errNotBlock
	}
	length := int64(h.length)
	if off < 0 {
		return 0, errors.New("cartridge: negative offset")
	}
	if off >= length {
		return 0, io.EOF
	}
	base := m.parts[m.part].start + m.cur.off + recHeaderSize
	n := min(int64(len(b)), length-off)
	var eof error
	if n < int64(len(b)) {
		eof = io.EOF
	}
	switch {
	case m.rbufOK:
		return copy(b[:n], m.rbuf[off:length]), eof
	case off == 0 && n == length:
		if err := m.pread(b[:n], base); err != nil {
			return 0, err
		}
		if crc32.Checksum(b[:n], castagnoli) != h.dataCRC {
			return 0, m.dataCorrupt()
		}
		return int(n), eof
	case length <= rbufSize:
		if m.rbuf == nil {
			m.rbuf = make([]byte, rbufSize)
		}
		if err := m.pread(m.rbuf[:length], base); err != nil {
			return 0, err
		}
		if crc32.Checksum(m.rbuf[:length], castagnoli) != h.dataCRC {
			return 0, m.dataCorrupt()
		}
		m.rbufOK = true
		return copy(b[:n], m.rbuf[off:length]), eof
	}
	// A block larger than the buffer: straight from the file, with a
	// running CRC over reads in order.
	if err := m.pread(b[:n], base+off); err != nil {
		return 0, err
	}
	if off == 0 {
		m.crc, m.crcNext = 0, 0
	}
	if off == m.crcNext {
		m.crc = crc32.Update(m.crc, castagnoli, b[:n])
		m.crcNext += n
		if m.crcNext == length && m.crc != h.dataCRC {
			m.crcNext = 0
			return int(n), m.dataCorrupt()
		}
	}
	return int(n), eof
}

// rbufSize is the largest block ReadAt buffers (and verifies up front).
const rbufSize = 1 << 20

// pread fills b from the file at off; a file that ends first is corrupt.
func (m *Image) pread(b []byte, off int64) error {
	k, err := m.f.ReadAt(b, off)
	if k == len(b) {
		return nil
	}
	if err == nil || errors.Is(err, io.EOF) {
		return corrupt("partition %d object %d: image file ends inside the block", m.part, m.cur.obj)
	}
	return err
}

func (m *Image) dataCorrupt() error {
	return corrupt("partition %d object %d: block data checksum mismatch", m.part, m.cur.obj)
}

var errNotBlock = errors.New("cartridge: no block at the current position")

// Next moves past the object at the current position.
func (m *Image) Next() error {
	if err := m.checkOpen(); err != nil {
		return err
	}
	p := &m.parts[m.part]
	if m.cur.off >= p.eod.off {
		return tape.ErrEndOfData
	}
	h, err := m.header()
	if err != nil {
		return err
	}
	p.idx.note(m.cur.obj, m.cur.off, h.typ == recFilemark)
	m.setPos(m.part, m.cur.next(h))
	return nil
}

// Prev moves back over the object before the current position and returns
// it.
func (m *Image) Prev() (tape.Object, error) {
	if err := m.checkOpen(); err != nil {
		return tape.Object{}, err
	}
	if m.cur.obj == 0 {
		return tape.Object{}, tape.ErrBeginningOfPart
	}
	p := &m.parts[m.part]
	s := m.cur
	off := s.off - int64(s.prevLen)
	var h recHeader
	if off < 0 {
		return tape.Object{}, corrupt("partition %d object %d: bad previous record length", m.part, s.obj)
	}
	if err := m.readScratch(p.start + off); err != nil {
		return tape.Object{}, err
	}
	if h.parse(m.scratch[:]) != nil || h.part != uint8(m.part) || h.id != s.prevID ||
		h.obj != s.obj-1 || h.size() != int64(s.prevLen) || h.typ == recEOD ||
		h.file+b2u(h.typ == recFilemark) != s.file || h.set+b2u(h.typ == recSetmark) != s.set {
		return tape.Object{}, corrupt("partition %d object %d: invalid record header at offset %d", m.part, s.obj-1, p.start+off)
	}
	p.idx.note(h.obj, off, h.typ == recFilemark)
	m.setPos(m.part, pos{off: off, obj: h.obj, file: h.file, set: h.set, prevID: h.prev, prevLen: h.prevLen})
	m.hdr, m.hdrOK = h, true
	return tape.Object{Kind: kindOf(h.typ), Len: int(h.length)}, nil
}

func b2u(b bool) uint64 {
	if b {
		return 1
	}
	return 0
}

// Locate moves to the position before object obj of partition part. It
// starts from whichever known position is nearest (current position, BOP,
// end of data or an index checkpoint) and walks record headers from there.
func (m *Image) Locate(part int, obj uint64) error {
	if err := m.checkOpen(); err != nil {
		return err
	}
	if part < 0 || part >= len(m.parts) {
		return tape.ErrNoPartition
	}
	p := &m.parts[part]
	if obj >= p.eod.obj {
		m.setPos(part, p.eod)
		return tape.ErrEndOfData
	}
	// Candidate starting points and their cost in header reads.
	start, cost := p.bopPos(), obj
	if d := p.eod.obj - obj; d < cost {
		start, cost = p.eod, d
	}
	if part == m.part {
		if d := absDiff(m.cur.obj, obj); d < cost {
			start, cost = m.cur, d
		}
	}
	cp, okF := p.idx.floor(obj)
	cpc, okC := p.idx.ceil(obj)
	useCP := false
	if okF && obj-cp.obj+1 < cost {
		cost, useCP = obj-cp.obj+1, true
	}
	if okC && cpc.obj-obj+1 < cost {
		cp, useCP = cpc, true
	}
	if useCP {
		if err := m.jumpTo(part, cp); err != nil {
			return err
		}
	} else if part != m.part || start != m.cur {
		m.setPos(part, start)
	}
	for m.cur.obj < obj {
		if err := m.Next(); err != nil {
			return err
		}
	}
	for m.cur.obj > obj {
		if _, err := m.Prev(); err != nil {
			return err
		}
	}
	return nil
}

func absDiff(a, b uint64) uint64 {
	if a > b {
		return a - b
	}
	return b - a
}

// SpaceFilemarks moves over count filemarks: forward (count > 0) to the
// end-of-medium side of the count-th filemark, or backward (count < 0) to
// the beginning-of-medium side of the |count|-th filemark (SSC-5 SPACE,
// code 1). It returns the number of filemarks passed; if end of data or
// beginning of partition comes first it stops there and returns
// tape.ErrEndOfData or tape.ErrBeginningOfPart. Setmarks do not stop it.
// It uses the index of filemark positions to skip the records in between
// when it can.
func (m *Image) SpaceFilemarks(count int64) (int64, error) {
	if err := m.checkOpen(); err != nil {
		return 0, err
	}
	p := &m.parts[m.part]
	var done int64
	if count > 0 {
		// 0-based number of the last filemark to pass
		target := m.cur.file + uint64(count) - 1
		if fm, ok := p.idx.filemark(target); ok {
			if err := m.jumpTo(m.part, fm); err != nil {
				return 0, err
			}
			return count, m.Next()
		}
		// The index knows every filemark up to the end of data: there are
		// not enough of them.
		if p.idx.fmKnown >= p.eod.obj && len(p.idx.fms) < cap(p.idx.fms) {
			done = int64(uint64(len(p.idx.fms)) - m.cur.file)
			m.setPos(m.part, p.eod)
			return done, tape.ErrEndOfData
		}
		// Jump to the last filemark the index knows ahead, then scan.
		if n := uint64(len(p.idx.fms)); n > 0 && n-1 > m.cur.file {
			done = int64(n - 1 - m.cur.file)
			if err := m.jumpTo(m.part, p.idx.fms[n-1]); err != nil {
				return 0, err
			}
		}
		for done < count {
			o, err := m.Peek()
			if err != nil {
				return done, err
			}
			if o.Kind == tape.KindEOD {
				return done, tape.ErrEndOfData
			}
			if err := m.Next(); err != nil {
				return done, err
			}
			if o.Kind == tape.KindFilemark {
				done++
			}
		}
		return done, nil
	}
	for done < -count {
		if m.cur.file == 0 {
			// No filemark before: back to BOP.
			m.setPos(m.part, p.bopPos())
			return done, tape.ErrBeginningOfPart
		}
		if fm, ok := p.idx.filemark(m.cur.file - 1); ok {
			if err := m.jumpTo(m.part, fm); err != nil {
				return done, err
			}
			done++
			continue
		}
		o, err := m.Prev()
		if err != nil {
			return done, err
		}
		if o.Kind == tape.KindFilemark {
			done++
		}
	}
	return done, nil
}

// jumpTo moves to the position before the record at checkpoint c of
// partition part.
func (m *Image) jumpTo(part int, c checkpoint) error {
	p := &m.parts[part]
	var h recHeader
	if err := m.readScratch(p.start + c.off); err != nil {
		return err
	}
	if h.parse(m.scratch[:]) != nil || h.part != uint8(part) || h.obj != c.obj || h.typ == recEOD ||
		c.off+h.size() > p.eod.off {
		return corrupt("partition %d object %d: invalid record header at offset %d", part, c.obj, p.start+c.off)
	}
	m.setPos(part, pos{off: c.off, obj: h.obj, file: h.file, set: h.set, prevID: h.prev, prevLen: h.prevLen})
	m.hdr, m.hdrOK = h, true
	return nil
}

// WriteBlock writes one block of n bytes read from r at the current
// position, discarding everything after it, and moves past it.
func (m *Image) WriteBlock(r io.Reader, n int) error {
	if n <= 0 || n > MaxBlockLen {
		return fmt.Errorf("cartridge: block length %d out of range 1..%d", n, MaxBlockLen)
	}
	return m.write(recBlock, r, n)
}

// WriteMark writes a filemark or a setmark at the current position,
// discarding everything after it, and moves past it.
func (m *Image) WriteMark(kind tape.Kind) error {
	switch kind {
	case tape.KindFilemark:
		return m.write(recFilemark, nil, 0)
	case tape.KindSetmark:
		return m.write(recSetmark, nil, 0)
	}
	return fmt.Errorf("cartridge: cannot write a mark of kind %d", kind)
}

const wbufSize = recHeaderSize + 1<<20 // a 1 MiB block goes out in one pwrite

func (m *Image) write(typ uint8, r io.Reader, n int) error {
	if err := m.checkWritable(); err != nil {
		return err
	}
	p := &m.parts[m.part]
	at := m.cur
	if m.sb.flags&flagWORM != 0 && at.off < p.eod.off {
		return tape.ErrWORMOverwrite
	}
	total := recHeaderSize + int64(n)
	if at.off+total > p.capacity {
		return tape.ErrEndOfMedium
	}
	h := recHeader{
		typ: typ, part: uint8(m.part), length: uint32(n), prevLen: at.prevLen,
		obj: at.obj, file: at.file, set: at.set, id: m.rng.Uint64(), prev: at.prevID,
	}
	if m.wbuf == nil {
		m.wbuf = make([]byte, wbufSize)
	}
	off := p.start + at.off
	if total <= wbufSize {
		// Take the data before touching the image: a short reader leaves
		// the tape as it was.
		buf := m.wbuf[:total]
		if n > 0 {
			if _, err := io.ReadFull(r, buf[recHeaderSize:]); err != nil {
				return fmt.Errorf("cartridge: read block data: %w", err)
			}
			h.dataCRC = crc32.Checksum(buf[recHeaderSize:], castagnoli)
		}
		if err := m.prepareWrite(p, at); err != nil {
			return err
		}
		h.put(buf)
		if _, err := m.f.WriteAt(buf, off); err != nil {
			p.tailDirty = true
			return fmt.Errorf("cartridge: write record: %w", err)
		}
	} else {
		// Larger than the buffer: data in chunks, the header last, so a
		// crash leaves no header in front of missing data.
		if err := m.prepareWrite(p, at); err != nil {
			return err
		}
		var crc uint32
		for done := 0; done < n; {
			c := min(n-done, wbufSize)
			if _, err := io.ReadFull(r, m.wbuf[:c]); err != nil {
				p.tailDirty = true
				return fmt.Errorf("cartridge: read block data: %w", err)
			}
			crc = crc32.Update(crc, castagnoli, m.wbuf[:c])
			if _, err := m.f.WriteAt(m.wbuf[:c], off+recHeaderSize+int64(done)); err != nil {
				p.tailDirty = true
				return fmt.Errorf("cartridge: write record: %w", err)
			}
			done += c
		}
		h.dataCRC = crc
		h.put(m.scratch[:])
		if _, err := m.f.WriteAt(m.scratch[:], off); err != nil {
			p.tailDirty = true
			return fmt.Errorf("cartridge: write record: %w", err)
		}
	}
	if p.last {
		p.fileEnd = max(p.fileEnd, at.off+total)
	}
	m.dirty = true
	m.bumpVCR()
	p.idx.note(at.obj, at.off, typ == recFilemark)
	next := at.next(&h)
	p.eod = next
	m.setPos(m.part, next)
	return nil
}

// prepareWrite makes at the end of data before a record is written there:
// it discards the records after at (a write in the middle truncates) and
// any stale or torn bytes after the end of data.
func (m *Image) prepareWrite(p *partition, at pos) error {
	if at.off == p.eod.off && !p.tailDirty {
		return nil
	}
	return m.truncate(p, at)
}

// truncate discards everything in partition p from position at on.
//
// Order matters for crash safety. (1) If the superblock vouches for records
// after at, it is rewritten first (and synced) to stop at at, so that a
// crash can never resurrect a half-overwritten record as synced data.
// (2) The discarded records are then made unreachable: the last region is
// cut with ftruncate; in a region followed by others, an end-of-data
// marker is written at at (records after it link to the old chain, never
// to a new record, so they can never be mistaken for valid data) and the
// rest of the region is punched out, where the filesystem supports it.
func (m *Image) truncate(p *partition, at pos) error {
	if at.off < p.synced.off {
		if err := m.persistSuperblockAt(m.part, at); err != nil {
			return err
		}
	}
	if p.last {
		if p.fileEnd > at.off {
			if err := m.f.Truncate(p.start + at.off); err != nil {
				return fmt.Errorf("cartridge: truncate: %w", err)
			}
			p.fileEnd = at.off
		}
	} else if at.off+recHeaderSize <= p.capacity {
		h := recHeader{
			typ: recEOD, part: uint8(m.part), prevLen: at.prevLen, obj: at.obj,
			file: at.file, set: at.set, id: m.rng.Uint64(), prev: at.prevID,
		}
		h.put(m.scratch[:])
		if _, err := m.f.WriteAt(m.scratch[:], p.start+at.off); err != nil {
			return fmt.Errorf("cartridge: write end-of-data marker: %w", err)
		}
		const page = 4096
		from := (p.start + at.off + recHeaderSize + page - 1) / page * page
		if to := p.start + p.capacity; from < to {
			punchHole(m.f, from, to-from) // best effort: space only
		}
	}
	p.eod = at
	p.tailDirty = false
	p.idx.truncate(at.obj)
	m.hdrOK = false
	m.rbufOK = false
	m.dirty = true
	return nil
}

// bumpVCR changes the volume change reference once per modification after
// it was last read (SPC-5 VOLUME CHANGE REFERENCE: changes whenever the
// medium is changed). It never takes the value FFFFFFFFh, which LTFS reads
// as "unusable".
func (m *Image) bumpVCR() {
	if !m.vcrFresh {
		m.sb.vcr = m.sb.vcr%0xFFFFFFFE + 1
		m.vcrFresh = true
		m.sbDirty = true
	}
}

// Erase discards everything from the current position on.
func (m *Image) Erase() error {
	if err := m.checkWritable(); err != nil {
		return err
	}
	p := &m.parts[m.part]
	if m.cur.off == p.eod.off && !p.tailDirty {
		return nil
	}
	if m.sb.flags&flagWORM != 0 && m.cur.off < p.eod.off {
		return tape.ErrWORMOverwrite
	}
	if err := m.truncate(p, m.cur); err != nil {
		return err
	}
	m.bumpVCR()
	return nil
}

// MinPartitionSize is the smallest partition Format and CreateCartridge
// accept.
const MinPartitionSize = 1 << 20

// Format repartitions the medium, discarding all data. sizes gives the
// capacity of each partition in bytes (1..4 of them); 0 for the last one
// means the rest of the native capacity. Afterwards the position is BOP of
// partition 0.
func (m *Image) Format(sizes []int64) error {
	if err := m.checkWritable(); err != nil {
		return err
	}
	if m.sb.flags&flagWORM != 0 {
		for _, p := range m.parts {
			if p.eod.obj > 0 || p.synced.obj > 0 {
				return tape.ErrWORMOverwrite
			}
		}
	}
	entries, err := layout(sizes, m.sb.capacity, m.sb.earlyWarning, m.rng)
	if err != nil {
		return err
	}
	// New superblock first: once it is durable the old records cannot be
	// reached (they link to the old BOP ids), so cutting the file after it
	// is only about space.
	m.sb.formatCount++
	if err := m.writeSuperblock(entries); err != nil {
		m.sb.formatCount--
		return err
	}
	m.sb.parts = entries
	if err := m.f.Truncate(dataStart); err != nil {
		return fmt.Errorf("cartridge: truncate: %w", err)
	}
	m.parts = make([]partition, len(entries))
	var lastStart int64
	for _, e := range entries {
		lastStart = max(lastStart, e.start)
	}
	for i, e := range entries {
		p := &m.parts[i]
		p.start, p.capacity, p.ew, p.bop = e.start, e.capacity, e.ew, e.bop
		p.synced = p.bopPos()
		p.eod = p.synced
		p.last = e.start == lastStart
		p.idx.init()
	}
	m.dirty = true
	m.vcrFresh = false
	m.bumpVCR()
	m.buildInfo()
	m.setPos(0, m.parts[0].bopPos())
	return nil
}

// layout validates partition sizes and places the regions in the file.
// Regions are placed in increasing order of size so that the largest one
// is last: it can then grow to any size and shrink with ftruncate, and the
// sparse file's offsets stay small (ext4 limits a file to 16 TiB).
func layout(sizes []int64, capacity, earlyWarning int64, rng *rand.ChaCha8) ([]partEntry, error) {
	if len(sizes) < 1 || len(sizes) > maxPartitions {
		return nil, fmt.Errorf("%w: %d partitions (1..%d)", ErrBadPartitions, len(sizes), maxPartitions)
	}
	caps := make([]int64, len(sizes))
	var sum int64
	for i, s := range sizes {
		if s == 0 && i == len(sizes)-1 {
			continue
		}
		if s < MinPartitionSize || s > maxCapacity {
			return nil, fmt.Errorf("%w: partition %d size %d (minimum %d)", ErrBadPartitions, i, s, MinPartitionSize)
		}
		caps[i] = s
		sum += s
	}
	if sum > capacity {
		return nil, fmt.Errorf("%w: partitions total %d bytes, capacity is %d", ErrBadPartitions, sum, capacity)
	}
	if caps[len(caps)-1] == 0 {
		rest := capacity - sum
		if rest < MinPartitionSize {
			return nil, fmt.Errorf("%w: %d bytes left for the last partition (minimum %d)", ErrBadPartitions, rest, MinPartitionSize)
		}
		caps[len(caps)-1] = rest
	}
	order := make([]int, len(caps))
	for i := range order {
		order[i] = i
	}
	// stable insertion sort by size
	for i := 1; i < len(order); i++ {
		for j := i; j > 0 && caps[order[j]] < caps[order[j-1]]; j-- {
			order[j], order[j-1] = order[j-1], order[j]
		}
	}
	entries := make([]partEntry, len(caps))
	start := int64(dataStart)
	for _, i := range order {
		bop := rng.Uint64()
		entries[i] = partEntry{
			start: start, capacity: caps[i], ew: min(earlyWarning, caps[i]/4),
			bop: bop, lastID: bop,
		}
		start += caps[i]
	}
	return entries, nil
}

// ErrBadPartitions is returned by Format and CreateCartridge for partition
// sizes that do not fit the medium.
var ErrBadPartitions = errors.New("cartridge: invalid partition sizes")

// persistSuperblockAt records position at as partition part's synced end of
// data (the other partitions keep theirs) and writes the superblock.
func (m *Image) persistSuperblockAt(part int, at pos) error {
	entries := m.entries(func(i int) pos {
		if i == part {
			return at
		}
		return m.parts[i].synced
	})
	if err := m.writeSuperblock(entries); err != nil {
		return err
	}
	m.parts[part].synced = at
	return nil
}

// entries builds the partition table with the end of data end(i).
func (m *Image) entries(end func(i int) pos) []partEntry {
	es := make([]partEntry, len(m.parts))
	for i := range m.parts {
		p, s := &m.parts[i], end(i)
		es[i] = partEntry{
			start: p.start, capacity: p.capacity, ew: p.ew, bop: p.bop,
			end: s.off, objects: s.obj, files: s.file, sets: s.set, lastID: s.prevID, lastLen: s.prevLen,
		}
	}
	return es
}

// persistSuperblock writes the superblock with the partitions' synced ends
// of data unchanged: for attribute, flag and counter updates.
func (m *Image) persistSuperblock() error {
	return m.writeSuperblock(m.entries(func(i int) pos { return m.parts[i].synced }))
}

// writeSuperblock writes the superblock with the given partition table to
// the slot that does not hold the newest one, then fdatasyncs. A crash
// while writing leaves the other slot, which still describes a state whose
// records are on disk.
func (m *Image) writeSuperblock(entries []partEntry) error {
	if m.readOnly {
		return tape.ErrWriteProtected
	}
	sb := m.sb
	sb.seq++
	sb.parts = entries
	sb.mam = encodeMAM(m.mam)
	if m.sbuf == nil {
		m.sbuf = make([]byte, slotSize)
	}
	b := sb.marshal(m.sbuf)
	slot := 1 - m.slot
	if _, err := m.f.WriteAt(b, int64(slot)*slotSize); err != nil {
		return fmt.Errorf("cartridge: write header: %w", err)
	}
	if err := m.datasync(); err != nil {
		return err
	}
	m.slot = slot
	m.sb.seq = sb.seq
	m.sbDirty = false
	return nil
}

// Sync makes every object written so far durable: fdatasync of the
// records, then the superblock with the new ends of data (and its own
// fdatasync). It does nothing when nothing changed.
func (m *Image) Sync() error {
	if err := m.checkOpen(); err != nil {
		return err
	}
	if m.readOnly {
		return nil
	}
	if m.dirty {
		if err := m.datasync(); err != nil {
			return err
		}
		m.dirty = false
	}
	changed := m.sbDirty
	for i := range m.parts {
		changed = changed || m.parts[i].synced != m.parts[i].eod
	}
	if !changed {
		return nil
	}
	if err := m.writeSuperblock(m.entries(func(i int) pos { return m.parts[i].eod })); err != nil {
		return err
	}
	for i := range m.parts {
		m.parts[i].synced = m.parts[i].eod
	}
	return nil
}

func (m *Image) datasync() error {
	if m.noSync {
		// test only
	} else if err := datasync(m.f); err != nil {
		return fmt.Errorf("cartridge: sync: %w", err)
	}
	if m.afterSync != nil {
		m.afterSync()
	}
	return nil
}

// Close syncs and releases the medium (and its lock).
func (m *Image) Close() error {
	if m.closed {
		return ErrClosed
	}
	err := m.Sync()
	m.closed = true
	if cerr := m.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("cartridge: close: %w", cerr)
	}
	return err
}

// countLoad increments the load count (MAM LOAD COUNT) and persists it.
// The medium auxiliary memory is not covered by the write-protect tab, so a
// write-protected cartridge counts its loads too; a read-only file cannot.
func (m *Image) countLoad() error {
	if m.readOnly {
		return nil
	}
	m.sb.loadCount++
	return m.persistSuperblock()
}

// SetWriteProtected sets or clears the cartridge's write-protect tab.
func (m *Image) SetWriteProtected(wp bool) error {
	if err := m.checkOpen(); err != nil {
		return err
	}
	if m.readOnly {
		return tape.ErrWriteProtected
	}
	old := m.sb.flags
	if wp {
		m.sb.flags |= flagWriteProtected
	} else {
		m.sb.flags &^= flagWriteProtected
	}
	if err := m.persistSuperblock(); err != nil {
		m.sb.flags = old
		return err
	}
	m.buildInfo()
	return nil
}

// now is replaceable in tests.
var now = time.Now
