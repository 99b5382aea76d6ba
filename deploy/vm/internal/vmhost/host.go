// Package vmhost is the host side of the VM harness: where its files are,
// the host's tools, the scenarios' headers, booting a guest under qemu and
// reading the results it prints. deploy/vm/vm's commands and the suite
// use it.
package vmhost

import (
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"sort"
	"strings"
)

// Suites are the Debian releases a guest is built from; DefaultSuite is
// the one a command boots when told none.
var Suites = []string{"bookworm", "trixie", "sid"}

// DefaultSuite is bookworm: the kernel (6.1) most users run.
const DefaultSuite = "bookworm"

// CheckSuite refuses a suite outside Suites, naming them.
func CheckSuite(s string) error {
	if slices.Contains(Suites, s) {
		return nil
	}
	return fmt.Errorf("unknown suite %q (want one of: %s)", s, strings.Join(Suites, " "))
}

// Dirs are the harness's places.
type Dirs struct {
	Repo string // the checkout
	VM   string // Repo/deploy/vm
	Out  string // built guests and runs: VM_OUT_DIR, else VM/out
}

// FindDirs locates the checkout: VM_REPO_DIR (set by deploy/vm/lib/vm,
// which builds and starts the Go commands), else the directory holding
// deploy/vm/run above the working directory.
func FindDirs() (Dirs, error) {
	repo := os.Getenv("VM_REPO_DIR")
	if repo == "" {
		dir, err := os.Getwd()
		if err != nil {
			return Dirs{}, err
		}
		for {
			if _, err := os.Stat(filepath.Join(dir, "deploy/vm/run")); err == nil {
				repo = dir
				break
			}
			up := filepath.Dir(dir)
			if up == dir {
				return Dirs{}, errors.New("not inside the vscsid repository (no deploy/vm/run above the working directory)")
			}
			dir = up
		}
	}
	d := Dirs{Repo: repo, VM: filepath.Join(repo, "deploy/vm")}
	d.Out = os.Getenv("VM_OUT_DIR")
	if d.Out == "" {
		d.Out = filepath.Join(d.VM, "out")
	}
	return d, nil
}

// SMP is the guests' vCPU count: VM_SMP, else 2 (TCG runs each on a host
// thread).
func SMP() string {
	if s := os.Getenv("VM_SMP"); s != "" {
		return s
	}
	return "2"
}

// Logf prints a progress line on stderr ("vm: ...").
func Logf(format string, a ...any) {
	_, _ = fmt.Fprintf(os.Stderr, "vm: "+format+"\n", a...)
}

// HostTools are the commands building and booting a guest needs, with
// the Debian package of each: qemu; cpio for the images; kmod's depmod
// and modprobe for the modules' order, xz and zstd for the compressed
// ones; dpkg-deb and apt for the packages; tar (artefacts, LTFS's source,
// with gzip); mkfs.ext4 for the power cuts' disk; openssl for the full
// guest's TLS; patch for LTFS.
var HostTools = []string{
	"qemu-system-x86_64:qemu-system-x86", "cpio:cpio", "depmod:kmod", "modprobe:kmod",
	"dpkg-deb:dpkg", "apt-get:apt", "gzip:gzip", "xz:xz-utils", "zstd:zstd", "tar:tar",
	"mkfs.ext4:e2fsprogs", "openssl:openssl", "patch:patch",
}

// EnsureCommands takes COMMAND:PACKAGE pairs and, for the commands missing
// from PATH, runs apt-get update once and installs only their packages
// (as root; otherwise it says what to install).
func EnsureCommands(pairs ...string) error {
	var missing []string
	for _, p := range pairs {
		c, pkg, _ := strings.Cut(p, ":")
		if _, err := exec.LookPath(c); err != nil {
			missing = append(missing, pkg)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	sort.Strings(missing)
	missing = slices.Compact(missing)
	if os.Getuid() != 0 {
		return fmt.Errorf("missing host packages: %s (run as root, or: apt-get install %s)", strings.Join(missing, " "), strings.Join(missing, " "))
	}
	Logf("installing host packages: %s", strings.Join(missing, " "))
	if err := runToStderr("apt-get", "update", "-qq"); err != nil {
		return fmt.Errorf("apt-get update: %w", err)
	}
	args := append([]string{"install", "-y", "-qq", "--no-install-recommends"}, missing...)
	cmd := exec.Command("apt-get", args...)
	cmd.Env = append(os.Environ(), "DEBIAN_FRONTEND=noninteractive")
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("apt-get install %s: %w", strings.Join(missing, " "), err)
	}
	return nil
}

func runToStderr(name string, args ...string) error {
	cmd := exec.Command(name, args...)
	cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
	return cmd.Run()
}

// AddToolPaths puts the sbin directories and /usr/local/go/bin on PATH, as
// the shell entry points do (depmod, mkfs and a Go installed from the
// tarball).
func AddToolPaths() {
	_ = os.Setenv("PATH", os.Getenv("PATH")+":/usr/local/sbin:/usr/sbin:/sbin:/usr/local/go/bin")
}

// PruneRuns removes all but the keep newest run directories of dir (their
// names begin with the time they started).
func PruneRuns(dir string, keep int) {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return
	}
	var names []string
	for _, e := range ents {
		if e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Sort(sort.Reverse(sort.StringSlice(names)))
	for _, n := range names[min(keep, len(names)):] {
		_ = os.RemoveAll(filepath.Join(dir, n))
	}
}

// NewRunDir makes a new directory named prefix+random in runs, and points
// runs/latest at it.
func NewRunDir(runs, prefix string) (string, error) {
	if err := os.MkdirAll(runs, 0o755); err != nil {
		return "", err
	}
	dir, err := os.MkdirTemp(runs, prefix)
	if err != nil {
		return "", err
	}
	tmp := filepath.Join(runs, ".latest."+filepath.Base(dir))
	if err := os.Symlink(dir, tmp); err != nil {
		return "", err
	}
	return dir, os.Rename(tmp, filepath.Join(runs, "latest"))
}
