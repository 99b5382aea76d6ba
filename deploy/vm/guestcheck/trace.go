package main

import (
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
