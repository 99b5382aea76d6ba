package vmhost

import (
	"bytes"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestParseResults(t *testing.T) {
	in := "boot noise\r\nPASS a/one\r\nPASS a/two (1 s)\nFAIL b/three: why\n" +
		"a: 2 passed, 0 failed\nb: 0 passed, 1 failed\n2 passed, 1 failed\nVMTEST-VERDICT: FAIL\r\n"
	r, err := ParseResults(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if r.Pass != 2 || r.Fail != 1 || r.Summary != "2 passed, 1 failed" || r.Verdict != "FAIL" ||
		strings.Join(r.Groups, ";") != "a: 2 passed, 0 failed;b: 0 passed, 1 failed" {
		t.Errorf("ParseResults = %+v", r)
	}
}

func TestProblem(t *testing.T) {
	good := Results{Pass: 3, Summary: "3 passed, 0 failed", Verdict: "PASS"}
	for _, c := range []struct {
		r    Results
		e    Exit
		want string // a part of the problem, "" for none
	}{
		{good, Exit{}, ""},
		{good, Exit{TimedOut: true, Limit: 60, Code: -1}, "after the 60s limit"},
		{Results{Pass: 3}, Exit{}, "no verdict"},
		{good, Exit{Code: 1}, "status 1"},
		{Results{Pass: 4, Summary: "3 passed, 0 failed", Verdict: "PASS"}, Exit{}, "disagrees with its 4 PASS"},
		{Results{Summary: "0 passed, 0 failed", Verdict: "PASS"}, Exit{}, "no checks"},
	} {
		got := c.r.Problem(c.e)
		if (c.want == "") != (got == "") || !strings.Contains(got, c.want) {
			t.Errorf("Problem(%+v, %+v) = %q, want one with %q", c.r, c.e, got, c.want)
		}
	}
}

func TestVerdict(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("console.log", "booting\r\n")
	write("results.log", "PASS g/a\r\ng: 1 passed, 0 failed\r\n1 passed, 0 failed\r\nVMTEST-VERDICT: PASS\r\n")
	var out bytes.Buffer
	if p, f, ok := Verdict(&out, "x", dir, Exit{}); p != 1 || f != 0 || !ok {
		t.Errorf("passing guest: %d, %d, %v\n%s", p, f, ok, out.String())
	}
	if want := "g: 1 passed, 0 failed\n1 passed, 0 failed\n"; out.String() != want {
		t.Errorf("printed %q, want %q", out.String(), want)
	}
	if b, _ := os.ReadFile(filepath.Join(dir, "results.log")); bytes.ContainsRune(b, '\r') {
		t.Errorf("results.log keeps its carriage returns")
	}
	out.Reset()
	// The same lines from a guest qemu did not end well: a FAIL of its own.
	if p, f, ok := Verdict(&out, "x", dir, Exit{Code: 1}); p != 1 || f != 1 || ok {
		t.Errorf("qemu exit 1: %d, %d, %v", p, f, ok)
	}
	if !strings.Contains(out.String(), "FAIL boot/x: qemu exited with status 1\n") || !strings.HasSuffix(out.String(), "1 passed, 1 failed\n") {
		t.Errorf("qemu exit 1 printed %q", out.String())
	}
	// A FAIL line with the verdict PASS (a guest that lied) is a failure.
	write("results.log", "PASS g/a\nFAIL g/b: no\n1 passed, 1 failed\nVMTEST-VERDICT: PASS\n")
	if _, _, ok := Verdict(&out, "x", dir, Exit{}); ok {
		t.Errorf("a FAIL line passed")
	}
}

// TestScenarioMeta reads every scenario's header as the shell's sed did:
// the first "# vm-KEY:" line of each key.
func TestScenarioMeta(t *testing.T) {
	for _, dir := range []string{"../../scenarios", "../../full/scenarios"} {
		names, err := ScenarioNames(dir)
		if err != nil || len(names) == 0 {
			t.Fatalf("%s: %v, %d scenarios", dir, err, len(names))
		}
		for _, n := range names {
			f := filepath.Join(dir, n+".sh")
			meta, err := ScenarioMeta(f)
			if err != nil {
				t.Fatal(err)
			}
			b, _ := os.ReadFile(f)
			seen := map[string]bool{}
			for _, l := range strings.Split(string(b), "\n") {
				rest, ok := strings.CutPrefix(l, "# vm-")
				k, v, ok2 := strings.Cut(rest, ":")
				if !ok || !ok2 || seen[k] {
					continue
				}
				seen[k] = true
				if meta[k] != strings.TrimSpace(v) {
					t.Errorf("%s: vm-%s = %q, the file says %q (a header line after the header?)", f, k, meta[k], strings.TrimSpace(v))
				}
			}
		}
	}
	if _, err := ScenarioFile("../../scenarios", "../run"); err == nil {
		t.Errorf("ScenarioFile took a path out of the directory")
	}
	if _, err := ScenarioFile("../../scenarios", "nosuch"); err == nil || !strings.Contains(err.Error(), "smoke") {
		t.Errorf("ScenarioFile(nosuch) = %v, want the list of scenarios", err)
	}
}

// TestFollow copies only whole result lines, as they come, and the last
// unterminated one when the guest is done.
func TestFollow(t *testing.T) {
	file := filepath.Join(t.TempDir(), "results.log")
	f, err := os.Create(file)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	done := make(chan struct{})
	r, w, _ := os.Pipe()
	finished := make(chan struct{})
	go func() {
		Follow(file, w, IsResult, done)
		_ = w.Close()
		close(finished)
	}()
	_, _ = f.WriteString("noise\r\nPASS a/b\r\nPASS a/")
	got := make([]byte, 100)
	n, _ := r.Read(got) // the whole line only, once it is there
	if string(got[:n]) != "PASS a/b\n" {
		t.Errorf("first read %q, want the first line alone", got[:n])
	}
	_, _ = f.WriteString("c\nFAIL x/y: z")
	close(done)
	<-finished
	rest, _ := readAll(r)
	if rest != "PASS a/c\nFAIL x/y: z\n" {
		t.Errorf("then %q", rest)
	}
}

func readAll(r *os.File) (string, error) {
	var b bytes.Buffer
	_, err := b.ReadFrom(r)
	return b.String(), err
}

func TestListeningTCP(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	if !ListeningTCP(port) {
		t.Errorf("port %d listens, ListeningTCP says no", port)
	}
	_ = l.Close()
	if ListeningTCP(port) {
		t.Errorf("port %d closed, ListeningTCP says it listens", port)
	}
}

func TestRunDirs(t *testing.T) {
	runs := t.TempDir()
	var dirs []string
	for _, ts := range []string{"20260101-000001", "20260101-000003", "20260101-000002"} {
		d, err := NewRunDir(runs, ts+"-")
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, d)
		if l, _ := os.Readlink(filepath.Join(runs, "latest")); l != d {
			t.Errorf("latest -> %q, want %q", l, d)
		}
	}
	PruneRuns(runs, 2)
	if _, err := os.Stat(dirs[0]); err == nil {
		t.Errorf("the oldest run stays")
	}
	for _, d := range dirs[1:] {
		if _, err := os.Stat(d); err != nil {
			t.Errorf("a newer run went: %v", err)
		}
	}
	if _, err := os.Lstat(filepath.Join(runs, "latest")); err != nil {
		t.Errorf("latest went: %v", err)
	}
}

// TestWriteCommand: qemu.cmd, given to a shell, is the same argv.
func TestWriteCommand(t *testing.T) {
	dir := t.TempDir()
	argv := []string{"printf", "[%s]", "a b", "it's", "x=1,y", "$HOME", ""}
	if err := WriteCommand(dir, argv); err != nil {
		t.Fatal(err)
	}
	out, err := exec.Command("sh", filepath.Join(dir, "qemu.cmd")).Output()
	if err != nil {
		t.Fatal(err)
	}
	if want := "[a b][it's][x=1,y][$HOME][]"; string(out) != want {
		t.Errorf("qemu.cmd ran as %q, want %q", out, want)
	}
}

// TestGuestLimit: a guest past its limit is stopped and says so.
func TestGuestLimit(t *testing.T) {
	dir := t.TempDir()
	g, err := StartGuest(dir, []string{"sleep", "30"}, 1)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-g.Done():
	case <-time.After(20 * time.Second):
		t.Fatal("the guest outlived its limit by 19 s")
	}
	if e := g.Wait(); !e.TimedOut || e.Limit != 1 {
		t.Errorf("Exit = %+v, want timed out at 1 s", e)
	}
}
