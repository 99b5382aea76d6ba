//go:build linux

package main

import (
	"io"
	"os"
	"os/exec"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

const metricsDoc = `
usage: deploy/vm/metrics-test [options]

vscsid's metrics through a real Prometheus server. Boots the guest with
the "metrics" scenario and a qemu user-network NIC whose forwards bind to
127.0.0.1 only (vscsid's 9544, and 9545 for the "done" signal), starts the
host's Prometheus (Debian's prometheus package, installed when missing) on
127.0.0.1 scraping the forward every second with
deploy/prometheus/rules.yml loaded, and once the guest has run its known
workload and printed its own figures ("METRICS-GUEST key value", then
VMTEST-METRICS-READY):
  - PromQL returns exactly the guest's own counts and histogram buckets;
  - promtool check metrics on a live scrape through the forward is clean;
  - every expression of deploy/grafana/vscsid.json (Grafana variables
    substituted as for deploy/prometheus/check.sh) and every rule of
    rules.yml evaluates with status success; the empty ones are listed
    (EMPTY lines) with the reason where it is known.
Then it tells the guest to finish, collects the guest's verdict, and
prints PASS/FAIL lines and one "N passed, N failed" line (guest and host
checks together). Exit status 0 only when everything passed. The host
side is deploy/vm/promcheck ("promcheck vm").`

func metricsCmd(args []string, stdout io.Writer) error {
	suite, noBuild, keep := vmhost.DefaultSuite, false, false
	fs := newFlags("metrics-test", metricsDoc)
	suiteFlag(fs, &suite, "suite", "the guest's Debian suite")
	fs.BoolVar(&noBuild, "no-build", false, "boot the guest already in deploy/vm/out/SUITE/")
	fs.BoolVar(&keep, "keep", false, "keep the Prometheus directory (config, TSDB, log)")
	if err := parseOptions(fs, args); err != nil {
		return err
	}
	d, err := vmhost.FindDirs()
	if err != nil {
		return err
	}
	if err := vmhost.EnsureCommands("prometheus:prometheus", "promtool:prometheus"); err != nil {
		return err
	}
	promcheck, err := vmhost.GoCommand(d, "./deploy/vm/promcheck")
	if err != nil {
		return err
	}
	pargs := []string{"vm", "-repo", d.Repo, "-suite", suite}
	if noBuild {
		pargs = append(pargs, "-no-build")
	}
	if keep {
		pargs = append(pargs, "-keep")
	}
	cmd := exec.Command(promcheck, pargs...)
	cmd.Stdout, cmd.Stderr = stdout, os.Stderr
	if err := cmd.Run(); err != nil && cmd.ProcessState == nil {
		return err
	}
	if rc := cmd.ProcessState.ExitCode(); rc != 0 {
		return exitError(rc)
	}
	return nil
}
