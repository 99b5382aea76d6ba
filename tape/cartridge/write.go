package cartridge

import (
	"errors"
	"fmt"
	"hash/crc32"
	"io"

	"github.com/vscsid/vscsid/tape"
)

// WriteBlock writes one block of n bytes read from r at the current
// position, stored as enc asks, discarding everything after it, and moves
// past it. It returns the data bytes the block takes on the medium.
func (m *Image) WriteBlock(r io.Reader, n int, enc tape.Encoding) (stored int, err error) {
	if n <= 0 || n > MaxBlockLen {
		return 0, fmt.Errorf("cartridge: block length %d out of range 1..%d", n, MaxBlockLen)
	}
	if enc.Compress || enc.Key != nil {
		return m.writeEncoded(r, n, enc)
	}
	return n, m.write(recBlock, r, n)
}

// writeEncoded reads the block behind room for a record header and
// encodes it (tape.Codec) behind room for another. A block the codec
// leaves as it is (compression that would not make it smaller) is
// written as it is. The first encoded record makes the image format
// version 2 (superblock written before it).
func (m *Image) writeEncoded(r io.Reader, n int, enc tape.Encoding) (int, error) {
	if err := m.checkWritable(); err != nil {
		return 0, err
	}
	plain := m.wbufFor(recHeaderSize + n)
	if _, err := io.ReadFull(r, plain[recHeaderSize:]); err != nil {
		return 0, blockDataError(err, n)
	}
	rec, flags := m.codec.Encode(recHeaderSize, plain[recHeaderSize:], enc)
	if flags == 0 {
		return n, m.writeRecord(recBlock, 0, plain)
	}
	// Version 2, and the encrypted flag, reach the superblock before the
	// first record that needs them.
	if sb := m.sb; sb.version < 2 || flags&tape.EncEncrypted != 0 && sb.flags&flagEncrypted == 0 {
		m.sb.version = 2
		if flags&tape.EncEncrypted != 0 {
			m.sb.flags |= flagEncrypted
		}
		if err := m.persistSuperblock(); err != nil {
			m.sb.version, m.sb.flags = sb.version, sb.flags
			return 0, err
		}
		m.info.Encrypted = m.sb.flags&flagEncrypted != 0
	}
	return len(rec) - recHeaderSize, m.writeRecord(recBlock, flags, rec)
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

// wbufFor returns the write buffer with n bytes, grown to what the
// drive's blocks need rather than to wbufSize at once: a drive writing
// 64 KiB blocks keeps a buffer of about 64 KiB, not the 1 MiB the
// largest block goes out in (twelve drives of a soak held 12 MiB so).
func (m *Image) wbufFor(n int) []byte {
	if cap(m.wbuf) < n {
		m.wbuf = make([]byte, max(n, min(2*cap(m.wbuf), wbufSize)))
	}
	return m.wbuf[:n]
}

// WriteMarks writes count marks of kind at the current position, as count
// WriteMark calls would, but with one pwrite per 16,384 of them: WRITE
// FILEMARKS of 16,777,215 marks took 56 s one pwrite each, beyond any
// cmd_time_out. It returns how many it wrote; fewer with an error
// (tape.ErrEndOfMedium when the next did not fit, with every mark before
// it written). A write that fails leaves the position after the last mark
// written before the failing pwrite.
func (m *Image) WriteMarks(kind tape.Kind, count int) (int, error) {
	var typ uint8
	switch kind {
	case tape.KindFilemark:
		typ = recFilemark
	case tape.KindSetmark:
		typ = recSetmark
	default:
		return 0, fmt.Errorf("cartridge: cannot write a mark of kind %d", kind)
	}
	if count <= 0 {
		return 0, nil
	}
	if err := m.checkWritable(); err != nil {
		return 0, err
	}
	buf := m.wbufFor(min(count, wbufSize/recHeaderSize) * recHeaderSize)
	p := &m.parts[m.part]
	if err := m.prepareWrite(p, m.cur); err != nil {
		return 0, err
	}
	done, buffered := 0, 0
	chunk := m.cur // the position before the first buffered mark
	flush := func() error {
		if buffered == 0 {
			return nil
		}
		if _, err := m.f.WriteAt(buf[:buffered*recHeaderSize], p.start+chunk.off); err != nil {
			// Back to before the chunk: none of it counts as written.
			done -= buffered
			p.eod = chunk
			p.idx.truncate(chunk.obj)
			p.tailDirty = true
			m.setPos(m.part, chunk)
			return fmt.Errorf("cartridge: write marks: %w", err)
		}
		buffered, chunk = 0, m.cur
		return nil
	}
	for done < count {
		h, err := m.newRecord(typ, 0, recHeaderSize)
		if err != nil {
			return done, errors.Join(err, flush())
		}
		h.put(buf[buffered*recHeaderSize:])
		m.wrote(&h)
		buffered++
		done++
		if (buffered+1)*recHeaderSize > len(buf) {
			if err := flush(); err != nil {
				return done, err
			}
		}
	}
	return done, flush()
}

// write writes a record of n plain data bytes read from r (a mark when n
// is 0).
func (m *Image) write(typ uint8, r io.Reader, n int) error {
	if err := m.checkWritable(); err != nil {
		return err
	}
	if recHeaderSize+n > wbufSize {
		return m.writeLarge(r, n)
	}
	// Take the data before touching the image: a short reader leaves the
	// tape as it was.
	rec := m.wbufFor(recHeaderSize + n)
	if n > 0 {
		if _, err := io.ReadFull(r, rec[recHeaderSize:]); err != nil {
			return blockDataError(err, n)
		}
	}
	return m.writeRecord(typ, 0, rec)
}

// newRecord checks that a record of total bytes (header included) may be
// written at the current position and returns its header (without the
// data CRC).
func (m *Image) newRecord(typ, enc uint8, total int64) (recHeader, error) {
	p := &m.parts[m.part]
	at := m.cur
	if m.sb.flags&flagWORM != 0 && at.off < p.eod.off {
		return recHeader{}, tape.ErrWORMOverwrite
	}
	if at.off+total > p.capacity {
		return recHeader{}, tape.ErrEndOfMedium
	}
	return recHeader{
		typ: typ, enc: enc, part: uint8(m.part), length: uint32(total - recHeaderSize), prevLen: at.prevLen,
		obj: at.obj, file: at.file, set: at.set, id: m.rng.Uint64(), prev: at.prevID,
	}, nil
}

// writeRecord writes rec, a record whose data is in place after room for
// its header, at the current position with one pwrite.
func (m *Image) writeRecord(typ, enc uint8, rec []byte) error {
	h, err := m.newRecord(typ, enc, int64(len(rec)))
	if err != nil {
		return err
	}
	if len(rec) > recHeaderSize {
		h.dataCRC = crc32.Checksum(rec[recHeaderSize:], castagnoli)
	}
	p := &m.parts[m.part]
	at := m.cur
	if err := m.prepareWrite(p, at); err != nil {
		return err
	}
	h.put(rec)
	if _, err := m.f.WriteAt(rec, p.start+at.off); err != nil {
		p.tailDirty = true
		return fmt.Errorf("cartridge: write record: %w", err)
	}
	m.wrote(&h)
	return nil
}

// writeLarge writes a plain block larger than the write buffer: data in
// chunks, the header last, so a crash leaves no header in front of
// missing data.
func (m *Image) writeLarge(r io.Reader, n int) error {
	h, err := m.newRecord(recBlock, 0, recHeaderSize+int64(n))
	if err != nil {
		return err
	}
	p := &m.parts[m.part]
	at := m.cur
	if err := m.prepareWrite(p, at); err != nil {
		return err
	}
	off := p.start + at.off
	buf := m.wbufFor(wbufSize)
	var crc uint32
	for done := 0; done < n; {
		c := min(n-done, len(buf))
		if _, err := io.ReadFull(r, buf[:c]); err != nil {
			p.tailDirty = true
			return blockDataError(err, n)
		}
		crc = crc32.Update(crc, castagnoli, buf[:c])
		if _, err := m.f.WriteAt(buf[:c], off+recHeaderSize+int64(done)); err != nil {
			p.tailDirty = true
			return fmt.Errorf("cartridge: write record: %w", err)
		}
		done += c
	}
	h.dataCRC = crc
	h.put(m.scratch[:recHeaderSize])
	if _, err := m.f.WriteAt(m.scratch[:recHeaderSize], off); err != nil {
		p.tailDirty = true
		return fmt.Errorf("cartridge: write record: %w", err)
	}
	m.wrote(&h)
	return nil
}

// wrote moves past the record h just written at the current position,
// which is now the end of data.
func (m *Image) wrote(h *recHeader) {
	p := &m.parts[m.part]
	at := m.cur
	if p.last {
		p.fileEnd = max(p.fileEnd, at.off+h.size())
	}
	m.dirty = true
	m.bumpVCR()
	p.idx.note(at.obj, at.off, h.typ == recFilemark)
	next := at.next(h)
	p.eod = next
	m.setPos(m.part, next)
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
		h.put(m.scratch[:recHeaderSize])
		if _, err := m.f.WriteAt(m.scratch[:recHeaderSize], p.start+at.off); err != nil {
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
	m.rbufOK, m.dbufOK = false, false
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
	if !m.noSync { // noSync: tests only
		if err := datasync(m.f); err != nil {
			return fmt.Errorf("cartridge: sync: %w", err)
		}
	}
	if m.afterSync != nil {
		m.afterSync()
	}
	return nil
}

// blockDataError is the error of reading a block's n bytes of data: data
// that ends early (a SIMH length word without its bytes) says so rather
// than "EOF".
func blockDataError(err error, n int) error {
	if errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) {
		return fmt.Errorf("cartridge: a %d-byte block: its data ends early: %w", n, io.ErrUnexpectedEOF)
	}
	return fmt.Errorf("cartridge: read block data: %w", err)
}
