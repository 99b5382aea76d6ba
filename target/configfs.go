package target

import (
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/vscsid/vscsid/internal/cfgstring"
)

// Paths locates the kernel interfaces. Zero fields take the defaults; tests
// point them at a fixture (node_exporter's --path.sysfs idea).
type Paths struct {
	ConfigFS string // configfs mount point, default /sys/kernel/config
	SysFS    string // sysfs mount point, default /sys
	Dev      string // device nodes, default /dev
	Lock     string // lock file held while running, default /run/vscsid.lock
}

func (p Paths) withDefaults() Paths {
	if p.ConfigFS == "" {
		p.ConfigFS = "/sys/kernel/config"
	}
	if p.SysFS == "" {
		p.SysFS = "/sys"
	}
	if p.Dev == "" {
		p.Dev = "/dev"
	}
	if p.Lock == "" {
		p.Lock = "/run/vscsid.lock"
	}
	return p
}

func (p Paths) core() string     { return filepath.Join(p.ConfigFS, "target", "core") }
func (p Paths) loopback() string { return filepath.Join(p.ConfigFS, "target", "loopback") }

// fsys is the file system calls the configfs and sysfs code makes. The
// production implementation is the os package; tests substitute a fixture
// that creates the attribute files configfs would create on mkdir and
// records every call.
type fsys interface {
	Mkdir(path string) error
	Rmdir(path string) error
	// WriteAttr writes value to an existing attribute file in one write(2),
	// as configfs requires.
	WriteAttr(path, value string) error
	ReadAttr(path string) (string, error)
	Symlink(target, link string) error
	Unlink(path string) error
	ReadDir(path string) ([]string, error)
	Exists(path string) bool
	// IsLink reports whether path is a symbolic link (a LUN's link to
	// its storage object, among a LUN directory's attribute files).
	IsLink(path string) bool
}

type osFS struct{}

func (osFS) Mkdir(p string) error { return os.Mkdir(p, 0o755) }
func (osFS) IsLink(p string) bool {
	fi, err := os.Lstat(p)
	return err == nil && fi.Mode()&os.ModeSymlink != 0
}
func (osFS) Rmdir(p string) error  { return os.Remove(p) }
func (osFS) Unlink(p string) error { return os.Remove(p) }
func (osFS) Symlink(target, link string) error {
	return os.Symlink(target, link)
}

func (osFS) WriteAttr(p, v string) error {
	f, err := os.OpenFile(p, os.O_WRONLY, 0)
	if err != nil {
		return err
	}
	_, werr := f.Write([]byte(v))
	cerr := f.Close()
	if werr != nil {
		return werr
	}
	return cerr
}

func (osFS) ReadAttr(p string) (string, error) {
	b, err := os.ReadFile(p)
	return strings.TrimRight(string(b), "\n\x00"), err
}

func (osFS) ReadDir(p string) ([]string, error) {
	es, err := os.ReadDir(p)
	names := make([]string, 0, len(es))
	for _, e := range es {
		names = append(names, e.Name())
	}
	return names, err
}

func (osFS) Exists(p string) bool {
	_, err := os.Lstat(p)
	return err == nil
}

// DeviceSpec describes a device to create: a TCMU user backstore and the
// tcm_loop target that exports it to this host's SCSI stack.
type DeviceSpec struct {
	// Name is the configfs storage object name: 1-64 of [A-Za-z0-9_.-],
	// not starting with '.' or '-'.
	Name string
	// Subtype selects the handler Factory and starts dev_config.
	Subtype string
	// Config is the handler's cfgstring (dev_config is Subtype/Config). It
	// must not contain ',' (the kernel splits control tokens on it), ':'
	// (rtslib forbids it) or a newline.
	Config string
	// Size is dev_size in bytes.
	Size uint64
	// BlockSize is hw_block_size; 0 leaves the kernel default (512).
	BlockSize uint32
	// MaxSectors is hw_max_sectors; 0 leaves the kernel default (128). It
	// is advisory for TCMU: the kernel does not enforce it.
	MaxSectors uint32
	// CmdTimeOut is attrib/cmd_time_out, in whole seconds: how long the
	// kernel waits for a command before failing it with NOT READY 08/00.
	// 0 keeps the kernel default (30 s); a negative value disables the
	// timeout (cmd_time_out=0), which long tape operations may want.
	CmdTimeOut time.Duration
	// MaxDataAreaMB is max_data_area_mb, the data area (and the largest
	// transfer); 0 keeps the kernel default (1024).
	MaxDataAreaMB int
	// NoTMRNotification leaves attrib/tmr_notification at 0, so aborts and
	// resets are not announced in the ring.
	NoTMRNotification bool
	// ISCSI, if set, exports the device over LIO's iSCSI fabric too
	// (iscsi.go): a target of its own with the ACLs it lists.
	ISCSI *ISCSIExport
	// NoLoopback leaves out the tcm_loop export: the device is then seen
	// only by the initiators of ISCSI (which must be set).
	NoLoopback bool
	// Factory, if set, builds this device's handler instead of the
	// subtype's Options.Factories entry (a device of the caller's own
	// config, with settings of its own such as fault rules). Devices
	// other tools create always get the subtype's.
	Factory Factory
}

// devConfigMax is TCMU_CONFIG_LEN - 1.
const devConfigMax = 255

func (s DeviceSpec) devConfig() string { return s.Subtype + "/" + s.Config }

// Validate checks what Create checks before it touches configfs: the
// name, subtype and cfgstring characters, the dev_config length the kernel
// takes, whole-second cmd_time_out, the exports. The config file check
// (vscsid --check-config) runs it too.
func (s DeviceSpec) Validate() error {
	if err := cfgstring.DeviceName(s.Name); err != nil {
		return fmt.Errorf("device name: %w", err)
	}
	if err := cfgstring.Subtype(s.Subtype); err != nil {
		return fmt.Errorf("device %s: subtype: %w", s.Name, err)
	}
	if err := cfgstring.CheckChars(s.Config); err != nil {
		return fmt.Errorf("device %s: cfgstring: %w", s.Name, err)
	}
	if n := len(s.devConfig()); n > devConfigMax {
		return fmt.Errorf("device %s: dev_config %q is %d bytes, the kernel takes at most %d", s.Name, s.devConfig(), n, devConfigMax)
	}
	if s.CmdTimeOut > 0 && s.CmdTimeOut%time.Second != 0 {
		return fmt.Errorf("device %s: cmd_time_out %v: must be whole seconds", s.Name, s.CmdTimeOut)
	}
	if s.MaxDataAreaMB < 0 {
		return fmt.Errorf("device %s: max_data_area_mb %d: must be >= 0", s.Name, s.MaxDataAreaMB)
	}
	if s.ISCSI != nil {
		if err := s.ISCSI.Validate(); err != nil {
			return fmt.Errorf("device %s: %w", s.Name, err)
		}
	} else if s.NoLoopback {
		return fmt.Errorf("device %s: exported on no fabric (no tcm_loop and no iSCSI)", s.Name)
	}
	return nil
}

// hbaIndexRE matches the HBA directories under target/core: <plugin>_<N>.
var hbaIndexRE = regexp.MustCompile(`^[a-z][a-z_]*_([0-9]+)$`)

// freeHBA returns the lowest N not used by any backstore HBA directory
// (core/user_N, core/fileio_N, ...), as rtslib chooses it.
func freeHBA(f fsys, core string) (int, error) {
	names, err := f.ReadDir(core)
	if err != nil {
		return 0, err
	}
	used := map[int]bool{}
	for _, n := range names {
		if m := hbaIndexRE.FindStringSubmatch(n); m != nil {
			if i, err := strconv.Atoi(m[1]); err == nil {
				used[i] = true
			}
		}
	}
	for i := 0; ; i++ {
		if !used[i] {
			return i, nil
		}
	}
}

// findObject reports the HBA directory of an existing storage object name
// under any user_N (a leftover from a daemon that did not stop cleanly).
func findObject(f fsys, core, name string) (string, bool) {
	names, _ := f.ReadDir(core)
	slices.Sort(names)
	for _, n := range names {
		if strings.HasPrefix(n, "user_") && f.Exists(filepath.Join(core, n, name)) {
			return filepath.Join(core, n, name), true
		}
	}
	return "", false
}

// uioName is the uio device name the kernel gives a TCMU device
// (tcmu_update_uio_info): tcm-user/<hba>/<name>/<dev_config>.
func uioName(hba int, name, devConfig string) string {
	return fmt.Sprintf("tcm-user/%d/%s/%s", hba, name, devConfig)
}

// findUIO returns the uioN whose name attribute is want.
func findUIO(f fsys, sysfs, want string) (string, error) {
	dir := filepath.Join(sysfs, "class", "uio")
	names, err := f.ReadDir(dir)
	if err != nil {
		return "", fmt.Errorf("list %s: %w", dir, err)
	}
	for _, n := range names {
		if v, err := f.ReadAttr(filepath.Join(dir, n, "name")); err == nil && v == want {
			return n, nil
		}
	}
	return "", fmt.Errorf("no uio device named %q in %s", want, dir)
}

// uioMapSize reads /sys/class/uio/<uio>/maps/map0/size (hex, "0x...").
func uioMapSize(f fsys, sysfs, uio string) (int, error) {
	p := filepath.Join(sysfs, "class", "uio", uio, "maps", "map0", "size")
	v, err := f.ReadAttr(p)
	if err != nil {
		return 0, err
	}
	n, err := strconv.ParseUint(strings.TrimSpace(v), 0, 63)
	if err != nil || n == 0 || n > 1<<40 {
		return 0, fmt.Errorf("%s: bad map size %q", p, v)
	}
	return int(n), nil
}

// wwn returns a NAA-5 (IEEE registered, the LIO OUI 00:14:05) WWN derived
// from the device name, so a device keeps its SCSI identity (and its
// /dev/disk/by-path names) across restarts. role separates the target and
// initiator ports.
func wwn(role, name string) string {
	h := sha256.Sum256([]byte("vscsid/" + role + "/" + name))
	return "naa.5001405" + hex.EncodeToString(h[:5])[:9]
}

// undo is a stack of teardown steps, run in reverse order of creation.
type undo []undoStep

type undoStep struct {
	what string
	fn   func() error
}

func (u *undo) push(what string, fn func() error) { *u = append(*u, undoStep{what, fn}) }

// run runs every step, newest first, and joins their errors.
func (u *undo) run() error {
	var errs []error
	for i := len(*u) - 1; i >= 0; i-- {
		s := (*u)[i]
		if err := s.fn(); err != nil {
			errs = append(errs, fmt.Errorf("%s: %w", s.what, err))
		}
	}
	*u = nil
	return errors.Join(errs...)
}

// configfsError explains the errors a missing kernel module produces.
func configfsError(op, path string, err error, module string) error {
	switch {
	case errors.Is(err, fs.ErrNotExist), isModuleMissing(err):
		return fmt.Errorf("%s %s: %w (is %s loaded? try: modprobe %s)", op, path, err, module, module)
	}
	return fmt.Errorf("%s %s: %w", op, path, err)
}
