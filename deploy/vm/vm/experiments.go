//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

const experimentsDoc = `
usage: deploy/vm/experiments/run [options] NAME...
       deploy/vm/experiments/run-all [options]

Boots the VM for each experiment (deploy/vm/scenarios/exp-NAME.sh: merging,
sg-chaining, direct-io, st-direct-io, alignment) and writes its report. One
boot per experiment (deploy/vm/run exp-NAME); sg-chaining on bookworm has a
second, of the full guest (full/run --suite chaining), for its runs over
iSCSI beside tcm_loop. The guest's results and metrics scrapes come out as
artefacts; deploy/vm/experiments/report turns them into
deploy/vm/out/experiments/NAME/report.md (NAME-SUITE/ for a suite other
than bookworm) with SVG charts, and copies the raw artefacts next to it
(raw/). run-all runs every experiment, then lists the reports. Exit status
0 when every report was written; a failed check in the guest is reported
but does not stop the report (an experiment records failures as results).`

// experimentOrder is run-all's order (by value); any other exp-*.sh
// follows.
var experimentOrder = []string{"merging", "sg-chaining", "direct-io", "st-direct-io", "alignment"}

func experimentsCmd(args []string, stdout io.Writer) error {
	suite, noBuild, all := vmhost.DefaultSuite, false, false
	fs := newFlags("experiments", experimentsDoc)
	suiteFlag(fs, &suite, "suite", "the guest's Debian suite")
	fs.BoolVar(&noBuild, "no-build", false, "use the guest already built for the suite")
	fs.BoolVar(&all, "all", false, "every experiment (run-all)")
	names, err := parse(fs, args)
	if err != nil {
		return err
	}
	d, err := vmhost.FindDirs()
	if err != nil {
		return err
	}
	scenDir := filepath.Join(d.VM, "scenarios")
	if all {
		if len(names) > 0 {
			return usagef("--all takes no names")
		}
		names, err = allExperiments(scenDir)
		if err != nil {
			return err
		}
	}
	if len(names) == 0 {
		return usagef("no experiment named")
	}
	for i, n := range names {
		names[i] = strings.TrimPrefix(n, "exp-")
		if _, err := vmhost.ScenarioFile(scenDir, "exp-"+names[i]); err != nil {
			return usagef("no experiment %q (no scenario deploy/vm/scenarios/exp-%s.sh)", n, names[i])
		}
	}
	report, err := vmhost.GoCommand(d, "./deploy/vm/experiments/report")
	if err != nil {
		return err
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	// One guest build for all the experiments (cheap when nothing changed).
	if err := buildGuest(d, suite, noBuild); err != nil {
		return err
	}
	bad := false
	for _, n := range names {
		if !experiment(stdout, d, self, report, suite, n, noBuild) {
			bad = true
		}
	}
	if all {
		_, _ = fmt.Fprintln(stdout, "\nReports:")
		for _, n := range names {
			if r := filepath.Join(experimentDir(d, suite, n), "report.md"); fileExists(r) {
				_, _ = fmt.Fprintf(stdout, "  %s\n", r)
			} else {
				_, _ = fmt.Fprintf(stdout, "  %s: no report\n", n)
			}
		}
	}
	if bad {
		return exitError(1)
	}
	return nil
}

// allExperiments lists the exp-* scenarios in experimentOrder, then the
// others.
func allExperiments(scenDir string) ([]string, error) {
	scen, err := vmhost.ScenarioNames(scenDir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, n := range experimentOrder {
		if slices.Contains(scen, "exp-"+n) {
			names = append(names, n)
		}
	}
	for _, s := range scen {
		if n, ok := strings.CutPrefix(s, "exp-"); ok && !slices.Contains(names, n) {
			names = append(names, n)
		}
	}
	return names, nil
}

func experimentDir(d vmhost.Dirs, suite, name string) string {
	dir := filepath.Join(d.Out, "experiments", name)
	if suite != vmhost.DefaultSuite {
		dir += "-" + suite
	}
	return dir
}

func fileExists(name string) bool {
	_, err := os.Stat(name)
	return err == nil
}

// runSelf runs this program's command args with its output on stdout as
// it comes, and returns its exit status.
func runSelf(stdout io.Writer, self string, args ...string) (int, error) {
	cmd := exec.Command(self, args...)
	cmd.Stdout, cmd.Stderr = stdout, os.Stderr
	err := cmd.Run()
	if cmd.ProcessState == nil {
		return 0, err
	}
	return cmd.ProcessState.ExitCode(), nil
}

// experiment boots one experiment and writes its report; it reports
// whether the report was written.
func experiment(stdout io.Writer, d vmhost.Dirs, self, report, suite, n string, noBuild bool) bool {
	say := func(format string, a ...any) {
		_, _ = fmt.Fprintf(stdout, "experiments/run: "+n+": "+format+"\n", a...)
	}
	_, _ = fmt.Fprintf(stdout, "== experiment %s (%s)\n", n, suite)
	rdf, err := os.CreateTemp("", "vm-experiment-")
	if err != nil {
		say("%v", err)
		return false
	}
	_ = rdf.Close()
	defer func() { _ = os.Remove(rdf.Name()) }()
	rc, err := runSelf(stdout, self, "run", "--suite", suite, "--no-build", "--run-dir-file", rdf.Name(), "exp-"+n)
	if err != nil {
		say("%v", err)
		return false
	}
	if rc != 0 {
		say("the guest reported failures (exit %d); writing the report from what it recorded", rc)
	}
	b, _ := os.ReadFile(rdf.Name())
	art := filepath.Join(strings.TrimSpace(string(b)), "artefacts")
	if len(b) == 0 || !fileExists(filepath.Join(art, "exp-"+n, "results.txt")) {
		say("no results.txt in the run's artefacts (%s); no report", art)
		return false
	}
	dest := experimentDir(d, suite, n)
	raw := filepath.Join(dest, "raw")
	_ = os.RemoveAll(dest)
	if err := os.MkdirAll(raw, 0o755); err != nil {
		say("%v", err)
		return false
	}
	if out, err := exec.Command("cp", "-r", art+"/.", raw+"/").CombinedOutput(); err != nil {
		say("copying the artefacts: %v: %s", err, out)
		return false
	}
	reportArgs := []string{"-in", filepath.Join(raw, "exp-"+n), "-out", dest}
	// sg-chaining over iSCSI beside tcm_loop: the full guest (bookworm
	// only) has LIO's iSCSI target and open-iscsi; its table joins the
	// report.
	if n == "sg-chaining" && suite == "bookworm" {
		_, _ = fmt.Fprintln(stdout, "== experiment sg-chaining over iSCSI beside tcm_loop (the full guest)")
		args := []string{"full-run", "--suite", "chaining"}
		if noBuild {
			args = append(args, "--no-build")
		}
		if rc, err := runSelf(stdout, self, args...); err != nil || rc != 0 {
			say("the full guest's chaining run reported failures")
		}
		t := filepath.Join(d.Out, "full-bookworm/runs/latest/chaining/iscsi-chaining.md")
		if b, err := os.ReadFile(t); err == nil {
			copied := filepath.Join(raw, "iscsi-chaining.md")
			if os.WriteFile(copied, b, 0o644) == nil {
				reportArgs = append(reportArgs, "-transports", copied)
			}
		}
	}
	cmd := exec.Command(report, reportArgs...)
	cmd.Stdout, cmd.Stderr = stdout, os.Stderr
	if err := cmd.Run(); err != nil {
		say("the report failed: %v", err)
		return false
	}
	say("%s", filepath.Join(dest, "report.md"))
	return true
}
