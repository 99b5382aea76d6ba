package main

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"strings"

	"github.com/vscsid/vscsid/internal/trace"
)

// readTrace reads a `vscsictl trace --json` capture: every line must be
// one trace.Event, so a line that does not parse is an error.
func readTrace(path string) ([]trace.Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	var evs []trace.Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var e trace.Event
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s:%d: not a trace event: %w", path, n, err)
		}
		if e.Type != trace.TypeCommand && e.Type != trace.TypeLost && e.Type != trace.TypeStart {
			return nil, fmt.Errorf("%s:%d: type %q", path, n, e.Type)
		}
		evs = append(evs, e)
	}
	return evs, sc.Err()
}

// traceSeq prints the commands in order, a run of the same command as
// NAME*COUNT, space separated; lost records as lost*N.
func traceSeq(path string, w io.Writer) error {
	evs, err := readTrace(path)
	if err != nil {
		return err
	}
	var out []string
	last, run := "", 0
	flush := func() {
		if run == 1 {
			out = append(out, last)
		} else if run > 1 {
			out = append(out, last+"*"+strconv.Itoa(run))
		}
	}
	for _, e := range evs {
		if e.Type == trace.TypeStart {
			continue
		}
		name := e.Command
		if e.Type == trace.TypeLost {
			name = "lost"
		}
		if name != last {
			flush()
			last, run = name, 0
		}
		run++
		if e.Type == trace.TypeLost {
			run += int(e.Lost) - 1
		}
	}
	flush()
	_, err = fmt.Fprintln(w, strings.Join(out, " "))
	return err
}

// traceValues prints the distinct values of a field (a JSON key of the
// event; extent.count, sense.key and the like for nested ones) among the
// events of command, sorted, space separated.
func traceValues(path, command, field string, w io.Writer) error {
	evs, err := readTrace(path)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	for _, e := range evs {
		if e.Type != trace.TypeCommand || e.Command != command {
			continue
		}
		b, err := json.Marshal(e)
		if err != nil {
			return err
		}
		var m map[string]any
		if err := json.Unmarshal(b, &m); err != nil {
			return err
		}
		var v any = m
		for k := range strings.SplitSeq(field, ".") {
			o, ok := v.(map[string]any)
			if !ok {
				v = nil
				break
			}
			v = o[k]
		}
		if v != nil {
			seen[fmt.Sprint(v)] = true
		}
	}
	vals := make([]string, 0, len(seen))
	for v := range seen {
		vals = append(vals, v)
	}
	slices.Sort(vals)
	_, err = fmt.Fprintln(w, strings.Join(vals, " "))
	return err
}
