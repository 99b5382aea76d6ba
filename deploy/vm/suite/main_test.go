package main

import (
	"context"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"
)

func TestPlan(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	ps, err := plan(options{slots: 2, suite: "bookworm", newest: "sid", cuts: 3, host: true, newestFull: true, root: root})
	if err != nil {
		t.Fatal(err)
	}
	names := map[string]*part{}
	for _, p := range ps {
		if names[p.name] != nil {
			t.Errorf("part %s twice", p.name)
		}
		names[p.name] = p
	}
	for _, want := range []string{"unit", "crash", "deploy-check", "build-bookworm", "build-sid", "build-full",
		"bookworm-smoke+attach+ctl+reclaim", "bookworm-tape", "bookworm-metrics", "bookworm-powercut", "sid-tape",
		"full-core", "full-tools", "full-iscsi+ltfs", "two-hosts",
		"build-full-sid", "full-sid-clients"} {
		if names[want] == nil {
			t.Errorf("no part %s", want)
		}
	}
	if names["bookworm-demo"] != nil || names["bookworm-exp-alignment"] != nil || names["bookworm-kill9-100"] != nil {
		t.Error("demo, an experiment or a scenario marked vm-test-all: no is a part")
	}
	for _, p := range ps {
		for _, a := range p.after {
			if names[a] == nil {
				t.Errorf("%s waits for %s, which is not a part", p.name, a)
			}
		}
		if p.slots < 1 || p.slots > 2 {
			t.Errorf("%s: %d slots", p.name, p.slots)
		}
		vm := strings.HasPrefix(p.cmd[0], "deploy/vm/")
		if vm != (len(p.env) == 1) {
			t.Errorf("%s: env %v", p.name, p.env)
		}
	}
	if !slices.Equal(names["bookworm-disk"].env, []string{"VM_SMP=2"}) || !slices.Equal(names["bookworm-tape"].env, []string{"VM_SMP=1"}) {
		t.Errorf("VM_SMP: disk %v, tape %v", names["bookworm-disk"].env, names["bookworm-tape"].env)
	}

	// Every regression scenario boots once on bookworm, alone or in its
	// group; the newest kernel runs each of newestBoots once.
	scen, err := regressionScenarios(filepath.Join(root, "deploy/vm/scenarios"), estimates)
	if err != nil {
		t.Fatal(err)
	}
	runs := map[string]int{}
	for _, p := range ps {
		switch p.cmd[0] {
		case "deploy/vm/run":
			for _, n := range p.cmd[4:] {
				runs[p.cmd[3]+" "+n]++
			}
		case "deploy/vm/metrics-test":
			runs["bookworm metrics"]++
		}
	}
	want := map[string]int{}
	for _, sc := range scen {
		want["bookworm "+sc.name] = 1
	}
	for _, g := range newestBoots {
		for _, n := range g {
			want["sid "+n] = 1
		}
	}
	if !maps.Equal(runs, want) {
		t.Errorf("scenario boots: %v, want %v", runs, want)
	}

	// The full guest's regression scenarios, each in a boot of its own;
	// the service check every boot runs, the newest kernel's pass, the
	// two-host guests and the long suites are not among them.
	var full []string
	for _, p := range ps {
		if p.cmd[0] == "deploy/vm/full/run" && p.cmd[2] == "bookworm" && p.name != "two-hosts" {
			full = append(full, p.cmd[5])
		}
	}
	if !slices.Equal(full, []string{"core", "iscsi,ltfs", "tools"}) {
		t.Errorf("full guest boots %v, want core, iscsi,ltfs, tools", full)
	}
	if p := names["full-iscsi+ltfs"]; p == nil || !slices.Contains(p.cmd, "ts1160") {
		t.Errorf("full-iscsi+ltfs: %v", p)
	}

	only, err := selectParts(ps, []string{"full-core", "sid-smoke+attach+encryption"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range only {
		got = append(got, p.name)
	}
	if !slices.Equal(got, []string{"build-bookworm", "build-full", "build-sid", "sid-smoke+attach+encryption", "full-core"}) {
		t.Errorf("-only full-core,sid-smoke+attach+encryption: %v", got)
	}
	if _, err := selectParts(ps, []string{"nope"}); err == nil {
		t.Error("-only nope: no error")
	}
	// A pattern: every part of the newest kernel's minimal guest, and
	// its build; one that matches nothing is an error, as a wrong name is.
	only, err = selectParts(ps, []string{"sid-*"})
	if err != nil {
		t.Fatal(err)
	}
	got = got[:0]
	for _, p := range only {
		got = append(got, p.name)
		if p.name != "build-sid" && !strings.HasPrefix(p.name, "sid-") {
			t.Errorf("-only sid-*: %s", p.name)
		}
	}
	if len(got) < 3 || !slices.Contains(got, "build-sid") || !slices.Contains(got, "sid-smoke+attach+encryption") {
		t.Errorf("-only sid-*: %v", got)
	}
	for _, bad := range []string{"nope-*", "sid-["} {
		if _, err := selectParts(ps, []string{bad}); err == nil {
			t.Errorf("-only %s: no error", bad)
		}
	}
}

// TestPlanNewestFull: the newest kernel gets the full guest's short pass,
// or with -newest-full its real clients instead, never both; no newest
// kernel, no full guest of it.
func TestPlanNewestFull(t *testing.T) {
	root, err := repoRoot()
	if err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		newest string
		full   bool
		want   []string
	}{
		{"sid", false, []string{"build-full-sid", "full-sid-newest"}},
		{"sid", true, []string{"build-full-sid", "full-sid-clients"}},
		{"", false, nil},
	} {
		ps, err := plan(options{slots: 2, suite: "bookworm", newest: c.newest, cuts: 3, newestFull: c.full, root: root})
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, p := range ps {
			if strings.Contains(p.name, "full-sid") {
				got = append(got, p.name)
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("-newest %q -newest-full=%v: %v, want %v", c.newest, c.full, got, c.want)
		}
	}
}

// fake is a part running a shell snippet.
func fake(name, script string, after ...string) *part {
	return &part{name: name, cmd: []string{"sh", "-c", script}, after: after, slots: 1, est: 1, results: true}
}

func runParts(t *testing.T, slots int, ps ...*part) (string, int) {
	t.Helper()
	dir := t.TempDir()
	var out strings.Builder
	s := &scheduler{parts: ps, slots: slots, root: dir, logDir: dir, out: &out, start: time.Now()}
	s.run(context.Background())
	code := s.report()
	return out.String(), code
}

func TestSchedulerVerdicts(t *testing.T) {
	ok := "echo PASS g/a; echo PASS g/b; echo '2 passed, 0 failed'"
	out, code := runParts(t, 2,
		fake("build", "echo building; exit 1"),
		fake("needs-build", ok, "build"),
		fake("good", ok),
		fake("disagrees", "echo PASS g/a; echo '2 passed, 0 failed'"),
		fake("fails", "echo PASS g/a; echo 'FAIL g/b: why'; echo '1 passed, 1 failed'; exit 1"),
		fake("silent", "true"),
	)
	if code != 1 {
		t.Errorf("exit %d", code)
	}
	for _, want := range []string{
		"FAIL suite/build: exit: exit status 1",
		"needs-build                1        -       0s       0s  FAILED: not run: a part it needs failed",
		"good                       1",
		"FAIL suite/disagrees: its closing line \"2 passed, 0 failed\" disagrees with its 1 PASS and 0 FAIL lines",
		"FAIL suite/fails: exit: exit status 1",
		"FAIL suite/silent: no checks reported",
		"6 parts in",
		"\n4 passed, 5 failed\n",
		"longest steps",
		"  fails                  FAIL g/b: why\n",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q:\n%s", want, out)
		}
	}
	if !strings.Contains(out, "==== good (") || !strings.Contains(out, "PASS g/b\n2 passed, 0 failed\n") {
		t.Errorf("a part's output is not printed whole:\n%s", out)
	}
}

func TestSchedulerOrderAndSlots(t *testing.T) {
	// Two slots: a part waits for its build; the two-slot part never
	// shares; no more than two slots are ever busy.
	log := newOrderLog(t)
	rec := func(name string) string { return log.part(name, "0.05") }
	build := fake("build", rec("build"))
	build.est = 5
	long := fake("long", rec("long"), "build")
	long.est = 100
	wide := fake("wide", rec("wide"))
	wide.est, wide.slots = 50, 2
	short := fake("short", rec("short"))
	short.est = 60
	out, code := runParts(t, 2, short, wide, build, long)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	if build.prio != 105 || long.prio != 100 || short.prio != 60 {
		t.Errorf("priorities: build %d long %d short %d", build.prio, long.prio, short.prio)
	}
	lines := log.lines(t)
	if i, j := slices.Index(lines, "end build"), slices.Index(lines, "start long"); i < 0 || j < i {
		t.Errorf("long started before its build ended: %v", lines)
	}
	running := 0
	for _, l := range lines {
		switch {
		case l == "start wide":
			if running != 0 {
				t.Errorf("wide started beside %d parts: %v", running, lines)
			}
			running += 2
		case l == "end wide":
			running -= 2
		case strings.HasPrefix(l, "start"):
			running++
		default:
			running--
		}
		if running > 2 {
			t.Errorf("more than 2 slots busy: %v", lines)
		}
	}
}

// A part waiting for more slots than are free is not passed by a smaller
// part after it in the order: it starts as soon as its slots free up.
func TestSchedulerWideNotPassed(t *testing.T) {
	log := newOrderLog(t)
	rec := func(name string) string { return log.part(name, "0.1") }
	first := fake("first", rec("first"))
	first.est = 100
	wide := fake("wide", rec("wide"))
	wide.est, wide.slots = 90, 2
	small := fake("small", rec("small"))
	small.est = 10
	out, code := runParts(t, 2, small, wide, first)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, out)
	}
	lines := log.lines(t)
	if i, j := slices.Index(lines, "start wide"), slices.Index(lines, "start small"); i < 0 || j < i {
		t.Errorf("small passed wide: %v", lines)
	}
}

// orderLog is the file a test's fake parts write "start NAME" and "end
// NAME" to.
type orderLog string

func newOrderLog(t *testing.T) orderLog { return orderLog(filepath.Join(t.TempDir(), "order")) }

// part is the command of a fake part NAME: it logs its start, sleeps secs,
// logs its end and passes one check.
func (l orderLog) part(name, secs string) string {
	return "echo start " + name + " >>" + string(l) + "; sleep " + secs + "; echo end " + name + " >>" + string(l) +
		"; echo PASS x/" + name + "; echo '1 passed, 0 failed'"
}

// lines is what the parts logged, in order.
func (l orderLog) lines(t *testing.T) []string {
	t.Helper()
	b, err := os.ReadFile(string(l))
	if err != nil {
		t.Fatal(err)
	}
	return strings.Split(strings.TrimSpace(string(b)), "\n")
}

// The ready parts in the order they start: the head of the longest chain
// first, although a longer part alone is ready.
func TestReadyOrder(t *testing.T) {
	build, long, short := fake("build", ""), fake("long", "", "build"), fake("short", "")
	build.est, long.est, short.est = 5, 100, 60
	s := &scheduler{parts: []*part{short, long, build}}
	s.setPriorities()
	var got []string
	for _, p := range s.ready() {
		got = append(got, p.name)
	}
	if !slices.Equal(got, []string{"build", "short"}) {
		t.Errorf("ready: %v", got)
	}
}

// TestStepper: a step ends at each result line, however the output is cut
// into reads, and runs from the previous result line (the part's start
// for the first); other lines end nothing.
func TestStepper(t *testing.T) {
	st := &stepper{part: "p"}
	st.feed([]byte("booting\nPASS g/a\r\nnote x\nFA"), 10*time.Second)
	st.feed([]byte("IL g/b: why\n"), 25*time.Second)
	st.feed([]byte("1 passed, 1 failed\nPASS g/"), 30*time.Second)
	st.feed([]byte("c\n"), 31*time.Second)
	want := []step{
		{"p", "PASS g/a", 10 * time.Second},
		{"p", "FAIL g/b: why", 15 * time.Second},
		{"p", "PASS g/c", 6 * time.Second},
	}
	if !slices.Equal(st.steps, want) {
		t.Fatalf("steps %v, want %v", st.steps, want)
	}
	var b strings.Builder
	printSteps(&b, []*part{{steps: st.steps}, {steps: []step{{"q", "PASS h/x", 12 * time.Second}}}}, 2)
	out := b.String()
	if i, j := strings.Index(out, "FAIL g/b"), strings.Index(out, "PASS h/x"); i < 0 || j < i || strings.Contains(out, "g/a") {
		t.Fatalf("the 2 longest steps, longest first, want g/b then h/x:\n%s", out)
	}
}
