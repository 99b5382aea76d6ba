package clidoc

import (
	"bytes"
	"testing"
)

func TestWrite(t *testing.T) {
	p := Page{
		Name: "vscsid", Section: 8, Date: "2026-12-06", Source: "vscsid 0.1.0", Manual: "vscsid manual",
		Summary:  "emulated SCSI devices",
		Synopsis: []string{"vscsid [flags]", "vscsid --check-config [FILE]"},
		Sections: []Section{
			{Title: "DESCRIPTION", Items: []Item{{Text: "First line\nsecond line.\n\n.dot at the start, a back\\slash."}}},
			{Title: "OPTIONS", Items: []Item{{Tag: "--config FILE", Text: "the config file"}}},
			{Title: "DEVICE TYPES", Items: []Item{{Heading: "vdisk", Text: "  size  bytes\n.keep", Pre: true}}},
		},
	}
	var b bytes.Buffer
	if err := p.Write(&b); err != nil {
		t.Fatal(err)
	}
	want := `.TH VSCSID 8 "2026-12-06" "vscsid 0.1.0" "vscsid manual"
.SH NAME
vscsid \- emulated SCSI devices
.SH SYNOPSIS
\fBvscsid\fR [flags]
.br
\fBvscsid\fR \-\-check\-config [FILE]
.SH DESCRIPTION
.PP
First line
second line.
.sp
\&.dot at the start, a back\eslash.
.SH OPTIONS
.TP
\fB\-\-config FILE\fR
the config file
.SH DEVICE TYPES
.SS vdisk
.RS 2
.nf
  size  bytes
\&.keep
.fi
.RE
`
	if got := b.String(); got != want {
		t.Errorf("page:\n%s\nwant:\n%s", got, want)
	}
}
