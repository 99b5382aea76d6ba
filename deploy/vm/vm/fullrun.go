//go:build linux

package main

import (
	"fmt"
	"io"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

const fullRunDoc = `
usage: deploy/vm/full/run [options]

Boots the full guest (systemd as PID 1, vscsid as its systemd service,
targetcli-fb, LTFS, open-iscsi; built by deploy/vm/full/build) under qemu
(TCG) and runs scenarios of deploy/vm/full/scenarios in one boot, after
"service". --suite takes a list of them (core,iscsi) or a preset:
  full       core,tools,iscsi,ltfs (the default)
  clients    tools,iscsi,ltfs (make vm-newest-full)
  two-hosts  two guests on a private qemu socket network (TCP on
             127.0.0.1, nothing else): vscsid and LIO iSCSI on one,
             open-iscsi and st/sd/ch on the other (guest/hosts.sh);
             files in the run directory's target/ and initiator/
Scenarios that make test does not run: perf (make perf; raw results in
the run directory's perf/), soak (make vm-soak), btape (Bacula's btape
and Amanda's amtapetype; make vm-btape), chaining (the sg-chaining
experiment's iSCSI runs). Asking for ltfs, or running in CI (CI=true),
makes a guest without LTFS fail its LTFS checks instead of noting them.
Prints the PASS/FAIL lines and "N passed, N failed"; exits 0 only when
the guests' verdicts are PASS. Files: deploy/vm/out/full-RELEASE/runs/TIME-XXXX/.`

// ltfsAll are the personalities of --ltfs all: every LTO and 3592.
const ltfsAll = "lto5,lto6,lto7,lto8,lto9,lto10,hp-lto5,hp-lto6,hp-lto7,hp-lto8,hp-lto9,ts1140,ts1150,ts1155,ts1160,ts1170"

type fullOpts struct {
	release, suite, ltfs          string
	noBuild, console              bool
	restarts, limit               int
	perfReps, perfRuntime, soak   int
	perfOnly, perfConfigs         string
	perfPoll, perfIdle, perfClock string
	buildArgs                     []string
}

var (
	durationRE = regexp.MustCompile(`^[0-9]+(\.[0-9]+)?(ns|us|ms|s)$`)
	ltfsRE     = regexp.MustCompile(`^[a-z0-9,-]*$`)
)

func fullRunCmd(args []string, stdout io.Writer) error {
	var o fullOpts
	fs := newFlags("full/run", fullRunDoc)
	suiteFlag(fs, &o.release, "release", "the guest's Debian suite and kernel, built by full/build --suite")
	fs.BoolVar(&o.noBuild, "no-build", false, "use the guest in deploy/vm/out/full-RELEASE/")
	fs.IntVar(&o.restarts, "restarts", 20, "vscsid restarts under a reading dd")
	fs.IntVar(&o.limit, "timeout", 900, "wall limit for qemu, `seconds`")
	fs.BoolVar(&o.console, "console", false, "stream the whole console instead of the results")
	fs.StringVar(&o.suite, "suite", "full", "the scenarios, comma-separated, or a preset (`LIST`; see above)")
	fs.StringVar(&o.ltfs, "ltfs", "", "the ltfs scenario's personalities, comma-separated (`LIST`; default\nlto8,hp-lto8,ts1160; all = every LTO and 3592 personality)")
	fs.IntVar(&o.perfReps, "perf-reps", 0, "perf: repetitions (`N`; the scenario's default 3)")
	fs.IntVar(&o.perfRuntime, "perf-runtime", 0, "perf: seconds per run (`S`; the scenario's default 2)")
	fs.StringVar(&o.perfOnly, "perf-only", "", "perf: only these workloads (`W,...`; perf/run --only)")
	fs.StringVar(&o.perfConfigs, "perf-configs", "", "perf: only these configurations (`C,...`; perf/run --configs)")
	fs.StringVar(&o.perfPoll, "perf-poll", "", "perf: fake_rw-poll's ring_poll window (a `DURATION` such as 500us)")
	fs.StringVar(&o.perfIdle, "perf-idle", "halt", "perf: halt, or poll to boot with idle=poll")
	fs.StringVar(&o.perfClock, "perf-clock", "tsc", "the guest's clock source, tsc (tsc=reliable) or hpet: under TCG the\nkernel otherwise falls back to the HPET, and every clock read is an\nemulated device access")
	fs.IntVar(&o.soak, "soak", 0, "soak: its length in `seconds` (default 600; the timeout must be longer)")
	for _, n := range []string{"vscsid", "vscsictl", "vscsid-base"} {
		fs.Var(passArgs{&o.buildArgs, n, false}, n, "`FILE` packed into the guest by full/build (not with --no-build)")
	}
	if err := parseOptions(fs, args); err != nil {
		return err
	}
	return o.run(stdout)
}

func (o *fullOpts) kernelArgs() (string, error) {
	var b strings.Builder
	fmt.Fprintf(&b, "console=ttyS0 panic=-1 rdinit=/lib/systemd/systemd systemd.show_status=0 vmtest.restarts=%d", o.restarts)
	if o.ltfs != "" {
		b.WriteString(" vmtest.ltfs=" + o.ltfs)
	}
	if o.perfReps > 0 {
		fmt.Fprintf(&b, " vmtest.perf_reps=%d", o.perfReps)
	}
	if o.perfRuntime > 0 {
		fmt.Fprintf(&b, " vmtest.perf_runtime=%d", o.perfRuntime)
	}
	if o.perfOnly != "" {
		b.WriteString(" vmtest.perf_only=" + o.perfOnly)
	}
	if o.perfConfigs != "" {
		b.WriteString(" vmtest.perf_configs=" + o.perfConfigs)
	}
	if o.perfPoll != "" {
		if !durationRE.MatchString(o.perfPoll) {
			return "", usagef("--perf-poll wants a duration such as 500us or 2ms, not %q", o.perfPoll)
		}
		b.WriteString(" vmtest.perf_poll=" + o.perfPoll)
	}
	switch o.perfIdle {
	case "poll":
		b.WriteString(" idle=poll")
	case "halt":
	default:
		return "", usagef("--perf-idle wants halt or poll, not %q", o.perfIdle)
	}
	if o.soak > 0 {
		fmt.Fprintf(&b, " vmtest.soak=%d", o.soak)
	}
	switch o.perfClock {
	case "tsc":
		b.WriteString(" tsc=reliable")
	case "hpet":
	default:
		return "", usagef("--perf-clock wants tsc or hpet, not %q", o.perfClock)
	}
	// In CI, or when LTFS is what was asked for, a guest without LTFS
	// fails its LTFS checks instead of noting them.
	if os.Getenv("CI") == "true" || o.suite == "ltfs" {
		b.WriteString(" vmtest.require_ltfs=1")
	}
	return b.String(), nil
}

func (o *fullOpts) run(stdout io.Writer) error {
	if o.restarts < 0 {
		return usagef("--restarts wants a count of 0 or more")
	}
	d, err := vmhost.FindDirs()
	if err != nil {
		return err
	}
	// The scenarios of the boot: a preset or names of full/scenarios.
	var scenarios string
	switch o.suite {
	case "full":
		scenarios = "core,tools,iscsi,ltfs"
	case "clients":
		scenarios = "tools,iscsi,ltfs"
	case "two-hosts":
	default:
		scenarios = o.suite
	}
	scenDir := filepath.Join(d.VM, "full/scenarios")
	for _, s := range strings.Split(scenarios, ",") {
		if s == "" && scenarios == "" {
			break
		}
		if _, err := vmhost.ScenarioFile(scenDir, s); err != nil || s == "service" {
			names, _ := vmhost.ScenarioNames(scenDir)
			names = slices.DeleteFunc(names, func(n string) bool { return n == "service" })
			return usagef("--suite: no scenario %q (presets: full, clients, two-hosts; scenarios: %s)", s, strings.Join(names, " "))
		}
	}
	if o.ltfs == "all" {
		o.ltfs = ltfsAll
	}
	if !ltfsRE.MatchString(o.ltfs) {
		return usagef("--ltfs wants personalities separated by commas, not %q", o.ltfs)
	}
	// --vscsid goes into the guest when it is packed: without a build it
	// would be ignored and the run would measure the packed binary under
	// its name.
	if o.noBuild && len(o.buildArgs) > 0 {
		return usagef("--vscsid, --vscsictl and --vscsid-base are packed into the guest: drop --no-build")
	}
	kargs, err := o.kernelArgs()
	if err != nil {
		return err
	}

	out := filepath.Join(d.Out, "full-"+o.release)
	if !o.noBuild {
		args := append([]string{"--suite", o.release}, o.buildArgs...)
		if o.suite == "btape" {
			args = append(args, "--amanda") // amtapetype needs Amanda, in a guest of its own
		}
		cmd := exec.Command(filepath.Join(d.VM, "full/build"), args...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		if err := cmd.Run(); err != nil {
			return fmt.Errorf("building the full guest failed")
		}
	}
	for _, f := range []string{"vmlinuz", "rootfs.cpio"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			return fmt.Errorf("no full guest in %s (run deploy/vm/full/build --suite %s)", out, o.release)
		}
	}
	runs := filepath.Join(out, "runs")
	vmhost.PruneRuns(runs, 9) // with this one, the 10 most recent
	dir, err := vmhost.NewRunDir(runs, time.Now().Format("20060102-150405")+"-")
	if err != nil {
		return err
	}

	// boot starts a guest with its console, results and perf channels in
	// dir; net: the qemu network options.
	boot := func(dir, args string, net ...string) (*vmhost.Guest, error) {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return nil, err
		}
		// The cpio is the root file system (rdinit: systemd runs straight
		// from the initramfs, no switch_root), a tmpfs of half the
		// guest's RAM: with 2 GiB it held the 287 MiB cpio and left too
		// little for the suite's cartridges (LTFS on hp-lto8 failed with
		// ENOSPC writing its .vtape). 3 GiB gives it 1.5.
		argv := append(vmhost.QemuBase("3G"), net...)
		argv = append(argv, "-kernel", filepath.Join(out, "vmlinuz"), "-initrd", filepath.Join(out, "rootfs.cpio"),
			"-append", kargs+" "+args,
			"-serial", "file:"+dir+"/console.log", "-serial", "file:"+dir+"/results.log", "-serial", "file:"+dir+"/perf.tar")
		return vmhost.StartGuest(dir, argv, o.limit)
	}

	start := time.Now()
	if o.suite == "two-hosts" {
		return o.twoHosts(stdout, dir, boot, start)
	}
	vmhost.Logf("booting the full guest (limit %ds; log %s/console.log)", o.limit, dir)
	g, err := boot(dir, "vmtest.scenarios="+scenarios, "-nic", "none")
	if err != nil {
		return err
	}
	shown := g.Show(stdout, o.console)
	exit := g.Wait()
	shown()
	_, _ = fmt.Fprintf(stdout, "---- full-%s %s (%s wall, %s)\n", o.release, o.suite, time.Since(start).Round(time.Second), exitText(exit))
	if st, err := os.Stat(dir + "/perf.tar"); err == nil && st.Size() > 0 {
		if exec.Command("tar", "-xf", dir+"/perf.tar", "-C", dir).Run() != nil {
			vmhost.Logf("perf.tar is damaged (guest killed while writing it?)")
		}
	}
	_, _, ok := vmhost.Verdict(stdout, "full-"+o.release, dir, exit)
	vmhost.Logf("console: %s/console.log", dir)
	if !ok {
		return exitError(1)
	}
	return nil
}

// twoHosts boots the target and the initiator joined by qemu's socket
// netdev: the target listens on a free TCP port of 127.0.0.1, the
// initiator connects to it. Ethernet frames go only between the two; the
// addresses exist only inside them.
func (o *fullOpts) twoHosts(stdout io.Writer, dir string, boot func(string, string, ...string) (*vmhost.Guest, error), start time.Time) error {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return err
	}
	port := l.Addr().(*net.TCPAddr).Port
	_ = l.Close()
	vmhost.Logf("booting two full guests joined by 127.0.0.1:%d (limit %ds; logs %s/{target,initiator}/console.log)", port, o.limit, dir)
	target, err := boot(dir+"/target", "vmtest.scenarios=hosts-target vmtest.addr=10.77.0.1/24 vmtest.peer=10.77.0.2",
		"-netdev", fmt.Sprintf("socket,id=n0,listen=127.0.0.1:%d", port), "-device", "virtio-net-pci,netdev=n0,mac=52:54:00:76:73:01")
	if err != nil {
		return err
	}
	for range 50 {
		if vmhost.ListeningTCP(port) {
			break
		}
		time.Sleep(200 * time.Millisecond)
	}
	initiator, err := boot(dir+"/initiator", "vmtest.scenarios=hosts-initiator vmtest.addr=10.77.0.2/24 vmtest.peer=10.77.0.1",
		"-netdev", fmt.Sprintf("socket,id=n0,connect=127.0.0.1:%d", port), "-device", "virtio-net-pci,netdev=n0,mac=52:54:00:76:73:02")
	if err != nil {
		target.Kill()
		return err
	}
	shownT := target.Show(stdout, o.console)
	shownI := initiator.Show(stdout, o.console)
	ie := initiator.Wait()
	te := target.Wait()
	shownT()
	shownI()
	_, _ = fmt.Fprintf(stdout, "---- two-hosts (%s wall, target: %s, initiator: %s)\n", time.Since(start).Round(time.Second), exitText(te), exitText(ie))
	p1, f1, ok1 := vmhost.Verdict(stdout, "two-hosts-target", dir+"/target", te)
	p2, f2, ok2 := vmhost.Verdict(stdout, "two-hosts-initiator", dir+"/initiator", ie)
	// The pair's closing line: both guests' counts.
	_, _ = fmt.Fprintf(stdout, "%d passed, %d failed\n", p1+p2, f1+f2)
	vmhost.Logf("consoles: %s/target/console.log, %s/initiator/console.log", dir, dir)
	if !ok1 || !ok2 {
		return exitError(1)
	}
	return nil
}
