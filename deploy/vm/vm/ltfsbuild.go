//go:build linux

package main

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

const ltfsBuildDoc = `
usage: deploy/vm/ltfs/build [--suite SUITE]

Builds LTFS (mkltfs, ltfs, ltfsck with the IBM sg tape backend) from source
for the full guest, into the cache's ltfs/SUITE/root under /opt/ltfs (the
prefix the guest uses), and lists the Debian packages of the libraries it
links (runtime.pkgs, for the guest's package list). The machine's own
release builds here; another suite builds in a chroot of that suite
(debootstrap minbase and the build packages, cached in ltfs-chroot/SUITE),
so that LTFS links that suite's libraries.

The source is $LTFS_SRC (a directory or a .tar.gz with top folder ltfs/),
else shared/vendor/ltfs-*.tar.gz in the directory that holds the checkout
(a workplace's copy of third-party sources). LTFS is not a Debian package:
without a source this says so and exits 3, which the callers report as
"LTFS not available", never as a pass. The patches in deploy/vm/ltfs/ fix
LTFS bugs that no drive can work around; each applies when it can.`

// ltfsBuildPkgs are what LTFS's build needs.
var ltfsBuildPkgs = []string{"build-essential", "automake", "autoconf", "libtool", "pkg-config", "libfuse-dev",
	"uuid-dev", "libxml2-dev", "libicu-dev", "icu-devtools", "uthash-dev"}

// ltfsBuildScript is LTFS's own build, run in the build's root ($IB: the
// build directory as the build sees it).
const ltfsBuildScript = `
cd "$IB/src/ltfs"
./autogen.sh
./configure --prefix=/opt/ltfs --disable-snmp --enable-icu-6x
make -j"$JOBS"
make install DESTDIR="$IB/root"
`

// ltfsRuntimeScript lists the packages of the libraries the binaries and
// libltfs link, with the build root's ldd and dpkg (libc6 and the like
// are in the guest anyway).
const ltfsRuntimeScript = `
for f in "$IB"/root/opt/ltfs/bin/* "$IB"/root/opt/ltfs/lib/*.so*; do
	LD_LIBRARY_PATH=$IB/root/opt/ltfs/lib ldd "$f" 2>/dev/null | awk '$3 ~ /^\// { print $3 }'
done | sort -u | while read -r lib; do dpkg -S "$(readlink -f "$lib")" 2>/dev/null || dpkg -S "$lib" 2>/dev/null; done |
	cut -d: -f1 | sort -u
`

// icuConfig answers LTFS's configure from pkg-config: ICU 72 and later
// have no icu-config.
const icuConfig = `#!/bin/sh
case $1 in
--cppflags) pkg-config --cflags icu-uc icu-i18n ;;
--ldflags) pkg-config --libs icu-uc icu-i18n ;;
--version) pkg-config --modversion icu-uc ;;
*) exit 1 ;;
esac
`

func ltfsBuildCmd(args []string, _ io.Writer) error {
	var suite string
	fs := newFlags("ltfs/build", ltfsBuildDoc)
	suiteFlag(fs, &suite, "suite", "build for this Debian suite")
	if err := parseOptions(fs, args); err != nil {
		return err
	}
	d, err := vmhost.FindDirs()
	if err != nil {
		return err
	}
	src := os.Getenv("LTFS_SRC")
	if src == "" {
		m, _ := filepath.Glob(filepath.Join(filepath.Dir(d.Repo), "shared/vendor/ltfs-*.tar.gz"))
		if len(m) > 0 {
			src = m[len(m)-1]
		}
	}
	if src == "" || !fileExists(src) {
		vmhost.Logf("no LTFS source: set LTFS_SRC to an LTFS checkout or tarball (github.com/LinearTapeFileSystem/ltfs)")
		return exitError(3)
	}
	cache := vmhost.CacheDir(d)
	out := filepath.Join(cache, "ltfs", suite)
	patches, _ := filepath.Glob(filepath.Join(d.VM, "ltfs/*.patch"))
	stamp, err := ltfsStamp(src, patches)
	if err != nil {
		return err
	}
	if readTrimmed(filepath.Join(out, ".done")) == stamp && readTrimmed(filepath.Join(out, "runtime.pkgs")) != "" {
		vmhost.Logf("LTFS already built in %s", out)
		return nil
	}
	// The build runs in the machine itself for its own release, else in
	// a chroot of the suite: bd is the build directory as seen from here,
	// ib as the build sees it.
	bd, ib, sys := filepath.Join(cache, "ltfs", suite+".build"), "", ""
	if suite == vmhost.MachineCodename() {
		ib = bd
		if err := installMissing(ltfsBuildPkgs); err != nil {
			return err
		}
	} else {
		sys = filepath.Join(cache, "ltfs-chroot", suite)
		bd, ib = filepath.Join(sys, "build"), "/build"
		if err := ltfsChroot(cache, sys, suite); err != nil {
			return err
		}
	}
	if err := vmhost.EnsureCommands(vmhost.HostTools...); err != nil { // patch among them
		return err
	}
	for _, dir := range []string{out, bd} {
		_ = os.RemoveAll(dir)
	}
	for _, dir := range []string{out, filepath.Join(bd, "src"), filepath.Join(bd, "bin")} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	unpack := exec.Command("tar", "-xzf", src, "-C", filepath.Join(bd, "src"))
	if st, err := os.Stat(src); err == nil && st.IsDir() {
		unpack = exec.Command("cp", "-a", src+"/.", filepath.Join(bd, "src/ltfs"))
	}
	if o, err := unpack.CombinedOutput(); err != nil {
		return fmt.Errorf("unpacking %s: %w: %s", src, err, o)
	}
	s := filepath.Join(bd, "src/ltfs")
	// Our fixes of LTFS bugs that stand between it and a drive (each
	// patch says which): applied when they apply, else reported.
	for _, p := range patches {
		if patchCmd(s, p, "--dry-run").Run() != nil {
			vmhost.Logf("LTFS: %s does not apply to this source (fixed there, or changed); building it as it is", filepath.Base(p))
			continue
		}
		if o, err := patchCmd(s, p).CombinedOutput(); err != nil {
			return fmt.Errorf("patch %s: %w: %s", p, err, o)
		}
		vmhost.Logf("LTFS: applied %s", filepath.Base(p))
	}
	// The tarball lacks the uthash submodule: Debian's uthash-dev has it.
	uthash := filepath.Join(s, "src/libltfs/uthash_submodule/src")
	for _, h := range []string{"uthash.h", "utlist.h", "utarray.h", "utstring.h"} {
		if err := installFile(filepath.Join(sys, "/usr/include", h), filepath.Join(uthash, h), 0o644); err != nil {
			return err
		}
	}
	if err := os.WriteFile(filepath.Join(bd, "bin/icu-config"), []byte(icuConfig), 0o755); err != nil {
		return err
	}
	vmhost.Logf("building LTFS from %s for %s (a few minutes)", src, suite)
	// inBuild runs a script in the build's root; shOpt -ec stops at the
	// first failure, -c not (the runtime list skips what dpkg does not
	// know).
	inBuild := func(env []string, shOpt, script string) *exec.Cmd {
		argv := append([]string{"env", "-i"}, append(env, "sh", shOpt, script)...)
		if sys != "" {
			argv = append([]string{"chroot", sys}, argv...)
		}
		return exec.Command(argv[0], argv[1:]...)
	}
	logName := filepath.Join(out, "build.log")
	log, err := os.Create(logName)
	if err != nil {
		return err
	}
	build := inBuild([]string{"PATH=" + ib + "/bin:/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL=C", fmt.Sprintf("JOBS=%d", runtime.NumCPU()), "IB=" + ib}, "-ec", ltfsBuildScript)
	build.Stdout, build.Stderr = log, log
	err = build.Run()
	_ = log.Close()
	if err != nil {
		return fmt.Errorf("LTFS build failed, see %s", logName)
	}
	for _, b := range []string{"mkltfs", "ltfs", "ltfsck"} {
		if st, err := os.Stat(filepath.Join(bd, "root/opt/ltfs/bin", b)); err != nil || st.Mode()&0o111 == 0 {
			return fmt.Errorf("LTFS built without %s (see %s)", b, logName)
		}
	}
	pkgs, err := inBuild([]string{"PATH=/usr/sbin:/usr/bin:/sbin:/bin", "IB=" + ib}, "-c", ltfsRuntimeScript).Output()
	if err != nil || strings.TrimSpace(string(pkgs)) == "" {
		where := sys
		if where == "" {
			where = "this machine"
		}
		return fmt.Errorf("no runtime packages found for LTFS (ldd in %s)", where)
	}
	if err := os.WriteFile(filepath.Join(out, "runtime.pkgs"), pkgs, 0o644); err != nil {
		return err
	}
	if err := os.Rename(filepath.Join(bd, "root"), filepath.Join(out, "root")); err != nil {
		return err
	}
	_ = os.RemoveAll(bd)
	if err := os.WriteFile(filepath.Join(out, ".done"), []byte(stamp+"\n"), 0o644); err != nil {
		return err
	}
	vmhost.Logf("LTFS built: %s/root/opt/ltfs", out)
	return nil
}

// ltfsStamp names what a build was made from: the first 16 hex digits of
// the source's SHA-256 (dir for a directory), then of the patches'.
func ltfsStamp(src string, patches []string) (string, error) {
	first := "dir"
	if st, err := os.Stat(src); err == nil && !st.IsDir() {
		b, err := os.ReadFile(src)
		if err != nil {
			return "", err
		}
		sum := sha256.Sum256(b)
		first = hex.EncodeToString(sum[:])[:16]
	}
	h := sha256.New()
	for _, p := range patches {
		b, err := os.ReadFile(p)
		if err != nil {
			return "", err
		}
		h.Write(b)
	}
	return first + "-" + hex.EncodeToString(h.Sum(nil))[:16], nil
}

func patchCmd(dir, patch string, extra ...string) *exec.Cmd {
	cmd := exec.Command("patch", append([]string{"-d", dir, "-p1", "-s", "-f"}, extra...)...)
	f, err := os.Open(patch)
	if err == nil {
		cmd.Stdin = f // closed with the process
	}
	return cmd
}

// installMissing installs the machine's packages of list that dpkg does
// not have (apt-get update first only if the install fails).
func installMissing(list []string) error {
	var missing []string
	for _, p := range list {
		if exec.Command("dpkg", "-s", p).Run() != nil {
			missing = append(missing, p)
		}
	}
	if len(missing) == 0 {
		return nil
	}
	vmhost.Logf("installing LTFS build packages: %s", strings.Join(missing, " "))
	install := func() error {
		cmd := exec.Command("apt-get", append([]string{"install", "-y", "-q"}, missing...)...)
		cmd.Stdout, cmd.Stderr = os.Stderr, os.Stderr
		return cmd.Run()
	}
	if install() == nil {
		return nil
	}
	upd := exec.Command("apt-get", "update", "-q")
	upd.Stdout, upd.Stderr = os.Stderr, os.Stderr
	if err := upd.Run(); err != nil {
		return fmt.Errorf("apt-get update: %w", err)
	}
	return install()
}

// ltfsChroot makes the chroot of suite with LTFS's build packages, unless
// it is there.
func ltfsChroot(cache, sys, suite string) error {
	want := strings.Join(append(ltfsBuildPkgs, "ca-certificates"), ",")
	return debootstrapRoot(sys, suite, want, filepath.Join(cache, "ltfs-chroot", suite+".log"), false, nil)
}
