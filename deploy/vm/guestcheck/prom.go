package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"
)

// sample is one line of the exposition: a series and its value.
type sample struct {
	name   string
	labels map[string]string
	value  float64
}

// scrape is a parsed exposition: its samples, and every metric name it
// mentions (samples, HELP and TYPE lines).
type scrape struct {
	samples []sample
	names   map[string]bool
}

// selector is name{label="value",...}: the series of that name whose
// labels include every pair.
type selector struct {
	name   string
	labels map[string]string
}

// sum adds the values of the samples sel matches. The metric must be in
// the scrape; a histogram's _bucket, _sum and _count series belong to the
// metric named in its TYPE line.
func (s *scrape) sum(sel selector) (float64, error) {
	known := s.names[sel.name]
	for _, suffix := range []string{"_bucket", "_sum", "_count", "_total"} {
		if base, ok := strings.CutSuffix(sel.name, suffix); ok && s.names[base] {
			known = true
		}
	}
	if !known {
		return 0, fmt.Errorf("no metric %s in the scrape", sel.name)
	}
	var v float64
next:
	for _, x := range s.samples {
		if x.name != sel.name {
			continue
		}
		for k, want := range sel.labels {
			if got, ok := x.labels[k]; !ok || got != want {
				continue next
			}
		}
		v += x.value
	}
	return v, nil
}

func parseScrape(r io.Reader) (*scrape, error) {
	s := &scrape{names: map[string]bool{}}
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		line := strings.TrimSpace(sc.Text())
		if line == "" {
			continue
		}
		if rest, ok := strings.CutPrefix(line, "#"); ok {
			f := strings.Fields(rest)
			if len(f) >= 2 && (f[0] == "HELP" || f[0] == "TYPE") {
				s.names[f[1]] = true
			}
			continue
		}
		x, err := parseSample(line)
		if err != nil {
			return nil, fmt.Errorf("line %d: %w", n, err)
		}
		s.names[x.name] = true
		s.samples = append(s.samples, x)
	}
	return s, sc.Err()
}

// parseSample parses `name{l="v",...} value [timestamp]`.
func parseSample(line string) (sample, error) {
	name, labels, rest, err := parseSeries(line)
	if err != nil {
		return sample{}, err
	}
	f := strings.Fields(rest)
	if len(f) < 1 || len(f) > 2 {
		return sample{}, fmt.Errorf("want a value (and a timestamp) after the series: %q", line)
	}
	v, err := strconv.ParseFloat(f[0], 64)
	if err != nil {
		return sample{}, fmt.Errorf("bad value %q", f[0])
	}
	return sample{name: name, labels: labels, value: v}, nil
}

func parseSelector(text string) (selector, error) {
	name, labels, rest, err := parseSeries(strings.TrimSpace(text))
	if err != nil {
		return selector{}, fmt.Errorf("selector %s: %w", text, err)
	}
	if strings.TrimSpace(rest) != "" {
		return selector{}, fmt.Errorf("selector %s: trailing %q", text, rest)
	}
	return selector{name: name, labels: labels}, nil
}

// parseSeries reads a metric name and an optional {label="value",...}
// set (label values with the exposition's \\, \" and \n escapes) from the
// start of s, and returns what follows.
func parseSeries(s string) (name string, labels map[string]string, rest string, err error) {
	i := 0
	for i < len(s) && isNameChar(s[i], i == 0, true) {
		i++
	}
	if i == 0 {
		return "", nil, "", fmt.Errorf("no metric name at %q", s)
	}
	name, s = s[:i], s[i:]
	labels = map[string]string{}
	if !strings.HasPrefix(s, "{") {
		return name, labels, s, nil
	}
	s = s[1:]
	for {
		s = strings.TrimLeft(s, " ")
		if strings.HasPrefix(s, "}") {
			return name, labels, s[1:], nil
		}
		j := 0
		for j < len(s) && isNameChar(s[j], j == 0, false) {
			j++
		}
		if j == 0 || !strings.HasPrefix(s[j:], `="`) {
			return "", nil, "", fmt.Errorf("want label=\"value\" at %q (only = matchers)", s)
		}
		key := s[:j]
		s = s[j+2:]
		var b strings.Builder
		closed := false
		for k := 0; k < len(s); k++ {
			c := s[k]
			if c == '"' {
				s, closed = s[k+1:], true
				break
			}
			if c == '\\' && k+1 < len(s) {
				k++
				switch s[k] {
				case 'n':
					b.WriteByte('\n')
				default:
					b.WriteByte(s[k])
				}
				continue
			}
			b.WriteByte(c)
		}
		if !closed {
			return "", nil, "", fmt.Errorf("unterminated value of label %s", key)
		}
		if _, dup := labels[key]; dup {
			return "", nil, "", fmt.Errorf("label %s twice", key)
		}
		labels[key] = b.String()
		s = strings.TrimLeft(s, " ")
		switch {
		case strings.HasPrefix(s, ","):
			s = s[1:]
		case strings.HasPrefix(s, "}"):
		default:
			return "", nil, "", fmt.Errorf("want , or } after label %s at %q", key, s)
		}
	}
}

func isNameChar(c byte, first, colon bool) bool {
	switch {
	case c >= 'a' && c <= 'z', c >= 'A' && c <= 'Z', c == '_':
		return true
	case c == ':':
		return colon
	case c >= '0' && c <= '9':
		return !first
	}
	return false
}
