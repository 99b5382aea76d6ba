//go:build linux

package main

import (
	"errors"
	"flag"
	"io"
	"strings"
	"testing"
)

// TestParse takes options and operands in any order, as the shell entry
// points did, and passes build options on in order.
func TestParse(t *testing.T) {
	var o runOpts
	fs := newFlags("run", "")
	fs.StringVar(&o.suite, "suite", "bookworm", "")
	fs.BoolVar(&o.noBuild, "no-build", false, "")
	fs.Var(passArgs{&o.buildArgs, "vscsid", false}, "vscsid", "")
	fs.Var(passArgs{&o.buildArgs, "refresh", true}, "refresh", "")
	ops, err := parse(fs, []string{"smoke", "--suite", "sid", "ctl", "--refresh", "--vscsid=bin/x", "--no-build", "--", "--odd"})
	if err != nil {
		t.Fatal(err)
	}
	if strings.Join(ops, " ") != "smoke ctl --odd" || o.suite != "sid" || !o.noBuild ||
		strings.Join(o.buildArgs, " ") != "--refresh --vscsid bin/x" {
		t.Errorf("operands %q, options %+v", ops, o)
	}
	var ue usageError
	if _, err := parse(fs, []string{"--bogus"}); !errors.As(err, &ue) {
		t.Errorf("--bogus: %v, want a usage error", err)
	}
	fs.SetOutput(io.Discard)
	if _, err := parse(fs, []string{"-h"}); !errors.Is(err, flag.ErrHelp) {
		t.Errorf("-h: %v, want help", err)
	}
}

func TestCutDelay(t *testing.T) {
	for in, want := range map[string][3]int{"3-20": {3, 20, 1}, "5-5": {5, 5, 1}, "5-3": {0, 0, 0}, "3": {0, 0, 0}, "-1-2": {0, 0, 0}, "a-b": {0, 0, 0}} {
		lo, hi, ok := cutDelay(in)
		if ok != (want[2] == 1) || ok && (lo != want[0] || hi != want[1]) {
			t.Errorf("cutDelay(%q) = %d, %d, %v", in, lo, hi, ok)
		}
	}
}

func TestFullKernelArgs(t *testing.T) {
	t.Setenv("CI", "")
	o := fullOpts{suite: "perf", restarts: 4, perfReps: 3, perfPoll: "500us", perfIdle: "poll", perfClock: "tsc"}
	got, err := o.kernelArgs()
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"rdinit=/lib/systemd/systemd", "vmtest.restarts=4", "vmtest.perf_reps=3", "vmtest.perf_poll=500us", "idle=poll", "tsc=reliable"} {
		if !strings.Contains(got, want) {
			t.Errorf("%q lacks %q", got, want)
		}
	}
	if strings.Contains(got, "require_ltfs") || strings.Contains(got, "perf_runtime") {
		t.Errorf("%q has what was not asked for", got)
	}
	t.Setenv("CI", "true")
	if got, _ := o.kernelArgs(); !strings.Contains(got, "vmtest.require_ltfs=1") {
		t.Errorf("in CI: %q, want LTFS required", got)
	}
	for _, bad := range []fullOpts{{perfIdle: "spin", perfClock: "tsc"}, {perfIdle: "halt", perfClock: "kvm"}, {perfIdle: "halt", perfClock: "tsc", perfPoll: "5 ms"}} {
		var ue usageError
		if _, err := bad.kernelArgs(); !errors.As(err, &ue) {
			t.Errorf("%+v: %v, want a usage error", bad, err)
		}
	}
}

// TestPowercutConsole reads what a boot acknowledged from its console as
// the series needs it: the last line of each kind, the numbers after it.
func TestPowercutConsole(t *testing.T) {
	con := "vmtest-pc: synced 1 4\nvmtest-pc: holds 3 complete 2 records 17\nvmtest-pc: synced 1 7\n" +
		"vmtest-pc: synced 12 9\nvmtest-pc: moves-at 5\nvmtest-pc: moved 6\nvmtest-pc: moved 8\n" +
		"vmtest-pc: holds 4 complete 3 records 20\n"
	for _, c := range []struct {
		words     string
		def, want int
	}{{"synced 1", -1, 7}, {"synced 12", -1, 9}, {"synced 2", -1, -1}, {"moved", 5, 8}, {"moves-at", 0, 5}, {"moves", 0, 0}} {
		if got := lastNumber(con, c.words, c.def); got != c.want {
			t.Errorf("lastNumber(%q) = %d, want %d", c.words, got, c.want)
		}
	}
	if m := lastMatch(checkedRE, con); m == nil || m[1] != "4" || m[3] != "20" {
		t.Errorf("the last check: %q", m)
	}
}

func TestParseDepends(t *testing.T) {
	out := "linux-image-6.1.0-57-amd64\n  Depends: kmod\n  Depends: linux-base\n |Depends: initramfs-tools\n" +
		"  Depends: <linux-initramfs-tool>\n    initramfs-tools\n  PreDepends: libc6\n  Recommends: firmware-linux-free\n  Breaks: fwupdate\n"
	if got := strings.Join(parseDepends(out), " "); got != "kmod linux-base initramfs-tools libc6" {
		t.Errorf("parseDepends = %q", got)
	}
}

func TestPlainKo(t *testing.T) {
	for in, want := range map[string]string{
		"kernel/drivers/target/target_core_user.ko.xz": "kernel/drivers/target/target_core_user.ko",
		"kernel/fs/ext4/ext4.ko.zst":                   "kernel/fs/ext4/ext4.ko",
		"kernel/a.kobj/b.ko":                           "kernel/a.kobj/b.ko",
	} {
		if got := plainKo(in); got != want {
			t.Errorf("plainKo(%q) = %q, want %q", in, got, want)
		}
	}
}
