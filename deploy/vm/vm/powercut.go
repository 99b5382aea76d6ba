//go:build linux

package main

import (
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

const powercutDoc = `
usage: deploy/vm/powercut [options]

Power cuts for real. The guest's cartridges and library inventory live on
ext4 on a virtio disk image; each boot of the powercut scenario checks
what the last cut left and streams to a tape while a robot moves
cartridges, and this host SIGKILLs qemu at a random instant of the stream
(run --cut-on). CUTS cuts, then a last boot that checks only. What the
guest acknowledged before the cut ("vmtest-pc: synced C K", "vmtest-pc:
moved N" on its console) is what the next boot must find (on its kernel
command line: vmtest.pc=CYCLE:SYNCED:MOVES:HELD:MODE).

Prints one line per cut and a summary; the runs are under
deploy/vm/out/runs/ as run makes them, each boot's output in
deploy/vm/out/powercut/bootN.log. Exit status 0 when every boot's checks
passed.`

func powercutCmd(args []string, stdout io.Writer) error {
	suite, cuts, delay, noBuild, keep := vmhost.DefaultSuite, 20, "3-20", false, false
	fs := newFlags("powercut", powercutDoc)
	suiteFlag(fs, &suite, "suite", "the guest's Debian suite")
	fs.IntVar(&cuts, "cuts", cuts, "power cuts (`N`; make test runs 3)")
	fs.StringVar(&delay, "cut-delay", delay, "seconds of stream before a cut, `MIN-MAX`")
	fs.BoolVar(&noBuild, "no-build", false, "boot the guest already in deploy/vm/out/SUITE/")
	fs.BoolVar(&keep, "keep", false, "keep the disk image (deploy/vm/out/powercut/disk.img)")
	if err := parseOptions(fs, args); err != nil {
		return err
	}
	if cuts < 1 {
		return usagef("--cuts wants a count of 1 or more, got %d", cuts)
	}
	if _, _, ok := cutDelay(delay); !ok {
		return usagef("--cut-delay wants MIN-MAX seconds (3-20), got %q", delay)
	}
	d, err := vmhost.FindDirs()
	if err != nil {
		return err
	}
	if err := buildGuest(d, suite, noBuild); err != nil {
		return err
	}
	dir := filepath.Join(d.Out, "powercut")
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	img := filepath.Join(dir, "disk.img")
	_ = os.Remove(img)
	if err := os.WriteFile(img, nil, 0o644); err != nil {
		return err
	}
	if err := os.Truncate(img, 1<<30); err != nil {
		return err
	}
	if out, err := exec.Command("mkfs.ext4", "-q", "-F", "-L", "vscsipc", img).CombinedOutput(); err != nil {
		return fmt.Errorf("mkfs.ext4: %w: %s", err, out)
	}
	self, err := os.Executable()
	if err != nil {
		return err
	}
	pc := &powercut{suite: suite, delay: delay, img: img, dir: dir, self: self, synced: -1}
	failed := pc.series(cuts, stdout)
	verdict := "PASS"
	if failed {
		verdict = "FAIL"
	}
	_, _ = fmt.Fprintf(stdout, "powercut: %d cuts of %d, %ds: %d files synced (labels included) and %d of their records read back bit-exact, %d robot moves acknowledged; %d boots again after a hung mount; %s\n",
		min(pc.done, cuts), cuts, int(time.Since(pc.start).Seconds()), pc.totalFiles, pc.totalRecs, pc.totalMoves, pc.hung, verdict)
	if failed {
		return exitError(1) // the image stays, to look at
	}
	if !keep {
		_ = os.Remove(img)
	}
	return nil
}

// buildGuest runs build-guest for suite, or with noBuild only checks
// that the host has what booting needs.
func buildGuest(d vmhost.Dirs, suite string, noBuild bool, extra ...string) error {
	if noBuild {
		return vmhost.EnsureCommands(vmhost.HostTools...)
	}
	cmd := exec.Command(filepath.Join(d.VM, "build-guest"), append([]string{"--suite", suite}, extra...)...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("building the %s guest failed", suite)
	}
	return nil
}

// powercut is a series of boots on one disk: the state the next boot
// checks, and the series' totals.
type powercut struct {
	suite, delay, img, dir, self string

	cycle, synced, moves, held int // vmtest.pc of the next boot

	start                             time.Time
	done, hung                        int
	totalFiles, totalRecs, totalMoves int
}

var checkedRE = regexp.MustCompile(`vmtest-pc: holds ([0-9]+) complete ([0-9]+) records ([0-9]+)`)

// series boots cuts times with a cut and once more to check; it reports
// whether a boot failed.
func (pc *powercut) series(cuts int, stdout io.Writer) (failed bool) {
	pc.start = time.Now()
	for i := 0; i <= cuts; {
		final := i == cuts
		con, rc, cutMS, err := pc.boot(i, final)
		if err != nil {
			vmhost.Logf("powercut: boot %d: %v", i, err)
			return true
		}
		// A boot whose mount of the disk blocked in the guest kernel is
		// booted again on the same disk, twice at most: vscsid never ran
		// in it.
		if strings.Contains(con, "vmtest-pc: mount-hung") && pc.hung < 2 {
			pc.hung++
			vmhost.Logf("powercut: boot %d: the guest kernel's mount of the disk hung; booting again", i)
			continue
		}
		want := 3 // cut, with no FAIL before it
		if final {
			want = 0
		}
		failed = rc != want
		var checked string
		holds := 0
		if m := lastMatch(checkedRE, con); m != nil {
			checked = strings.TrimPrefix(m[0], "vmtest-pc: ")
			holds, _ = strconv.Atoi(m[1])
			recs, _ := strconv.Atoi(m[3])
			pc.totalRecs += recs
		} else {
			failed = true // the boot never finished its check
		}
		if !final && !failed {
			next := pc.cycle + 1
			s := lastNumber(con, fmt.Sprintf("synced %d", next), -1)
			at := lastNumber(con, "moves-at", 0)
			m := lastNumber(con, "moved", at)
			for _, l := range strings.Split(con, "\n") {
				if strings.Contains(l, "vmtest-pc: write-error") || strings.Contains(l, "vmtest-pc: move-error") {
					_, _ = fmt.Fprintln(os.Stderr, l)
					failed = true
				}
			}
			_, _ = fmt.Fprintf(stdout, "vm: powercut: cut %d after %s ms: files 0-%d synced, move %d done; check before it: %s\n",
				i+1, cutMS, pc.synced, pc.moves, checked)
			pc.held = holds // what the tape held before this cycle's label
			pc.cycle, pc.synced, pc.moves = next, s, m
			pc.totalFiles += s + 1
			pc.totalMoves += m - at
		} else {
			_, _ = fmt.Fprintf(stdout, "vm: powercut: final boot: %s\n", checked)
		}
		if failed {
			log, _ := os.ReadFile(filepath.Join(pc.dir, fmt.Sprintf("boot%d.log", i)))
			vmhost.Logf("powercut: boot %d failed (exit %d); its output:", i, rc)
			for _, l := range strings.Split(strings.TrimRight(string(log), "\n"), "\n") {
				_, _ = fmt.Fprintf(os.Stderr, "  | %s\n", l)
			}
			return true
		}
		i++
		pc.done = i
	}
	return false
}

// boot runs the powercut scenario once (vm run, its output in bootN.log)
// and returns its console, run's exit status and the cut's delay ("?"
// without one).
func (pc *powercut) boot(i int, final bool) (console string, rc int, cutMS string, err error) {
	rdf, err := os.CreateTemp("", "vm-powercut-")
	if err != nil {
		return "", 0, "", err
	}
	_ = rdf.Close()
	defer func() { _ = os.Remove(rdf.Name()) }()
	mode := "cut"
	if final {
		mode = "final"
	}
	args := []string{"run", "--suite", pc.suite, "--no-build", "--disk", pc.img, "--run-dir-file", rdf.Name(),
		"--append", fmt.Sprintf("vmtest.pc=%d:%d:%d:%d:%s", pc.cycle, pc.synced, pc.moves, pc.held, mode), "--timeout", "1200"}
	if !final {
		args = append(args, "--cut-on", "vmtest-pc: streaming", "--cut-delay", pc.delay)
	}
	log, err := os.Create(filepath.Join(pc.dir, fmt.Sprintf("boot%d.log", i)))
	if err != nil {
		return "", 0, "", err
	}
	cmd := exec.Command(pc.self, append(args, "powercut")...)
	cmd.Stdout, cmd.Stderr = log, log
	err = cmd.Run()
	_ = log.Close()
	var ee *exec.ExitError
	if err != nil && !errors.As(err, &ee) {
		return "", 0, "", err
	}
	rc = cmd.ProcessState.ExitCode()
	b, _ := os.ReadFile(rdf.Name())
	runDir := strings.TrimSpace(string(b))
	if runDir == "" {
		return "", rc, "", fmt.Errorf("run made no run directory (exit %d)", rc)
	}
	con, _ := os.ReadFile(filepath.Join(runDir, "console.log"))
	cutMS = "?"
	if c, err := os.ReadFile(filepath.Join(runDir, "cut")); err == nil {
		cutMS = strings.TrimSpace(string(c))
	}
	return strings.ReplaceAll(string(con), "\r", ""), rc, cutMS, nil
}

// lastMatch is re's last match in s, or nil.
func lastMatch(re *regexp.Regexp, s string) []string {
	all := re.FindAllStringSubmatch(s, -1)
	if len(all) == 0 {
		return nil
	}
	return all[len(all)-1]
}

// lastNumber is the last number of the last "vmtest-pc: WORDS N..." in
// con ("synced C K": K), or def when there is none.
func lastNumber(con, words string, def int) int {
	m := lastMatch(regexp.MustCompile(`vmtest-pc: `+regexp.QuoteMeta(words)+` [0-9 ]*`), con)
	if m == nil {
		return def
	}
	f := strings.Fields(m[0])
	n, err := strconv.Atoi(f[len(f)-1])
	if err != nil {
		return def
	}
	return n
}
