package main

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"slices"
	"strconv"
	"strings"

	"github.com/vscsid/vscsid/internal/trace"
)

// traceSeq prints the commands in order, a run of the same command as
// NAME*COUNT, space separated; lost records as lost*N.
func traceSeq(path string, w io.Writer) error {
	evs, err := trace.ReadFile(path)
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
	evs, err := trace.ReadFile(path)
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

// traceOverlap prints the most commands of the capture (COMMAND's only,
// when given) that were in service at once: each is in service from its
// completion time less its service time to its completion. Whether a
// device served commands side by side is then read from the daemon's own
// clock, not from how long a workload took on a loaded machine.
func traceOverlap(path, command string, w io.Writer) error {
	evs, err := trace.ReadFile(path)
	if err != nil {
		return err
	}
	type edge struct {
		at    int64
		delta int // +1 a start, -1 an end
	}
	var edges []edge
	for _, e := range evs {
		if e.Type != trace.TypeCommand || (command != "" && e.Command != command) {
			continue
		}
		end := e.Time.UnixNano()
		edges = append(edges, edge{end - e.ServiceNS, 1}, edge{end, -1})
	}
	// Ends before starts at the same instant: touching is not overlapping.
	slices.SortFunc(edges, func(a, b edge) int {
		if a.at != b.at {
			return cmp.Compare(a.at, b.at)
		}
		return cmp.Compare(a.delta, b.delta)
	})
	n, most := 0, 0
	for _, e := range edges {
		n += e.delta
		most = max(most, n)
	}
	_, err = fmt.Fprintln(w, most)
	return err
}
