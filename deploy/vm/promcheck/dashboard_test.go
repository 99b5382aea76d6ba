package main

import (
	"bytes"
	"encoding/json"
	"os"
	"slices"
	"strings"
	"testing"
)

func TestSubstitute(t *testing.T) {
	for _, tc := range []struct{ in, want string }{
		{`rate(x[$__rate_interval])`, `rate(x[5m])`},
		{`rate(x[${__rate_interval}])`, `rate(x[5m])`},
		{`rate(x[$__interval])`, `rate(x[1m])`},
		{`increase(x[$__range])`, `increase(x[1h])`},
		{`x{job="$job"}`, `x{job="vscsid"}`},
		{`x{job="${job}"}`, `x{job="vscsid"}`},
		{`x{instance="$instance"}`, `x{instance="127.0.0.1:40000"}`},
		{`x{instance="${instance}"}`, `x{instance="127.0.0.1:40000"}`},
		{`x{device=~"$device"}`, `x{device=~".*"}`},
		{`x{device=~"${device}"}`, `x{device=~".*"}`},
		{`x{device=~"${device:regex}"}`, `x{device=~".*"}`},
		// Not a variable of the list: left for check.sh's "$" check.
		{`x{pool="$pool"}`, `x{pool="$pool"}`},
		// No "$x" expansion in the values (a literal replacement).
		{`$job $job`, `vscsid vscsid`},
	} {
		if got := substitute(tc.in, "127.0.0.1:40000"); got != tc.want {
			t.Errorf("substitute(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

// The fixture's expressions in jq's `.. | objects | select(has("expr")) |
// .expr` order: panel 2's own expr (after its nested panels in the file)
// before the nested panel's.
var fixtureExprs = []string{
	`sum(rate(vscsi_scsi_commands_total{job="$job", instance="$instance", device=~"$device"}[$__rate_interval]))`,
	"vscsi_devices{job=\"${job}\"}\n  > 0",
	`up{instance="${instance}"}`,
	`increase(vscsi_tape_filemarks_written_total{device=~"${device:regex}"}[$__range])`,
	`absent(nothing_here)`,
	`rate(x[$__interval`,
}

func TestDashboardExprs(t *testing.T) {
	f, err := os.Open("testdata/dashboard.json")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	got, err := dashboardExprs(f)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(got, fixtureExprs) {
		t.Errorf("dashboardExprs:\n%q\nwant\n%q", got, fixtureExprs)
	}
}

func TestDashboardExprsErrors(t *testing.T) {
	for _, in := range []string{
		`{"panels": [{"expr": 1}]}`, // jq's gsub refuses a number too
		`{"panels": [`,
		`{} {}`,
	} {
		if got, err := dashboardExprs(strings.NewReader(in)); err == nil {
			t.Errorf("dashboardExprs(%s) = %q, want an error", in, got)
		}
	}
}

// The project's dashboard: expressions found, none left with a variable
// after the substitution (check.sh fails on a "$" left over too).
func TestProjectDashboard(t *testing.T) {
	f, err := os.Open("../../grafana/vscsid.json")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	exprs, err := dashboardExprs(f)
	if err != nil {
		t.Fatal(err)
	}
	if len(exprs) == 0 {
		t.Fatal("no expressions in the dashboard")
	}
	for i, e := range exprs {
		if s := substitute(e, "127.0.0.1:9544"); strings.Contains(s, "$") {
			t.Errorf("expression %d keeps a variable: %s", i+1, s)
		}
	}
}

func TestDashboardRules(t *testing.T) {
	var b bytes.Buffer
	if err := dashboardRules(&b, fixtureExprs[:2], "127.0.0.1:9544"); err != nil {
		t.Fatal(err)
	}
	want := `{
  "groups": [
    {
      "name": "grafana-dashboard",
      "rules": [
        {
          "record": "dashboard:expr_0",
          "expr": "sum(rate(vscsi_scsi_commands_total{job=\"vscsid\", instance=\"127.0.0.1:9544\", device=~\".*\"}[5m]))"
        },
        {
          "record": "dashboard:expr_1",
          "expr": "vscsi_devices{job=\"vscsid\"}\n  > 0"
        }
      ]
    }
  ]
}
`
	if b.String() != want {
		t.Errorf("dashboardRules:\n%s\nwant\n%s", b.String(), want)
	}
	// No expression: still a valid rule file, with an empty list (check.sh
	// reports "no PromQL expressions").
	b.Reset()
	if err := dashboardRules(&b, nil, "x"); err != nil {
		t.Fatal(err)
	}
	var f struct {
		Groups []struct {
			Rules []any `json:"rules"`
		} `json:"groups"`
	}
	if err := json.Unmarshal(b.Bytes(), &f); err != nil || len(f.Groups) != 1 || f.Groups[0].Rules == nil {
		t.Errorf("empty dashboard: %s (%v)", b.String(), err)
	}
}
