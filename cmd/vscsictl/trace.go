package main

import (
	"bytes"
	"context"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/internal/clidoc"
	"github.com/vscsid/vscsid/internal/trace"
)

var traceCmd = subcommand{
	name: "trace", args: "[DEVICE...] [--op OPS] [--status S] [--sense KEY[/ASC[/ASCQ]]] [--lba START[+COUNT]] [--min-latency D] [--json] [--socket PATH]",
	summary: "show every command of devices as it completes",
	help: `Streams one line per SCSI command as the devices complete it, until
interrupted: seconds since the trace began, device, the device's command
sequence number, direction (R read, W write, - none), command, what it
addresses (lba=LBA+BLOCKS on a disk, count=N [fixed] on a tape), bytes
moved of the data buffer, its segments (COUNTseg@OFFSET+LENGTH of the
first, and how many are not page aligned), status and decoded sense
(key, ASC/ASCQ, its name, FM/EOM/ILI, info=INFORMATION), the time the
command waited after the device saw it (q=) and spent in service (s=),
and [fault] or [timing] when a fault rule or the timing model acted.
Without DEVICE, every device served now. With --json, one JSON object per
line (docs/trace.md lists the fields). A reader that falls behind loses
records: a LOST line says how many, and the end of the stream the total.
The filters (all given must hold):
` + trace.FilterHelp,
}

func init() {
	traceCmd.run = runTrace
	commands = append(commands, command{"trace", traceCmd.summary, leaf(traceCmd), nil})
}

func runTrace(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var df daemonFlags
	var f trace.Filter
	fs := flag.NewFlagSet(traceCmd.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "usage: vscsictl trace %s\n\n%s\n\nflags:\n", traceCmd.args, strings.TrimSpace(traceCmd.help))
		clidoc.PrintFlags(fs.Output(), fs)
	}
	df.add(fs, true)
	fs.StringVar(&f.Op, "op", "", "only the commands `OPS` (see above)")
	fs.StringVar(&f.Status, "status", "", "only commands that ended with `STATUS`")
	fs.StringVar(&f.Sense, "sense", "", "only CHECK CONDITIONs with sense `KEY[/ASC[/ASCQ]]`")
	fs.StringVar(&f.LBA, "lba", "", "only disk commands whose blocks meet `START[+COUNT]`")
	fs.DurationVar(&f.MinLatency, "min-latency", 0, "only commands whose service time is at least `DURATION`")
	devs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if f.MinLatency < 0 {
		return usagef("--min-latency %v: want a duration of 0 or more", f.MinLatency)
	}
	if _, err := f.Compile(nil); err != nil {
		return usagef("%v", err)
	}
	// The daemon formats the lines (text or JSON) and sends them in
	// pieces of up to 256 KiB, or what 200 ms brought: each piece goes to
	// stdout in one write, and only the rare start and lost lines, found
	// by searching the piece, are looked at here (for stderr and the
	// total at the end). A busy trace then costs vscsictl a search and a
	// write per piece, not work per line.
	lost := map[string]uint64{}
	started := false
	err = control.NewClient(df.socket).Trace(ctx, devs, f, !df.json, func(lines []byte) error {
		if !started {
			started = true
			line, rest, _ := bytes.Cut(lines, []byte("\n"))
			if kind, _, _, devices := classify(line, df.json); kind == trace.TypeStart {
				_, _ = fmt.Fprintf(stderr, "vscsictl trace: tracing %s\n", devices)
				if !df.json {
					lines = rest
				}
			}
		}
		countLost(lines, df.json, lost)
		_, err := stdout.Write(lines)
		return err
	})
	for dev, n := range lost {
		_, _ = fmt.Fprintf(stderr, "vscsictl trace: %s: %d records lost (the trace could not keep up)\n", dev, n)
	}
	return err
}

// countLost adds the counts of the lost lines among lines (whole lines)
// to lost. A lost line is "T DEVICE LOST N records ..." in text (the only
// line whose third field is LOST) and begins {"type":"lost" in JSON.
func countLost(lines []byte, isJSON bool, lost map[string]uint64) {
	// (A mark that starts with a rare byte: bytes.Index skips to it. " LOST "
	// would stop at every space, 70 times slower.)
	mark := []byte("LOST ")
	if isJSON {
		mark = []byte(`{"type":"lost"`)
	}
	for len(lines) > 0 {
		i := bytes.Index(lines, mark)
		if i < 0 {
			return
		}
		start := bytes.LastIndexByte(lines[:i], '\n') + 1
		end := len(lines)
		if j := bytes.IndexByte(lines[i:], '\n'); j >= 0 {
			end = i + j
		}
		if kind, dev, n, _ := classify(lines[start:end], isJSON); kind == trace.TypeLost {
			lost[dev] += n
		}
		lines = lines[min(end+1, len(lines)):]
	}
}

// classify tells a trace line's type (trace.TypeStart, TypeLost, or
// TypeCommand for any other) and, for a lost line, its device and count;
// for a start line, the devices. Text lines are "T tracing A, B" and
// "T DEVICE LOST N records ..."; JSON lines begin with their type.
func classify(line []byte, isJSON bool) (kind, dev string, lost uint64, devices string) {
	if isJSON {
		if !bytes.HasPrefix(line, []byte(`{"type":"start"`)) && !bytes.HasPrefix(line, []byte(`{"type":"lost"`)) {
			return trace.TypeCommand, "", 0, ""
		}
		var e trace.Event
		if json.Unmarshal(line, &e) != nil {
			return trace.TypeCommand, "", 0, ""
		}
		return e.Type, e.Device, e.Lost, strings.Join(e.Devices, ", ")
	}
	_, rest, _ := bytes.Cut(line, []byte(" "))
	if d, ok := bytes.CutPrefix(rest, []byte("tracing ")); ok {
		return trace.TypeStart, "", 0, string(d)
	}
	dev2, rest, _ := bytes.Cut(rest, []byte(" "))
	if c, ok := bytes.CutPrefix(rest, []byte("LOST ")); ok {
		num, _, _ := bytes.Cut(c, []byte(" "))
		n, _ := strconv.ParseUint(string(num), 10, 64)
		return trace.TypeLost, string(dev2), n, ""
	}
	return trace.TypeCommand, "", 0, ""
}
