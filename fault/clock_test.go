package fault

import (
	"context"
	"errors"
	"testing"
	"time"
)

// A host whose sleeps all wake a constant 250 µs late: the estimate
// converges, and the requests it makes then deliver d on average.
func TestOvershootConverges(t *testing.T) {
	var o overshoot
	const late = 250 * time.Microsecond
	d := 2 * time.Millisecond
	for range 200 {
		req := o.request(d)
		o.observe(req, req+late)
	}
	if got := o.request(d) + late; got < d-5*time.Microsecond || got > d+5*time.Microsecond {
		t.Fatalf("after convergence a 2 ms sleep takes %v", got)
	}
}

// A delay shorter than the wake-up latency is slept in full (late), not
// skipped; early wake-ups do not push the estimate negative.
func TestOvershootShortAndEarly(t *testing.T) {
	o := overshoot{est: 300 * time.Microsecond}
	if r := o.request(100 * time.Microsecond); r != 100*time.Microsecond {
		t.Fatalf("request(100µs) = %v with 300µs lateness, want the full 100µs", r)
	}
	var e overshoot
	for range 50 {
		e.observe(time.Millisecond, 900*time.Microsecond)
	}
	if e.est != 0 {
		t.Fatalf("early wake-ups gave estimate %v", e.est)
	}
}

// One stall of the whole machine moves the estimate by at most
// maxLate/16.
func TestOvershootStallCapped(t *testing.T) {
	var o overshoot
	o.observe(time.Millisecond, time.Millisecond+time.Second)
	if o.est > maxLate/16 {
		t.Fatalf("a 1 s stall moved the estimate to %v", o.est)
	}
}

// The real clock sleeps at least d on its first use (no estimate yet),
// through both paths, and a done context ends a timer sleep early.
func TestRealClockSleeps(t *testing.T) {
	c := newRealClock()
	for _, d := range []time.Duration{200 * time.Microsecond, 3 * time.Millisecond} {
		c := newRealClock()
		s := time.Now()
		if err := c.Sleep(context.Background(), d); err != nil {
			t.Fatal(err)
		}
		if got := time.Since(s); got < d {
			t.Errorf("Sleep(%v) returned after %v", d, got)
		}
	}
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := c.Sleep(ctx, time.Hour); !errors.Is(err, context.Canceled) {
		t.Fatalf("Sleep on a done context: %v", err)
	}
}

// BenchmarkRealClock2ms reports the mean of what a requested 2 ms sleep
// really takes once the clock has learned the host's lateness.
func BenchmarkRealClock2ms(b *testing.B)   { benchClock(b, 2*time.Millisecond) }
func BenchmarkRealClock200us(b *testing.B) { benchClock(b, 200*time.Microsecond) }

func benchClock(b *testing.B, d time.Duration) {
	c := newRealClock()
	ctx := context.Background()
	for range 64 { // learn
		_ = c.Sleep(ctx, d)
	}
	b.ReportAllocs()
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		_ = c.Sleep(ctx, d)
	}
	mean := time.Since(start) / time.Duration(b.N)
	b.ReportMetric(float64(mean-d)/float64(d)*100, "%-off")
}
