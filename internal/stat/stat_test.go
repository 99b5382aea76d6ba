package stat

import (
	"maps"
	"slices"
	"sync/atomic"
	"testing"
)

func TestExponential(t *testing.T) {
	// The duration bounds: 1 µs × 4^i, exactly as the integer powers give them.
	got := Exponential(1e-6, 4, 13)
	for i, b := range got {
		if want := 1e-6 * float64(uint64(1)<<(2*i)); b != want {
			t.Errorf("bound %d = %v, want %v", i, b, want)
		}
	}
	if got := Exponential(512, 2, 16); got[15] != 16<<20 {
		t.Errorf("512·2^15 = %v", got[15])
	}
}

func TestSnapshotAndAdd(t *testing.T) {
	bounds := []float64{1, 2, 4}
	var c [4]atomic.Uint64
	c[0].Add(3)
	c[3].Add(1)
	h := Snapshot(bounds, c[:], 10)
	if h.Count != 4 || !slices.Equal(h.Counts, []uint64{3, 0, 0, 1}) || h.Sum != 10 {
		t.Fatalf("Snapshot = %+v", h)
	}
	s := h.Add(h)
	if s.Count != 8 || !slices.Equal(s.Counts, []uint64{6, 0, 0, 2}) || s.Sum != 20 || h.Counts[0] != 3 {
		t.Errorf("Add = %+v (h %+v)", s, h)
	}
	if bad := h.Add(Histogram{Bounds: []float64{1, 2}, Counts: []uint64{0, 0, 0}}); bad.Counts != nil {
		t.Errorf("Add over other bounds = %+v, want nil Counts", bad)
	}
}

func TestQuantile(t *testing.T) {
	h := Histogram{Bounds: []float64{0.001, 0.01, 0.1}, Counts: []uint64{50, 45, 4, 1}, Count: 100, Sum: 1.5}
	for q, want := range map[float64]float64{0.5: 0.001, 0.51: 0.01, 0.95: 0.01, 0.99: 0.1, 1: -1} {
		if got := h.Quantile(q); got != want {
			t.Errorf("Quantile(%v) = %v, want %v", q, got, want)
		}
	}
	if q := (Histogram{}).Quantile(0.5); q != 0 {
		t.Errorf("empty: %v", q)
	}
}

func TestCumulative(t *testing.T) {
	h := Histogram{Bounds: []float64{1, 2}, Counts: []uint64{1, 2, 3}}
	b, n, ok := h.Cumulative()
	if !ok || n != 6 || !maps.Equal(b, map[float64]uint64{1: 1, 2: 3}) {
		t.Errorf("Cumulative = %v %d %v", b, n, ok)
	}
	if _, _, ok := (Histogram{Bounds: []float64{1}, Counts: []uint64{1}}).Cumulative(); ok {
		t.Error("Cumulative accepted 1 count for 1 bound")
	}
}
