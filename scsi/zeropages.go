package scsi

import (
	"encoding/binary"
	"sync/atomic"
)

// ZeroPageSize is the unit ZeroPages tracks: 4 KiB, the smallest page of
// any architecture Linux runs TCMU on. A coarser kernel page (64 KiB on
// some arm64 kernels) is tracked as 16 units, which is just as correct.
const ZeroPageSize = 4096

// ZeroPages records which pages of a transport's data area are known to
// hold only zero bytes, so that a Data-In zero fill (WriteZeros: a fake_rw
// READ, an unwritten tape or disk region) skips the pages that are zero
// already. TCMU's data area is the case it is made for: the kernel maps
// freshly allocated, zeroed pages into it and reuses them from command to
// command without touching them on the Data-In path, so once vscsid has
// zeroed a page it stays zero until Data-Out lands in it (the kernel copies
// a WRITE's data in before the command reaches the ring) or a handler
// writes non-zero Data-In into it.
//
// The rules, applied by a Buffer that tracks pages (ResetTracked):
//   - WriteZeros skips a page known to be zero and marks a page it zeroes
//     whole as known;
//   - Write and WriteFromAt forget the pages they touch;
//   - Settle, called by the transport when the handler returns, forgets
//     every page of a command that did not behave as a pure Data-In
//     command (it consumed Data-Out, or it wrote no Data-In at all, as a
//     WRITE does or a command refused before its transfer), since the
//     kernel may have copied Data-Out into them.
//
// A page is therefore marked known only by a zero fill of the whole page,
// and stays known only while nothing but zero fills touches it.
//
// What the rules cannot see is the direction the initiator chose: TCMU's
// ring entry does not carry it, and LIO passes a READ sent with Data-Out
// (SG_IO with dxfer_direction TO_DEV, an iSCSI PDU with the W bit) to the
// backstore, having copied that Data-Out into the data area. A handler
// serving it as the READ its CDB says is a pure Data-In command to these
// rules. WriteZeros therefore also checks the first and last 8 bytes of
// every page it would skip and zeroes the page when they are not zero,
// which catches such data unless it was crafted to be zero exactly there.
// Data written by a well-formed WRITE is never at risk: its pages are
// forgotten. Pages
// nobody has zeroed yet, for example after vscsid restarts on a ring it
// did not set up, start unknown. Safe for concurrent use by commands whose
// buffers do not overlap (TCMU gives each outstanding command its own data
// blocks).
type ZeroPages struct {
	bits    []atomic.Uint64
	pages   int
	skipped atomic.Uint64 // bytes WriteZeros did not have to write
	filled  atomic.Uint64 // bytes WriteZeros wrote
}

// NewZeroPages returns a record for a data area of size bytes, with every
// page unknown.
func NewZeroPages(size int) *ZeroPages {
	n := (size + ZeroPageSize - 1) / ZeroPageSize
	return &ZeroPages{bits: make([]atomic.Uint64, (n+63)/64), pages: n}
}

// Known reports whether the page holding data-area offset off is known to
// be zero.
func (z *ZeroPages) Known(off int) bool {
	p := off / ZeroPageSize
	if p < 0 || p >= z.pages {
		return false
	}
	return z.bits[p/64].Load()&(1<<(p%64)) != 0
}

// FillStats reports the Data-In zero-fill bytes skipped because their
// pages were known to be zero and the bytes actually written.
func (z *ZeroPages) FillStats() (skipped, filled uint64) {
	return z.skipped.Load(), z.filled.Load()
}

// fill zeroes p, which starts at data-area offset off, skipping the pages
// known to be zero and marking those it zeroes whole.
func (z *ZeroPages) fill(p []byte, off int) {
	var skipped, filled int
	for len(p) > 0 {
		pg := off / ZeroPageSize
		end := (pg + 1) * ZeroPageSize
		c := min(len(p), end-off)
		if pg >= z.pages { // outside the record: cannot happen for a valid entry
			clear(p)
			filled += len(p)
			break
		}
		w, bit := &z.bits[pg/64], uint64(1)<<(pg%64)
		switch {
		case w.Load()&bit != 0 && zeroEnds(p[:c]):
			skipped += c
		default:
			clear(p[:c])
			filled += c
			if c == ZeroPageSize {
				w.Or(bit)
			}
		}
		p, off = p[c:], off+c
	}
	if skipped > 0 {
		z.skipped.Add(uint64(skipped))
	}
	if filled > 0 {
		z.filled.Add(uint64(filled))
	}
}

// zeroEnds reports whether the first and last 8 bytes of p are zero: a
// check that costs two cache lines per page, made on every page WriteZeros
// skips. It catches what the rules cannot see (see ZeroPages): Data-Out
// of a command whose CDB says Data-In, which the kernel copies into the
// data area all the same.
func zeroEnds(p []byte) bool {
	if len(p) < 8 {
		var or byte
		for _, b := range p {
			or |= b
		}
		return or == 0
	}
	return binary.NativeEndian.Uint64(p)|binary.NativeEndian.Uint64(p[len(p)-8:]) == 0
}

// forget marks the pages overlapping [off, off+n) unknown.
func (z *ZeroPages) forget(off, n int) {
	if n <= 0 {
		return
	}
	first, last := off/ZeroPageSize, min((off+n-1)/ZeroPageSize, z.pages-1)
	for pg := first; pg <= last; {
		w := &z.bits[pg/64]
		// Clear the bits of this word from pg up to last in one And.
		hi := min(last, pg|63)
		mask := ^uint64(0) << (pg % 64)
		if hi%64 != 63 {
			mask &= (uint64(1) << (hi%64 + 1)) - 1
		}
		if w.Load()&mask != 0 {
			w.And(^mask)
		}
		pg = hi + 1
	}
}
