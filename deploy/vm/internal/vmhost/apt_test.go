package vmhost

import (
	"os"
	"path/filepath"
	"testing"
)

// TestAptSourceURI reads made-up sources (.invalid hosts: no mirror is
// named in the repository).
func TestAptSourceURI(t *testing.T) {
	dir := t.TempDir()
	write := func(name, s string) string {
		f := filepath.Join(dir, name)
		if err := os.WriteFile(f, []byte(s), 0o644); err != nil {
			t.Fatal(err)
		}
		return f
	}
	list := write("a.list", "# deb http://commented.invalid/ bookworm main\n"+
		"deb-src http://src.invalid/ bookworm main\n"+
		"deb [arch=amd64 signed-by=/k.gpg] http://opts.invalid/repo bookworm contrib main # comment\n"+
		"deb http://plain.invalid/repo trixie main\n")
	sources := write("b.sources", "Types: deb\nURIs: http://off.invalid/\nSuites: sid\nComponents: main\nEnabled: no\n\n"+
		"# a comment\nTypes: deb deb-src\nURIs: http://on.invalid/repo\n  http://second.invalid/\nSuites: sid\n experimental\nComponents: main contrib\n\n"+
		"Types: deb\nURIs: http://last.invalid/\nSuites: forky\nComponents: main")
	files := []string{filepath.Join(dir, "missing.list"), list, sources}
	for suite, want := range map[string]string{
		"bookworm":     "http://opts.invalid/repo/",
		"trixie":       "http://plain.invalid/repo/",
		"sid":          "http://on.invalid/repo/",
		"experimental": "http://on.invalid/repo/", // a continuation line of Suites
		"forky":        "http://last.invalid/",    // the last stanza, with no blank line after it
		"buster":       "",
	} {
		if got := AptSourceURI(files, suite); got != want {
			t.Errorf("AptSourceURI(%s) = %q, want %q", suite, got, want)
		}
	}
}
