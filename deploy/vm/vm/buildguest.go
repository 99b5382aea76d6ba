//go:build linux

package main

import (
	"compress/gzip"
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

const buildGuestDoc = `
usage: deploy/vm/build-guest [options]

Builds the disposable test guest: a Debian kernel and an initramfs with
busybox, mt-st, sg3-utils, GNU tar and dd, lsscsi, mtx, stenc, blkzone,
xfs_io, mkfs.f2fs, vscsid and vscsictl. The packages are downloaded with
apt (the machine's mirror, or VM_DEBIAN_MIRROR) into the cache's SUITE/
($VM_CACHE_DIR, else ~/.cache/vscsid/vm) and reused; the guest is written
to deploy/vm/out/SUITE/{vmlinuz,initramfs.cpio.gz,guest.env}. The harness
(/init, /vmtest) is not in it: run packs it at every boot.`

// The guest's kernel modules and programs.
var (
	// loadModules are insmodded at boot: the closure of these, in
	// modprobe's order.
	loadModules = []string{"configfs", "uio", "target_core_mod", "target_core_user", "tcm_loop", "scsi_mod", "sd_mod", "st", "sg", "ch"}
	// optionalModules are the same where the kernel has them (built in,
	// merged or renamed in newer kernels): crc-t10dif needs a crct10dif
	// provider that is only a soft dependency. virtio_pci and virtio_net
	// (with failover, net_failover) give eth0 when run boots with
	// --hostfwd; without a NIC they load and stay idle. virtio_blk and
	// ext4 mount the power-cut run's disk (run --disk).
	optionalModules = []string{"crc-t10dif", "crct10dif_generic", "t10-pi", "virtio_pci", "virtio_net", "virtio_blk", "ext4"}
	// extraModules are copied into the guest but not loaded (scenarios
	// may insmod them).
	extraModules = []string{"scsi_debug", "f2fs"}
	// toolPkgs are the userland packages; their lib* dependencies are
	// added recursively.
	toolPkgs = "busybox-static coreutils mt-st sg3-utils lsscsi tar mtx stenc xfsprogs util-linux util-linux-extra f2fs-tools"
)

type guestBuild struct {
	d                 vmhost.Dirs
	suite             string
	refresh, noDaemon bool
	vscsid, vscsictl  string
	sc, debs, guest   string // the suite's cache, its downloads, the output
	apt               []string
}

func buildGuestCmd(args []string, _ io.Writer) error {
	var b guestBuild
	fs := newFlags("build-guest", buildGuestDoc)
	suiteFlag(fs, &b.suite, "suite", "the Debian suite of the kernel and tools")
	fs.BoolVar(&b.refresh, "refresh", false, "resolve and download the suite's packages again (new kernel ABI,\nsecurity update)")
	fs.StringVar(&b.vscsid, "vscsid", "", "put this prebuilt static `FILE` in the guest instead of building ./cmd/vscsid")
	fs.StringVar(&b.vscsictl, "vscsictl", "", "the same for vscsictl (`FILE`)")
	fs.BoolVar(&b.noDaemon, "no-daemon", false, "a guest without vscsid and vscsictl (enough for the smoke scenario)")
	if err := parseOptions(fs, args); err != nil {
		return err
	}
	var err error
	if b.d, err = vmhost.FindDirs(); err != nil {
		return err
	}
	if err := vmhost.EnsureCommands(vmhost.HostTools...); err != nil {
		return err
	}
	b.sc = filepath.Join(vmhost.CacheDir(b.d), b.suite)
	b.debs = filepath.Join(b.sc, "debs")
	b.guest = filepath.Join(b.d.Out, b.suite)
	for _, dir := range []string{b.debs, b.guest} {
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
	}
	// One build per suite at a time (the suite's parts and a developer's
	// run may race); run takes the lock shared while it copies the guest.
	unlock, err := lockFile(filepath.Join(b.guest, ".lock"), unix.LOCK_EX)
	if err != nil {
		return err
	}
	defer unlock()
	start := time.Now()
	for _, step := range []func() error{b.fetch, b.extract, b.buildDaemon, b.assemble} {
		if err := step(); err != nil {
			return err
		}
	}
	vmhost.Logf("build-guest %s took %d s", b.suite, int(time.Since(start).Seconds()))
	return nil
}

// lockFile takes a flock of name (created if missing); the returned
// function drops it.
func lockFile(name string, how int) (func(), error) {
	f, err := os.OpenFile(name, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
	if err != nil {
		return nil, err
	}
	if err := unix.Flock(int(f.Fd()), how); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("locking %s: %w", name, err)
	}
	return func() { _ = f.Close() }, nil
}

// --------------------------------------------------------------- packages

var (
	// "  Depends: pkg", "  |Depends: pkg", "  PreDepends: pkg"; not
	// "<virtual>".
	dependsRE = regexp.MustCompile(`(?m)^ *\|?(?:Pre)?Depends: ([^<\s]\S*)$`)
)

// depends lists pkg's dependencies as apt-cache depends prints them,
// with extra options for apt-cache.
func (b *guestBuild) depends(pkg string, opts ...string) ([]string, error) {
	args := append(append(slices.Clone(b.apt), "depends"), opts...)
	out, err := exec.Command("apt-cache", append(args, pkg)...).Output()
	if err != nil {
		return nil, fmt.Errorf("apt-cache depends %s: %w", pkg, err)
	}
	return parseDepends(string(out)), nil
}

// parseDepends lists the packages of apt-cache depends' Depends and
// PreDepends lines (alternatives included), not the virtual ones.
func parseDepends(out string) []string {
	var deps []string
	for _, m := range dependsRE.FindAllStringSubmatch(out, -1) {
		deps = append(deps, m[1])
	}
	return deps
}

// closure is pkgs and, breadth first, every dependency follow accepts.
func (b *guestBuild) closure(pkgs []string, follow func(string) bool, opts ...string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	for queue := slices.Clone(pkgs); len(queue) > 0; {
		p := queue[0]
		queue = queue[1:]
		if seen[p] {
			continue
		}
		seen[p] = true
		out = append(out, p)
		deps, err := b.depends(p, opts...)
		if err != nil {
			return nil, err
		}
		for _, d := range deps {
			if follow(d) {
				queue = append(queue, d)
			}
		}
	}
	return out, nil
}

func readTrimmed(name string) string {
	s, _ := os.ReadFile(name)
	return strings.TrimSpace(string(s))
}

// fetch downloads the kernel's packages and the tools' with their
// libraries into debs/, unless the list there is this one.
func (b *guestBuild) fetch() error {
	if !b.refresh && readTrimmed(filepath.Join(b.debs, ".done")) == toolPkgs {
		return nil
	}
	var err error
	if b.apt, err = vmhost.SetupApt(vmhost.CacheDir(b.d), b.suite, b.refresh); err != nil {
		return err
	}
	deps, err := b.depends("linux-image-amd64")
	i := slices.IndexFunc(deps, func(d string) bool { return strings.HasPrefix(d, "linux-image-") })
	if err != nil || i < 0 {
		return fmt.Errorf("cannot resolve linux-image-amd64 to a versioned kernel package for %s", b.suite)
	}
	image := deps[i]
	// Newer kernels split the image package (linux-binary-*,
	// linux-modules-* of the same version): take every
	// linux-*-<version> dependency.
	suffix := "-" + strings.TrimPrefix(image, "linux-image-")
	kpkgs, err := b.closure([]string{image}, func(d string) bool {
		return strings.HasPrefix(d, "linux-") && strings.HasSuffix(d, suffix)
	}, "--no-recommends", "--no-suggests")
	if err != nil {
		return err
	}
	pkgs, err := b.closure(append(strings.Fields(toolPkgs), "libc6"), func(d string) bool { return strings.HasPrefix(d, "lib") },
		"--no-recommends", "--no-suggests", "--no-conflicts", "--no-breaks", "--no-replaces", "--no-enhances")
	if err != nil {
		return err
	}
	sort.Strings(pkgs)
	pkgs = slices.Compact(pkgs)
	vmhost.Logf("%s: kernel %s; userland: %s", b.suite, strings.Join(kpkgs, " "), strings.Join(pkgs, " "))
	tmp := b.debs + ".new"
	_ = os.RemoveAll(tmp)
	if err := os.MkdirAll(tmp, 0o755); err != nil {
		return err
	}
	args := slices.Clone(b.apt)
	if os.Getuid() == 0 {
		// The download directory is not the _apt user's: don't drop
		// privileges.
		args = append(args, "-o", "APT::Sandbox::User=root")
	}
	cmd := exec.Command("apt-get", append(append(args, "download", "-q"), append(kpkgs, pkgs...)...)...)
	cmd.Dir, cmd.Stdout, cmd.Stderr = tmp, os.Stderr, os.Stderr
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("apt-get download for %s failed", b.suite)
	}
	for name, lines := range map[string]string{".kernel": strings.Join(kpkgs, "\n"), ".userland": strings.Join(pkgs, "\n"), ".done": toolPkgs} {
		if err := os.WriteFile(filepath.Join(tmp, name), []byte(lines+"\n"), 0o644); err != nil {
			return err
		}
	}
	_ = os.RemoveAll(b.debs)
	if err := os.Rename(tmp, b.debs); err != nil {
		return err
	}
	old, _ := filepath.Glob(filepath.Join(b.sc, ".extracted*"))
	for _, f := range old {
		_ = os.Remove(f)
	}
	return nil
}

// ------------------------------------------------------------- extraction

// extract unpacks the kernel's packages into kernel/ (modules indexed by
// depmod) and each tool package into x/PACKAGE/.
func (b *guestBuild) extract() error {
	done := filepath.Join(b.sc, ".extracted-v2")
	if _, err := os.Stat(done); err == nil {
		return nil
	}
	vmhost.Logf("%s: extracting packages", b.suite)
	kroot := filepath.Join(b.sc, "kernel")
	for _, d := range []string{filepath.Join(b.sc, "x"), kroot} {
		_ = os.RemoveAll(d)
		if err := os.MkdirAll(d, 0o755); err != nil {
			return err
		}
	}
	kernelPkgs := strings.Fields(readTrimmed(filepath.Join(b.debs, ".kernel")))
	debs, _ := filepath.Glob(filepath.Join(b.debs, "*.deb"))
	for _, deb := range debs {
		out, err := exec.Command("dpkg-deb", "-f", deb, "Package").Output()
		if err != nil {
			return fmt.Errorf("dpkg-deb -f %s: %w", deb, err)
		}
		name := strings.TrimSpace(string(out))
		dest := filepath.Join(b.sc, "x", name)
		if slices.Contains(kernelPkgs, name) {
			dest = kroot
		}
		if out, err := exec.Command("dpkg-deb", "-x", deb, dest).CombinedOutput(); err != nil {
			return fmt.Errorf("dpkg-deb -x %s: %w: %s", deb, err, out)
		}
	}
	// merged-/usr kernels ship usr/lib/modules; depmod -b wants
	// lib/modules.
	if fileExists(filepath.Join(kroot, "usr/lib/modules")) && !fileExists(filepath.Join(kroot, "lib/modules")) {
		if err := os.MkdirAll(filepath.Join(kroot, "lib"), 0o755); err != nil {
			return err
		}
		if err := os.Rename(filepath.Join(kroot, "usr/lib/modules"), filepath.Join(kroot, "lib/modules")); err != nil {
			return err
		}
	}
	ents, _ := os.ReadDir(filepath.Join(kroot, "lib/modules"))
	if len(ents) != 1 {
		return fmt.Errorf("expected one kernel in the package, found %d", len(ents))
	}
	kver := ents[0].Name()
	if out, err := exec.Command("depmod", "-b", kroot, kver).CombinedOutput(); err != nil {
		return fmt.Errorf("depmod -b failed for %s: %w: %s", kver, err, out)
	}
	if err := os.WriteFile(filepath.Join(b.sc, "kver"), []byte(kver+"\n"), 0o644); err != nil {
		return err
	}
	return os.WriteFile(done, nil, 0o644)
}

// ------------------------------------------------------------------ guest

// findInPkgs is the first file of the extracted tool packages at one of
// the relative paths (globs allowed).
func (b *guestBuild) findInPkgs(rels ...string) (string, error) {
	for _, rel := range rels {
		m, _ := filepath.Glob(filepath.Join(b.sc, "x", "*", rel))
		for _, f := range m {
			if fileExists(f) {
				return f, nil
			}
		}
	}
	return "", fmt.Errorf("none of %s in the downloaded packages", strings.Join(rels, ", "))
}

// isStatic reports whether an ELF file has no interpreter.
func isStatic(name string) (bool, error) {
	f, err := elf.Open(name)
	if err != nil {
		return false, err
	}
	defer func() { _ = f.Close() }() // read-only
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			return false, nil
		}
	}
	return true, nil
}

// buildDaemon puts vscsid and vscsictl (built static, or the given files)
// in the guest's bin/.
func (b *guestBuild) buildDaemon() error {
	bindir := filepath.Join(b.guest, "bin")
	_ = os.RemoveAll(bindir)
	if err := os.MkdirAll(bindir, 0o755); err != nil {
		return err
	}
	if b.noDaemon {
		vmhost.Logf("guest without vscsid (--no-daemon): scenarios that need it will fail")
		return nil
	}
	for name, given := range map[string]string{"vscsid": b.vscsid, "vscsictl": b.vscsictl} {
		dst := filepath.Join(bindir, name)
		if given != "" {
			if st, err := os.Stat(given); err != nil || st.Mode()&0o111 == 0 {
				return fmt.Errorf("%s is not an executable", given)
			}
			if err := copyFile(given, dst, 0o755); err != nil {
				return err
			}
		} else {
			vmhost.Logf("go build ./cmd/%s", name)
			if err := vmhost.BuildForGuest(b.d.Repo, "./cmd/"+name, dst, vmhost.Stamped); err != nil {
				return err
			}
		}
		if static, err := isStatic(dst); err != nil || !static {
			return fmt.Errorf("%s is dynamically linked or not ELF; the guest needs a static binary (CGO_ENABLED=0)", name)
		}
	}
	return nil
}

// copyFile copies src (followed if a link) to dst (replaced) with mode,
// or with src's mode when mode is 0.
func copyFile(src, dst string, mode os.FileMode) error {
	in, err := os.Open(src)
	if err != nil {
		return err
	}
	defer func() { _ = in.Close() }() // read-only
	if mode == 0 {
		st, err := in.Stat()
		if err != nil {
			return err
		}
		mode = st.Mode().Perm()
	}
	_ = os.Remove(dst)
	out, err := os.OpenFile(dst, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, mode)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		_ = out.Close()
		return err
	}
	return out.Close()
}

// guestRoot is the tree assembled into the initramfs.
type guestRoot struct {
	b    *guestBuild
	dir  string
	bins []string // the ELF programs whose libraries the guest needs
}

// put copies src into the guest's usr/bin as name (replacing busybox's
// applet link of that name).
func (r *guestRoot) put(src, name string) error {
	dst := filepath.Join(r.dir, "usr/bin", name)
	if err := copyFile(src, dst, 0); err != nil {
		return err
	}
	r.bins = append(r.bins, dst)
	return nil
}

// putFound puts the first of rels found in the packages, as name (or its
// own base name when name is "").
func (r *guestRoot) putFound(name, what string, rels ...string) error {
	f, err := r.b.findInPkgs(rels...)
	if err != nil {
		return fmt.Errorf("%s not found: %w", what, err)
	}
	if name == "" {
		name = filepath.Base(f)
	}
	return r.put(f, name)
}

func (b *guestBuild) assemble() error {
	kver := readTrimmed(filepath.Join(b.sc, "kver"))
	r := &guestRoot{b: b, dir: filepath.Join(b.guest, "root")}
	_ = os.RemoveAll(r.dir)
	for _, d := range []string{"usr/bin", "usr/sbin", "usr/lib/x86_64-linux-gnu", "usr/lib64", "proc", "sys", "dev", "tmp", "run", "etc/vscsid", "etc/target", "etc/vmtest", "root", "mnt", "var"} {
		if err := os.MkdirAll(filepath.Join(r.dir, d), 0o755); err != nil {
			return err
		}
	}
	for link, target := range map[string]string{"bin": "usr/bin", "sbin": "usr/sbin", "lib": "usr/lib", "lib64": "usr/lib64", "etc/mtab": "/proc/mounts", "var/tmp": "/tmp"} {
		if err := os.Symlink(target, filepath.Join(r.dir, link)); err != nil {
			return err
		}
	}
	for name, text := range map[string]string{"etc/passwd": "root:x:0:0:root:/root:/bin/sh\n", "etc/group": "root:x:0:\n", "etc/hosts": "127.0.0.1 localhost\n"} {
		if err := os.WriteFile(filepath.Join(r.dir, name), []byte(text), 0o644); err != nil {
			return err
		}
	}
	// devtmpfs is mounted by /init; /dev/console lets the kernel open the
	// initial console before that (needs root to create).
	if os.Getuid() == 0 {
		if err := unix.Mknod(filepath.Join(r.dir, "dev/console"), unix.S_IFCHR|0o600, int(unix.Mkdev(5, 1))); err != nil {
			return err
		}
		if err := unix.Mknod(filepath.Join(r.dir, "dev/null"), unix.S_IFCHR|0o666, int(unix.Mkdev(1, 3))); err != nil {
			return err
		}
		_ = os.Chmod(filepath.Join(r.dir, "dev/null"), 0o666) // past the umask
	}
	if err := r.userland(); err != nil {
		return err
	}
	order, err := r.modules(kver)
	if err != nil {
		return err
	}
	// vscsid, vscsictl.
	daemons, _ := filepath.Glob(filepath.Join(b.guest, "bin", "*"))
	var names []string
	for _, f := range daemons {
		name := filepath.Base(f)
		names = append(names, name)
		dst := filepath.Join(r.dir, "usr/bin", name)
		if name == "vscsid" {
			dst = filepath.Join(r.dir, "usr/sbin", name)
		}
		if err := copyFile(f, dst, 0o755); err != nil {
			return err
		}
	}
	// The harness itself (/init, /vmtest) is not in the base image: run
	// packs it fresh for every boot (vmhost.PackHarness), so edits to the
	// scenarios need no rebuild.

	// /boot/vmlinuz-<kver>, or (split packages)
	// /usr/lib/modules/<kver>/vmlinuz.
	kroot := filepath.Join(b.sc, "kernel")
	kimg := ""
	for _, f := range []string{filepath.Join(kroot, "boot/vmlinuz-"+kver), filepath.Join(kroot, "lib/modules", kver, "vmlinuz")} {
		if fileExists(f) {
			kimg = f
			break
		}
	}
	kernelPkg, _, _ := strings.Cut(readTrimmed(filepath.Join(b.debs, ".kernel")), "\n")
	if kimg == "" {
		return fmt.Errorf("no vmlinuz in the kernel packages (%s)", kernelPkg)
	}
	kernel := filepath.Join(b.guest, "vmlinuz")
	if err := copyFile(kimg, kernel+".new", 0o644); err != nil {
		return err
	}
	if err := os.Rename(kernel+".new", kernel); err != nil {
		return err
	}
	rev, err := exec.Command("git", "-C", b.d.Repo, "describe", "--always", "--dirty").Output()
	if err != nil {
		rev = []byte("unknown")
	}
	env := fmt.Sprintf("suite=%s\nkver=%s\nkernel_pkg=%s\ndaemon=%s\nrepo_rev=%s\nmodules=%s\n",
		b.suite, kver, kernelPkg, strings.Join(names, " "), strings.TrimSpace(string(rev)), strings.Join(order, " "))
	for _, f := range []string{filepath.Join(b.guest, "guest.env"), filepath.Join(r.dir, "etc/vmtest/guest.env")} {
		if err := os.WriteFile(f, []byte(env), 0o644); err != nil {
			return err
		}
	}
	initrd := filepath.Join(b.guest, "initramfs.cpio.gz")
	if err := vmhost.Cpio(r.dir, initrd+".new", true); err != nil {
		return err
	}
	if err := os.Rename(initrd+".new", initrd); err != nil {
		return err
	}
	st, _ := os.Stat(initrd)
	vmhost.Logf("guest ready: %s (%s), %s (%d KiB)", kernel, kver, initrd, st.Size()>>10)
	return nil
}

// userland puts busybox with its applet links and the real tools in the
// guest, with the shared libraries they need.
func (r *guestRoot) userland() error {
	bb, err := r.b.findInPkgs("bin/busybox", "usr/bin/busybox")
	if err != nil {
		return fmt.Errorf("busybox not found in busybox-static: %w", err)
	}
	busybox := filepath.Join(r.dir, "usr/bin/busybox")
	if err := copyFile(bb, busybox, 0); err != nil {
		return err
	}
	if static, err := isStatic(busybox); err != nil || !static {
		return errors.New("busybox in the guest is not the static one")
	}
	// busybox ash prefers its applets anyway; the links make them
	// reachable by path for the other programs.
	applets, err := exec.Command(busybox, "--list-full").Output()
	if err != nil {
		return fmt.Errorf("busybox --list-full: %w", err)
	}
	for _, a := range strings.Fields(string(applets)) {
		base := filepath.Base(a)
		var link, target string
		switch {
		case base == "busybox" || a == "linuxrc":
			continue
		case strings.HasPrefix(a, "sbin/") || strings.HasPrefix(a, "usr/sbin/"):
			link, target = filepath.Join(r.dir, "usr/sbin", base), "../bin/busybox"
		default:
			link, target = filepath.Join(r.dir, "usr/bin", base), "busybox"
		}
		_ = os.Remove(link)
		if err := os.Symlink(target, link); err != nil {
			return err
		}
	}
	// The real tools replace busybox's applet links of the same name (mt,
	// tar, lsscsi). busybox ash still runs its own applet for a bare
	// name, so the scenarios call /usr/bin/mt-st and /usr/bin/tar by path.
	tools := []struct {
		name, what string
		rels       []string
	}{
		{"mt-st", "mt-st binary", []string{"bin/mt-st", "usr/bin/mt-st", "bin/mt", "usr/bin/mt"}},
		{"tar", "GNU tar binary", []string{"bin/tar", "usr/bin/tar"}},
		{"dd", "GNU dd (coreutils)", []string{"bin/dd", "usr/bin/dd"}},
		{"lsscsi", "lsscsi binary", []string{"usr/bin/lsscsi"}},
		// stenc, the tape encryption manager: 1.0.7 in bookworm, 2.x in
		// sid (different command lines; the encryption scenario speaks
		// both).
		{"stenc", "stenc binary", []string{"usr/bin/stenc", "usr/sbin/stenc", "bin/stenc"}},
		// blkzone: zoned disks through the kernel's zone ioctls
		// (util-linux in bookworm, util-linux-extra from trixie on).
		{"blkzone", "blkzone (util-linux, util-linux-extra)", []string{"sbin/blkzone", "usr/sbin/blkzone", "usr/bin/blkzone"}},
		// xfs_io: atomic writes through the block layer (pwrite -A,
		// RWF_ATOMIC).
		{"xfs_io", "xfs_io (xfsprogs)", []string{"usr/sbin/xfs_io", "sbin/xfs_io"}},
		// mkfs.f2fs: a file system that writes a host-managed zoned disk
		// sequentially (-m), as zonefs would (zonefs-tools is not in
		// Debian).
		{"mkfs.f2fs", "mkfs.f2fs (f2fs-tools)", []string{"usr/sbin/mkfs.f2fs", "sbin/mkfs.f2fs"}},
	}
	for _, t := range tools {
		if err := r.putFound(t.name, t.what, t.rels...); err != nil {
			return err
		}
	}
	_ = os.Remove(filepath.Join(r.dir, "usr/bin/mt"))
	if err := os.Symlink("mt-st", filepath.Join(r.dir, "usr/bin/mt")); err != nil {
		return err
	}
	for _, p := range []string{"mtx", "tapeinfo", "loaderinfo"} {
		if err := r.putFound("", "mtx binary "+p, "usr/sbin/"+p, "usr/bin/"+p, "sbin/"+p); err != nil {
			return err
		}
	}
	sg, _ := filepath.Glob(filepath.Join(r.b.sc, "x/sg3-utils/usr/bin/sg_*"))
	for _, f := range sg {
		if st, err := os.Lstat(f); err != nil || !st.Mode().IsRegular() || !isELF(f) {
			continue
		}
		if err := r.put(f, filepath.Base(f)); err != nil {
			return err
		}
	}
	if !fileExists(filepath.Join(r.dir, "usr/bin/sg_inq")) {
		return errors.New("sg3-utils binaries not found")
	}
	return r.libraries()
}

func isELF(name string) bool {
	f, err := os.Open(name)
	if err != nil {
		return false
	}
	defer func() { _ = f.Close() }() // read-only
	magic := make([]byte, 4)
	_, err = io.ReadFull(f, magic)
	return err == nil && string(magic) == elf.ELFMAG
}

// libraries copies the shared-library closure (DT_NEEDED) of the guest's
// programs from the extracted packages into usr/lib/x86_64-linux-gnu, and
// the dynamic loader.
func (r *guestRoot) libraries() error {
	libdir := filepath.Join(r.dir, "usr/lib/x86_64-linux-gnu")
	have := map[string]bool{}
	for queue := slices.Clone(r.bins); len(queue) > 0; {
		bin := queue[0]
		queue = queue[1:]
		f, err := elf.Open(bin)
		if err != nil {
			return fmt.Errorf("%s: %w", bin, err)
		}
		needed, err := f.ImportedLibraries()
		_ = f.Close()
		if err != nil {
			return fmt.Errorf("%s: %w", bin, err)
		}
		for _, lib := range needed {
			if have[lib] {
				continue
			}
			have[lib] = true
			src, err := r.b.findInPkgs("lib/x86_64-linux-gnu/"+lib, "usr/lib/x86_64-linux-gnu/"+lib)
			if err != nil {
				return fmt.Errorf("library %s (needed by %s) is in no downloaded package", lib, filepath.Base(bin))
			}
			dst := filepath.Join(libdir, lib)
			if err := copyFile(src, dst, 0); err != nil { // copyFile follows src's links, as cp -L
				return err
			}
			queue = append(queue, dst)
		}
	}
	const ld = "ld-linux-x86-64.so.2"
	src, err := r.b.findInPkgs("lib/x86_64-linux-gnu/"+ld, "usr/lib/x86_64-linux-gnu/"+ld)
	if err != nil {
		return fmt.Errorf("%s not found in libc6", ld)
	}
	if err := copyFile(src, filepath.Join(libdir, ld), 0); err != nil {
		return err
	}
	return os.Symlink("../lib/x86_64-linux-gnu/"+ld, filepath.Join(r.dir, "usr/lib64", ld))
}

// modules copies the kernel modules into the guest as plain .ko files and
// returns the load order: modprobe's dependency order of loadModules and
// the optionalModules the kernel has.
func (r *guestRoot) modules(kver string) ([]string, error) {
	kroot := filepath.Join(r.b.sc, "kernel")
	kmods := filepath.Join(kroot, "lib/modules", kver) + "/"
	mdir := filepath.Join(r.dir, "usr/lib/modules", kver)
	if err := os.MkdirAll(mdir, 0o755); err != nil {
		return nil, err
	}
	var order, extra []string
	for _, m := range slices.Concat(loadModules, optionalModules) {
		files, err := showDepends(kroot, kver, m)
		if err != nil {
			if slices.Contains(optionalModules, m) {
				vmhost.Logf("module %s not in %s (optional)", m, kver)
				continue
			}
			return nil, err
		}
		for _, f := range files {
			if !slices.Contains(order, f) {
				order = append(order, f)
			}
		}
	}
	for _, m := range extraModules {
		if files, err := showDepends(kroot, kver, m); err == nil {
			extra = append(extra, files...)
		}
	}
	for _, m := range slices.Concat(order, extra) {
		if err := putModule(kmods+m, filepath.Join(mdir, plainKo(m))); err != nil {
			return nil, err
		}
	}
	plain := make([]string, len(order))
	for i, m := range order {
		plain[i] = plainKo(m)
	}
	if err := copyFile(kmods+"modules.builtin", filepath.Join(mdir, "modules.builtin"), 0o644); err != nil {
		if err := os.WriteFile(filepath.Join(mdir, "modules.builtin"), nil, 0o644); err != nil {
			return nil, err
		}
	}
	_ = copyFile(kmods+"modules.order", filepath.Join(mdir, "modules.order"), 0o644)
	if exec.Command("depmod", "-b", filepath.Join(r.dir, "usr"), kver).Run() != nil {
		_ = exec.Command("depmod", "-b", r.dir, kver).Run()
	}
	return plain, os.WriteFile(filepath.Join(r.dir, "etc/vmtest/modules.load"), []byte(strings.Join(plain, "\n")+"\n"), 0o644)
}

// showDepends lists the module files (relative to the kernel's
// lib/modules/KVER) that loading m takes, in modprobe's order, from the
// kernel tree kroot.
func showDepends(kroot, kver, m string) ([]string, error) {
	kmods := filepath.Join(kroot, "lib/modules", kver) + "/"
	out, err := exec.Command("modprobe", "-d", kroot, "-S", kver, "--show-depends", m).CombinedOutput()
	if err != nil {
		return nil, fmt.Errorf("module %s: %s", m, strings.TrimSpace(string(out)))
	}
	var files []string
	for _, l := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		switch {
		case strings.HasPrefix(l, "insmod "):
			f, _, _ := strings.Cut(strings.TrimPrefix(l, "insmod "), " ")
			files = append(files, strings.TrimPrefix(f, kmods))
		case strings.HasPrefix(l, "builtin "), l == "":
		default:
			return nil, fmt.Errorf("module %s: unexpected modprobe output: %s", m, l)
		}
	}
	return files, nil
}

// plainKo is a module's path with its compression suffix dropped.
func plainKo(m string) string {
	if i := strings.LastIndex(m, ".ko"); i >= 0 {
		return m[:i] + ".ko"
	}
	return m
}

// putModule copies a kernel module into the guest as a plain .ko: busybox
// insmod loads only ELF, and the module's signature sits inside the
// compressed payload, so the result is still the signed module.
func putModule(src, dst string) error {
	if err := os.MkdirAll(filepath.Dir(dst), 0o755); err != nil {
		return err
	}
	var decompress []string
	switch {
	case strings.HasSuffix(src, ".ko.xz"):
		decompress = []string{"xz", "-d", "-c"}
	case strings.HasSuffix(src, ".ko.zst"):
		decompress = []string{"zstd", "-q", "-d", "-c"}
	case strings.HasSuffix(src, ".ko.gz"):
		in, err := os.Open(src)
		if err != nil {
			return err
		}
		defer func() { _ = in.Close() }() // read-only
		zr, err := gzip.NewReader(in)
		if err != nil {
			return fmt.Errorf("%s: %w", src, err)
		}
		out, err := os.Create(dst)
		if err != nil {
			return err
		}
		if _, err := io.Copy(out, zr); err != nil { //nolint:gosec // a kernel module of a Debian package
			_ = out.Close()
			return fmt.Errorf("%s: %w", src, err)
		}
		return out.Close()
	case strings.HasSuffix(src, ".ko"):
		return copyFile(src, dst, 0)
	default:
		return fmt.Errorf("unexpected module file %s", src)
	}
	out, err := os.Create(dst)
	if err != nil {
		return err
	}
	cmd := exec.Command(decompress[0], append(decompress[1:], src)...)
	cmd.Stdout, cmd.Stderr = out, os.Stderr
	err = cmd.Run()
	if cerr := out.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("%s %s: %w", decompress[0], src, err)
	}
	return nil
}
