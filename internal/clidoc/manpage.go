// Package clidoc documents the binaries' command lines from their
// definitions: the flag list --help prints (with the double dashes the
// binaries are used with) and man pages in the man(7) macros, so that the
// page and the help cannot drift apart. One writer for both binaries: the
// escaping of roff is easy to get subtly wrong twice.
package clidoc

import (
	"fmt"
	"io"
	"strings"
)

// Page is one man page.
type Page struct {
	Name    string // the command, e.g. "vscsid"
	Section int    // 1 (commands) or 8 (daemons)
	Date    string // YYYY-MM-DD of the build's commit
	Source  string // e.g. "vscsid 0.1.0"
	Manual  string // e.g. "vscsid manual"
	Summary string // the NAME line after the dash
	// Synopsis holds one invocation per line; the command name is set in
	// bold, the rest as written.
	Synopsis []string
	Sections []Section
}

// Section is a top-level section (.SH): DESCRIPTION, OPTIONS, FILES, ...
type Section struct {
	Title string
	Items []Item
}

// Item is one paragraph of a section.
type Item struct {
	// Heading, if set, starts a subsection (.SS) before the paragraph.
	Heading string
	// Tag, if set, makes a tagged paragraph (.TP): an option, a file, a
	// signal, with Text indented under it. It is set in bold.
	Tag string
	// Text is prose (filled by the formatter; blank lines separate
	// paragraphs) unless Pre, when it is printed line for line.
	Text string
	Pre  bool
}

// Write writes the page's roff source to w.
func (p *Page) Write(w io.Writer) error {
	var b strings.Builder
	fmt.Fprintf(&b, ".TH %s %d %q %q %q\n", strings.ToUpper(p.Name), p.Section, p.Date, p.Source, p.Manual)
	fmt.Fprintf(&b, ".SH NAME\n%s \\- %s\n", escape(p.Name), escape(p.Summary))
	if len(p.Synopsis) > 0 {
		b.WriteString(".SH SYNOPSIS\n")
		for i, s := range p.Synopsis {
			if i > 0 {
				b.WriteString(".br\n")
			}
			cmd, rest, _ := strings.Cut(s, " ")
			fmt.Fprintf(&b, "\\fB%s\\fR %s\n", escape(cmd), escape(rest))
		}
	}
	for _, s := range p.Sections {
		fmt.Fprintf(&b, ".SH %s\n", escapeLine(s.Title))
		for _, it := range s.Items {
			if it.Heading != "" {
				fmt.Fprintf(&b, ".SS %s\n", escapeLine(it.Heading))
			}
			switch {
			case it.Tag != "":
				fmt.Fprintf(&b, ".TP\n\\fB%s\\fR\n", escape(it.Tag))
			case !it.Pre:
				b.WriteString(".PP\n")
			}
			writeText(&b, it.Text, it.Pre)
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// writeText writes prose as filled paragraphs (.PP between them, or .IP
// inside a tagged paragraph is not needed: a blank line ends the text) or
// preformatted lines between .nf and .fi.
func writeText(b *strings.Builder, text string, pre bool) {
	text = strings.Trim(text, "\n")
	if pre {
		b.WriteString(".RS 2\n.nf\n")
		for l := range strings.SplitSeq(text, "\n") {
			b.WriteString(escapeLine(l) + "\n")
		}
		b.WriteString(".fi\n.RE\n")
		return
	}
	first := true
	for para := range strings.SplitSeq(text, "\n\n") {
		if !first {
			b.WriteString(".sp\n")
		}
		first = false
		for l := range strings.SplitSeq(strings.TrimSpace(para), "\n") {
			b.WriteString(escapeLine(strings.TrimSpace(l)) + "\n")
		}
	}
}

// escape makes s literal text for roff: backslashes and hyphens (which
// roff would set as a hyphen, not the minus of an option) escaped.
func escape(s string) string {
	s = strings.ReplaceAll(s, `\`, `\e`)
	return strings.ReplaceAll(s, "-", `\-`)
}

// escapeLine is escape for a whole line, which also must not start with a
// control character (a dot or an apostrophe).
func escapeLine(s string) string {
	s = escape(s)
	if strings.HasPrefix(s, ".") || strings.HasPrefix(s, "'") {
		s = `\&` + s
	}
	return s
}
