// Package buildinfo is the version of this build, for --version and the
// start-up log: the variables of github.com/prometheus/common/version,
// which make build and the package stamp (deploy/version --ldflags) and the
// metric vscsi_build_info reports. A build that did not stamp them (go
// build, go install) gets what the Go toolchain recorded: a release's
// module version, else "devel", and the commit's time as the build date.
package buildinfo

import (
	"fmt"
	"regexp"
	"runtime/debug"
	"strings"

	"github.com/prometheus/common/version"
)

// pseudo matches a Go pseudo-version's time and commit part
// (v0.0.0-20261206055938-a809247e092e): a commit, not a release.
var pseudo = regexp.MustCompile(`[-.]\d{14}-[0-9a-f]{12}`)

func init() {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		if version.Version == "" {
			version.Version = "devel"
		}
		return
	}
	fill(bi)
}

// fill completes the version variables the build left empty from bi.
func fill(bi *debug.BuildInfo) {
	if version.Version == "" {
		v := bi.Main.Version
		if v == "" || v == "(devel)" || pseudo.MatchString(v) {
			v = "devel"
		}
		version.Version = strings.TrimPrefix(v, "v")
	}
	if version.BuildDate == "" {
		for _, s := range bi.Settings {
			if s.Key == "vcs.time" {
				version.BuildDate = s.Value
			}
		}
	}
}

// Version is this build's version: X.Y.Z, X.Y.Z-dev.STAMP+SHA or devel.
func Version() string { return version.Version }

// Date is the build date as YYYY-MM-DD (man pages' date), "" if unknown.
// BuildDate is make build's 20060102-15:04:05 or the toolchain's RFC 3339.
func Date() string {
	d := version.BuildDate
	switch {
	case len(d) >= 8 && !strings.Contains(d[:8], "-"):
		return d[:4] + "-" + d[4:6] + "-" + d[6:8]
	case len(d) >= 10:
		return d[:10]
	}
	return ""
}

// Print is the --version text of program in the form of the Prometheus
// tools' (version, branch and revision, build date, Go version, platform),
// without the fields this build does not know.
func Print(program string) string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s, version %s", program, version.Version)
	var paren []string
	if version.Branch != "" {
		paren = append(paren, "branch: "+version.Branch)
	}
	if r := version.GetRevision(); r != "" && r != "unknown" {
		paren = append(paren, "revision: "+r)
	}
	if len(paren) > 0 {
		fmt.Fprintf(&b, " (%s)", strings.Join(paren, ", "))
	}
	if version.BuildDate != "" {
		fmt.Fprintf(&b, "\n  build date:       %s", version.BuildDate)
	}
	fmt.Fprintf(&b, "\n  go version:       %s\n  platform:         %s/%s", version.GoVersion, version.GoOS, version.GoArch)
	return b.String()
}
