package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"slices"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/internal/clidoc"
)

// Subcommands that talk to the running daemon over its control socket
// (vscsid --control.socket): HTTP/1.1 over a unix socket, JSON bodies.
// The wire types are cmd/internal/control's, shared with the daemon.

// daemonFlags are the flags every daemon subcommand takes.
type daemonFlags struct {
	socket string
	json   bool
}

func (d *daemonFlags) add(fs *flag.FlagSet, withJSON bool) {
	fs.StringVar(&d.socket, "socket", control.DefaultSocket, "vscsid's control socket `PATH` (vscsid --control.socket)")
	if withJSON {
		fs.BoolVar(&d.json, "json", false, "print JSON (for scripts)")
	}
}

// parseDaemonCmd parses the flags of a daemon subcommand and checks the
// number of positional arguments.
func parseDaemonCmd(s subcommand, args []string, stderr io.Writer, n int, setup func(*flag.FlagSet)) ([]string, error) {
	fs := flag.NewFlagSet(s.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "usage: vscsictl %s %s\n\n%s\n\nflags:\n", s.name, s.args, strings.TrimSpace(s.help))
		clidoc.PrintFlags(fs.Output(), fs)
	}
	setup(fs)
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return nil, err
	}
	if len(pos) != n {
		fs.Usage()
		return nil, usagef("want %s", s.args)
	}
	return pos, nil
}

// leaf wraps a subcommand so that it is a top-level command.
func leaf(s subcommand) func(context.Context, []string, io.Writer, io.Writer) error {
	return func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		if err := s.run(ctx, args, stdout, stderr); err != nil {
			var ue usageError
			if errors.As(err, &ue) {
				return usagef("%s: %s", s.name, ue.msg)
			}
			if errors.Is(err, flag.ErrHelp) {
				return err
			}
			return fmt.Errorf("%s: %w", s.name, err)
		}
		return nil
	}
}

var devicesCmd = subcommand{
	name: "devices", args: "[--json] [--socket PATH]", summary: "list the devices vscsid serves",
	help: `Lists every device the running vscsid serves: those of its config file
(origin config) and those made with targetcli (origin attached), with
their SCSI address and device node, uio device, the cartridge in each
tape drive, and whether the device failed.`,
}

var statsCmd = subcommand{
	name: "stats", args: "DEVICE [--watch DURATION] [--json] [--socket PATH]", summary: "show a device's live statistics",
	help: `Shows a device's live statistics: per SCSI command the count, CHECK
CONDITIONs, mean latency and the 50th/99th percentile (as the upper bound of
the histogram bucket it falls in, e.g. <=64us), bytes read and written, and
CHECK CONDITIONs by sense key. With --watch, repeats every DURATION.`,
}

var loadCmd = subcommand{
	name: "load", args: "DEVICE BARCODE [--socket PATH]", summary: "load a cartridge into a tape drive",
	help: `Loads the cartridge BARCODE (an image in the drive's media directory) into
the tape drive DEVICE, unloading the one it holds first. The drive reports
UNIT ATTENTION 28/00 (medium may have changed) to the initiator. The choice
survives a restart of vscsid.`,
}

var unloadCmd = subcommand{
	name: "unload", args: "DEVICE [--socket PATH]", summary: "unload the cartridge of a tape drive",
	help: `Unloads the cartridge of the tape drive DEVICE, as its eject button would:
it fails while an initiator prevents medium removal (PREVENT ALLOW MEDIUM
REMOVAL, e.g. while st has the device open with a lock).`,
}

var ejectCmd = subcommand{
	name: "eject", args: "DEVICE [--socket PATH]", summary: "same as unload",
	help: `Same as unload: ejects the cartridge of the tape drive DEVICE.`,
}

func init() {
	devicesCmd.run = runDevices
	statsCmd.run = runStats
	loadCmd.run = runLoad
	unloadCmd.run = func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		return runUnload(ctx, unloadCmd, args, stdout, stderr)
	}
	ejectCmd.run = func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		return runUnload(ctx, ejectCmd, args, stdout, stderr)
	}
	commands = append(commands,
		command{"devices", devicesCmd.summary, leaf(devicesCmd), nil},
		command{"stats", statsCmd.summary, leaf(statsCmd), nil},
		command{"load", loadCmd.summary, leaf(loadCmd), nil},
		command{"unload", unloadCmd.summary, leaf(unloadCmd), nil},
		command{"eject", ejectCmd.summary, leaf(ejectCmd), nil},
	)
}

func runDevices(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var df daemonFlags
	if _, err := parseDaemonCmd(devicesCmd, args, stderr, 0, func(fs *flag.FlagSet) { df.add(fs, true) }); err != nil {
		return err
	}
	devs, err := control.NewClient(df.socket).Devices(ctx)
	if err != nil {
		return err
	}
	if df.json {
		return writeJSONOut(stdout, devs)
	}
	tw := tabwriter.NewWriter(stdout, 0, 4, 2, ' ', 0)
	p := &printer{w: tw}
	p.println("NAME\tTYPE\tSUBTYPE\tORIGIN\tADDRESS\tNODE\tSG\tUIO\tMEDIUM\tSTATE")
	for _, d := range devs {
		state := "ok"
		if d.Failed {
			state = "FAILED"
			if d.Error != "" {
				state += ": " + d.Error
			}
		}
		medium := dash(d.Barcode)
		if d.Type == "tape" && d.Barcode == "" {
			medium = "(empty)"
		}
		p.printf("%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n", d.Name, d.Type, d.Subtype, d.Origin,
			dash(d.Address), dash(d.Node), dash(d.Generic), dash(d.UIO), medium, state)
	}
	return p.done(tw.Flush)
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

func writeJSONOut(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

func runStats(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var df daemonFlags
	var watch time.Duration
	pos, err := parseDaemonCmd(statsCmd, args, stderr, 1, func(fs *flag.FlagSet) {
		df.add(fs, true)
		fs.DurationVar(&watch, "watch", 0, "repeat every DURATION (e.g. 2s) until interrupted")
	})
	if err != nil {
		return err
	}
	if watch < 0 || (watch > 0 && watch < 100*time.Millisecond) {
		return usagef("--watch %v: want at least 100ms", watch)
	}
	c := control.NewClient(df.socket)
	for {
		s, err := c.Stats(ctx, pos[0])
		if err != nil {
			return err
		}
		if df.json {
			if err := json.NewEncoder(stdout).Encode(s); err != nil {
				return err
			}
		} else {
			if watch > 0 {
				if _, err := fmt.Fprintf(stdout, "--- %s\n", time.Now().Format(time.TimeOnly)); err != nil {
					return err
				}
			}
			if err := printStats(stdout, &s); err != nil {
				return err
			}
		}
		if watch == 0 {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(watch):
		}
	}
}

func printStats(w io.Writer, s *control.Stats) error {
	state := ""
	if s.Failed {
		state = ", FAILED"
	}
	p := &printer{w: w}
	p.printf("%s: %s read, %s written, %d in flight, %d aborted%s\n\n", s.Name,
		formatSize(int64(s.ReadBytes)), formatSize(int64(s.WriteBytes)), s.InFlight, s.Aborted, state)
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', tabwriter.AlignRight)
	t := &printer{w: tw}
	t.println("COMMAND\tOPCODE\tCOUNT\tCHECK\tMEAN\tP50\tP99\t")
	for _, c := range s.Commands {
		name := c.Name
		if name == "" {
			name = "?"
		}
		t.printf("%s\t%#02x\t%d\t%d\t%s\t%s\t%s\t\n", name, c.OpCode, c.Count, c.CheckConditions,
			formatSeconds(c.MeanSeconds), bound(c.P50Seconds), bound(c.P99Seconds))
	}
	if err := t.done(tw.Flush); err != nil {
		return err
	}
	if len(s.CheckConditions) > 0 {
		keys := make([]string, 0, len(s.CheckConditions))
		for k := range s.CheckConditions {
			keys = append(keys, k)
		}
		slices.Sort(keys)
		parts := make([]string, len(keys))
		for i, k := range keys {
			parts[i] = fmt.Sprintf("%s %d", k, s.CheckConditions[k])
		}
		p.printf("\ncheck conditions by sense key: %s\n", strings.Join(parts, ", "))
	}
	return p.err
}

// bound prints a quantile's bucket bound.
func bound(s float64) string {
	switch {
	case s < 0:
		return ">max"
	case s == 0:
		return "-"
	}
	return "<=" + formatSeconds(s)
}

func formatSeconds(s float64) string {
	if s == 0 {
		return "-"
	}
	return time.Duration(s * float64(time.Second)).Round(time.Microsecond / 10).String()
}

func runLoad(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var df daemonFlags
	pos, err := parseDaemonCmd(loadCmd, args, stderr, 2, func(fs *flag.FlagSet) { df.add(fs, false) })
	if err != nil {
		return err
	}
	if err := control.NewClient(df.socket).Load(ctx, pos[0], pos[1]); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s: loaded %s\n", pos[0], pos[1])
	return err
}

func runUnload(ctx context.Context, s subcommand, args []string, stdout, stderr io.Writer) error {
	var df daemonFlags
	pos, err := parseDaemonCmd(s, args, stderr, 1, func(fs *flag.FlagSet) { df.add(fs, false) })
	if err != nil {
		return err
	}
	if err := control.NewClient(df.socket).Unload(ctx, pos[0]); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s: unloaded\n", pos[0])
	return err
}

var createCmd = subcommand{
	name: "create", args: "NAME TYPE CFGSTRING [--hw-max-sectors N] [--json] [--socket PATH]", summary: "create a device in the running daemon",
	help: `Creates a device in the running vscsid as if its config file listed it:
TYPE is vdisk, vtape or vlibrary, CFGSTRING the handler's key=value;... string,
checked as strictly as the config file's (vdisk needs size=). vscsid makes
the TCMU backstore and its own tcm_loop target and prints the device node
once the kernel has attached it. The device lasts until 'vscsictl delete'
or until vscsid stops; to keep it, add it to the config file.`,
}

var deleteCmd = subcommand{
	name: "delete", args: "NAME [--socket PATH]", summary: "remove a device vscsid created",
	help: `Removes a device that vscsid created (from its config file or with
'vscsictl create'): the LUN and tcm_loop target first, then the backstore,
as at vscsid's stop. A tape drive's cartridge and position are saved as at
a clean stop. Devices made with targetcli are refused: remove them with
targetcli.`,
}

func init() {
	createCmd.run = runCreate
	deleteCmd.run = runDelete
	commands = append(commands,
		command{"create", createCmd.summary, leaf(createCmd), nil},
		command{"delete", deleteCmd.summary, leaf(deleteCmd), nil},
	)
}

func runCreate(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var df daemonFlags
	var maxSectors int
	pos, err := parseDaemonCmd(createCmd, args, stderr, 3, func(fs *flag.FlagSet) {
		df.add(fs, true)
		fs.IntVar(&maxSectors, "hw-max-sectors", 0, "the backstore's hw_max_sectors (0: the kernel's default)")
	})
	if err != nil {
		return err
	}
	if maxSectors < 0 {
		return usagef("--hw-max-sectors %d: want >= 0", maxSectors)
	}
	req := control.CreateDevice{Name: pos[0], Type: pos[1], Config: pos[2], HWMaxSectors: maxSectors}
	dev, err := control.NewClient(df.socket).Create(ctx, req)
	if err != nil {
		return err
	}
	if df.json {
		return writeJSONOut(stdout, dev)
	}
	_, err = fmt.Fprintf(stdout, "%s: created %s at %s (%s, %s)\n", dev.Name, dev.Subtype, dash(dev.Address), dash(dev.Node), dash(dev.Generic))
	return err
}

func runDelete(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var df daemonFlags
	pos, err := parseDaemonCmd(deleteCmd, args, stderr, 1, func(fs *flag.FlagSet) { df.add(fs, false) })
	if err != nil {
		return err
	}
	if err := control.NewClient(df.socket).Remove(ctx, pos[0]); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s: removed\n", pos[0])
	return err
}
