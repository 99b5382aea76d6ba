package main

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
)

// profiled is one CPU profile of vscsid (perf_profile), as the flat list
// of `go tool pprof -top` that perf/run writes: each function's share of
// the samples, where the sampled instruction was.
type profiled struct {
	total string             // "Total samples = 3.1s" as pprof says it
	flat  map[string]float64 // function → % of the samples
}

// profileGroups sorts a function into where its time is: the first group
// whose test matches. A sample in a system call is the kernel's work in
// the daemon's thread (the kick's write copies every Data-In to the
// initiator's pages); the runtime's own futex, usleep and epoll waits are
// system calls too.
var profileGroups = []struct {
	name string
	is   func(fn string) bool
}{
	{"system calls (the kernel)", func(fn string) bool {
		switch fn {
		case "runtime.futex", "runtime.usleep", "runtime.osyield", "runtime.epollwait", "runtime.write1", "runtime.read", "runtime.madvise", "runtime.mmap", "runtime.munmap", "runtime.sigprocmask", "runtime.rtsigprocmask", "runtime.tgkill", "runtime.nanosleep":
			return true
		}
		return strings.HasPrefix(fn, "internal/runtime/syscall") || strings.HasPrefix(fn, "syscall.RawSyscall") || strings.HasPrefix(fn, "syscall.Syscall") || strings.HasPrefix(fn, "syscall.rawVforkSyscall")
	}},
	{"Go runtime", func(fn string) bool {
		return strings.HasPrefix(fn, "runtime.") || strings.HasPrefix(fn, "internal/runtime/")
	}},
	{"ring and device loop", func(fn string) bool {
		return strings.HasPrefix(fn, "github.com/vscsid/vscsid/target.") || strings.HasPrefix(fn, "github.com/vscsid/vscsid/target/")
	}},
	// A trace's reader: draining and formatting the records, and writing
	// the lines to the control socket.
	{"trace and control socket", func(fn string) bool {
		for _, p := range []string{"github.com/vscsid/vscsid/internal/trace.", "github.com/vscsid/vscsid/cmd/internal/control.", "net/http.", "bufio.", "net.", "internal/poll."} {
			if strings.HasPrefix(fn, p) {
				return true
			}
		}
		return false
	}},
	{"handler", func(fn string) bool { return strings.HasPrefix(fn, "github.com/vscsid/vscsid/") }},
	{"other", func(string) bool { return true }},
}

// profiledWorkloads are the workloads perf_profile profiles, in order;
// profiledConfigs the configurations it profiles them on (the traced one
// on the 4 KiB reads only).
var (
	profiledWorkloads = []string{"randread-4k-qd1", "randread-4k-qd32x2", "read-1m"}
	profiledConfigs   = []string{"fake_rw", "fake_rw-traced"}
)

// loadProfiles reads pprof-W-C.top for the profiled workloads W and
// configurations C that have one, keyed W/C.
func loadProfiles(in string) map[string]profiled {
	out := map[string]profiled{}
	for _, w := range profiledWorkloads {
		for _, c := range profiledConfigs {
			b, err := os.ReadFile(filepath.Join(in, "pprof-"+w+"-"+c+".top"))
			if err != nil {
				continue
			}
			if p, ok := parsePprofTop(string(b)); ok {
				out[w+"/"+c] = p
			}
		}
	}
	return out
}

// parsePprofTop reads `go tool pprof -top`: a header ending in the column
// line "flat flat% sum% cum cum%", then one function per line.
func parsePprofTop(s string) (profiled, bool) {
	p := profiled{flat: map[string]float64{}}
	rows := false
	for line := range strings.SplitSeq(s, "\n") {
		f := strings.Fields(line)
		switch {
		case !rows && strings.Contains(line, "Total samples = "):
			_, t, _ := strings.Cut(line, "Total samples = ")
			p.total, _, _ = strings.Cut(t, " ")
		case !rows && len(f) == 5 && f[0] == "flat" && f[4] == "cum%":
			rows = true
		case rows && len(f) >= 6:
			pct, err := strconv.ParseFloat(strings.TrimSuffix(f[1], "%"), 64)
			if err != nil {
				return p, false
			}
			p.flat[f[5]] += pct
		}
	}
	return p, rows && len(p.flat) > 0
}

// renderProfiles: where vscsid's CPU goes, by group and by function.
func (r *results) renderProfiles(b *strings.Builder) {
	if len(r.profiles) == 0 {
		return
	}
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	p("## Where vscsid's CPU goes (fake_rw, CPU profile)\n\n")
	p("One more fio run of 6 s on the fake_rw disk per workload, while vscsid serves nothing else, with Go's CPU profiler (`vscsid --web.pprof`, `/debug/pprof/profile`): the share of the profile's samples by where the sampled instruction was. A sample in a system call is the kernel's work in the daemon's thread (the kick's write reaps the completions and copies each Data-In to the initiator's pages). On the 4 KiB reads, one more run while `vscsictl trace` reads the disk's trace (the traced rows): what a trace costs the daemon. The raw profiles are pprof-W-fake_rw.pb.gz and pprof-W-fake_rw-traced.pb.gz in raw/ (`go tool pprof -top FILE`).\n\n")
	p("| workload | samples |")
	for _, g := range profileGroups {
		p(" %s |", g.name)
	}
	p(" the most CPU outside system calls |\n|---|---|")
	for range profileGroups {
		p("---|")
	}
	p("---|\n")
	for _, w := range workloads {
		for _, c := range profiledConfigs {
			r.renderProfile(b, w.id, w.words, c)
		}
	}
	p("\n")
}

// renderProfile is the row of workload id (words: its name in the
// report) on configuration c, if it was profiled.
func (r *results) renderProfile(b *strings.Builder, id, words, c string) {
	p := func(format string, a ...any) { fmt.Fprintf(b, format, a...) }
	pr, ok := r.profiles[id+"/"+c]
	if !ok {
		return
	}
	share := make([]float64, len(profileGroups))
	outside := map[string]float64{} // functions outside system calls, as the column rounds them: not 0.0%
	for fn, pct := range pr.flat {
		for i, g := range profileGroups {
			if g.is(fn) {
				share[i] += pct
				if i > 0 && pct >= 0.05 {
					outside[fn] = pct
				}
				break
			}
		}
	}
	fns := largestFirst(outside)
	var top []string
	for _, fn := range fns[:min(6, len(fns))] {
		top = append(top, fmt.Sprintf("%s %.1f%%", strings.TrimPrefix(fn, "github.com/vscsid/vscsid/"), outside[fn]))
	}
	name := words
	if c != "fake_rw" {
		name += ", traced"
	}
	p("| %s | %s |", name, pr.total)
	for _, s := range share {
		p(" %.1f%% |", s)
	}
	p(" %s |\n", strings.Join(top, ", "))
}
