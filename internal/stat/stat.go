// Package stat is vscsid's one statistics type: fixed-bucket histograms
// that a producer (the transport, the fault injector) counts into with
// atomic adds on its hot path and snapshots at scrape time, and that the
// metrics collector exports as they are. Producers, collector and tests
// share the type, so a histogram is never copied into a look-alike.
//
// The package depends on the standard library only.
package stat

import (
	"math"
	"slices"
	"sync/atomic"
)

// Histogram is a snapshot of a fixed-bucket histogram.
type Histogram struct {
	// Bounds are the bucket upper bounds, ascending (shared between
	// snapshots: do not modify).
	Bounds []float64
	// Counts has len(Bounds)+1 entries: Counts[i] observations in
	// (Bounds[i-1], Bounds[i]], the last one above every bound. They
	// are not cumulative.
	Counts []uint64
	Count  uint64  // total observations
	Sum    float64 // in the unit of Bounds
}

// Exponential returns n bucket bounds: start, start·factor, ...,
// start·factor^(n-1).
func Exponential(start, factor float64, n int) []float64 {
	b := make([]float64, n)
	for i := range b {
		b[i] = start * math.Pow(factor, float64(i))
	}
	return b
}

// Snapshot reads counts (len(bounds)+1 atomic bucket counters, +Inf last)
// into a Histogram over bounds with the given sum.
func Snapshot(bounds []float64, counts []atomic.Uint64, sum float64) Histogram {
	h := Histogram{Bounds: bounds, Counts: make([]uint64, len(counts)), Sum: sum}
	for i := range counts {
		h.Counts[i] = counts[i].Load()
		h.Count += h.Counts[i]
	}
	return h
}

// Add returns h+o, in fresh Counts. If their bounds differ the result has
// nil Counts, which the collector reports as an invalid metric.
func (h Histogram) Add(o Histogram) Histogram {
	if !slices.Equal(h.Bounds, o.Bounds) || len(h.Counts) != len(o.Counts) {
		return Histogram{Bounds: h.Bounds}
	}
	s := Histogram{Bounds: h.Bounds, Counts: make([]uint64, len(h.Counts)), Count: h.Count + o.Count, Sum: h.Sum + o.Sum}
	for i := range s.Counts {
		s.Counts[i] = h.Counts[i] + o.Counts[i]
	}
	return s
}

// Quantile returns the upper bound of the bucket holding quantile q
// (0 < q <= 1) of the observations: an upper bound of the quantile, -1
// when it lies above the last bound, 0 for an empty histogram.
func (h Histogram) Quantile(q float64) float64 {
	if h.Count == 0 {
		return 0
	}
	rank := uint64(math.Ceil(q * float64(h.Count)))
	var acc uint64
	for i, n := range h.Counts {
		acc += n
		if acc >= rank {
			if i < len(h.Bounds) {
				return h.Bounds[i]
			}
			return -1
		}
	}
	return -1
}

// Cumulative returns the count of observations <= Bounds[i] for each i,
// in the form prometheus.NewConstHistogram takes, and the total count. It
// is false when Counts does not have len(Bounds)+1 entries.
func (h Histogram) Cumulative() (buckets map[float64]uint64, count uint64, ok bool) {
	if len(h.Counts) != len(h.Bounds)+1 {
		return nil, 0, false
	}
	buckets = make(map[float64]uint64, len(h.Bounds))
	for i, b := range h.Bounds {
		count += h.Counts[i]
		buckets[b] = count
	}
	return buckets, count + h.Counts[len(h.Bounds)], true
}
