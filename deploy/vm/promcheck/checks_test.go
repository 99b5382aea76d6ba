package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fakeProm is a Prometheus HTTP API with canned replies: /api/v1/query
// answers from queries (by the query text; anything else is a 400 parse
// error, as Prometheus answers a bad expression), /api/v1/rules with
// rules.
type fakeProm struct {
	queries map[string]string // query → the reply's "data" (a vector, a scalar...)
	rules   string            // the reply's "data" for /api/v1/rules
	asked   []string
}

func vector(values ...string) string {
	var s []string
	for i, v := range values {
		s = append(s, fmt.Sprintf(`{"metric":{"device":"d%d"},"value":[1700000000.5,%q]}`, i, v))
	}
	return `{"resultType":"vector","result":[` + strings.Join(s, ",") + `]}`
}

func (f *fakeProm) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Content-Type", "application/json")
	switch r.URL.Path {
	case "/api/v1/query":
		if r.Method != http.MethodPost {
			http.Error(w, "want POST", http.StatusMethodNotAllowed)
			return
		}
		q := r.PostFormValue("query")
		f.asked = append(f.asked, q)
		data, ok := f.queries[q]
		if !ok {
			w.WriteHeader(http.StatusBadRequest)
			msg, _ := json.Marshal(fmt.Sprintf("1:1: parse error: unknown %q", q))
			_, _ = fmt.Fprintf(w, `{"status":"error","errorType":"bad_data","error":%s}`, msg)
			return
		}
		_, _ = fmt.Fprintf(w, `{"status":"success","data":%s}`, data)
	case "/api/v1/rules":
		_, _ = fmt.Fprintf(w, `{"status":"success","data":%s}`, f.rules)
	case "/-/ready":
		_, _ = fmt.Fprint(w, "Prometheus Server is Ready.")
	default:
		http.NotFound(w, r)
	}
}

func newChecker(t *testing.T, f *fakeProm, guest map[string]string) (*checker, *bytes.Buffer) {
	t.Helper()
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	var out bytes.Buffer
	return &checker{api: newAPI(srv.URL), r: &report{w: &out}, guest: guest}, &out
}

func TestExact(t *testing.T) {
	f := &fakeProm{queries: map[string]string{
		`sum(a)`:  vector("100"),
		`b`:       vector("1e+06"),
		`c`:       vector("7"),
		`none`:    vector(),
		`several`: vector("1", "2"),
	}}
	c, out := newChecker(t, f, map[string]string{"a": "100", "b": "1000000", "c": "8", "none": "0", "several": "1", "bad": "1"})
	ctx := context.Background()
	c.exact(ctx, "a-count", "a", `sum(a)`)
	c.exact(ctx, "b-same-number", "b", `b`)
	c.exact(ctx, "c-differs", "c", `c`)
	c.exact(ctx, "no-sample", "none", `none`)
	c.exact(ctx, "two-samples", "several", `several`)
	c.exact(ctx, "not-printed", "missing", `sum(a)`)
	c.exact(ctx, "bad-query", "bad", `bad(`)
	want := `PASS metrics-host/a-count
PASS metrics-host/b-same-number
FAIL metrics-host/c-differs: c = '7', the guest's own scrape says 8
FAIL metrics-host/no-sample: none = '', the guest's own scrape says 0
FAIL metrics-host/two-samples: several = '', the guest's own scrape says 1
FAIL metrics-host/not-printed: the guest printed no missing
FAIL metrics-host/bad-query: query failed: 1:1: parse error: unknown "bad("
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant\n%s", out, want)
	}
	if c.r.pass != 2 || c.r.fail != 5 {
		t.Errorf("counts %d passed, %d failed; want 2, 5", c.r.pass, c.r.fail)
	}
	// The guest's missing figure asks nothing.
	if n := strings.Count(strings.Join(f.asked, "\n"), "sum(a)"); n != 1 {
		t.Errorf("sum(a) asked %d times, want 1", n)
	}
}

func TestBand(t *testing.T) {
	f := &fakeProm{queries: map[string]string{`x - ignoring(le) y`: vector("104"), `low`: vector("99.5"), `nan`: vector("NaN")}}
	c, out := newChecker(t, f, nil)
	ctx := context.Background()
	c.band(ctx, "band", `x - ignoring(le) y`, nRead)
	c.band(ctx, "below", `low`, nRead)
	c.band(ctx, "nan", `nan`, 1)
	c.band(ctx, "empty", `gone`, 1)
	want := `PASS metrics-host/band
  # x - ignoring(le) y = 104
FAIL metrics-host/below: low = '99.5', want >= 100
FAIL metrics-host/nan: nan = 'NaN', want >= 1
FAIL metrics-host/empty: query failed: 1:1: parse error: unknown "gone"
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant\n%s", out, want)
	}
}

// The check tables ask what the shell asked: the selectors of job vscsid
// and the device, the bands as differences of two buckets.
func TestCheckTables(t *testing.T) {
	want := map[string]string{
		"d0-read_10":            `sum(vscsi_scsi_commands_total{job="vscsid",device="d0",command="read_10"})`,
		"t0-write-bucket-16384": `vscsi_scsi_transfer_bytes_bucket{job="vscsid",device="t0",direction="write",le="16384"}`,
		"p0-misaligned-reads":   `vscsi_disk_misaligned_commands_total{job="vscsid",device="p0",direction="read"}`,
		"d0-read-band-64k": `vscsi_scsi_transfer_bytes_bucket{job="vscsid",device="d0",direction="read",le="65536"}` +
			` - ignoring(le) vscsi_scsi_transfer_bytes_bucket{job="vscsid",device="d0",direction="read",le="32768"}`,
	}
	got := map[string]string{}
	for _, x := range exactChecks {
		got[x.name] = x.expr
	}
	for _, x := range bandChecks {
		got[x.name] = x.expr
	}
	if len(got) != 11 {
		t.Errorf("%d checks, want 8 exact and 3 bands", len(got))
	}
	for name, expr := range want {
		if got[name] != expr {
			t.Errorf("%s: %s, want %s", name, got[name], expr)
		}
	}
	// Every exact check's figure is one the guest prints.
	script, err := os.ReadFile("../scenarios/metrics.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, x := range exactChecks {
		if !strings.Contains(string(script), "figure "+x.key+" ") {
			t.Errorf("%s: the metrics scenario prints no figure %s", x.name, x.key)
		}
	}
}

func TestTargetUp(t *testing.T) {
	f := &fakeProm{queries: map[string]string{`up{job="vscsid"}`: vector("0")}}
	c, _ := newChecker(t, f, nil)
	if up, reply := c.targetUp(context.Background()); up || !strings.Contains(reply, `"0"`) {
		t.Errorf("up 0: %v %s", up, reply)
	}
	f.queries[`up{job="vscsid"}`] = vector("1")
	if up, _ := c.targetUp(context.Background()); !up {
		t.Error("up 1: not up")
	}
}

func TestDashboard(t *testing.T) {
	const inst = "127.0.0.1:40000"
	f := &fakeProm{queries: map[string]string{
		`sum(rate(vscsi_scsi_commands_total{job="vscsid", instance="127.0.0.1:40000", device=~".*"}[5m]))`: vector("3"),
		`vscsi_devices{job="vscsid"}   > 0`:                              vector("1", "2"),
		`up{instance="127.0.0.1:40000"}`:                                 vector("1"),
		`increase(vscsi_tape_filemarks_written_total{device=~".*"}[1h])`: vector(),
		`absent(nothing_here)`:                                           `{"resultType":"scalar","result":[1700000000,"1"]}`,
	}}
	c, out := newChecker(t, f, nil)
	c.dashboard(context.Background(), "testdata/dashboard.json", inst)
	want := `PASS metrics-host/dashboard-expr-1
PASS metrics-host/dashboard-expr-2
PASS metrics-host/dashboard-expr-3
PASS metrics-host/dashboard-expr-4
PASS metrics-host/dashboard-expr-5
FAIL metrics-host/dashboard-expr-6: rate(x[1m: 1:1: parse error: unknown "rate(x[1m"
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant\n%s", out, want)
	}
	wantEmpty := []string{`dashboard-expr-4: increase(vscsi_tape_filemarks_written_total{device=~".*"}[1h])`}
	if strings.Join(c.r.empty, "\n") != strings.Join(wantEmpty, "\n") {
		t.Errorf("empty %q, want %q", c.r.empty, wantEmpty)
	}

	out.Reset()
	c.dashboard(context.Background(), "testdata/nothing.json", inst)
	if !strings.HasPrefix(out.String(), "FAIL metrics-host/dashboard-exprs: ") {
		t.Errorf("a missing dashboard: %s", out)
	}
	empty := filepath.Join(t.TempDir(), "empty.json")
	if err := os.WriteFile(empty, []byte(`{"panels": []}`), 0o644); err != nil {
		t.Fatal(err)
	}
	out.Reset()
	c.dashboard(context.Background(), empty, inst)
	if out.String() != "FAIL metrics-host/dashboard-exprs: no expressions found in "+empty+"\n" {
		t.Errorf("no expressions: %s", out)
	}
}

func TestRules(t *testing.T) {
	f := &fakeProm{
		queries: map[string]string{
			`sum without (command) (rate(vscsi_scsi_commands_total[5m]))`: vector("1"),
			`up{job="vscsid"}   == 0`:                                     vector(), // a newline and two spaces: three spaces
		},
		rules: `{"groups":[{"name":"vscsid.rules","rules":[
			{"type":"recording","name":"device:vscsi_scsi_commands:rate5m","health":"ok","query":"sum without (command) (rate(vscsi_scsi_commands_total[5m]))"},
			{"type":"recording","name":"broken","health":"err","lastError":"vector contains metrics with the same labelset","query":"x"}]},
			{"name":"vscsid.alerts","rules":[
			{"type":"alerting","name":"VscsidDown","health":"ok","query":"up{job=\"vscsid\"}\n  == 0"},
			{"type":"alerting","name":"Unknown","health":"unknown","lastError":"","query":"y"},
			{"type":"alerting","name":"Bad","health":"ok","query":"bad("}]}]}`,
	}
	c, out := newChecker(t, f, nil)
	c.rules(context.Background(), "rules.yml")
	want := `PASS metrics-host/rule-device:vscsi_scsi_commands:rate5m
FAIL metrics-host/rule-broken: health 'err': vector contains metrics with the same labelset
PASS metrics-host/rule-VscsidDown
FAIL metrics-host/rule-Unknown: health 'unknown': 
FAIL metrics-host/rule-Bad: bad(: 1:1: parse error: unknown "bad("
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant\n%s", out, want)
	}
	if want := `rule-VscsidDown (alerting): up{job="vscsid"}   == 0`; len(c.r.empty) != 1 || c.r.empty[0] != want {
		t.Errorf("empty %q, want [%q]", c.r.empty, want)
	}

	f.rules = `{"groups":[]}`
	out.Reset()
	c.rules(context.Background(), "rules.yml")
	if out.String() != "FAIL metrics-host/rules-loaded: Prometheus loaded no rules from rules.yml\n" {
		t.Errorf("no rules: %s", out)
	}
}

func TestListEmpty(t *testing.T) {
	var out bytes.Buffer
	r := &report{w: &out}
	r.listEmpty()
	if out.Len() != 0 {
		t.Errorf("nothing empty: %q", out.String())
	}
	r.empty = []string{"rule-A (alerting): a", "dashboard-expr-2: b"}
	r.listEmpty()
	want := `  # 2 expressions evaluate with an empty result (no alert firing, or a series the workload does not create):
  EMPTY rule-A (alerting): a
  EMPTY dashboard-expr-2: b
`
	if out.String() != want {
		t.Errorf("output:\n%s\nwant\n%s", out.String(), want)
	}
}

func TestSameFigure(t *testing.T) {
	for _, tc := range []struct {
		got, want string
		same      bool
	}{
		{"100", "100", true},
		{"1e+06", "1000000", true},
		{"100", "101", false},
		{"", "0", false},
		{"NaN", "NaN", true}, // the same text
		{"x", "y", false},
	} {
		if sameFigure(tc.got, tc.want) != tc.same {
			t.Errorf("sameFigure(%q, %q) = %v", tc.got, tc.want, !tc.same)
		}
	}
}

func TestAnswerResults(t *testing.T) {
	for _, tc := range []struct {
		data string
		n    int
	}{
		{vector(), 0},
		{vector("1", "2"), 2},
		{`{"resultType":"matrix","result":[]}`, 0},
		{`{"resultType":"scalar","result":[1,"0"]}`, 1},
		{`{"resultType":"string","result":[1,"x"]}`, 1},
	} {
		f := &fakeProm{queries: map[string]string{"q": tc.data}}
		c, _ := newChecker(t, f, nil)
		a, err := c.api.query(context.Background(), "q")
		if err != nil {
			t.Fatal(err)
		}
		if a.results() != tc.n {
			t.Errorf("%s: %d results, want %d", tc.data, a.results(), tc.n)
		}
	}
}

// A reply that is not the API's JSON (a proxy's page): the FAIL line
// shows it, at most 300 bytes.
func TestQueryNotJSON(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		http.Error(w, strings.Repeat("bad gateway ", 40), http.StatusBadGateway)
	}))
	defer srv.Close()
	a, err := newAPI(srv.URL).query(context.Background(), "q")
	if err == nil {
		t.Fatal("no error")
	}
	if why := a.why(err); len(why) != 300 || !strings.HasPrefix(why, "bad gateway") {
		t.Errorf("why %q", why)
	}
	srv.Close()
	if _, err := newAPI(srv.URL).query(context.Background(), "q"); err == nil {
		t.Error("a closed server: no error")
	}
}
