package vmhost

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"regexp"
	"strings"
)

// The one result format, written by guest/lib.sh in both guests:
//
//	PASS group/name[ (detail)]
//	FAIL group/name: why
//	group: N passed, N failed      a group's summary
//	N passed, N failed             the closing line
//	VMTEST-VERDICT: PASS|FAIL      a guest's verdict
//
// Counts are the PASS and FAIL lines themselves; a closing line that
// disagrees with them (a lost line, a check counted in a subshell) is a
// failure.
var (
	summaryLine = regexp.MustCompile(`^[0-9]+ passed, [0-9]+ failed$`)
	groupLine   = regexp.MustCompile(`^[a-z0-9_+-]+: [0-9]+ passed, [0-9]+ failed$`)
)

// Results are what a guest's results channel said.
type Results struct {
	Pass, Fail int
	Summary    string   // the last closing line, or ""
	Groups     []string // the groups' summaries
	Verdict    string   // PASS, FAIL or ""
}

// IsResult reports whether a line is a PASS or FAIL line.
func IsResult(line string) bool {
	return strings.HasPrefix(line, "PASS ") || strings.HasPrefix(line, "FAIL ")
}

// ParseResults reads a results channel (carriage returns dropped).
func ParseResults(r io.Reader) (Results, error) {
	var res Results
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		switch {
		case strings.HasPrefix(line, "PASS "):
			res.Pass++
		case strings.HasPrefix(line, "FAIL "):
			res.Fail++
		case summaryLine.MatchString(line):
			res.Summary = line
		case groupLine.MatchString(line):
			res.Groups = append(res.Groups, line)
		default:
			if v, ok := strings.CutPrefix(line, "VMTEST-VERDICT: "); ok {
				res.Verdict = v
			}
		}
	}
	return res, sc.Err()
}

// ParseResultsFile is ParseResults of a file; a missing file is no results.
func ParseResultsFile(name string) (Results, error) {
	f, err := os.Open(name)
	if os.IsNotExist(err) {
		return Results{}, nil
	}
	if err != nil {
		return Results{}, err
	}
	defer func() { _ = f.Close() }() // read-only
	return ParseResults(f)
}

// Exit is how a guest's qemu ended.
type Exit struct {
	Code     int  // qemu's exit status (-1: killed by a signal)
	TimedOut bool // killed at the wall limit
	Limit    int  // that limit, seconds
}

// Problem says what makes a guest's run broken whatever its lines say:
// qemu killed or failed, no verdict, a closing line that disagrees with
// the lines, no checks. "" when none.
func (r Results) Problem(e Exit) string {
	switch {
	case e.TimedOut:
		return fmt.Sprintf("qemu killed after the %ds limit (guest hung?)", e.Limit)
	case r.Verdict == "":
		return fmt.Sprintf("the guest printed no verdict (qemu exit %d): it did not boot, or its test did not run", e.Code)
	case e.Code != 0:
		return fmt.Sprintf("qemu exited with status %d", e.Code)
	case r.Summary != fmt.Sprintf("%d passed, %d failed", r.Pass, r.Fail):
		return fmt.Sprintf("the guest's closing line '%s' disagrees with its %d PASS and %d FAIL lines", r.Summary, r.Pass, r.Fail)
	case r.Pass == 0:
		return "the guest reported no checks"
	}
	return ""
}

// Verdict ends a guest's run: it prints the groups' summaries of
// dir/results.log to out, a "FAIL boot/GUEST: why" line when the run broke
// (with the console's last lines on stderr), and the closing line. It
// returns the counts (the broken boot counted as a failure) and whether
// the guest passed: its verdict PASS, no FAIL line, no problem.
func Verdict(out io.Writer, guest, dir string, e Exit) (pass, fail int, ok bool) {
	StripCR(dir+"/console.log", dir+"/results.log")
	res, err := ParseResultsFile(dir + "/results.log")
	problem := res.Problem(e)
	if err != nil {
		problem = "reading its results: " + err.Error()
	}
	for _, g := range res.Groups {
		_, _ = fmt.Fprintln(out, g)
	}
	pass, fail = res.Pass, res.Fail
	if problem != "" {
		_, _ = fmt.Fprintf(out, "FAIL boot/%s: %s\n", guest, problem)
		fail++
		showConsoleTail(dir, 25)
	}
	_, _ = fmt.Fprintf(out, "%d passed, %d failed\n", pass, fail)
	return pass, fail, problem == "" && fail == 0 && res.Verdict == "PASS"
}

// showConsoleTail prints the last n non-blank lines of dir's console and
// qemu's own output on stderr: why a boot broke.
func showConsoleTail(dir string, n int) {
	Logf("last console lines:")
	b, _ := os.ReadFile(dir + "/console.log")
	var lines []string
	for l := range bytes.Lines(b) {
		s := strings.TrimRight(string(l), "\r\n")
		if strings.TrimSpace(s) != "" {
			lines = append(lines, s)
		}
	}
	if len(lines) == 0 {
		lines = []string{"(the console is empty)"}
	}
	for _, l := range lines[max(0, len(lines)-n):] {
		_, _ = fmt.Fprintf(os.Stderr, "  | %s\n", l)
	}
	if q, _ := os.ReadFile(dir + "/qemu.out"); len(q) > 0 {
		for l := range bytes.Lines(q) {
			_, _ = fmt.Fprintf(os.Stderr, "  qemu: %s", l)
		}
	}
}

// StripCR drops the carriage returns of the serial consoles' lines in
// place, for whoever reads the files later.
func StripCR(files ...string) {
	for _, f := range files {
		b, err := os.ReadFile(f)
		if err != nil || !bytes.Contains(b, []byte("\r\n")) {
			continue
		}
		_ = os.WriteFile(f, bytes.ReplaceAll(b, []byte("\r\n"), []byte("\n")), 0o644)
	}
}
