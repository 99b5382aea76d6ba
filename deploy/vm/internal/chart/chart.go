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
	"slices"
	"strings"
	"unicode/utf8"
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

// A ShareRow is one configuration of a histogram chart: the count in each
// bin (the median over its repetitions) and a note for the row's end,
// such as the number of commands.
type ShareRow struct {
	Label  string
	Counts []float64 // one per bin, in the order of Shares' bins
	Note   string
}

// Shares draws a histogram per row as one bar split into its bins' shares
// of the row's total (100 % stacked): configurations with a hundred times
// fewer commands than their neighbours are as readable as those with the
// most, and the total goes in the note. bins label the bins in order
// (smallest first); every bin has a colour and a legend entry, also when
// no row has counts in it, so a reader sees which sizes were absent.
// A share of 8 % or more is labelled with its percentage.
func Shares(title string, bins []string, rows []ShareRow) string {
	const (
		top          = 44
		rowH         = 24
		plotW        = 420
		legendRow    = 18
		perLegendRow = 6
	)
	var labels, notes []string
	for _, r := range rows {
		labels, notes = append(labels, r.Label), append(notes, r.Note)
	}
	left, right := textWidth(labels)+14, textWidth(notes)+14
	legendH := legendRow * ((len(bins) + perLegendRow - 1) / perLegendRow)
	axisY := top + len(rows)*rowH
	h := axisY + 24 + legendH + 8
	w := left + plotW + right
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="8" y="18" font-size="13" font-weight="bold">%s</text>`+"\n", html.EscapeString(title))
	fmt.Fprintf(&b, `<text x="8" y="34" fill="#555">share of each row's commands per bin (the row's total at its end)</text>`+"\n")
	for _, pct := range []int{0, 25, 50, 75, 100} {
		tx := float64(left) + float64(pct)/100*plotW
		fmt.Fprintf(&b, `<line x1="%.1f" y1="%d" x2="%.1f" y2="%d" stroke="#ddd"/>`+"\n", tx, top-4, tx, axisY)
		fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="#555">%d%%</text>`+"\n", tx, axisY+14, pct)
	}
	for i, r := range rows {
		y := top + i*rowH
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-6, y+15, html.EscapeString(r.Label))
		total := 0.0
		for _, c := range r.Counts {
			total += c
		}
		if total <= 0 {
			fmt.Fprintf(&b, `<text x="%d" y="%d" fill="#555">no commands</text>`+"\n", left+4, y+15)
			continue
		}
		x := float64(left)
		for j, c := range r.Counts {
			if c <= 0 {
				continue
			}
			share := c / total
			sw := share * plotW
			fmt.Fprintf(&b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s"><title>%s: %s (%.1f%%)</title></rect>`+"\n",
				x, y+3, math.Max(sw, 1), rowH-8, binColour(j, len(bins)), html.EscapeString(bins[j]), Short(c), 100*share)
			if share >= 0.08 {
				fmt.Fprintf(&b, `<text x="%.1f" y="%d" text-anchor="middle" fill="%s">%.0f%%</text>`+"\n", x+sw/2, y+15, binInk(j, len(bins)), 100*share)
			}
			x += sw
		}
		if r.Note != "" {
			fmt.Fprintf(&b, `<text x="%d" y="%d">%s</text>`+"\n", left+plotW+6, y+15, html.EscapeString(r.Note))
		}
	}
	ly := axisY + 24
	colW := (w - 16) / perLegendRow
	for j, bin := range bins {
		lx := 8 + (j%perLegendRow)*colW
		y := ly + (j/perLegendRow)*legendRow
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", lx, y, binColour(j, len(bins)), lx+16, y+10, html.EscapeString(bin))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

// textWidth estimates the widest of ss in pixels at the charts' 11 px
// sans-serif, so labels are not cut off. 7 px a character is DejaVu Sans's
// width for digits and lower case (the font Debian's SVG renderers pick);
// at 6.2 the notes' "2048 commands" lost its last letters at the edge.
func textWidth(ss []string) int {
	n := 0
	for _, s := range ss {
		n = max(n, utf8.RuneCountInString(s))
	}
	return n * 7
}

// viridis is the viridis colour map at five stops: ordered, readable in
// grey and by colour-blind readers, and adjacent bins stay distinct.
var viridis = [5][3]float64{{0x44, 0x01, 0x54}, {0x3b, 0x52, 0x8b}, {0x21, 0x91, 0x8c}, {0x5e, 0xc9, 0x62}, {0xfd, 0xe7, 0x25}}

// binColour runs from viridis's yellow (the smallest bin) to its purple
// (the largest), so that larger bins read as darker: the bins are ordered
// sizes, not categories.
func binColour(j, n int) string {
	t := binShade(j, n)
	k := min(int(t*4), 3)
	f := t*4 - float64(k)
	c := func(i int) int { return int(math.Round(viridis[k][i] + (viridis[k+1][i]-viridis[k][i])*f)) }
	return fmt.Sprintf("#%02x%02x%02x", c(0), c(1), c(2))
}

// binShade places bin j of n on the colour map: 1 is viridis's yellow,
// 0 its purple. A lone bin is purple.
func binShade(j, n int) float64 {
	if n > 1 {
		return 1 - float64(j)/float64(n-1)
	}
	return 0
}

// binInk is the label colour on a bin's colour: white on the dark half,
// black on the light one. It reads the same shade binColour paints, so the
// two cannot disagree (a lone bin had black on purple).
func binInk(j, n int) string {
	if binShade(j, n) < 0.5 {
		return "white"
	}
	return "black"
}

// MedianSpread is the median, minimum and maximum of xs (0s when empty):
// what a Row shows of a configuration's repetitions.
func MedianSpread(xs []float64) (med, lo, hi float64) {
	if len(xs) == 0 {
		return 0, 0, 0
	}
	s := slices.Clone(xs)
	slices.Sort(s)
	n := len(s)
	med = s[n/2]
	if n%2 == 0 {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	return med, s[0], s[n-1]
}
