package main

import (
	"fmt"
	"html"
	"strings"
)

// barSVG draws a grouped horizontal bar chart: one group per run, one bar
// per bin, length proportional to the count (the largest count spans the
// plot). Colours are fixed per bin so runs compare at a glance.
func barSVG(title string, runs, bins []string, rows [][]float64) string {
	const (
		left, right, top = 200, 90, 40
		barH, gap        = 12, 10
		plotW            = 460
	)
	peak := 0.0
	for _, r := range rows {
		for _, v := range r {
			if v > peak {
				peak = v
			}
		}
	}
	if peak == 0 {
		peak = 1
	}
	colours := []string{"#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"}
	groupH := len(bins)*barH + gap
	legendH := 20 * ((len(bins) + 3) / 4)
	h := top + len(runs)*groupH + legendH + 20
	w := left + plotW + right
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" font-family="sans-serif" font-size="11">`+"\n", w, h)
	fmt.Fprintf(&b, `<rect width="%d" height="%d" fill="white"/>`+"\n", w, h)
	fmt.Fprintf(&b, `<text x="8" y="18" font-size="13" font-weight="bold">%s</text>`+"\n", html.EscapeString(stripTicks(title)))
	for i, run := range runs {
		y0 := top + i*groupH
		fmt.Fprintf(&b, `<text x="%d" y="%d" text-anchor="end">%s</text>`+"\n", left-6, y0+len(bins)*barH/2+4, html.EscapeString(run))
		for j := range bins {
			v := rows[i][j]
			bw := int(v / peak * plotW)
			if v > 0 && bw < 1 {
				bw = 1
			}
			y := y0 + j*barH
			fmt.Fprintf(&b, `<rect x="%d" y="%d" width="%d" height="%d" fill="%s"/>`+"\n", left, y, bw, barH-2, colours[j%len(colours)])
			if v > 0 {
				fmt.Fprintf(&b, `<text x="%d" y="%d">%.0f</text>`+"\n", left+bw+4, y+barH-3, v)
			}
		}
	}
	ly := top + len(runs)*groupH + 10
	for j, bin := range bins {
		x := 10 + (j%4)*((w-20)/4)
		y := ly + (j/4)*20
		fmt.Fprintf(&b, `<rect x="%d" y="%d" width="12" height="12" fill="%s"/><text x="%d" y="%d">%s</text>`+"\n", x, y, colours[j%len(colours)], x+16, y+10, html.EscapeString(bin))
	}
	b.WriteString("</svg>\n")
	return b.String()
}

func stripTicks(s string) string { return strings.ReplaceAll(s, "`", "") }
