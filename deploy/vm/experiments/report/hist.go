package main

import (
	"math"
	"sort"
	"strconv"

	"github.com/vscsid/vscsid/deploy/vm/internal/prom"
)

// Bucket is one histogram bin: the count of observations in (prev, Le].
type Bucket struct {
	Le    float64
	Count float64
}

// HistDelta turns the cumulative _bucket series of a histogram in two
// scrapes into per-bin counts of what happened between them.
func HistDelta(before, after prom.Scrape, name string, want map[string]string) []Bucket {
	b := before.By(name+"_bucket", want, "le")
	a := after.By(name+"_bucket", want, "le")
	var les []float64
	for k := range a {
		le, err := strconv.ParseFloat(k, 64)
		if err != nil {
			continue
		}
		les = append(les, le)
	}
	sort.Float64s(les)
	var out []Bucket
	prev := 0.0
	for _, le := range les {
		k := formatLe(le, a)
		cum := a[k] - b[k]
		out = append(out, Bucket{Le: le, Count: cum - prev})
		prev = cum
	}
	return out
}

// formatLe finds the label spelling of le in m ("+Inf", "512", "1.048576e+06").
func formatLe(le float64, m map[string]float64) string {
	for k := range m {
		v, err := strconv.ParseFloat(k, 64)
		if err == nil && (v == le || (math.IsInf(v, 1) && math.IsInf(le, 1))) {
			return k
		}
	}
	return ""
}
