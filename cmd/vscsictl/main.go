// Command vscsictl manages what vscsid serves: the tape cartridge images of
// a media directory (vscsictl media ...), and, through the running
// daemon's control socket, its devices, their statistics and the
// cartridges in its tape drives (devices, stats, create, delete, load,
// unload, eject, fault).
package main

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/internal/buildinfo"
	"github.com/vscsid/vscsid/internal/clidoc"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, unix.SIGTERM)
	err := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	var ue usageError
	switch {
	case err == nil:
	case errors.Is(err, flag.ErrHelp):
	case errors.As(err, &ue):
		fmt.Fprintln(os.Stderr, "vscsictl:", err)
		os.Exit(2)
	default:
		fmt.Fprintln(os.Stderr, "vscsictl:", err)
		os.Exit(1)
	}
}

// A command is one subcommand: run gets the arguments after its name.
type command struct {
	name    string
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
	// subs are a group's subcommands (media, fault, library), for the man
	// page; nil for a command without them.
	subs []subcommand
}

// commands is the dispatch table; add a subcommand here.
var commands = []command{
	{"media", "create, inspect, import and export tape cartridge images", runMedia, nil}, // subs: init
}

// usageError is a command line mistake: main exits 2 for it.
type usageError struct{ msg string }

func (e usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error {
	return usageError{fmt.Sprintf(format, args...)}
}

// run executes the command line args (without the program name). It
// returns flag.ErrHelp after printing help that was asked for (to stdout;
// usage after a mistake goes to stderr).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	err := run1(ctx, args, stdout, stderr)
	var he helpError
	if errors.As(err, &he) {
		_, _ = io.WriteString(stdout, he.text)
		return flag.ErrHelp
	}
	return err
}

// helpError is flag.ErrHelp with the help text a subcommand's flag set
// printed, for run to write to stdout, and the flags it defines (the
// completion script lists them).
type helpError struct {
	text  string
	flags []string
}

func (e helpError) Error() string        { return flag.ErrHelp.Error() }
func (e helpError) Is(target error) bool { return target == flag.ErrHelp }

func run1(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	if len(args) == 0 {
		printUsage(stderr)
		return usagef("no command given")
	}
	name := args[0]
	if name == "-h" || name == "-help" || name == "--help" || name == "help" {
		printUsage(stdout)
		return flag.ErrHelp
	}
	if name == "--help-man" { // hidden: the package's man page
		return writeManPage(ctx, stdout)
	}
	if name == "--completion-bash" || name == "--completion-zsh" { // hidden: the package's completion scripts
		return writeCompletion(ctx, stdout, strings.TrimPrefix(name, "--completion-"))
	}
	if name == "-V" || name == "--version" || name == "version" {
		_, err := fmt.Fprintln(stdout, buildinfo.Print("vscsictl"))
		return err
	}
	for _, c := range commands {
		if c.name == name {
			return c.run(ctx, args[1:], stdout, stderr)
		}
	}
	printUsage(stderr)
	return usagef("unknown command %q", name)
}

func printUsage(w io.Writer) {
	_, _ = fmt.Fprintln(w, "usage: vscsictl <command> [arguments]\n\ncommands:")
	for _, c := range commands {
		_, _ = fmt.Fprintf(w, "  %-8s %s\n", c.name, c.summary)
	}
	_, _ = fmt.Fprintln(w, "  version  print vscsictl's version (also -V, --version)")
	_, _ = fmt.Fprintln(w, "\nRun 'vscsictl <command> --help' for the command's subcommands.")
}

// subcommand is a leaf command with its own flag set.
type subcommand struct {
	name    string
	args    string // synopsis after the name, e.g. "--dir DIR --barcode B"
	summary string
	help    string // longer description
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

// dispatch runs the subcommand named by args[0] from subs.
func dispatch(ctx context.Context, group string, subs []subcommand, args []string, stdout, stderr io.Writer) error {
	usage := func(w io.Writer) {
		_, _ = fmt.Fprintf(w, "usage: vscsictl %s <subcommand> [flags]\n\nsubcommands:\n", group)
		for _, s := range subs {
			_, _ = fmt.Fprintf(w, "  %-8s %s\n", s.name, s.summary)
		}
		_, _ = fmt.Fprintf(w, "\nRun 'vscsictl %s <subcommand> --help' for its flags.\n", group)
	}
	if len(args) == 0 {
		usage(stderr)
		return usagef("%s: no subcommand given", group)
	}
	if a := args[0]; a == "-h" || a == "-help" || a == "--help" || a == "help" {
		usage(stdout)
		return flag.ErrHelp
	}
	for _, s := range subs {
		if s.name == args[0] {
			if err := s.run(ctx, args[1:], stdout, stderr); err != nil {
				var ue usageError
				if errors.As(err, &ue) {
					return usagef("%s %s: %s", group, s.name, ue.msg)
				}
				if errors.Is(err, flag.ErrHelp) {
					return err
				}
				return fmt.Errorf("%s %s: %w", group, s.name, err)
			}
			return nil
		}
	}
	usage(stderr)
	return usagef("%s: unknown subcommand %q", group, args[0])
}

// newFlagSet returns a flag set for group/sub whose usage prints the
// synopsis, the description and the flags (to fs.Output()).
func newFlagSet(group string, s subcommand, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(group+" "+s.name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		_, _ = fmt.Fprintf(fs.Output(), "usage: vscsictl %s %s %s\n\n%s\n", group, s.name, s.args, strings.TrimSpace(s.help))
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			_, _ = fmt.Fprintln(fs.Output(), "\nflags:")
			clidoc.PrintFlags(fs.Output(), fs)
		}
	}
	return fs
}

// parseInterleaved parses flags that may come before, between or after
// the positional arguments (flag stops at the first positional one) and
// returns the positional arguments. Everything after "--" is positional.
// Help that was asked for comes back as a helpError, for stdout; other
// output of the flag set goes to its output as usual.
func parseInterleaved(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		// flag.Parse swallows "--"; find it first.
		dd := -1
		for i, a := range args {
			if a == "--" {
				dd = i
				break
			}
		}
		head, tail := args, []string(nil)
		if dd >= 0 {
			head, tail = args[:dd], args[dd+1:]
		}
		w := fs.Output()
		var buf bytes.Buffer
		fs.SetOutput(&buf)
		err := fs.Parse(head)
		fs.SetOutput(w)
		if errors.Is(err, flag.ErrHelp) {
			var names []string
			fs.VisitAll(func(f *flag.Flag) { names = append(names, "--"+f.Name) })
			return nil, helpError{buf.String(), names}
		}
		if err != nil {
			// The flag package's message and usage are in buf: the error
			// is printed once, by main, with where to find the flags.
			return nil, usageError{fmt.Sprintf("%v\nRun 'vscsictl %s --help' for its flags.", err, fs.Name())}
		}
		_, _ = w.Write(buf.Bytes())
		rest := fs.Args()
		if len(rest) == 0 {
			return append(pos, tail...), nil
		}
		pos = append(pos, rest[0])
		args = append(rest[1:], append([]string{"--"}, tail...)...)
		if dd < 0 {
			args = rest[1:]
		}
	}
}
