package fault_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/scsi"
)

// TestConcurrentManagement changes rules and timing from other goroutines
// while commands run (run with -race).
func TestConcurrentManagement(t *testing.T) {
	p := &positioned{}
	d := newDevice(t, p, fault.Options{Commands: tapeCmds, Clock: &nopClock{}, CmdTimeout: 30 * time.Second, Seed: 1},
		"op=read;prob=0.3;sense=medium_error", "early_warning_after=1M")
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() { // the device loop
		buf := scsi.NewBuffer(make([]byte, 4096))
		for i := 0; ctx.Err() == nil; i++ {
			buf.Reset([][]byte{make([]byte, 4096)})
			op := byte(0x08)
			if i%2 == 0 {
				op = 0x0a
			}
			d.HandleCommand(ctx, &scsi.Command{CDB: tape6(op, false, 4096), Data: buf})
		}
	})
	rules := []fault.Rule{
		fault.MustParseRule("op=write;every=3;busy"),
		fault.MustParseRule("block=0+100;delay=1us"),
		fault.MustParseRule("op=read;recovered"),
	}
	timings := []fault.Timing{fault.MustParseTiming("model=dds"), fault.MustParseTiming("latency=1us;jitter=1us"), {}}
	for range 4 {
		wg.Go(func() {
			for i := range 300 {
				switch i % 6 {
				case 0:
					if err := d.SetRules(rules); err != nil {
						t.Error(err)
					}
				case 1:
					if id, err := d.AddRule(rules[i%3]); err == nil {
						_ = d.RemoveRule(id)
					}
				case 2:
					if err := d.SetTiming(timings[i%3]); err != nil {
						t.Error(err)
					}
				case 3:
					d.Clear()
				default:
					for _, st := range d.Injected() {
						_ = st.Rule.String()
					}
					_, _, _ = d.Rules(), d.Timing(), d.Stats()
				}
			}
		})
	}
	time.Sleep(50 * time.Millisecond)
	cancel()
	wg.Wait()
}

// nopClock never sleeps and never allocates.
type nopClock struct{ now time.Duration }

func (c *nopClock) Now() time.Duration { return c.now }

func (c *nopClock) Sleep(ctx context.Context, d time.Duration) error {
	c.now += d
	return ctx.Err()
}

// nop is the cheapest handler: GOOD, no data.
type nop struct{}

func (nop) HandleCommand(context.Context, *scsi.Command) scsi.Response { return scsi.Good }

// readGood fills the Data-In buffer, as a fake_rw READ does.
type readGood struct{}

func (readGood) HandleCommand(_ context.Context, cmd *scsi.Command) scsi.Response {
	cmd.Data.WriteZeros(cmd.Data.Len())
	return scsi.Good
}

func (readGood) Position() (int, uint64, uint64) { return 0, 5, 1 }

// TestZeroAlloc: the command path allocates nothing, for each action.
func TestZeroAlloc(t *testing.T) {
	for _, tc := range []struct {
		kind   scsi.CommandTable
		rules  []string
		timing string
		cdb    []byte
	}{
		{diskCmds, nil, "", rw10(0x28, 0, 8)},
		{diskCmds, []string{"op=write;busy", "lba=1000+10;sense=medium_error", "op=verify;every=2;task_set_full"}, "", rw10(0x28, 0, 8)},
		{diskCmds, []string{"op=read;lba=4+10;sense=medium_error"}, "", rw10(0x28, 0, 8)}, // prefix path
		{diskCmds, []string{"op=read;prob=0.5;recovered"}, "latency=1us;jitter=1us;dist=exp;rate=1GB/s", rw10(0x28, 0, 8)},
		{diskCmds, []string{"op=read;delay=1us", "op=read;timeout=1s"}, "", rw10(0x28, 0, 8)},
		{tapeCmds, []string{"block=0+10;file=1;sense=blank_check", "early_warning_after=1"}, "model=lto9", tape6(0x0a, false, 4096)},
		{tapeCmds, []string{"op=read;block=5;delay=1us"}, "model=dds", tape6(0x08, false, 4096)},
		{tapeCmds, nil, "model=dds", []byte{0x2b, 0, 0, 0, 0, 0x10, 0, 0, 0, 0}},
	} {
		d := newDevice(t, readGood{}, fault.Options{Commands: tc.kind, Clock: &nopClock{}, CmdTimeout: 30 * time.Second}, tc.rules...)
		if tc.timing != "" {
			if err := d.SetTiming(fault.MustParseTiming(tc.timing)); err != nil {
				t.Fatal(err)
			}
		}
		seg := [][]byte{make([]byte, 4096)}
		buf := scsi.NewBuffer()
		cmd := &scsi.Command{CDB: tc.cdb, Data: buf}
		ctx := context.Background()
		if n := testing.AllocsPerRun(200, func() {
			buf.Reset(seg)
			d.HandleCommand(ctx, cmd)
		}); n != 0 {
			t.Errorf("%v %q %q: %v allocs per command", tc.kind, tc.rules, tc.timing, n)
		}
	}
}

func benchHandler(b *testing.B, h fault.Handler, cdb []byte) {
	seg := [][]byte{make([]byte, 4096)}
	buf := scsi.NewBuffer()
	cmd := &scsi.Command{CDB: cdb, Data: buf}
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset(seg)
		h.HandleCommand(ctx, cmd)
	}
}

// BenchmarkWrapper compares the bare handler with the wrapper empty, with
// rules that do not match, with a filter that matches but does not fire,
// and with a timing model that adds no delay.
func BenchmarkWrapper(b *testing.B) {
	read := rw10(0x28, 0, 8)
	nopts := fault.Options{Clock: &nopClock{}}
	mk := func(o fault.Options, rules ...string) fault.Handler {
		o.Clock = &nopClock{}
		return newDevice(b, readGood{}, o, rules...)
	}
	b.Run("bare", func(b *testing.B) { benchHandler(b, readGood{}, read) })
	b.Run("empty", func(b *testing.B) { benchHandler(b, mk(nopts), read) })
	b.Run("4-rules-no-match", func(b *testing.B) {
		benchHandler(b, mk(nopts, "op=write;busy", "lba=100000+10;sense=medium_error", "op=verify;task_set_full", "op=0x35;delay=1ms"), read)
	})
	b.Run("match-no-fire", func(b *testing.B) {
		benchHandler(b, mk(nopts, "op=read;lba=0+100;every=1000000000;sense=medium_error"), read)
	})
	b.Run("prob-0.0", func(b *testing.B) {
		benchHandler(b, mk(fault.Options{Seed: 1}, "op=read;prob=0.000001;busy"), read)
	})
	b.Run("inject-medium-error", func(b *testing.B) {
		benchHandler(b, mk(nopts, "op=read;sense=medium_error"), read)
	})
	b.Run("rate-1TB/s", func(b *testing.B) {
		benchHandler(b, mk(fault.Options{Timing: fault.MustParseTiming("rate=1TB/s")}), read)
	})
	b.Run("tape-model-lto9", func(b *testing.B) {
		benchHandler(b, mk(fault.Options{Commands: tapeCmds, Timing: fault.MustParseTiming("model=lto9")}), tape6(0x08, false, 4096))
	})
}

// BenchmarkTrivial is the acceptance figure: the wrapper with nothing
// configured against the bare handler on a handler that does nothing.
func BenchmarkTrivial(b *testing.B) {
	b.Run("bare", func(b *testing.B) { benchHandler(b, nop{}, tur) })
	b.Run("wrapped", func(b *testing.B) { benchHandler(b, newDevice(b, nop{}, fault.Options{}), tur) })
}

// barrierClock's Sleep returns only once n sleeps are in progress at the
// same time (or fails after a while): commands whose delays overlap pass
// it, commands served one after another cannot.
type barrierClock struct {
	n       int
	mu      sync.Mutex
	waiting int
	release chan struct{}
}

func (c *barrierClock) Now() time.Duration { return 0 }

func (c *barrierClock) Sleep(context.Context, time.Duration) error {
	c.mu.Lock()
	c.waiting++
	if c.waiting == c.n {
		close(c.release)
	}
	c.mu.Unlock()
	select {
	case <-c.release:
		return nil
	case <-time.After(5 * time.Second):
		return errors.New("barrier: the other sleeps never came")
	}
}

// With Depth, the latency of that many commands overlaps (a disk's queue,
// scsi_debug's per-command delay) while the wrapped handler still sees one
// command at a time.
func TestDepthOverlapsDelays(t *testing.T) {
	const depth = 8
	clk := &barrierClock{n: depth, release: make(chan struct{})}
	inner := &serialChecker{}
	d, err := fault.New(inner, fault.Options{Commands: diskCmds, Depth: depth, Clock: clk, Timing: fault.MustParseTiming("latency=1ms")})
	if err != nil {
		t.Fatal(err)
	}
	if d.Concurrent() != depth {
		t.Fatalf("Concurrent() = %d", d.Concurrent())
	}
	var wg sync.WaitGroup
	res := make([]scsi.Response, depth)
	for i := range depth {
		wg.Go(func() {
			res[i] = d.HandleCommand(context.Background(), &scsi.Command{CDB: []byte{0x00, 0, 0, 0, 0, 0}})
		})
	}
	wg.Wait()
	for i, r := range res {
		if r.Status != scsi.StatusGood {
			t.Errorf("command %d: %v (its delay did not overlap the others')", i, r.Status)
		}
	}
	if n := inner.served.Load(); n != depth {
		t.Errorf("handler served %d commands, want %d", n, depth)
	}
	if inner.overlapped.Load() {
		t.Error("the wrapped handler ran two commands at once")
	}
}

func TestDepthRefused(t *testing.T) {
	for _, tc := range []struct {
		opts fault.Options
		want string
	}{
		{fault.Options{Commands: tapeCmds, Depth: 4}, "only a disk"},
		{fault.Options{Commands: changerCmds, Depth: 2}, "only a disk"},
		{fault.Options{Commands: diskCmds, Depth: fault.MaxDepth + 1}, "want 1.."},
		{fault.Options{Commands: diskCmds, Depth: -1}, "want 1.."},
	} {
		if _, err := fault.New(&serialChecker{}, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%+v: %v, want %q", tc.opts, err, tc.want)
		}
	}
}

// serialChecker is a handler that notices being entered twice at once.
type serialChecker struct {
	in, served atomic.Int32
	overlapped atomic.Bool
}

func (s *serialChecker) HandleCommand(context.Context, *scsi.Command) scsi.Response {
	if s.in.Add(1) > 1 {
		s.overlapped.Store(true)
	}
	time.Sleep(100 * time.Microsecond)
	s.in.Add(-1)
	s.served.Add(1)
	return scsi.Good
}
