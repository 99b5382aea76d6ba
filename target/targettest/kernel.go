// Package targettest is an in-memory fake of the kernel side of TCMU
// (drivers/target/target_core_user.c), for testing target.Device and the
// handlers served through it without a kernel.
//
// A Kernel lays out a mapping exactly as the kernel does: the mailbox at
// offset 0 (version 2, capability flags), the command ring at cmdr_off 128
// with a size that is not a power of two, and the data area after it,
// handed out in fixed-size blocks. It writes command entries the way
// queue_cmd_ring does (entry size max(48+16·iovs, 112) plus the CDB rounded
// to 8, a PAD entry when the entry does not fit before the end of the ring,
// cmd_ids 1..65535 lowest free first, contiguous blocks merged into one
// iovec), and reaps completions the way tcmu_handle_completions does: only
// on Kick, in ring order, looking each command up by the cmd_id stored in
// the entry being reaped. A cmd_id that is not outstanding (a double
// completion) breaks the ring as it does in the kernel, and fails the test.
//
// It implements target.Notifier with a channel, so a target.Device serves
// it directly:
//
//	k := targettest.Serve(t, handler)
//	c := k.Submit(scsi.CDB{0x12, 0, 0, 0, 36, 0}, targettest.DataIn(36))
//	// c.Status, c.Sense, c.Data, c.ReadLen
package targettest

import (
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"math/bits"
	"sync"
	"sync/atomic"
	"testing"
	"time"
	"unsafe"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
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
	poison     = 0xa5 // fills Data-In blocks, like stale data of an earlier command
)

// AllFlags are the capabilities a current kernel advertises (OOOC,
// READ_LEN, TMR and KEEP_BUF: tcmu_configure_device sets all four).
const AllFlags = target.FlagOOOC | target.FlagReadLen | target.FlagTMR | target.FlagKeepBuf

// Config sizes a Kernel. The zero value is a 64 KiB mapping region for
// the ring (cmdr_size 65408, not a power of two) and a 4 MiB data area in
// 4 KiB blocks, with every capability flag.
type Config struct {
	RingSize  int    // cmdr_size in bytes, a multiple of 8 (default 64 KiB − 128)
	DataSize  int    // data area bytes, a multiple of BlockSize (default 4 MiB)
	BlockSize int    // data area block size (default 4096, the kernel's page-sized block)
	NoFlags   uint16 // capabilities to leave out of AllFlags, e.g. target.FlagReadLen
	// NoTMRNotify leaves attrib/tmr_notification at 0: aborts are not
	// announced in the ring.
	NoTMRNotify bool
}

// Data describes a command's data transfer.
type Data struct {
	out  []byte
	in   int
	segs int
}

// NoData is a command without data.
var NoData = Data{}

// DataOut is a Data-Out transfer (WRITE, MODE SELECT): the kernel copies b
// into the data area before queuing the command.
func DataOut(b []byte) Data { return Data{out: b} }

// DataIn is a Data-In transfer of n bytes (READ, INQUIRY): the kernel sets
// up the iovecs and gathers what the device returns.
func DataIn(n int) Data { return Data{in: n} }

// Segments asks for the transfer to be scattered over n iovecs (n runs of
// data-area blocks that are not adjacent), to exercise multi-segment paths.
// n is capped at the number of blocks the transfer needs.
func (d Data) Segments(n int) Data { d.segs = n; return d }

// Len is the transfer length.
func (d Data) Len() int { return len(d.out) + d.in }

// Completion is a command as the initiator sees it after the kernel reaped
// it.
type Completion struct {
	ID     uint16
	Status scsi.Status
	// Sense is the 96-byte sense buffer, copied when the status is CHECK
	// CONDITION (and UNKNOWN_OP was not set), else nil.
	Sense []byte
	// Data is the Data-In the initiator receives: read_len bytes when
	// READ_LEN was set (and the kernel supports it), the whole buffer for
	// other statuses, nothing for CHECK CONDITION without READ_LEN.
	Data     []byte
	Residual int    // data length − len(Data), for Data-In
	ReadLen  uint32 // rsp.read_len, when the READ_LEN uflag was set
	Flags    uint8  // uflags as the device left them
	// Aborted is set when a TMR aborted the command: the initiator sees
	// the abort whatever Status says.
	Aborted bool
}

// SenseKey returns the sense key of Sense (fixed or descriptor format).
func (c Completion) SenseKey() scsi.SenseKey {
	switch {
	case len(c.Sense) < 3:
		return 0
	case c.Sense[0]&0x7f >= 0x72:
		return scsi.SenseKey(c.Sense[1] & 0xf)
	}
	return scsi.SenseKey(c.Sense[2] & 0xf)
}

// ASC returns the additional sense code and qualifier of Sense.
func (c Completion) ASC() scsi.ASC {
	switch {
	case len(c.Sense) < 14:
		return 0
	case c.Sense[0]&0x7f >= 0x72:
		return scsi.ASC(c.Sense[2])<<8 | scsi.ASC(c.Sense[3])
	}
	return scsi.ASC(c.Sense[12])<<8 | scsi.ASC(c.Sense[13])
}

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

// Errors returned by Queue.
var (
	ErrNoSpace = errors.New("targettest: no ring or data space (the kernel would queue the command in its qfull queue)")
	ErrTooBig  = errors.New("targettest: command larger than the data area or half the ring")
	ErrBroken  = errors.New("targettest: ring is broken")
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

// Pending is a queued command whose completion has not been reaped yet.
type Pending struct {
	k    *Kernel
	id   uint16
	done chan struct{}
	c    Completion
}

// ID is the command's cmd_id.
func (p *Pending) ID() uint16 { return p.id }

// Done reports whether the command has been reaped.
func (p *Pending) Done() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits for the command's completion. It fails the test after 10 s
// (call it from the test goroutine).
func (p *Pending) Wait() Completion {
	p.k.t.Helper()
	select {
	case <-p.done:
		return p.c
	case <-time.After(10 * time.Second):
		p.k.t.Fatalf("targettest: cmd_id %d not completed after 10s (device stats: %+v)", p.id, p.k.deviceStats())
		return Completion{}
	}
}

// Kernel is the fake. Its methods are safe for concurrent use; Wait and
// Kick are meant for the one target.Device serving it.
type Kernel struct {
	t         testing.TB
	mem       []byte
	ringSize  uint32
	dataOff   int
	blockSize int
	flags     uint16
	tmrNotify bool
	events    chan struct{}
	head      *uint32
	tail      *uint32

	mu          sync.Mutex
	cond        *sync.Cond
	lastCleaned uint32
	ring        []uint32 // len_op we wrote at ring offset 8·i (0: none), for reaping checks
	used        bitmap   // data blocks in use
	idUsed      bitmap   // cmd_ids in use
	nblocks     int
	ids         [65536]*slot
	free        []*slot
	corrupt     Corruption
	broken      error
	pads        int
	pumpDone    int
	pumpBad     int

	dev     *target.Device
	devDone chan struct{}
	devErr  error
	faultOK bool
	stopped bool
}

// NewKernel returns a fake kernel with an empty ring.
func NewKernel(t testing.TB, cfg Config) *Kernel {
	t.Helper()
	if cfg.RingSize == 0 {
		cfg.RingSize = 64<<10 - mbCmdrOff
	}
	if cfg.BlockSize == 0 {
		cfg.BlockSize = 4096
	}
	if cfg.DataSize == 0 {
		cfg.DataSize = 4 << 20
	}
	if cfg.RingSize%8 != 0 || cfg.RingSize < 2*entryBase || cfg.DataSize%cfg.BlockSize != 0 || cfg.BlockSize%8 != 0 {
		t.Fatalf("targettest: bad Config %+v: RingSize must be a multiple of 8 and ≥ 224, DataSize a multiple of BlockSize", cfg)
	}
	dataOff := mbCmdrOff + cfg.RingSize
	// Allocate as []uint64 so the mapping is 8-byte aligned, as an mmap is.
	words := make([]uint64, (dataOff+cfg.DataSize+7)/8)
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), dataOff+cfg.DataSize)
	k := &Kernel{
		t:         t,
		mem:       mem,
		ringSize:  uint32(cfg.RingSize),
		dataOff:   dataOff,
		blockSize: cfg.BlockSize,
		flags:     AllFlags &^ cfg.NoFlags,
		tmrNotify: !cfg.NoTMRNotify,
		events:    make(chan struct{}, 1),
		head:      (*uint32)(unsafe.Pointer(&mem[mbHeadOff])),
		tail:      (*uint32)(unsafe.Pointer(&mem[mbTailOff])),
		ring:      make([]uint32, cfg.RingSize/8),
		used:      newBitmap(cfg.DataSize / cfg.BlockSize),
		idUsed:    newBitmap(65536),
		nblocks:   cfg.DataSize / cfg.BlockSize,
	}
	k.idUsed.set(0) // cmd_id 0 is never allocated
	k.cond = sync.NewCond(&k.mu)
	ne := binary.NativeEndian
	ne.PutUint16(mem[0:], target.MailboxVersion)
	ne.PutUint16(mem[2:], k.flags)
	ne.PutUint32(mem[4:], mbCmdrOff)
	ne.PutUint32(mem[8:], k.ringSize)
	return k
}

// Memory is the mapping, as the device would mmap it.
func (k *Kernel) Memory() []byte { return k.mem }

// Flags are the mailbox capability flags.
func (k *Kernel) Flags() uint16 { return k.flags }

// Pads is the number of PAD entries written so far (ring wraps).
func (k *Kernel) Pads() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.pads
}

// RingUsed is the number of ring bytes not yet reaped: entries the device
// has not completed (or passed) and the kernel has not reclaimed on a Kick.
func (k *Kernel) RingUsed() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	n := int(atomic.LoadUint32(k.head)) - int(k.lastCleaned)
	if n < 0 {
		n += int(k.ringSize)
	}
	return n
}

// Wait implements target.Notifier: it returns once Notify was called since
// the previous Wait (uio event counter semantics: notifications coalesce).
func (k *Kernel) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-k.events:
		return nil
	}
}

// Kick implements target.Notifier: the kernel reaps completions.
func (k *Kernel) Kick() error {
	k.mu.Lock()
	k.reapLocked()
	k.mu.Unlock()
	k.cond.Broadcast()
	return nil
}

// Notify signals the device that entries were queued (uio_event_notify).
func (k *Kernel) Notify() {
	select {
	case k.events <- struct{}{}:
	default:
	}
}

// CorruptNextEntry makes the next queued command entry invalid in the way
// c describes.
func (k *Kernel) CorruptNextEntry(c Corruption) {
	k.mu.Lock()
	k.corrupt = c
	k.mu.Unlock()
}

// Queue writes a command entry into the ring without notifying the device
// (as the kernel does while the device is plugged). It returns ErrNoSpace
// when ring or data space is short until completions are reaped.
func (k *Kernel) Queue(cdb []byte, d Data) (*Pending, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := &Pending{k: k, done: make(chan struct{})}
	s, err := k.queueLocked(cdb, d, p)
	if err != nil {
		return nil, err
	}
	p.id = s.id
	return p, nil
}

// Submit queues one command (waiting for space if needed), notifies the
// device and waits for the completion. It fails the test on error.
func (k *Kernel) Submit(cdb []byte, d Data) Completion {
	k.t.Helper()
	return k.SubmitAll(Request{CDB: cdb, Data: d})[0]
}

// Request is one command for SubmitAll.
type Request struct {
	CDB  []byte
	Data Data
}

// SubmitAll queues every request before one notification (so the device
// sees them as one batch, as far as ring and data space allow), then waits
// for all completions, returned in request order.
func (k *Kernel) SubmitAll(reqs ...Request) []Completion {
	k.t.Helper()
	ps := make([]*Pending, len(reqs))
	for i, r := range reqs {
		for {
			p, err := k.Queue(r.CDB, r.Data)
			if err == nil {
				ps[i] = p
				break
			}
			if !errors.Is(err, ErrNoSpace) {
				k.t.Fatalf("targettest: queue request %d: %v", i, err)
			}
			k.Notify()
			if !k.waitProgress(10 * time.Second) {
				k.t.Fatalf("targettest: no ring space for request %d after 10s", i)
			}
		}
	}
	k.Notify()
	out := make([]Completion, len(reqs))
	for i, p := range ps {
		out[i] = p.Wait()
	}
	return out
}

// waitProgress waits until a Kick reaped something, or timeout.
func (k *Kernel) waitProgress(timeout time.Duration) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	start := k.lastCleaned
	deadline := time.Now().Add(timeout)
	t := time.AfterFunc(timeout, k.cond.Broadcast)
	defer t.Stop()
	for k.lastCleaned == start && k.broken == nil && !k.stopped {
		if time.Now().After(deadline) {
			return false
		}
		k.cond.Wait()
	}
	return k.lastCleaned != start
}

// Abort aborts outstanding commands as an ABORT TASK would: the kernel
// lists the ones still in the ring in a TMR entry (when tmr_notification is
// on) and notifies the device. Their completions report Aborted.
func (k *Kernel) Abort(ps ...*Pending) error { return k.TMR(target.TMRAbortTask, ps...) }

// TMR queues a task management notification of type typ listing the
// commands of ps that are still outstanding (tcmu_tmr_notify), and
// notifies the device.
func (k *Kernel) TMR(typ target.TMRType, ps ...*Pending) error {
	k.mu.Lock()
	var ids []uint16
	for _, p := range ps {
		if s := k.ids[p.id]; s != nil && s.pending == p {
			s.aborted = true
			ids = append(ids, p.id)
		}
	}
	if !k.tmrNotify || k.flags&target.FlagTMR == 0 {
		k.mu.Unlock()
		return nil
	}
	size := roundUp(tmrHdrSize+2*len(ids), 8)
	pos, err := k.reserveLocked(size)
	if err != nil {
		k.mu.Unlock()
		return err
	}
	e := k.entry(pos, size)
	clear(e)
	ne := binary.NativeEndian
	ne.PutUint32(e[0:], uint32(size)|opTMR)
	e[8] = byte(typ)
	ne.PutUint32(e[12:], uint32(len(ids)))
	for i, id := range ids {
		ne.PutUint16(e[tmrHdrSize+2*i:], id)
	}
	k.publishLocked(pos, size)
	k.mu.Unlock()
	k.Notify()
	return nil
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
		if d.in > 0 {
			if !s.pump {
				for j := range blk[:l] {
					blk[j] = poison
				}
			}
		} else {
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
		if uflags&target.UFlagKeepBuf != 0 {
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
	if uflags&target.UFlagUnknownOp != 0 {
		c.Status = scsi.StatusCheckCondition // and no sense is copied
		gather = false
	} else {
		valid := false
		if uflags&target.UFlagReadLen != 0 {
			c.ReadLen = ne.Uint32(e[12:])
		}
		if s.in && uflags&target.UFlagReadLen != 0 && k.flags&target.FlagReadLen != 0 && c.ReadLen != 0 {
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

// Pump pushes n copies of one command through the device as fast as ring
// and data space allow: it queues as many as fit, notifies once, and waits
// for reaps. Completions are checked (GOOD, no residual) but not kept and
// Data-In is not gathered, so the fake costs little and allocates nothing:
// it is the driver for benchmarks. It returns how many completed otherwise
// than GOOD without residual.
func (k *Kernel) Pump(cdb []byte, d Data, n int) (bad int, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	startDone, startBad := k.pumpDone, k.pumpBad
	queued := 0
	for k.pumpDone-startDone < n {
		q := 0
		for queued < n {
			if _, err := k.queueLocked(cdb, d, nil); err != nil {
				if errors.Is(err, ErrNoSpace) {
					break
				}
				return k.pumpBad - startBad, err
			}
			queued++
			q++
		}
		if q > 0 {
			k.Notify()
		}
		if k.pumpDone-startDone >= n {
			break
		}
		if k.broken != nil {
			return k.pumpBad - startBad, k.broken
		}
		if k.stopped {
			return k.pumpBad - startBad, fmt.Errorf("targettest: device stopped: %w", k.devErr)
		}
		k.cond.Wait()
	}
	return k.pumpBad - startBad, nil
}

// Serve starts a device for h over a new Kernel with the default Config.
func Serve(t testing.TB, h target.Handler) *Kernel {
	t.Helper()
	k := NewKernel(t, Config{})
	k.Serve(h)
	return k
}

// Serve starts a target.Device serving h on k in a new goroutine and stops
// it at the end of the test. A device failure fails the test unless
// WaitFailed was called. It logs through zaptest at Info level.
func (k *Kernel) Serve(h target.Handler) *target.Device {
	k.t.Helper()
	return k.ServeLogger(h, zaptest.NewLogger(k.t, zaptest.Level(zap.InfoLevel)))
}

// ServeLogger is Serve with a given logger (zap.NewNop() for benchmarks).
func (k *Kernel) ServeLogger(h target.Handler, log *zap.Logger) *target.Device {
	k.t.Helper()
	d, err := target.NewDevice(k.mem, k, h, log)
	if err != nil {
		k.t.Fatalf("targettest: NewDevice: %v", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	k.dev = d
	k.devDone = make(chan struct{})
	go func() {
		err := d.Run(ctx)
		k.mu.Lock()
		k.devErr, k.stopped = err, true
		k.mu.Unlock()
		k.cond.Broadcast()
		close(k.devDone)
	}()
	k.t.Cleanup(func() {
		cancel()
		<-k.devDone
		k.mu.Lock()
		err, ok := k.devErr, k.faultOK
		k.mu.Unlock()
		if err != nil && !ok {
			k.t.Errorf("targettest: device failed: %v", err)
		}
	})
	return d
}

// Device is the device Serve started.
func (k *Kernel) Device() *target.Device { return k.dev }

func (k *Kernel) deviceStats() any {
	if k.dev == nil {
		return nil
	}
	return k.dev.Stats()
}

// WaitFailed waits up to timeout for the served device to stop on its own
// and returns its error; a device failure is then expected and does not
// fail the test. It fails the test if the device is still running.
func (k *Kernel) WaitFailed(timeout time.Duration) error {
	k.t.Helper()
	k.mu.Lock()
	k.faultOK = true
	k.mu.Unlock()
	select {
	case <-k.devDone:
	case <-time.After(timeout):
		k.t.Fatalf("targettest: device still running after %v", timeout)
	}
	k.mu.Lock()
	defer k.mu.Unlock()
	return k.devErr
}
