package targettest

import (
	"encoding/binary"
	"sync/atomic"
	"unsafe"

	"github.com/vscsid/vscsid/target/tcmu"
)

// A raw mapping, for fakes of the kernel's configfs side (target's own
// tests) that hand a device its mapping themselves and play a few kernel
// actions on it by hand, where a Kernel would serve the whole ring.

// NewMailbox returns size bytes (8-byte aligned) laid out as
// tcmu_configure_device leaves a new device's mapping: a mailbox of
// version 2 with the capabilities flags, an empty command ring of
// ringSize bytes after it, the data area after that.
func NewMailbox(size int, flags uint16, ringSize uint32) []byte {
	words := make([]uint64, (size+7)/8)
	mem := unsafe.Slice((*byte)(unsafe.Pointer(&words[0])), size)
	ne := binary.NativeEndian
	ne.PutUint16(mem[0:], tcmu.MailboxVersion)
	ne.PutUint16(mem[2:], flags)
	ne.PutUint32(mem[4:], mbCmdrOff)
	ne.PutUint32(mem[8:], ringSize)
	return mem
}

func word(mem []byte, off int) *uint32 { return (*uint32)(unsafe.Pointer(&mem[off])) }

// Head and Tail load cmd_head and cmd_tail of a mapping.
func Head(mem []byte) uint32 { return atomic.LoadUint32(word(mem, mbHeadOff)) }

// Tail loads cmd_tail.
func Tail(mem []byte) uint32 { return atomic.LoadUint32(word(mem, mbTailOff)) }

// SetHead stores cmd_head, as the kernel does when it queues (or, with a
// bad value, as a broken kernel would).
func SetHead(mem []byte, head uint32) { atomic.StoreUint32(word(mem, mbHeadOff), head) }

// ResetRing is the kernel's action/reset_ring (tcmu_reset_ring) as far as
// the mapping shows it: cmd_head and cmd_tail back to 0.
func ResetRing(mem []byte) {
	atomic.StoreUint32(word(mem, mbHeadOff), 0)
	atomic.StoreUint32(word(mem, mbTailOff), 0)
}

// PutTestUnitReady writes a TEST UNIT READY command entry with cmd_id id
// and no data at ring offset pos, its CDB after the entry, and returns
// the entry's length; the caller moves cmd_head past it (SetHead).
func PutTestUnitReady(mem []byte, pos uint32, id uint16) uint32 {
	const n = entryBase + 8 // the entry and its 6-byte CDB, 8-byte aligned
	ne := binary.NativeEndian
	e := mem[mbCmdrOff+int(pos):]
	clear(e[:n])
	ne.PutUint32(e, n|opCmd)
	ne.PutUint16(e[4:], id)
	ne.PutUint64(e[24:], uint64(mbCmdrOff+int(pos)+entryBase)) // cdb_off
	return n
}

// Response reads the status and the sense buffer of the completed entry
// at ring offset pos.
func Response(mem []byte, pos uint32) (status byte, sense []byte) {
	e := mem[mbCmdrOff+int(pos):]
	return e[8], e[16 : 16+senseSize]
}
