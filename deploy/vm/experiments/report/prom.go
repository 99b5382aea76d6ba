package main

import (
	"bufio"
	"fmt"
	"io"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Sample is one line of the Prometheus text exposition.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Scrape is a parsed /metrics body.
type Scrape []Sample

// ParseProm reads the Prometheus text format (comments skipped). A line it
// cannot read is an error naming the line: a truncated scrape must not
// silently become zeros in a report.
func ParseProm(r io.Reader) (Scrape, error) {
	var out Scrape
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	n := 0
	for sc.Scan() {
		n++
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		s, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		out = append(out, s)
	}
	return out, sc.Err()
}

func parseSample(line string) (Sample, error) {
	s := Sample{Labels: map[string]string{}}
	i := strings.IndexAny(line, "{ ")
	if i <= 0 {
		return s, fmt.Errorf("no value in %q", line)
	}
	s.Name = line[:i]
	rest := line[i:]
	if rest[0] == '{' {
		rest = rest[1:]
		for {
			rest = strings.TrimLeft(rest, " ,")
			if rest == "" {
				return s, fmt.Errorf("unterminated labels in %q", line)
			}
			if rest[0] == '}' {
				rest = rest[1:]
				break
			}
			eq := strings.IndexByte(rest, '=')
			if eq <= 0 || eq+1 >= len(rest) || rest[eq+1] != '"' {
				return s, fmt.Errorf("bad label in %q", line)
			}
			key := strings.TrimSpace(rest[:eq])
			rest = rest[eq+2:]
			var b strings.Builder
			closed := false
			for j := 0; j < len(rest); j++ {
				c := rest[j]
				if c == '\\' && j+1 < len(rest) {
					j++
					switch rest[j] {
					case 'n':
						b.WriteByte('\n')
					default:
						b.WriteByte(rest[j])
					}
					continue
				}
				if c == '"' {
					rest = rest[j+1:]
					closed = true
					break
				}
				b.WriteByte(c)
			}
			if !closed {
				return s, fmt.Errorf("unterminated label value in %q", line)
			}
			s.Labels[key] = b.String()
		}
	}
	f := strings.Fields(rest)
	if len(f) < 1 {
		return s, fmt.Errorf("no value in %q", line)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return s, fmt.Errorf("bad value in %q: %w", line, err)
	}
	s.Value = v
	return s, nil
}

// match reports whether every wanted label has the wanted value.
func (s Sample) match(name string, want map[string]string) bool {
	if s.Name != name {
		return false
	}
	for k, v := range want {
		if s.Labels[k] != v {
			return false
		}
	}
	return true
}

// Sum adds the samples of name matching want.
func (sc Scrape) Sum(name string, want map[string]string) float64 {
	t := 0.0
	for _, s := range sc {
		if s.match(name, want) {
			t += s.Value
		}
	}
	return t
}

// By sums name's samples matching want, grouped by the label key.
func (sc Scrape) By(name string, want map[string]string, key string) map[string]float64 {
	m := map[string]float64{}
	for _, s := range sc {
		if s.match(name, want) {
			m[s.Labels[key]] += s.Value
		}
	}
	return m
}

// Bucket is one histogram bin: the count of observations in (prev, Le].
type Bucket struct {
	Le    float64
	Count float64
}

// HistDelta turns the cumulative _bucket series of a histogram in two
// scrapes into per-bin counts of what happened between them.
func HistDelta(before, after Scrape, name string, want map[string]string) []Bucket {
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
