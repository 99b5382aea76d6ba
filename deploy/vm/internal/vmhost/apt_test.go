package vmhost

import (
	"os"
	"path/filepath"
	"testing"
)

func TestAptSourceURI(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	list := write("a.list", "# deb http://commented/ bookworm main\n"+
		"deb-src http://src/ bookworm main\n"+
		"deb [arch=amd64 signed-by=/k.gpg] http://opts/debian bookworm contrib main # comment\n"+
		"deb http://plain/debian trixie main\n")
	sources := write("b.sources", "Types: deb\nURIs: http://off/\nSuites: sid\nComponents: main\nEnabled: no\n\n"+
		"# a comment\nTypes: deb deb-src\nURIs: http://on/debian\n  http://second/\nSuites: sid\n experimental\nComponents: main contrib\n\n"+
		"Types: deb\nURIs: http://last/\nSuites: forky\nComponents: main")
	files := []string{filepath.Join(dir, "missing.list"), list, sources}
	for suite, want := range map[string]string{
		"bookworm":     "http://opts/debian/",
		"trixie":       "http://plain/debian/",
		"sid":          "http://on/debian/",
		"experimental": "http://on/debian/", // a continuation line of Suites
		"forky":        "http://last/",      // the last stanza, with no blank line after it
		"buster":       "",
	} {
		if got := AptSourceURI(files, suite); got != want {
			t.Errorf("AptSourceURI(%s) = %q, want %q", suite, got, want)
		}
	}
}
