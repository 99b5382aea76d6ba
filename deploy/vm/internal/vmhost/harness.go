package vmhost

import (
	"compress/gzip"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
)

// KernelTestPkgs are the packages whose Go tests need a real kernel
// (configfs, uio, netlink): built as test binaries into the harness, run
// by the smoke scenario (guestcheck go-test). They skip themselves
// elsewhere unless VSCSID_KERNEL_TESTS=1.
var KernelTestPkgs = []string{"./target/netlink"}

// PackHarness writes out: a gzip'd newc cpio of /init and /vmtest (the
// guest library, scenarios, the guestcheck program and the kernel tests,
// built here static like vscsid) from the work tree. The kernel unpacks it
// over the guest's base initramfs when the two are concatenated, so that
// every boot runs the tree's scenarios without a rebuild of the guest.
// pkgs are more Go commands (a scenario's "# vm-pack:" header), built into
// /vmtest/bin/.
func PackHarness(d Dirs, out string, pkgs []string) error {
	stage, err := os.MkdirTemp("", "vm-harness-")
	if err != nil {
		return err
	}
	defer func() { _ = os.RemoveAll(stage) }()
	vt := filepath.Join(stage, "vmtest")
	for _, sub := range []string{"scenarios", "gotest", "bin"} {
		if err := os.MkdirAll(filepath.Join(vt, sub), 0o755); err != nil {
			return err
		}
	}
	if err := BuildForGuest(d.Repo, "./deploy/vm/guestcheck", filepath.Join(vt, "guestcheck"), Stripped); err != nil {
		return err
	}
	for _, pkg := range KernelTestPkgs {
		if err := BuildForGuest(d.Repo, pkg, filepath.Join(vt, "gotest", filepath.Base(pkg)+".test"), Stripped|TestBinary); err != nil {
			return err
		}
	}
	for _, pkg := range pkgs {
		if err := BuildForGuest(d.Repo, pkg, filepath.Join(vt, "bin", filepath.Base(pkg)), Stripped); err != nil {
			return err
		}
	}
	g := filepath.Join(d.VM, "guest")
	type fileCopy struct {
		from, to string
		mode     os.FileMode
	}
	copies := []fileCopy{
		{g + "/init", stage + "/init", 0o755},
		{g + "/lib.sh", vt + "/lib.sh", 0o644},
		{g + "/exp.sh", vt + "/exp.sh", 0o644},
		{g + "/run-scenario", vt + "/run-scenario", 0o755},
		{g + "/run-scenarios", vt + "/run-scenarios", 0o755},
	}
	names, err := ScenarioNames(filepath.Join(d.VM, "scenarios"))
	if err != nil {
		return err
	}
	for _, n := range names {
		copies = append(copies, fileCopy{filepath.Join(d.VM, "scenarios", n+".sh"), filepath.Join(vt, "scenarios", n+".sh"), 0o644})
	}
	for _, c := range copies {
		b, err := os.ReadFile(c.from)
		if err != nil {
			return err
		}
		if err := os.WriteFile(c.to, b, c.mode); err != nil {
			return err
		}
		if err := os.Chmod(c.to, c.mode); err != nil {
			return err
		}
	}
	return Cpio(stage, out, true)
}

// GuestBuild is how a Go package is built for a guest (always static,
// linux/amd64, with trimmed paths).
type GuestBuild int

// The ways: Stripped (-s -w) for the harness's helpers, Stamped with
// deploy/version's stamp as the packages build vscsid, TestBinary (go
// test -c) for the kernel-facing tests.
const (
	Stripped   GuestBuild = 1 << iota // -s -w: the harness's helpers
	Stamped                           // deploy/version's stamp, as the packages build vscsid
	TestBinary                        // go test -c: the kernel-facing tests
)

// BuildForGuest builds pkg of the checkout dir into out.
func BuildForGuest(dir, pkg, out string, how GuestBuild) error {
	args := []string{"build"}
	if how&TestBinary != 0 {
		args = []string{"test", "-c"}
	}
	args = append(args, "-trimpath")
	var ldflags []string
	if how&Stripped != 0 {
		ldflags = append(ldflags, "-s", "-w")
	}
	if how&Stamped != 0 {
		version := exec.Command(filepath.Join(dir, "deploy/version"), "--ldflags")
		version.Dir = dir
		stamp, err := version.Output()
		if err != nil {
			return fmt.Errorf("deploy/version --ldflags in %s: %w", dir, err)
		}
		ldflags = append(ldflags, strings.TrimSpace(string(stamp)))
	}
	if len(ldflags) > 0 {
		args = append(args, "-ldflags", strings.Join(ldflags, " "))
	}
	cmd := exec.Command("go", append(args, "-o", out, pkg)...)
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0", "GOOS=linux", "GOARCH=amd64")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go %s %s failed", args[0], pkg)
	}
	return nil
}

// Cpio writes dir's tree as a newc cpio (sorted) to out: with initramfs
// every file owned by root and the archive gzip'd (level 1), else as it is
// (the full guest's root file system keeps its owners, _apt's and the
// others', and is not compressed: the kernel unpacks it faster so).
func Cpio(dir, out string, initramfs bool) error {
	var list []string
	err := filepath.Walk(dir, func(p string, _ os.FileInfo, err error) error {
		if err != nil {
			return err
		}
		if p != dir {
			list = append(list, "."+strings.TrimPrefix(p, dir))
		}
		return nil
	})
	if err != nil {
		return err
	}
	sort.Strings(list)
	f, err := os.Create(out)
	if err != nil {
		return err
	}
	args := []string{"--quiet", "-o", "-H", "newc"}
	var w io.WriteCloser = f
	if initramfs {
		args = append(args, "-R", "0:0")
		w, _ = gzip.NewWriterLevel(f, 1)
	}
	cmd := exec.Command("cpio", args...)
	cmd.Dir = dir
	cmd.Stdin = strings.NewReader(strings.Join(list, "\n") + "\n")
	cmd.Stdout, cmd.Stderr = w, os.Stderr
	err = cmd.Run()
	if initramfs {
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("packing the harness: %w", err)
	}
	return nil
}

// GoCommand builds the repository's Go command pkg for this host as go
// run does and returns its path in Go's build cache: a lookup when nothing
// changed, where go build -o would link again (about a second of CPU).
// go run keeps a binary the second time it links the same one, so the
// first call after a change asks twice.
func GoCommand(d Dirs, pkg string) (string, error) {
	var bin string
	for range 2 {
		cmd := exec.Command("go", "run", "-exec", "echo", pkg)
		cmd.Dir = d.Repo
		cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
		cmd.Stderr = os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("go build %s: %w", pkg, err)
		}
		bin = strings.TrimSpace(string(out))
		if st, err := os.Stat(bin); err == nil && st.Mode()&0o111 != 0 {
			return bin, nil
		}
	}
	return "", fmt.Errorf("go run left no binary of %s in Go's build cache (%s)", pkg, bin)
}
