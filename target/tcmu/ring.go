package tcmu

import (
	"encoding/binary"
	"errors"
	"fmt"
	"sync/atomic"
	"unsafe"

	"github.com/vscsid/vscsid/scsi"
)

// ErrRingCorrupt is wrapped by every error that reports a mailbox or ring
// entry the kernel could not have written. Such an error fails the device
// that owns the ring, never the process.
var ErrRingCorrupt = errors.New("tcmu ring corrupt")

// ne is the byte order of the kernel structs in the mmap (see abi.go).
var ne = binary.NativeEndian

// ring is a view of one TCMU mmap: mailbox, command ring and data area, in
// the style of cilium/ebpf's ringbuf reader. It does no I/O and never
// panics on bad bytes: every offset and length read from the shared memory
// is checked before use.
//
// cmd_head is read with an atomic load (the kernel publishes it with
// smp_store_release) and cmd_tail is published with an atomic store, so
// everything we wrote to an entry is visible to the kernel before the tail
// moves past it. Both words are 4-byte aligned inside a page-aligned mmap.
type ring struct {
	mem      []byte
	version  uint16
	flags    uint16
	cmdrOff  uint32 // offset of the command ring in mem
	cmdrSize uint32 // bytes; not a power of two
	dataOff  uint64 // start of the data area in mem (cmdrOff + cmdrSize)
	head     *uint32
	tail     *uint32
	zero     *scsi.ZeroPages // which data-area pages are known to be zero
}

// newRing validates the mailbox in mem and returns a view over it.
func newRing(mem []byte) (*ring, error) {
	if len(mem) < mbSize {
		return nil, fmt.Errorf("%w: mapping of %d bytes is smaller than the %d-byte mailbox", ErrRingCorrupt, len(mem), mbSize)
	}
	if uintptr(unsafe.Pointer(&mem[0]))%4 != 0 {
		return nil, fmt.Errorf("%w: mapping is not 4-byte aligned", ErrRingCorrupt)
	}
	r := &ring{
		mem:      mem,
		version:  ne.Uint16(mem[mbVersionOff:]),
		flags:    ne.Uint16(mem[mbFlagsOff:]),
		cmdrOff:  ne.Uint32(mem[mbCmdrOffOff:]),
		cmdrSize: ne.Uint32(mem[mbCmdrSizeOff:]),
		head:     (*uint32)(unsafe.Pointer(&mem[mbCmdHeadOff])),
		tail:     (*uint32)(unsafe.Pointer(&mem[mbCmdTailOff])),
	}
	if r.version != MailboxVersion {
		return nil, fmt.Errorf("%w: mailbox version %d, want %d", ErrRingCorrupt, r.version, MailboxVersion)
	}
	if r.cmdrOff < mbCmdTailOff+4 || r.cmdrOff%opAlign != 0 {
		return nil, fmt.Errorf("%w: cmdr_off %d overlaps the mailbox or is not %d-byte aligned", ErrRingCorrupt, r.cmdrOff, opAlign)
	}
	if r.cmdrSize < 2*cmdEntrySize || r.cmdrSize%opAlign != 0 {
		return nil, fmt.Errorf("%w: cmdr_size %d is too small or not %d-byte aligned", ErrRingCorrupt, r.cmdrSize, opAlign)
	}
	r.dataOff = uint64(r.cmdrOff) + uint64(r.cmdrSize)
	if r.dataOff > uint64(len(mem)) {
		return nil, fmt.Errorf("%w: command ring [%d,%d) exceeds the %d-byte mapping", ErrRingCorrupt, r.cmdrOff, r.dataOff, len(mem))
	}
	if _, err := r.loadHead(); err != nil {
		return nil, err
	}
	if _, err := r.loadTail(); err != nil {
		return nil, err
	}
	// Every page starts unknown: a ring taken over from an earlier
	// instance holds whatever its commands left.
	r.zero = scsi.NewZeroPages(len(mem) - int(r.dataOff))
	return r, nil
}

// loadHead returns cmd_head (acquire).
func (r *ring) loadHead() (uint32, error) {
	h := atomic.LoadUint32(r.head)
	if h >= r.cmdrSize || h%opAlign != 0 {
		return 0, fmt.Errorf("%w: cmd_head %d outside ring of %d bytes or not %d-byte aligned", ErrRingCorrupt, h, r.cmdrSize, opAlign)
	}
	return h, nil
}

// loadTail returns cmd_tail as the mailbox holds it (used once, at start:
// afterwards the device is the only writer and keeps its own copy).
func (r *ring) loadTail() (uint32, error) {
	t := atomic.LoadUint32(r.tail)
	if t >= r.cmdrSize || t%opAlign != 0 {
		return 0, fmt.Errorf("%w: cmd_tail %d outside ring of %d bytes or not %d-byte aligned", ErrRingCorrupt, t, r.cmdrSize, opAlign)
	}
	return t, nil
}

// storeTail publishes cmd_tail (release).
func (r *ring) storeTail(t uint32) { atomic.StoreUint32(r.tail, t) }

// used is the number of ring bytes from pos up to head.
func (r *ring) used(pos, head uint32) uint32 {
	if head >= pos {
		return head - pos
	}
	return r.cmdrSize - pos + head
}

// next returns the ring offset after an entry of length n at pos.
func (r *ring) next(pos, n uint32) uint32 {
	pos += n
	if pos >= r.cmdrSize {
		pos -= r.cmdrSize
	}
	return pos
}

// abs is the mmap offset of ring offset pos.
func (r *ring) abs(pos uint32) uint64 { return uint64(r.cmdrOff) + uint64(pos) }

// header validates the entry header at ring offset pos, which has avail
// ring bytes up to cmd_head, and returns its opcode and length. An entry is
// never split across the end of the ring: the kernel pads instead.
func (r *ring) header(pos, avail uint32) (op uint8, length uint32, err error) {
	if avail < hdrSize {
		return 0, 0, fmt.Errorf("%w: entry at ring offset %d: only %d bytes before cmd_head", ErrRingCorrupt, pos, avail)
	}
	lenOp := ne.Uint32(r.mem[r.abs(pos)+hdrLenOpOff:])
	op, length = uint8(lenOp&opMask), lenOp&^opMask
	switch {
	case length == 0:
		return 0, 0, fmt.Errorf("%w: entry at ring offset %d: zero length (len_op %#x)", ErrRingCorrupt, pos, lenOp)
	case uint64(pos)+uint64(length) > uint64(r.cmdrSize):
		return 0, 0, fmt.Errorf("%w: entry at ring offset %d: length %d crosses the end of the %d-byte ring", ErrRingCorrupt, pos, length, r.cmdrSize)
	case length > avail:
		return 0, 0, fmt.Errorf("%w: entry at ring offset %d: length %d extends past cmd_head (%d bytes queued)", ErrRingCorrupt, pos, length, avail)
	}
	return op, length, nil
}

// op returns the opcode and length of an entry already validated by header.
func (r *ring) op(pos uint32) (op uint8, length uint32) {
	lenOp := ne.Uint32(r.mem[r.abs(pos)+hdrLenOpOff:])
	return uint8(lenOp & opMask), lenOp &^ opMask
}

func (r *ring) cmdID(pos uint32) uint16 { return ne.Uint16(r.mem[r.abs(pos)+hdrCmdIDOff:]) }

func (r *ring) setUFlags(pos uint32, f uint8) { r.mem[r.abs(pos)+hdrUFlagsOff] = f }

// complete writes a response into the command entry at pos, which the
// caller has validated as a command entry (so it is at least cmdEntrySize
// bytes long). With out-of-order completion the entry may belong to another
// command: the kernel looks the command up by the cmd_id stored here.
// sense is written only with CHECK CONDITION (the kernel copies it only
// then); its unused tail is zeroed.
func (r *ring) complete(pos uint32, id uint16, status uint8, uflags uint8, readLen uint32, sense []byte) {
	e := r.mem[r.abs(pos) : r.abs(pos)+cmdEntrySize]
	ne.PutUint16(e[hdrCmdIDOff:], id)
	e[hdrUFlagsOff] = uflags
	e[rspStatusOff] = status
	e[rspStatusOff+1], e[rspStatusOff+2], e[rspStatusOff+3] = 0, 0, 0
	ne.PutUint32(e[rspReadLenOff:], readLen)
	if sense != nil {
		n := copy(e[rspSenseOff:rspSenseOff+SenseBufferSize], sense)
		clear(e[rspSenseOff+n : rspSenseOff+SenseBufferSize])
	}
}
