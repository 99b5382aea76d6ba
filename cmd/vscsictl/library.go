package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"strconv"
	"strings"
	"text/tabwriter"

	"github.com/vscsid/vscsid/cmd/internal/control"
)

// vscsictl library: a vlibrary's front panel over the control socket
// (cmd/vscsid/library.go).

var librarySubs = []subcommand{
	{name: "status", args: "LIBRARY [--json] [--socket PATH]", summary: "show every element and what it holds",
		help: `Shows the library's drives, storage slots and mail slots with their SCSI
element address, barcode, the element a cartridge came from (SValid), the
drive's vtape device, and the exported cartridges (outside the library).`},
	{name: "move", args: "LIBRARY FROM TO [--socket PATH]", summary: "move a cartridge, as the front panel does",
		help: `Moves the cartridge in element FROM to element TO. Elements are named
as mtx numbers them: slotN (storage, from 1), mailN (import/export, from
1), driveN (from 0). A move into a drive loads the cartridge, a move out
of one unloads it first; the library then reports UNIT ATTENTION 28/00 to
its initiators. The same conditions as MOVE MEDIUM refuse it: source
empty, destination full, a drive held by PREVENT MEDIUM REMOVAL.`},
	{name: "import", args: "LIBRARY BARCODE [--socket PATH]", summary: "put a cartridge of the media directory into a mail slot",
		help: `Puts cartridge BARCODE, whose image is in the library's media directory
(vscsictl media create) and which is not in the library, into the first
free mail slot, as an operator does through the door; the library reports
UNIT ATTENTION 28/01 and software sees it with 'mtx status'.`},
	{name: "export", args: "LIBRARY mailN [--socket PATH]", summary: "take the cartridge out of a mail slot",
		help: `Takes the cartridge out of mail slot N (from 1): it leaves the library (its
image stays in the media directory until 'vscsictl library import' brings
it back); the library reports UNIT ATTENTION 28/01.`},
}

func init() {
	for i := range librarySubs {
		s := &librarySubs[i]
		s.run = func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
			return runLibrary(ctx, *s, args, stdout, stderr)
		}
	}
	commands = append(commands, command{"library", "a vlibrary's inventory, moves, imports and exports", func(ctx context.Context, args []string, stdout, stderr io.Writer) error {
		return dispatch(ctx, "library", librarySubs, args, stdout, stderr)
	}, librarySubs})
}

// elementName spells an element as vscsictl and mtx number it.
func elementName(r control.ElementRef) string {
	switch r.Type {
	case "storage":
		return "slot" + strconv.Itoa(r.Index+1)
	case "mail":
		return "mail" + strconv.Itoa(r.Index+1)
	}
	return r.Type + strconv.Itoa(r.Index)
}

// parseElement reads an element name (elementName).
func parseElement(s string) (control.ElementRef, error) {
	for _, p := range []struct {
		prefix, typ string
		base        int
	}{{"slot", "storage", 1}, {"mail", "mail", 1}, {"drive", "drive", 0}} {
		n, ok := strings.CutPrefix(s, p.prefix)
		if !ok {
			continue
		}
		i, err := strconv.Atoi(n)
		if err != nil || i < p.base || n != strconv.Itoa(i) {
			break
		}
		return control.ElementRef{Type: p.typ, Index: i - p.base}, nil
	}
	return control.ElementRef{}, usagef("element %q: want slotN or mailN (from 1) or driveN (from 0)", s)
}

func runLibrary(ctx context.Context, s subcommand, args []string, stdout, stderr io.Writer) error {
	n := map[string]int{"status": 1, "move": 3, "import": 2, "export": 2}[s.name]
	var df daemonFlags
	s.name = "library " + s.name
	pos, err := parseDaemonCmd(s, args, stderr, n, func(fs *flag.FlagSet) { df.add(fs, s.name == "library status") })
	if err != nil {
		return err
	}
	c := control.NewClient(df.socket)
	switch s.name {
	case "library status":
		l, err := c.Library(ctx, pos[0])
		if err != nil {
			return err
		}
		if df.json {
			return writeJSONOut(stdout, l)
		}
		return printLibrary(stdout, l)
	case "library move":
		from, err := parseElement(pos[1])
		if err != nil {
			return err
		}
		to, err := parseElement(pos[2])
		if err != nil {
			return err
		}
		if err := c.Move(ctx, pos[0], control.Move{From: from, To: to}); err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s: moved %s to %s\n", pos[0], pos[1], pos[2])
		return err
	case "library import":
		e, err := c.Import(ctx, pos[0], pos[1])
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s: %s imported into %s\n", pos[0], e.Barcode, elementName(e.ElementRef))
		return err
	case "library export":
		r, err := parseElement(pos[1])
		if err != nil {
			return err
		}
		if r.Type != "mail" {
			return usagef("export %s: cartridges leave through a mail slot (mailN); move it there first", pos[1])
		}
		e, err := c.Export(ctx, pos[0], r.Index)
		if err != nil {
			return err
		}
		_, err = fmt.Fprintf(stdout, "%s: %s exported from %s\n", pos[0], e.Barcode, pos[1])
		return err
	}
	return nil
}

func printLibrary(w io.Writer, l control.Library) error {
	count := map[string]int{}
	for _, e := range l.Elements {
		count[e.Type]++
	}
	if _, err := fmt.Fprintf(w, "%s: %s, serial %s; %d drives, %d slots, %d mail slots\n", l.Name, l.Personality, l.Serial,
		count["drive"], count["storage"], count["mail"]); err != nil {
		return err
	}
	tw := tabwriter.NewWriter(w, 0, 4, 2, ' ', 0)
	p := &printer{w: tw}
	p.println("ELEMENT\tADDRESS\tBARCODE\tFROM\tDEVICE")
	for _, e := range l.Elements {
		bc, from := e.Barcode, ""
		if bc == "" {
			bc = "-"
		}
		if e.ImpExp {
			bc += " (imported)"
		}
		if e.Source != nil {
			from = elementName(*e.Source)
		}
		p.printf("%s\t0x%04x\t%s\t%s\t%s\n", elementName(e.ElementRef), e.Address, bc, from, e.Device)
	}
	if len(l.Outside) > 0 {
		p.printf("outside the library (exported): %s\n", strings.Join(l.Outside, " "))
	}
	return p.done(tw.Flush)
}
