package fault

import (
	"context"
	"time"
)

// A Clock is the wrapper's time source. The default reads the monotonic
// clock and sleeps on one reused time.Timer; tests inject a fake one.
// A Device calls its Clock from the command goroutine only.
type Clock interface {
	// Now is the time elapsed since an arbitrary fixed origin.
	Now() time.Duration
	// Sleep waits d, or until ctx is done (then it returns ctx.Err()).
	Sleep(ctx context.Context, d time.Duration) error
}

// realClock is the default Clock: no busy loop, and no allocation per
// sleep (the timer is created once; since Go 1.23 Reset on a stopped or
// fired timer needs no draining).
type realClock struct {
	epoch time.Time
	t     *time.Timer
}

func newRealClock() *realClock {
	t := time.NewTimer(time.Hour)
	t.Stop()
	return &realClock{epoch: time.Now(), t: t}
}

func (c *realClock) Now() time.Duration { return time.Since(c.epoch) }

func (c *realClock) Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	c.t.Reset(d)
	select {
	case <-c.t.C:
		return nil
	case <-ctx.Done():
		c.t.Stop()
		return ctx.Err()
	}
}
