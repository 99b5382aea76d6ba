package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"strings"
	"sync"
	"time"

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
	// Lines are written as they come and flushed every flushEvery, so a
	// pipe sees them promptly without a write per line.
	w := &lockedWriter{w: bufio.NewWriterSize(stdout, 64<<10)}
	stop, flusher := make(chan struct{}), make(chan struct{})
	defer func() { close(stop); <-flusher }()
	go func() {
		defer close(flusher)
		t := time.NewTicker(flushEvery)
		defer t.Stop()
		for {
			select {
			case <-stop:
				return
			case <-t.C:
				_ = w.flush()
			}
		}
	}()
	var start time.Time
	lost := map[string]uint64{}
	var line []byte
	err = control.NewClient(df.socket).Trace(ctx, devs, f, func(e *trace.Event, raw []byte) error {
		switch e.Type {
		case trace.TypeLost:
			lost[e.Device] += e.Lost
		case trace.TypeStart:
			start = e.Time
			_, _ = fmt.Fprintf(stderr, "vscsictl trace: tracing %s\n", strings.Join(e.Devices, ", "))
			if !df.json {
				return nil
			}
		}
		if df.json {
			line = append(append(line[:0], raw...), '\n')
		} else {
			if start.IsZero() {
				start = e.Time
			}
			line = append(e.AppendText(line[:0], start), '\n')
		}
		return w.write(line)
	})
	if ferr := w.flush(); err == nil {
		err = ferr
	}
	for dev, n := range lost {
		_, _ = fmt.Fprintf(stderr, "vscsictl trace: %s: %d records lost (the trace could not keep up)\n", dev, n)
	}
	return err
}

// flushEvery is how often trace output reaches its reader.
const flushEvery = 100 * time.Millisecond

// lockedWriter is a buffered writer shared by the stream and the flusher.
type lockedWriter struct {
	mu sync.Mutex
	w  *bufio.Writer
}

func (l *lockedWriter) write(b []byte) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	_, err := l.w.Write(b)
	return err
}

func (l *lockedWriter) flush() error {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.w.Flush()
}
