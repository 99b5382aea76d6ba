// Command suite runs make test's long half: the unit tests, the deploy
// checks, the guest builds and every VM boot, side by side where they can
// be, and ends with a table of the parts and their times.
//
//	go run ./deploy/vm/suite [-j SLOTS] [-suite S] [-newest S] [-cuts N]
//	                         [-no-host] [-newest-full] [-only PART,...] [-list]
//
// A part is one command of the harness (deploy/vm/run for one scenario,
// full/run for one suite of the full guest, powercut, metrics-test, ...)
// or of the host (go test, deploy checks). Parts wait for the builds they
// need and take slots, one per host CPU and one more by default: a guest
// takes one (the two-host pair two) and boots with one vCPU (VM_SMP=1).
// The extra slot is for the time guests wait: with one slot per CPU the
// 2-core machine used 37 minutes of CPU in 26 of wall time (the tape
// scenario's guest used 40 s of CPU in 142 s: st's blocking open waits
// 120 s). Under TCG one
// vCPU is the faster guest, alone and side by side: the disk scenario took
// 50 s with two vCPUs and 37 s with one alone; two of it side by side took
// 75 s each with two vCPUs and 40-50 s with one; three guests of two vCPUs
// on the 2-core machine made the full guest 2.5 times slower than two of
// one. The bookworm disk scenario keeps two vCPUs, so that the SMP paths
// stay covered. Among
// the parts that are ready, the one at the head of the longest chain
// starts first, so that the full guest's build, then its core suite,
// start early; one that needs more slots than are free holds back those
// after it until it fits.
//
// Each part's output goes to deploy/vm/out/suite/PART.log and is printed
// whole when the part ends, so that parts never interleave. A part fails
// when its command exits non-zero, or when its output's closing "N passed,
// N failed" line disagrees with its PASS and FAIL lines; a part whose
// build failed is not run and counts as failed. Exit status 0 only when
// every part passed.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/exec"
	"os/signal"
	"path"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"syscall" //nolint:depguard // os/exec.Cmd.SysProcAttr is a *syscall.SysProcAttr
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

func main() {
	code, err := run(os.Args[1:], os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "suite:", err)
		os.Exit(2)
	}
	os.Exit(code)
}

type options struct {
	slots  int
	suite  string
	newest string
	cuts   int
	host   bool
	// newestFull runs the full guest's real clients on the newest kernel
	// (make vm-newest-full) instead of their short pass: 16 minutes of
	// one CPU, which would take make test past 25 minutes on two.
	newestFull bool
	only       []string
	list       bool
	root       string // the repository
}

func run(args []string, out io.Writer) (int, error) {
	fs := flag.NewFlagSet("suite", flag.ContinueOnError)
	o := options{}
	fs.IntVar(&o.slots, "j", max(2, runtime.NumCPU()+1), "`slots`: parts run side by side up to this many slots (a guest takes 1, the two-host pair 2)")
	fs.StringVar(&o.suite, "suite", "bookworm", "the Debian suite of the minimal guest's scenarios, the power cuts and the full guest")
	fs.StringVar(&o.newest, "newest", "sid", "the newest kernel's suite, on which the core scenarios run too (empty: none)")
	fs.IntVar(&o.cuts, "cuts", 3, "power cuts")
	noHost := fs.Bool("no-host", false, "only the VM parts (no unit tests, no deploy checks)")
	fs.BoolVar(&o.newestFull, "newest-full", false, "on the newest kernel, the full guest's real clients (targetcli, tcmu-runner, mtx, Bacula, open-iscsi, LTFS) instead of their short pass")
	only := fs.String("only", "", "run only these `parts` (comma-separated names from -list, or shell patterns of them: 'bookworm-*') and the builds they need")
	fs.BoolVar(&o.list, "list", false, "print the parts and exit")
	if err := fs.Parse(args); err != nil {
		return 0, err
	}
	if fs.NArg() > 0 {
		return 0, fmt.Errorf("unexpected argument %q", fs.Arg(0))
	}
	if o.slots < 2 {
		return 0, fmt.Errorf("-j %d: at least 2 slots (the two-host pair takes 2)", o.slots)
	}
	o.host = !*noHost
	if *only != "" {
		o.only = strings.Split(*only, ",")
	}
	root, err := repoRoot()
	if err != nil {
		return 0, err
	}
	o.root = root
	parts, err := plan(o)
	if err != nil {
		return 0, err
	}
	if o.list {
		for _, p := range parts {
			_, _ = fmt.Fprintf(out, "%-34s %d slot(s), ~%3ds  %s\n", p.name, p.slots, p.est, strings.Join(p.cmd, " "))
		}
		return 0, nil
	}
	logDir := filepath.Join(root, "deploy/vm/out/suite")
	if err := os.MkdirAll(logDir, 0o755); err != nil {
		return 0, err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, unix.SIGTERM)
	defer stop()
	s := &scheduler{parts: parts, slots: o.slots, root: root, logDir: logDir, out: out, start: time.Now()}
	s.run(ctx)
	return s.report(), nil
}

// repoRoot is the directory holding go.mod above the working directory.
func repoRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "deploy/vm/run")); err == nil {
			return dir, nil
		}
		up := filepath.Dir(dir)
		if up == dir {
			return "", errors.New("not inside the vscsid repository (no deploy/vm/run above the working directory)")
		}
		dir = up
	}
}

// part is one command of the suite.
type part struct {
	name    string
	cmd     []string // relative to the repository root
	after   []string // parts that must pass first
	env     []string // added to the suite's environment
	slots   int
	est     int  // expected seconds (2-core machine), for the order
	results bool // its output ends with "N passed, N failed"

	// Filled in by the scheduler.
	prio           int // est plus the longest chain of parts that need it
	state          state
	began, elapsed time.Duration
	cpu            time.Duration // user and system time of its process tree (qemu's included)
	pass, fail     int
	problem        string
	steps          []step // its result lines' times, for the report
}

type state int

const (
	waiting state = iota
	running
	passed
	failed
	skipped // a part it needs failed
)

// plan is the list of parts of make test, in the order of the table.
func plan(o options) ([]*part, error) {
	var ps []*part
	add := func(p *part) { ps = append(ps, p) }
	if o.host {
		add(&part{name: "unit", cmd: []string{"go", "test", "-race", "-count=1", "./..."}, slots: 1, est: 100})
		// The cartridge crash tests' 300 seeds each, without -race
		// (which runs 30: tape/cartridge crashSeeds).
		add(&part{name: "crash", cmd: []string{"go", "test", "-count=1", "-run", "Crash", "./tape/cartridge/"}, slots: 1, est: 30})
		add(&part{name: "deploy-check", cmd: []string{"make", "--no-print-directory", "deploy-check"}, slots: 1, est: 20})
	}
	build := "build-" + o.suite
	add(&part{name: build, cmd: []string{"deploy/vm/build-guest", "--suite", o.suite}, slots: 1, est: 30})
	add(&part{name: "build-full", cmd: []string{"deploy/vm/full/build", "--suite", o.suite}, after: []string{build}, slots: 1, est: 60})
	if o.newest != "" {
		add(&part{name: "build-" + o.newest, cmd: []string{"deploy/vm/build-guest", "--suite", o.newest}, slots: 1, est: 50})
	}
	scen, err := regressionScenarios(filepath.Join(o.root, "deploy/vm/scenarios"), estimates)
	if err != nil {
		return nil, err
	}
	grouped := followers(oneBoot)
	for _, sc := range scen {
		if grouped[sc.name] {
			continue
		}
		if sc.name == "metrics" {
			// The host's Prometheus scrapes this one (metrics-test).
			add(&part{name: o.suite + "-metrics", cmd: []string{"deploy/vm/metrics-test", "--no-build", "--suite", o.suite},
				after: []string{build}, slots: 1, est: sc.est, results: true})
			continue
		}
		p, err := bootPart(o.suite, sc.name, scen, oneBoot)
		if err != nil {
			return nil, err
		}
		if sc.name == "disk" {
			// The SMP paths (completions on another CPU, vscsid's
			// goroutines in parallel) stay covered: the disk scenario,
			// the cheapest with concurrent I/O, keeps two vCPUs.
			p.env = []string{"VM_SMP=2"}
		}
		add(p)
	}
	add(&part{name: o.suite + "-powercut", cmd: []string{"deploy/vm/powercut", "--suite", o.suite, "--no-build", "--cuts", strconv.Itoa(o.cuts)},
		after: []string{build}, slots: 1, est: 40 * (o.cuts + 1)})
	if o.newest != "" {
		for _, g := range newestBoots {
			p, err := bootPart(o.newest, g[0], scen, newestBoots)
			if err != nil {
				return nil, err
			}
			add(p)
		}
	}
	// The full guest: each of its regression scenarios (the same model:
	// deploy/vm/full/scenarios, headers and all) in a boot of its own,
	// side by side. 4 restarts under I/O, not full/run's 20: the point (no
	// I/O error, nodes kept) shows at the first, and each costs 6 s under
	// TCG; make vm-full does 20.
	full, err := regressionScenarios(filepath.Join(o.root, "deploy/vm/full/scenarios"), fullEstimates)
	if err != nil {
		return nil, err
	}
	grouped = followers(fullOneBoot)
	for _, sc := range full {
		if grouped[sc.name] {
			continue
		}
		names, est, err := bootGroup(sc.name, full, fullOneBoot)
		if err != nil {
			return nil, err
		}
		var args []string
		for _, n := range names {
			args = append(args, fullArgs[n]...)
		}
		add(&part{name: "full-" + strings.Join(names, "+"),
			cmd: append([]string{"deploy/vm/full/run", "--release", o.suite, "--no-build", "--suite", strings.Join(names, ","), "--restarts", "4", "--timeout", "1500"},
				args...),
			after: []string{"build-full"}, slots: 1, est: est, results: true})
	}
	// On the newest kernel, the full guest's short pass: a library made
	// and deleted with targetcli, mtx and Bacula's mtx-changer, LTFS on
	// its drive, streams through a restart; the iSCSI login and I/O. With
	// -newest-full, the real clients in one boot instead: targetcli,
	// tcmu-runner, mtx and Bacula, reservations, open-iscsi, LTFS on one
	// personality.
	if o.newest != "" {
		build := "build-full-" + o.newest
		add(&part{name: build, cmd: []string{"deploy/vm/full/build", "--suite", o.newest}, after: []string{"build-" + o.newest}, slots: 1, est: 20})
		if !o.newestFull {
			add(&part{name: "full-" + o.newest + "-newest",
				cmd:   []string{"deploy/vm/full/run", "--release", o.newest, "--no-build", "--suite", "newest", "--restarts", "1", "--timeout", "1500"},
				after: []string{build}, slots: 1, est: 140, results: true})
		}
	}
	if o.newest != "" && o.newestFull {
		build := "build-full-" + o.newest
		add(&part{name: "full-" + o.newest + "-clients",
			cmd:   []string{"deploy/vm/full/run", "--release", o.newest, "--no-build", "--suite", "clients", "--ltfs", "lto8", "--timeout", "1500"},
			after: []string{build}, slots: 1, est: 480, results: true})
	}
	add(&part{name: "two-hosts", cmd: []string{"deploy/vm/full/run", "--release", o.suite, "--no-build", "--suite", "two-hosts", "--timeout", "1500"},
		after: []string{"build-full"}, slots: 2, est: 230, results: true})
	for _, p := range ps {
		if p.env == nil && strings.HasPrefix(p.cmd[0], "deploy/vm/") {
			p.env = []string{"VM_SMP=1"}
		}
	}
	return selectParts(ps, o.only)
}

// oneBoot lists the minimal guest's scenarios that share a boot: each
// boot costs about 15 s of CPU under TCG (kernel, init, power-off, the
// host's packing), as much as these scenarios themselves. smoke leads, so
// that its Go tests run before any daemon has touched the kernel's TCMU
// state. The tape-format scenarios (encryption, compression, record) each
// take a drive of their own and stop their daemon. The others boot alone:
// those that kill a daemon, cut power, load the machine or time it, and
// the long ones (tape, disk, library), so that one that hangs st fails
// nothing else.
var oneBoot = [][]string{{"smoke", "attach", "ctl", "reclaim"}, {"encryption", "compression", "record"}}

// newestBoots are the scenarios the newest kernel runs, one boot per
// group.
var newestBoots = [][]string{{"smoke", "attach", "encryption"}, {"disk"}, {"tape"}}

// bootPart is the part that boots suite's minimal guest for the scenario
// first and, when first leads one of groups, the rest of that group: named
// SUITE-A+B+..., its estimate the sum of the scenarios'.
func bootPart(suite, first string, scen []scenario, groups [][]string) (*part, error) {
	names, est, err := bootGroup(first, scen, groups)
	if err != nil {
		return nil, err
	}
	cmd := append([]string{"deploy/vm/run", "--no-build", "--suite", suite}, names...)
	return &part{name: suite + "-" + strings.Join(names, "+"), cmd: cmd,
		after: []string{"build-" + suite}, slots: 1, est: est, results: true}, nil
}

// bootGroup is the scenarios of the boot that first leads: first and,
// when it leads one of groups, the rest of that group; est is the sum of
// their estimates.
func bootGroup(first string, scen []scenario, groups [][]string) (names []string, est int, err error) {
	names = []string{first}
	for _, g := range groups {
		if g[0] == first {
			names = g
		}
	}
	for _, n := range names {
		i := slices.IndexFunc(scen, func(s scenario) bool { return s.name == n })
		if i < 0 {
			return nil, 0, fmt.Errorf("scenario %s is not a regression scenario", n)
		}
		est += scen[i].est
	}
	return names, est, nil
}

// followers is the set of scenarios that groups boot after another.
func followers(groups [][]string) map[string]bool {
	f := map[string]bool{}
	for _, g := range groups {
		for _, n := range g[1:] {
			f[n] = true
		}
	}
	return f
}

// selectParts keeps the named parts and the parts they need. A name may
// be a shell pattern (path.Match: 'bookworm-*' is every part of the
// minimal bookworm guest), which must match at least one part.
func selectParts(ps []*part, only []string) ([]*part, error) {
	if len(only) == 0 {
		return ps, nil
	}
	byName := map[string]*part{}
	for _, p := range ps {
		byName[p.name] = p
	}
	keep := map[string]bool{}
	var need func(string) error
	need = func(n string) error {
		p, ok := byName[n]
		if !ok {
			return fmt.Errorf("-only: no part %q (see -list)", n)
		}
		keep[n] = true
		for _, a := range p.after {
			if err := need(a); err != nil {
				return err
			}
		}
		return nil
	}
	for _, n := range only {
		if !strings.ContainsAny(n, "*?[") {
			if err := need(n); err != nil {
				return nil, err
			}
			continue
		}
		matched := false
		for _, p := range ps {
			ok, err := path.Match(n, p.name)
			if err != nil {
				return nil, fmt.Errorf("-only %q: %w", n, err)
			}
			if ok {
				matched = true
				if err := need(p.name); err != nil {
					return nil, err
				}
			}
		}
		if !matched {
			return nil, fmt.Errorf("-only: no part matches %q (see -list)", n)
		}
	}
	var out []*part
	for _, p := range ps {
		if keep[p.name] {
			out = append(out, p)
		}
	}
	return out, nil
}

type scenario struct {
	name string
	est  int
}

// regressionScenarios lists a guest's regression scenarios: every
// DIR/*.sh (deploy/vm/scenarios, deploy/vm/full/scenarios) except demo,
// the experiments (exp-*) and those whose header says "# vm-test-all:
// no", each with its estimate from estimates.
func regressionScenarios(dir string, estimates map[string]int) ([]scenario, error) {
	files, err := filepath.Glob(filepath.Join(dir, "*.sh"))
	if err != nil {
		return nil, err
	}
	var out []scenario
	for _, f := range files {
		name := strings.TrimSuffix(filepath.Base(f), ".sh")
		if name == "demo" || strings.HasPrefix(name, "exp-") {
			continue
		}
		meta, err := vmhost.ScenarioMeta(f)
		if err != nil {
			return nil, err
		}
		if meta["test-all"] == "no" {
			continue
		}
		est := 60
		if v, ok := estimates[name]; ok {
			est = v
		}
		out = append(out, scenario{name: name, est: est})
	}
	if len(out) == 0 {
		return nil, fmt.Errorf("no scenarios in %s", dir)
	}
	return out, nil
}

// estimates are the scenarios' wall seconds on the 2-core machine, for the
// order only (an unknown scenario counts a minute).
var estimates = map[string]int{
	"smoke": 12, "attach": 20, "ctl": 17, "disk": 80, "faults": 37, "kill9": 130,
	"library": 90, "reclaim": 13, "tape": 140, "metrics": 35, "compression": 40, "encryption": 30, "record": 38,
}

// fullEstimates are the full guest's.
var fullEstimates = map[string]int{"core": 260, "tools": 200, "iscsi": 200, "ltfs": 80}

// fullArgs are full/run's arguments for a full-guest scenario in make
// test. LTFS: the ltfs scenario takes a TS1160 (with its key manager) and
// records a run on an LTO-8; tools runs the same LTFS steps on an IBM
// LTO-8 in its library, the newest kernel's pass on an HPE LTO-8 in its
// library, so that make test runs each of them once.
var fullArgs = map[string][]string{"ltfs": {"--ltfs", "ts1160"}}

// fullOneBoot lists the full guest's scenarios that share a boot, as
// oneBoot does the minimal guest's: a boot of the full guest costs about
// half a minute of CPU under TCG (systemd, the 290 MiB root file system).
var fullOneBoot = [][]string{{"iscsi", "ltfs"}}

type scheduler struct {
	parts  []*part
	slots  int
	root   string
	logDir string
	out    io.Writer
	start  time.Time
}

type doneMsg struct {
	p   *part
	err error
	log string
}

// printf writes to the suite's output; a closed stdout has nobody to tell.
func (s *scheduler) printf(format string, a ...any) { _, _ = fmt.Fprintf(s.out, format, a...) }

func (s *scheduler) since() time.Duration { return time.Since(s.start).Round(time.Second) }

// setPriorities gives each part its critical-path length: its own
// estimate plus the longest chain of parts waiting for it, so that a build
// that gates the full guest starts before a short boot.
func (s *scheduler) setPriorities() {
	var prio func(p *part) int
	prio = func(p *part) int {
		if p.prio == 0 {
			longest := 0
			for _, q := range s.parts {
				if slices.Contains(q.after, p.name) {
					longest = max(longest, prio(q))
				}
			}
			p.prio = p.est + longest
		}
		return p.prio
	}
	for _, p := range s.parts {
		prio(p)
	}
}

func (s *scheduler) run(ctx context.Context) {
	s.setPriorities()
	free := s.slots
	done := make(chan doneMsg)
	active := 0
	for {
		s.skipBlocked()
		for _, p := range s.ready() {
			if ctx.Err() != nil {
				p.state, p.problem = skipped, "not run: interrupted"
				continue
			}
			if p.slots > free {
				// It waits for its slots, and the parts after it in the
				// order wait with it: passed by smaller parts, a part of
				// two slots would wait until the end and run last,
				// alone. A slot kept free meanwhile costs little: there
				// is one more slot than CPUs.
				break
			}
			free -= p.slots
			active++
			p.state, p.began = running, s.since()
			fmt.Fprintf(os.Stderr, "suite: +%s start %s\n", p.began, p.name)
			go func() { done <- s.exec(ctx, p) }()
		}
		if active == 0 {
			return
		}
		m := <-done
		active--
		free += m.p.slots
		s.finish(m)
	}
}

// ready is the waiting parts whose builds passed, longest first.
func (s *scheduler) ready() []*part {
	var r []*part
	for _, p := range s.parts {
		if p.state == waiting && s.after(p) == passed {
			r = append(r, p)
		}
	}
	slices.SortStableFunc(r, func(a, b *part) int { return b.prio - a.prio })
	return r
}

// after is passed when every part p needs passed, skipped when one did
// not, waiting otherwise.
func (s *scheduler) after(p *part) state {
	st := passed
	for _, n := range p.after {
		i := slices.IndexFunc(s.parts, func(q *part) bool { return q.name == n })
		switch s.parts[i].state {
		case failed, skipped:
			return skipped
		case passed:
		default:
			st = waiting
		}
	}
	return st
}

func (s *scheduler) skipBlocked() {
	for changed := true; changed; {
		changed = false
		for _, p := range s.parts {
			if p.state == waiting && s.after(p) == skipped {
				p.state, p.problem, changed = skipped, "not run: a part it needs failed", true
			}
		}
	}
}

func (s *scheduler) exec(ctx context.Context, p *part) doneMsg {
	logPath := filepath.Join(s.logDir, p.name+".log")
	f, err := os.Create(logPath)
	if err != nil {
		return doneMsg{p: p, err: err}
	}
	defer func() { _ = f.Close() }() // the log is read back whole; a lost line shows there
	t0 := time.Now()
	cmd := exec.CommandContext(ctx, p.cmd[0], p.cmd[1:]...)
	cmd.Dir = s.root
	cmd.Env = append(os.Environ(), p.env...)
	cmd.Stdout, cmd.Stderr = f, f
	// An interrupt stops the part's whole process tree: qemu runs under
	// timeout(1), which leaves the script's process group.
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	cmd.Cancel = func() error { return killTree(cmd.Process.Pid) }
	cmd.WaitDelay = 15 * time.Second
	done := make(chan struct{})
	stepsDone := make(chan []step, 1)
	go func() { stepsDone <- watchSteps(p.name, logPath, t0, done) }()
	err = cmd.Run()
	p.elapsed = time.Since(t0).Round(time.Second)
	close(done)
	p.steps = <-stepsDone
	if ps := cmd.ProcessState; ps != nil {
		p.cpu = (ps.UserTime() + ps.SystemTime()).Round(time.Second)
	}
	return doneMsg{p: p, err: err, log: logPath}
}

var (
	resultLine  = regexp.MustCompile(`^(PASS|FAIL) `)
	closingLine = regexp.MustCompile(`^([0-9]+) passed, ([0-9]+) failed$`)
)

// finish prints a part's output and decides its verdict.
func (s *scheduler) finish(m doneMsg) {
	p := m.p
	b, _ := os.ReadFile(m.log)
	s.printf("==== %s (%s, from +%s)\n", p.name, p.elapsed, p.began)
	_, _ = s.out.Write(b)
	closing := ""
	for line := range strings.SplitSeq(strings.ReplaceAll(string(b), "\r", ""), "\n") {
		if mm := resultLine.FindStringSubmatch(line); mm != nil {
			if mm[1] == "PASS" {
				p.pass++
			} else {
				p.fail++
			}
		}
		if closingLine.MatchString(line) {
			closing = line
		}
	}
	switch {
	case m.err != nil && m.log == "":
		p.problem = m.err.Error()
	case m.err != nil:
		p.problem = "exit: " + m.err.Error()
	case p.fail > 0:
		p.problem = fmt.Sprintf("%d FAIL lines", p.fail)
	case p.results && p.pass == 0:
		p.problem = "no checks reported"
	case p.results && closing != fmt.Sprintf("%d passed, %d failed", p.pass, p.fail):
		p.problem = fmt.Sprintf("its closing line %q disagrees with its %d PASS and %d FAIL lines", closing, p.pass, p.fail)
	}
	if p.problem == "" {
		p.state = passed
	} else {
		p.state = failed
		s.printf("FAIL suite/%s: %s (log %s)\n", p.name, p.problem, m.log)
	}
}

// report prints the table and returns the exit status.
func (s *scheduler) report() int {
	wall := s.since()
	var sum, cpu time.Duration
	pass, fail, bad := 0, 0, 0
	s.printf("\n%-22s %5s %8s %8s %8s  %s\n", "part", "slots", "start", "wall", "cpu", "result")
	for _, p := range s.parts {
		sum += p.elapsed
		cpu += p.cpu
		pass += p.pass
		fail += p.fail
		res := "ok"
		if p.state != passed {
			bad++
			if p.fail == 0 {
				fail++ // a failure no FAIL line counts: the closing line must not say 0
			}
			if p.problem == "" {
				p.problem = "not run"
			}
			res = "FAILED: " + p.problem
		}
		if p.pass+p.fail > 0 {
			res += fmt.Sprintf(" (%d passed, %d failed)", p.pass, p.fail)
		}
		start := "-"
		if p.state != skipped {
			start = "+" + p.began.String()
		}
		s.printf("%-22s %5d %8s %8s %8s  %s\n", p.name, p.slots, start, p.elapsed, p.cpu, res)
	}
	s.printf("suite: %d parts in %s of wall time (%s if run one after another), %s of CPU, %d slots, %d failed\n",
		len(s.parts), wall, sum, cpu, s.slots, bad)
	printSteps(s.out, s.parts, 15)
	s.printf("%d passed, %d failed\n", pass, fail)
	if bad > 0 {
		return 1
	}
	return 0
}

// killTree sends SIGTERM to pid and every process below it.
func killTree(pid int) error {
	children := map[int][]int{}
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid ...: comm may hold spaces and parentheses.
		i := strings.LastIndexByte(string(b), ')')
		fields := strings.Fields(string(b[i+1:]))
		if i < 0 || len(fields) < 2 {
			continue
		}
		child, _ := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(f)), "/"))
		ppid, _ := strconv.Atoi(fields[1])
		children[ppid] = append(children[ppid], child)
	}
	var err error
	var kill func(int)
	kill = func(p int) {
		if e := unix.Kill(p, unix.SIGTERM); e != nil && err == nil && !errors.Is(e, unix.ESRCH) {
			err = e
		}
		for _, c := range children[p] {
			kill(c)
		}
	}
	kill(pid)
	return err
}
