package fault

import (
	"context"
	"time"
)

// A Clock is the wrapper's time source. The default reads the monotonic
// clock and sleeps without a busy loop, correcting for the host's wake-up
// latency; tests inject a fake one. A Device calls its Clock from the
// command goroutine only, or with Options.Depth above 1 from every command
// in service at once (an injected Clock must allow that).
type Clock interface {
	// Now is the time elapsed since an arbitrary fixed origin.
	Now() time.Duration
	// Sleep waits d, or until ctx is done (then it returns ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

// fineSleep is the length below which realClock sleeps in
// clock_nanosleep(2) instead of on its timer. The Go runtime waits for
// timers in epoll_pwait with a whole-millisecond timeout, so a timer of
// 100 µs fires after about 1.1 ms; clock_nanosleep has the kernel's
// hrtimer resolution (plus the thread's 50 µs timer slack). A sleep this
// short holds its OS thread and cannot end early on ctx, which costs at
// most fineSleep.
const fineSleep = time.Millisecond

// overshoot learns how late a kind of sleep wakes, on average, so that
// the next one can ask for that much less and the mean delay a command
// gets is the one configured. Measured on a loaded 2-CPU VM (go 1.26): a
// 2 ms timer wakes 258 µs late on average, a 500 µs clock_nanosleep
// 115 µs late; without correction a configured latency of 2 ms shows up
// as 2.27 ms in the duration histogram.
//
// The estimate is an exponentially weighted mean (weight 1/16) of the
// observed lateness; a single sample is capped at maxLate so that one
// descheduled wake-up (a stall of the whole VM) does not shorten the
// following sleeps by much.
type overshoot struct{ est time.Duration }

const maxLate = 2 * time.Millisecond

// request is how long to ask the OS for, to wake up d from now.
func (o *overshoot) request(d time.Duration) time.Duration {
	if r := d - o.est; r > 0 {
		return r
	}
	// Wake-up latency alone exceeds d: ask for nothing shorter than d
	// itself is honest only if the OS can do it, and it cannot; sleep d
	// (late by the latency) rather than not at all.
	return d
}

// observe records that a sleep of req took got.
func (o *overshoot) observe(req, got time.Duration) {
	late := min(max(got-req, 0), maxLate)
	o.est += (late - o.est) / 16
}

// realClock is the default Clock: no busy loop, and no allocation per
// sleep (the timer is created once; since Go 1.23 Reset on a stopped or
// fired timer needs no draining).
type realClock struct {
	epoch       time.Time
	t           *time.Timer
	timer, fine overshoot
	ns          nanosleeper
}

func newRealClock() *realClock {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &realClock{epoch: time.Now(), t: t}
}

// sibling is another realClock with the same epoch, for a concurrent
// command: its own timer and its own learnt lateness.
func (c *realClock) sibling() *realClock {
	s := newRealClock()
	s.epoch = c.epoch
	return s
}

func (c *realClock) Now() time.Duration { return time.Since(c.epoch) }

func (c *realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	start := c.Now()
	if d < fineSleep {
		req := c.fine.request(d)
		c.ns.sleep(req)
		c.fine.observe(req, c.Now()-start)
		return ctx.Err()
	}
	req := c.timer.request(d)
	c.t.Reset(req)
	select {
	case <-c.t.C:
		c.timer.observe(req, c.Now()-start)
		return nil
	case <-ctx.Done():
		c.t.Stop()
		return ctx.Err()
	}
}
