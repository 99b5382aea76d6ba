package main

import (
	"bytes"
	"flag"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/internal/buildinfo"
	"github.com/vscsid/vscsid/internal/device"
)

// TestHelpExitCodes checks that help that was asked for goes to stdout
// with exit status 0, and a command line mistake prints the usage on
// stderr with exit status 2, as vscsictl does.
func TestHelpExitCodes(t *testing.T) {
	for _, tc := range []struct {
		args       []string
		code       int
		out, noOut string // want in stdout, stderr; want nothing in the other
	}{
		{[]string{"--help"}, 0, "stdout", "stderr"},
		{[]string{"-h"}, 0, "stdout", "stderr"},
		{[]string{"--nope"}, 2, "stderr", "stdout"},
		{[]string{"extra"}, 2, "stderr", "stdout"},
		{[]string{"--log.format", "xml"}, 2, "", "stdout"},
		{[]string{"--on-stop", "later"}, 2, "", "stdout"},
	} {
		var stdout, stderr bytes.Buffer
		err := run(t.Context(), tc.args, &stdout, &stderr)
		if got := exitCode(err); got != tc.code {
			t.Errorf("%q: exit %d (%v), want %d", tc.args, got, err, tc.code)
		}
		streams := map[string]*bytes.Buffer{"stdout": &stdout, "stderr": &stderr}
		if w := tc.out; w != "" && !strings.Contains(streams[w].String(), "Usage: vscsid [flags]") {
			t.Errorf("%q: %s lacks the usage: %q", tc.args, w, streams[w])
		}
		if s := streams[tc.noOut].String(); s != "" {
			t.Errorf("%q: %s = %q, want nothing", tc.args, tc.noOut, s)
		}
	}
	if got := exitCode(nil); got != 0 {
		t.Errorf("exitCode(nil) = %d", got)
	}
}

func TestVersion(t *testing.T) {
	var stdout, stderr bytes.Buffer
	err := run(t.Context(), []string{"--version"}, &stdout, &stderr)
	if err != nil || stderr.Len() != 0 || !strings.HasPrefix(stdout.String(), "vscsid, version "+buildinfo.Version()) {
		t.Errorf("--version: error %v, stdout %q, stderr %q", err, &stdout, &stderr)
	}
}

// mustKind is the kind of subtype, for tests.
func mustKind(subtype string) device.Kind {
	k, ok := config.KindOf(subtype)
	if !ok {
		panic("no kind " + subtype)
	}
	return k
}

// The man page is made from the same flag definitions and help text:
// every flag is in its OPTIONS, every device kind in DEVICE TYPES, and it
// has the sections a daemon's page needs.
func TestManPage(t *testing.T) {
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"--help-man"}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	page := stdout.String()
	for _, s := range []string{".TH VSCSID 8", ".SH SYNOPSIS", ".SH OPTIONS", ".SH DEVICE TYPES", ".SH FILES", ".SH SIGNALS", ".SH EXIT STATUS", ".SH EXAMPLES", ".SH SEE ALSO"} {
		if !strings.Contains(page, s+"\n") && !strings.Contains(page, s+" ") {
			t.Errorf("man page lacks %s", s)
		}
	}
	newFlagSet(&options{}).VisitAll(func(f *flag.Flag) {
		if !strings.Contains(page, `\fB\-\-`+strings.ReplaceAll(f.Name, "-", `\-`)) {
			t.Errorf("man page lacks --%s", f.Name)
		}
	})
	for _, k := range config.Kinds {
		if !strings.Contains(page, ".SS "+k.Subtype+"\n") {
			t.Errorf("man page lacks device type %s", k.Subtype)
		}
	}
}
