package fault_test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/scsi"
)

// TestLBAIntersection checks lba=100+10 against every CDB size at the
// range boundaries: a command matches when its block range intersects
// [100, 110), and a medium error reports the first shared LBA.
func TestLBAIntersection(t *testing.T) {
	type cmdFn func(lba uint64, n uint32) []byte
	ops := []struct {
		name   string
		cdb    cmdFn
		prefix bool // READ/WRITE(6/10/12/16): the blocks before the error run
		toEnd  bool // WRITE SAME: 0 blocks = to the end
		is6    bool
	}{
		{"read_6", func(l uint64, n uint32) []byte { return read6(uint32(l), uint8(n)) }, true, false, true},
		{"write_6", func(l uint64, n uint32) []byte { c := read6(uint32(l), uint8(n)); c[0] = 0x0a; return c }, true, false, true},
		{"read_10", func(l uint64, n uint32) []byte { return rw10(0x28, uint32(l), uint16(n)) }, true, false, false},
		{"write_10", func(l uint64, n uint32) []byte { return rw10(0x2a, uint32(l), uint16(n)) }, true, false, false},
		{"verify_10", func(l uint64, n uint32) []byte { return rw10(0x2f, uint32(l), uint16(n)) }, false, false, false},
		{"write_same_10", func(l uint64, n uint32) []byte { return rw10(0x41, uint32(l), uint16(n)) }, false, true, false},
		{"read_12", func(l uint64, n uint32) []byte { return rw12(0xa8, uint32(l), n) }, true, false, false},
		{"write_12", func(l uint64, n uint32) []byte { return rw12(0xaa, uint32(l), n) }, true, false, false},
		{"verify_12", func(l uint64, n uint32) []byte { return rw12(0xaf, uint32(l), n) }, false, false, false},
		{"read_16", func(l uint64, n uint32) []byte { return rw16(0x88, l, n) }, true, false, false},
		{"write_16", func(l uint64, n uint32) []byte { return rw16(0x8a, l, n) }, true, false, false},
		{"verify_16", func(l uint64, n uint32) []byte { return rw16(0x8f, l, n) }, false, false, false},
		{"write_same_16", func(l uint64, n uint32) []byte { return rw16(0x93, l, n) }, false, true, false},
	}
	cases := []struct {
		lba   uint64
		n     uint32
		match bool
		info  uint64
	}{
		{90, 10, false, 0},   // [90,100): ends just before
		{91, 10, true, 100},  // [91,101): last block is the first bad one
		{100, 1, true, 100},  // first block
		{109, 1, true, 109},  // last block
		{109, 5, true, 109},  // starts on the last block
		{110, 10, false, 0},  // just after
		{50, 100, true, 100}, // covers it
		{105, 0, false, 0},   // empty transfer (WRITE SAME: to the end)
		{200, 0, false, 0},   // WRITE SAME to the end from past the range
	}
	for _, op := range ops {
		for _, tc := range cases {
			want, info := tc.match, tc.info
			if tc.n == 0 {
				switch {
				case op.is6: // TRANSFER LENGTH 0 = 256 blocks
					want, info = tc.lba < 110, max(tc.lba, 100)
				case op.toEnd:
					want, info = tc.lba < 110, max(tc.lba, 100)
				}
			}
			rec := &recorder{}
			d := newDevice(t, rec, fault.Options{}, "lba=100+10;sense=medium_error")
			r, _ := run(d, op.cdb(tc.lba, tc.n), 512*256)
			if got := r.Status == scsi.StatusCheckCondition; got != want {
				t.Errorf("%s lba %d n %d: injected %v, want %v", op.name, tc.lba, tc.n, got, want)
				continue
			}
			if !want {
				if len(rec.calls) != 1 {
					t.Errorf("%s lba %d n %d: handler ran %d times, want once", op.name, tc.lba, tc.n, len(rec.calls))
				}
				continue
			}
			if r.Sense.Key != scsi.MediumError || !r.Sense.Valid || uint64(r.Sense.Info) != info {
				t.Errorf("%s lba %d n %d: sense %+v, want MEDIUM ERROR with INFORMATION %d", op.name, tc.lba, tc.n, r.Sense, info)
			}
			// Only READ/WRITE run the blocks before the bad one.
			wantCalls := 0
			if op.prefix && info > tc.lba {
				wantCalls = 1
			}
			if len(rec.calls) != wantCalls {
				t.Errorf("%s lba %d n %d: handler ran %d times, want %d", op.name, tc.lba, tc.n, len(rec.calls), wantCalls)
			}
		}
	}
}

// TestLBAFilterNeedsRange: commands without an LBA never match an lba=
// rule; a truncated CDB decodes to no range.
func TestLBAFilterNeedsRange(t *testing.T) {
	rec := &recorder{}
	d := newDevice(t, rec, fault.Options{}, "lba=0+1000;busy")
	for _, c := range [][]byte{tur, {0x12, 0, 0, 0, 36, 0}, {0x28, 0, 0, 0, 0, 5}, {0x35, 0, 0, 0, 0, 0, 0, 0, 0, 0}} {
		if r, _ := run(d, c, 64); r.Status != scsi.StatusGood {
			t.Errorf("% x: %v, want the handler's GOOD", c, r.Status)
		}
	}
	if len(rec.calls) != 4 {
		t.Errorf("handler ran %d times, want 4", len(rec.calls))
	}
}

// TestOpFilter: classes, opcodes and command names (the handler's, then
// scsi.OpCode's) select commands.
func TestOpFilter(t *testing.T) {
	rec := &recorder{names: map[scsi.OpCode]string{0x28: "read_10", 0x2a: "write_10", 0x00: "test_unit_ready", 0x35: "sync_cache"}}
	cmds := map[string][]byte{
		"tur": tur, "read6": read6(1, 1), "read10": rw10(0x28, 1, 1), "write10": rw10(0x2a, 1, 1),
		"verify16": rw16(0x8f, 1, 1), "sync": {0x35, 0, 0, 0, 0, 0, 0, 0, 0, 0},
	}
	for _, tc := range []struct {
		op   string
		hits []string
	}{
		{"read", []string{"read10", "read6"}},
		{"write", []string{"write10"}},
		{"media", []string{"read10", "read6", "verify16", "write10"}},
		{"verify|0x00", []string{"tur", "verify16"}},
		{"read_10|test_unit_ready", []string{"read10", "tur"}},
		{"sync_cache", []string{"sync"}},
		{"write_6", nil},                           // not the recorder's name, but scsi.OpCode's: resolves to 0x0a
		{"synchronize_cache_10", []string{"sync"}}, // scsi.OpCode's name for 0x35
		{"any", []string{"read10", "read6", "sync", "tur", "verify16", "write10"}},
	} {
		d := newDevice(t, rec, fault.Options{}, "op="+tc.op+";busy")
		var hits []string
		for name, c := range cmds {
			if r, _ := run(d, c, 512); r.Status == scsi.StatusBusy {
				hits = append(hits, name)
			}
		}
		slices.Sort(hits)
		if !slices.Equal(hits, tc.hits) {
			t.Errorf("op=%s hits %v, want %v", tc.op, hits, tc.hits)
		}
	}
}

// TestGate: every, after and count give scsi_debug's every_nth sequence.
func TestGate(t *testing.T) {
	for _, tc := range []struct {
		rule string
		want []int
	}{
		{"op=read;busy", []int{1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20}},
		{"op=read;every=4;busy", []int{4, 8, 12, 16, 20}},
		{"op=read;after=17;busy", []int{18, 19, 20}},
		{"op=read;every=3;after=2;count=3;busy", []int{5, 8, 11}},
		{"op=read;count=2;busy", []int{1, 2}},
	} {
		d := newDevice(t, &recorder{}, fault.Options{}, tc.rule)
		var got []int
		for i := 1; i <= 20; i++ {
			run(d, tur, 0) // not counted: filtered out
			if r, _ := run(d, rw10(0x28, 0, 1), 512); r.Status == scsi.StatusBusy {
				got = append(got, i)
			}
		}
		if !slices.Equal(got, tc.want) {
			t.Errorf("%s: fired on %v, want %v", tc.rule, got, tc.want)
		}
		st := d.Injected()[0]
		if st.Matched != 20 || st.Injected != uint64(len(tc.want)) {
			t.Errorf("%s: stats %+v", tc.rule, st)
		}
		if spent := strings.Contains(tc.rule, "count"); st.Spent != spent {
			t.Errorf("%s: spent %v", tc.rule, st.Spent)
		}
	}
}

// probSequence returns the commands (1-based) among n reads on which
// rules fire.
func probSequence(t *testing.T, seed uint64, n int, rules ...string) []int {
	d := newDevice(t, &recorder{}, fault.Options{Seed: seed}, rules...)
	var got []int
	for i := 1; i <= n; i++ {
		if r, _ := run(d, rw10(0x28, 0, 1), 512); r.Status == scsi.StatusBusy {
			got = append(got, i)
		}
	}
	return got
}

// TestProbRepeatable: prob= draws depend only on the seed, the rule's text
// and the count of matching commands.
func TestProbRepeatable(t *testing.T) {
	const rule = "op=read;prob=0.1;busy"
	a := probSequence(t, 42, 1000, rule)
	// A fixed seed gives a fixed sequence (pins the generator: changing
	// it changes every user's experiment).
	if want := []int{25, 36, 71, 72, 80}; !slices.Equal(a[:5], want) {
		t.Errorf("seed 42: first faults on %v, want %v", a[:5], want)
	}
	if len(a) < 70 || len(a) > 130 {
		t.Errorf("prob=0.1 fired %d times in 1000", len(a))
	}
	if b := probSequence(t, 42, 1000, rule); !slices.Equal(a, b) {
		t.Error("same seed, different sequence")
	}
	if b := probSequence(t, 43, 1000, rule); slices.Equal(a, b) {
		t.Error("seeds 42 and 43 give the same sequence")
	}
	// A rule that does not match does not disturb the stream.
	if b := probSequence(t, 42, 1000, "op=write;prob=0.5;busy", rule); !slices.Equal(a, b) {
		t.Error("an unrelated rule shifted the sequence")
	}
}

// TestTapePosition: block=, file= and partition= ask the drive where it is.
func TestTapePosition(t *testing.T) {
	p := &positioned{}
	p.part, p.file = 0, 3
	d := newDevice(t, p, fault.Options{Commands: tapeCmds},
		"op=read;block=100+5;sense=medium_error",
		"op=write;partition=1;sense=data_protect",
		"op=write;file=2+2;sense=volume_overflow")
	for _, tc := range []struct {
		part   int
		object uint64
		cdb    []byte
		key    scsi.SenseKey // 0 = not injected
		info   int64
	}{
		{0, 99, tape6(0x08, false, 10240), 0, 0},
		{0, 100, tape6(0x08, false, 10240), scsi.MediumError, 10240}, // variable: residue in bytes
		{0, 104, tape6(0x08, false, 10240), scsi.MediumError, 10240},
		{0, 105, tape6(0x08, false, 10240), 0, 0},
		{0, 98, tape6(0x08, true, 3), scsi.MediumError, 3}, // fixed: blocks 98..100
		{0, 97, tape6(0x08, true, 3), 0, 0},                // blocks 97..99
		{0, 104, tape6(0x08, true, 0), scsi.MediumError, 0},
		{1, 5, tape6(0x0a, false, 512), scsi.DataProtect, 512},
		{0, 5, tape6(0x0a, false, 512), scsi.VolumeOverflow, 512}, // file 3 is in 2+2
	} {
		p.part, p.object = tc.part, tc.object
		r, _ := run(d, tc.cdb, 10240)
		if tc.key == 0 {
			if r.Status != scsi.StatusGood {
				t.Errorf("part %d object %d % x: %v %+v, want GOOD", tc.part, tc.object, tc.cdb, r.Status, r.Sense)
			}
			continue
		}
		if r.Status != scsi.StatusCheckCondition || r.Sense.Key != tc.key || !r.Sense.Valid || r.Sense.Info != tc.info {
			t.Errorf("part %d object %d % x: %+v, want %v with INFORMATION %d", tc.part, tc.object, tc.cdb, r.Sense, tc.key, tc.info)
		}
		if tc.key == scsi.VolumeOverflow && !r.Sense.EOM {
			t.Error("VOLUME OVERFLOW without EOM")
		}
	}
	p.file = 4
	if r, _ := run(d, tape6(0x0a, false, 512), 512); r.Status != scsi.StatusGood {
		t.Errorf("file 4: %+v, want GOOD", r)
	}
}

// TestBindErrors: rules are checked against the device when installed.
func TestBindErrors(t *testing.T) {
	rec := &recorder{names: map[scsi.OpCode]string{0x28: "read_10"}}
	for _, tc := range []struct {
		h     fault.Handler
		o     fault.Options
		rule  string
		want  string
		model string
	}{
		{rec, fault.Options{Commands: diskCmds}, "block=1;busy", "tape positions; this is a disk", ""},
		{rec, fault.Options{Commands: diskCmds}, "early_warning_after=1M", "tape action; this is a disk", ""},
		{rec, fault.Options{Commands: tapeCmds}, "lba=1;busy", "disk range; this is a tape", ""},
		{rec, fault.Options{Commands: tapeCmds}, "file=1;busy", "reports its position", ""},
		{rec, fault.Options{Commands: diskCmds}, "op=reed;busy", "op=reed: the disk has no command of that name", ""},
		{rec, fault.Options{Commands: diskCmds}, "timeout", "give a hold time", ""},
		{rec, fault.Options{Commands: diskCmds}, "", "a tape drive model on a disk", "model=dds"},
		{rec, fault.Options{Commands: changerCmds}, "lba=1;busy", "this is a changer (filter with op=)", ""},
		{rec, fault.Options{Commands: changerCmds}, "block=1;busy", "this is a changer (filter with op=)", ""},
		{rec, fault.Options{Commands: changerCmds}, "op=read;busy", "a changer has no read, write or verify commands", ""},
		{rec, fault.Options{Commands: changerCmds}, "op=reed;busy", "op=reed: the changer has no command of that name", ""},
		{rec, fault.Options{Commands: changerCmds}, "", "a tape drive model on a", "model=dds"},
		{rec, fault.Options{Commands: nil}, "busy", "needs the handler's command table", ""},
	} {
		o := tc.o
		if tc.rule != "" {
			o.Rules = []fault.Rule{fault.MustParseRule(tc.rule)}
		}
		if tc.model != "" {
			o.Timing = fault.MustParseTiming(tc.model)
		}
		_, err := fault.New(tc.h, o)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q %q: %v, want an error containing %q", tc.rule, tc.model, err, tc.want)
		}
	}
	if _, err := fault.New(rec, fault.Options{Commands: diskCmds, CmdTimeout: 30 * time.Second, Rules: []fault.Rule{fault.MustParseRule("timeout")}}); err != nil {
		t.Errorf("timeout with cmd_time_out: %v", err)
	}
	if _, err := fault.New(rec, fault.Options{Commands: diskCmds, Rules: []fault.Rule{{}}}); err == nil || !strings.Contains(err.Error(), "no action") {
		t.Errorf("zero Rule: %v", err)
	}
	for _, r := range []string{"op=move_medium;sense=illegal_request/0x3b/0x0e", "op=0xb8;busy", "delay=10ms"} {
		if _, err := fault.New(&recorder{}, fault.Options{Commands: changerCmds, Rules: []fault.Rule{fault.MustParseRule(r)}}); err != nil {
			t.Errorf("%q on a changer: %v", r, err)
		}
	}
	if _, err := fault.New(&positioned{}, fault.Options{Commands: tapeCmds, Rules: []fault.Rule{fault.MustParseRule("file=1;busy")}}); err != nil {
		t.Errorf("file= on a positioned tape: %v", err)
	}
	d := newDevice(t, rec, fault.Options{})
	too := make([]fault.Rule, fault.MaxRules+1)
	for i := range too {
		too[i] = fault.MustParseRule("busy")
	}
	if err := d.SetRules(too); err == nil {
		t.Error("SetRules accepted more than MaxRules")
	}
	if err := d.SetRules(too[:fault.MaxRules]); err != nil {
		t.Errorf("SetRules(MaxRules): %v", err)
	}
	if _, err := d.AddRule(too[0]); err == nil {
		t.Error("AddRule beyond MaxRules")
	}
}

// TestManageRules: AddRule and RemoveRule keep the other rules' counters;
// SetRules starts afresh; IDs are never reused.
func TestManageRules(t *testing.T) {
	d := newDevice(t, &recorder{}, fault.Options{}, "op=write;count=1;busy")
	run(d, rw10(0x2a, 0, 1), 512) // spends the rule
	id2, err := d.AddRule(fault.MustParseRule("op=read;task_set_full"))
	if err != nil {
		t.Fatal(err)
	}
	if r, _ := run(d, rw10(0x2a, 0, 1), 512); r.Status != scsi.StatusGood {
		t.Errorf("spent rule fired again after AddRule: %v", r.Status)
	}
	st := d.Injected()
	if len(st) != 2 || st[0].ID != 1 || !st[0].Spent || st[0].Injected != 1 || st[1].ID != id2 || id2 != 2 {
		t.Fatalf("Injected = %+v", st)
	}
	if st[1].Action != "task_set_full" || st[0].Rule.String() != "op=write;count=1;busy" {
		t.Errorf("Injected = %+v", st)
	}
	if err := d.RemoveRule(1); err != nil {
		t.Fatal(err)
	}
	if err := d.RemoveRule(1); err == nil {
		t.Error("removed rule 1 twice")
	}
	if got := d.Rules(); len(got) != 1 || got[0].String() != "op=read;task_set_full" {
		t.Errorf("Rules = %v", got)
	}
	if err := d.SetRules([]fault.Rule{fault.MustParseRule("op=write;count=1;busy")}); err != nil {
		t.Fatal(err)
	}
	if r, _ := run(d, rw10(0x2a, 0, 1), 512); r.Status != scsi.StatusBusy {
		t.Errorf("SetRules did not start the count afresh: %v", r.Status)
	}
	if st := d.Injected(); st[0].ID != 3 {
		t.Errorf("new ID %d, want 3", st[0].ID)
	}
	d.Clear()
	if d.Rules() != nil || d.Injected() != nil {
		t.Error("Clear left rules")
	}
}

// TestDelayThenTerminal: delay rules add up and let evaluation go on; the
// first terminal rule wins and later rules do not count the command.
func TestDelayThenTerminal(t *testing.T) {
	clk := &fakeClock{}
	rec := &recorder{}
	d := newDevice(t, rec, fault.Options{Clock: clk},
		"op=read;delay=2ms", "op=read;delay=3ms", "op=read;every=2;sense=medium_error", "op=read;busy")
	r, _ := run(d, rw10(0x28, 7, 1), 512)
	if r.Status != scsi.StatusBusy {
		t.Errorf("1st read: %v, want BUSY (rule 3 waits for every 2nd)", r.Status)
	}
	r, _ = run(d, rw10(0x28, 7, 1), 512)
	if r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.MediumError || r.Sense.Info != 7 {
		t.Errorf("2nd read: %+v, want MEDIUM ERROR at 7", r)
	}
	if s := clk.take(); !slices.Equal(s, []time.Duration{5 * time.Millisecond, 5 * time.Millisecond}) {
		t.Errorf("slept %v, want 5ms twice", s)
	}
	st := d.Injected()
	if st[3].Matched != 1 || st[3].Injected != 1 || st[2].Matched != 2 || st[0].Injected != 2 {
		t.Errorf("counters %+v", st)
	}
	if len(rec.calls) != 0 {
		t.Errorf("handler ran %d times", len(rec.calls))
	}
}
