// Command guestcheck is the test guests' one program for their checks
// over structured data, where shell and awk would match text: it runs
// inside both guests (deploy/vm/run packs it with the scenarios as
// /vmtest/guestcheck, deploy/vm/full/build installs it as
// /usr/local/bin/guestcheck) and prints values that the scenario compares
// with the check library's expect_eq, or that its notes and raw results
// carry. The scenarios' shell runs the tools; guestcheck reads what they
// leave.
//
//	guestcheck prom-value FILE SELECTOR...
//	guestcheck prom-by FILE SELECTOR LABEL
//	guestcheck prom-delta BEFORE AFTER SELECTOR
//	guestcheck command-counts BEFORE AFTER [FIO_JSON] <SPEC
//	guestcheck go-test BINARY [ARGS]
//	guestcheck trace-seq FILE
//	guestcheck trace-values FILE COMMAND FIELD
//	guestcheck trace-overlap FILE [COMMAND]
//	guestcheck procstat PID [KEY...]
//	guestcheck fds PID [SUFFIX]
//	guestcheck http-get [-timeout D] URL [FILE [URL FILE]...]
//	guestcheck column-max FILE COLUMN...
//	guestcheck memstats FILE
//
// FILE, BEFORE and AFTER are scrapes of vscsid's /metrics (the Prometheus
// text exposition format; "-" reads one from stdin). SELECTOR is a PromQL
// series selector with equality matchers only, as the host's metrics-test
// queries Prometheus: vscsi_scsi_commands_total{device="d0",command="read_10"}.
// prom-value prints the sum of the samples each selector matches, on one
// line; prom-by prints "VALUE SUM" per value of LABEL among them (sorted,
// sums of 0 left out); prom-delta prints the sum in AFTER minus that sum
// in BEFORE. A series absent from a scrape
// counts 0, but the metric must have a series in the scrape (client_golang
// writes no metric without one), so that a misspelt name is an error, not
// a 0. Scrapes are read with expfmt (deploy/vm/internal/prom). Sums are
// printed as integers when they are whole.
//
// trace-seq and trace-values read a `vscsictl trace --json` capture, every
// line of which must parse as a trace event: trace-seq prints the command
// names in order, runs as NAME*COUNT (write_6*20 write_filemarks_6);
// trace-values prints the distinct values of FIELD (a JSON key, dotted for
// nested ones: extent.count) among COMMAND's events, sorted;
// trace-overlap the most commands (COMMAND's only, when given) in service
// at once, by each one's completion time and service time.
//
// command-counts checks that every command a workload's tools issued to
// a device is in vscsi_scsi_commands_total between two scrapes; SPEC has
// a line "DEVICE WANT COMMAND[,COMMAND...]" per device, WANT a number or
// "fio" (the I/Os of FIO_JSON's job named DEVICE); see counts.go.
//
// procstat prints a process's counters from /proc (proc.go): ticks,
// sys_ticks (/proc/PID/stat utime+stime, stime), syscr, syscw
// (/proc/PID/io), vcsw, nvcsw (context switches summed over
// /proc/PID/task/*/status), rss_kb, rss_anon_kb, rss_file_kb,
// rss_shmem_kb, threads (/proc/PID/status), as key=value lines, or the
// values of KEYs on one line. fds prints what the process's descriptors
// point at, "COUNT TARGET" by target (socket:[] without inode numbers),
// or how many end in SUFFIX.
//
// http-get prints URL's body, or writes each URL's to its FILE, all put
// in place once every fetch succeeded (httpget.go). column-max prints the
// maximum of each COLUMN (1-based) of a file of numbers; memstats the Go
// runtime's MemStats summed up on one line from a heap profile's debug=1
// text (table.go).
//
// go-test runs a Go test binary (go test -c) of the kernel-facing tests
// with VSCSID_KERNEL_TESTS=1 and prints a PASS, FAIL or SKIP line per
// top-level test (gotest.go).
//
// Exit status 2 on a usage error, 1 on any other (unreadable or malformed
// input, bad selector, a test binary that cannot start, counts that
// differ).
package main

import (
	"errors"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/vscsid/vscsid/deploy/vm/internal/prom"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "guestcheck:", err)
		if _, ok := errors.AsType[usageError](err); ok {
			os.Exit(2)
		}
		os.Exit(1)
	}
}

type usageError string

func (e usageError) Error() string { return string(e) }

const usage = "usage: guestcheck prom-value FILE SELECTOR... | prom-by FILE SELECTOR LABEL | prom-delta BEFORE AFTER SELECTOR | command-counts BEFORE AFTER [FIO_JSON] <SPEC | go-test BINARY [ARGS] | trace-seq FILE | trace-values FILE COMMAND FIELD | trace-overlap FILE [COMMAND] | procstat PID [KEY...] | fds PID [SUFFIX] | http-get [-timeout D] URL [FILE [URL FILE]...] | column-max FILE COLUMN... | memstats FILE"

// procRoot is where procstat and fds read /proc (tests: testdata).
var procRoot = "/proc"

func run(args []string, w io.Writer) error {
	return runIn(args, os.Stdin, w)
}

func runIn(args []string, r io.Reader, w io.Writer) error {
	if len(args) == 0 {
		return usageError(usage)
	}
	var v float64
	switch {
	case args[0] == "prom-value" && len(args) >= 3:
		return promValues(args[1], args[2:], r, w)
	case args[0] == "prom-by" && len(args) == 4:
		return promBy(args[1], args[2], args[3], r, w)
	case args[0] == "go-test":
		return goTest(args[1:], w)
	case args[0] == "command-counts" && (len(args) == 3 || len(args) == 4):
		return commandCounts(args[1], args[2], strings.Join(args[3:], ""), r, w)
	case args[0] == "procstat" && len(args) >= 2:
		return procStat(procRoot, args[1], args[2:], w)
	case args[0] == "fds" && (len(args) == 2 || len(args) == 3):
		return fds(procRoot, args[1], args[2:], w)
	case args[0] == "http-get":
		return httpGet(args[1:], w)
	case args[0] == "column-max" && len(args) >= 3:
		return columnMax(args[1], args[2:], w)
	case args[0] == "memstats" && len(args) == 2:
		return memStats(args[1], w)
	case args[0] == "trace-seq" && len(args) == 2:
		return traceSeq(args[1], w)
	case args[0] == "trace-values" && len(args) == 4:
		return traceValues(args[1], args[2], args[3], w)
	case args[0] == "trace-overlap" && (len(args) == 2 || len(args) == 3):
		return traceOverlap(args[1], strings.Join(args[2:], ""), w)
	case args[0] == "prom-delta" && len(args) == 4:
		sel, err := prom.ParseSelector(args[3])
		if err != nil {
			return err
		}
		before, err := selectFile(args[1], sel, r)
		if err != nil {
			return err
		}
		after, err := selectFile(args[2], sel, r)
		if err != nil {
			return err
		}
		v = after - before
	default:
		return usageError(usage)
	}
	_, err := fmt.Fprintln(w, formatValue(v))
	return err
}

// readScrape reads the scrape in the file path, or in stdin for "-" (a
// scenario's scrape piped in: scrape | guestcheck prom-value - SEL).
func readScrape(path string, stdin io.Reader) (prom.Scrape, error) {
	if path == "-" {
		s, err := prom.Parse(stdin)
		if err != nil {
			return nil, fmt.Errorf("stdin: %w", err)
		}
		return s, nil
	}
	return prom.ParseFile(path)
}

func selectFile(path string, sel prom.Selector, stdin io.Reader) (float64, error) {
	s, err := readScrape(path, stdin)
	if err != nil {
		return 0, err
	}
	v, err := s.Select(sel)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", path, err)
	}
	return v, nil
}

// promValues prints the sum each selector matches in one scrape, on one
// line: several figures of one moment (a histogram's buckets).
func promValues(path string, sels []string, stdin io.Reader, w io.Writer) error {
	s, err := readScrape(path, stdin)
	if err != nil {
		return err
	}
	out := make([]string, len(sels))
	for i, text := range sels {
		sel, err := prom.ParseSelector(text)
		if err != nil {
			return err
		}
		v, err := s.Select(sel)
		if err != nil {
			return fmt.Errorf("%s: %w", path, err)
		}
		out[i] = formatValue(v)
	}
	_, err = fmt.Fprintln(w, strings.Join(out, " "))
	return err
}

// promBy prints "VALUE SUM" for each value of the label among the series
// the selector matches, sorted by value; sums of 0 are left out (a
// counter's series that never counted).
func promBy(path, text, label string, stdin io.Reader, w io.Writer) error {
	sel, err := prom.ParseSelector(text)
	if err != nil {
		return err
	}
	s, err := readScrape(path, stdin)
	if err != nil {
		return err
	}
	if !s.Has(sel.Name) {
		return fmt.Errorf("%s: no metric %s in the scrape", path, sel.Name)
	}
	by := s.By(sel.Name, sel.Labels, label)
	for _, k := range slices.Sorted(maps.Keys(by)) {
		if by[k] == 0 {
			continue
		}
		if _, err := fmt.Fprintln(w, k, formatValue(by[k])); err != nil {
			return err
		}
	}
	return nil
}

func formatValue(v float64) string {
	if v == float64(int64(v)) {
		return strconv.FormatInt(int64(v), 10)
	}
	return strconv.FormatFloat(v, 'g', -1, 64)
}
