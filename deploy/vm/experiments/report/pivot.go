package main

import (
	"fmt"
	"strings"

	"github.com/vscsid/vscsid/deploy/vm/internal/chart"
)

// Pivot is an experiment's summary table: one row per distinct value of the
// Rows keys, one column per distinct value of Col, each cell Value of the
// run with those values (runs not matching Filter are left out).
type Pivot struct {
	Title  string
	Note   string
	Filter map[string]string
	Rows   []string
	Col    string
	Value  func(*Run) string
	// Num is Value as a number, for cells with several runs (repetitions):
	// the cell shows the median, the range and the count. Without Num the
	// cell shows the last run's Value.
	Num func(*Run) (float64, bool)
	// Ratio adds a column: the first column's number over the second's.
	Ratio string
}

func mbsNum(r *Run) (float64, bool) {
	rd, wr := r.Bytes()
	if r.KV["rc"] != "0" || r.Wall() <= 0 {
		return 0, false
	}
	return (rd + wr) / r.Wall() / 1e6, true
}

// cellValue renders the runs of one cell: a single run's Value, or with
// Num and several runs "median (min–max, n=N)"; a failed run among them
// is shown as such.
func (p *Pivot) cellValue(runs []*Run) string {
	if len(runs) == 0 {
		return "–"
	}
	if len(runs) == 1 || p.Num == nil {
		return p.Value(runs[len(runs)-1])
	}
	var xs []float64
	failed := 0
	for _, r := range runs {
		if v, ok := p.Num(r); ok {
			xs = append(xs, v)
		} else {
			failed++
		}
	}
	if len(xs) == 0 {
		return p.Value(runs[0])
	}
	med, lo, hi := chart.MedianSpread(xs)
	s := fmt.Sprintf("%.2f (%.2f–%.2f, n=%d)", med, lo, hi, len(xs))
	if failed > 0 {
		s += fmt.Sprintf(", %d failed", failed)
	}
	return s
}

func mbs(r *Run) string {
	if r.KV["rc"] != "0" {
		return "failed"
	}
	rd, wr := r.Bytes()
	if r.Wall() <= 0 {
		return "–"
	}
	return fmt.Sprintf("%.2f", (rd+wr)/r.Wall()/1e6)
}

func sysCPU(r *Run) string {
	sys, busy, ok := r.CPU()
	if !ok {
		return "–"
	}
	return fmt.Sprintf("%.0f / %.0f", sys, busy)
}

// rwCommands counts the run's READ(6/10/12/16) and WRITE(6/10/12/16).
func rwCommands(r *Run) float64 {
	n := 0.0
	for name, v := range r.Commands() {
		switch name {
		case "read_6", "read_10", "read_12", "read_16", "write_6", "write_10", "write_12", "write_16":
			n += v
		}
	}
	return n
}

// avgKiB is "READ/WRITE commands × bytes per command" (the bytes include
// the few bytes of INQUIRY or MODE SENSE a tool's open adds).
func avgKiB(r *Run) string {
	rd, wr := r.Bytes()
	n := rwCommands(r)
	if n == 0 {
		return "no READ/WRITE"
	}
	return fmt.Sprintf("%.0f × %.1f KiB", n, (rd+wr)/n/1024)
}

func outcome(r *Run) string {
	l := keyLine(r.Output, r.KV["rc"] != "0")
	n := rwCommands(r)
	if r.KV["rc"] == "0" {
		if i := strings.Index(l, ", direct "); i >= 0 {
			return fmt.Sprintf("ok (%s; %.0f cmds)", strings.TrimPrefix(l[i+2:], " "), n)
		}
		return fmt.Sprintf("ok (%.0f cmds)", n)
	}
	if i := strings.LastIndex(l, ": "); i >= 0 {
		l = l[i+2:]
	}
	return fmt.Sprintf("**%s** (%.0f cmds)", l, n)
}

// pivots are the summary tables of each experiment.
var pivots = map[string][]Pivot{
	"merging": {{
		Title: "READ/WRITE commands × average size, per target and disk",
		Rows:  []string{"target"}, Col: "device", Value: avgKiB,
	}, {
		Title: "MB/s per target and disk",
		Rows:  []string{"target"}, Col: "device", Value: mbs, Num: mbsNum,
	}},
	"sg-chaining": {{
		Title: "MB/s per pages per command (failed: the kernel refused the command)",
		Rows:  []string{"pages", "kib_per_cmd"}, Col: "op", Value: mbs, Num: mbsNum,
	}, {
		Title: "READ/WRITE commands × average size that reached vscsid",
		Rows:  []string{"pages", "kib_per_cmd"}, Col: "op", Value: avgKiB,
	}},
	"direct-io": {{
		Title: "MB/s", Rows: []string{"op", "bs"}, Col: "path", Value: mbs, Num: mbsNum,
	}, {
		Title: "CPU % of both guest CPUs, sys / busy", Rows: []string{"op", "bs"}, Col: "path", Value: sysCPU,
	}, {
		Title: "READ/WRITE commands × average size", Rows: []string{"op", "bs"}, Col: "path", Value: avgKiB,
	}},
	"st-direct-io": {{
		Title:  "Read MB/s, try_direct_io on (1) and off (0)",
		Note:   "ratio = MB/s with direct I/O on / off (below 1: direct I/O is slower).",
		Filter: map[string]string{"op": "read"},
		Rows:   []string{"blocks", "dd_bs"}, Col: "try_direct_io", Value: mbs, Num: mbsNum, Ratio: "1/0",
	}, {
		Title:  "Write MB/s, try_direct_io on (1) and off (0)",
		Filter: map[string]string{"op": "write"},
		Rows:   []string{"blocks", "dd_bs"}, Col: "try_direct_io", Value: mbs, Num: mbsNum, Ratio: "1/0",
	}, {
		Title: "READ/WRITE commands × average size", Rows: []string{"blocks", "op", "dd_bs"}, Col: "try_direct_io", Value: avgKiB,
	}},
	"alignment": {{
		Title: "Outcome per buffer alignment (bytes past a page boundary; 4096 = page aligned)",
		Note:  "cmds: READ/WRITE commands vscsid saw during the run. sg: direct = pages mapped, copied = the kernel bounced through its own buffer.",
		Rows:  []string{"path", "op"}, Col: "align", Value: outcome,
	}},
}

func (rep *Report) pivotTables(b *strings.Builder, exp string) {
	ps := pivots[exp]
	if len(ps) == 0 {
		return
	}
	b.WriteString("## Summary\n\n")
	for _, p := range ps {
		var rowKeys, cols []string
		seenR, seenC := map[string]bool{}, map[string]bool{}
		cell := map[string][]*Run{}
		for _, r := range rep.Res.Runs {
			skip := false
			for k, v := range p.Filter {
				if r.KV[k] != v {
					skip = true
				}
			}
			if skip {
				continue
			}
			var parts []string
			for _, k := range p.Rows {
				parts = append(parts, r.KV[k])
			}
			rk := strings.Join(parts, " | ")
			c := r.KV[p.Col]
			if !seenR[rk] {
				seenR[rk] = true
				rowKeys = append(rowKeys, rk)
			}
			if !seenC[c] {
				seenC[c] = true
				cols = append(cols, c)
			}
			cell[rk+"\x00"+c] = append(cell[rk+"\x00"+c], r)
		}
		if len(rowKeys) == 0 {
			continue
		}
		fmt.Fprintf(b, "### %s\n\n", p.Title)
		if p.Note != "" {
			fmt.Fprintf(b, "%s\n\n", p.Note)
		}
		b.WriteString("|")
		for _, k := range p.Rows {
			fmt.Fprintf(b, " %s |", k)
		}
		for _, c := range cols {
			fmt.Fprintf(b, " %s=%s |", p.Col, c)
		}
		if p.Ratio != "" {
			b.WriteString(" ratio |")
		}
		b.WriteString("\n|")
		for range p.Rows {
			b.WriteString("---|")
		}
		for range cols {
			b.WriteString("---:|")
		}
		if p.Ratio != "" {
			b.WriteString("---:|")
		}
		b.WriteString("\n")
		for _, rk := range rowKeys {
			fmt.Fprintf(b, "| %s |", rk)
			var nums []float64
			for _, c := range cols {
				v := p.cellValue(cell[rk+"\x00"+c])
				var f float64
				if _, err := fmt.Sscanf(v, "%g", &f); err == nil {
					nums = append(nums, f)
				}
				fmt.Fprintf(b, " %s |", v)
			}
			if p.Ratio != "" {
				if len(nums) == 2 && nums[1] > 0 {
					fmt.Fprintf(b, " %.2f |", nums[0]/nums[1])
				} else {
					b.WriteString(" – |")
				}
			}
			b.WriteString("\n")
		}
		b.WriteString("\n")
	}
}
