package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/internal/buildinfo"
	"github.com/vscsid/vscsid/internal/clidoc"
)

// A helpEntry is one command's or subcommand's --help: its words after
// vscsictl, the text, and the flags it takes.
type helpEntry struct {
	path  []string
	text  string
	flags []string
}

// helpTexts runs every command's and every group's subcommands' --help,
// in the order of the usage: the man page and the completion scripts are
// made of them, so they say what the help says.
func helpTexts(ctx context.Context) ([]helpEntry, error) {
	var es []helpEntry
	help := func(c command, path ...string) error {
		var out bytes.Buffer
		err := c.run(ctx, append(path[1:], "--help"), &out, io.Discard)
		e := helpEntry{path: path}
		var he helpError
		switch {
		case errors.As(err, &he):
			e.text, e.flags = he.text, he.flags
		case err == nil && out.Len() > 0: // fault help: the grammar
			e.text = out.String()
		default:
			return fmt.Errorf("vscsictl %s --help gave no help: %w", strings.Join(path, " "), err)
		}
		es = append(es, e)
		return nil
	}
	for _, c := range commands {
		if c.subs == nil {
			if err := help(c, c.name); err != nil {
				return nil, err
			}
			continue
		}
		for _, s := range c.subs {
			if err := help(c, c.name, s.name); err != nil {
				return nil, err
			}
		}
	}
	return es, nil
}

// writeManPage writes vscsictl(1): every command's and subcommand's own
// --help (synopsis, description, flags), so the page holds exactly what
// the help says (vscsictl --help-man; the package installs it).
func writeManPage(ctx context.Context, w io.Writer) error {
	entries, err := helpTexts(ctx)
	if err != nil {
		return err
	}
	var cmds []clidoc.Item
	for _, e := range entries {
		heading, body := "vscsictl "+strings.Join(e.path, " "), e.text
		if u, rest, ok := strings.Cut(body, "\n"); ok && strings.HasPrefix(u, "usage: ") {
			heading, body = strings.TrimPrefix(u, "usage: "), rest
		}
		cmds = append(cmds, clidoc.Item{Heading: heading, Text: strings.TrimSpace(body), Pre: true})
	}
	var list strings.Builder
	printUsage(&list)
	p := clidoc.Page{
		Name: "vscsictl", Section: 1, Date: buildinfo.Date(), Source: "vscsid " + buildinfo.Version(), Manual: "vscsid manual",
		Summary:  "manage vscsid's cartridges, libraries, devices and faults",
		Synopsis: []string{"vscsictl COMMAND [SUBCOMMAND] [ARGUMENTS] [FLAGS]", "vscsictl COMMAND --help", "vscsictl --version"},
		Sections: []clidoc.Section{
			{Title: "DESCRIPTION", Items: []clidoc.Item{
				{Text: `vscsictl manages what vscsid serves: the tape cartridge images of a media directory (vscsictl media), and, through the running daemon's control socket, its devices, their statistics, the cartridges in its tape drives, its libraries and fault injection. Flags may come before, between or after the arguments.`},
				{Text: strings.TrimSpace(strings.TrimPrefix(list.String(), "usage: vscsictl <command> [arguments]\n")), Pre: true},
			}},
			{Title: "COMMANDS", Items: cmds},
			{Title: "ENVIRONMENT", Items: []clidoc.Item{
				{Tag: "VSCSID_MEDIA_DIR", Text: "The media directory of vscsictl media when --dir is not given (default " + defaultMediaDir + ")."},
			}},
			{Title: "FILES", Items: []clidoc.Item{
				{Tag: control.DefaultSocket, Text: "vscsid's control socket (root only), which the daemon commands use unless --socket says otherwise."},
				{Tag: defaultMediaDir, Text: "The default media directory: cartridge images BARCODE.vtape."},
			}},
			{Title: "EXIT STATUS", Items: []clidoc.Item{{Text: "0 on success and for help asked for; 1 when the command failed; 2 for a command line mistake."}}},
			{Title: "EXAMPLES", Items: []clidoc.Item{
				{Tag: "vscsictl media create --dir /var/lib/vscsid/library --barcode B00001L9 --count 10 --capacity 8GiB", Text: "Create ten labelled cartridges for a library."},
				{Tag: "vscsictl devices", Text: "List the devices the running vscsid serves, with their /dev nodes."},
				{Tag: "vscsictl load tape0 TAPE01", Text: "Load cartridge TAPE01 into the drive tape0."},
				{Tag: "vscsictl fault add disk0 'op=read;lba=0x1234+10;sense=medium_error/0x11/0x00;count=1'", Text: "Fail the next read of ten blocks at LBA 0x1234 with MEDIUM ERROR 11/00."},
			}},
			{Title: "SEE ALSO", Items: []clidoc.Item{{Text: "vscsid(8), targetcli(8), mt(1), mtx(1)"}}},
		},
	}
	return p.Write(w)
}
