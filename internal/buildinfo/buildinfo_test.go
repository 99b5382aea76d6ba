package buildinfo

import (
	"runtime/debug"
	"strings"
	"testing"

	"github.com/prometheus/common/version"
)

func TestFill(t *testing.T) {
	for _, tc := range []struct {
		stamped, main, want string
	}{
		{"0.1.0", "v0.2.0", "0.1.0"}, // make build's stamp wins
		{"", "v0.2.0", "0.2.0"},      // go install module@v0.2.0
		{"", "(devel)", "devel"},
		{"", "v0.0.0-20261206055938-a809247e092e+dirty", "devel"},
		{"", "v0.1.1-0.20261206055938-a809247e092e", "devel"},
	} {
		old := version.Version
		oldDate := version.BuildDate
		version.Version, version.BuildDate = tc.stamped, ""
		fill(&debug.BuildInfo{Main: debug.Module{Version: tc.main}, Settings: []debug.BuildSetting{{Key: "vcs.time", Value: "2026-12-06T05:59:38Z"}}})
		if got := Version(); got != tc.want {
			t.Errorf("stamped %q, module %q: version %q, want %q", tc.stamped, tc.main, got, tc.want)
		}
		if version.BuildDate != "2026-12-06T05:59:38Z" {
			t.Errorf("build date %q, want the commit's time", version.BuildDate)
		}
		version.Version, version.BuildDate = old, oldDate
	}
}

func TestPrint(t *testing.T) {
	old := [4]string{version.Version, version.Revision, version.Branch, version.BuildDate}
	defer func() {
		version.Version, version.Revision, version.Branch, version.BuildDate = old[0], old[1], old[2], old[3]
	}()
	version.Version, version.Revision, version.Branch, version.BuildDate = "0.1.0", "a809247e092ee291617a1203029284bfa155d0bf", "main", "20261206-05:59:38"
	got := Print("vscsid")
	want := "vscsid, version 0.1.0 (branch: main, revision: a809247e092ee291617a1203029284bfa155d0bf)\n  build date:       20261206-05:59:38\n  go version:       " +
		version.GoVersion + "\n  platform:         " + version.GoOS + "/" + version.GoArch
	if got != want {
		t.Errorf("Print:\n%s\nwant:\n%s", got, want)
	}
	version.Branch, version.BuildDate = "", ""
	if got := Print("vscsictl"); !strings.HasPrefix(got, "vscsictl, version 0.1.0 (revision: a809247e092e") || strings.Contains(got, "build date") {
		t.Errorf("Print without branch and date:\n%s", got)
	}
}

func TestDate(t *testing.T) {
	old := version.BuildDate
	defer func() { version.BuildDate = old }()
	for in, want := range map[string]string{"20261206-05:59:38": "2026-12-06", "2026-12-06T05:59:38Z": "2026-12-06", "": ""} {
		version.BuildDate = in
		if got := Date(); got != want {
			t.Errorf("Date() of %q = %q, want %q", in, got, want)
		}
	}
}
