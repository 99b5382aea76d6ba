// Command report turns the raw results of one perf suite run (the perf/
// directory deploy/vm/full/run extracts: fio JSON, /proc counters, stream
// timings) into a Markdown report with SVG charts. Every figure in the
// report comes from that one directory: one boot, one kernel, the
// configurations interleaved.
//
//	report -in RUN/perf -out DIR
package main

import (
	"errors"
	"flag"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/vscsid/vscsid/deploy/vm/internal/chart"
	"github.com/vscsid/vscsid/deploy/vm/internal/fio"
	"github.com/vscsid/vscsid/deploy/vm/internal/prom"
)

// The workloads in the suite's order (perf.sh PERF_WORKLOADS) and the
// words a reader sees for them.
var workloads = []struct{ id, words string }{
	{"randread-4k-qd1", "4 KiB random read, QD1"},
	{"randread-4k-qd32x2", "4 KiB random read, QD32 × 2 jobs"},
	{"randwrite-4k-qd1", "4 KiB random write, QD1"},
	{"randwrite-4k-qd32x2", "4 KiB random write, QD32 × 2 jobs"},
	{"read-64k", "64 KiB sequential read, QD8"},
	{"write-64k", "64 KiB sequential write, QD8"},
	{"read-1m", "1 MiB sequential read, QD8"},
	{"write-1m", "1 MiB sequential write, QD8"},
}

// The configurations in report order, and their descriptions.
var configs = []struct{ id, words, label string }{
	{"floor", "TCMU floor (completes at once, never touches data)", "TCMU floor"},
	{"fake_rw", "vscsid vdisk, fake_rw", "vscsid fake_rw"},
	{"store", "vscsid vdisk, store (RAM)", "vscsid store (RAM)"},
	{"tcmu-runner", "tcmu-runner, qcow handler on a raw image", "tcmu-runner qcow (raw)"},
	{"scsi_debug", "scsi_debug fake_rw=1 delay=0 (no ring)", "scsi_debug (no ring)"},
	{"fake_rw-rot", "vscsid fake_rw, rotation=0 (taken for a spinning disk)", "vscsid fake_rw, rotation=0"},
	{"fake_rw-traced", "vscsid fake_rw while vscsictl trace runs (text to /dev/null)", "vscsid fake_rw, traced"},
	{"fake_rw-poll", "vscsid fake_rw with adaptive polling (ring_poll, set by a reload before each run)", "vscsid fake_rw, polling"},
	{"ab-tree", "A/B: the fake_rw disk served by the tree's vscsid", "vscsid of the tree"},
	{"ab-base", "A/B: the same disk served by the base's vscsid", "vscsid of the base"},
}

func main() {
	in := flag.String("in", "", "the run's perf/ directory")
	out := flag.String("out", "", "directory for report.md and its charts")
	flag.Parse()
	if *in == "" || *out == "" {
		fmt.Fprintln(os.Stderr, "usage: report -in RUN/perf -out DIR")
		os.Exit(2)
	}
	if err := run(*in, *out); err != nil {
		fmt.Fprintln(os.Stderr, "report:", err)
		os.Exit(1)
	}
}

// sample is one fio run of one workload on one configuration.
type sample struct {
	iops, mbps     float64
	p50, p99       float64 // completion latency, µs
	cmds           float64 // SCSI commands completed (the disk's stat)
	cpuUS          float64 // daemon CPU time, µs
	sysUS          float64 // of it, in the kernel (stime), if hasSys
	hasSys         bool
	syscalls, csw  float64 // read+write syscalls; context switches
	rssKB          float64
	threads        float64
	readerUS       float64 // the trace reader's CPU time, µs (fake_rw-traced), if hasReader
	hasReader      bool
	hasDaemon      bool
	clatOK, statOK bool
}

type results struct {
	env     map[string]string
	samples map[string]map[string][]sample // workload → config → repetitions
	streams map[string][]stream            // "tape-dd-write-256k" → repetitions
	order   []string                       // configurations present
	queue   map[string]string              // configuration → its queue settings
	tapeMiB float64                        // size of each stream
	// zeroFill: device → bytes zero-filled, skipped (from metrics.txt).
	zeroFill map[string][2]float64
	// idle: the daemon's CPU share while its disks idle, by ring_poll
	// window ("0": blocking), from perf_idle.
	idle map[string]float64
	// traced: workload → configuration → the strace -c run (perf_strace).
	traced map[string]map[string]traced
	// profiles: workload → vscsid's CPU profile on fake_rw (perf_profile).
	profiles map[string]profiled
}

// traced is one run under strace -c: calls per system call, and the SCSI
// commands the disk completed meanwhile.
type traced struct {
	calls map[string]float64
	total float64
	cmds  float64
}

type stream struct {
	seconds float64
	cpuUS   float64
}

func run(in, out string) error {
	r, err := load(in)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(out, 0o755); err != nil {
		return err
	}
	md, charts := r.render()
	for name, svg := range charts {
		if err := os.WriteFile(filepath.Join(out, name), []byte(svg), 0o644); err != nil {
			return err
		}
	}
	return os.WriteFile(filepath.Join(out, "report.md"), []byte(md), 0o644)
}

func readKV(path string) (map[string]string, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]string{}
	for _, l := range strings.Split(string(raw), "\n") {
		if k, v, ok := strings.Cut(l, "="); ok {
			m[k] = v
		}
	}
	return m, nil
}

func num(m map[string]string, k string) (float64, bool) {
	v, err := strconv.ParseFloat(m[k], 64)
	return v, err == nil
}

func load(in string) (*results, error) {
	env, err := readKV(filepath.Join(in, "env"))
	if err != nil {
		return nil, fmt.Errorf("%s is not a perf run's directory: %w", in, err)
	}
	r := &results{env: env, samples: map[string]map[string][]sample{}, streams: map[string][]stream{}, queue: map[string]string{}}
	cf, err := os.ReadFile(filepath.Join(in, "configs"))
	if err != nil {
		return nil, err
	}
	for _, l := range strings.Split(strings.TrimSpace(string(cf)), "\n") {
		if f := strings.Fields(l); len(f) > 0 {
			r.order = append(r.order, f[0])
			if len(f) > 3 {
				r.queue[f[0]] = strings.Join(f[3:], " ")
			}
		}
	}
	tck, ok := num(env, "clk_tck")
	if !ok || tck <= 0 {
		tck = 100
	}
	for _, w := range workloads {
		r.samples[w.id] = map[string][]sample{}
		for _, c := range r.order {
			for rep := 1; ; rep++ {
				base := filepath.Join(in, fmt.Sprintf("r%d-%s-%s", rep, w.id, c))
				s, err := loadSample(base, tck)
				if errors.Is(err, os.ErrNotExist) {
					break
				}
				if err != nil {
					return nil, fmt.Errorf("%s: %w", base, err)
				}
				r.samples[w.id][c] = append(r.samples[w.id][c], s)
			}
		}
	}
	r.zeroFill = readZeroFill(filepath.Join(in, "metrics.txt"))
	r.idle = readIdle(filepath.Join(in, "idle"), tck)
	r.profiles = loadProfiles(in)
	r.traced = map[string]map[string]traced{}
	for _, w := range workloads {
		for _, c := range r.order {
			base := filepath.Join(in, "strace-"+w.id+"-"+c)
			t, err := loadTraced(base, tck)
			if err != nil {
				continue // not traced, or the trace is unusable: the section says which exist
			}
			if r.traced[w.id] == nil {
				r.traced[w.id] = map[string]traced{}
			}
			r.traced[w.id][c] = t
		}
	}
	if se, err := readKV(filepath.Join(in, "stream.env")); err == nil {
		r.tapeMiB, _ = num(se, "tape_mib")
	}
	ms, _ := filepath.Glob(filepath.Join(in, "r*-*.time"))
	for _, m := range ms {
		name := strings.TrimSuffix(filepath.Base(m), ".time")
		_, key, _ := strings.Cut(name, "-")
		t, err := readKV(m)
		if err != nil {
			return nil, err
		}
		s := stream{}
		s.seconds, _ = num(t, "seconds")
		b, _ := readKV(strings.TrimSuffix(m, ".time") + ".before")
		a, _ := readKV(strings.TrimSuffix(m, ".time") + ".after")
		if t0, ok0 := num(b, "ticks"); ok0 {
			if t1, ok1 := num(a, "ticks"); ok1 {
				s.cpuUS = (t1 - t0) / tck * 1e6
			}
		}
		r.streams[key] = append(r.streams[key], s)
	}
	return r, nil
}

// readIdle reads perf_idle's lines, "idle ring_poll=W ticks=N seconds=S":
// the daemon's CPU share over S idle seconds with window W. No file (an
// older run, or no QD1 workload) is no figure.
func readIdle(path string, tck float64) map[string]float64 {
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	out := map[string]float64{}
	for _, l := range strings.Split(strings.TrimSpace(string(raw)), "\n") {
		kv := map[string]string{}
		for _, f := range strings.Fields(l) {
			if k, v, ok := strings.Cut(f, "="); ok {
				kv[k] = v
			}
		}
		ticks, ok1 := num(kv, "ticks")
		secs, ok2 := num(kv, "seconds")
		if w := kv["ring_poll"]; w != "" && ok1 && ok2 && secs > 0 {
			out[w] = ticks / tck / secs
		}
	}
	return out
}

// readZeroFill reads vscsi_ring_zero_fill_bytes_total from a scrape;
// devices that filled nothing are left out. No scrape (an older run, a
// failed scrape) is no section.
func readZeroFill(path string) map[string][2]float64 {
	s, err := prom.ParseFile(path)
	if err != nil {
		return nil
	}
	out := map[string][2]float64{}
	for outcome, i := range map[string]int{"written": 0, "skipped": 1} {
		for dev, v := range s.By("vscsi_ring_zero_fill_bytes_total", map[string]string{"outcome": outcome}, "device") {
			z := out[dev]
			z[i] = v
			out[dev] = z
		}
	}
	for d, z := range out {
		if z[0]+z[1] == 0 {
			delete(out, d)
		}
	}
	return out
}

func loadSample(base string, tck float64) (sample, error) {
	fj, err := fio.ReadFile(base + ".json")
	if err != nil {
		return sample{}, err
	}
	d := fj.Jobs[0].Read
	if fj.Jobs[0].Write.TotalIOs > d.TotalIOs {
		d = fj.Jobs[0].Write
	}
	s := sample{iops: d.IOPS, mbps: d.BW / 1e6}
	if p, ok := d.Clat.Percentile["50.000000"]; ok {
		s.p50, s.p99, s.clatOK = p/1e3, d.Clat.Percentile["99.000000"]/1e3, true
	}
	b, err := readKV(base + ".before")
	if err != nil {
		return sample{}, err
	}
	a, err := readKV(base + ".after")
	if err != nil {
		return sample{}, err
	}
	// Commands: reads plus writes completed, from /sys/block/DEV/stat
	// (fields 1 and 5), around the whole run including fio's ramp, as
	// the /proc counters are.
	if sb, sa := strings.Fields(b["dstat"]), strings.Fields(a["dstat"]); len(sb) > 4 && len(sa) > 4 {
		f := func(x []string, i int) float64 { v, _ := strconv.ParseFloat(x[i], 64); return v }
		s.cmds = f(sa, 0) - f(sb, 0) + f(sa, 4) - f(sb, 4)
		s.statOK = s.cmds > 0
	}
	delta := func(k string) float64 {
		x, _ := num(b, k)
		y, _ := num(a, k)
		return y - x
	}
	if _, ok := num(a, "ticks"); ok {
		s.hasDaemon = true
		s.cpuUS = delta("ticks") / tck * 1e6
		_, s.hasSys = num(a, "sys_ticks")
		s.sysUS = delta("sys_ticks") / tck * 1e6
		s.syscalls = delta("syscr") + delta("syscw")
		s.csw = delta("vcsw") + delta("nvcsw")
		s.rssKB, _ = num(a, "rss_kb")
		s.threads, _ = num(a, "threads")
	}
	if _, ok := num(a, "reader_ticks"); ok {
		s.hasReader = true
		s.readerUS = delta("reader_ticks") / tck * 1e6
	}
	return s, nil
}

// loadTraced reads BASE.txt, a strace -c summary, and the disk's command
// count around the run from BASE.before and BASE.after.
func loadTraced(base string, tck float64) (traced, error) {
	raw, err := os.ReadFile(base + ".txt")
	if err != nil {
		return traced{}, err
	}
	t := traced{calls: parseStraceSummary(string(raw))}
	for _, n := range t.calls {
		t.total += n
	}
	s, err := loadSample(base, tck)
	if err != nil {
		return traced{}, err
	}
	if !s.statOK || t.total == 0 {
		return traced{}, errors.New("no commands or no calls")
	}
	t.cmds = s.cmds
	return t, nil
}

// parseStraceSummary reads strace -c's table: "% time, seconds,
// usecs/call, calls, errors (may be blank), syscall" rows between the
// dashed rules, and a total row that is not returned.
func parseStraceSummary(s string) map[string]float64 {
	out := map[string]float64{}
	for _, l := range strings.Split(s, "\n") {
		f := strings.Fields(l)
		if len(f) < 5 || strings.HasPrefix(f[0], "-") || f[0] == "%" {
			continue
		}
		name := f[len(f)-1]
		if name == "total" {
			continue
		}
		if _, err := strconv.ParseFloat(f[0], 64); err != nil {
			continue
		}
		n, err := strconv.ParseFloat(f[3], 64)
		if err != nil {
			continue
		}
		out[name] += n
	}
	return out
}

// spread is the median, minimum and maximum of f over the samples.
func spread(ss []sample, f func(sample) float64) (med, lo, hi float64) {
	v := make([]float64, len(ss))
	for i, s := range ss {
		v[i] = f(s)
	}
	return chart.MedianSpread(v)
}

func median(ss []sample, f func(sample) float64) float64 { m, _, _ := spread(ss, f); return m }

func perCmd(f func(sample) float64) func(sample) float64 {
	return func(s sample) float64 {
		if !s.statOK || !s.hasDaemon {
			return 0
		}
		return f(s) / s.cmds
	}
}

func (r *results) has(c string) bool { return slices.Contains(r.order, c) }

// ran reports whether workload w has a sample on any configuration: a
// run narrowed with vmtest.perf_only (perf/run --only) leaves the others
// out, and the report leaves out their rows and sections.
func (r *results) ran(w string) bool {
	for _, ss := range r.samples[w] {
		if len(ss) > 0 {
			return true
		}
	}
	return false
}

// ratio formats a/b.
func ratio(a, b float64) string {
	if a <= 0 || b <= 0 {
		return "n/a"
	}
	return fmt.Sprintf("%.2f×", a/b)
}

func (r *results) render() (string, map[string]string) {
	charts := map[string]string{}
	var b strings.Builder
	p := func(format string, a ...any) { fmt.Fprintf(&b, format, a...) }
	p("# vscsid perf: side by side in one boot\n\n")
	p("Kernel %s, %s CPU(s) under qemu TCG; fio %s, tcmu-runner %s, %s. ", r.env["kernel"], r.env["cpus"], r.env["fio"], r.env["tcmu_runner"], r.env["vscsid"])
	if cs := r.env["clocksource"]; cs != "" {
		p("Clock source `%s`", cs)
		if cs != "tsc" {
			p(" (no vDSO clock: every clock_gettime is a system call, and each clock read by a program or Go's scheduler costs a trap into the guest kernel and an emulated %s read)", cs)
		}
		p(". ")
	}
	if r.env["idle"] == "poll" {
		p("Idle CPUs poll (`idle=poll`): they spin instead of halting, so no command waits for an emulated CPU to wake up, and the QD1 figures show the command path without that cost (under TCG it is far larger than on real hardware). ")
	}
	p("%s repetitions of every workload on every configuration, interleaved (one repetition runs everything before the next starts), %s s per run after 1 s of ramp; fio with libaio and O_DIRECT on the whole 128 MiB disk, I/O scheduler `none`. ", r.env["reps"], r.env["runtime"])
	if o := r.env["only"]; o != "" {
		p("Only these workloads ran (perf/run --only): %s. ", strings.ReplaceAll(o, ",", ", "))
	}
	p("Every figure below comes from this one run. Absolute numbers under TCG say little; the ratios between configurations measured in the same boot are the result.\n\n")
	p("Configurations, and the block queue of each as the kernel set it up (tcmu-runner's `rotational` set to 0 by the suite; `fake_rw-rot` keeps the kernel's choice on purpose):\n\n")
	for _, c := range configs {
		if r.has(c.id) {
			q := ""
			if r.queue[c.id] != "" {
				q = ": `" + r.queue[c.id] + "`"
			}
			p("- `%s`: %s%s\n", c.id, c.words, q)
		}
	}
	p("\n")

	if r.has("ab-tree") && r.has("ab-base") {
		r.renderAB(p)
	} else {
		r.renderRatios(p)
		r.renderPoll(p)
	}
	iops := func(s sample) float64 { return s.iops }

	// Per workload: the full table and a chart.
	p("## Per workload\n\n")
	p("Per configuration: IOPS and MB/s (median, and min–max of the repetitions), fio's completion latency p50 and p99, and for the configurations served by a daemon its CPU time (and the part of it in the kernel, stime: the kick's write reaps the completions and copies each Data-In from the data area to the initiator's pages in the daemon's context), read/write syscalls and context switches per SCSI command (the disk's own command count from /sys/block/DEV/stat; /proc/PID/stat utime+stime, /proc/PID/io syscr+syscw, and the sum over the process's threads of /proc/PID/task/*/status), its thread count and RSS at the end of the run. scsi_debug runs in the kernel: it has no daemon.\n\n")
	for i, w := range workloads {
		if !r.ran(w.id) {
			continue
		}
		m := r.samples[w.id]
		p("### %s\n\n", w.words)
		file := fmt.Sprintf("perf-%02d-%s.svg", i+1, w.id)
		var rows []chart.Row
		floor := median(m["floor"], iops)
		for _, c := range configs {
			if !r.has(c.id) || len(m[c.id]) == 0 {
				continue
			}
			med, lo, hi := spread(m[c.id], iops)
			note := ""
			if floor > 0 && c.id != "floor" {
				note = fmt.Sprintf("%.2f× floor", med/floor)
			}
			rows = append(rows, chart.Row{Label: c.label, Median: med, Min: lo, Max: hi, Note: note, Highlighted: strings.HasPrefix(c.id, "fake_rw") || c.id == "store"})
		}
		charts[file] = chart.Bars(w.words+": IOPS", "IOPS", rows, chart.WideRange(rows))
		p("![%s: IOPS per configuration](%s)\n\n", w.words, file)
		p("| configuration | IOPS | MB/s | p50 µs | p99 µs | CPU µs/cmd | of it in the kernel | syscalls/cmd | ctx sw/cmd | threads | RSS MiB |\n|---|---|---|---|---|---|---|---|---|---|---|\n")
		for _, c := range configs {
			ss := m[c.id]
			if !r.has(c.id) || len(ss) == 0 {
				continue
			}
			im, il, ih := spread(ss, iops)
			bm, bl, bh := spread(ss, func(s sample) float64 { return s.mbps })
			daemon := ss[0].hasDaemon
			d := func(f func(sample) float64, prec int) string {
				if !daemon {
					return "–"
				}
				return strconv.FormatFloat(median(ss, perCmd(f)), 'f', prec, 64)
			}
			sys := "–"
			if ss[0].hasSys {
				sys = d(func(s sample) float64 { return s.sysUS }, 0)
			}
			rss, thr := "–", "–"
			if daemon {
				rss = fmt.Sprintf("%.1f", median(ss, func(s sample) float64 { return s.rssKB })/1024)
				thr = fmt.Sprintf("%.0f", median(ss, func(s sample) float64 { return s.threads }))
			}
			p("| %s | %s (%s–%s) | %.1f (%.1f–%.1f) | %.0f | %.0f | %s | %s | %s | %s | %s | %s |\n", c.id,
				chart.Short(im), chart.Short(il), chart.Short(ih), bm, bl, bh,
				median(ss, func(s sample) float64 { return s.p50 }), median(ss, func(s sample) float64 { return s.p99 }),
				d(func(s sample) float64 { return s.cpuUS }, 0), sys, d(func(s sample) float64 { return s.syscalls }, 2),
				d(func(s sample) float64 { return s.csw }, 2), thr, rss)
		}
		if ss := m["fake_rw-traced"]; len(ss) > 0 && ss[0].hasReader {
			p("\nThe trace's reader, `vscsictl trace` writing to /dev/null, took %.0f µs of CPU per command beside the daemon's (its /proc/PID/stat over the run).\n", median(ss, perCmd(func(s sample) float64 { return s.readerUS })))
		}
		p("\n")
	}
	r.renderTraced(&b)
	r.renderProfiles(&b)
	r.renderStreams(&b, charts)
	r.renderZeroFill(&b)
	return b.String(), charts
}

// largestFirst returns m's keys by value, the largest first (ties by
// name).
func largestFirst(m map[string]float64) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	return keys
}

// renderTraced: every system call per SCSI command, from the strace -c
// runs.
func (r *results) renderTraced(b *strings.Builder) {
	if len(r.traced) == 0 {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("## System calls per command, all of them\n\n")
	p("One more run of each of these workloads with `strace -c -f` attached to the serving daemon: every system call of every thread, divided by the SCSI commands the disk completed meanwhile. The per-workload tables above count only reads and writes (/proc/PID/io); a poll, epoll_wait or futex shows only here. Tracing slows every call, so more commands wait per wake-up than untraced: read these as a comparison between the daemons, not as their untraced figures.\n\n")
	p("| workload | configuration | calls/cmd | the most frequent, per command |\n|---|---|---|---|\n")
	for _, w := range workloads {
		m := r.traced[w.id]
		for _, c := range configs {
			t, ok := m[c.id]
			if !ok {
				continue
			}
			names := largestFirst(t.calls)
			var top []string
			for _, n := range names[:min(5, len(names))] {
				top = append(top, fmt.Sprintf("%s %.2f", n, t.calls[n]/t.cmds))
			}
			p("| %s | %s | %.2f | %s |\n", w.words, c.id, t.total/t.cmds, strings.Join(top, ", "))
		}
	}
	p("\n")
}

// renderZeroFill: from the /metrics scrape at the end of the run, what
// the fake_rw READs zero-filled and what they skipped (scsi.ZeroPages).
func (r *results) renderZeroFill(b *strings.Builder) {
	if len(r.zeroFill) == 0 {
		return
	}
	fmt.Fprintf(b, "## Data-In zero fills\n\n")
	fmt.Fprintf(b, "`vscsi_ring_zero_fill_bytes_total` at the end of the run, per vscsid device: bytes the handler zero-filled, and bytes it skipped because their data-area pages were known to hold zeros.\n\n")
	fmt.Fprintf(b, "| device | written | skipped | skipped share |\n|---|---|---|---|\n")
	devs := make([]string, 0, len(r.zeroFill))
	for d := range r.zeroFill {
		devs = append(devs, d)
	}
	sort.Strings(devs)
	for _, d := range devs {
		z := r.zeroFill[d]
		share := "n/a"
		if t := z[0] + z[1]; t > 0 {
			share = fmt.Sprintf("%.1f%%", 100*z[1]/t)
		}
		fmt.Fprintf(b, "| %s | %s B | %s B | %s |\n", d, chart.Short(z[0]), chart.Short(z[1]), share)
	}
	fmt.Fprintf(b, "\n")
}

// renderStreams: the tape drive through st next to the store disk's
// stream of the same record size.
func (r *results) renderStreams(b *strings.Builder, charts map[string]string) {
	if len(r.streams) == 0 {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	mib := r.tapeMiB
	p("## Tape streaming through st, next to the disk\n\n")
	p("A vscsid LTO drive (RAM cartridge) in variable-block mode: `dd` of %.0f MiB in 256 KiB and in 1 MiB blocks through /dev/nst*, and `tar` of one %.0f MiB file with the same record size (blocking factor 512 or 2048), write then read; next to it `dd` of the same size and record size on the `store` disk with O_DIRECT. MB/s from the wall time of each command (median and min–max of the repetitions).\n\n", mib, mib)
	p("| record | tape dd write | tape dd read | tape tar write | tape tar read | disk dd write | disk dd read | tape / disk, write | tape / disk, read |\n|---|---|---|---|---|---|---|---|---|\n")
	var rows []chart.Row
	for _, bs := range []string{"256k", "1m"} {
		rate := func(key string) (float64, float64, float64) {
			ss := r.streams[key+"-"+bs]
			v := make([]sample, len(ss))
			for i, s := range ss {
				if s.seconds > 0 {
					v[i].mbps = mib * 1048576 / 1e6 / s.seconds
				}
			}
			return spread(v, func(s sample) float64 { return s.mbps })
		}
		cell := func(key string) string {
			m, lo, hi := rate(key)
			if m == 0 {
				return "n/a"
			}
			return fmt.Sprintf("%.1f (%.1f–%.1f)", m, lo, hi)
		}
		tw, _, _ := rate("tape-dd-write")
		tr, _, _ := rate("tape-dd-read")
		dw, _, _ := rate("disk-dd-write")
		dr, _, _ := rate("disk-dd-read")
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", strings.ToUpper(bs)+"iB", cell("tape-dd-write"), cell("tape-dd-read"),
			cell("tape-tar-write"), cell("tape-tar-read"), cell("disk-dd-write"), cell("disk-dd-read"), ratio(tw, dw), ratio(tr, dr))
		for _, k := range []struct{ key, words string }{
			{"tape-dd-write", "tape dd write"}, {"disk-dd-write", "disk dd write"},
			{"tape-dd-read", "tape dd read"}, {"disk-dd-read", "disk dd read"},
			{"tape-tar-write", "tape tar write"}, {"tape-tar-read", "tape tar read"},
		} {
			m, lo, hi := rate(k.key)
			rows = append(rows, chart.Row{Label: k.words + ", " + strings.ToUpper(bs) + "iB blocks", Median: m, Min: lo, Max: hi, Highlighted: strings.HasPrefix(k.key, "tape")})
		}
	}
	charts["perf-stream.svg"] = chart.Bars("Tape through st and disk through sd, same record size", "MB/s", rows, false)
	p("\n![Tape and disk streams: MB/s](perf-stream.svg)\n\n")
}

// renderRatios is the lead of a full run: ratios of medians between the
// configurations.
func (r *results) renderRatios(p func(string, ...any)) {
	p("## Ratios (medians of the repetitions)\n\n")
	p("| workload | fake_rw / floor | fake_rw / scsi_debug | fake_rw / tcmu-runner | store / tcmu-runner | CPU per command, fake_rw / tcmu-runner | CPU per command, floor / tcmu-runner | fake_rw / fake_rw with rotation=0 | fake_rw traced / fake_rw |\n|---|---|---|---|---|---|---|---|---|\n")
	iops := func(s sample) float64 { return s.iops }
	cpu := perCmd(func(s sample) float64 { return s.cpuUS })
	for _, w := range workloads {
		if !r.ran(w.id) {
			continue
		}
		m := r.samples[w.id]
		med := func(c string, f func(sample) float64) float64 { return median(m[c], f) }
		p("| %s | %s | %s | %s | %s | %s | %s | %s | %s |\n", w.words,
			ratio(med("fake_rw", iops), med("floor", iops)),
			ratio(med("fake_rw", iops), med("scsi_debug", iops)),
			ratio(med("fake_rw", iops), med("tcmu-runner", iops)),
			ratio(med("store", iops), med("tcmu-runner", iops)),
			ratio(med("fake_rw", cpu), med("tcmu-runner", cpu)),
			ratio(med("floor", cpu), med("tcmu-runner", cpu)),
			ratio(med("fake_rw", iops), med("fake_rw-rot", iops)),
			pairedRatio(m["fake_rw-traced"], m["fake_rw"], iops))
	}
	p("\nIOPS ratios for every column but the CPU ones (a ratio above 1 is faster); the traced column is the median of the ratios repetition by repetition (a traced run right after the untraced one), with its 95%% interval from 6 repetitions on; the CPU columns are daemon CPU time per SCSI command (below 1 is cheaper). The floor's CPU column is what a backstore that does nothing pays against tcmu-runner: the part of the CPU time that is the kernel's work in the daemon's context (the column “of it in the kernel” below) no backstore can shed.\n\n")
}

// renderPoll compares the polling fake_rw disk with the blocking floor
// and with itself blocking, repetition by repetition (the three ran one
// after the other in each repetition), and gives the daemon's idle CPU
// in both modes.
func (r *results) renderPoll(p func(string, ...any)) {
	if !r.has("fake_rw-poll") {
		return
	}
	p("## Adaptive polling\n\n")
	p("The fake_rw disk with `ring_poll: %s` (set in the config file and applied by a reload before each run, taken off after), against the blocking floor and the same disk blocking. Ratios are medians of the repetitions' pairs with their 95%% interval (6 repetitions on); CPU is the daemon's per SCSI command, polling included: the spin is the price.\n\n", r.env["ring_poll"])
	p("| workload | polling / floor | polling / blocking | blocking / floor | CPU µs/cmd, polling | blocking | floor |\n|---|---|---|---|---|---|---|\n")
	iops := func(s sample) float64 { return s.iops }
	cpu := perCmd(func(s sample) float64 { return s.cpuUS })
	for _, w := range workloads {
		m := r.samples[w.id]
		if len(m["fake_rw-poll"]) == 0 {
			continue
		}
		p("| %s | %s | %s | %s | %.0f | %.0f | %.0f |\n", w.words,
			pairedRatio(m["fake_rw-poll"], m["floor"], iops),
			pairedRatio(m["fake_rw-poll"], m["fake_rw"], iops),
			pairedRatio(m["fake_rw"], m["floor"], iops),
			median(m["fake_rw-poll"], cpu), median(m["fake_rw"], cpu), median(m["floor"], cpu))
	}
	if len(r.idle) > 0 {
		p("\nThe daemon's CPU while its disks are idle (a second after one command, over the next seconds): ")
		for _, w := range slices.Sorted(maps.Keys(r.idle)) {
			mode := "blocking"
			if w != "0" {
				mode = "ring_poll " + w
			}
			p("%s %.2f%% of a CPU; ", mode, 100*r.idle[w])
		}
		p("polling stops once its window has passed.\n")
	}
	p("\n")
}

// renderAB is the lead of an A/B run (perf/run --base): the tree's vscsid
// against the base's on the same disk, repetition by repetition. Each
// repetition ran both, one after the other, so a pair shares the boot's
// state of the moment; the ratios of the pairs are what varies least.
func (r *results) renderAB(p func(string, ...any)) {
	p("## A/B: the tree against the base\n\n")
	p("The same fake_rw disk served alternately by the tree's vscsid (%s) and the base's (%s): before each run the service restarted on the run's binary, the disk handed over in place. Each repetition ran both, one after the other: a pair. The table gives the median of the pairs' ratios, a 95%% interval of that median (distribution-free: order statistics of the sorted ratios; 6 pairs or more), and their range. A difference is resolved when the interval leaves out 1.00; a 5%% one needs an interval narrower than ±5%%.\n\n", r.env["vscsid"], r.env["vscsid_base"])
	p("| workload | pairs | IOPS, tree / base | 95%% interval | min–max | CPU per command, tree / base | 95%% interval |\n|---|---|---|---|---|---|---|\n")
	cpu := perCmd(func(s sample) float64 { return s.cpuUS })
	for _, w := range workloads {
		if !r.ran(w.id) {
			continue
		}
		tree, base := r.samples[w.id]["ab-tree"], r.samples[w.id]["ab-base"]
		io := paired(tree, base, func(s sample) float64 { return s.iops })
		cp := paired(tree, base, cpu)
		im, ilo, ihi, iok := medianCI(io)
		cm, clo, chi, cok := medianCI(cp)
		p("| %s | %d | %s | %s | %s | %s | %s |\n", w.words, len(io), fmtRatio(im, len(io) > 0), interval(ilo, ihi, iok),
			rangeOf(io),
			fmtRatio(cm, len(cp) > 0), interval(clo, chi, cok))
	}
	p("\nIOPS above 1 is the tree faster; CPU per command (the daemon's CPU time over the disk's commands) below 1 is the tree cheaper.\n\n")
}

// paired is the ratios a[i]/b[i] of f, repetition by repetition, where
// both are positive.
func paired(a, b []sample, f func(sample) float64) []float64 {
	var rs []float64
	for i := range min(len(a), len(b)) {
		if x, y := f(a[i]), f(b[i]); x > 0 && y > 0 {
			rs = append(rs, x/y)
		}
	}
	return rs
}

// pairedRatio formats the median of the paired ratios of f between a and
// b with its 95% interval when there are enough pairs.
func pairedRatio(a, b []sample, f func(sample) float64) string {
	rs := paired(a, b, f)
	m, lo, hi, ok := medianCI(rs)
	if len(rs) == 0 {
		return "n/a"
	}
	if !ok {
		return fmt.Sprintf("%.2f×", m)
	}
	return fmt.Sprintf("%.2f× (%.2f–%.2f)", m, lo, hi)
}

// medianCI is the median of xs and a distribution-free interval of at
// least 95% around it: the k-th smallest and the k-th largest of xs, with
// k the largest for which a Binomial(n, 1/2) falls below k with
// probability at most 2.5%. ok is false below 6 values, where no such k
// exists.
func medianCI(xs []float64) (med, lo, hi float64, ok bool) {
	n := len(xs)
	if n == 0 {
		return 0, 0, 0, false
	}
	s := slices.Sorted(slices.Values(xs))
	if n%2 == 1 {
		med = s[n/2]
	} else {
		med = (s[n/2-1] + s[n/2]) / 2
	}
	// P(X <= j) for X ~ Binomial(n, 1/2), summed term by term.
	k, cum, term := 0, 0.0, math.Pow(0.5, float64(n))
	for j := 0; j < n/2; j++ {
		cum += term
		if cum > 0.025 {
			break
		}
		k = j + 1
		term = term * float64(n-j) / float64(j+1)
	}
	if k == 0 {
		return med, 0, 0, false
	}
	return med, s[k-1], s[n-k], true
}

// rangeOf formats the min–max of xs, or n/a.
func rangeOf(xs []float64) string {
	if len(xs) == 0 {
		return "n/a"
	}
	return interval(slices.Min(xs), slices.Max(xs), true)
}

// fmtRatio formats a ratio, or n/a.
func fmtRatio(v float64, ok bool) string {
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%.3f", v)
}

// interval formats lo–hi, or n/a.
func interval(lo, hi float64, ok bool) string {
	if !ok {
		return "n/a"
	}
	return fmt.Sprintf("%.3f–%.3f", lo, hi)
}
