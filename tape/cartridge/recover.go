package cartridge

import (
	"bytes"
	"errors"
	"hash/crc32"
	"io"
)

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

// Recovery returns what opening found after the last sync point, per
// partition.
func (m *Image) Recovery() []Recovery { return append([]Recovery(nil), m.recovery...) }

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
		if n >= recHeaderSize && bytes.Count(m.scratch[:recHeaderSize], []byte{0}) == recHeaderSize {
			r.Stop = stopBlank
			break
		}
		clear(m.scratch[n:])
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
