package metrics_test

import (
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/vscsid/vscsid/metrics"
)

type family struct {
	typ    string
	labels []string // sorted
}

// exported gathers the full registry over the fixture: every metric name
// the daemon can serve, with its type and label names.
func exported(t *testing.T) map[string]family {
	t.Helper()
	src := fixture()
	reg, err := metrics.NewRegistry(collector(src...))
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	out := make(map[string]family)
	for _, mf := range mfs {
		f := family{typ: strings.ToLower(mf.GetType().String())}
		for _, lp := range mf.GetMetric()[0].GetLabel() {
			f.labels = append(f.labels, lp.GetName())
		}
		slices.Sort(f.labels)
		out[mf.GetName()] = f
	}
	return out
}

var descName = regexp.MustCompile(`fqName: "([^"]+)"`)

// The fixture exercises every metric the collector describes, so the golden
// file, the lint and the promtool check cover all of them.
func TestFixtureCoversEveryMetric(t *testing.T) {
	got := exported(t)
	ch := make(chan *prometheus.Desc, 256)
	collector().Describe(ch)
	close(ch)
	n := 0
	for d := range ch {
		n++
		m := descName.FindStringSubmatch(d.String())
		if m == nil {
			t.Fatalf("cannot parse %s", d)
		}
		if _, ok := got[m[1]]; !ok {
			t.Errorf("%s is described but the fixture does not produce it", m[1])
		}
	}
	if n < 50 {
		t.Errorf("only %d descriptors", n)
	}
}

var readmeRow = regexp.MustCompile("^\\| `([a-z_:]+)` \\| (counter|gauge|histogram) \\| ([^|]*) \\|")

// metrics/README.md documents exactly the vscsi_ metrics the registry
// serves, with their types and labels.
func TestREADME(t *testing.T) {
	b, err := os.ReadFile("README.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := make(map[string]family)
	for line := range strings.SplitSeq(string(b), "\n") {
		m := readmeRow.FindStringSubmatch(line)
		if m == nil {
			continue
		}
		var labels []string
		for l := range strings.SplitSeq(m[3], ",") {
			if l = strings.Trim(strings.TrimSpace(l), "`"); l != "" {
				labels = append(labels, l)
			}
		}
		slices.Sort(labels)
		doc[m[1]] = family{typ: m[2], labels: labels}
	}
	got := exported(t)
	for name, f := range got {
		if !strings.HasPrefix(name, "vscsi_") {
			continue
		}
		d, ok := doc[name]
		switch {
		case !ok:
			t.Errorf("%s is not documented in README.md", name)
		case d.typ != f.typ:
			t.Errorf("%s: README says %s, exporter serves %s", name, d.typ, f.typ)
		case !slices.Equal(d.labels, f.labels):
			t.Errorf("%s: README labels %v, exporter serves %v", name, d.labels, f.labels)
		}
	}
	for name := range doc {
		if _, ok := got[name]; !ok {
			t.Errorf("README.md documents %s, which is not exported", name)
		}
	}
}

// vscsi_ names used by the alerting rules, their tests and the Grafana
// dashboard are exported (so a rename cannot silently break an alert).
// Recording rule names (level:metric:operation) are not metric names.
func TestDeployFilesUseExportedMetrics(t *testing.T) {
	got := exported(t)
	known := func(name string) bool {
		if _, ok := got[name]; ok {
			return true
		}
		for _, suffix := range []string{"_bucket", "_sum", "_count"} {
			if base, ok := strings.CutSuffix(name, suffix); ok && got[base].typ == "histogram" {
				return true
			}
		}
		return false
	}
	ref := regexp.MustCompile(`(?:^|[^:\w])(vscsi_\w+)`)
	files := []string{
		"../deploy/prometheus/rules.yml",
		"../deploy/prometheus/rules.test.yml",
		"../deploy/grafana/vscsid.json",
		"README.md",
		"../docs/metrics.md",
		"../docs/performance.md",
		"../docs/faults.md",
	}
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		used := make(map[string]bool)
		for _, m := range ref.FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
		if len(used) == 0 {
			t.Errorf("%s uses no vscsi_ metric", f)
		}
		for _, name := range slices.Sorted(maps.Keys(used)) {
			if !known(name) {
				t.Errorf("%s uses %s, which vscsid does not export", filepath.Base(f), name)
			}
		}
	}
}

// The example web config works with the exporter-toolkit version vscsid is
// built with (promtool may parse it with another).
func TestWebConfigExample(t *testing.T) {
	addr := freeAddr(t)
	stop, _ := serve(t, "--web.listen-address", addr, "--web.config.file", "../deploy/prometheus/web-config.example.yml")
	defer func() { _ = stop() }()
	if code, _ := get(t, "http://"+addr+"/metrics", "", ""); code != 401 {
		t.Errorf("without credentials: %d, want 401", code)
	}
	if code, _ := get(t, "http://"+addr+"/metrics", "prometheus", "change-me-example-only"); code != 200 {
		t.Errorf("with the example's credentials: %d, want 200", code)
	}
}
