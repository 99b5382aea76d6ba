package targettest

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"unsafe"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/tcmu"
)

// recTB records Errorf instead of failing, to test that the fake fails
// the test when the device breaks the ring.
type recTB struct {
	testing.TB
	mu   sync.Mutex
	errs []string
}

func (r *recTB) Errorf(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.errs = append(r.errs, fmt.Sprintf(format, args...))
}

func (r *recTB) Helper() {}

var ne = binary.NativeEndian

func read10() []byte { return []byte{0x28, 0, 0, 0, 0, 0, 0, 0, 8, 0} }

// entryAt returns the entry at ring offset pos.
func entryAt(k *Kernel, pos uint32) []byte { return k.mem[mbCmdrOff+int(pos):] }

func setTail(k *Kernel, v uint32) {
	atomic.StoreUint32((*uint32)(unsafe.Pointer(&k.mem[mbTailOff])), v)
}

func TestEntryLayout(t *testing.T) {
	k := NewKernel(t, Config{})
	if got := ne.Uint16(k.mem[0:]); got != 2 {
		t.Errorf("version %d", got)
	}
	if ne.Uint32(k.mem[4:]) != 128 || ne.Uint32(k.mem[8:]) != 64<<10-128 || ne.Uint16(k.mem[2:]) != AllFlags {
		t.Errorf("mailbox % x", k.mem[:16])
	}
	// 5 iovecs: base = 48+5·16 = 128 > 112, CDB of 10 → 16 bytes.
	p, err := k.Queue(read10(), DataIn(5*4096).Segments(5))
	if err != nil {
		t.Fatal(err)
	}
	e := entryAt(k, 0)
	if lenOp := ne.Uint32(e); lenOp != 144|opCmd {
		t.Errorf("len_op %#x, want %#x", lenOp, 144|opCmd)
	}
	if id := ne.Uint16(e[4:]); id != 1 || p.ID() != 1 {
		t.Errorf("cmd_id %d", id)
	}
	if n := ne.Uint32(e[8:]); n != 5 {
		t.Errorf("iov_cnt %d", n)
	}
	if off := ne.Uint64(e[24:]); off != 128+128 || k.mem[off] != 0x28 {
		t.Errorf("cdb_off %d", off)
	}
	prevEnd := uint64(0)
	for i := range 5 {
		base, l := ne.Uint64(e[48+16*i:]), ne.Uint64(e[56+16*i:])
		if l != 4096 || base < uint64(k.dataOff) || base == prevEnd {
			t.Errorf("iov %d: base %#x len %d (previous ended at %#x)", i, base, l, prevEnd)
		}
		prevEnd = base + l
	}
	if h := atomic.LoadUint32(k.head); h != 144 {
		t.Errorf("cmd_head %d", h)
	}
	// Lowest free blocks first: 1, 3, 5, 7 (the gaps left above) are not
	// adjacent, so 4 iovecs; the last one is partial.
	if _, err := k.Queue(read10(), DataIn(3*4096+100)); err != nil {
		t.Fatal(err)
	}
	e = entryAt(k, 144)
	if ne.Uint32(e[8:]) != 4 || ne.Uint64(e[48:]) != uint64(k.dataOff+4096) || ne.Uint64(e[56+16*3:]) != 100 {
		t.Errorf("iovs: cnt %d first %#x last len %d", ne.Uint32(e[8:]), ne.Uint64(e[48:]), ne.Uint64(e[56+16*3:]))
	}
	if ids := ne.Uint16(e[4:]); ids != 2 {
		t.Errorf("second cmd_id %d", ids)
	}
	// In a fresh area, adjacent blocks merge into one iovec.
	k2 := NewKernel(t, Config{})
	if _, err := k2.Queue(read10(), DataIn(3*4096+100)); err != nil {
		t.Fatal(err)
	}
	e = entryAt(k2, 0)
	if ne.Uint32(e[8:]) != 1 || ne.Uint64(e[56:]) != 3*4096+100 {
		t.Errorf("merged iov: cnt %d len %d", ne.Uint32(e[8:]), ne.Uint64(e[56:]))
	}
}

func TestPadAtWrap(t *testing.T) {
	k := NewKernel(t, Config{RingSize: 400})
	for range 3 { // 3·128 = 384; the 4th needs a PAD of 16 bytes first
		if _, err := k.Queue(read10(), DataIn(512)); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := k.Queue(read10(), DataIn(512)); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("4th command: %v, want ErrNoSpace (ring full)", err)
	}
	// Complete the first command by hand, as a device would: not enough
	// (the 4th needs 128 bytes plus a 16-byte PAD, and one byte stays
	// free), then the second.
	setTail(k, 128)
	if err := k.Kick(); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Queue(read10(), DataIn(512)); !errors.Is(err, ErrNoSpace) {
		t.Fatalf("with 143 bytes free: %v, want ErrNoSpace", err)
	}
	setTail(k, 256)
	if err := k.Kick(); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Queue(read10(), DataIn(512)); err != nil {
		t.Fatalf("after reaping: %v", err)
	}
	if k.Pads() != 1 || ne.Uint32(entryAt(k, 384)) != 16|opPad || atomic.LoadUint32(k.head) != 128 {
		t.Errorf("pads %d, pad entry %#x, head %d", k.Pads(), ne.Uint32(entryAt(k, 384)), atomic.LoadUint32(k.head))
	}
}

func TestDoubleCompletionBreaksRing(t *testing.T) {
	rec := &recTB{TB: t}
	k := NewKernel(rec, Config{})
	a, _ := k.Queue(read10(), DataIn(512))
	if _, err := k.Queue(read10(), DataIn(512)); err != nil {
		t.Fatal(err)
	}
	// Write A's cmd_id into both slots: A is completed twice and B never.
	ne.PutUint16(entryAt(k, 128)[4:], a.ID())
	setTail(k, 256)
	if err := k.Kick(); err != nil {
		t.Fatal(err)
	}
	if !a.Done() {
		t.Error("first completion of A not reaped")
	}
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "not found") {
		t.Fatalf("errors %q, want one 'cmd_id not found, ring is broken'", rec.errs)
	}
	if _, err := k.Queue(read10(), DataIn(512)); !errors.Is(err, ErrBroken) {
		t.Errorf("queue on a broken ring: %v", err)
	}
}

func TestTailOffBoundaryBreaksRing(t *testing.T) {
	rec := &recTB{TB: t}
	k := NewKernel(rec, Config{})
	if _, err := k.Queue(read10(), DataIn(512)); err != nil {
		t.Fatal(err)
	}
	if _, err := k.Queue(read10(), DataIn(512)); err != nil {
		t.Fatal(err)
	}
	setTail(k, 64) // inside the first entry
	if err := k.Kick(); err != nil {
		t.Fatal(err)
	}
	if len(rec.errs) != 1 || !strings.Contains(rec.errs[0], "entry boundary") {
		t.Fatalf("errors %q", rec.errs)
	}
}

func TestReapGathersLikeTheKernel(t *testing.T) {
	for _, c := range []struct {
		name    string
		status  scsi.Status
		uflags  uint8
		readLen uint32
		noFlags uint16
		data    int
	}{
		{"good", scsi.StatusGood, 0, 0, 0, 4096},
		{"good read_len", scsi.StatusGood, tcmu.UFlagReadLen, 100, 0, 100},
		{"read_len 0 is unset", scsi.StatusGood, tcmu.UFlagReadLen, 0, 0, 4096},
		{"read_len beyond length clamps", scsi.StatusGood, tcmu.UFlagReadLen, 9999, 0, 4096},
		{"check condition", scsi.StatusCheckCondition, 0, 0, 0, 0},
		{"check condition read_len", scsi.StatusCheckCondition, tcmu.UFlagReadLen, 10, 0, 10},
		{"old kernel ignores read_len", scsi.StatusCheckCondition, tcmu.UFlagReadLen, 10, tcmu.FlagReadLen, 0},
		{"unknown op", scsi.StatusGood, tcmu.UFlagUnknownOp, 0, 0, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			k := NewKernel(t, Config{NoFlags: c.noFlags, Stale: 0xa5})
			p, _ := k.Queue(read10(), DataIn(4096))
			e := entryAt(k, 0)
			e[7], e[8] = c.uflags, byte(c.status)
			ne.PutUint32(e[12:], c.readLen)
			e[16] = 0x70
			setTail(k, 128)
			if err := k.Kick(); err != nil {
				t.Fatal(err)
			}
			got := p.Wait()
			if len(got.Data) != c.data || got.Residual != 4096-c.data {
				t.Errorf("data %d bytes residual %d, want %d", len(got.Data), got.Residual, c.data)
			}
			for _, b := range got.Data {
				if b != 0xa5 {
					t.Fatal("gathered bytes are not the data area's")
				}
			}
			wantSense := c.status == scsi.StatusCheckCondition && c.uflags&tcmu.UFlagUnknownOp == 0
			if (got.Sense != nil) != wantSense || (wantSense && (len(got.Sense) != 96 || got.Sense[0] != 0x70)) {
				t.Errorf("sense % x", got.Sense)
			}
			if c.uflags&tcmu.UFlagUnknownOp != 0 && got.Status != scsi.StatusCheckCondition {
				t.Errorf("UNKNOWN_OP status %v", got.Status)
			}
		})
	}
}

func TestDataOutReachesDataArea(t *testing.T) {
	k := NewKernel(t, Config{BlockSize: 512})
	out := make([]byte, 1300)
	for i := range out {
		out[i] = byte(i)
	}
	if _, err := k.Queue([]byte{0x2a, 0, 0, 0, 0, 0, 0, 0, 3, 0}, DataOut(out).Segments(3)); err != nil {
		t.Fatal(err)
	}
	e := entryAt(k, 0)
	n := int(ne.Uint32(e[8:]))
	var got []byte
	for i := range n {
		base, l := ne.Uint64(e[48+16*i:]), ne.Uint64(e[56+16*i:])
		got = append(got, k.mem[base:base+l]...)
	}
	if n != 3 || string(got) != string(out) {
		t.Errorf("%d iovecs, data equal %v", n, string(got) == string(out))
	}
}
