package cartridge

import (
	"errors"
	"hash/crc32"
	"io"

	"github.com/vscsid/vscsid/tape"
)

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

// readScratch reads the record header at off, and the encoding prefix
// after it, into m.scratch; what the file does not have is zero (a mark
// has no prefix). A file that ends inside the header is corrupt (the
// caller expects a record there).
func (m *Image) readScratch(off int64) error {
	n, err := m.f.ReadAt(m.scratch[:], off)
	if n >= recHeaderSize {
		clear(m.scratch[n:])
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
	return tape.Object{Kind: kindOf(h.typ), Len: int(h.logical), Stored: int(h.length), Encoding: h.enc}, nil
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
	if off < 0 {
		return 0, errors.New("cartridge: negative offset")
	}
	if h.enc != 0 {
		return m.readEncoded(h, b, off)
	}
	length := int64(h.length)
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

// readEncoded is ReadAt for an encoded block: the first call reads the
// stored data, checks its CRC and decodes it (tape.Codec: decompress,
// decrypt with the key SetKey gave); the calls after it copy from there.
// The buffers grow to the largest block read and are kept.
func (m *Image) readEncoded(h *recHeader, b []byte, off int64) (int, error) {
	logical := int64(h.logical)
	if off >= logical {
		return 0, io.EOF
	}
	if !m.dbufOK {
		stored := int(h.length)
		if cap(m.ebuf) < stored {
			m.ebuf = make([]byte, stored)
		}
		src := m.ebuf[:stored]
		if err := m.pread(src, m.parts[m.part].start+m.cur.off+recHeaderSize); err != nil {
			return 0, err
		}
		if crc32.Checksum(src, castagnoli) != h.dataCRC {
			return 0, m.dataCorrupt()
		}
		dec, err := m.codec.Decode(src, h.enc, m.key)
		switch {
		case errors.Is(err, tape.ErrNoKey) || errors.Is(err, tape.ErrWrongKey):
			return 0, err
		case err != nil || len(dec) != int(logical):
			return 0, corrupt("partition %d object %d: encoded block does not decode: %v", m.part, m.cur.obj, err)
		}
		m.dbuf, m.dbufOK = dec, true
	}
	n := copy(b, m.dbuf[off:logical])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// KAD implements tape.Medium: the key-associated data of the encrypted
// block at the current position.
func (m *Image) KAD() (akad, ukad []byte, err error) {
	o, err := m.Peek()
	if err != nil || o.Kind != tape.KindBlock || o.Encoding&tape.EncEncrypted == 0 {
		return nil, nil, err
	}
	b := make([]byte, min(o.Stored, tape.MaxPrefixSize))
	if err := m.pread(b, m.parts[m.part].start+m.cur.off+recHeaderSize); err != nil {
		return nil, nil, err
	}
	akad, ukad = tape.BlockKAD(b, o.Encoding)
	return akad, ukad, nil
}

// SetKey implements tape.Medium: the key encrypted blocks are read with.
func (m *Image) SetKey(k *tape.Key) {
	m.key = k
	m.dbufOK = false
}

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
	return tape.Object{Kind: kindOf(h.typ), Len: int(h.logical), Stored: int(h.length), Encoding: h.enc}, nil
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
		// Jump to the last filemark the index knows ahead, or the last
		// checkpoint before the target, then scan.
		if n := uint64(len(p.idx.fms)); n > 0 && n-1 > m.cur.file {
			done = int64(n - 1 - m.cur.file)
			if err := m.jumpTo(m.part, p.idx.fms[n-1]); err != nil {
				return 0, err
			}
		}
		if from := m.cur.file; from <= target {
			if err := m.skipToFile(target, m.cur.obj); err != nil {
				return done, err
			}
			done += int64(m.cur.file - from)
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
	// Backward: from the last checkpoint before the target filemark,
	// forward to it, when the index does not know it.
	if n := uint64(-count); n <= m.cur.file {
		target := m.cur.file - n // the filemark to stop before
		if _, ok := p.idx.filemark(target); !ok {
			from := m.cur
			if err := m.skipToFile(target, 0); err != nil {
				return 0, err
			}
			if m.cur.obj != from.obj {
				for m.cur.file < target || m.cur.file == target && !m.atFilemark() {
					if err := m.Next(); err != nil {
						return 0, err
					}
				}
				return -count, nil
			}
		}
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

// skipToFile moves to the last index checkpoint after object from whose
// record has at most file filemarks before it, found by a binary search
// that reads one record header per step; it stays where it is when no
// checkpoint qualifies. A space over
// filemarks that the filemark index does not know then scans at most the
// objects between two checkpoints rather than all of them.
func (m *Image) skipToFile(file, from uint64) error {
	p := &m.parts[m.part]
	cps := p.idx.cps
	lo := p.idx.search(from + 1)
	hi := len(cps)
	var h recHeader
	best := -1
	for lo < hi {
		mid := int(uint(lo+hi) >> 1)
		if err := m.readScratch(p.start + cps[mid].off); err != nil {
			return err
		}
		if h.parse(m.scratch[:]) != nil || h.obj != cps[mid].obj {
			return corrupt("partition %d object %d: invalid record header at offset %d", m.part, cps[mid].obj, p.start+cps[mid].off)
		}
		if h.file <= file {
			best, lo = mid, mid+1
		} else {
			hi = mid
		}
	}
	if best < 0 {
		return nil
	}
	return m.jumpTo(m.part, cps[best])
}

// atFilemark reports whether the record at the current position is a
// filemark (false at end of data or on an unreadable header).
func (m *Image) atFilemark() bool {
	o, err := m.Peek()
	return err == nil && o.Kind == tape.KindFilemark
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
