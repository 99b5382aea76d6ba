package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"text/tabwriter"

	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/fault"
)

// vscsictl fault: the fault rules and timing of a running device, over the
// control socket (cmd/vscsid/faults.go). The grammar is fault's.

var faultSubs = []subcommand{
	{name: "list", args: "DEVICE [--json] [--socket PATH]", summary: "show the rules (with ID, matched, injected) and the timing",
		help: "Shows the device's fault rules in evaluation order with their counters, and its timing model."},
	{name: "add", args: "DEVICE RULE [--socket PATH]", summary: "append a rule; the others keep their counters",
		help: "Appends RULE (see 'vscsictl fault help') and prints its ID."},
	{name: "del", args: "DEVICE ID [--socket PATH]", summary: "remove the rule with that ID",
		help: "Removes the rule with the ID 'vscsictl fault list' shows."},
	{name: "clear", args: "DEVICE [--socket PATH]", summary: "remove every rule (the timing stays)",
		help: "Removes every rule of the device; the timing model stays."},
	{name: "timing", args: "DEVICE TIMING [--socket PATH]", summary: `set the timing model ("" removes it)`,
		help: "Replaces the device's timing model (see 'vscsictl fault help'); an empty TIMING removes it."},
	{name: "help", args: "", summary: "print the rule and timing grammar",
		help: "Prints the grammar of fault rules and timing models."},
}

func init() {
	for i := range faultSubs {
		s := &faultSubs[i]
		s.run = func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return runFault(ctx, *s, args, stdout, stderr)
		}
	}
	commands = append(commands, command{"fault", "inject faults and set timing on a running device", func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if len(args) > 0 && args[0] == "help" { // the grammar; --help lists the subcommands
			return runFault(ctx, faultSubs[len(faultSubs)-1], args[1:], stdout, stderr)
		}
		return dispatch(ctx, "fault", faultSubs, args, stdout, stderr)
	}, faultSubs})
}

func runFault(ctx context.Context, s subcommand, args []string, stdout, stderr io.Writer) error {
	if s.name == "help" {
		if len(args) > 0 && args[0] != "-h" && args[0] != "--help" {
			return usagef("help takes no arguments")
		}
		_, err := fmt.Fprintf(stdout, "%s\n\n%s\n", fault.RuleDesc, fault.TimingDesc)
		return err
	}
	n := map[string]int{"list": 1, "add": 2, "del": 2, "clear": 1, "timing": 2}[s.name]
	var df daemonFlags
	s.name = "fault " + s.name
	pos, err := parseDaemonCmd(s, args, stderr, n, func(fs *flag.FlagSet) { df.add(fs, s.name == "fault list") })
	if err != nil {
		return err
	}
	c := control.NewClient(df.socket)
	switch s.name {
	case "fault list":
		f, err := c.Faults(ctx, pos[0])
		if err != nil {
			return err
		}
		if df.json {
			return writeJSONOut(stdout, f)
		}
		timing := f.Timing
		if timing == "" {
			timing = "(none)"
		}
		if _, err := fmt.Fprintf(stdout, "%s: timing %s; %d commands delayed (%d clamped to cmd_time_out), %d held\n", f.Name, timing, f.Delayed, f.Clamped, f.Held); err != nil {
			return err
		}
		if len(f.Rules) == 0 {
			_, err := fmt.Fprintln(stdout, "no rules")
			return err
		}
		tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
		p := &printer{w: tw}
		p.println("ID\tACTION\tMATCHED\tINJECTED\tRULE")
		for _, r := range f.Rules {
			action := r.Action
			if r.Spent {
				action += " (spent)"
			}
			p.printf("%d\t%s\t%d\t%d\t%s\n", r.ID, action, r.Matched, r.Injected, r.Rule)
		}
		return p.done(tw.Flush)
	case "fault add":
		id, err := c.AddFault(ctx, pos[0], pos[1])
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s: rule %d added\n", pos[0], id)
		return err
	case "fault del":
		id, err := strconv.ParseUint(pos[1], 10, 64)
		if err != nil {
			return usagef("rule ID %q: want the number 'vscsictl fault list' shows", pos[1])
		}
		if err := c.RemoveFault(ctx, pos[0], id); err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s: rule %d removed\n", pos[0], id)
		return err
	case "fault clear":
		if err := c.ClearFaults(ctx, pos[0]); err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s: rules cleared\n", pos[0])
		return err
	case "fault timing":
		if err := c.SetTiming(ctx, pos[0], pos[1]); err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s: timing set\n", pos[0])
		return err
	}
	return nil
}
