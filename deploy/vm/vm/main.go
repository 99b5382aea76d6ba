//go:build linux

// Command vm is the VM harness's host side in Go (Linux only, like the
// qemu, kmod and dpkg it drives): it builds the test guests, boots them
// under qemu (TCG) and reads their results.
// Its commands are started by the harness's entry points through
// deploy/vm/lib/vm, which builds it; see deploy/vm/README.md.
//
//	vm run [options] SCENARIO...      the minimal guest (deploy/vm/run)
//	vm full-run [options]             the full guest (deploy/vm/full/run)
//	vm powercut [options]             deploy/vm/powercut
//	vm experiments [--all] NAME...    deploy/vm/experiments/run, run-all
//	vm perf [options]                 deploy/vm/perf/run
//	vm metrics-test [options]         deploy/vm/metrics-test
//	vm build-guest [options]          deploy/vm/build-guest
//	vm full-build [options]           deploy/vm/full/build
//	vm ltfs-build [--suite S]         deploy/vm/ltfs/build
//
// Exit status: 0 when the guests' verdicts are PASS, 1 when not, 2 for a
// usage error, 3 after a power cut with no failure before it (run
// --cut-on).
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

// exitError is a result other than pass (1) or a usage error (2).
type exitError int

func (e exitError) Error() string { return fmt.Sprintf("exit status %d", int(e)) }

// usageError is a bad command line: its message, then exit status 2.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, a ...any) error { return usageError{fmt.Sprintf(format, a...)} }

var commands = map[string]func(args []string, stdout io.Writer) error{
	"run":          runCmd,
	"full-run":     fullRunCmd,
	"powercut":     powercutCmd,
	"experiments":  experimentsCmd,
	"perf":         perfCmd,
	"metrics-test": metricsCmd,
	"build-guest":  buildGuestCmd,
	"full-build":   fullBuildCmd,
	"ltfs-build":   ltfsBuildCmd,
}

func main() {
	vmhost.AddToolPaths()
	if d := os.Getenv("VM_CWD"); d != "" {
		// deploy/vm/lib/vm builds from the checkout; paths on the command
		// line are the caller's.
		_ = os.Chdir(d)
	}
	if len(os.Args) < 2 || commands[os.Args[1]] == nil {
		_, _ = fmt.Fprintln(os.Stderr, "usage: vm COMMAND [options]: run, full-run, powercut, experiments, perf, metrics-test, build-guest, full-build, ltfs-build (their entry points in deploy/vm take --help)")
		os.Exit(2)
	}
	err := commands[os.Args[1]](os.Args[2:], os.Stdout)
	var ee exitError
	var ue usageError
	switch {
	case err == nil:
	case errors.As(err, &ee):
		os.Exit(int(ee))
	case errors.Is(err, flag.ErrHelp):
		os.Exit(2)
	case errors.As(err, &ue):
		_, _ = fmt.Fprintf(os.Stderr, "vm: error: %s (--help lists the options)\n", ue.msg)
		os.Exit(2)
	default:
		_, _ = fmt.Fprintf(os.Stderr, "vm: error: %v\n", err)
		os.Exit(1)
	}
}

// parse parses args into fs, options and operands in any order (as the
// shell entry points always took them), and returns the operands.
func parse(fs *flag.FlagSet, args []string) ([]string, error) {
	var operands []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				fs.SetOutput(os.Stderr)
				fs.Usage()
				return nil, err
			}
			return nil, usageError{err.Error()}
		}
		args = fs.Args()
		if len(args) == 0 {
			return operands, nil
		}
		if args[0] == "--" {
			return append(operands, args[1:]...), nil
		}
		operands = append(operands, args[0])
		args = args[1:]
	}
}

// newFlags is a flag set that prints help (the command's doc, then its
// options) on -h and --help, and its errors, on stderr.
func newFlags(name, doc string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parse prints the help, main the errors
	fs.Usage = func() {
		w := fs.Output()
		_, _ = fmt.Fprintln(w, strings.TrimSpace(doc))
		_, _ = fmt.Fprintln(w, "\noptions:")
		fs.VisitAll(func(f *flag.Flag) {
			name, usage := flag.UnquoteUsage(f)
			if f.DefValue != "" && f.DefValue != "false" && f.DefValue != "0" {
				usage += fmt.Sprintf(" (default %s)", f.DefValue)
			}
			_, _ = fmt.Fprintf(w, "  --%s %s\n", f.Name, name)
			for _, l := range strings.Split(usage, "\n") {
				_, _ = fmt.Fprintf(w, "        %s\n", l)
			}
		})
	}
	return fs
}

// repeated is a flag that may be given more than once.
type repeated []string

func (r *repeated) String() string     { return strings.Join(*r, " ") }
func (r *repeated) Set(v string) error { *r = append(*r, v); return nil }

// passArgs collects options that go on unchanged to another command
// (build-guest, full/build): "--name value", or "--name" for a boolean.
type passArgs struct {
	args *[]string
	name string
	bool bool
}

func (p passArgs) String() string { return "" }
func (p passArgs) Set(v string) error {
	*p.args = append(*p.args, "--"+p.name)
	if !p.bool {
		*p.args = append(*p.args, v)
	}
	return nil
}
func (p passArgs) IsBoolFlag() bool { return p.bool }

// parseOptions is parse for a command that takes no operands.
func parseOptions(fs *flag.FlagSet, args []string) error {
	rest, err := parse(fs, args)
	if err == nil && len(rest) > 0 {
		err = usagef("unknown argument %q", rest[0])
	}
	return err
}

// suiteValue is a --suite: one of vmhost.Suites, checked when given.
type suiteValue struct{ p *string }

func (s suiteValue) String() string {
	if s.p == nil {
		return ""
	}
	return *s.p
}

func (s suiteValue) Set(v string) error {
	if err := vmhost.CheckSuite(v); err != nil {
		return err
	}
	*s.p = v
	return nil
}

// suiteFlag defines --suite (or name) into p, DefaultSuite unless given.
func suiteFlag(fs *flag.FlagSet, p *string, name, usage string) {
	*p = vmhost.DefaultSuite
	fs.Var(suiteValue{p}, name, usage+" (`SUITE`: "+strings.Join(vmhost.Suites, ", ")+")")
}
