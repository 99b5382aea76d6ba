//go:build linux

package main

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

const perfDoc = `
usage: deploy/vm/perf/run [options]

The perf suite (make perf). Boots the full guest once with
vmtest.scenarios=perf (deploy/vm/full/guest/perf.sh: scsi_debug, the TCMU
floor, vscsid fake_rw and store disks, tcmu-runner, and a tape drive
through st, all interleaved), then writes the report from that run's raw
results: deploy/vm/out/perf/report.md and its charts beside it; the raw
results stay in the run directory (deploy/vm/out/full-bookworm/runs/) and
are copied to the report's raw/.

--clock: under TCG the kernel marks the TSC unstable ("TSCs
unsynchronized": the emulated CPU claims no invariant TSC) and falls back
to the HPET, which has no vDSO clock: every clock read is a system call
and an emulated HPET access, a cost no real machine charges a program.
tsc boots with tsc=reliable (TCG's TSC reads the host's); hpet keeps the
kernel's own choice.

--idle: under TCG a halted virtual CPU sleeps in the host, and waking it
for an interrupt or another thread costs far more than on real hardware;
at QD1 every command waits for such wake-ups (the daemon's, then fio's).
poll boots with idle=poll: idle CPUs spin, the wake-ups cost nothing, and
what remains is the command path itself. A run for diagnosis: two
spinning CPUs take both of a two-core host's cores.

--base REV: A/B. vscsid is built at the git revision REV as well and the
tree's is measured against it alternately in the same boot (the service
restarted on the other binary before each run; the device handed over in
place), on one fake_rw disk and nothing else. The report gives the paired
ratio per workload with its 95% interval; use --reps 10 or more, and
--only for the workloads in question.`

// perfConfigs are the perf scenario's configurations (perf.sh).
var perfConfigs = []string{"scsi_debug", "floor", "fake_rw", "store", "tcmu-runner", "fake_rw-rot", "fake_rw-traced", "fake_rw-poll"}

type perfOpts struct {
	noBuild                bool
	reps, runtime, limit   int
	out, clock, idle, base string
	only, configs, poll    string
	pass                   []string // to full-run
}

func perfCmd(args []string, stdout io.Writer) error {
	o := perfOpts{reps: 3, runtime: 2, limit: 1500, clock: "tsc", idle: "halt"}
	fs := newFlags("perf/run", perfDoc)
	fs.BoolVar(&o.noBuild, "no-build", false, "use the full guest already built")
	for _, n := range []string{"vscsid", "vscsictl"} {
		fs.Var(passArgs{&o.pass, n, false}, n, "measure that `FILE` (e.g. an older build) instead; it is packed into\nthe guest, so not with --no-build")
	}
	fs.IntVar(&o.reps, "reps", o.reps, "repetitions of every workload on every configuration")
	fs.IntVar(&o.runtime, "runtime", o.runtime, "seconds per fio run, after 1 s of ramp")
	fs.IntVar(&o.limit, "timeout", o.limit, "wall limit for qemu, `seconds`")
	fs.StringVar(&o.out, "out", "", "where the report goes (`DIR`; default deploy/vm/out/perf)")
	fs.StringVar(&o.clock, "clock", o.clock, "the guest's clock source, tsc or hpet (below)")
	fs.StringVar(&o.idle, "idle", o.idle, "what the guest's idle CPUs do, halt or poll (below)")
	fs.StringVar(&o.only, "only", "", "only these workloads (`W,...`): randread-4k-qd1, randread-4k-qd32x2,\nrandwrite-4k-qd1, randwrite-4k-qd32x2, read-64k, write-64k, read-1m,\nwrite-1m, and tape for the streams; the report covers only what ran")
	fs.StringVar(&o.configs, "configs", "", "only these configurations (`C,...`): "+strings.Join(perfConfigs, ", ")+";\nwith --only, a paired comparison of two (fake_rw,fake_rw-traced: what\ntracing costs) gets many repetitions in one boot")
	fs.StringVar(&o.poll, "poll", "", "the ring_poll window of fake_rw-poll (a `DURATION`; 2ms): under TCG it\nmust outlast a command's round trip through fio and the kernel")
	fs.StringVar(&o.base, "base", "", "A/B against vscsid built at the git revision `REV` (below)")
	if err := parseOptions(fs, args); err != nil {
		return err
	}
	return o.run(stdout)
}

func (o *perfOpts) run(stdout io.Writer) error {
	d, err := vmhost.FindDirs()
	if err != nil {
		return err
	}
	if o.clock != "tsc" && o.clock != "hpet" {
		return usagef("--clock wants tsc or hpet, not %q", o.clock)
	}
	if o.idle != "halt" && o.idle != "poll" {
		return usagef("--idle wants halt or poll, not %q", o.idle)
	}
	// Misspelt names are refused here rather than after a boot.
	workloads, err := perfWorkloads(filepath.Join(d.VM, "full/guest/perf.sh"))
	if err != nil {
		return err
	}
	if err := knownNames("--only", "workload", o.only, workloads); err != nil {
		return err
	}
	if err := knownNames("--configs", "configuration", o.configs, perfConfigs); err != nil {
		return err
	}
	if o.out == "" {
		o.out = filepath.Join(d.Out, "perf")
	}
	args := []string{"full-run", "--suite", "perf", "--perf-clock", o.clock, "--perf-idle", o.idle,
		"--perf-reps", fmt.Sprint(o.reps), "--perf-runtime", fmt.Sprint(o.runtime), "--timeout", fmt.Sprint(o.limit)}
	if o.noBuild {
		args = append(args, "--no-build")
	}
	args = append(args, o.pass...)
	for _, a := range [][2]string{{"--perf-only", o.only}, {"--perf-configs", o.configs}, {"--perf-poll", o.poll}} {
		if a[1] != "" {
			args = append(args, a[0], a[1])
		}
	}
	if o.base != "" {
		bin, err := buildBase(d, o.base)
		if err != nil {
			return err
		}
		args = append(args, "--vscsid-base", bin)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	rc, err := runSelf(stdout, self, args...)
	if err != nil {
		return err
	}
	runDir, err := filepath.EvalSymlinks(filepath.Join(d.Out, "full-bookworm/runs/latest"))
	perf := filepath.Join(runDir, "perf")
	if err != nil || !fileExists(perf) {
		return fmt.Errorf("the perf run left no results in %s (full-run exit %d)", perf, rc)
	}
	_ = os.RemoveAll(o.out)
	if err := os.MkdirAll(o.out, 0o755); err != nil {
		return err
	}
	// vscsid's CPU profiles (perf_profile): every function's flat CPU, as
	// text the report groups (the profile carries its own symbols).
	profiles, _ := filepath.Glob(filepath.Join(perf, "pprof-*.pb.gz"))
	for _, f := range profiles {
		top := strings.TrimSuffix(f, ".pb.gz") + ".top"
		out, err := exec.Command("go", "tool", "pprof", "-top", "-nodecount=100000", "-nodefraction=0", "-edgefraction=0", f).Output()
		if err != nil {
			vmhost.Logf("go tool pprof %s failed: %v", f, err)
			continue
		}
		if err := os.WriteFile(top, out, 0o644); err != nil {
			return err
		}
	}
	report, err := vmhost.GoCommand(d, "./deploy/vm/perf/report")
	if err != nil {
		return err
	}
	cmd := exec.Command(report, "-in", perf, "-out", o.out)
	cmd.Stdout, cmd.Stderr = stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("the report failed: %w", err)
	}
	if out, err := exec.Command("cp", "-a", perf, filepath.Join(o.out, "raw")).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the raw results: %w: %s", err, out)
	}
	vmhost.Logf("report: %s/report.md (raw results: %s/raw)", o.out, o.out)
	if rc != 0 {
		return exitError(rc)
	}
	return nil
}

// perfWorkloads are the workload names of perf.sh's PERF_WORKLOADS table
// (the first field of its lines), and tape.
func perfWorkloads(perfSh string) ([]string, error) {
	f, err := os.Open(perfSh)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	names := []string{"tape"}
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, `PERF_WORKLOADS="`):
			in = true
		case in && strings.HasPrefix(line, `"`):
			return names, nil
		case in:
			if f := strings.Fields(line); len(f) > 0 {
				names = append(names, f[0])
			}
		}
	}
	if err := sc.Err(); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%s: no PERF_WORKLOADS table", perfSh)
}

// knownNames refuses a comma-separated list with a name outside known.
func knownNames(flag, what, list string, known []string) error {
	if list == "" {
		return nil
	}
	for _, n := range strings.Split(list, ",") {
		if !slices.Contains(known, n) {
			return usagef("%s: no %s %q (accepted: %s)", flag, what, n, strings.Join(known, " "))
		}
	}
	return nil
}

// buildBase builds vscsid at the git revision rev, as the package builds
// it (static, trimmed paths, rev's own version stamp), in a worktree of
// its own that is removed after; it returns the binary's path.
func buildBase(d vmhost.Dirs, rev string) (string, error) {
	git := func(args ...string) ([]byte, error) {
		return exec.Command("git", append([]string{"-C", d.Repo}, args...)...).Output()
	}
	out, err := git("rev-parse", "--verify", "--quiet", rev+"^{commit}")
	if err != nil {
		return "", usagef("--base %s: not a commit of this repository", rev)
	}
	commit := strings.TrimSpace(string(out))
	dir := filepath.Join(d.Out, "perf-base")
	src := filepath.Join(dir, "src")
	_, _ = git("worktree", "remove", "--force", src)
	_ = os.RemoveAll(dir)
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", err
	}
	if _, err := git("worktree", "add", "--quiet", "--detach", src, commit); err != nil {
		return "", fmt.Errorf("--base: git worktree add %s: %w", commit, err)
	}
	defer func() { _, _ = git("worktree", "remove", "--force", src) }()
	bin := filepath.Join(dir, "vscsid")
	if err := vmhost.BuildForGuest(src, "./cmd/vscsid", bin, vmhost.Stamped); err != nil {
		return "", fmt.Errorf("--base: %w (at %s)", err, commit)
	}
	subject, _ := git("log", "-1", "--format=%h %s", commit)
	vmhost.Logf("base: vscsid at %s", strings.TrimSpace(string(subject)))
	return bin, nil
}
