//go:build linux

package main

import (
	"fmt"
	"io"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

const runDoc = `
usage: deploy/vm/run [options] SCENARIO...

Boots the minimal test guest under qemu (TCG) and runs the scenarios
(deploy/vm/scenarios/NAME.sh) in it, in order, in one boot. The guest is
the base image of deploy/vm/out/SUITE/ (built by build-guest) with this
work tree's harness and scenarios packed over it at every boot. The run's
files go to deploy/vm/out/runs/TIME-SUITE-SCENARIOS-XXXX/ (console.log,
results.log, artefacts/); deploy/vm/out/runs/latest points at the last.
Prints the guest's PASS and FAIL lines as they come and the closing
"N passed, N failed". Exit status: 0 only when the guest's verdict is
PASS; 3 after a power cut (--cut-on) with no FAIL line before it.`

type runOpts struct {
	suite      string
	noBuild    bool
	limit      int
	console    bool
	shell      bool
	fwds       repeated
	runDirFile string
	disk       string
	appendArgs string
	clock      string
	cutOn      string
	cutDelay   string
	buildArgs  []string
}

func runCmd(args []string, stdout io.Writer) error {
	var o runOpts
	fs := newFlags("run", runDoc)
	suiteFlag(fs, &o.suite, "suite", "the guest's Debian suite")
	fs.BoolVar(&o.noBuild, "no-build", false, "boot the guest already in deploy/vm/out/SUITE/")
	fs.IntVar(&o.limit, "timeout", 0, "wall limit for qemu in `seconds` (default: the scenarios' vm-timeout, 120 each, plus 120)")
	fs.BoolVar(&o.console, "console", false, "stream the whole serial console (default: the results only)")
	fs.BoolVar(&o.shell, "shell", false, "interactive: console on this terminal, a shell in the guest after the\nscenarios (no time limit)")
	fs.Var(&o.fwds, "hostfwd", "networking (repeatable): a virtio NIC on qemu's user network (restrict=on:\nno way out), `HPORT:GPORT` forwarding this host's 127.0.0.1:HPORT to\nthe guest's GPORT; without it the guest has no NIC")
	fs.StringVar(&o.runDirFile, "run-dir-file", "", "write the run's directory to `FILE` as soon as it exists")
	fs.StringVar(&o.disk, "disk", "", "a virtio disk (/dev/vda in the guest) on the raw image `IMG`")
	fs.StringVar(&o.appendArgs, "append", "", "more kernel command line (a scenario's vmtest.* `parameters`)")
	fs.StringVar(&o.clock, "clock", "tsc", "the guest's clock source, tsc or hpet: tsc boots with tsc=reliable\n(under TCG the kernel otherwise marks the TSC unstable and falls back to\nthe HPET, where every clock read is an emulated device access)")
	fs.StringVar(&o.cutOn, "cut-on", "", "power cut: SIGKILL qemu a random time (--cut-delay) after `TEXT` shows on\nthe console; then exit 3, or 1 if a FAIL line came before the cut")
	fs.StringVar(&o.cutDelay, "cut-delay", "3-20", "the cut's delay range, `MIN-MAX` seconds")
	for _, n := range []string{"vscsid", "vscsictl"} {
		fs.Var(passArgs{&o.buildArgs, n, false}, n, "`FILE`: passed to build-guest")
	}
	for _, n := range []string{"no-daemon", "refresh"} {
		fs.Var(passArgs{&o.buildArgs, n, true}, n, "passed to build-guest")
	}
	scenarios, err := parse(fs, args)
	if err != nil {
		return err
	}
	if len(scenarios) == 0 {
		return usagef("no scenario given")
	}
	return o.run(scenarios, stdout)
}

var (
	hostfwdRE  = regexp.MustCompile(`^([0-9]{1,5}):([0-9]{1,5})$`)
	cutDelayRE = regexp.MustCompile(`^([0-9]+)-([0-9]+)$`)
)

func (o *runOpts) run(scenarios []string, stdout io.Writer) error {
	var fwds []string
	for _, f := range o.fwds {
		m := hostfwdRE.FindStringSubmatch(f)
		if m == nil {
			return usagef("--hostfwd wants HOSTPORT:GUESTPORT, got %q", f)
		}
		fwds = append(fwds, fmt.Sprintf("hostfwd=tcp:127.0.0.1:%s-:%s", m[1], m[2]))
	}
	clock := ""
	switch o.clock {
	case "tsc":
		clock = "tsc=reliable"
	case "hpet":
	default:
		return usagef("--clock wants tsc or hpet, not %q", o.clock)
	}
	lo, hi, ok := cutDelay(o.cutDelay)
	if !ok {
		return usagef("--cut-delay wants MIN-MAX seconds (3-20), got %q", o.cutDelay)
	}
	if o.disk != "" {
		if _, err := os.Stat(o.disk); err != nil {
			return usagef("--disk %s: no such image", o.disk)
		}
		abs, err := filepath.Abs(o.disk)
		if err != nil {
			return err
		}
		o.disk = abs
	}
	d, err := vmhost.FindDirs()
	if err != nil {
		return err
	}
	scenDir := filepath.Join(d.VM, "scenarios")
	total := 0
	var pkgs []string
	for _, s := range scenarios {
		f, err := vmhost.ScenarioFile(scenDir, s)
		if err != nil {
			return usagef("%v", err)
		}
		meta, err := vmhost.ScenarioMeta(f)
		if err != nil {
			return err
		}
		pkgs = append(pkgs, strings.Fields(meta["pack"])...)
		t, err := strconv.Atoi(meta["timeout"])
		if err != nil {
			t = 120
		}
		total += t
	}
	if o.limit == 0 {
		o.limit = total + 120
	}

	if !o.noBuild {
		cmd := exec.Command(filepath.Join(d.VM, "build-guest"), append([]string{"--suite", o.suite}, o.buildArgs...)...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building the %s guest failed", o.suite)
		}
	} else if err := vmhost.EnsureCommands(vmhost.HostTools...); err != nil {
		return err
	}
	guestDir := filepath.Join(d.Out, o.suite)
	kernel, initrd := filepath.Join(guestDir, "vmlinuz"), filepath.Join(guestDir, "initramfs.cpio.gz")
	for _, f := range []string{kernel, initrd} {
		if _, err := os.Stat(f); err != nil {
			return fmt.Errorf("no built guest in %s (run deploy/vm/build-guest --suite %s)", guestDir, o.suite)
		}
	}

	// Keep the 40 most recent runs (make test makes about 25).
	runs := filepath.Join(d.Out, "runs")
	vmhost.PruneRuns(runs, 40)
	joined := strings.Join(scenarios, ",")
	dir, err := vmhost.NewRunDir(runs, fmt.Sprintf("%s-%s-%s-", time.Now().Format("20060102-150405"), o.suite, strings.Join(scenarios, "+")))
	if err != nil {
		return err
	}
	if err := os.Mkdir(filepath.Join(dir, "artefacts"), 0o755); err != nil {
		return err
	}
	if o.runDirFile != "" {
		if err := os.WriteFile(o.runDirFile, []byte(dir+"\n"), 0o644); err != nil {
			return err
		}
	}

	// The base image plus this work tree's harness and scenarios.
	harness := filepath.Join(dir, "harness.cpio.gz")
	if err := vmhost.PackHarness(d, harness, pkgs); err != nil {
		return err
	}
	if err := copyGuest(guestDir, []string{initrd, harness}, filepath.Join(dir, "initrd.img"), kernel, filepath.Join(dir, "vmlinuz")); err != nil {
		return err
	}
	_ = os.Remove(harness)

	kargs := "console=ttyS0 panic=-1 quiet vmtest.scenarios=" + joined
	if clock != "" {
		kargs += " " + clock
	}
	if o.shell {
		kargs += " vmtest.shell=1"
	}
	if o.appendArgs != "" {
		kargs += " " + o.appendArgs
	}
	nic := []string{"-nic", "none"}
	if len(fwds) > 0 {
		// Forwards bind to 127.0.0.1 only: the guest is reachable from
		// this host, never from the network.
		nic = []string{"-nic", "user,model=virtio-net-pci,restrict=on," + strings.Join(fwds, ",")}
		kargs += " vmtest.net=1"
	}
	argv := append(vmhost.QemuBase("1G"), nic...)
	argv = append(argv, "-kernel", filepath.Join(dir, "vmlinuz"), "-initrd", filepath.Join(dir, "initrd.img"), "-append", kargs)
	// The disk is qemu's default writeback cache on this host's page
	// cache: what the guest wrote to its disk outlives qemu's SIGKILL,
	// what it held in its own page cache does not (a power cut for the
	// guest).
	if o.disk != "" {
		argv = append(argv, "-drive", "file="+o.disk+",format=raw,if=virtio")
	}
	if o.shell {
		argv = append(argv, "-serial", "mon:stdio")
	} else {
		argv = append(argv, "-serial", "file:"+dir+"/console.log")
	}
	argv = append(argv, "-serial", "file:"+dir+"/results.log", "-serial", "file:"+dir+"/artefacts.tar")

	vmhost.Logf("booting %s guest: %s (limit %ds; log %s/console.log)", o.suite, strings.Join(scenarios, " "), o.limit, dir)
	start := time.Now()
	var exit vmhost.Exit
	if o.shell {
		exit, err = interactive(dir, argv)
		if err != nil {
			return err
		}
	} else {
		g, err := vmhost.StartGuest(dir, argv, o.limit)
		if err != nil {
			return err
		}
		shown := g.Show(stdout, o.console)
		if o.cutOn != "" {
			go powerCut(g, o.cutOn, lo, hi)
		}
		exit = g.Wait()
		shown()
	}
	elapsed := time.Since(start).Round(time.Second)

	// Artefacts: the guest's tar stream from ttyS2.
	if st, err := os.Stat(dir + "/artefacts.tar"); err == nil && st.Size() > 0 {
		if exec.Command("tar", "-xf", dir+"/artefacts.tar", "-C", dir+"/artefacts").Run() != nil {
			vmhost.Logf("artefacts.tar is damaged (guest killed while writing it?)")
		}
	}
	_, _ = fmt.Fprintf(stdout, "---- %s: %s (%s wall, %s)\n", o.suite, strings.Join(scenarios, " "), elapsed, exitText(exit))
	if cut, err := os.ReadFile(dir + "/cut"); err == nil {
		vmhost.StripCR(dir+"/console.log", dir+"/results.log")
		_, _ = fmt.Fprintf(stdout, "---- power cut: qemu killed (SIGKILL) %s ms after '%s'\n", strings.TrimSpace(string(cut)), o.cutOn)
		res, err := vmhost.ParseResultsFile(dir + "/results.log")
		if err != nil {
			return err
		}
		_, _ = fmt.Fprintf(stdout, "%d passed, %d failed before the cut\n", res.Pass, res.Fail)
		removeBoot(dir)
		if res.Fail > 0 {
			return exitError(1)
		}
		return exitError(3)
	}
	_, _, passed := vmhost.Verdict(stdout, o.suite, dir, exit)
	vmhost.Logf("console: %s/console.log; artefacts: %s/artefacts/", dir, dir)
	if !passed {
		return exitError(1) // the boot's files stay, to reproduce it
	}
	removeBoot(dir)
	return nil
}

// cutDelay parses --cut-delay's MIN-MAX.
func cutDelay(s string) (lo, hi int, ok bool) {
	m := cutDelayRE.FindStringSubmatch(s)
	if m == nil {
		return 0, 0, false
	}
	lo, err1 := strconv.Atoi(m[1])
	hi, err2 := strconv.Atoi(m[2])
	return lo, hi, err1 == nil && err2 == nil && lo <= hi
}

// removeBoot removes a run's copy of the kernel and initrd, kept only to
// reproduce a failed run (qemu.cmd boots it).
func removeBoot(dir string) {
	_ = os.Remove(dir + "/initrd.img")
	_ = os.Remove(dir + "/vmlinuz")
}

// exitText says how qemu ended, for the run's summary line.
func exitText(e vmhost.Exit) string {
	if e.TimedOut {
		return fmt.Sprintf("qemu killed at the %ds limit", e.Limit)
	}
	return fmt.Sprintf("qemu exit %d", e.Code)
}

// copyGuest writes the concatenation of initrds to initrdOut and the
// kernel to kernelOut while holding guestDir's lock shared, so that
// build-guest (which takes it exclusively) never rewrites them mid-copy.
func copyGuest(guestDir string, initrds []string, initrdOut, kernel, kernelOut string) error {
	lock, err := os.OpenFile(filepath.Join(guestDir, ".lock"), os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return err
	}
	defer func() { _ = lock.Close() }() // closing drops the lock
	if err := unix.Flock(int(lock.Fd()), unix.LOCK_SH); err != nil {
		return fmt.Errorf("locking %s: %w", lock.Name(), err)
	}
	if err := catFiles(initrdOut, initrds...); err != nil {
		return err
	}
	return catFiles(kernelOut, kernel)
}

func catFiles(out string, in ...string) error {
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	for _, name := range in {
		src, err := os.Open(name)
		if err != nil {
			_ = f.Close()
			return err
		}
		_, err = io.Copy(f, src)
		_ = src.Close()
		if err != nil {
			_ = f.Close()
			return err
		}
	}
	return f.Close()
}

// powerCut waits for text on the guest's console, then a random instant
// (milliseconds) of lo to hi seconds, and kills qemu: the guest's power
// cut. The delay goes to DIR/cut first, so that the run can tell a cut
// from a crash.
func powerCut(g *vmhost.Guest, text string, lo, hi int) {
	ms := lo*1000 + rand.IntN((hi-lo)*1000+1)
	for {
		b, _ := os.ReadFile(g.Dir + "/console.log")
		if strings.Contains(string(b), text) {
			break
		}
		select {
		case <-g.Done():
			return
		case <-time.After(200 * time.Millisecond):
		}
	}
	select {
	case <-g.Done():
		return
	case <-time.After(time.Duration(ms) * time.Millisecond):
	}
	_ = os.WriteFile(g.Dir+"/cut", []byte(strconv.Itoa(ms)+"\n"), 0o644)
	g.Kill()
}

// interactive runs qemu on this terminal (the console on stdio, also
// saved in DIR/console.log), with no time limit.
func interactive(dir string, argv []string) (vmhost.Exit, error) {
	if err := vmhost.WriteCommand(dir, argv); err != nil {
		return vmhost.Exit{}, err
	}
	con, err := os.Create(dir + "/console.log")
	if err != nil {
		return vmhost.Exit{}, err
	}
	defer func() { _ = con.Close() }()
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, io.MultiWriter(os.Stdout, con), os.Stderr
	if err := cmd.Start(); err != nil {
		return vmhost.Exit{}, err
	}
	_ = cmd.Wait()
	return vmhost.Exit{Code: cmd.ProcessState.ExitCode()}, nil
}
