package fault_test

import (
	"context"
	"encoding/binary"
	"math"
	"slices"
	"testing"
	"time"

	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/scsi"
)

func timed(t *testing.T, h fault.Handler, kind scsi.CommandTable, timing string, cmdTimeout time.Duration, rules ...string) (*fault.Device, *fakeClock) {
	t.Helper()
	clk := &fakeClock{}
	d := newDevice(t, h, fault.Options{Commands: kind, Clock: clk, CmdTimeout: cmdTimeout, Seed: 7, Timing: fault.MustParseTiming(timing)}, rules...)
	return d, clk
}

func sum(ds []time.Duration) (s time.Duration) {
	for _, d := range ds {
		s += d
	}
	return s
}

func TestLatency(t *testing.T) {
	d, clk := timed(t, &recorder{}, diskCmds, "latency=2ms", 0)
	for range 3 {
		run(d, tur, 0)
	}
	if s := clk.take(); !slices.Equal(s, []time.Duration{2 * time.Millisecond, 2 * time.Millisecond, 2 * time.Millisecond}) {
		t.Errorf("slept %v", s)
	}
	st := d.Stats()
	if st.Delays.Count != 3 || math.Abs(st.Delays.Sum-0.006) > 1e-9 || st.Delays.Counts[6] != 3 { // 2ms is in (1.024ms, 4.096ms]
		t.Errorf("delay histogram %+v", st.Delays)
	}
}

func TestJitter(t *testing.T) {
	samples := func(seed uint64, timing string) []time.Duration {
		clk := &fakeClock{}
		d := newDevice(t, &recorder{}, fault.Options{Clock: clk, Seed: seed, Timing: fault.MustParseTiming(timing)})
		for range 4000 {
			run(d, tur, 0)
		}
		return clk.take()
	}
	u := samples(7, "latency=1ms;jitter=1ms")
	for _, s := range u {
		if s < time.Millisecond || s >= 2*time.Millisecond {
			t.Fatalf("uniform jitter gave %v, want [1ms, 2ms)", s)
		}
	}
	if mean := sum(u) / time.Duration(len(u)); mean < 1480*time.Microsecond || mean > 1520*time.Microsecond {
		t.Errorf("uniform mean %v, want about 1.5ms", mean)
	}
	if !slices.Equal(u, samples(7, "latency=1ms;jitter=1ms")) {
		t.Error("same seed, different jitter")
	}
	if slices.Equal(u, samples(8, "latency=1ms;jitter=1ms")) {
		t.Error("different seeds, same jitter")
	}
	e := samples(7, "jitter=100us;dist=exp;jitter_max=500us")
	for _, s := range e {
		if s > 500*time.Microsecond {
			t.Fatalf("exponential jitter %v above jitter_max", s)
		}
	}
	// Truncated at 5 means: mean 100us × (1 − e^-5) ≈ 99.3us.
	if mean := sum(e) / time.Duration(len(e)); mean < 93*time.Microsecond || mean > 106*time.Microsecond {
		t.Errorf("exponential mean %v, want about 99us", mean)
	}
}

func TestTokenBucket(t *testing.T) {
	d, clk := timed(t, &recorder{}, diskCmds, "rate=1MB/s;burst=4KiB", 0)
	for range 10 {
		run(d, rw10(0x28, 0, 128), 64<<10)
	}
	// 640 KiB at 1 MB/s, less the 4 KiB burst.
	want := time.Duration(float64(10*(64<<10)-4096) / 1e6 * float64(time.Second))
	if got := sum(clk.take()); got < want || got > want+time.Microsecond {
		t.Errorf("slept %v for 640KiB, want %v", got, want)
	}
	// An idle second refills the bucket: the next command waits for its
	// own bytes less the burst only.
	clk.now += time.Second
	run(d, rw10(0x28, 0, 128), 64<<10)
	if got, want := sum(clk.take()), time.Duration(float64(64<<10-4096)/1e6*float64(time.Second)); got < want || got > want+time.Microsecond {
		t.Errorf("after idling: slept %v, want %v", got, want)
	}
	// Commands without data are not held up by the rate.
	run(d, tur, 0)
	if s := clk.take(); len(s) != 0 {
		t.Errorf("TEST UNIT READY slept %v", s)
	}
}

func TestCap(t *testing.T) {
	for _, tc := range []struct {
		cmdTimeout time.Duration
		rule       string
		timing     string
		want       time.Duration
		clamped    uint64
	}{
		{3 * time.Second, "delay=5s", "", 2 * time.Second, 1},                            // 3s − 1s headroom
		{3 * time.Second, "delay=1s", "latency=1500ms", 2 * time.Second, 1},              // rules and timing add up
		{3 * time.Second, "delay=1s", "latency=1s", 2 * time.Second, 0},                  // exactly the cap
		{time.Second, "delay=5s", "", 500 * time.Millisecond, 1},                         // 1s − 0.5s
		{0, "delay=5s", "", 5 * time.Second, 0},                                          // cmd_time_out 0: no cap
		{2 * time.Second, "op=0x01;delay=1ms", "model=custom;rewind=5s", time.Second, 1}, // the tape model too
	} {
		var h fault.Handler = &recorder{}
		kind := diskCmds
		if tc.timing != "" && tc.timing[0] == 'm' {
			h, kind = &positioned{}, tapeCmds
		}
		d, clk := timed(t, h, kind, tc.timing, tc.cmdTimeout, tc.rule)
		cdb := rw10(0x28, 0, 1)
		if kind == tapeCmds {
			cdb = []byte{0x01, 0, 0, 0, 0, 0} // REWIND
		}
		run(d, cdb, 512)
		if got := sum(clk.take()); got != tc.want {
			t.Errorf("%v %q %q: slept %v, want %v", tc.cmdTimeout, tc.rule, tc.timing, got, tc.want)
		}
		if st := d.Stats(); st.Clamped != tc.clamped {
			t.Errorf("%v %q %q: clamped %d, want %d", tc.cmdTimeout, tc.rule, tc.timing, st.Clamped, tc.clamped)
		}
		if want := tc.cmdTimeout - min(time.Second, tc.cmdTimeout/2); d.MaxDelay() != want {
			t.Errorf("MaxDelay %v, want %v", d.MaxDelay(), want)
		}
	}
}

// TestCancelledDelay: a device that stops cuts delays short; a command not
// yet run answers BUSY and does not run.
func TestCancelledDelay(t *testing.T) {
	rec := &recorder{}
	d, _ := timed(t, rec, diskCmds, "latency=1s", 0)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	r := d.HandleCommand(ctx, &scsi.Command{CDB: tur, Data: scsi.NewBuffer()})
	if r.Status != scsi.StatusBusy || len(rec.calls) != 0 || d.Stats().Interrupted != 1 {
		t.Errorf("%+v, %d calls, %+v", r, len(rec.calls), d.Stats())
	}
}

// throughput runs n tape commands back to back (no host think time) and
// returns the modelled time per byte.
func throughput(t *testing.T, timing string, cdb []byte, size, n int) time.Duration {
	d, clk := timed(t, &positioned{}, tapeCmds, timing, 0)
	for range n {
		if r, _ := run(d, cdb, size); r.Status != scsi.StatusGood {
			t.Fatalf("%+v", r)
		}
	}
	return clk.now / time.Duration(n*size/1024) // per KiB
}

// TestTapeSmallBlocks: a DAT72 reading 1 KiB fixed blocks one
// command each (direct I/O, no read-ahead in st) pays the per-command
// overhead every time (1,000,000 commands took about 5 minutes), while 32
// KiB blocks stream at the drive's rate (6.6 MB/s on compressible data;
// the figures of the mailing-list thread "st try_direct_io", 2006).
func TestTapeSmallBlocks(t *testing.T) {
	const dds = "model=dds;rate=6.6MB/s"
	small := throughput(t, dds, tape6(0x08, true, 1), 1024, 1000)
	large := throughput(t, dds, tape6(0x08, false, 32<<10), 32<<10, 100)
	if small < 295*time.Microsecond || small > 305*time.Microsecond {
		t.Errorf("1 KiB reads: %v per KiB, want the 300us overhead", small)
	}
	if want := time.Duration(1024 * int64(time.Second) / 6_600_000); large < want || large > want+time.Microsecond {
		t.Errorf("32 KiB reads: %v per KiB, want %v (6.6 MB/s)", large, want)
	}
	if float64(small)/float64(large) < 1.9 {
		t.Errorf("1 KiB blocks %v/KiB vs 32 KiB %v/KiB: want about twice as slow", small, large)
	}
	// A fast drive punishes small blocks much more.
	small = throughput(t, "model=lto9", tape6(0x0a, false, 1024), 1024, 1000)
	large = throughput(t, "model=lto9", tape6(0x0a, false, 256<<10), 256<<10, 100)
	if small < 40*large {
		t.Errorf("LTO-9 writes: 1 KiB %v/KiB vs 256 KiB %v/KiB", small, large)
	}
}

// TestTapeWriteBuffer: writes complete once buffered; a full buffer waits
// for the tape; WRITE FILEMARKS waits for the buffer to be written out;
// a tape that ran dry repositions, which the host sees only when the
// buffer fills.
func TestTapeWriteBuffer(t *testing.T) {
	const kib16 = time.Duration(16384 * 1000) // 16 KiB at 1 MB/s, in ns
	d, clk := timed(t, &positioned{}, tapeCmds, "model=custom;rate=1MB/s;buffer=64KiB;reposition=2s", 0)
	write := func() time.Duration {
		run(d, tape6(0x0a, false, 16<<10), 16<<10)
		return sum(clk.take())
	}
	for i := 1; i <= 4; i++ {
		if s := write(); s != 0 {
			t.Fatalf("write %d slept %v, want 0 (buffered)", i, s)
		}
	}
	for i := 5; i <= 7; i++ {
		if s := write(); s != kib16 {
			t.Fatalf("write %d slept %v, want %v (buffer full: tape rate)", i, s, kib16)
		}
	}
	run(d, tape6(0x10, false, 1), 0) // WRITE FILEMARKS, IMMED=0
	if s := sum(clk.take()); s != 4*kib16 {
		t.Errorf("WRITE FILEMARKS slept %v, want %v (64 KiB written out)", s, 4*kib16)
	}
	// After a deliberate stop the tape starts without a reposition.
	if s := write(); s != 0 {
		t.Errorf("write after WRITE FILEMARKS slept %v", s)
	}
	clk.now += time.Second // the tape runs dry: streaming breaks
	for i := 1; i <= 4; i++ {
		if s := write(); s != 0 {
			t.Fatalf("write %d after the underrun slept %v, want 0 (the buffer is empty)", i, s)
		}
	}
	if s := write(); s != 2*time.Second+kib16 {
		t.Errorf("write filling the buffer slept %v, want the 2s reposition + %v", s, kib16)
	}
}

// TestTapeRateOnMediumBytes: with a drive that compresses 4:1 the tape
// rate applies to the quarter of the data that reaches the medium, so a
// stream of writes goes four times as fast as the rate.
func TestTapeRateOnMediumBytes(t *testing.T) {
	perWrite := func(h fault.Handler) time.Duration {
		d, clk := timed(t, h, tapeCmds, "model=custom;rate=1MB/s;buffer=64KiB", 0)
		for range 8 { // fill the buffer
			run(d, tape6(0x0a, false, 64<<10), 64<<10)
		}
		clk.take()
		run(d, tape6(0x0a, false, 64<<10), 64<<10)
		return sum(clk.take())
	}
	plain := perWrite(&positioned{})
	packed := perWrite(&compressing{ratio: 4})
	if want := time.Duration(65536 * 1000); plain != want {
		t.Errorf("plain: a 64 KiB write with a full buffer slept %v, want %v (1 MB/s)", plain, want)
	}
	if want := time.Duration(16384 * 1000); packed != want {
		t.Errorf("4:1 compression: a 64 KiB write slept %v, want %v (16 KiB at 1 MB/s)", packed, want)
	}
}

// TestTapeReadAhead: reads wait for the tape; a slow host finds the data
// read ahead, and the tape repositions after filling the buffer.
func TestTapeReadAhead(t *testing.T) {
	const kib16 = time.Duration(16384 * 1000)
	d, clk := timed(t, &positioned{}, tapeCmds, "model=custom;rate=1MB/s;buffer=64KiB;reposition=1s", 0)
	read := func() time.Duration {
		run(d, tape6(0x08, false, 16<<10), 16<<10)
		return sum(clk.take())
	}
	if s := read(); s != kib16 {
		t.Fatalf("first read slept %v, want %v", s, kib16)
	}
	clk.now += time.Second // the tape fills the buffer and stops
	for i := 1; i <= 4; i++ {
		if s := read(); s != 0 {
			t.Fatalf("read %d slept %v, want 0 (read ahead)", i, s)
		}
	}
	if s := read(); s != time.Second+kib16 {
		t.Errorf("read past the read-ahead slept %v, want the 1s reposition + %v", s, kib16)
	}
	// A change of direction drops the read-ahead and starts afresh.
	if s := sum(clk.take()); s != 0 {
		t.Error(s)
	}
	run(d, tape6(0x0a, false, 16<<10), 16<<10)
	if s := sum(clk.take()); s != 0 {
		t.Errorf("write after reads slept %v", s)
	}
}

// TestTapeMechanics: load, unload, rewind (back over what was written) and
// locate (over the distance), IMMED, and no cost when the drive refused.
func TestTapeMechanics(t *testing.T) {
	p := &positioned{}
	p.onCmd = func(c scsi.CDB) {
		if c.OpCode() == scsi.Locate10 {
			p.object = uint64(binary.BigEndian.Uint32(c[3:7]))
		}
	}
	d, clk := timed(t, p, tapeCmds, "model=custom;rewind=1s;search=1GB/s;load=10s;unload=2s;locate=500ms", 0)
	step := func(cdb []byte, n int) time.Duration {
		run(d, cdb, n)
		return sum(clk.take())
	}
	for range 100 {
		step(tape6(0x0a, false, 1<<20), 1<<20) // no rate: instantaneous
	}
	if s := step([]byte{0x01, 0, 0, 0, 0, 0}, 0); s != time.Second+time.Duration(100<<20) {
		t.Errorf("REWIND after 100 MiB slept %v, want 1s + 100MiB at 1GB/s", s)
	}
	if s := step([]byte{0x1b, 0, 0, 0, 1, 0}, 0); s != 10*time.Second {
		t.Errorf("LOAD slept %v", s)
	}
	if s := step([]byte{0x1b, 0, 0, 0, 0, 0}, 0); s != 3*time.Second {
		t.Errorf("UNLOAD at BOT slept %v, want rewind 1s + unload 2s", s)
	}
	// LOCATE to object 1000 with 1 MiB blocks seen: 500ms + 1000 MiB at 1 GB/s.
	locate := []byte{0x2b, 0, 0, 0, 0, 0x03, 0xe8, 0, 0, 0}
	want := 500*time.Millisecond + time.Duration(1000*(1<<20)) // ns per byte = 1
	if s := step(locate, 0); s < want-time.Duration(1000*(1<<20)/5) || s > want {
		// avgBlock is an average of what was moved: 1 MiB here, up to rounding.
		t.Errorf("LOCATE 0→1000 slept %v, want about %v", s, want)
	}
	// REWIND IMMED returns at once; the next command that needs the
	// mechanism waits for it.
	if s := step([]byte{0x01, 1, 0, 0, 0, 0}, 0); s != 0 {
		t.Errorf("REWIND IMMED slept %v", s)
	}
	if s := step([]byte{0x01, 0, 0, 0, 0, 0}, 0); s < 2*time.Second {
		t.Errorf("REWIND after REWIND IMMED slept %v, want the first one's rest and its own 1s", s)
	}
	// A drive that refuses (NOT READY) does not move.
	p.resp = scsi.CheckCondition(scsi.Sense{Key: scsi.NotReady, ASC: scsi.MediumNotPresent})
	if s := step([]byte{0x01, 0, 0, 0, 0, 0}, 0); s != 0 {
		t.Errorf("refused REWIND slept %v", s)
	}
}

// TestRobotTiming: on a changer, MOVE MEDIUM and POSITION TO ELEMENT take
// move=, EXCHANGE MEDIUM two moves, INITIALIZE ELEMENT STATUS inventory=;
// a refused move and the other commands take nothing; everything is cut
// inside cmd_time_out; the keys are refused on a disk or a tape drive.
func TestRobotTiming(t *testing.T) {
	rec := &recorder{}
	d, clk := timed(t, rec, changerCmds, "move=2s;inventory=10s", 30*time.Second)
	step := func(cdb []byte) time.Duration {
		run(d, cdb, 0)
		return sum(clk.take())
	}
	move := []byte{0xa5, 0, 0, 0, 0x10, 0, 0, 1, 0, 0, 0, 0}
	for _, tt := range []struct {
		cdb  []byte
		want time.Duration
	}{
		{move, 2 * time.Second},
		{[]byte{0xa6, 0, 0, 0, 0x10, 0, 0x10, 1, 0x10, 0, 0, 0}, 4 * time.Second},
		{[]byte{0x2b, 0, 0, 0, 0x10, 0, 0, 0, 0, 0}, 2 * time.Second},
		{[]byte{0x07, 0, 0, 0, 0, 0}, 10 * time.Second},
		{[]byte{0x37, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 10 * time.Second},
		{[]byte{0xb8, 0x10, 0, 0, 0xff, 0xff, 0, 0, 0x10, 0, 0, 0}, 0},
		{tur, 0},
	} {
		if s := step(tt.cdb); s != tt.want {
			t.Errorf("% x slept %v, want %v", tt.cdb, s, tt.want)
		}
	}
	rec.resp = scsi.CheckCondition(scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.MediumSourceElementEmpty})
	if s := step(move); s != 0 {
		t.Errorf("refused move slept %v", s)
	}
	// An inventory longer than cmd_time_out is cut inside it.
	d, clk = timed(t, &recorder{}, changerCmds, "inventory=1m", 10*time.Second)
	run(d, []byte{0x07, 0, 0, 0, 0, 0}, 0)
	if s := sum(clk.take()); s != 9*time.Second {
		t.Errorf("inventory=1m with cmd_time_out 10s slept %v, want 9s", s)
	}
	for _, kind := range []scsi.CommandTable{diskCmds, tapeCmds} {
		dv := newDevice(t, &recorder{}, fault.Options{Commands: kind})
		if err := dv.SetTiming(fault.MustParseTiming("move=1s")); err == nil {
			t.Errorf("move= accepted on a %v", kind)
		}
	}
	if _, err := fault.ParseTiming("model=lto9;move=1s"); err == nil {
		t.Error("move= accepted with a tape model")
	}
	if s := fault.MustParseTiming("inventory=5s;move=1.5s").String(); s != "move=1.5s;inventory=5s" {
		t.Errorf("String() = %q", s)
	}
}

func TestSetTiming(t *testing.T) {
	rec := &recorder{}
	clk := &fakeClock{}
	d := newDevice(t, rec, fault.Options{Clock: clk})
	if err := d.SetTiming(fault.MustParseTiming("latency=1ms")); err != nil {
		t.Fatal(err)
	}
	if d.Timing().Latency != time.Millisecond {
		t.Errorf("Timing() = %+v", d.Timing())
	}
	run(d, tur, 0)
	if err := d.SetTiming(fault.Timing{Model: "nope"}); err == nil {
		t.Error("SetTiming accepted an unknown model")
	}
	if err := d.SetTiming(fault.Timing{}); err != nil {
		t.Fatal(err)
	}
	run(d, tur, 0)
	if s := clk.take(); !slices.Equal(s, []time.Duration{time.Millisecond}) {
		t.Errorf("slept %v", s)
	}
}

// TestRealClock: the default clock sleeps at least the delay and wakes on
// cancellation. Only a device's first sleep has a lower bound: later ones
// ask for less by the lateness the clock has learnt, which depends on how
// busy the machine was (their mean is TestOvershootConverges's business).
func TestRealClock(t *testing.T) {
	d := newDevice(t, &recorder{}, fault.Options{Timing: fault.MustParseTiming("latency=2ms")})
	start := time.Now()
	run(d, tur, 0)
	if el := time.Since(start); el < 2*time.Millisecond {
		t.Errorf("the first command with 2ms latency took %v", el)
	}
	d = newDevice(t, &recorder{}, fault.Options{Timing: fault.MustParseTiming("latency=1h")})
	ctx, cancel := context.WithCancel(context.Background())
	time.AfterFunc(5*time.Millisecond, cancel)
	if r := d.HandleCommand(ctx, &scsi.Command{CDB: tur, Data: scsi.NewBuffer()}); r.Status != scsi.StatusBusy {
		t.Errorf("cancelled: %v", r.Status)
	}
	// The timer is reused after a cancelled sleep.
	if err := d.SetTiming(fault.MustParseTiming("latency=1ms")); err != nil {
		t.Fatal(err)
	}
	start = time.Now()
	run(d, tur, 0)
	if el := time.Since(start); el < time.Millisecond {
		t.Errorf("sleep after a cancelled one took %v", el)
	}
}
