//go:build linux

package main

import (
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

const fullBuildDoc = `
usage: deploy/vm/full/build [options]

Builds the full test guest: a debootstrapped Debian (minbase) with systemd
as PID 1, dbus, udev, targetcli-fb/rtslib-fb, tcmu-runner, mtx, Bacula's
storage daemon, open-iscsi, fio and LTFS (deploy/vm/ltfs/build, when its
source is there), and vscsid installed from its Debian package
(deploy/package/build; the unit enabled by its postinst), booted from an
initramfs that is the whole root file system. The debootstrapped rootfs
is cached in the cache's full-SUITE/ and reused; the kernel is the
minimal guest's (build-guest --no-daemon when missing). Every build
installs the vscsid package, the config and the scenarios on a copy of
the cached rootfs and writes deploy/vm/out/full-SUITE/{vmlinuz,rootfs.cpio}.
In CI (CI=true) a guest without LTFS is an error.`

// fullPkgs are the full guest's packages (minbase adds apt, dpkg,
// coreutils, ...). tcmu-runner: the coexistence scenario runs it beside
// vscsid. mtx and bacula-sd: a targetcli-made library driven with mtx and
// Bacula's own mtx-changer script (bacula-sd's service is masked). fuse,
// and the packages of the libraries LTFS links (ltfs/build lists them).
// fio: the perf suite. iproute2: the two-host scenario's addresses.
const fullPkgs = "systemd,systemd-sysv,dbus,targetcli-fb,python3-rtslib-fb,python3-dbus,python3-gi,kmod,sg3-utils,mt-st,procps,udev,tcmu-runner,mtx,bacula-sd,fuse,fio,open-iscsi,strace,iproute2"

// amandaPkgs (--amanda, a rootfs of its own so that the other guests stay
// 60 MiB smaller): amtapetype for the btape suite; dma is the smallest
// mail transport agent for its mailx (debootstrap picks none for a
// virtual dependency); libencode-locale-perl is a module Amanda's perl
// code loads that its packages do not depend on; the inetd service they
// bring is masked.
const amandaPkgs = "amanda-server,dma,libencode-locale-perl"

// fullModules go into the rootfs with their dependencies.
// iscsi_target_mod: rtslib loads it when targetcli lists the fabrics.
// iscsi_tcp is the initiator; both need crc32c for the login (digests).
// scsi_debug: the perf suite's kernel-only reference disk. virtio_pci,
// virtio_net: the two-host scenario's private network.
var fullModules = strings.Fields("configfs uio target_core_mod target_core_user tcm_loop target_core_iblock target_core_file target_core_pscsi iscsi_target_mod iscsi_tcp crc32c_generic scsi_mod sd_mod st sg ch fuse crc-t10dif crct10dif_generic t10-pi scsi_debug virtio_pci virtio_net")

type fullBuild struct {
	d                        vmhost.Dirs
	suite                    string
	refresh, amanda          bool
	vscsid, vscsictl, base   string
	fc, out, kc, root, cache string
}

func fullBuildCmd(args []string, _ io.Writer) error {
	var b fullBuild
	fs := newFlags("full/build", fullBuildDoc)
	suiteFlag(fs, &b.suite, "suite", "the guest's Debian suite and kernel")
	fs.BoolVar(&b.refresh, "refresh", false, "debootstrap the cached rootfs again")
	fs.BoolVar(&b.amanda, "amanda", false, "with Amanda (amtapetype, for the btape suite), in a rootfs of its own")
	fs.StringVar(&b.vscsid, "vscsid", "", "package this static `FILE` as vscsid instead of building ./cmd/vscsid")
	fs.StringVar(&b.vscsictl, "vscsictl", "", "the same for vscsictl (`FILE`)")
	fs.StringVar(&b.base, "vscsid-base", "", "a second vscsid (`FILE`, another commit's: perf/run --base) in the guest as\n/usr/local/sbin/vscsid-base, which the perf suite measures against the\npackage's")
	if err := parseOptions(fs, args); err != nil {
		return err
	}
	if b.base != "" {
		if st, err := os.Stat(b.base); err != nil || st.Mode()&0o111 == 0 {
			return usagef("--vscsid-base %s: not an executable", b.base)
		}
	}
	if os.Getuid() != 0 {
		return fmt.Errorf("full/build needs root (debootstrap, device nodes, file ownership)")
	}
	var err error
	if b.d, err = vmhost.FindDirs(); err != nil {
		return err
	}
	b.cache = vmhost.CacheDir(b.d)
	b.fc = filepath.Join(b.cache, "full-"+b.suite)
	b.out = filepath.Join(b.d.Out, "full-"+b.suite)
	b.kc = filepath.Join(b.cache, b.suite) // the minimal guest's extracted kernel
	for _, dir := range []string{b.fc, b.out} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	unlock, err := lockFile(filepath.Join(b.out, ".lock"), unix.LOCK_EX)
	if err != nil {
		return err
	}
	defer unlock()
	start := time.Now()
	pkgs, rootfs := fullPkgs, "rootfs"
	if b.amanda {
		pkgs, rootfs = pkgs+","+amandaPkgs, "rootfs-amanda"
	}
	ltfs, pkgs, err := b.ltfs(pkgs)
	if err != nil {
		return err
	}
	if err := b.debootstrap(rootfs, pkgs); err != nil {
		return err
	}
	kver, kimg, err := b.kernel()
	if err != nil {
		return err
	}
	b.root = filepath.Join(b.out, "root")
	_ = os.RemoveAll(b.root)
	vmhost.Logf("copying the cached rootfs")
	if out, err := exec.Command("cp", "-ax", filepath.Join(b.fc, rootfs), b.root).CombinedOutput(); err != nil {
		return fmt.Errorf("copying the rootfs: %w: %s", err, out)
	}
	_ = os.Remove(filepath.Join(b.root, ".done"))
	for _, step := range []func() error{
		func() error { return b.modules(kver) },
		b.vscsidPackage,
		b.harness,
		func() error { return b.system(ltfs) },
	} {
		if err := step(); err != nil {
			return err
		}
	}
	if err := copyFile(kimg, filepath.Join(b.out, "vmlinuz"), 0o644); err != nil {
		return err
	}
	vmhost.Logf("packing the rootfs")
	cpio := filepath.Join(b.out, "rootfs.cpio")
	if err := vmhost.Cpio(b.root, cpio+".new", false); err != nil {
		return err
	}
	if err := os.Rename(cpio+".new", cpio); err != nil {
		return err
	}
	_ = os.RemoveAll(b.root)
	rev, err := exec.Command("git", "-C", b.d.Repo, "describe", "--always", "--dirty").Output()
	if err != nil {
		rev = []byte("unknown")
	}
	env := fmt.Sprintf("suite=%s\nkver=%s\nrepo_rev=%s\n", b.suite, kver, strings.TrimSpace(string(rev)))
	if err := os.WriteFile(filepath.Join(b.out, "guest.env"), []byte(env), 0o644); err != nil {
		return err
	}
	st, _ := os.Stat(cpio)
	vmhost.Logf("full guest ready: %s/vmlinuz (%s), %s (%d MiB); build took %d s", b.out, kver, cpio, st.Size()>>20, int(time.Since(start).Seconds()))
	return nil
}

// ltfs builds LTFS (ltfs/build: exit 3 when its source is missing) and
// adds the packages of its libraries to pkgs. In CI a guest without LTFS
// is an error: the suite must not pass with no LTFS coverage.
func (b *fullBuild) ltfs(pkgs string) (bool, string, error) {
	self, err := os.Executable()
	if err != nil {
		return false, "", err
	}
	rc, err := runSelf(os.Stderr, self, "ltfs-build", "--suite", b.suite)
	if err != nil {
		return false, "", err
	}
	ci := os.Getenv("CI") == "true"
	switch {
	case rc == 0:
		runtime, err := os.ReadFile(filepath.Join(b.cache, "ltfs", b.suite, "runtime.pkgs"))
		if err != nil {
			return false, "", err
		}
		for _, p := range strings.Fields(string(runtime)) {
			if p != "libc6" && p != "libgcc-s1" {
				pkgs += "," + p
			}
		}
		return true, pkgs, nil
	case ci && rc != 3:
		return false, "", fmt.Errorf("CI=true and the LTFS build for %s failed (above): the full guest needs LTFS in CI", b.suite)
	case ci:
		return false, "", fmt.Errorf("CI=true and no LTFS for the full guest: put the LTFS source (github.com/LinearTapeFileSystem/ltfs, a tarball with top folder ltfs/) in shared/vendor/ltfs-*.tar.gz beside the checkout, or set LTFS_SRC to it")
	}
	vmhost.Logf("no LTFS in the full guest (deploy/vm/ltfs/build could not build it): its checks will not run")
	return false, pkgs, nil
}

// debootstrap makes the cached rootfs of pkgs unless it is there,
// slimmed: no docs, man pages, locales, apt lists and caches.
func (b *fullBuild) debootstrap(rootfs, pkgs string) error {
	return debootstrapRoot(filepath.Join(b.fc, rootfs), b.suite, pkgs, filepath.Join(b.fc, "debootstrap.log"), b.refresh, func(root string) {
		for _, pat := range []string{"usr/share/doc/*", "usr/share/man/*", "usr/share/info/*", "usr/share/locale/*", "usr/share/lintian/*", "usr/share/linda/*",
			"var/cache/apt/*.bin", "var/cache/apt/archives/*.deb", "var/lib/apt/lists/*_*", "var/log/*.log"} {
			m, _ := filepath.Glob(filepath.Join(root, pat))
			for _, f := range m {
				_ = os.RemoveAll(f)
			}
		}
	})
}

// debootstrapRoot makes dir a minbase root of suite with the packages
// include (comma-separated), unless its .done names them (and not
// refresh): debootstrap into dir.new (its output in logName), slim (if
// not nil) applied to it, then put in dir's place.
func debootstrapRoot(dir, suite, include, logName string, refresh bool, slim func(root string)) error {
	if !refresh && readTrimmed(filepath.Join(dir, ".done")) == include {
		return nil
	}
	if err := vmhost.EnsureCommands("debootstrap:debootstrap"); err != nil {
		return err
	}
	mirror, err := vmhost.DebianMirror(false)
	if err != nil {
		return err
	}
	vmhost.Logf("debootstrap %s minbase into %s from %s (a minute or more)", suite, dir, mirror)
	tmp := dir + ".new"
	_ = os.RemoveAll(tmp)
	for _, d := range []string{filepath.Dir(dir), filepath.Dir(logName)} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	t0 := time.Now()
	log, err := os.Create(logName)
	if err != nil {
		return err
	}
	cmd := exec.Command("debootstrap", "--variant=minbase", "--include="+include, suite, tmp, mirror)
	cmd.Stdout, cmd.Stderr = log, log
	err = cmd.Run()
	_ = log.Close()
	// debootstrap can leave the target's /proc mounted; the cache must be
	// plain files (cp -a would read the host's processes).
	unmountBelow(tmp)
	if err != nil {
		return fmt.Errorf("debootstrap failed, see %s", logName)
	}
	vmhost.Logf("debootstrap took %d s", int(time.Since(t0).Seconds()))
	if slim != nil {
		slim(tmp)
	}
	if err := os.WriteFile(filepath.Join(tmp, ".done"), []byte(include+"\n"), 0o644); err != nil {
		return err
	}
	_ = os.RemoveAll(dir)
	return os.Rename(tmp, dir)
}

// unmountBelow lazily unmounts what is mounted below dir, deepest first.
func unmountBelow(dir string) {
	b, err := os.ReadFile("/proc/self/mountinfo")
	if err != nil {
		return
	}
	var below []string
	for _, l := range strings.Split(string(b), "\n") {
		if f := strings.Fields(l); len(f) > 4 && strings.HasPrefix(f[4], dir+"/") {
			below = append(below, f[4])
		}
	}
	for i := len(below) - 1; i >= 0; i-- {
		_ = unix.Unmount(below[i], unix.MNT_DETACH)
	}
}

// kernel is the minimal guest's extracted kernel (build-guest --no-daemon
// makes it when missing): its version and image.
func (b *fullBuild) kernel() (kver, kimg string, err error) {
	if !fileExists(filepath.Join(b.kc, "kver")) || !fileExists(filepath.Join(b.kc, ".extracted-v2")) {
		vmhost.Logf("no extracted %s kernel in %s: running build-guest --no-daemon", b.suite, b.kc)
		self, err := os.Executable()
		if err != nil {
			return "", "", err
		}
		if rc, err := runSelf(os.Stderr, self, "build-guest", "--suite", b.suite, "--no-daemon"); err != nil || rc != 0 {
			return "", "", fmt.Errorf("build-guest failed")
		}
	}
	kver = readTrimmed(filepath.Join(b.kc, "kver"))
	kroot := filepath.Join(b.kc, "kernel")
	// /boot/vmlinuz-<kver>, or (split packages) /lib/modules/<kver>/vmlinuz.
	for _, f := range []string{filepath.Join(kroot, "boot/vmlinuz-"+kver), filepath.Join(kroot, "lib/modules", kver, "vmlinuz")} {
		if fileExists(f) {
			return kver, f, nil
		}
	}
	return "", "", fmt.Errorf("no vmlinuz for %s in %s", kver, kroot)
}

// modules copies the closure of fullModules into the rootfs in the
// kernel's own layout (compressed as shipped: the guest's kmod reads
// them), then runs depmod and checks that the ones the guest needs load.
func (b *fullBuild) modules(kver string) error {
	kroot := filepath.Join(b.kc, "kernel")
	kmods := filepath.Join(kroot, "lib/modules", kver)
	mdir := filepath.Join(b.root, "usr/lib/modules", kver)
	_ = os.RemoveAll(mdir)
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		return err
	}
	for _, m := range fullModules {
		// Some are gone from newer kernels (crc32c_generic,
		// crct10dif_generic: built in or folded into the crc library);
		// those the guest needs are checked below.
		files, err := showDepends(kroot, kver, m)
		if err != nil {
			vmhost.Logf("module %s not in %s (optional)", m, kver)
			continue
		}
		for _, rel := range files {
			if err := installFile(filepath.Join(kmods, rel), filepath.Join(mdir, rel), 0); err != nil {
				return err
			}
		}
	}
	for _, f := range []string{"modules.builtin", "modules.builtin.modinfo", "modules.order"} {
		if fileExists(filepath.Join(kmods, f)) {
			if err := copyFile(filepath.Join(kmods, f), filepath.Join(mdir, f), 0); err != nil {
				return err
			}
		}
	}
	if out, err := exec.Command("depmod", "-b", b.root, kver).CombinedOutput(); err != nil {
		return fmt.Errorf("depmod for the rootfs failed: %w: %s", err, out)
	}
	for _, m := range []string{"target_core_user", "tcm_loop", "iscsi_target_mod", "st", "sd_mod"} {
		if _, err := showDepends(b.root, kver, m); err != nil {
			return fmt.Errorf("module %s missing in the rootfs", m)
		}
	}
	return nil
}

// installFile copies src to dst, making dst's directory (install -D).
func installFile(src, dst string, mode os.FileMode) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	if err := copyFile(src, dst, mode); err != nil {
		return err
	}
	if mode != 0 {
		return os.Chmod(dst, mode) // past the umask
	}
	return nil
}

// vscsidPackage installs vscsid as a user installs it: its Debian package
// (deploy/package/build), with dpkg in the rootfs (the maintainer scripts
// enable the unit; no systemd runs to start it). A second package, the
// same files one Debian revision later, waits in
// /usr/local/share/vscsid/upgrade/ for the upgrade check. --vscsid and
// --vscsictl put the given binaries in both.
func (b *fullBuild) vscsidPackage() error {
	bindir, debdir := filepath.Join(b.out, "bin"), filepath.Join(b.out, "deb")
	_ = os.RemoveAll(debdir)
	for _, d := range []string{bindir, debdir} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	debArgs := []string{"--no-lint"}
	if b.vscsid != "" || b.vscsictl != "" {
		for name, given := range map[string]string{"vscsid": b.vscsid, "vscsictl": b.vscsictl} {
			dst := filepath.Join(bindir, name)
			var err error
			if given != "" {
				err = copyFile(given, dst, 0o755)
			} else {
				err = vmhost.BuildForGuest(b.d.Repo, "./cmd/"+name, dst, vmhost.Stamped)
			}
			if err != nil {
				return err
			}
		}
		debArgs = append(debArgs, "--vscsid", filepath.Join(bindir, "vscsid"), "--vscsictl", filepath.Join(bindir, "vscsictl"))
	}
	pkgBuild := func(extra ...string) (string, error) {
		cmd := exec.Command(filepath.Join(b.d.Repo, "deploy/package/build"), append(append(slices.Clone(debArgs), "--out", debdir), extra...)...)
		cmd.Dir, cmd.Stderr = b.d.Repo, os.Stderr
		out, err := cmd.Output()
		if err != nil {
			return "", fmt.Errorf("deploy/package/build %s failed", strings.Join(extra, " "))
		}
		return strings.TrimSpace(string(out)), nil
	}
	deb, err := pkgBuild()
	if err != nil {
		return err
	}
	// vscsid_VERSION-REVISION_amd64.deb; the upgrade is REVISION+1.
	ver := strings.TrimPrefix(strings.TrimSuffix(filepath.Base(deb), "_amd64.deb"), "vscsid_")
	i := strings.LastIndexByte(ver, '-')
	rev, err := strconv.Atoi(ver[i+1:])
	if i < 0 || err != nil {
		return fmt.Errorf("%s: no Debian revision in the package's name", deb)
	}
	upgrade, err := pkgBuild("--version", fmt.Sprintf("%s-%d", ver[:i], rev+1))
	if err != nil {
		return err
	}
	if err := copyFile(deb, filepath.Join(b.root, "tmp/vscsid.deb"), 0o644); err != nil {
		return err
	}
	if out, err := exec.Command("chroot", b.root, "dpkg", "-i", "/tmp/vscsid.deb").CombinedOutput(); err != nil {
		_ = os.WriteFile(filepath.Join(debdir, "dpkg.log"), out, 0o644)
		return fmt.Errorf("dpkg -i of %s in the rootfs failed: %w\n%s", deb, err, out)
	}
	_ = os.Remove(filepath.Join(b.root, "tmp/vscsid.deb"))
	if err := installFile(upgrade, filepath.Join(b.root, "usr/local/share/vscsid/upgrade", filepath.Base(upgrade)), 0o644); err != nil {
		return err
	}
	for _, f := range []string{"usr/sbin/vscsid", "usr/bin/vscsictl"} {
		if static, err := isStatic(filepath.Join(b.root, f)); err != nil || !static {
			return fmt.Errorf("/%s is not static (CGO_ENABLED=0)", f)
		}
	}
	if _, err := os.Readlink(filepath.Join(b.root, "etc/systemd/system/multi-user.target.wants/vscsid.service")); err != nil {
		return fmt.Errorf("the package's postinst did not enable vscsid.service")
	}
	vmhost.Logf("installed %s; upgrade to %s waits in the guest", filepath.Base(deb), filepath.Base(upgrade))
	if b.base != "" {
		if err := installFile(b.base, filepath.Join(b.root, "usr/local/sbin/vscsid-base"), 0o755); err != nil {
			return err
		}
	}
	// The perf suite's TCMU floor and the guests' check program, static
	// like vscsid.
	for pkg, dst := range map[string]string{"./deploy/vm/perf/floor": "usr/local/bin/vscsi-floor", "./deploy/vm/guestcheck": "usr/local/bin/guestcheck"} {
		bin := filepath.Join(bindir, filepath.Base(pkg))
		if err := vmhost.BuildForGuest(b.d.Repo, pkg, bin, 0); err != nil {
			return err
		}
		if err := installFile(bin, filepath.Join(b.root, dst), 0o755); err != nil {
			return err
		}
	}
	return nil
}

// harness installs the test: the config, TLS for the metrics check, the
// targetcli scripts, vmtest, the check library, the runner and the
// scenarios.
func (b *fullBuild) harness() error {
	full := filepath.Join(b.d.VM, "full")
	// The metrics check's TLS: a key and self-signed certificate for
	// 127.0.0.1 made here for each build (none in the repository), and
	// the exporter-toolkit web config naming them.
	if err := vmhost.EnsureCommands(vmhost.HostTools...); err != nil { // openssl among them
		return err
	}
	tls := filepath.Join(b.root, "etc/vscsid/tls")
	if err := os.MkdirAll(tls, 0o700); err != nil {
		return err
	}
	out, err := exec.Command("openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1", "-nodes", "-days", "3650",
		"-subj", "/CN=vscsid-vmtest", "-addext", "subjectAltName=IP:127.0.0.1",
		"-keyout", filepath.Join(tls, "metrics.key"), "-out", filepath.Join(tls, "metrics.crt")).CombinedOutput()
	if err != nil {
		return fmt.Errorf("openssl could not make the metrics check's certificate: %w\n%s", err, out)
	}
	if err := os.Chmod(filepath.Join(tls, "metrics.key"), 0o600); err != nil {
		return err
	}
	type inst struct {
		src, dst string
		mode     os.FileMode
	}
	files := []inst{
		{full + "/guest/web-config.yml", "etc/vscsid/web-config.yml", 0o600},
		// The test's own config over the package's conffile, as an admin
		// edits it.
		{full + "/guest/vscsid.yaml", "etc/vscsid/vscsid.yaml", 0o644},
		{full + "/guest/vmtest.service", "etc/systemd/system/vmtest.service", 0o644},
		{full + "/guest/vmtest", "usr/local/sbin/vmtest", 0o755},
		// The check library both guests share, the scenario runner.
		{b.d.VM + "/guest/lib.sh", "usr/local/lib/vmtest/lib.sh", 0o644},
		{b.d.VM + "/guest/run-scenario", "usr/local/lib/vmtest/run-scenario", 0o755},
		{b.d.VM + "/guest/run-scenarios", "usr/local/lib/vmtest/run-scenarios", 0o755},
	}
	// deploy/targetcli's scripts, as a user would copy them.
	for _, f := range []string{"lib.sh", "create-vdisk.sh", "create-vtape.sh", "remove.sh"} {
		mode := os.FileMode(0o755)
		if f == "lib.sh" {
			mode = 0o644
		}
		files = append(files, inst{b.d.Repo + "/deploy/targetcli/" + f, "usr/local/share/vscsid/targetcli/" + f, mode})
	}
	for _, f := range []string{"helpers", "ltfs", "iscsi", "hosts", "library", "perf", "soak", "btape", "amtapetype"} {
		files = append(files, inst{full + "/guest/" + f + ".sh", "usr/local/lib/vmtest/" + f + ".sh", 0o644})
	}
	scen, err := vmhost.ScenarioNames(full + "/scenarios")
	if err != nil {
		return err
	}
	for _, n := range scen {
		files = append(files, inst{full + "/scenarios/" + n + ".sh", "usr/local/lib/vmtest/scenarios/" + n + ".sh", 0o644})
	}
	for _, f := range files {
		if err := installFile(f.src, filepath.Join(b.root, f.dst), f.mode); err != nil {
			return err
		}
	}
	if out, err := exec.Command(filepath.Join(b.root, "usr/sbin/vscsid"), "--config", filepath.Join(b.root, "etc/vscsid/vscsid.yaml"), "--check-config").CombinedOutput(); err != nil {
		return fmt.Errorf("guest/vscsid.yaml does not pass vscsid --check-config: %s", out)
	}
	return nil
}

// system makes the rootfs a throwaway test machine: LTFS under /opt/ltfs,
// the test's unit enabled, the services that must not run masked, no
// getty, nothing periodic, an empty fstab, /init.
func (b *fullBuild) system(ltfs bool) error {
	if ltfs {
		if out, err := exec.Command("cp", "-a", filepath.Join(b.cache, "ltfs", b.suite, "root/opt"), b.root+"/").CombinedOutput(); err != nil {
			return fmt.Errorf("copying LTFS: %w: %s", err, out)
		}
	}
	sys := filepath.Join(b.root, "etc/systemd/system")
	if err := os.MkdirAll(filepath.Join(sys, "multi-user.target.wants"), 0o755); err != nil {
		return err
	}
	link := func(target, name string) error {
		_ = os.Remove(name)
		return os.Symlink(target, name)
	}
	if err := link("/etc/systemd/system/vmtest.service", filepath.Join(sys, "multi-user.target.wants/vmtest.service")); err != nil {
		return err
	}
	// tcmu-runner's postinst enables it; here it runs only in the
	// coexistence scenario (started before vscsid). Its D-Bus activation
	// file stays: nothing calls org.kernel.TCMUService1 while vscsid is
	// stopped.
	_ = os.Remove(filepath.Join(sys, "multi-user.target.wants/tcmu-runner.service"))
	if !fileExists(filepath.Join(b.root, "lib/systemd/system/tcmu-runner.service")) {
		return fmt.Errorf("tcmu-runner is not installed in the rootfs")
	}
	// bacula-sd is there for its mtx-changer script and btape, not to
	// run; inetd comes with Amanda. A throwaway machine: no getty on the
	// console, nothing periodic, no waiting for a network that is not
	// there.
	for _, u := range []string{"bacula-sd.service", "openbsd-inetd.service", "inetd.service",
		"serial-getty@ttyS0.service", "getty@tty1.service", "apt-daily.timer", "apt-daily-upgrade.timer",
		"e2scrub_all.timer", "fstrim.timer", "systemd-networkd-wait-online.service", "systemd-timesyncd.service"} {
		if err := link("/dev/null", filepath.Join(sys, u)); err != nil {
			return err
		}
	}
	for name, text := range map[string]string{
		"etc/hostname":   "vscsid-full\n",
		"etc/machine-id": "",
		// The initramfs is the root file system: nothing to remount.
		"etc/fstab": "# root is the initramfs\n",
	} {
		if err := os.WriteFile(filepath.Join(b.root, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	// /init for the kernel (rdinit= is set by full-run; this is the
	// fallback).
	if err := link("/lib/systemd/systemd", filepath.Join(b.root, "init")); err != nil {
		return err
	}
	if _, err := os.Lstat(filepath.Join(b.root, "dev/console")); err != nil {
		return unix.Mknod(filepath.Join(b.root, "dev/console"), unix.S_IFCHR|0o600, int(unix.Mkdev(5, 1)))
	}
	return nil
}
