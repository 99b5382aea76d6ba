package fault

import (
	"sync/atomic"
	"time"

	"github.com/vscsid/vscsid/internal/stat"
)

// delayBuckets is the number of bounds of DelayBounds.
const delayBuckets = 14

// DelayBounds are the upper bounds, in seconds, of the injected-delay
// histogram: 1 µs × 4^i, 1 µs to 67 s, as tcmu.DurationBounds.
var DelayBounds = stat.Exponential(1e-6, 4, delayBuckets)

// Stats are a device's fault and timing counters since New.
type Stats struct {
	// Delays is the delay added to each delayed command (delay= rules
	// and timing together), in seconds, as slept (after the cap).
	Delays stat.Histogram
	// Clamped counts commands whose delay was cut to the cmd_time_out
	// cap.
	Clamped uint64
	// Held counts commands a timeout rule held.
	Held uint64
	// Interrupted counts delays cut short because the device stopped.
	Interrupted uint64
}

// RuleStats describe one installed rule (Device.Injected).
type RuleStats struct {
	// ID is the rule's identifier on this device, stable while the rule
	// is installed and never reused: the `rule` metric label, and the
	// argument of RemoveRule.
	ID       uint64
	Rule     Rule
	Action   string // Rule.Action(): the `action` metric label
	Matched  uint64 // commands that passed the filter
	Injected uint64 // times the action was applied
	Spent    bool   // a count= rule has used up its count
}

type stats struct {
	delays      [delayBuckets + 1]atomic.Uint64
	delaySum    atomic.Int64 // nanoseconds
	clamped     atomic.Uint64
	held        atomic.Uint64
	interrupted atomic.Uint64
}

// observe records one delay.
func (s *stats) observe(d time.Duration) {
	i := 0
	for i < delayBuckets && float64(d) > DelayBounds[i]*1e9 {
		i++
	}
	s.delays[i].Add(1)
	s.delaySum.Add(int64(d))
}

func (s *stats) snapshot() Stats {
	out := Stats{
		Delays:      stat.Snapshot(DelayBounds, s.delays[:], time.Duration(s.delaySum.Load()).Seconds()),
		Clamped:     s.clamped.Load(),
		Held:        s.held.Load(),
		Interrupted: s.interrupted.Load(),
	}
	return out
}
