package fault_test

import (
	"context"
	"testing"
	"time"

	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/scsi"
)

// FuzzParseRule: any string is a rule or an error, never a panic; a rule
// round-trips through its canonical form; installing it on a disk or a
// tape either fails cleanly or gives a device that serves commands.
// Seeds: testdata/fuzz/FuzzParseRule.
func FuzzParseRule(f *testing.F) {
	f.Add("op=read;lba=0x1234+10;sense=medium_error/0x11/0x00;count=1")
	f.Fuzz(func(t *testing.T, s string) {
		r, err := fault.ParseRule(s)
		if err != nil {
			return
		}
		c := r.String()
		r2, err := fault.ParseRule(c)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", c, s, err)
		}
		if c2 := r2.String(); c2 != c {
			t.Fatalf("canonical form not stable: %q -> %q", c, c2)
		}
		for _, kind := range []scsi.CommandTable{diskCmds, tapeCmds} {
			h := &positioned{}
			d, err := fault.New(h, fault.Options{Commands: kind, Clock: &nopClock{}, CmdTimeout: time.Second, Rules: []fault.Rule{r}})
			if err != nil {
				continue
			}
			for _, cdb := range [][]byte{tur, rw10(0x28, 0x1234, 8), tape6(0x0a, false, 512), tape6(0x08, true, 2)} {
				d.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: scsi.NewBuffer(make([]byte, 4096))})
			}
		}
	})
}

// FuzzParseTiming: the same for timing models.
func FuzzParseTiming(f *testing.F) {
	f.Add("latency=2ms;jitter=1ms;rate=160MB/s")
	f.Add("model=dds;rate=6.6MB/s;overhead=1ms")
	f.Fuzz(func(t *testing.T, s string) {
		tm, err := fault.ParseTiming(s)
		if err != nil {
			return
		}
		c := tm.String()
		tm2, err := fault.ParseTiming(c)
		if err != nil {
			t.Fatalf("canonical form %q of %q does not parse: %v", c, s, err)
		}
		if tm2 != tm {
			t.Fatalf("round trip of %q: %+v != %+v", c, tm2, tm)
		}
	})
}

// FuzzCommand: no CDB (short, odd, any opcode) makes the rules or the
// timing models panic, on a disk or a tape.
func FuzzCommand(f *testing.F) {
	f.Add([]byte{0x28, 0, 0, 0, 0x12, 0x30, 0, 0, 16, 0}, uint16(8192))
	f.Add([]byte{0x08, 0}, uint16(0))
	f.Add([]byte{0x11, 1, 0x80, 0, 0, 0}, uint16(0))
	f.Add([]byte{0x93, 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}, uint16(512))
	devs := func(t *testing.T) []*fault.Device {
		var out []*fault.Device
		for _, kind := range []scsi.CommandTable{diskCmds, tapeCmds} {
			rules := []string{"lba=0x1230+0x20;sense=medium_error", "op=media;prob=0.5;recovered", "every=3;busy", "after=5;delay=1ms", "op=read|write;count=2;timeout=1s"}
			timing := "latency=1us;jitter=1us;dist=exp;rate=1MB/s"
			if kind == tapeCmds {
				rules = []string{"block=0+8;file=0;partition=0;sense=blank_check", "op=write;sense=volume_overflow", "early_warning_after=1", "every=2;delay=1ms"}
				timing = "model=dds"
			}
			d := newDevice(t, &positioned{}, fault.Options{Commands: kind, Clock: &nopClock{}, CmdTimeout: 30 * time.Second, Timing: fault.MustParseTiming(timing)}, rules...)
			out = append(out, d)
		}
		return out
	}
	f.Fuzz(func(t *testing.T, cdb []byte, n uint16) {
		for _, d := range devs(t) {
			for range 4 {
				r := d.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: scsi.NewBuffer(make([]byte, n))})
				if r.Status == scsi.StatusCheckCondition && r.Sense == (scsi.Sense{}) {
					t.Fatalf("CHECK CONDITION without sense for % x", cdb)
				}
			}
		}
	})
}
