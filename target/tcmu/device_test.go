package tcmu_test

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"
	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/targettest"
	"github.com/vscsid/vscsid/target/tcmu"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// pattern returns n bytes that differ from the fake kernel's poison.
func pattern(n int, seed byte) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = seed + byte(i*7)
		if b[i] == 0xa5 {
			b[i] = 0x5a
		}
	}
	return b
}

func read10(lba uint32, blocks uint16) []byte {
	return []byte{0x28, 0, byte(lba >> 24), byte(lba >> 16), byte(lba >> 8), byte(lba), 0, byte(blocks >> 8), byte(blocks), 0}
}

func write10(lba uint32, blocks uint16) []byte {
	c := read10(lba, blocks)
	c[0] = 0x2a
	return c
}

// memDisk is a tiny in-memory disk of 512-byte blocks: READ(10)/WRITE(10)
// only. It records the order in which it saw cmd opcodes.
type memDisk struct {
	mu   sync.Mutex
	data []byte
	seen []scsi.OpCode
}

func (m *memDisk) HandleCommand(_ context.Context, cmd *scsi.Command) scsi.Response {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.seen = append(m.seen, cmd.CDB.OpCode())
	off := int(cmd.CDB.Uint32(2)) * 512
	n := int(cmd.CDB.Uint16(7)) * 512
	if off+n > len(m.data) {
		return scsi.ResponseFor(scsi.ErrLBAOutOfRange)
	}
	switch cmd.CDB.OpCode() {
	case scsi.Read10:
		_, _ = cmd.Data.Write(m.data[off : off+n])
	case scsi.Write10:
		_, _ = cmd.Data.Read(m.data[off : off+n])
	default:
		return scsi.ResponseFor(scsi.ErrInvalidOpCode)
	}
	return scsi.Good
}

func TestReadWriteRoundTrip(t *testing.T) {
	for _, segs := range []int{1, 2, 3, 8} {
		t.Run(fmt.Sprintf("segments=%d", segs), func(t *testing.T) {
			disk := &memDisk{data: make([]byte, 1<<20)}
			k := targettest.Serve(t, disk)
			want := pattern(64<<10, byte(segs))
			c := k.Submit(write10(8, 128), targettest.DataOut(want).Segments(segs))
			if c.Status != scsi.StatusGood {
				t.Fatalf("WRITE(10): status %v sense % x", c.Status, c.Sense)
			}
			if !bytes.Equal(disk.data[8*512:8*512+len(want)], want) {
				t.Fatal("WRITE(10): data did not reach the handler intact")
			}
			c = k.Submit(read10(8, 128), targettest.DataIn(len(want)).Segments(segs))
			if c.Status != scsi.StatusGood || c.Flags != 0 || c.Residual != 0 {
				t.Fatalf("READ(10): status %v flags %#x residual %d", c.Status, c.Flags, c.Residual)
			}
			if !bytes.Equal(c.Data, want) {
				t.Fatal("READ(10): data differs from what was written")
			}
			st := k.Device().Stats()
			bucket := map[int]int{1: 0, 2: 1, 3: 2, 8: 3}[segs] // (2^(i-1), 2^i]
			if got := st.Segments.Counts; got[bucket] != 2 || st.Segments.Sum != float64(2*segs) {
				t.Errorf("segments histogram %v sum %v: want both commands with %d segments", got, st.Segments.Sum, segs)
			}
			if r, w := st.Transfer(tcmu.DirRead), st.Transfer(tcmu.DirWrite); r.Bytes != 64<<10 || w.Bytes != 64<<10 || r.Commands != 1 || w.Commands != 1 {
				t.Errorf("transfer stats read %+v write %+v", r, w)
			}
		})
	}
}

// fill is a handler that answers every command with a fixed response after
// writing w bytes of pattern Data-In.
type fill struct {
	w    int
	resp scsi.Response
}

func (f fill) HandleCommand(_ context.Context, cmd *scsi.Command) scsi.Response {
	_, _ = cmd.Data.Write(pattern(f.w, 1))
	return f.resp
}

var inquiry36 = []byte{0x12, 0, 0, 0, 36, 0}

func TestReadLen(t *testing.T) {
	ili := scsi.CheckCondition(scsi.Sense{Key: scsi.NoSense, ILI: true, Valid: true, Info: 4096 - 1000})
	tests := []struct {
		name      string
		noFlags   uint16
		w, n      int
		resp      scsi.Response
		wantData  []byte
		wantFlags uint8
		wantRL    uint32
	}{
		{"good full", 0, 36, 36, scsi.Good, pattern(36, 1), 0, 0},
		{"good short", 0, 10, 36, scsi.Good, pattern(10, 1), tcmu.UFlagReadLen, 10},
		{"good nothing written is zeroed", 0, 0, 36, scsi.Good, make([]byte, 36), 0, 0},
		{"check condition with data", 0, 1000, 4096, ili, pattern(1000, 1), tcmu.UFlagReadLen, 1000},
		{"check condition full data", 0, 512, 512, ili, pattern(512, 1), tcmu.UFlagReadLen, 512},
		{"check condition no data", 0, 0, 4096, ili, nil, 0, 0},
		{"no READ_LEN: good short is zero padded", tcmu.FlagReadLen, 10, 36, scsi.Good, append(pattern(10, 1), make([]byte, 26)...), 0, 0},
		{"no READ_LEN: check condition returns no data", tcmu.FlagReadLen, 1000, 4096, ili, nil, 0, 0},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			k := targettest.NewKernel(t, targettest.Config{NoFlags: tc.noFlags, Stale: 0xa5})
			k.Serve(fill{w: tc.w, resp: tc.resp})
			cdb := inquiry36
			if tc.n != 36 {
				cdb = read10(0, uint16(tc.n/512))
				if tc.n%512 != 0 {
					t.Fatal("bad test")
				}
			}
			c := k.Submit(cdb, targettest.DataIn(tc.n).Segments(2))
			if c.Status != tc.resp.Status {
				t.Fatalf("status %v, want %v", c.Status, tc.resp.Status)
			}
			if !bytes.Equal(c.Data, tc.wantData) {
				t.Errorf("data (%d bytes) % x..., want %d bytes % x...", len(c.Data), head(c.Data), len(tc.wantData), head(tc.wantData))
			}
			if c.Flags != tc.wantFlags || c.ReadLen != tc.wantRL {
				t.Errorf("uflags %#x read_len %d, want %#x %d", c.Flags, c.ReadLen, tc.wantFlags, tc.wantRL)
			}
			if c.Residual != tc.n-len(tc.wantData) {
				t.Errorf("residual %d, want %d", c.Residual, tc.n-len(tc.wantData))
			}
			if tc.resp.Status == scsi.StatusCheckCondition {
				want := tc.resp.Sense.AppendFixed(nil)
				if !bytes.Equal(c.Sense[:len(want)], want) || !allZero(c.Sense[len(want):]) {
					t.Errorf("sense % x, want % x then zeros", c.Sense, want)
				}
			} else if c.Sense != nil {
				t.Errorf("sense % x with status %v", c.Sense, c.Status)
			}
		})
	}
}

func head(b []byte) []byte { return b[:min(len(b), 16)] }

func allZero(b []byte) bool {
	for _, v := range b {
		if v != 0 {
			return false
		}
	}
	return true
}

func TestDescriptorSense(t *testing.T) {
	s := scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.InvalidFieldInCDB, Format: scsi.DescriptorFormat,
		Pointer: scsi.FieldPointer{Valid: true, CDB: true, Field: 2}}
	k := targettest.Serve(t, fill{resp: scsi.CheckCondition(s)})
	c := k.Submit([]byte{0x00, 0, 0, 0, 0, 0}, targettest.NoData)
	want := s.AppendDescriptor(nil)
	if c.Status != scsi.StatusCheckCondition || !bytes.Equal(c.Sense[:len(want)], want) || !allZero(c.Sense[len(want):]) {
		t.Fatalf("status %v sense % x, want descriptor sense % x", c.Status, c.Sense, want)
	}
	if c.SenseKey() != scsi.IllegalRequest || c.ASC() != scsi.InvalidFieldInCDB {
		t.Errorf("decoded %v/%v", c.SenseKey(), c.ASC())
	}
}

func TestCheckConditionWithoutSenseIsHardwareError(t *testing.T) {
	k := targettest.Serve(t, fill{resp: scsi.Response{Status: scsi.StatusCheckCondition}})
	c := k.Submit([]byte{0x00, 0, 0, 0, 0, 0}, targettest.NoData)
	if c.SenseKey() != scsi.HardwareError || c.ASC() != scsi.InternalTargetFailure {
		t.Fatalf("sense % x: want HARDWARE ERROR 44/00 instead of an empty sense", c.Sense)
	}
	if st := k.Device().Stats(); st.BadSense != 1 || st.CheckConditions[scsi.HardwareError] != 1 {
		t.Errorf("stats BadSense %d, CheckConditions %v", st.BadSense, st.CheckConditions)
	}
}

func TestRingWrapsWithPad(t *testing.T) {
	// A ring of 1000 bytes holds few 128-byte entries: every few commands
	// the kernel pads to the end and wraps.
	k := targettest.NewKernel(t, targettest.Config{RingSize: 1000})
	disk := &memDisk{data: make([]byte, 1<<20)}
	k.Serve(disk)
	for i := range 50 {
		want := pattern(4096, byte(i))
		if c := k.Submit(write10(uint32(i*8), 8), targettest.DataOut(want)); c.Status != scsi.StatusGood {
			t.Fatalf("write %d: %v", i, c.Status)
		}
		c := k.Submit(read10(uint32(i*8), 8), targettest.DataIn(4096))
		if c.Status != scsi.StatusGood || !bytes.Equal(c.Data, want) {
			t.Fatalf("read %d: status %v, data equal %v", i, c.Status, bytes.Equal(c.Data, want))
		}
	}
	if k.Pads() == 0 {
		t.Fatal("the ring never wrapped")
	}
	if st := k.Device().Stats(); st.Pads != uint64(k.Pads()) {
		t.Errorf("device saw %d pads, kernel wrote %d", st.Pads, k.Pads())
	}
}

func TestBatchWrapsWithPad(t *testing.T) {
	// Queue a batch bigger than what fits before the end of the ring.
	k := targettest.NewKernel(t, targettest.Config{RingSize: 2000})
	disk := &memDisk{data: make([]byte, 1<<20)}
	k.Serve(disk)
	for round := range 5 {
		var reqs []targettest.Request
		for i := range 10 {
			reqs = append(reqs, targettest.Request{CDB: write10(uint32(i*8), 8), Data: targettest.DataOut(pattern(4096, byte(round+i)))})
		}
		for i, c := range k.SubmitAll(reqs...) {
			if c.Status != scsi.StatusGood {
				t.Fatalf("round %d cmd %d: %v", round, i, c.Status)
			}
		}
	}
	if k.Pads() == 0 {
		t.Fatal("the ring never wrapped")
	}
	// A batch is observed when the loop finds the ring empty, which may be
	// after a mid-batch kick already completed its last command (the
	// kick interval passes quickly under -race): wait for it.
	st := k.Device().Stats()
	for deadline := time.Now().Add(5 * time.Second); st.Batch.Sum != 50 && time.Now().Before(deadline); st = k.Device().Stats() {
		time.Sleep(time.Millisecond)
	}
	if st.Batch.Count == 0 || st.Batch.Sum != 50 {
		t.Errorf("batch histogram %+v: want 50 commands over the wakeups", st.Batch)
	}
}

// gated is a concurrent handler: each command blocks until the test
// releases its LBA.
type gated struct {
	workers int
	mu      sync.Mutex
	gates   map[uint32]chan struct{}
	started chan uint32
	served  atomic.Int32
}

func newGated(workers int) *gated {
	return &gated{workers: workers, gates: map[uint32]chan struct{}{}, started: make(chan uint32, 256)}
}

func (g *gated) gate(lba uint32) chan struct{} {
	g.mu.Lock()
	defer g.mu.Unlock()
	c, ok := g.gates[lba]
	if !ok {
		c = make(chan struct{})
		g.gates[lba] = c
	}
	return c
}

func (g *gated) Concurrent() int { return g.workers }

func (g *gated) HandleCommand(ctx context.Context, cmd *scsi.Command) scsi.Response {
	lba := cmd.CDB.Uint32(2)
	g.started <- lba
	select {
	case <-g.gate(lba):
	case <-ctx.Done():
		return scsi.CheckCondition(scsi.Sense{Key: scsi.AbortedCommand})
	}
	g.served.Add(1)
	b := make([]byte, cmd.Data.Len())
	for i := range b {
		b[i] = byte(lba)
	}
	_, _ = cmd.Data.Write(b)
	return scsi.Good
}

func TestOutOfOrderCompletion(t *testing.T) {
	// A small ring so that the batch spans a PAD: completions must steal
	// slots across it.
	k := targettest.NewKernel(t, targettest.Config{RingSize: 1400})
	g := newGated(4)
	d := k.Serve(g)
	if d.Info().Workers != 4 {
		t.Fatalf("workers %d, want 4 (kernel offers OOOC)", d.Info().Workers)
	}
	for round := range 6 {
		var ps []*targettest.Pending
		for i := range 4 {
			p, err := k.Queue(read10(uint32(round*4+i), 1), targettest.DataIn(512))
			if err != nil {
				t.Fatal(err)
			}
			ps = append(ps, p)
		}
		k.Notify()
		for range 4 {
			<-g.started
		}
		// Release in reverse ring order: each completion lands in the
		// slot of the oldest command.
		for i := 3; i >= 0; i-- {
			close(g.gate(uint32(round*4 + i)))
			c := ps[i].Wait()
			if c.Status != scsi.StatusGood || len(c.Data) != 512 || c.Data[0] != byte(round*4+i) {
				t.Fatalf("round %d cmd %d: status %v data[0] %d", round, i, c.Status, c.Data[0])
			}
			for j := range i {
				if ps[j].Done() {
					t.Fatalf("round %d: cmd %d completed before its handler returned", round, j)
				}
			}
		}
	}
	if k.Pads() == 0 {
		t.Fatal("the ring never wrapped during out-of-order completion")
	}
}

func TestOutOfOrderNeedsKernelSupport(t *testing.T) {
	k := targettest.NewKernel(t, targettest.Config{NoFlags: tcmu.FlagOOOC})
	g := newGated(4)
	d := k.Serve(g)
	if d.Info().Workers != 0 {
		t.Fatalf("workers %d without CAP_OOOC", d.Info().Workers)
	}
	p1, _ := k.Queue(read10(1, 1), targettest.DataIn(512))
	p2, _ := k.Queue(read10(2, 1), targettest.DataIn(512))
	k.Notify()
	if lba := <-g.started; lba != 1 {
		t.Fatalf("first command served: lba %d", lba)
	}
	select {
	case lba := <-g.started:
		t.Fatalf("lba %d started while lba 1 was still being served", lba)
	case <-time.After(50 * time.Millisecond):
	}
	close(g.gate(2))
	close(g.gate(1))
	if c := p1.Wait(); c.Data[0] != 1 {
		t.Fatal("cmd 1 data")
	}
	if c := p2.Wait(); c.Data[0] != 2 {
		t.Fatal("cmd 2 data")
	}
}

func TestConcurrentStopCompletesInFlight(t *testing.T) {
	k := targettest.NewKernel(t, targettest.Config{})
	g := newGated(2)
	d, err := tcmu.NewDevice(k.Memory(), k, g, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error)
	go func() { done <- d.Run(ctx) }()
	p, _ := k.Queue(read10(7, 1), targettest.DataIn(512))
	k.Notify()
	<-g.started
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run: %v", err)
	}
	c := p.Wait()
	if c.Status != scsi.StatusCheckCondition || c.SenseKey() != scsi.AbortedCommand {
		t.Fatalf("in-flight command at stop: status %v sense % x, want the handler's answer", c.Status, c.Sense)
	}
}

// blocker blocks on LBA 1 until released and records what it served.
type blocker struct {
	release chan struct{}
	started chan struct{}
	mu      sync.Mutex
	lbas    []uint32
}

func (b *blocker) HandleCommand(_ context.Context, cmd *scsi.Command) scsi.Response {
	lba := cmd.CDB.Uint32(2)
	b.mu.Lock()
	b.lbas = append(b.lbas, lba)
	b.mu.Unlock()
	if lba == 1 {
		close(b.started)
		<-b.release
	}
	cmd.Data.WriteZeros(cmd.Data.Len())
	return scsi.Good
}

func TestTMRAbortsQueuedCommand(t *testing.T) {
	for _, notify := range []bool{true, false} {
		t.Run(fmt.Sprintf("tmr_notification=%v", notify), func(t *testing.T) {
			k := targettest.NewKernel(t, targettest.Config{NoTMRNotify: !notify})
			b := &blocker{release: make(chan struct{}), started: make(chan struct{})}
			k.Serve(b)
			p1, _ := k.Queue(read10(1, 1), targettest.DataIn(512))
			p2, _ := k.Queue(read10(2, 1), targettest.DataIn(512))
			p3, _ := k.Queue(read10(3, 1), targettest.DataIn(512))
			k.Notify()
			<-b.started // the device is busy with LBA 1; 2 and 3 wait in the ring
			if err := k.Abort(p2); err != nil {
				t.Fatal(err)
			}
			close(b.release)
			c1, c2, c3 := p1.Wait(), p2.Wait(), p3.Wait()
			if c1.Status != scsi.StatusGood || c3.Status != scsi.StatusGood || c1.Aborted || c3.Aborted {
				t.Fatalf("unaborted commands: %+v %+v", c1, c3)
			}
			if !c2.Aborted {
				t.Fatal("aborted command not reported aborted by the kernel")
			}
			st := k.Device().Stats()
			if notify {
				if c2.Status != scsi.StatusTaskAborted {
					t.Errorf("aborted command status %v, want TASK ABORTED", c2.Status)
				}
				if !slices.Equal(b.lbas, []uint32{1, 3}) {
					t.Errorf("handler served LBAs %v, want [1 3]: the aborted command must not run", b.lbas)
				}
				if st.Aborted != 1 || len(st.TMRs) != 1 || st.TMRs[0] != (tcmu.TMRCount{Type: tcmu.TMRAbortTask, Count: 1}) {
					t.Errorf("stats Aborted %d TMRs %v", st.Aborted, st.TMRs)
				}
				if len(st.Commands) != 1 || st.Commands[0].Count != 2 {
					t.Errorf("commands %+v: the aborted one never ran and is not counted", st.Commands)
				}
			} else if !slices.Equal(b.lbas, []uint32{1, 2, 3}) || st.Aborted != 0 {
				t.Errorf("without notification the device cannot know: served %v, aborted %d", b.lbas, st.Aborted)
			}
		})
	}
}

func TestTMRForRunningCommandCompletesNormally(t *testing.T) {
	k := targettest.NewKernel(t, targettest.Config{})
	b := &blocker{release: make(chan struct{}), started: make(chan struct{})}
	k.Serve(b)
	p1, _ := k.Queue(read10(1, 1), targettest.DataIn(512))
	k.Notify()
	<-b.started
	if err := k.TMR(tcmu.TMRLUNReset, p1); err != nil {
		t.Fatal(err)
	}
	close(b.release)
	if c := p1.Wait(); c.Status != scsi.StatusGood || !c.Aborted {
		t.Fatalf("running command: %+v", c)
	}
	// The ring keeps working after the TMR entry.
	if c := k.Submit(read10(2, 1), targettest.DataIn(512)); c.Status != scsi.StatusGood {
		t.Fatalf("after TMR: %v", c.Status)
	}
	if st := k.Device().Stats(); st.Aborted != 0 || len(st.TMRs) != 1 || st.TMRs[0].Type != tcmu.TMRLUNReset {
		t.Errorf("stats: aborted %d TMRs %v", st.Aborted, st.TMRs)
	}
}

func TestTMRAloneIsReaped(t *testing.T) {
	// A TMR listing no outstanding command still takes ring space: the
	// device must pass it and kick, or the kernel never reclaims the space.
	k := targettest.NewKernel(t, targettest.Config{})
	k.Serve(fill{w: 512})
	p, _ := k.Queue(read10(1, 1), targettest.DataIn(512))
	k.Notify()
	p.Wait()
	if err := k.TMR(tcmu.TMRLUNReset, p); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for k.RingUsed() != 0 {
		if time.Now().After(deadline) {
			t.Fatalf("TMR entry never reaped: %d ring bytes in use", k.RingUsed())
		}
		time.Sleep(time.Millisecond)
	}
}

func TestCorruptEntryFailsOnlyItsDevice(t *testing.T) {
	for _, tc := range []struct {
		name string
		c    targettest.Corruption
	}{
		{"zero length", targettest.CorruptZeroLength},
		{"length past head", targettest.CorruptLengthPastHead},
		{"iov in command ring", targettest.CorruptIOVOutside},
		{"iov past end", targettest.CorruptIOVPastEnd},
		{"iov count", targettest.CorruptIOVCount},
		{"cdb_off", targettest.CorruptCDBOffset},
	} {
		t.Run(tc.name, func(t *testing.T) {
			bad := targettest.Serve(t, fill{w: 512})
			good := targettest.Serve(t, fill{w: 512})
			if c := bad.Submit(read10(0, 1), targettest.DataIn(512)); c.Status != scsi.StatusGood {
				t.Fatal("first command")
			}
			bad.CorruptNextEntry(tc.c)
			p, err := bad.Queue(read10(0, 1), targettest.DataIn(512))
			if err != nil {
				t.Fatal(err)
			}
			bad.Notify()
			err = bad.WaitFailed(5 * time.Second)
			if !errors.Is(err, tcmu.ErrRingCorrupt) {
				t.Fatalf("device error %v, want ErrRingCorrupt", err)
			}
			t.Logf("device failed: %v", err)
			if p.Done() {
				t.Error("a command from a corrupt entry was completed")
			}
			if !bad.Device().Stats().Failed {
				t.Error("stats do not report the failure")
			}
			for i := range 3 {
				if c := good.Submit(read10(0, 1), targettest.DataIn(512)); c.Status != scsi.StatusGood {
					t.Fatalf("other device, command %d: %v", i, c.Status)
				}
			}
		})
	}
}

func TestUnknownOpcodeIsFlaggedAndSkipped(t *testing.T) {
	k := targettest.Serve(t, fill{w: 512})
	k.CorruptNextEntry(targettest.CorruptUnknownOp)
	p, err := k.Queue(read10(0, 1), targettest.DataIn(512))
	if err != nil {
		t.Fatal(err)
	}
	k.Notify()
	if c := k.Submit(read10(0, 1), targettest.DataIn(512)); c.Status != scsi.StatusGood {
		t.Fatalf("command after the unknown entry: %v", c.Status)
	}
	c := p.Wait()
	if c.Flags&tcmu.UFlagUnknownOp == 0 || c.Status != scsi.StatusCheckCondition {
		t.Fatalf("unknown entry: flags %#x status %v, want UNKNOWN_OP and (kernel-made) CHECK CONDITION", c.Flags, c.Status)
	}
	if st := k.Device().Stats(); st.UnknownEntries != 1 {
		t.Errorf("UnknownEntries %d", st.UnknownEntries)
	}
}

type namedFill struct{ fill }

func (namedFill) CommandID(cdb scsi.CDB) scsi.CommandID { return scsi.CommandID(cdb.OpCode()) }

func (namedFill) CommandName(id scsi.CommandID) string {
	if id == scsi.CommandID(scsi.Read10) {
		return "read_10"
	}
	return ""
}

func TestStats(t *testing.T) {
	k := targettest.Serve(t, namedFill{fill{w: 12288}})
	for range 3 {
		k.Submit(read10(0, 24), targettest.DataIn(12288).Segments(3))
	}
	ua := scsi.CheckCondition(scsi.Sense{Key: scsi.UnitAttention, ASC: 0x2900})
	k2 := targettest.Serve(t, fill{resp: ua})
	k2.Submit([]byte{0x00, 0, 0, 0, 0, 0}, targettest.NoData)

	st := k.Device().Stats()
	if len(st.Commands) != 1 {
		t.Fatalf("commands %+v", st.Commands)
	}
	cs := st.Commands[0]
	if cs.OpCode != scsi.Read10 || cs.ID != scsi.CommandID(scsi.Read10) || cs.Name != "read_10" || cs.Count != 3 || cs.Duration.Count != 3 || cs.CheckConditions != 0 {
		t.Errorf("command stats %+v", cs)
	}
	if len(cs.Duration.Counts) != len(tcmu.DurationBounds)+1 {
		t.Errorf("duration buckets %d", len(cs.Duration.Counts))
	}
	r := st.Transfer(tcmu.DirRead)
	// 12288 bytes falls in the (8192, 16384] bucket: index 5.
	if r.Commands != 3 || r.Bytes != 3*12288 || r.Size.Counts[5] != 3 || r.Size.Sum != 3*12288 {
		t.Errorf("read transfer %+v", r)
	}
	// 3 segments: bucket (2, 4], index 2.
	if st.Segments.Counts[2] != 3 || st.Segments.Sum != 9 {
		t.Errorf("segments %+v", st.Segments)
	}
	if st.InFlight != 0 || st.Kicks == 0 || st.Wakeups == 0 || st.RingHighWater == 0 {
		t.Errorf("gauges: inflight %d kicks %d wakeups %d ring high water %d", st.InFlight, st.Kicks, st.Wakeups, st.RingHighWater)
	}
	st2 := k2.Device().Stats()
	if st2.CheckConditions[scsi.UnitAttention] != 1 || st2.UnitAttentions != 1 || st2.Commands[0].CheckConditions != 1 || st2.Transfer(tcmu.DirNone).Commands != 1 ||
		len(st2.SenseCodes) != 1 || st2.SenseCodes[0] != (tcmu.SenseCode{ASC: 0x2900, Count: 1}) {
		t.Errorf("unit attention stats %+v", st2)
	}
}

// The tape indications of ASC 00h are counted by qualifier, the other
// codes by ASC: a filemark (00/01) and end of data (00/05) stay apart from
// each other and from 00/00, and a 28/01 counts as 28/00.
func TestStatsSenseCodes(t *testing.T) {
	for _, tt := range []struct {
		asc  scsi.ASC
		want scsi.ASC
	}{{0x0001, 0x0001}, {0x0005, 0x0005}, {0x0000, 0x0000}, {0x0017, 0x0000}, {0x2801, 0x2800}} {
		k := targettest.Serve(t, fill{resp: scsi.CheckCondition(scsi.Sense{Key: scsi.NoSense, ASC: tt.asc, ILI: true})})
		k.Submit([]byte{0x00, 0, 0, 0, 0, 0}, targettest.NoData)
		k.Submit([]byte{0x00, 0, 0, 0, 0, 0}, targettest.NoData)
		st := k.Device().Stats()
		if len(st.SenseCodes) != 1 || st.SenseCodes[0] != (tcmu.SenseCode{ASC: tt.want, Count: 2}) {
			t.Errorf("ASC %04x: sense codes %+v, want %04x twice", uint16(tt.asc), st.SenseCodes, uint16(tt.want))
		}
	}
}

func TestNewDeviceValidatesMailbox(t *testing.T) {
	k := targettest.NewKernel(t, targettest.Config{})
	mem := k.Memory()
	mem[0] = 1 // version 1
	if _, err := tcmu.NewDevice(mem, k, fill{}, zap.NewNop()); !errors.Is(err, tcmu.ErrRingCorrupt) {
		t.Fatalf("version 1 mailbox: %v", err)
	}
	if _, err := tcmu.NewDevice(mem[:64], k, fill{}, zap.NewNop()); !errors.Is(err, tcmu.ErrRingCorrupt) {
		t.Fatalf("short mapping: %v", err)
	}
}

type panicky struct{}

func (panicky) HandleCommand(context.Context, *scsi.Command) scsi.Response { panic("handler bug") }

func (panicky) Concurrent() int { return 2 }

type panickyInOrder struct{}

func (panickyInOrder) HandleCommand(context.Context, *scsi.Command) scsi.Response {
	panic("handler bug")
}

func TestHandlerPanicFailsDevice(t *testing.T) {
	for _, h := range []target.Handler{panicky{}, panickyInOrder{}} {
		k := targettest.Serve(t, h)
		if _, err := k.Queue(inquiry36, targettest.DataIn(36)); err != nil {
			t.Fatal(err)
		}
		k.Notify()
		var pe *tcmu.PanicError
		if err := k.WaitFailed(5 * time.Second); !errors.As(err, &pe) || pe.Value != "handler bug" || len(pe.Stack) == 0 {
			t.Fatalf("%T: device error %v, want a PanicError with a stack", h, err)
		}
	}
}

type closer struct {
	fill
	closed atomic.Bool
}

func (c *closer) Close() error { c.closed.Store(true); return nil }

func TestRunClosesHandler(t *testing.T) {
	k := targettest.NewKernel(t, targettest.Config{})
	h := &closer{}
	d, err := tcmu.NewDevice(k.Memory(), k, h, zap.NewNop())
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := d.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if !h.closed.Load() {
		t.Error("handler not closed")
	}
	if err := d.Run(ctx); err == nil {
		t.Error("second Run succeeded")
	}
}

type resettable struct {
	fill
	resets atomic.Int32
}

func (r *resettable) Reset() { r.resets.Add(1) }

func TestLUNResetReachesResetter(t *testing.T) {
	k := targettest.NewKernel(t, targettest.Config{})
	h := &resettable{}
	k.Serve(h)
	if err := k.TMR(tcmu.TMRAbortTask); err != nil {
		t.Fatal(err)
	}
	if err := k.TMR(tcmu.TMRLUNReset); err != nil {
		t.Fatal(err)
	}
	// A command after the TMRs makes the device scan them.
	if c := k.Submit(read10(1, 1), targettest.DataIn(512)); c.Status != scsi.StatusGood {
		t.Fatalf("status %v", c.Status)
	}
	if got := h.resets.Load(); got != 1 {
		t.Fatalf("Reset called %d times, want 1 (LUN RESET only, not ABORT TASK)", got)
	}
}

// A batch of fast commands is reaped with a few kicks, not one per
// command (the rule in kickDue; kickEvery is 16).
func TestBatchKicksByCount(t *testing.T) {
	k := targettest.NewKernel(t, targettest.Config{})
	disk := &memDisk{data: make([]byte, 1<<20)}
	k.Serve(disk)
	var reqs []targettest.Request
	for i := range 64 {
		reqs = append(reqs, targettest.Request{CDB: write10(uint32(i), 1), Data: targettest.DataOut(pattern(512, byte(i)))})
	}
	before := k.Device().Stats().Kicks
	for i, c := range k.SubmitAll(reqs...) {
		if c.Status != scsi.StatusGood {
			t.Fatalf("cmd %d: %v", i, c.Status)
		}
	}
	st := k.Device().Stats()
	if kicks := st.Kicks - before; kicks == 0 || kicks > 32 {
		t.Errorf("64 commands in %d wake-ups took %d kicks: want more than none and at most half as many as commands", st.Wakeups, kicks)
	}
}

// TestDebugLogsEveryCommand: --log.level debug logs each command with
// its opcode and status; at info nothing per command is logged.
func TestDebugLogsEveryCommand(t *testing.T) {
	for _, lvl := range []zapcore.Level{zap.DebugLevel, zap.InfoLevel} {
		core, logs := observer.New(lvl)
		k := targettest.NewKernel(t, targettest.Config{})
		k.ServeLogger(&memDisk{data: make([]byte, 1<<20)}, zap.New(core))
		if c := k.Submit(read10(0, 8), targettest.DataIn(4096)); c.Status != scsi.StatusGood {
			t.Fatalf("READ(10): %v", c.Status)
		}
		got := logs.FilterMessage("scsi command").All()
		switch {
		case lvl == zap.DebugLevel && (len(got) != 1 || got[0].ContextMap()["opcode"] != uint8(0x28)):
			t.Errorf("debug: %d lines %v, want one for READ(10)", len(got), got)
		case lvl == zap.InfoLevel && len(got) != 0:
			t.Errorf("info: %d per-command lines", len(got))
		}
	}
}
