package fault

import (
	"sync/atomic"
	"time"
)

// Histogram is a fixed-bucket histogram, the same shape as
// target.Histogram and metrics.Histogram (convert with a type
// conversion).
type Histogram struct {
	// Bounds are the bucket upper bounds (shared; do not modify).
	Bounds []float64
	// Counts has len(Bounds)+1 entries: Counts[i] observations in
	// (Bounds[i-1], Bounds[i]], the last one above every bound.
	Counts []uint64
	Count  uint64  // total observations
	Sum    float64 // in the unit of Bounds
}

// delayBuckets is the number of bounds of DelayBounds.
const delayBuckets = 14

// DelayBounds are the upper bounds, in seconds, of the injected-delay
// histogram: 1 µs × 4^i, 1 µs to 67 s, as target.DurationBounds.
var DelayBounds = func() []float64 {
	b := make([]float64, delayBuckets)
	for i := range b {
		b[i] = 1e-6 * float64(uint64(1)<<(2*i))
	}
	return b
}()

// Stats are a device's fault and timing counters since New.
type Stats struct {
	// Delays is the delay added to each delayed command (delay= rules
	// and timing together), in seconds, as slept (after the cap).
	Delays Histogram
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
		Delays:      Histogram{Bounds: DelayBounds, Counts: make([]uint64, delayBuckets+1)},
		Clamped:     s.clamped.Load(),
		Held:        s.held.Load(),
		Interrupted: s.interrupted.Load(),
	}
	for i := range s.delays {
		n := s.delays[i].Load()
		out.Delays.Counts[i] = n
		out.Delays.Count += n
	}
	out.Delays.Sum = time.Duration(s.delaySum.Load()).Seconds()
	return out
}
