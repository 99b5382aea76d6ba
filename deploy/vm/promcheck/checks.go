package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"sync"
)

// The host's checks of metrics-test, once the guest has printed its
// figures: PromQL against the guest's own, promtool on a live scrape, the
// dashboard's and the rules' expressions.

// The guest scenario's defaults (N_READ, N_WRITE in scenarios/metrics.sh).
const (
	nRead  = 100
	nWrite = 50
)

// report prints the host's PASS and FAIL lines (group metrics-host) and
// counts them, and gathers the expressions that evaluate empty.
type report struct {
	w          io.Writer // a lockedWriter: the guest's lines go there too
	pass, fail int
	empty      []string
}

func (r *report) ok(name string) {
	_, _ = fmt.Fprintf(r.w, "PASS metrics-host/%s\n", name)
	r.pass++
}

func (r *report) bad(name, why string) {
	_, _ = fmt.Fprintf(r.w, "FAIL metrics-host/%s: %s\n", name, why)
	r.fail++
}

func (r *report) note(format string, args ...any) {
	_, _ = fmt.Fprintf(r.w, "  # "+format+"\n", args...)
}

// listEmpty prints the EMPTY lines (none when nothing was empty).
func (r *report) listEmpty() {
	if len(r.empty) == 0 {
		return
	}
	r.note("%d expressions evaluate with an empty result (no alert firing, or a series the workload does not create):", len(r.empty))
	for _, e := range r.empty {
		_, _ = fmt.Fprintf(r.w, "  EMPTY %s\n", e)
	}
}

// lockedWriter writes whole Write calls one at a time: the report's lines
// and the guest run's, from another goroutine, do not interleave.
type lockedWriter struct {
	mu sync.Mutex
	w  io.Writer
}

func (l *lockedWriter) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Write(p)
}

// checker runs the checks against one Prometheus server.
type checker struct {
	api   *api
	r     *report
	guest map[string]string // METRICS-GUEST key value
}

// sel is the selector of job vscsid's series of device dev with the
// further matchers more: job="vscsid",device="d0",more.
func sel(dev, more string) string {
	s := `job="vscsid",device="` + dev + `"`
	if more != "" {
		s += "," + more
	}
	return s
}

// bucket is a transfer-size histogram bucket of a device.
func bucket(dev, direction, le string) string {
	return `vscsi_scsi_transfer_bytes_bucket{` + sel(dev, `direction="`+direction+`",le="`+le+`"`) + `}`
}

// exactChecks: PromQL must return exactly the guest's own figure (its
// scrape at VMTEST-METRICS-READY; the counters do not move after it).
var exactChecks = []struct{ name, key, expr string }{
	{"d0-read_10", "d0_read_10", `sum(vscsi_scsi_commands_total{` + sel("d0", `command="read_10"`) + `})`},
	{"d0-read-bucket-65536", "d0_read_le65536", bucket("d0", "read", "65536")},
	{"d0-read-bucket-32768", "d0_read_le32768", bucket("d0", "read", "32768")},
	{"t0-write_6", "t0_write_6", `sum(vscsi_scsi_commands_total{` + sel("t0", `command="write_6"`) + `})`},
	{"t0-write-bucket-32768", "t0_write_le32768", bucket("t0", "write", "32768")},
	{"t0-write-bucket-16384", "t0_write_le16384", bucket("t0", "write", "16384")},
	{"p0-read-bucket-512", "p0_read_le512", bucket("p0", "read", "512")},
	{"p0-misaligned-reads", "p0_read_misaligned", `vscsi_disk_misaligned_commands_total{` + sel("p0", `direction="read"`) + `}`},
}

// bandChecks: the workload's band. Every direct 64 KiB read is in (32 KiB,
// 64 KiB], every 32 KiB record in (16 KiB, 32 KiB]; the guest proved the
// deltas are exactly N, here the band holds at least N (the kernel's own
// reads at attach are page-sized and fall below it).
var bandChecks = []struct {
	name, expr string
	min        float64
}{
	{"d0-read-band-64k", bucket("d0", "read", "65536") + " - ignoring(le) " + bucket("d0", "read", "32768"), nRead},
	{"t0-write-band-32k", bucket("t0", "write", "32768") + " - ignoring(le) " + bucket("t0", "write", "16384"), nWrite},
	{"p0-read-512-bytes", bucket("p0", "read", "512"), 1},
}

// sameFigure reports whether a value from the API ("100") is the guest's
// figure ("100"): the same text, or the same number.
func sameFigure(got, want string) bool {
	if got == want {
		return true
	}
	g, err1 := strconv.ParseFloat(got, 64)
	w, err2 := strconv.ParseFloat(want, 64)
	return err1 == nil && err2 == nil && g == w
}

// oneLine is an expression on one line (for a result line).
func oneLine(expr string) string { return strings.ReplaceAll(expr, "\n", " ") }

// targetUp reports whether up{job="vscsid"} is 1, and the reply.
func (c *checker) targetUp(ctx context.Context) (bool, string) {
	v, a, err := c.api.value(ctx, `up{job="vscsid"}`)
	if err != nil {
		return false, a.why(err)
	}
	return v == "1", strings.TrimSpace(a.body)
}

// exact compares the single sample of expr with the guest's figure key.
func (c *checker) exact(ctx context.Context, name, key, expr string) {
	want := c.guest[key]
	if want == "" {
		c.r.bad(name, "the guest printed no "+key)
		return
	}
	got, a, err := c.api.value(ctx, expr)
	if err != nil {
		c.r.bad(name, "query failed: "+a.why(err))
		return
	}
	if sameFigure(got, want) {
		c.r.ok(name)
		return
	}
	c.r.bad(name, fmt.Sprintf("%s = '%s', the guest's own scrape says %s", expr, got, want))
}

// band checks that the single sample of expr is at least least, and notes
// its value.
func (c *checker) band(ctx context.Context, name, expr string, least float64) {
	got, a, err := c.api.value(ctx, expr)
	if err != nil {
		c.r.bad(name, "query failed: "+a.why(err))
		return
	}
	if v, err := strconv.ParseFloat(got, 64); err == nil && v >= least {
		c.r.ok(name)
		c.r.note("%s = %s", expr, got)
		return
	}
	c.r.bad(name, fmt.Sprintf("%s = '%s', want >= %s", expr, got, strconv.FormatFloat(least, 'f', -1, 64)))
}

// promtoolCheck runs promtool check metrics on a scrape: it passes when
// promtool exits 0 and prints nothing. The failure is promtool's first
// ten lines, joined by ";".
func promtoolCheck(ctx context.Context, scrape []byte) (ok bool, why string) {
	cmd := exec.CommandContext(ctx, "promtool", "check", "metrics")
	cmd.Stdin = strings.NewReader(string(scrape))
	out, err := cmd.CombinedOutput()
	if err == nil && len(out) == 0 {
		return true, ""
	}
	lines := strings.Split(strings.TrimRight(string(out), "\n"), "\n")
	if len(lines) > 10 {
		lines = lines[:10]
	}
	why = strings.Join(lines, ";")
	if why == "" {
		why = err.Error()
	}
	return false, why
}

// dashboard evaluates every expression of the dashboard file, substituted
// with instance as the scrape target: dashboard-expr-N, N from 1 in
// document order.
func (c *checker) dashboard(ctx context.Context, path, instance string) {
	f, err := os.Open(path)
	var exprs []string
	if err == nil {
		exprs, err = dashboardExprs(f)
		_ = f.Close() // read-only
	}
	if err != nil {
		c.r.bad("dashboard-exprs", err.Error())
		return
	}
	if len(exprs) == 0 {
		c.r.bad("dashboard-exprs", "no expressions found in "+path)
		return
	}
	for i, e := range exprs {
		name := fmt.Sprintf("dashboard-expr-%d", i+1)
		e = oneLine(substitute(e, instance))
		c.evaluate(ctx, name, e, name+": "+e)
	}
}

// evaluate checks that the expression e evaluates (name); one with no
// result adds empty to the EMPTY lines.
func (c *checker) evaluate(ctx context.Context, name, e, empty string) {
	a, err := c.api.query(ctx, e)
	if err != nil {
		c.r.bad(name, e+": "+a.why(err))
		return
	}
	c.r.ok(name)
	if a.results() == 0 {
		c.r.empty = append(c.r.empty, empty)
	}
}

// rules checks every rule Prometheus loaded: health ok, and its query
// evaluates (rule-NAME; an alert's name repeats when it has several
// rules, as in the rules file).
func (c *checker) rules(ctx context.Context, file string) {
	rs, err := c.api.rules(ctx)
	if err != nil || len(rs) == 0 {
		why := "Prometheus loaded no rules from " + file
		if err != nil {
			why += ": " + err.Error()
		}
		c.r.bad("rules-loaded", why)
	}
	for _, r := range rs {
		name := "rule-" + r.Name
		e := oneLine(r.Query)
		if r.Health != "ok" {
			c.r.bad(name, fmt.Sprintf("health '%s': %s", r.Health, r.LastError))
			continue
		}
		c.evaluate(ctx, name, e, fmt.Sprintf("%s (%s): %s", name, r.Type, e))
	}
}
