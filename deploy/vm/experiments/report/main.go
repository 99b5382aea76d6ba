// Command report turns one experiment run's artefacts (results.txt, the
// metrics scrapes before and after each run, the tools' output, the vscsid
// config) into report.md with tables built only from that run's numbers,
// plus an SVG bar chart per histogram. Standard library only.
//
//	go run ./deploy/vm/experiments/report -in ARTEFACTS/exp-merging -out DIR
//
// results.txt lines (written by the exp-*.sh scenarios in the guest):
//
//	info key=value ...
//	run NAME device=DEV rc=N t0=UPTIME t1=UPTIME cpu0=T,T,.. cpu1=T,T,.. [key=value ...]
package main

import (
	"bufio"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/vscsid/vscsid/deploy/vm/internal/prom"
)

// Run is one measured workload.
type Run struct {
	Name   string
	KV     map[string]string
	Extra  []string // keys beyond the standard ones, in order
	Before prom.Scrape
	After  prom.Scrape
	Output string
}

// Results is results.txt.
type Results struct {
	Info     map[string]string
	InfoKeys []string
	Runs     []*Run
}

var stdKeys = map[string]bool{"device": true, "rc": true, "t0": true, "t1": true, "cpu0": true, "cpu1": true}

// ParseResults reads results.txt; a malformed line is an error.
func ParseResults(path string) (*Results, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }()
	res := &Results{Info: map[string]string{}}
	sc := bufio.NewScanner(f)
	n := 0
	for sc.Scan() {
		n++
		fs := strings.Fields(sc.Text())
		if len(fs) == 0 {
			continue
		}
		switch fs[0] {
		case "info":
			for _, kv := range fs[1:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return nil, fmt.Errorf("%s:%d: %q is not key=value", path, n, kv)
				}
				if _, seen := res.Info[k]; !seen {
					res.InfoKeys = append(res.InfoKeys, k)
				}
				res.Info[k] = v
			}
		case "run":
			if len(fs) < 2 {
				return nil, fmt.Errorf("%s:%d: run without a name", path, n)
			}
			r := &Run{Name: fs[1], KV: map[string]string{}}
			for _, kv := range fs[2:] {
				k, v, ok := strings.Cut(kv, "=")
				if !ok {
					return nil, fmt.Errorf("%s:%d: %q is not key=value", path, n, kv)
				}
				if _, seen := r.KV[k]; !seen && !stdKeys[k] {
					r.Extra = append(r.Extra, k)
				}
				r.KV[k] = v
			}
			res.Runs = append(res.Runs, r)
		default:
			return nil, fmt.Errorf("%s:%d: unknown record %q", path, n, fs[0])
		}
	}
	return res, sc.Err()
}

func (r *Run) num(k string) float64 {
	v, _ := strconv.ParseFloat(r.KV[k], 64)
	return v
}

// Wall is the run's duration from the guest's /proc/uptime.
func (r *Run) Wall() float64 { return r.num("t1") - r.num("t0") }

// CPU returns the system (system+irq+softirq) and busy (all but idle and
// iowait) shares of all CPUs during the run, in percent.
func (r *Run) CPU() (sys, busy float64, ok bool) {
	a := ticks(r.KV["cpu0"])
	b := ticks(r.KV["cpu1"])
	if len(a) < 7 || len(b) < 7 {
		return 0, 0, false
	}
	d := make([]float64, len(a))
	total := 0.0
	for i := range a {
		if i < len(b) {
			d[i] = b[i] - a[i]
			if i < 8 { // user..steal; guest time is already in user
				total += d[i]
			}
		}
	}
	if total <= 0 {
		return 0, 0, false
	}
	sys = (d[2] + d[5] + d[6]) / total * 100
	busy = (total - d[3] - d[4]) / total * 100
	return sys, busy, true
}

func ticks(s string) []float64 {
	var out []float64
	for _, f := range strings.Split(s, ",") {
		v, err := strconv.ParseFloat(f, 64)
		if err != nil {
			return nil
		}
		out = append(out, v)
	}
	return out
}

func (r *Run) dev() map[string]string { return map[string]string{"device": r.KV["device"]} }

func (r *Run) delta(name string, want map[string]string) float64 {
	return r.After.Sum(name, want) - r.Before.Sum(name, want)
}

// Commands is the per-command-name delta of vscsi_scsi_commands_total.
func (r *Run) Commands() map[string]float64 {
	a := r.After.By("vscsi_scsi_commands_total", r.dev(), "command")
	b := r.Before.By("vscsi_scsi_commands_total", r.dev(), "command")
	for k := range a {
		a[k] -= b[k]
	}
	return a
}

// DataCommands counts commands that moved data, from the transfer histogram.
func (r *Run) DataCommands(dir string) float64 {
	return r.delta("vscsi_scsi_transfer_bytes_count", map[string]string{"device": r.KV["device"], "direction": dir})
}

// Bytes moved by the device in the run.
func (r *Run) Bytes() (read, written float64) {
	return r.delta("vscsi_scsi_read_bytes_total", r.dev()), r.delta("vscsi_scsi_written_bytes_total", r.dev())
}

func main() {
	in := flag.String("in", "", "the experiment's artefact directory (…/artefacts/exp-NAME)")
	out := flag.String("out", "", "output directory for report.md and the SVG charts")
	transports := flag.String("transports", "", "sg-chaining: the Markdown table of the same runs over iSCSI and tcm_loop in the full guest (deploy/vm/full/run --suite chaining), for a section of its own")
	flag.Parse()
	if *in == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: report -in ARTEFACTS/exp-NAME -out DIR")
		os.Exit(2)
	}
	if err := run(*in, *out, *transports); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

func run(in, out, transports string) error {
	res, err := ParseResults(filepath.Join(in, "results.txt"))
	if err != nil {
		return err
	}
	if len(res.Runs) == 0 {
		return fmt.Errorf("%s/results.txt has no runs", in)
	}
	for _, r := range res.Runs {
		if r.Before, err = loadScrape(filepath.Join(in, r.Name+".before.prom")); err != nil {
			return err
		}
		if r.After, err = loadScrape(filepath.Join(in, r.Name+".after.prom")); err != nil {
			return err
		}
		b, _ := os.ReadFile(filepath.Join(in, r.Name+".out"))
		r.Output = string(b)
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	rep := &Report{Res: res, In: in, Out: out}
	if transports != "" {
		b, err := os.ReadFile(transports)
		if err != nil {
			return err
		}
		rep.Transports = string(b)
	}
	md, err := rep.Markdown()
	if err != nil {
		return err
	}
	return os.WriteFile(filepath.Join(out, "report.md"), []byte(md), 0o644)
}

func loadScrape(path string) (prom.Scrape, error) {
	s, err := prom.ParseFile(path)
	if err != nil {
		return nil, err
	}
	if len(s) == 0 {
		return nil, fmt.Errorf("%s: empty scrape", path)
	}
	return s, nil
}
