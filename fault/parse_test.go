package fault_test

import (
	"strings"
	"testing"
	"time"

	"github.com/vscsid/vscsid/fault"
)

func TestParseRuleCanonical(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		// The brief's example, unchanged.
		{"op=read;lba=0x1234+10;sense=medium_error/0x11/0x00;count=1", "op=read;lba=0x1234+10;count=1;sense=medium_error/0x11/0x00"},
		// Keys in canonical order, defaults dropped, names for numbers.
		{"sense=3/11/0;lba=4660", "lba=0x1234;sense=medium_error/0x11/0x00"},
		{"busy;every=1;after=0;prob=1", "busy"},
		{" op = write | 0x2A ; every=100 ; busy ", "op=write|0x2a;every=100;busy"},
		{"op=read_10|write_10;task_set_full", "op=read_10|write_10;task_set_full"},
		{"op=any;timeout", "op=any;timeout"},
		{"timeout=45s", "timeout=45s"},
		{"delay=1500us", "delay=1.5ms"},
		{"recovered", "recovered"},
		{"recovered=5d/0", "recovered=0x5d/0x00"},
		{"prob=0.010;sense=aborted_command", "prob=0.01;sense=aborted_command"},
		{"block=500+20;file=2;partition=1;sense=medium_error", "partition=1;file=2;block=500+20;sense=medium_error"},
		{"op=read;block=7;sense=blank_check/0/5", "op=read;block=7;sense=blank_check/0x00/0x05"},
		{"early_warning_after=16M", "early_warning_after=16MiB"},
		// The shared grammar (internal/cfgstring): empty pairs skipped
		// (they were refused), units in any case, leading zeros decimal.
		{"op=read;;busy;", "op=read;busy"},
		{"early_warning_after=16mib", "early_warning_after=16MiB"},
		{"lba=010;busy", "lba=0xa;busy"},
		{"early_warning_after=1000000", "early_warning_after=1MB"},
		{"early_warning_after=1234567", "early_warning_after=1234567"},
		{"early_warning_after=1.5KiB", "early_warning_after=1.5KiB"},
		{"early_warning_after=1536000", "early_warning_after=1500KiB"},
		{"op=reed;busy", "op=reed;busy"},                                      // names are resolved when installed
		{"op=media;lba=0+18446744073709551615;hardware_error=1;delay=1s", ""}, // bad key: checked below
		{"every=3;after=2;count=5;op=verify;sense=0xf", "op=verify;every=3;after=2;count=5;sense=completed"},
	} {
		r, err := fault.ParseRule(tc.in)
		if tc.want == "" {
			if err == nil {
				t.Errorf("ParseRule(%q) = %q, want an error", tc.in, r)
			}
			continue
		}
		if err != nil {
			t.Errorf("ParseRule(%q): %v", tc.in, err)
			continue
		}
		if got := r.String(); got != tc.want {
			t.Errorf("ParseRule(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
		r2, err := fault.ParseRule(r.String())
		if err != nil || r2.String() != r.String() {
			t.Errorf("round trip of %q: %q, %v", r.String(), r2, err)
		}
	}
}

func TestParseRuleErrors(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{"", "empty rule"},
		{"op=read", "no action"},
		{"op=read,busy", "',' and ':' are not allowed"},
		{"lba=010;lba=8;busy", "lba: given twice"},
		{"opp=read;busy", `unknown key "opp"`},
		{"busy;busy", "busy: given twice"},
		{"busy=1", "busy: takes no value"},
		{"timeout=", "timeout=: empty value"},
		{"sense", "sense: needs a value"},
		{"busy;sense=medium_error", "busy and sense: a rule has one action"},
		{"delay=1ms;timeout", "delay and timeout: a rule has one action"},
		{"op=Read;busy", "op=Read: Read: not a class"},
		{"op=0x100;busy", "op=0x100: 0x100: not an opcode"},
		{"op=read|;busy", "op=read|: empty alternative"},
		{"op=any|read;busy", "cannot be combined"},
		{"lba=;busy", "lba: needs a value"},
		{"lba=x;busy", "lba=x: want START or START+COUNT"},
		{"lba=10+0;busy", "lba=10+0: COUNT must be at least 1"},
		{"lba=0xffffffffffffffff+2;busy", "range goes past 2^64"},
		{"lba=010x;busy", "lba=010x"},
		{"every=0;busy", "every=0: must be at least 1"},
		{"count=0;busy", "count=0: must be at least 1"},
		{"count=-1;busy", "count=-1: not a number"},
		{"prob=0;busy", "prob=0: must be in (0, 1]"},
		{"prob=1.5;busy", "prob=1.5: must be in (0, 1]"},
		{"prob=NaN;busy", "prob=NaN: want a probability"},
		{"partition=256;busy", "partition=256: want 0..255"},
		{"sense=medium", "sense=medium: medium: not a sense key"},
		{"sense=16", "sense=16: 16: not a sense key"},
		{"sense=medium_error/11", "want KEY or KEY/ASC/ASCQ"},
		{"sense=medium_error/0x111/00", "ASC 0x111: want one hexadecimal byte"},
		{"sense=medium_error/11/zz", "ASCQ zz: want one hexadecimal byte"},
		{"recovered=11", "recovered=11: want ASC/ASCQ"},
		{"delay=0", "delay=0: must be more than 0"},
		{"delay=-1ms", "delay=-1ms: negative"},
		{"delay=5", "delay=5: want a duration"},
		{"timeout=0s", "timeout=0s: must be more than 0"},
		{"early_warning_after=0", "must be at least 1 byte"},
		{"early_warning_after=1.5", "not a whole number of bytes"},
		{"early_warning_after=99999999999999999999", "out of range"},
		{"early_warning_after=20000000T", "out of range"},
		{"lba=1;block=1;busy", "lba= is for disks"},
		{"lba=1;early_warning_after=1M", "early_warning_after= is a tape action"},
	} {
		_, err := fault.ParseRule(tc.in)
		if err == nil {
			t.Errorf("ParseRule(%q): no error, want %q", tc.in, tc.want)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseRule(%q) = %q, want it to contain %q", tc.in, err, tc.want)
		}
	}
}

func TestParseTiming(t *testing.T) {
	for _, tc := range []struct {
		in, want string
		check    func(fault.Timing) bool
	}{
		{"", "", func(t fault.Timing) bool { return t.IsZero() }},
		{"rate=100MiB/s;", "rate=100MiB/s", nil},
		{"latency=2ms;jitter=1ms;rate=160MB/s", "latency=2ms;jitter=1ms;rate=160MB/s",
			func(t fault.Timing) bool { return t.Latency == 2*time.Millisecond && t.Rate == 160e6 }},
		{"rate=1GiB/s;burst=1M", "rate=1GiB/s;burst=1MiB", func(t fault.Timing) bool { return t.Rate == 1<<30 && t.Burst == 1<<20 }},
		{"jitter=50us;dist=exp;jitter_max=2ms", "jitter=50µs;dist=exp;jitter_max=2ms",
			func(t fault.Timing) bool { return t.Dist == fault.Exponential && t.JitterMax == 2*time.Millisecond }},
		{"dist=uniform;jitter=1ms", "jitter=1ms", nil},
		{"model=dds", "model=dds", func(t fault.Timing) bool {
			return t.Rate == 3_500_000 && t.Buffer == 8<<20 && t.Overhead == 300*time.Microsecond
		}},
		// Overrides after (or before) model= win over the preset.
		{"overhead=1ms;model=lto9;rate=300MB/s", "model=lto9;rate=300MB/s;overhead=1ms",
			func(t fault.Timing) bool {
				return t.Rate == 300e6 && t.Overhead == time.Millisecond && t.Buffer == 1<<30
			}},
		{"model=custom;rate=3.5MB/s;buffer=32KiB;search=1GB/s", "model=custom;rate=3.5MB/s;buffer=32KiB;search=1GB/s", nil},
		{"model=lto5;latency=0", "model=lto5", nil},
	} {
		tm, err := fault.ParseTiming(tc.in)
		if err != nil {
			t.Errorf("ParseTiming(%q): %v", tc.in, err)
			continue
		}
		if got := tm.String(); got != tc.want {
			t.Errorf("ParseTiming(%q).String() = %q, want %q", tc.in, got, tc.want)
		}
		if tc.check != nil && !tc.check(tm) {
			t.Errorf("ParseTiming(%q) = %+v", tc.in, tm)
		}
		tm2, err := fault.ParseTiming(tm.String())
		if err != nil || tm2 != tm {
			t.Errorf("round trip of %q: %+v, %v", tm.String(), tm2, err)
		}
	}
	for _, tc := range []struct{ in, want string }{
		{"latency", "latency: needs a value"},
		{"lat=1ms", `unknown key "lat"`},
		{"latency=1ms;latency=2ms", "latency: given twice"},
		{"latency=-1ms", "latency=-1ms: negative"},
		{"rate=160MB", "rate=160MB: want a rate"},
		{"rate=fast/s", "rate=fast/s: \"fast\" is not a size (want a byte count with an optional unit"},
		{"dist=normal;jitter=1ms", "dist=normal: want uniform or exp"},
		{"dist=exp", "dist=exp: needs jitter="},
		{"jitter=1ms;jitter_max=2ms", "jitter_max: only with dist=exp"},
		{"jitter=3ms;dist=exp;jitter_max=2ms", "jitter_max: less than jitter"},
		{"burst=1M", "burst: needs rate="},
		{"buffer=1M", "tape model keys: give model="},
		{"model=lto4", "model=lto4: unknown model"},
		{"model=dds;burst=1M", "burst: a tape model buffers"},
		{"latency=1ms:2", "':'"},
	} {
		_, err := fault.ParseTiming(tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("ParseTiming(%q) = %v, want an error containing %q", tc.in, err, tc.want)
		}
	}
}

// TestDescKeys keeps the help texts in step with the grammars: every key
// the parsers know is documented.
func TestDescKeys(t *testing.T) {
	for _, k := range []string{"op", "lba", "partition", "file", "block", "every", "after", "count", "prob",
		"sense", "recovered", "busy", "task_set_full", "timeout", "delay", "early_warning_after"} {
		if !strings.Contains(fault.RuleDesc, "\n  "+k+" ") {
			t.Errorf("RuleDesc does not document %s", k)
		}
	}
	for _, k := range []string{"latency", "jitter", "dist", "jitter_max", "rate", "burst", "model", "buffer",
		"overhead", "reposition", "load", "unload", "rewind", "locate", "search"} {
		if !strings.Contains(fault.TimingDesc, k) {
			t.Errorf("TimingDesc does not document %s", k)
		}
	}
	for _, desc := range []string{fault.RuleDesc, fault.TimingDesc} {
		for _, ex := range strings.Split(desc, "\n")[1:5] {
			ex = strings.TrimSpace(ex)
			if i := strings.Index(ex, "  "); i > 0 {
				ex = ex[:i]
			}
			if !strings.Contains(ex, "=") {
				continue
			}
			var err error
			if desc == fault.RuleDesc {
				_, err = fault.ParseRule(ex)
			} else {
				_, err = fault.ParseTiming(ex)
			}
			if err != nil {
				t.Errorf("documented example %q: %v", ex, err)
			}
		}
	}
}
