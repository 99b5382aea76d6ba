package main

import (
	"bufio"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"regexp"
	"strings"
)

// goTest runs a test binary built with go test -c (kernel-facing tests,
// which skip themselves outside a disposable VM unless
// VSCSID_KERNEL_TESTS=1) with that variable set and -test.v, copies its
// output to stderr (the console), and prints one line per top-level test
// for the scenario to count:
//
//	PASS Name (0.12s)
//	FAIL Name: the test's last message
//	SKIP Name: its reason
//
// A binary that fails without naming a failed test (a panic, a bad flag)
// prints "FAIL binary: exit status N"; so does one that ran no test.
func goTest(args []string, w io.Writer) error {
	if len(args) < 1 {
		return usageError(usage)
	}
	cmd := exec.Command(args[0], append([]string{"-test.v", "-test.count=1"}, args[1:]...)...)
	cmd.Env = append(os.Environ(), "VSCSID_KERNEL_TESTS=1")
	cmd.Stderr = os.Stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return err
	}
	results, failed := scanTestOutput(out, os.Stderr, w)
	err = cmd.Wait()
	name := args[0][strings.LastIndexByte(args[0], '/')+1:]
	switch {
	case err != nil && !failed:
		if _, ok := errors.AsType[*exec.ExitError](err); !ok {
			return err
		}
		_, werr := fmt.Fprintf(w, "FAIL %s: %v without a failed test (see the console)\n", name, err)
		return werr
	case err == nil && results == 0:
		_, werr := fmt.Fprintf(w, "FAIL %s: ran no test\n", name)
		return werr
	}
	return nil
}

var testResult = regexp.MustCompile(`^--- (PASS|FAIL|SKIP): (\S+) \(([0-9.]+s)\)$`)

// scanTestOutput copies go test -v output to console and writes a line
// per top-level result (subtests, indented, belong to their parent).
func scanTestOutput(r io.Reader, console, w io.Writer) (results int, failed bool) {
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	last := "" // the last message a test logged (indented lines)
	for sc.Scan() {
		line := sc.Text()
		_, _ = fmt.Fprintln(console, line)
		m := testResult.FindStringSubmatch(line)
		if m == nil {
			t := strings.TrimSpace(line)
			if strings.HasPrefix(line, "    ") && t != "" && !strings.HasPrefix(t, "--- ") && !strings.HasPrefix(t, "=== ") {
				last = t
			}
			continue
		}
		results++
		switch m[1] {
		case "PASS":
			_, _ = fmt.Fprintf(w, "PASS %s (%s)\n", m[2], m[3])
		case "FAIL":
			failed = true
			_, _ = fmt.Fprintf(w, "FAIL %s: %s\n", m[2], last)
		case "SKIP":
			_, _ = fmt.Fprintf(w, "SKIP %s: %s\n", m[2], last)
		}
		last = ""
	}
	return results, failed
}
