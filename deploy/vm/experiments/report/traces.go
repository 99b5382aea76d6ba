package main

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vscsid/vscsid/internal/trace"
)

// traceExcerpt is how many text lines of each trace the report shows.
const traceExcerpt = 8

// traces is the section on the scenario's traced runs (exp_trace: files
// trace-NAME.json, `vscsictl trace --json`): per run, the commands vscsid
// saw grouped by their shape, and the first lines of the trace.
func (rep *Report) traces(b *strings.Builder) error {
	files, err := filepath.Glob(filepath.Join(rep.In, "trace-*.json"))
	if err != nil || len(files) == 0 {
		return err
	}
	// In the order they were traced (their start lines), not by name.
	type traced struct {
		file string
		evs  []trace.Event
	}
	var all []traced
	for _, f := range files {
		evs, err := trace.ReadFile(f)
		if err != nil {
			return err
		}
		all = append(all, traced{f, evs})
	}
	first := func(t traced) time.Time {
		if len(t.evs) == 0 {
			return time.Time{}
		}
		return t.evs[0].Time
	}
	slices.SortStableFunc(all, func(a, b traced) int { return first(a).Compare(first(b)) })
	b.WriteString("## Commands as vscsid saw them (`vscsictl trace`)\n\n")
	b.WriteString("One run of each, not measured, traced command by command (`vscsictl trace`, docs/trace.md): the data buffer's length, its segments (TCMU's data area: the kernel copies the initiator's pages into it, so their alignment does not reach the target) and how many are not page aligned.\n\n")
	for _, t := range all {
		f, evs := t.file, t.evs
		name := strings.TrimSuffix(strings.TrimPrefix(filepath.Base(f), "trace-"), ".json")
		fmt.Fprintf(b, "### %s\n\n", name)
		type shape struct {
			cmd, dir, status     string
			length, segs, s0, un uint32
		}
		var order []shape
		count := map[shape]int{}
		var start time.Time
		var lines []string
		for i := range evs {
			e := &evs[i]
			if e.Type == trace.TypeStart {
				start = e.Time
				continue
			}
			if start.IsZero() {
				start = e.Time
			}
			if len(lines) < traceExcerpt {
				lines = append(lines, string(e.AppendText(nil, start)))
			}
			if e.Type != trace.TypeCommand {
				continue
			}
			s := shape{e.Command, e.Direction, e.Status, e.Length, e.Segments, e.Seg0Length, e.Unaligned}
			if count[s] == 0 {
				order = append(order, s)
			}
			count[s]++
		}
		if len(order) == 0 {
			b.WriteString("No command reached vscsid.\n\n")
			continue
		}
		b.WriteString("| commands | command | direction | length | segments | first segment | unaligned | status |\n|---|---|---|---|---|---|---|---|\n")
		for _, s := range order {
			fmt.Fprintf(b, "| %d | %s | %s | %d | %d | %d | %d | %s |\n", count[s], s.cmd, s.dir, s.length, s.segs, s.s0, s.un, s.status)
		}
		fmt.Fprintf(b, "\n```\n%s\n```\n\n", strings.Join(lines, "\n"))
	}
	return nil
}
