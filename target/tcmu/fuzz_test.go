package tcmu_test

import (
	"context"
	"encoding/binary"
	"errors"
	"testing"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/targettest"
	"github.com/vscsid/vscsid/target/tcmu"
)

const fuzzRing = 1200 // cmdr_size of the fuzzed mapping

var errStop = errors.New("stop")

// oneShot lets the device drain the ring once, then stops it.
type oneShot struct{}

func (oneShot) Wait(context.Context) error { return errStop }
func (oneShot) Kick() error                { return nil }

// scribble answers with data and sense so that completions are written.
func scribble(_ context.Context, cmd *scsi.Command) scsi.Response {
	cmd.Data.Discard(cmd.Data.Len() / 2)
	cmd.Data.WriteZeros(cmd.Data.Len() / 3)
	if cmd.CDB.OpCode()&1 == 1 {
		return scsi.CheckCondition(scsi.Sense{Key: scsi.MediumError, ILI: true, Valid: true, Info: -5})
	}
	return scsi.Good
}

// seedRing returns mailbox and ring bytes written by the fake kernel:
// commands with several iovecs, a PAD at the wrap and a TMR entry.
func seedRing(f *testing.F) (mb, ring []byte) {
	k := targettest.NewKernel(f, targettest.Config{RingSize: fuzzRing, DataSize: 64 << 10})
	var ps []*targettest.Pending
	for i := range 9 {
		d := targettest.DataIn(4096 * (i%3 + 1)).Segments(i%3 + 1)
		if i%2 == 1 {
			d = targettest.DataOut(make([]byte, 512*(i+1)))
		}
		p, err := k.Queue([]byte{byte(0x28 + 2*(i%2)), 0, 0, 0, 0, byte(i), 0, 0, 1, 0}, d)
		if err != nil {
			break
		}
		ps = append(ps, p)
	}
	if err := k.Abort(ps[1], ps[2]); err != nil {
		f.Fatal(err)
	}
	mem := k.Memory()
	return append([]byte(nil), mem[:128]...), append([]byte(nil), mem[128:128+fuzzRing]...)
}

// FuzzRing feeds arbitrary mailbox and ring bytes to a device: it must fail
// with ErrRingCorrupt or serve, never panic (a panic would surface as a
// PanicError: out-of-bounds accesses are caught as such).
func FuzzRing(f *testing.F) {
	mb, ring := seedRing(f)
	head := binary.NativeEndian.Uint32(mb[12:])
	f.Add(mb, ring, head, uint32(0))
	f.Add(mb, ring, head, uint32(1000))
	f.Add([]byte(nil), ring, uint32(0), uint32(0))
	f.Add(mb[:16], ring[:200], uint32(256), uint32(128))
	// The mapping a new kernel hands out, and the one every input is
	// served from, reset from it first: a new fake kernel per input cost
	// more than serving the input (600 KB of its bookkeeping to clear).
	cfg := targettest.Config{RingSize: fuzzRing, DataSize: 64 << 10}
	blank, mem := targettest.NewKernel(f, cfg).Memory(), targettest.NewKernel(f, cfg).Memory()
	f.Fuzz(func(t *testing.T, mbox, ringBytes []byte, head, tail uint32) {
		copy(mem, blank)
		copy(mem[:128], mbox)
		copy(mem[128:128+fuzzRing], ringBytes)
		binary.NativeEndian.PutUint32(mem[12:], head)
		binary.NativeEndian.PutUint32(mem[64:], tail)
		d, err := tcmu.NewDevice(mem, oneShot{}, scsi.HandlerFunc(scribble), zap.NewNop())
		if err != nil {
			if !errors.Is(err, tcmu.ErrRingCorrupt) {
				t.Fatalf("NewDevice: %v", err)
			}
			return
		}
		err = d.Run(context.Background())
		var pe *tcmu.PanicError
		if errors.As(err, &pe) {
			t.Fatalf("device panicked: %v\n%s", pe.Value, pe.Stack)
		}
		if !errors.Is(err, tcmu.ErrRingCorrupt) && !errors.Is(err, errStop) {
			t.Fatalf("Run: %v", err)
		}
	})
}
