// Package prom reads the Prometheus text expositions the VM suite saves
// (scrapes of vscsid's /metrics) with the Prometheus project's own parser,
// expfmt, and gives them back as the text format's samples: the one reader
// of scrapes under deploy/vm.
package prom

import (
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
)

// Sample is one series of a scrape as the text format writes it: a
// histogram's _bucket (with its le label), _sum and _count series, a
// summary's quantiles, _sum and _count, a counter's or gauge's value.
type Sample struct {
	Name   string
	Labels map[string]string
	Value  float64
}

// Scrape is one exposition's samples.
type Scrape []Sample

// Parse reads a text exposition. A line expfmt cannot read is an error
// naming it: a truncated scrape must not become zeros.
func Parse(r io.Reader) (Scrape, error) {
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(r)
	if err != nil {
		return nil, err
	}
	var out Scrape
	for name, mf := range fams {
		for _, m := range mf.GetMetric() {
			out = appendSamples(out, name, mf.GetType(), m)
		}
	}
	return out, nil
}

// ParseFile is Parse of a file; errors name it.
func ParseFile(path string) (Scrape, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	s, err := Parse(f)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return s, nil
}

func appendSamples(out Scrape, name string, t dto.MetricType, m *dto.Metric) Scrape {
	labels := func(extra ...string) map[string]string {
		l := make(map[string]string, len(m.GetLabel())+1)
		for _, p := range m.GetLabel() {
			l[p.GetName()] = p.GetValue()
		}
		for i := 0; i+1 < len(extra); i += 2 {
			l[extra[i]] = extra[i+1]
		}
		return l
	}
	switch t {
	case dto.MetricType_COUNTER:
		return append(out, Sample{name, labels(), m.GetCounter().GetValue()})
	case dto.MetricType_GAUGE:
		return append(out, Sample{name, labels(), m.GetGauge().GetValue()})
	case dto.MetricType_HISTOGRAM, dto.MetricType_GAUGE_HISTOGRAM:
		h := m.GetHistogram()
		for _, b := range h.GetBucket() {
			n := float64(b.GetCumulativeCount())
			if b.CumulativeCountFloat != nil {
				n = b.GetCumulativeCountFloat()
			}
			out = append(out, Sample{name + "_bucket", labels("le", FormatFloat(b.GetUpperBound())), n})
		}
		n := float64(h.GetSampleCount())
		if h.SampleCountFloat != nil {
			n = h.GetSampleCountFloat()
		}
		return append(out, Sample{name + "_sum", labels(), h.GetSampleSum()}, Sample{name + "_count", labels(), n})
	case dto.MetricType_SUMMARY:
		s := m.GetSummary()
		for _, q := range s.GetQuantile() {
			out = append(out, Sample{name, labels("quantile", FormatFloat(q.GetQuantile())), q.GetValue()})
		}
		return append(out, Sample{name + "_sum", labels(), s.GetSampleSum()},
			Sample{name + "_count", labels(), float64(s.GetSampleCount())})
	default:
		return append(out, Sample{name, labels(), m.GetUntyped().GetValue()})
	}
}

// FormatFloat spells a value as the exposition does (le="+Inf",
// le="1.048576e+06").
func FormatFloat(v float64) string {
	switch {
	case math.IsInf(v, 1):
		return "+Inf"
	case math.IsInf(v, -1):
		return "-Inf"
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}

// Has reports whether the scrape has a series of this name.
func (s Scrape) Has(name string) bool {
	for _, x := range s {
		if x.Name == name {
			return true
		}
	}
	return false
}

// Match reports whether x is a series of name whose labels include every
// pair of want. The le and quantile labels compare as numbers, so that
// le="1048576" matches the exposition's le="1.048576e+06".
func (x Sample) Match(name string, want map[string]string) bool {
	if x.Name != name {
		return false
	}
	for k, v := range want {
		got, ok := x.Labels[k]
		if !ok {
			return false
		}
		numeric := k == "le" || k == "quantile"
		if got != v && (!numeric || !sameNumber(got, v)) {
			return false
		}
	}
	return true
}

func sameNumber(a, b string) bool {
	x, err1 := strconv.ParseFloat(a, 64)
	y, err2 := strconv.ParseFloat(b, 64)
	return err1 == nil && err2 == nil && x == y
}

// Sum adds the values of the series of name matching want.
func (s Scrape) Sum(name string, want map[string]string) float64 {
	t := 0.0
	for _, x := range s {
		if x.Match(name, want) {
			t += x.Value
		}
	}
	return t
}

// By sums the series of name matching want, grouped by the label key.
func (s Scrape) By(name string, want map[string]string, key string) map[string]float64 {
	m := map[string]float64{}
	for _, x := range s {
		if x.Match(name, want) {
			m[x.Labels[key]] += x.Value
		}
	}
	return m
}

// Selector is a PromQL series selector with equality matchers only:
// name{label="value",...}.
type Selector struct {
	Name   string
	Labels map[string]string
}

// ParseSelector reads a selector with the exposition's own parser: a
// selector with only = matchers is a series of the text format, so it
// is parsed as that series with a value.
func ParseSelector(text string) (Selector, error) {
	text = strings.TrimSpace(text)
	bad := func(why string) (Selector, error) {
		return Selector{}, fmt.Errorf("selector %s: %s (want name{label=\"value\",...}, = matchers only)", text, why)
	}
	if text == "" || strings.ContainsAny(text, "\n#") {
		return bad("not one series")
	}
	s, err := Parse(strings.NewReader(text + " 0\n"))
	if err != nil {
		return bad(err.Error())
	}
	if len(s) != 1 {
		return bad("not one series")
	}
	return Selector{Name: s[0].Name, Labels: s[0].Labels}, nil
}

// Select is the sum of the series sel matches. The metric must have a series
// in the scrape (client_golang never writes a metric without one), so
// that a misspelt name is an error, not a 0; a series of it that sel does
// not match counts 0.
func (s Scrape) Select(sel Selector) (float64, error) {
	if !s.Has(sel.Name) {
		return 0, fmt.Errorf("no metric %s in the scrape", sel.Name)
	}
	return s.Sum(sel.Name, sel.Labels), nil
}
