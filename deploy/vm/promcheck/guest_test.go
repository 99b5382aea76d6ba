package main

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

// A console as the metrics scenario writes it (carriage returns included).
const console = "[    2.301] vmtest: scenario metrics\r\n" +
	"  # d0 is /dev/sda, p0 is /dev/sdb, t0 is /dev/nst0\r\n" +
	"METRICS-GUEST p1_tail_read_commands 1\r\n" +
	"PASS metrics/d0-read_10-delta\r\n" +
	"METRICS-GUEST d0_read_10 117\r\n" +
	"METRICS-GUEST d0_read_le65536   100 \r\n" +
	"METRICS-GUEST t0_write_6 50\r\n" +
	"METRICS-GUEST t0_write_6 51\r\n" +
	"METRICS-GUEST\r\n" +
	" METRICS-GUEST indented 1\r\n" +
	"VMTEST-METRICS-READY\r\n"

func TestParseGuest(t *testing.T) {
	got, err := parseGuest(strings.NewReader(console))
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		"p1_tail_read_commands": "1",
		"d0_read_10":            "117",
		"d0_read_le65536":       "100",
		"t0_write_6":            "51", // the later line
	}
	if len(got) != len(want) {
		t.Errorf("parseGuest: %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
}

func TestHasMarker(t *testing.T) {
	if !hasMarker([]byte(console)) {
		t.Error("the marker at the start of a line: not found")
	}
	for _, c := range []string{"", "booting\n", "echo VMTEST-METRICS-READY\n", "VMTEST-METRICS\n"} {
		if hasMarker([]byte(c)) {
			t.Errorf("%q: found", c)
		}
	}
}

func TestCountResults(t *testing.T) {
	out := "vm: booting bookworm guest\nPASS metrics/a\nPASS metrics/b (1 s)\nFAIL metrics/c: why\n" +
		"metrics: 2 passed, 1 failed\n  PASS indented\nPASSED\n2 passed, 1 failed\n"
	res, err := vmhost.ParseResults(strings.NewReader(out))
	p, f := res.Pass, res.Fail
	if err != nil || p != 2 || f != 1 {
		t.Errorf("ParseResults: %d, %d, %v; want 2, 1", p, f, err)
	}
}

// fakeRun writes a deploy/vm/run that prints its arguments and out (the
// last line without a newline) and exits with status rc.
func fakeRun(t *testing.T, out string, rc string) string {
	t.Helper()
	dir := t.TempDir()
	script := "#!/bin/sh\necho \"vm: run $*\" >&2\nprintf '%s' '" + out + "'\nexit " + rc + "\n"
	if err := os.WriteFile(filepath.Join(dir, "run"), []byte(script), 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

func TestRunAndFinish(t *testing.T) {
	for _, tc := range []struct {
		name, out, rc string
		want          string
		status        int
	}{
		{"passed", "PASS metrics/a\nPASS metrics/b\n2 passed, 0 failed\n", "0",
			"metrics-host: 1 passed, 0 failed\n3 passed, 0 failed\n", 0},
		{"guest failed", "PASS metrics/a\nFAIL metrics/b: why\n1 passed, 1 failed", "1",
			"metrics-host: 1 passed, 0 failed\n2 passed, 1 failed\n", 1},
		{"run failed, no FAIL line", "PASS metrics/a\n", "3",
			"FAIL metrics-host/guest-run: run exited with status 3 and no FAIL line\nmetrics-host: 1 passed, 1 failed\n2 passed, 1 failed\n", 1},
		{"no guest check", "", "0",
			"metrics-host: 1 passed, 0 failed\n1 passed, 0 failed\n", 1},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var buf bytes.Buffer
			w := &lockedWriter{w: &buf}
			runOut := filepath.Join(t.TempDir(), "run.out")
			g, err := startRun(fakeRun(t, tc.out, tc.rc), []string{"--suite", "bookworm", "metrics"}, runOut, w)
			if err != nil {
				t.Fatal(err)
			}
			<-g.done // the run's lines first, for a fixed order
			r := &report{w: w}
			r.ok("target-up")
			status := finish(r, g, runOut)
			out := tc.out
			if out != "" && !strings.HasSuffix(out, "\n") {
				out += "\n"
			}
			want := "vm: run --suite bookworm metrics\n" + out + "PASS metrics-host/target-up\n" + tc.want
			if buf.String() != want {
				t.Errorf("output:\n%s\nwant\n%s", buf.String(), want)
			}
			if status != tc.status {
				t.Errorf("status %d, want %d", status, tc.status)
			}
			if b, _ := os.ReadFile(runOut); !strings.Contains(string(b), tc.out) {
				t.Errorf("run.out %q lacks %q", b, tc.out)
			}
		})
	}
}

func TestWaitReady(t *testing.T) {
	dir := t.TempDir()
	runDir := filepath.Join(dir, "runs", "1")
	if err := os.MkdirAll(runDir, 0o755); err != nil {
		t.Fatal(err)
	}
	runDirFile := filepath.Join(dir, "run-dir")
	g, err := startRun(fakeRun(t, "", "0"), nil, filepath.Join(dir, "run.out"), &lockedWriter{w: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	<-g.done
	// The run has ended and named no directory.
	if _, ok := waitReady(g, runDirFile, 100, time.Millisecond); ok {
		t.Error("ready with no run directory")
	}
	if err := os.WriteFile(runDirFile, []byte(runDir+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(runDir, "console.log"), []byte("booting\r\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, ok := waitReady(g, runDirFile, 100, time.Millisecond); ok {
		t.Error("ready with no marker")
	}
	if err := os.WriteFile(filepath.Join(runDir, "console.log"), []byte(console), 0o644); err != nil {
		t.Fatal(err)
	}
	if got, ok := waitReady(g, runDirFile, 1, time.Millisecond); !ok || got != runDir {
		t.Errorf("waitReady = %q, %v; want %q", got, ok, runDir)
	}
}

func TestLineTee(t *testing.T) {
	var out bytes.Buffer
	f, err := os.Create(filepath.Join(t.TempDir(), "out"))
	if err != nil {
		t.Fatal(err)
	}
	tee := &lineTee{file: f, w: &out}
	for _, p := range []string{"PASS a", "/b\nPA", "SS c\n", "last"} {
		if _, err := tee.Write([]byte(p)); err != nil {
			t.Fatal(err)
		}
		if strings.Contains(out.String(), "PA") && !strings.HasSuffix(out.String(), "\n") {
			t.Fatalf("a partial line on the output: %q", out.String())
		}
	}
	tee.close()
	if out.String() != "PASS a/b\nPASS c\nlast\n" {
		t.Errorf("output %q", out.String())
	}
	if b, _ := os.ReadFile(f.Name()); string(b) != "PASS a/b\nPASS c\nlast" {
		t.Errorf("file %q", b)
	}
}

func TestPromConfig(t *testing.T) {
	got := promConfig("/src/deploy/prometheus/rules.yml", "127.0.0.1:40001")
	want := `global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - "/src/deploy/prometheus/rules.yml"
scrape_configs:
  - job_name: vscsid
    static_configs:
      - targets: ["127.0.0.1:40001"]
`
	if got != want {
		t.Errorf("promConfig:\n%s\nwant\n%s", got, want)
	}
}

// promtool's verdict: silent and status 0 passes; otherwise its first ten
// lines are the reason.
func TestPromtoolCheck(t *testing.T) {
	bin := t.TempDir()
	t.Setenv("PATH", bin+string(os.PathListSeparator)+os.Getenv("PATH"))
	fake := func(script string) {
		if err := os.WriteFile(filepath.Join(bin, "promtool"), []byte("#!/bin/sh\n"+script), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	ctx := context.Background()
	fake("[ \"$*\" = 'check metrics' ] && grep -q '^x 1$'\n")
	if ok, why := promtoolCheck(ctx, []byte("# TYPE x gauge\nx 1\n")); !ok {
		t.Errorf("a clean scrape: %s", why)
	}
	fake("for i in 1 2 3 4 5 6 7 8 9 10 11 12; do echo \"x$i problem\"; done; exit 3\n")
	if ok, why := promtoolCheck(ctx, nil); ok || why != "x1 problem;x2 problem;x3 problem;x4 problem;x5 problem;x6 problem;x7 problem;x8 problem;x9 problem;x10 problem" {
		t.Errorf("problems: %v %q", ok, why)
	}
	fake("echo 'x lint: counter metrics should have \"_total\" suffix'\n") // status 0, not silent
	if ok, why := promtoolCheck(ctx, nil); ok || !strings.Contains(why, "_total") {
		t.Errorf("a finding with status 0: %v %q", ok, why)
	}
	fake("exit 1\n")
	if ok, why := promtoolCheck(ctx, nil); ok || why != "exit status 1" {
		t.Errorf("silent failure: %v %q", ok, why)
	}
}

func TestFreePorts(t *testing.T) {
	ps, err := freePorts(3)
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 3 || ps[0] == ps[1] || ps[1] == ps[2] || ps[0] == ps[2] {
		t.Errorf("ports %v", ps)
	}
}
