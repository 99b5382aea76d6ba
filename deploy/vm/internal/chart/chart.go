// Package chart draws the VM reports' charts as standalone SVG: one row
// per configuration, a bar at the median of its repetitions and a whisker
// over their spread (minimum to maximum), on a linear or a logarithmic
// axis with labelled ticks, so that a value a hundred times smaller than
// its neighbour is still a readable bar.
package chart

import (
	"fmt"
	"html"
	"math"
	"strings"
)

// A Row is one configuration: its label (what was run, in words), the
// median of its repetitions and their minimum and maximum.
type Row struct {
	Label       string
	Median      float64
	Min, Max    float64
	Note        string // printed after the value, e.g. "0.84× floor"
	Highlighted bool   // drawn in the accent colour
}

// Bars is a horizontal bar chart of rows under title; unit labels the
// axis. With log, the axis is logarithmic (base 10) from the decade below
// the smallest positive value; rows without a positive median are drawn
// without a bar and labelled "n/a".
func Bars(title, unit string, rows []Row, log bool) string {
	const (
		left, right, top = 250, 150, 44
		rowH             = 22
		plotW            = 420
	)
	lo, hi := math.Inf(1), 0.0
	for _, r := range rows {
		for _, v := range []float64{r.Median, r.Min, r.Max} {
			if v > 0 {
				lo, hi = math.Min(lo, v), math.Max(hi, v)
			}
		}
	}
	if hi == 0 {
		lo, hi = 1, 10
	}
	var ticks []float64
	var x func(v float64) float64
	if log {
		a, b := math.Floor(math.Log10(lo)), math.Ceil(math.Log10(hi))
		if b == a {
			b++
		}
		x = func(v float64) float64 {
			if v <= 0 {
				return 0
			}
			return (math.Log10(v) - a) / (b - a) * plotW
		}
		for e := a; e <= b; e++ {
			ticks = append(ticks, math.Pow(10, e))
		}
	} else {
		step := niceStep(hi / 4)
		for t := 0.0; t <= hi*1.0001; t += step {
			ticks = append(ticks, t)
		}
		if last := ticks[len(ticks)-1]; last < hi {
			ticks = append(ticks, last+step)
		}
		top := ticks[len(ticks)-1]
		x = func(v float64) float64 { return v / top * plotW }
	}
	h := top + len(rows)*rowH + 40
	w := left + plotW + right
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="8" y="18" font-size="13" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	scale := "linear scale"
	if log {
		scale = "log scale"
	}
	fmt.Fprintf(&b, `<text x="8" y="34" fill="#555">%s, %s; bar: median, whisker: min to max of the repetitions</text>`+"\n", html.EscapeString(unit), scale)
	axisY := top + len(rows)*rowH
	for _, t := range ticks {
		tx := float64(left) + x(t)
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", tx, top-4, tx, axisY)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%s</text>`+"\n", tx, axisY+14, Short(t))
	}
	for i, r := range rows {
		y := top + i*rowH
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-6, y+14, html.EscapeString(r.Label))
		if r.Median <= 0 {
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555">n/a</text>`+"\n", left+4, y+14)
			continue
		}
		fill := "#4e79a7"
		if r.Highlighted {
			fill = "#e15759"
		}
		bw := math.Max(1, x(r.Median))
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%.1f" height="%d" fill="%s"/>`+"\n", left, y+3, bw, rowH-8, fill)
		if r.Max > r.Min && r.Min > 0 {
			x0, x1 := float64(left)+x(r.Min), float64(left)+x(r.Max)
			cy := y + rowH/2 - 1
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", x0, cy, x1, cy)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", x0, cy-4, x0, cy+4)
			fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="black"/>`+"\n", x1, cy-4, x1, cy+4)
		}
		label := Short(r.Median)
		if r.Note != "" {
			label += "  " + r.Note
		}
		lx := float64(left) + math.Max(bw, x(r.Max)) + 6
		fmt.Fprintf(&b, `<text x="%.1f" y="%d">%s</text>`+"\n", lx, y+14, html.EscapeString(label))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// WideRange reports whether rows span more than a factor of ten, where a
// linear axis would leave the small ones as slivers: use it for Bars' log.
func WideRange(rows []Row) bool {
	lo, hi := math.Inf(1), 0.0
	for _, r := range rows {
		if r.Median > 0 {
			lo, hi = math.Min(lo, r.Median), math.Max(hi, r.Median)
		}
	}
	return hi > 10*lo
}

// niceStep rounds s up to 1, 2 or 5 times a power of ten.
func niceStep(s float64) float64 {
	if s <= 0 {
		return 1
	}
	p := math.Pow(10, math.Floor(math.Log10(s)))
	for _, m := range []float64{1, 2, 5, 10} {
		if m*p >= s {
			return m * p
		}
	}
	return 10 * p
}

// Short formats v with three significant digits and a k/M/G suffix.
func Short(v float64) string {
	a := math.Abs(v)
	switch {
	case a >= 1e9:
		return trim(v/1e9) + "G"
	case a >= 1e6:
		return trim(v/1e6) + "M"
	case a >= 1e4:
		return trim(v/1e3) + "k"
	case a == 0:
		return "0"
	}
	return trim(v)
}

func trim(v float64) string {
	s := fmt.Sprintf("%.3g", v)
	if strings.ContainsAny(s, "e") {
		s = fmt.Sprintf("%.0f", v)
	}
	return s
}
