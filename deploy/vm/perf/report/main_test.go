package main

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// writeRun lays out a perf/ directory as perf.sh writes it: two
// configurations, one workload, three repetitions.
func writeRun(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	w := writer(t, dir)
	w("env", "kernel=6.1.0-test\nreps=3\nruntime=3\ncpus=2\nclocksource=hpet\nclk_tck=100\nfio=fio-3.33\n")
	w("configs", "floor sdb 100\nfake_rw sdc 200\n")
	for rep, iops := range map[int][2]float64{1: {1000, 800}, 2: {1100, 900}, 3: {900, 700}} {
		for i, c := range []string{"floor", "fake_rw"} {
			writeSample(w, fmt.Sprintf("r%d-randread-4k-qd1-%s", rep, c), iops[i], 40)
		}
	}
	return dir
}

// writer writes files into dir.
func writer(t *testing.T, dir string) func(name, body string) {
	return func(name, body string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

// writeSample writes one fio run at iops as perf_fio does: 4000 commands,
// ticks of CPU (40 ticks = 0.4 s = 100 µs per command), 20 of them (50 µs
// a command) in the kernel.
func writeSample(w func(name, body string), base string, iops float64, ticks int) {
	w(base+".json", fmt.Sprintf(`fio: note
{"jobs":[{"read":{"iops":%g,"bw_bytes":%g,"total_ios":3000,"clat_ns":{"percentile":{"50.000000":150000,"99.000000":900000}}},"write":{"iops":0,"bw_bytes":0,"total_ios":0}}]}`, iops, iops*4096))
	w(base+".before", "ticks=100\nsys_ticks=50\nsyscr=10\nsyscw=10\nvcsw=5\nnvcsw=0\nrss_kb=10240\nthreads=4\ndstat=1000 0 0 0 0 0 0 0 0 0 0\n")
	w(base+".after", fmt.Sprintf("ticks=%d\nsys_ticks=70\nsyscr=4010\nsyscw=2010\nvcsw=2005\nnvcsw=0\nrss_kb=20480\nthreads=4\ndstat=5000 0 0 0 0 0 0 0 0 0 0\n", 100+ticks))
}

// report writes files (name to body) into the run in, reports it into out
// and returns report.md.
func report(t *testing.T, in, out string, files map[string]string) string {
	t.Helper()
	for name, body := range files {
		if err := os.WriteFile(filepath.Join(in, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(in, out); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	return string(md)
}

func TestReportFromRun(t *testing.T) {
	in, out := writeRun(t), t.TempDir()
	s := report(t, in, out, nil)
	for _, want := range []string{
		"| 4 KiB random read, QD1 | 0.80× |", // medians 800 / 1000
		"| fake_rw | 800 (700–900) | 3.3 (2.9–3.7) | 150 | 900 | 100 | 50 | 1.50 | 0.50 | 4 | 20.0 |",
		"![4 KiB random read, QD1: IOPS per configuration](perf-01-randread-4k-qd1.svg)",
		"Clock source `hpet` (no vDSO clock",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	svg, err := os.ReadFile(filepath.Join(out, "perf-01-randread-4k-qd1.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(svg), ">vscsid fake_rw<") || !strings.Contains(string(svg), "0.80× floor") {
		t.Errorf("chart lacks the fake_rw row and its ratio to the floor:\n%s", svg)
	}
}

// A run narrowed to some workloads (perf/run --only) reports those only:
// no empty sections, no rows of n/a, no charts for what did not run.
func TestReportOnlyWhatRan(t *testing.T) {
	in, out := writeRun(t), t.TempDir()
	s := report(t, in, out, map[string]string{
		"env": "kernel=6.1.0-test\nreps=3\nruntime=3\ncpus=2\nclk_tck=100\nonly=randread-4k-qd1,tape\n",
	})
	if !strings.Contains(s, "Only these workloads ran (perf/run --only): randread-4k-qd1, tape.") {
		t.Errorf("report does not say it was narrowed:\n%s", s)
	}
	if !strings.Contains(s, "### 4 KiB random read, QD1") {
		t.Errorf("report lacks the workload that ran:\n%s", s)
	}
	for _, absent := range []string{"4 KiB random write, QD1", "1 MiB sequential read"} {
		if strings.Contains(s, absent) {
			t.Errorf("report has %q, which did not run:\n%s", absent, s)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "perf-03-randwrite-4k-qd1.svg")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("a chart for a workload that did not run: %v", err)
	}
}

func TestReportRefusesAnotherDirectory(t *testing.T) {
	if err := run(t.TempDir(), t.TempDir()); err == nil || !strings.Contains(err.Error(), "not a perf run") {
		t.Fatalf("err = %v", err)
	}
}

func TestReportZeroFills(t *testing.T) {
	in, out := writeRun(t), t.TempDir()
	scrape := `# TYPE vscsi_ring_zero_fill_bytes_total counter
vscsi_ring_zero_fill_bytes_total{device="perf_fake_rw",outcome="skipped"} 3.0e+06
vscsi_ring_zero_fill_bytes_total{device="perf_fake_rw",outcome="written"} 1e+06
vscsi_ring_zero_fill_bytes_total{device="cfgdisk",outcome="skipped"} 0
vscsi_ring_zero_fill_bytes_total{device="cfgdisk",outcome="written"} 0
`
	md := report(t, in, out, map[string]string{"metrics.txt": scrape})
	if !strings.Contains(md, "| perf_fake_rw | 1M B | 3M B | 75.0% |") || strings.Contains(md, "| cfgdisk |") {
		t.Errorf("zero-fill table wrong:\n%s", md)
	}
}

// strace -c's summary as strace 6.1 prints it (the errors column blank on
// most rows), and the section built from it.
func TestTracedSection(t *testing.T) {
	in, out := writeRun(t), t.TempDir()
	summary := `% time     seconds  usecs/call     calls    errors syscall
------ ----------- ----------- --------- --------- ----------------
 61.20    0.512000         128      4000           poll
 30.10    0.251000          62      4000           read
  8.70    0.072000          36      2000           write
  0.00    0.000000           0        10         3 futex
------ ----------- ----------- --------- --------- ----------------
100.00    0.835000          83     10010         3 total
`
	md := report(t, in, out, map[string]string{
		"strace-randread-4k-qd1-fake_rw.txt":    summary,
		"strace-randread-4k-qd1-fake_rw.json":   `{"jobs":[{"read":{"iops":1,"bw_bytes":1,"total_ios":1}}]}`,
		"strace-randread-4k-qd1-fake_rw.before": "ticks=1\ndstat=1000 0 0 0 0 0 0 0 0 0 0\n",
		"strace-randread-4k-qd1-fake_rw.after":  "ticks=2\ndstat=5000 0 0 0 0 0 0 0 0 0 0\n",
	})
	// 10010 calls over 4000 commands; the total row is not a call.
	want := "| 4 KiB random read, QD1 | fake_rw | 2.50 | poll 1.00, read 1.00, write 0.50, futex 0.00 |"
	if !strings.Contains(md, want) {
		t.Errorf("report lacks %q:\n%s", want, md)
	}
	if strings.Contains(md, "| 4 KiB random read, QD1 | floor |") {
		t.Error("a configuration that was not traced has a row")
	}
}

// go tool pprof -top as perf/run writes it for a profile, and the section
// built from it: groups by where the samples were, and the top functions
// outside system calls.
func TestProfileSection(t *testing.T) {
	in, out := writeRun(t), t.TempDir()
	top := `File: vscsid
Type: cpu
Duration: 6.2s, Total samples = 2s (32.26%)
Showing nodes accounting for 2s, 100% of 2s total
      flat  flat%   sum%        cum   cum%
     1.00s 50.00% 50.00%      1.00s 50.00%  internal/runtime/syscall/linux.Syscall6
     0.20s 10.00% 60.00%      0.20s 10.00%  runtime.futex
     0.20s 10.00% 70.00%      0.30s 15.00%  runtime.exitsyscall
     0.30s 15.00% 85.00%      0.50s 25.00%  github.com/vscsid/vscsid/target/tcmu.(*ring).load
     0.20s 10.00% 95.00%      0.20s 10.00%  github.com/vscsid/vscsid/disk.(*Disk).dispatch
     0.10s  5.00%   100%      0.10s  5.00%  go.uber.org/zap.(*Logger).check (inline)
         0     0%   100%      0.10s  5.00%  github.com/vscsid/vscsid/target/tcmu.(*Device).drain
         0  0.04%   100%      0.10s  5.00%  runtime.gcBgMarkWorker
`
	traced := strings.Replace(top, "github.com/vscsid/vscsid/disk.(*Disk).dispatch", "github.com/vscsid/vscsid/internal/trace.(*Stream).Drain", 1)
	md := report(t, in, out, map[string]string{"pprof-randread-4k-qd1-fake_rw.top": top, "pprof-randread-4k-qd1-fake_rw-traced.top": traced})
	for _, want := range []string{
		"| 4 KiB random read, QD1 | 2s | 60.0% | 10.0% | 15.0% | 0.0% | 10.0% | 5.0% | target/tcmu.(*ring).load 15.0%, disk.(*Disk).dispatch 10.0%, runtime.exitsyscall 10.0%, go.uber.org/zap.(*Logger).check 5.0% |",
		"| 4 KiB random read, QD1, traced | 2s | 60.0% | 10.0% | 15.0% | 10.0% | 0.0% | 5.0% | target/tcmu.(*ring).load 15.0%, internal/trace.(*Stream).Drain 10.0%,",
	} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	// A function with no samples of its own (0%, or a share that rounds to
	// 0.0%) is not named among those with the most CPU.
	if strings.Contains(md, "drain") || strings.Contains(md, "gcBgMarkWorker") {
		t.Errorf("report names a function at 0.0%%:\n%s", md)
	}
	// A file that is not pprof's table is left out, not misread.
	if _, ok := parsePprofTop("no profile here\n"); ok {
		t.Error("parsePprofTop accepted text without pprof's columns")
	}
}

// The report says when the guest's idle CPUs polled, and only then: such
// a run's QD1 figures lack the emulated wake-ups of every other run.
func TestIdlePoll(t *testing.T) {
	const says = "Idle CPUs poll (`idle=poll`)"
	if md := report(t, writeRun(t), t.TempDir(), nil); strings.Contains(md, says) {
		t.Errorf("a run without idle=poll says %q", says)
	}
	env := "kernel=6.1.0-test\nreps=3\nruntime=3\ncpus=2\nclocksource=tsc\nidle=poll\nclk_tck=100\nfio=fio-3.33\n"
	if md := report(t, writeRun(t), t.TempDir(), map[string]string{"env": env}); !strings.Contains(md, says) {
		t.Errorf("a run with idle=poll does not say %q:\n%s", says, md)
	}
}

// An A/B run (perf/run --base) leads with the pairs' ratios and their
// interval instead of the ratios between configurations.
func TestReportAB(t *testing.T) {
	dir := t.TempDir()
	w := writer(t, dir)
	w("env", "kernel=6.1.0-test\nreps=6\nruntime=2\ncpus=2\nclk_tck=100\nvscsid=vscsid, version tree\nvscsid_base=vscsid, version base\n")
	w("configs", "ab-tree sdb -\nab-base sdb -\n")
	// Base IOPS 1000 each time; the tree's 1100, 1200, 900, 1300, 1050,
	// 1150: pair ratios 0.9 to 1.3, median 1.125. CPU: the base's 40 ticks
	// per 4000 commands, the tree's 30 (0.75).
	for rep, iops := range []float64{1100, 1200, 900, 1300, 1050, 1150} {
		writeSample(w, fmt.Sprintf("r%d-randread-4k-qd1-ab-tree", rep+1), iops, 30)
		writeSample(w, fmt.Sprintf("r%d-randread-4k-qd1-ab-base", rep+1), 1000, 40)
	}
	s := report(t, dir, t.TempDir(), nil)
	for _, want := range []string{
		"## A/B: the tree against the base",
		"(vscsid, version tree) and the base's (vscsid, version base)",
		"| 4 KiB random read, QD1 | 6 | 1.125 | 0.900–1.300 | 0.900–1.300 | 0.750 | 0.750–0.750 |",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if strings.Contains(s, "## Ratios") {
		t.Errorf("an A/B report with the ratios between configurations:\n%s", s)
	}
}

func TestMedianCI(t *testing.T) {
	for _, c := range []struct {
		n           int
		med, lo, hi float64
		ok          bool
	}{
		{5, 3, 0, 0, false},     // P(X=0) = 1/32 > 2.5%: no interval
		{6, 3.5, 1, 6, true},    // k = 1: P(X=0) = 1/64
		{10, 5.5, 2, 9, true},   // k = 2: P(X<=1) = 11/1024
		{20, 10.5, 6, 15, true}, // k = 6: P(X<=5) = 2.07%
	} {
		xs := make([]float64, c.n)
		for i := range xs {
			xs[len(xs)-1-i] = float64(i + 1) // unsorted: medianCI sorts
		}
		med, lo, hi, ok := medianCI(xs)
		if med != c.med || ok != c.ok || (ok && (lo != c.lo || hi != c.hi)) {
			t.Errorf("n=%d: median %v, interval %v-%v %v; want %v, %v-%v %v", c.n, med, lo, hi, ok, c.med, c.lo, c.hi, c.ok)
		}
	}
}

// The traced column pairs each traced run with the untraced run before
// it; the interval shows from 6 pairs on.
func TestPairedRatio(t *testing.T) {
	iops := func(s sample) float64 { return s.iops }
	mk := func(v ...float64) []sample {
		var ss []sample
		for _, x := range v {
			ss = append(ss, sample{iops: x})
		}
		return ss
	}
	if got := pairedRatio(mk(90, 180, 0), mk(100, 200, 100), iops); got != "0.90×" {
		t.Errorf("3 pairs, one without IOPS: %q", got)
	}
	if got := pairedRatio(mk(80, 90, 95, 85, 100, 70), mk(100, 100, 100, 100, 100, 100), iops); got != "0.88× (0.70–1.00)" {
		t.Errorf("6 pairs: %q", got)
	}
	if got := pairedRatio(nil, mk(100), iops); got != "n/a" {
		t.Errorf("no pairs: %q", got)
	}
}

// The polling section: the polled disk against the floor and against
// itself blocking, pair by pair, its CPU per command beside theirs, and
// the idle CPU of both modes.
func TestReportPoll(t *testing.T) {
	dir := t.TempDir()
	w := writer(t, dir)
	w("env", "kernel=6.1.0-test\nreps=3\nruntime=2\ncpus=2\nclk_tck=100\nring_poll=2ms\n")
	w("configs", "floor sdb 100\nfake_rw sdc 200\nfake_rw-poll sdc 200\n")
	// Floor 1000, blocking 900, polling 1600 each time; CPU 40, 40 and
	// 80 ticks per 4000 commands (100, 100, 200 µs).
	for rep := 1; rep <= 3; rep++ {
		writeSample(w, fmt.Sprintf("r%d-randread-4k-qd1-floor", rep), 1000, 40)
		writeSample(w, fmt.Sprintf("r%d-randread-4k-qd1-fake_rw", rep), 900, 40)
		writeSample(w, fmt.Sprintf("r%d-randread-4k-qd1-fake_rw-poll", rep), 1600, 80)
	}
	w("idle", "idle ring_poll=0 ticks=1 seconds=4\nidle ring_poll=2ms ticks=2 seconds=4\n")
	s := report(t, dir, t.TempDir(), nil)
	for _, want := range []string{
		"## Adaptive polling",
		"`ring_poll: 2ms`",
		"| 4 KiB random read, QD1 | 1.60× | 1.78× | 0.90× | 200 | 100 | 100 |",
		"blocking 0.25% of a CPU; ring_poll 2ms 0.50% of a CPU;",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q:\n%s", want, s)
		}
	}
	if s := report(t, writeRun(t), t.TempDir(), nil); strings.Contains(s, "Adaptive polling") {
		t.Error("a run without the polling configuration has a polling section")
	}
}

// The traced configuration's reader: its CPU per command below the
// workload's table, the median of the repetitions; none without it.
func TestReportReader(t *testing.T) {
	dir := t.TempDir()
	w := writer(t, dir)
	w("env", "kernel=6.1.0-test\nreps=3\nruntime=2\ncpus=2\nclk_tck=100\n")
	w("configs", "fake_rw sdc 200\nfake_rw-traced sdc 200\n")
	// 4000 commands a run; the reader's 2, 4 and 8 ticks are 5, 10 and
	// 20 µs a command.
	for rep, ticks := range []int{2, 4, 8} {
		writeSample(w, fmt.Sprintf("r%d-randread-4k-qd32x2-fake_rw", rep+1), 1000, 40)
		base := fmt.Sprintf("r%d-randread-4k-qd32x2-fake_rw-traced", rep+1)
		writeSample(w, base, 900, 50)
		for _, f := range []struct{ ext, add string }{{".before", "reader_ticks=30\n"}, {".after", fmt.Sprintf("reader_ticks=%d\n", 30+ticks)}} {
			b, err := os.ReadFile(filepath.Join(dir, base+f.ext))
			if err != nil {
				t.Fatal(err)
			}
			w(base+f.ext, string(b)+f.add)
		}
	}
	s := report(t, dir, t.TempDir(), nil)
	if want := "`vscsictl trace` writing to /dev/null, took 10 µs of CPU per command"; !strings.Contains(s, want) {
		t.Errorf("report lacks %q:\n%s", want, s)
	}
	if strings.Count(s, "vscsictl trace` writing") != 1 {
		t.Errorf("the reader's line is not there once:\n%s", s)
	}
}
