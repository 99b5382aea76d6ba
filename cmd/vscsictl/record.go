package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"slices"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/internal/clidoc"
	"github.com/vscsid/vscsid/internal/record"
)

var recordCmd = subcommand{
	name: "record", args: "DEVICE... -o FILE [--digests] [--duration D] [--socket PATH]",
	summary: "record every command of devices, to replay them",
	help: `Records every command the devices complete into FILE until interrupted
(or for --duration): the devices' configurations, and per command its CDB,
its Data-Out (or, with --digests, only a CRC-32C of a Data-Out larger than
1 KiB: parameter lists are kept, data blocks are not), status, sense,
the bytes moved each way and a CRC-32C of the Data-In. FILE is gzipped
JSON lines (docs/trace.md). vscsictl replay runs it again. Record from
new devices (memory cartridges, a new media directory) for a recording
that replays: replay starts from new ones.`,
}

var replayCmd = subcommand{
	name: "replay", args: "FILE [--node [DEVICE=]/dev/sgN]... [--max N]",
	summary: "run a recording again and report every difference",
	help: `Rebuilds the recorded devices in this process, from their recorded
configurations (a media directory is replaced by a new temporary one,
in which the devices create the cartridges they name, as new devices
do; fault rules and timing are restored with their seed, delays are not
waited for), and runs the recorded commands in order. Every status, sense,
byte count or Data-In digest that differs is printed (up to --max);
the exit status is 1 if any differs. No daemon or kernel is needed.

With --node, the commands go instead to live devices through the kernel,
with SG_IO on their SCSI generic nodes, as an initiator's would: one
--node per recorded device (DEVICE= may be left out when the recording
has one). Each device should be new and configured as recorded. The
recording needs its payloads (made without --digests), and the Data-Out
byte counts are not compared: the initiator sees only the Data-In's.`,
}

func init() {
	recordCmd.run = runRecord
	replayCmd.run = runReplay
	commands = append(commands,
		command{"record", recordCmd.summary, leaf(recordCmd), nil},
		command{"replay", replayCmd.summary, leaf(replayCmd), nil})
}

// newCmdFlags is the flag set of a top-level subcommand s.
func newCmdFlags(s subcommand, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(s.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "usage: vscsictl %s %s\n\n%s\n\nflags:\n", s.name, s.args, strings.TrimSpace(s.help))
		clidoc.PrintFlags(fs.Output(), fs)
	}
	return fs
}

func runRecord(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var df daemonFlags
	var out string
	var digests bool
	var dur time.Duration
	fs := newCmdFlags(recordCmd, stderr)
	df.add(fs, false)
	fs.StringVar(&out, "o", "", "write the recording to `FILE`")
	fs.BoolVar(&digests, "digests", false, "keep CRC-32C digests of Data-Out larger than 1 KiB instead of the data (much smaller; a replay cannot check data read back)")
	fs.DurationVar(&dur, "duration", 0, "stop after `DURATION` (default: when interrupted)")
	devs, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	switch {
	case len(devs) == 0:
		fs.Usage()
		return usagef("name the devices to record")
	case out == "":
		return usagef("-o FILE: where to write the recording")
	case dur < 0:
		return usagef("--duration %v: want a positive duration", dur)
	}
	if dur > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, dur)
		defer cancel()
	}
	// 0600: a recording holds the data the initiator wrote.
	f, err := os.OpenFile(out, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o600)
	if err != nil {
		return err
	}
	var w *record.Writer
	var n, lost int
	last := map[int]uint64{}
	err = control.NewClient(df.socket).Record(ctx, devs, !digests, func(line []byte) error {
		if w == nil {
			var h record.Header
			if err := json.Unmarshal(line, &h); err != nil {
				return fmt.Errorf("bad recording header from vscsid: %w", err)
			}
			var err error
			if w, err = record.NewWriter(f, h); err != nil {
				return err
			}
			_, _ = fmt.Fprintf(stderr, "vscsictl record: recording %s to %s\n", strings.Join(devs, ", "), out)
			return nil
		}
		var c record.Command
		if err := json.Unmarshal(line, &c); err != nil {
			return fmt.Errorf("bad recorded command from vscsid: %w", err)
		}
		if l, ok := last[c.Dev]; ok && c.Seq > l+1 {
			lost += int(c.Seq - l - 1)
		}
		last[c.Dev] = c.Seq
		n++
		return w.Write(&c)
	})
	if w != nil {
		err = errors.Join(err, w.Close())
	}
	err = errors.Join(err, f.Sync(), f.Close())
	if err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "recorded %d commands of %s to %s", n, strings.Join(devs, ", "), out)
	if lost > 0 {
		_, err = fmt.Fprintf(stdout, " (%d lost: the recording could not keep up; it will not replay)", lost)
	}
	_, _ = fmt.Fprintln(stdout)
	return err
}

func runReplay(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var maxShown int
	var nodes nodesFlag
	fs := newCmdFlags(replayCmd, stderr)
	fs.IntVar(&maxShown, "max", 20, "print at most `N` differences")
	fs.Var(&nodes, "node", "replay on the live device of this SCSI generic node (`[DEVICE=]/dev/sgN`; once per recorded device)")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		fs.Usage()
		return usagef("want %s", replayCmd.args)
	}
	res, h, err := replayFile(ctx, pos[0], nodes)
	if err != nil {
		return err
	}
	for i, d := range res.Divergences {
		if i == maxShown {
			_, _ = fmt.Fprintf(stdout, "... and %d more\n", len(res.Divergences)-maxShown)
			break
		}
		_, _ = fmt.Fprintln(stdout, d)
	}
	names := make([]string, len(h.Devices))
	for i, d := range h.Devices {
		names[i] = d.Name
	}
	_, err = fmt.Fprintf(stdout, "replayed %d commands of %s (%d not run when recorded): %d differences\n",
		res.Commands, strings.Join(names, ", "), res.Skipped, len(res.Divergences))
	if err == nil && len(res.Divergences) > 0 {
		err = fmt.Errorf("%s: %d differences", pos[0], len(res.Divergences))
	}
	return err
}

// replayFile replays the recording at path against this build's
// handlers, or on the live devices of nodes.
func replayFile(ctx context.Context, path string, nodes nodesFlag) (record.Result, record.Header, error) {
	f, err := os.Open(path)
	if err != nil {
		return record.Result{}, record.Header{}, err
	}
	defer func() { _ = f.Close() }() // read only
	r, err := record.NewReader(f)
	if err != nil {
		return record.Result{}, record.Header{}, fmt.Errorf("%s: %w", path, err)
	}
	if len(nodes) > 0 {
		t, closeAll, err := openNodes(r.Header, nodes)
		if err != nil {
			return record.Result{}, r.Header, err
		}
		defer closeAll()
		res, err := record.ReplayTo(ctx, r, t)
		return res, r.Header, err
	}
	tmp, err := os.MkdirTemp("", "vscsictl-replay-")
	if err != nil {
		return record.Result{}, r.Header, err
	}
	defer func() { _ = os.RemoveAll(tmp) }() // scratch media only
	res, err := record.Replay(ctx, r, config.ReplayBuilder(tmp))
	return res, r.Header, err
}

// nodesFlag is --node: recorded device names (empty: the only one) and
// their SCSI generic nodes.
type nodesFlag []struct{ device, path string }

func (n *nodesFlag) String() string { return "" }

func (n *nodesFlag) Set(v string) error {
	dev, path, ok := strings.Cut(v, "=")
	if !ok {
		dev, path = "", v
	}
	if path == "" || (ok && dev == "") {
		return fmt.Errorf("want [DEVICE=]/dev/sgN, not %q", v)
	}
	*n = append(*n, struct{ device, path string }{dev, path})
	return nil
}

// openNodes opens the node of every device of h (read-write, as SG_IO
// needs) and returns the Target that sends to them.
func openNodes(h record.Header, nodes nodesFlag) (_ *record.SGTarget, closeAll func(), err error) {
	if !h.Payloads {
		return nil, nil, fmt.Errorf("--node: the recording has digests only (made with --digests): replaying on a live device needs the Data-Out payloads")
	}
	names := make([]string, len(h.Devices))
	for i, d := range h.Devices {
		names[i] = d.Name
	}
	t := &record.SGTarget{FDs: make([]int, len(h.Devices))}
	for i := range t.FDs {
		t.FDs[i] = -1
	}
	closeFDs := func() {
		for _, fd := range t.FDs {
			if fd >= 0 {
				_ = unix.Close(fd)
			}
		}
	}
	defer func() {
		if err != nil {
			closeFDs()
		}
	}()
	for _, n := range nodes {
		dev := n.device
		if dev == "" {
			if len(names) != 1 {
				return nil, nil, fmt.Errorf("--node %s: the recording has %d devices (%s): say which, as DEVICE=%s", n.path, len(names), strings.Join(names, ", "), n.path)
			}
			dev = names[0]
		}
		i := slices.Index(names, dev)
		if i < 0 {
			return nil, nil, fmt.Errorf("--node %s=%s: the recording has no device %s (it has %s)", dev, n.path, dev, strings.Join(names, ", "))
		}
		if t.FDs[i] >= 0 {
			return nil, nil, fmt.Errorf("--node: device %s named twice", dev)
		}
		fd, err := unix.Open(n.path, unix.O_RDWR|unix.O_CLOEXEC, 0)
		if err != nil {
			return nil, nil, fmt.Errorf("--node %s: %w", n.path, err)
		}
		t.FDs[i] = fd
	}
	for i, fd := range t.FDs {
		if fd < 0 {
			return nil, nil, fmt.Errorf("--node: no node for device %s of the recording (one --node DEVICE=/dev/sgN per device: %s)", names[i], strings.Join(names, ", "))
		}
	}
	return t, closeFDs, nil
}
