package target

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// Options.RingPoll sets each device's poll window as it is made, by
// name; SetRingPoll changes every served device's at once.
func TestRingPoll(t *testing.T) {
	f := newFixture(t)
	opts := f.options(zaptest.NewLogger(t))
	opts.RingPoll = func(name string) time.Duration {
		if name == "fast" {
			return 50 * time.Microsecond
		}
		return 0
	}
	tg, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	for _, n := range []string{"fast", "slow"} {
		if _, err := tg.Create(context.Background(), DeviceSpec{Name: n, Subtype: "vdisk", Config: "size=1M", Size: 1 << 20, BlockSize: 512}); err != nil {
			t.Fatal(err)
		}
	}
	polls := func() map[string]time.Duration {
		out := map[string]time.Duration{}
		for _, d := range tg.Devices() {
			out[d.Info.Name] = d.Poll
		}
		return out
	}
	if got := polls(); got["fast"] != 50*time.Microsecond || got["slow"] != 0 {
		t.Errorf("poll windows %v; want fast 50µs, slow 0", got)
	}
	tg.SetRingPoll(func(string) time.Duration { return time.Millisecond })
	if got := polls(); got["fast"] != time.Millisecond || got["slow"] != time.Millisecond {
		t.Errorf("after SetRingPoll: %v; want 1ms each", got)
	}
	tg.SetRingPoll(nil)
	if got := polls(); got["fast"] != 0 || got["slow"] != 0 {
		t.Errorf("after SetRingPoll(nil): %v; want 0 each", got)
	}
}
