// Command promcheck is the host side of deploy/vm/metrics-test: vscsid's
// metrics through a real Prometheus server, and the Grafana dashboard's
// expressions as Prometheus evaluates them.
//
//	promcheck vm -repo DIR [-suite S] [-no-build] [-keep]
//	promcheck dashboard-rules DASHBOARD INSTANCE
//
// vm (metrics-test, deploy/vm/vm, runs it after its argument parsing and
// host packages)
// picks three free ports on 127.0.0.1, starts the host's prometheus on one
// (config checked by promtool check config; scrape and rule evaluation
// every second; deploy/prometheus/rules.yml; job vscsid, target the
// forward of the guest's 9544), boots deploy/vm/run --hostfwd ... metrics
// in a session of its own (its output streamed), waits for
// VMTEST-METRICS-READY on the guest's console, and checks (checks.go):
// the target is up; PromQL returns exactly the guest's METRICS-GUEST
// figures and the workload's bands; promtool check metrics is silent on a
// live scrape; every dashboard expression and every loaded rule evaluates
// (EMPTY lines for those with no result, also in host-empty.txt of the run
// directory). Then it connects to the guest's 9545 (the guest finishes),
// counts the guest's PASS and FAIL lines, and prints
// "metrics-host: N passed, N failed" and the total. -keep keeps the
// Prometheus directory. Exit status 0 only when everything passed, 130 on
// SIGINT or SIGTERM (Prometheus and the run stopped).
//
// dashboard-rules writes the dashboard's expressions, Grafana variables
// substituted (dashboard.go, the one home of that substitution) with
// INSTANCE as the scrape target, as a rule file of recording rules for
// promtool check rules (deploy/prometheus/check.sh).
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

const usage = "usage: promcheck vm -repo DIR [-suite S] [-no-build] [-keep] | dashboard-rules DASHBOARD INSTANCE"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 0 {
		fmt.Fprintln(os.Stderr, usage)
		return 2
	}
	switch args[0] {
	case "vm":
		var o options
		fs := flag.NewFlagSet("promcheck vm", flag.ContinueOnError)
		fs.StringVar(&o.repo, "repo", "", "the repository's root")
		fs.StringVar(&o.suite, "suite", "bookworm", "the guest's Debian suite")
		fs.BoolVar(&o.noBuild, "no-build", false, "use the guest already built")
		fs.BoolVar(&o.keep, "keep", false, "keep the Prometheus directory")
		if err := fs.Parse(args[1:]); err != nil || o.repo == "" || fs.NArg() > 0 {
			fmt.Fprintln(os.Stderr, usage)
			return 2
		}
		return metricsTest(o)
	case "dashboard-rules":
		if len(args) != 3 {
			fmt.Fprintln(os.Stderr, usage)
			return 2
		}
		if err := writeDashboardRules(os.Stdout, args[1], args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "promcheck:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, usage)
	return 2
}

func writeDashboardRules(w io.Writer, path, instance string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only
	exprs, err := dashboardExprs(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return dashboardRules(w, exprs, instance)
}

type options struct {
	repo, suite   string
	noBuild, keep bool
}

// logf prints a progress line as vmhost.Logf does.
func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "vm: "+format+"\n", args...)
}

// session owns what metricsTest started, for the cleanup that an
// interrupt may run from another goroutine.
type session struct {
	mu   sync.Mutex
	prom *promServer
	run  *guestRun
	tmp  string
	keep bool
	done bool
}

func (s *session) setProm(p *promServer) { s.mu.Lock(); s.prom = p; s.mu.Unlock() }
func (s *session) setRun(g *guestRun)    { s.mu.Lock(); s.run = g; s.mu.Unlock() }

// cleanup stops Prometheus and the run (if still running) and removes the
// temporary directory unless kept; once.
func (s *session) cleanup() {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.done {
		return
	}
	s.done = true
	if s.prom != nil {
		s.prom.stop()
	}
	if s.run != nil {
		s.run.stop()
	}
	if s.keep {
		logf("kept %s", s.tmp)
	} else {
		_ = os.RemoveAll(s.tmp) // a temporary directory
	}
}

// metricsTest is "promcheck vm"; its exit status.
func metricsTest(o options) int {
	ctx := context.Background()
	vmDir := filepath.Join(o.repo, "deploy/vm")
	rulesFile := filepath.Join(o.repo, "deploy/prometheus/rules.yml")
	dashboard := filepath.Join(o.repo, "deploy/grafana/vscsid.json")
	die := func(err error) int {
		fmt.Fprintln(os.Stderr, "vm: error:", err)
		return 1
	}

	ports, err := freePorts(3)
	if err != nil {
		return die(err)
	}
	target := fmt.Sprintf("127.0.0.1:%d", ports[0])
	portDone := ports[1]
	listen := fmt.Sprintf("127.0.0.1:%d", ports[2])
	tmp, err := os.MkdirTemp("", "vscsid-metrics-test.")
	if err != nil {
		return die(err)
	}
	s := &session{tmp: tmp, keep: o.keep}
	defer s.cleanup()
	sig := make(chan os.Signal, 1)
	signal.Notify(sig, os.Interrupt, unix.SIGTERM)
	go func() {
		<-sig
		s.cleanup()
		os.Exit(130)
	}()

	prom, err := startPrometheus(ctx, tmp, rulesFile, target, listen)
	if err != nil {
		return die(err)
	}
	s.setProm(prom)
	logf("prometheus http://%s scraping %s (dir %s)", listen, target, tmp)

	out := &lockedWriter{w: os.Stdout}
	runDirFile := filepath.Join(tmp, "run-dir")
	args := []string{"--suite", o.suite}
	if o.noBuild {
		args = append(args, "--no-build")
	}
	args = append(args, "--run-dir-file", runDirFile,
		"--hostfwd", fmt.Sprintf("%d:9544", ports[0]), "--hostfwd", fmt.Sprintf("%d:9545", portDone), "metrics")
	runOut := filepath.Join(tmp, "run.out")
	g, err := startRun(vmDir, args, runOut, out)
	if err != nil {
		return die(err)
	}
	s.setRun(g)

	r := &report{w: out}
	// The marker, within the build and boot time plus the scenario's limit.
	runDir, ready := waitReady(g, runDirFile, 1800, 500*time.Millisecond)
	if !ready {
		r.bad("guest-ready", "the guest never printed "+readyMarker)
		return finish(r, g, runOut)
	}
	console, err := os.Open(filepath.Join(runDir, "console.log"))
	if err != nil {
		return die(err)
	}
	guest, err := parseGuest(console)
	_ = console.Close() // read-only
	if err != nil {
		return die(err)
	}
	c := &checker{api: newAPI("http://" + listen), r: r, guest: guest}

	// Three scrape intervals after the marker, and the target up.
	time.Sleep(3 * time.Second)
	up, reply := c.targetUp(ctx)
	for i := 0; !up && i < 30; i++ {
		time.Sleep(time.Second)
		up, reply = c.targetUp(ctx)
	}
	if up {
		r.ok("target-up")
	} else {
		r.bad("target-up", `up{job="vscsid"} is not 1: `+reply)
	}
	// The newest sample must be from after the marker: wait until the
	// series stops changing (the counters are static once the workload
	// ended).
	time.Sleep(2 * time.Second)

	for _, x := range exactChecks {
		c.exact(ctx, x.name, x.key, x.expr)
	}
	for _, x := range bandChecks {
		c.band(ctx, x.name, x.expr, x.min)
	}

	scrapeURL := "http://" + target + "/metrics"
	if scrape, err := get(ctx, scrapeURL); err != nil {
		r.bad("promtool-check-metrics", fmt.Sprintf("GET %s failed: %v", scrapeURL, err))
	} else {
		if ok, why := promtoolCheck(ctx, scrape); ok {
			r.ok("promtool-check-metrics")
		} else {
			r.bad("promtool-check-metrics", why)
		}
		_ = os.WriteFile(filepath.Join(tmp, "scrape.prom"), scrape, 0o644)         // kept with --keep
		_ = os.WriteFile(filepath.Join(runDir, "host-scrape.prom"), scrape, 0o644) // an artefact
	}

	// Rules are evaluated every second: wait until each has run once.
	time.Sleep(2 * time.Second)
	c.dashboard(ctx, dashboard, target)
	c.rules(ctx, rulesFile)
	r.listEmpty()
	var empty strings.Builder
	for _, e := range r.empty {
		empty.WriteString(e + "\n")
	}
	_ = os.WriteFile(filepath.Join(runDir, "host-empty.txt"), []byte(empty.String()), 0o644) // an artefact

	// Release the guest; it checks that the scrapes added no SCSI
	// commands and stops vscsid.
	addr := fmt.Sprintf("127.0.0.1:%d", portDone)
	if conn, err := net.DialTimeout("tcp", addr, 10*time.Second); err != nil {
		r.bad("release-guest", "cannot connect to "+addr)
	} else {
		_ = conn.Close() // the connection is the signal
	}
	return finish(r, g, runOut)
}

// waitReady waits (tries times, every interval, while run runs) until
// run has named its directory and the console there has the ready
// marker.
func waitReady(g *guestRun, runDirFile string, tries int, interval time.Duration) (string, bool) {
	for range tries {
		if b, err := os.ReadFile(runDirFile); err == nil {
			dir := strings.TrimSpace(string(b))
			if console, err := os.ReadFile(filepath.Join(dir, "console.log")); err == nil && dir != "" && hasMarker(console) {
				return dir, true
			}
		}
		if g.exited() {
			break
		}
		time.Sleep(interval)
	}
	return "", false
}

// get is the body of a 2xx reply to GET url.
func get(ctx context.Context, url string) ([]byte, error) {
	c := &http.Client{Timeout: 10 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, url, nil)
	if err != nil {
		return nil, err
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, err
	}
	defer func() { _ = resp.Body.Close() }() // read whole below
	b, err := io.ReadAll(resp.Body)
	if err == nil && resp.StatusCode/100 != 2 {
		err = errors.New(resp.Status)
	}
	return b, err
}

// finish waits for the run, counts its result lines (a run that failed
// with no FAIL line counts one host failure), prints the host's and the
// total counts, and returns the exit status: 0 when nothing failed and
// the guest passed something.
func finish(r *report, g *guestRun, runOut string) int {
	<-g.done // its last lines before ours
	gp, gf := 0, 0
	if f, err := os.Open(runOut); err == nil {
		var res vmhost.Results
		res, err = vmhost.ParseResults(f)
		gp, gf = res.Pass, res.Fail
		_ = f.Close() // read-only
		if err != nil {
			r.bad("guest-run", "reading the run's output: "+err.Error())
		}
	}
	if st := g.status(); st != "" && gf == 0 {
		r.bad("guest-run", "run exited with "+st+" and no FAIL line")
	}
	_, _ = fmt.Fprintf(r.w, "metrics-host: %d passed, %d failed\n", r.pass, r.fail)
	_, _ = fmt.Fprintf(r.w, "%d passed, %d failed\n", r.pass+gp, r.fail+gf)
	if r.fail == 0 && gf == 0 && gp > 0 {
		return 0
	}
	return 1
}
