package main

import (
	"bytes"
	"cmp"
	"fmt"
	"io"
	"os"
	"slices"
	"time"
)

// A step is the stretch of a part's run that ended with one of its result
// lines: from the previous result line (or the part's start: the first
// step holds the build and the boot) to this one. The suite's closing
// report lists the longest, which is where make test's 25 minutes go.
type step struct {
	part string
	line string // the result line, detail cut
	took time.Duration
}

// stepClock is how often the suite reads a running part's log for its
// result lines: the steps' resolution.
const stepClock = 500 * time.Millisecond

// stepper turns a part's output, as it grows, into steps.
type stepper struct {
	part    string
	partial []byte        // an unfinished last line
	last    time.Duration // when the previous result line arrived
	steps   []step
}

// feed takes output that arrived at now (since the part began).
func (t *stepper) feed(b []byte, now time.Duration) {
	t.partial = append(t.partial, b...)
	for {
		i := bytes.IndexByte(t.partial, '\n')
		if i < 0 {
			return
		}
		line := string(bytes.TrimRight(t.partial[:i], "\r"))
		t.partial = t.partial[i+1:]
		if !resultLine.MatchString(line) {
			continue
		}
		if j := len(line); j > 100 {
			line = line[:100] + "..."
		}
		t.steps = append(t.steps, step{part: t.part, line: line, took: now - t.last})
		t.last = now
	}
}

// watchSteps reads the log at path every stepClock until done closes,
// then once more, and returns the part's steps.
func watchSteps(part, path string, t0 time.Time, done <-chan struct{}) []step {
	t := &stepper{part: part}
	f, err := os.Open(path)
	if err != nil {
		return nil // the log is the part's own record; steps are a report
	}
	defer func() { _ = f.Close() }()
	buf := make([]byte, 64<<10)
	drain := func() {
		for {
			n, err := f.Read(buf)
			if n > 0 {
				t.feed(buf[:n], time.Since(t0))
			}
			if err != nil || n == 0 {
				return
			}
		}
	}
	tick := time.NewTicker(stepClock)
	defer tick.Stop()
	for {
		select {
		case <-tick.C:
			drain()
		case <-done:
			drain()
			return t.steps
		}
	}
}

// printSteps writes the n longest steps of all parts, longest first.
func printSteps(w io.Writer, parts []*part, n int) {
	var all []step
	for _, p := range parts {
		all = append(all, p.steps...)
	}
	if len(all) == 0 {
		return
	}
	slices.SortStableFunc(all, func(a, b step) int { return cmp.Compare(b.took, a.took) })
	all = all[:min(n, len(all))]
	_, _ = fmt.Fprintf(w, "\nlongest steps (the time up to each result line since the part's previous one; a part's first includes its boot):\n")
	for _, s := range all {
		_, _ = fmt.Fprintf(w, "%8s  %-22s %s\n", s.took.Round(100*time.Millisecond), s.part, s.line)
	}
}
