package targettest

// The command ring as the kernel writes and reaps it: entry layout,
// reservation of ring space and data blocks, corruption injection and the
// completion walk (tcmu_handle_completions).

import (
	"encoding/binary"
	"fmt"
	"math/bits"
	"sync/atomic"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/tcmu"
)

// The kernel's structures, restated from include/uapi/linux/target_core_user.h
// independently of package target (so a layout mistake there is caught here).
const (
	mbCmdrOff  = 128 // sizeof(struct tcmu_mailbox): CMDR_OFF
	mbHeadOff  = 12
	mbTailOff  = 64
	entryBase  = 112 // sizeof(struct tcmu_cmd_entry)
	iovOff     = 48
	iovSz      = 16
	tmrHdrSize = 32
	senseSize  = 96
	opPad      = 0
	opCmd      = 1
	opTMR      = 2
)

// Corruption is an error injected into the next command entry.
type Corruption int

// Corruptions.
const (
	CorruptNone           Corruption = iota
	CorruptZeroLength                // len_op length 0
	CorruptLengthPastHead            // length beyond cmd_head
	CorruptIOVOutside                // iovec base inside the command ring
	CorruptIOVPastEnd                // iovec extends past the end of the mapping
	CorruptIOVCount                  // iov_cnt larger than the entry can hold
	CorruptCDBOffset                 // cdb_off pointing into the mailbox
	CorruptUnknownOp                 // opcode 5 (not a fault: the device must flag UNKNOWN_OP)
)

// slot is the kernel's struct tcmu_cmd for one outstanding cmd_id.
type slot struct {
	id      uint16
	in      bool // Data-In (DMA_FROM_DEVICE)
	length  int
	blocks  []int32
	pending *Pending // nil for Pump commands
	aborted bool
	pump    bool
}

func roundUp(n, a int) int { return (n + a - 1) / a * a }

// cdbSize is the kernel's scsi_command_size().
func cdbSize(cdb []byte) int {
	if len(cdb) == 0 {
		return 0
	}
	if cdb[0] == 0x7f {
		if len(cdb) < 8 {
			return 0
		}
		return 8 + int(cdb[7])
	}
	return [8]int{6, 10, 10, 12, 16, 12, 10, 10}[cdb[0]>>5]
}

func (k *Kernel) entry(pos uint32, n int) []byte {
	a := mbCmdrOff + int(pos)
	return k.mem[a : a+n]
}

// reserveLocked finds ring space for an entry of size bytes at cmd_head,
// writing a PAD entry first when it does not fit before the end of the
// ring (is_ring_space_avail, ring_insert_padding). It returns the entry's
// ring offset.
func (k *Kernel) reserveLocked(size int) (uint32, error) {
	if k.broken != nil {
		return 0, k.broken
	}
	head := atomic.LoadUint32(k.head)
	toEnd := int(k.ringSize - head)
	need := size
	if toEnd < size {
		need += toEnd
	}
	usedBytes := int(head) - int(k.lastCleaned)
	if usedBytes < 0 {
		usedBytes += int(k.ringSize)
	}
	if int(k.ringSize)-usedBytes-1 < need {
		return 0, ErrNoSpace
	}
	if toEnd < size {
		e := k.entry(head, 8)
		clear(e)
		binary.NativeEndian.PutUint32(e, uint32(toEnd)|opPad)
		k.ring[head/8] = uint32(toEnd) | opPad
		k.pads++
		atomic.StoreUint32(k.head, 0)
		head = 0
	}
	return head, nil
}

// publishLocked moves cmd_head past the entry at pos (smp_store_release).
func (k *Kernel) publishLocked(pos uint32, size int) {
	k.ring[pos/8] = binary.NativeEndian.Uint32(k.entry(pos, 4))
	next := pos + uint32(size)
	if next == k.ringSize {
		next = 0
	}
	atomic.StoreUint32(k.head, next)
}

// bitmap is a set of small integers with a fast lowest-free search, like
// the kernel's data_bitmap and the xarray's free-index search.
type bitmap []uint64

func newBitmap(n int) bitmap { return make(bitmap, (n+63)/64) }

func (b bitmap) set(i int)   { b[i/64] |= 1 << (i % 64) }
func (b bitmap) clear(i int) { b[i/64] &^= 1 << (i % 64) }

// firstFree returns the lowest unset bit at or after from, or -1.
func (b bitmap) firstFree(from, limit int) int {
	for w := from / 64; w < len(b); w++ {
		v := ^b[w]
		if w == from/64 {
			v &^= 1<<(from%64) - 1
		}
		if v != 0 {
			if i := w*64 + bits.TrailingZeros64(v); i < limit {
				return i
			}
			return -1
		}
	}
	return -1
}

// allocID is xa_alloc(..., XA_LIMIT(1, 0xffff)): the lowest free cmd_id.
func (k *Kernel) allocID() (uint16, bool) {
	id := k.idUsed.firstFree(1, 65536)
	if id < 0 {
		return 0, false
	}
	k.idUsed.set(id)
	return uint16(id), true
}

// allocBlocks picks data blocks for n bytes: lowest free first, as the
// kernel's bitmap does; with segs > 1, runs are kept apart by at least one
// block so that each becomes its own iovec.
func (k *Kernel) allocBlocks(s *slot, n, segs int) bool {
	nb := (n + k.blockSize - 1) / k.blockSize
	s.blocks = s.blocks[:0]
	if nb == 0 {
		return true
	}
	segs = max(1, min(segs, nb))
	from := 0
	for r := range segs {
		for range (r+1)*nb/segs - r*nb/segs {
			b := k.used.firstFree(from, k.nblocks)
			if b < 0 {
				k.releaseBlocks(s)
				return false
			}
			k.used.set(b)
			s.blocks = append(s.blocks, int32(b))
			from = b + 1
		}
		from++ // leave a gap: the next run starts a new iovec
	}
	return true
}

func (k *Kernel) queueLocked(cdb []byte, d Data, p *Pending) (*slot, error) {
	if k.broken != nil {
		return nil, k.broken
	}
	cl := cdbSize(cdb)
	if cl == 0 || cl > len(cdb) {
		return nil, fmt.Errorf("targettest: CDB of %d bytes is shorter than its opcode's %d", len(cdb), cl)
	}
	n := d.Len()
	if n > k.nblocks*k.blockSize {
		return nil, ErrTooBig
	}
	var s *slot
	if l := len(k.free); l > 0 {
		s, k.free = k.free[l-1], k.free[:l-1]
	} else {
		s = new(slot)
	}
	*s = slot{blocks: s.blocks, in: d.in > 0, length: n, pending: p, pump: p == nil}
	if !k.allocBlocks(s, n, d.segs) {
		k.free = append(k.free, s)
		return nil, ErrNoSpace
	}
	// iovecs: one per run of adjacent blocks (new_block_to_iov).
	iovs := 0
	for i, b := range s.blocks {
		if i == 0 || b != s.blocks[i-1]+1 {
			iovs++
		}
	}
	base := max(iovOff+iovSz*iovs, entryBase)
	size := base + roundUp(cl, 8)
	if size > int(k.ringSize)/2 {
		k.releaseBlocks(s)
		k.free = append(k.free, s)
		return nil, ErrTooBig
	}
	id, ok := k.allocID()
	if !ok {
		k.releaseBlocks(s)
		k.free = append(k.free, s)
		return nil, ErrNoSpace
	}
	pos, err := k.reserveLocked(size)
	if err != nil {
		k.idUsed.clear(int(id))
		k.releaseBlocks(s)
		k.free = append(k.free, s)
		return nil, err
	}
	s.id = id
	k.ids[id] = s

	ne := binary.NativeEndian
	e := k.entry(pos, size)
	clear(e)
	ne.PutUint32(e[0:], uint32(size)|opCmd)
	ne.PutUint16(e[4:], id)
	ne.PutUint32(e[8:], uint32(iovs))
	iv, left, off := -1, n, 0
	for i, b := range s.blocks {
		blk := k.mem[k.dataOff+int(b)*k.blockSize:][:k.blockSize]
		l := min(left, k.blockSize)
		if d.in == 0 { // Data-In blocks keep what the last command left
			copy(blk[:l], d.out[off:off+l])
		}
		if i == 0 || b != s.blocks[i-1]+1 {
			iv++
			ne.PutUint64(e[iovOff+iovSz*iv:], uint64(k.dataOff+int(b)*k.blockSize))
		}
		lp := e[iovOff+iovSz*iv+8:]
		ne.PutUint64(lp, ne.Uint64(lp)+uint64(l))
		left -= l
		off += l
	}
	cdbOff := mbCmdrOff + int(pos) + base
	copy(k.mem[cdbOff:], cdb[:cl])
	ne.PutUint64(e[24:], uint64(cdbOff))
	k.corruptLocked(e, pos, size, base)
	k.publishLocked(pos, size)
	return s, nil
}

func (k *Kernel) corruptLocked(e []byte, pos uint32, size, _ int) {
	c := k.corrupt
	k.corrupt = CorruptNone
	ne := binary.NativeEndian
	switch c {
	case CorruptZeroLength:
		ne.PutUint32(e[0:], opCmd)
	case CorruptLengthPastHead:
		ne.PutUint32(e[0:], uint32(size+8)|opCmd)
	case CorruptIOVOutside:
		ne.PutUint32(e[8:], max(ne.Uint32(e[8:]), 1))
		ne.PutUint64(e[iovOff:], mbCmdrOff+uint64(pos))
		ne.PutUint64(e[iovOff+8:], 64)
	case CorruptIOVPastEnd:
		ne.PutUint32(e[8:], max(ne.Uint32(e[8:]), 1))
		ne.PutUint64(e[iovOff:], uint64(len(k.mem)-16))
		ne.PutUint64(e[iovOff+8:], 4096)
	case CorruptIOVCount:
		ne.PutUint32(e[8:], uint32(size))
	case CorruptCDBOffset:
		ne.PutUint64(e[24:], 8)
	case CorruptUnknownOp:
		ne.PutUint32(e[0:], uint32(size)|5)
	}
}

func (k *Kernel) releaseBlocks(s *slot) {
	for _, b := range s.blocks {
		k.used.clear(int(b))
	}
	s.blocks = s.blocks[:0]
}

func (k *Kernel) breakRing(format string, args ...any) {
	k.broken = fmt.Errorf("%w: "+format, append([]any{ErrBroken}, args...)...)
	k.t.Errorf("targettest: %v", k.broken)
}

// reapLocked is tcmu_handle_completions: walk from the last cleaned entry
// to cmd_tail, completing each command entry by the cmd_id stored in it.
func (k *Kernel) reapLocked() {
	if k.broken != nil {
		return
	}
	ne := binary.NativeEndian
	tail := atomic.LoadUint32(k.tail)
	head := atomic.LoadUint32(k.head)
	if tail >= k.ringSize || tail%8 != 0 {
		k.breakRing("cmd_tail %d outside the ring or misaligned", tail)
		return
	}
	for k.lastCleaned != tail {
		pos := k.lastCleaned
		if pos == head {
			k.breakRing("cmd_tail %d moved past cmd_head %d", tail, head)
			return
		}
		lenOp := k.ring[pos/8]
		if lenOp == 0 {
			k.breakRing("cmd_tail %d is not on an entry boundary (reaping at %d)", tail, pos)
			return
		}
		e := k.entry(pos, int(lenOp&^7))
		if got := ne.Uint32(e[0:]); got != lenOp {
			k.breakRing("entry at %d: len_op changed from %#x to %#x by the device", pos, lenOp, got)
			return
		}
		next := pos + lenOp&^7
		if pos < tail && tail < next {
			k.breakRing("cmd_tail %d is not on an entry boundary (entry [%d,%d))", tail, pos, next)
			return
		}
		if next == k.ringSize {
			next = 0
		}
		if op := lenOp & 7; op == opPad || op == opTMR {
			k.ring[pos/8] = 0
			k.lastCleaned = next
			continue
		}
		id := ne.Uint16(e[4:])
		s := k.ids[id]
		if s == nil {
			k.breakRing("cmd_id %d not found (completed twice?), ring is broken", id)
			return
		}
		uflags := e[7]
		if uflags&tcmu.UFlagKeepBuf != 0 {
			k.breakRing("cmd_id %d completed with KEEP_BUF, which the fake does not support", id)
			return
		}
		k.completeLocked(s, e, uflags)
		k.ring[pos/8] = 0
		k.lastCleaned = next
	}
}

// completeLocked is tcmu_handle_completion.
func (k *Kernel) completeLocked(s *slot, e []byte, uflags uint8) {
	ne := binary.NativeEndian
	c := Completion{ID: s.id, Status: scsi.Status(e[8]), Flags: uflags, Aborted: s.aborted}
	readLen := s.length
	gather := s.in
	if uflags&tcmu.UFlagUnknownOp != 0 {
		c.Status = scsi.StatusCheckCondition // and no sense is copied
		gather = false
	} else {
		valid := false
		if uflags&tcmu.UFlagReadLen != 0 {
			c.ReadLen = ne.Uint32(e[12:])
		}
		if s.in && uflags&tcmu.UFlagReadLen != 0 && k.flags&tcmu.FlagReadLen != 0 && c.ReadLen != 0 {
			valid = true
			readLen = min(readLen, int(c.ReadLen))
		}
		if c.Status == scsi.StatusCheckCondition {
			if !s.pump {
				c.Sense = append([]byte(nil), e[16:16+senseSize]...)
			}
			gather = gather && valid
		}
	}
	delivered := 0
	if gather {
		delivered = readLen
		if !s.pump {
			c.Data = make([]byte, 0, readLen)
			for _, b := range s.blocks {
				if len(c.Data) == readLen {
					break
				}
				blk := k.mem[k.dataOff+int(b)*k.blockSize:][:k.blockSize]
				c.Data = append(c.Data, blk[:min(k.blockSize, readLen-len(c.Data))]...)
			}
		}
	}
	if s.in {
		c.Residual = s.length - delivered
	}
	k.releaseBlocks(s)
	k.ids[s.id] = nil
	k.idUsed.clear(int(s.id))
	if s.pump {
		k.pumpDone++
		if c.Status != scsi.StatusGood || c.Residual != 0 {
			k.pumpBad++
		}
	} else if p := s.pending; p != nil {
		p.c = c
		close(p.done)
	}
	s.pending = nil
	k.free = append(k.free, s)
}
