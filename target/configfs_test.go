package target

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/targettest"
	"github.com/vscsid/vscsid/target/tcmu"
)

// fixture mimics configfs and sysfs in a temporary directory: attribute
// files appear when a directory is made, as they do in configfs, and the
// kernel's reactions (a uio device on enable, a SCSI device on LUN link)
// are simulated. Every call is recorded so tests can check exactly what
// was written, and in which order.
type fixture struct {
	t     *testing.T
	root  string
	paths Paths

	mu       sync.Mutex
	ops      []string
	fail     map[string]error // op prefix → error to return instead
	nextUIO  int
	nextHost int
	nextSD   int
	nextST   int
	nextSCH  int
	nextSG   int
	hosts    map[string]int    // naa dir → SCSI host
	devCfg   map[string]string // storage object → dev_config written
	uios     map[string]string // storage object → uioN
	exported map[string]int    // storage object → LUN links to it (tcm_loop and iSCSI)
	rings    map[string]*fakeRing
	// sawObject, when set, is told of each Exists that found a path
	// (tests that must act once a device loop has seen its object).
	sawObject atomic.Pointer[func(path string)]
	// beforeOp, when set, is called with each operation before the
	// fixture records and performs it (tests that act at one step).
	beforeOp atomic.Pointer[func(op string)]
}

func newFixture(t *testing.T) *fixture {
	root := t.TempDir()
	f := &fixture{
		t:    t,
		root: root,
		paths: Paths{
			ConfigFS: filepath.Join(root, "config"),
			SysFS:    filepath.Join(root, "sys"),
			Dev:      filepath.Join(root, "dev"),
			Lock:     filepath.Join(root, "run", "vscsid.lock"),
		},
		fail:     map[string]error{},
		hosts:    map[string]int{},
		devCfg:   map[string]string{},
		uios:     map[string]string{},
		exported: map[string]int{},
		rings:    map[string]*fakeRing{},
		nextHost: 3,
		nextSG:   1,
	}
	for _, d := range []string{
		"config/target/core/alua", "config/target/core/fileio_0/img", "config/target/core/user_1",
		"sys/module/target_core_user", "sys/module/tcm_loop", "sys/class/uio", "sys/class/scsi_device", "dev", "run",
	} {
		if err := os.MkdirAll(filepath.Join(root, d), 0o755); err != nil {
			t.Fatal(err)
		}
	}
	return f
}

func (f *fixture) rel(p string) string {
	r, err := filepath.Rel(f.root, p)
	if err != nil {
		return p
	}
	return r
}

// record logs op and returns the injected failure for it, if any.
func (f *fixture) record(op string) error {
	if fn := f.beforeOp.Load(); fn != nil {
		(*fn)(op)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	f.ops = append(f.ops, op)
	for prefix, err := range f.fail {
		if strings.HasPrefix(op, prefix) {
			return err
		}
	}
	return nil
}

func (f *fixture) Ops() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.ops)
}

func (f *fixture) touch(p, content string) {
	if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
		f.t.Fatal(err)
	}
	if err := os.WriteFile(p, []byte(content), 0o644); err != nil {
		f.t.Fatal(err)
	}
}

var (
	objRE = regexp.MustCompile(`^config/target/core/user_[0-9]+/[^/]+$`)
	tpgRE = regexp.MustCompile(`^config/target/loopback/(naa\.[0-9a-f]+)/tpgt_([0-9]+)$`)
	naaRE = regexp.MustCompile(`^config/target/loopback/naa\.[0-9a-f]+$`)
	lunRE = regexp.MustCompile(`^config/target/loopback/(naa\.[0-9a-f]+)/tpgt_([0-9]+)/lun/lun_([0-9]+)/[^/]+$`)

	iscsiTPGRE = regexp.MustCompile(`^config/target/iscsi/[^/]+/tpgt_[0-9]+$`)
	iscsiACLRE = regexp.MustCompile(`^config/target/iscsi/[^/]+/tpgt_[0-9]+/acls/[^/]+$`)
	iscsiLUNRE = regexp.MustCompile(`^config/target/iscsi/[^/]+/tpgt_[0-9]+/lun/lun_[0-9]+/[^/]+$`)
	// A LUN directory of an iSCSI TPG, and a mapped LUN of an ACL: they
	// come with attribute files (and a statistics group) beside the link.
	iscsiLUNDirRE    = regexp.MustCompile(`^config/target/iscsi/[^/]+/tpgt_[0-9]+/lun/lun_[0-9]+$`)
	iscsiMappedDirRE = regexp.MustCompile(`^config/target/iscsi/[^/]+/tpgt_[0-9]+/acls/[^/]+/lun_[0-9]+$`)
)

// What LIO's iSCSI fabric creates with a TPG and with an ACL.
var (
	iscsiTPGDirs  = []string{"lun", "np", "acls", "attrib", "param", "auth"}
	iscsiTPGFiles = []string{"enable", "attrib/authentication", "attrib/generate_node_acls"}
	iscsiACLDirs  = []string{"auth", "attrib", "param"}
	iscsiACLFiles = []string{"auth/userid", "auth/password", "auth/userid_mutual", "auth/password_mutual"}
	iscsiLUNFiles = []string{"alua_tg_pt_gp", "alua_tg_pt_status"}
	iscsiLUNDirs  = []string{"statistics"}
	mappedFiles   = []string{"write_protect"}
)

// Object attribute files configfs creates with a TCMU storage object.
var objFiles = []string{"control", "enable", "info", "attrib/cmd_time_out", "attrib/tmr_notification", "attrib/hw_block_size", "attrib/dev_config", "action/block_dev", "action/reset_ring", "wwn/vpd_unit_serial"}

func (f *fixture) Mkdir(p string) error {
	r := f.rel(p)
	if err := f.record("mkdir " + r); err != nil {
		return &fs.PathError{Op: "mkdir", Path: p, Err: err}
	}
	if err := os.Mkdir(p, 0o755); err != nil {
		return err
	}
	switch {
	case objRE.MatchString(r):
		for _, n := range objFiles {
			f.touch(filepath.Join(p, n), "0")
		}
	case naaRE.MatchString(r):
		f.mu.Lock()
		f.hosts[r] = f.nextHost
		f.nextHost++
		f.mu.Unlock()
	case tpgRE.MatchString(r):
		m := tpgRE.FindStringSubmatch(r)
		f.mu.Lock()
		host := f.hosts[filepath.Dir(r)]
		f.mu.Unlock()
		f.touch(filepath.Join(p, "nexus"), "")
		f.touch(filepath.Join(p, "address"), fmt.Sprintf("%d:0:%s\n", host, m[2]))
		_ = os.Mkdir(filepath.Join(p, "lun"), 0o755)
	case iscsiTPGRE.MatchString(r):
		f.makeDefaults(p, iscsiTPGFiles, iscsiTPGDirs, "0")
	case iscsiACLRE.MatchString(r):
		f.makeDefaults(p, iscsiACLFiles, iscsiACLDirs, "")
	case iscsiLUNDirRE.MatchString(r):
		f.makeDefaults(p, iscsiLUNFiles, iscsiLUNDirs, "")
	case iscsiMappedDirRE.MatchString(r):
		f.makeDefaults(p, mappedFiles, nil, "")
	}
	return nil
}

// makeDefaults makes what configfs makes with a directory: its default
// groups, then its attribute files holding v.
func (f *fixture) makeDefaults(p string, files, dirs []string, v string) {
	for _, d := range dirs {
		_ = os.Mkdir(filepath.Join(p, d), 0o755)
	}
	for _, n := range files {
		f.touch(filepath.Join(p, n), v)
	}
}

// removeDefaults removes what configfs made with a directory, before the
// directory itself: files first, then the (then empty) default groups.
// A default group with something in it (a LUN, an ACL, a portal) stays,
// and the directory's rmdir fails, as in configfs.
func removeDefaults(p string, files, dirs []string) {
	for _, n := range files {
		_ = os.Remove(filepath.Join(p, n))
	}
	for _, d := range dirs {
		_ = os.Remove(filepath.Join(p, d))
	}
}

func (f *fixture) Rmdir(p string) error {
	r := f.rel(p)
	if err := f.record("rmdir " + r); err != nil {
		return &fs.PathError{Op: "rmdir", Path: p, Err: err}
	}
	switch {
	case objRE.MatchString(r):
		f.mu.Lock()
		exported, uio := f.exported[r], f.uios[r]
		f.mu.Unlock()
		if exported > 0 {
			return &fs.PathError{Op: "rmdir", Path: p, Err: unix.EBUSY}
		}
		for _, n := range objFiles {
			_ = os.Remove(filepath.Join(p, n))
		}
		_ = os.Remove(filepath.Join(p, "attrib"))
		_ = os.Remove(filepath.Join(p, "action"))
		_ = os.Remove(filepath.Join(p, "wwn"))
		if uio != "" {
			_ = os.RemoveAll(filepath.Join(f.paths.SysFS, "class", "uio", uio))
			_ = os.Remove(filepath.Join(f.paths.Dev, uio))
		}
	case tpgRE.MatchString(r):
		_ = os.Remove(filepath.Join(p, "nexus"))
		_ = os.Remove(filepath.Join(p, "address"))
		_ = os.Remove(filepath.Join(p, "lun")) // fails (and so does the rmdir) while a LUN exists
	case iscsiTPGRE.MatchString(r):
		removeDefaults(p, iscsiTPGFiles, iscsiTPGDirs)
	case iscsiACLRE.MatchString(r):
		removeDefaults(p, iscsiACLFiles, iscsiACLDirs)
	case iscsiLUNDirRE.MatchString(r):
		removeDefaults(p, iscsiLUNFiles, iscsiLUNDirs)
	case iscsiMappedDirRE.MatchString(r):
		removeDefaults(p, mappedFiles, nil)
	}
	return os.Remove(p)
}

func (f *fixture) WriteAttr(p, v string) error {
	r := f.rel(p)
	if err := f.record("write " + r + " " + v); err != nil {
		return &fs.PathError{Op: "write", Path: p, Err: err}
	}
	obj := filepath.Dir(r)
	if filepath.Base(obj) == "attrib" {
		obj = filepath.Dir(obj)
	}
	f.mu.Lock()
	exported := f.exported[obj]
	f.mu.Unlock()
	if filepath.Base(obj) == "wwn" {
		obj = filepath.Dir(obj)
		f.mu.Lock()
		exported = f.exported[obj]
		f.mu.Unlock()
	}
	if (strings.HasSuffix(r, "attrib/cmd_time_out") || strings.HasSuffix(r, "wwn/vpd_unit_serial")) && exported > 0 {
		return &fs.PathError{Op: "write", Path: p, Err: unix.EINVAL} // "while exports exist"
	}
	fh, err := os.OpenFile(p, os.O_WRONLY|os.O_TRUNC, 0) // no O_CREATE: configfs files exist or not
	if err != nil {
		return err
	}
	_, _ = fh.WriteString(v)
	_ = fh.Close()
	switch {
	case strings.HasSuffix(r, "/control") && strings.HasPrefix(v, "dev_config="):
		f.mu.Lock()
		f.devCfg[obj] = strings.TrimPrefix(v, "dev_config=")
		f.mu.Unlock()
		f.touch(filepath.Join(p, "..", "attrib", "dev_config"), strings.TrimPrefix(v, "dev_config=")+"\n")
	case strings.HasSuffix(r, "/action/reset_ring"):
		// tcmu_reset_ring: complete what is in the ring, head = tail = 0.
		f.mu.Lock()
		ring := f.rings[f.uios[filepath.Dir(obj)]]
		f.mu.Unlock()
		if ring != nil {
			targettest.ResetRing(ring.mem)
		}
	case strings.HasSuffix(r, "/enable") && v == "1" && objRE.MatchString(obj):
		// tcmu_configure_device: register the uio device.
		f.mu.Lock()
		uio := "uio" + strconv.Itoa(f.nextUIO)
		f.nextUIO++
		f.uios[obj] = uio
		cfg := f.devCfg[obj]
		f.mu.Unlock()
		hba := strings.TrimPrefix(filepath.Base(filepath.Dir(obj)), "user_")
		dir := filepath.Join(f.paths.SysFS, "class", "uio", uio)
		f.touch(filepath.Join(dir, "name"), fmt.Sprintf("tcm-user/%s/%s/%s\n", hba, filepath.Base(obj), cfg))
		f.touch(filepath.Join(dir, "maps", "map0", "size"), "0x110000\n")
		f.touch(filepath.Join(f.paths.Dev, uio), "")
	}
	return nil
}

func (f *fixture) ReadAttr(p string) (string, error)  { return osFS{}.ReadAttr(p) }
func (f *fixture) ReadDir(p string) ([]string, error) { return osFS{}.ReadDir(p) }
func (f *fixture) Exists(p string) bool {
	ok := osFS{}.Exists(p)
	if fn := f.sawObject.Load(); ok && fn != nil {
		(*fn)(p)
	}
	return ok
}
func (f *fixture) IsLink(p string) bool { return osFS{}.IsLink(p) }

func (f *fixture) Symlink(target, link string) error {
	r := f.rel(link)
	if err := f.record("symlink " + r + " -> " + f.rel(target)); err != nil {
		return &os.LinkError{Op: "symlink", Old: target, New: link, Err: err}
	}
	if err := os.Symlink(target, link); err != nil {
		return err
	}
	if iscsiLUNRE.MatchString(r) {
		f.mu.Lock()
		f.exported[f.rel(target)]++
		f.mu.Unlock()
		return nil
	}
	m := lunRE.FindStringSubmatch(r)
	if m == nil {
		return nil
	}
	obj := f.rel(target)
	f.mu.Lock()
	f.exported[obj]++
	host := f.hosts[filepath.Join("config/target/loopback", m[1])]
	typ := 0
	switch {
	case strings.HasPrefix(f.devCfg[obj], "vtape/"):
		typ = 1
	case strings.HasPrefix(f.devCfg[obj], "vlibrary/"):
		typ = 8
	}
	sd, st, sch, sg := f.nextSD, f.nextST, f.nextSCH, f.nextSG
	switch typ {
	case 0:
		f.nextSD++
	case 1:
		f.nextST++
	default:
		f.nextSCH++
	}
	f.nextSG++
	f.mu.Unlock()
	// tcm_loop_port_link → scsi_add_device(host, 0, tpgt, lun); sd/st bind.
	dev := filepath.Join(f.paths.SysFS, "class", "scsi_device", fmt.Sprintf("%d:0:%s:%s", host, m[2], m[3]), "device")
	f.touch(filepath.Join(dev, "type"), strconv.Itoa(typ)+"\n")
	f.touch(filepath.Join(dev, "scsi_generic", "sg"+strconv.Itoa(sg), "dev"), "")
	switch typ {
	case 0:
		f.touch(filepath.Join(dev, "block", "sd"+string(rune('a'+sd)), "dev"), "")
	case 1:
		for _, n := range []string{"nst%d", "nst%da", "st%d", "st%dl", "st%dm", "st%da"} {
			f.touch(filepath.Join(dev, "scsi_tape", fmt.Sprintf(n, st), "dev"), "")
		}
	default:
		f.touch(filepath.Join(dev, "scsi_changer", "sch"+strconv.Itoa(sch), "dev"), "")
	}
	return nil
}

func (f *fixture) Unlink(p string) error {
	r := f.rel(p)
	if err := f.record("unlink " + r); err != nil {
		return &fs.PathError{Op: "unlink", Path: p, Err: err}
	}
	target, err := os.Readlink(p)
	if err != nil {
		return &fs.PathError{Op: "unlink", Path: p, Err: unix.EPERM} // configfs: attributes cannot be removed
	}
	if iscsiLUNRE.MatchString(r) {
		f.mu.Lock()
		f.exported[f.rel(target)]--
		f.mu.Unlock()
	}
	if m := lunRE.FindStringSubmatch(r); m != nil {
		f.mu.Lock()
		f.exported[f.rel(target)]--
		host := f.hosts[filepath.Join("config/target/loopback", m[1])]
		f.mu.Unlock()
		_ = os.RemoveAll(filepath.Join(f.paths.SysFS, "class", "scsi_device", fmt.Sprintf("%d:0:%s:%s", host, m[2], m[3])))
	}
	return os.Remove(p)
}

// fakeRing is an opened uio device: a valid empty ring and a channel
// doorbell.
type fakeRing struct {
	f      *fixture
	name   string
	mem    []byte
	events chan struct{}
	closed bool
}

// fixtureRingSize is the command ring of the fixture's devices.
const fixtureRingSize = 64<<10 - 128

func (f *fixture) open(path string, size int) (tcmu.UIO, error) {
	r := f.rel(path)
	if err := f.record(fmt.Sprintf("open %s %#x", r, size)); err != nil {
		return nil, err
	}
	if _, err := os.Stat(path); err != nil {
		return nil, err
	}
	mem := targettest.NewMailbox(size, targettest.AllFlags, fixtureRingSize)
	fr := &fakeRing{f: f, name: r, mem: mem, events: make(chan struct{}, 1)}
	f.mu.Lock()
	f.rings[filepath.Base(r)] = fr
	f.mu.Unlock()
	return fr, nil
}

func (r *fakeRing) Memory() []byte { return r.mem }
func (r *fakeRing) Kick() error    { return r.f.record("kick " + r.f.rel(r.name)) }
func (r *fakeRing) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-r.events:
		return nil
	}
}

func (r *fakeRing) Close() error {
	r.closed = true
	return r.f.record("close " + r.name)
}

func (f *fixture) options(log *zap.Logger) Options {
	good := func(DeviceConfig, *zap.Logger) (Handler, error) {
		return scsi.HandlerFunc(func(context.Context, *scsi.Command) scsi.Response { return scsi.Good }), nil
	}
	return Options{
		Factories:     map[string]Factory{"vdisk": good, "vtape": good, "vlibrary": good},
		Log:           log,
		Paths:         f.paths,
		AttachTimeout: time.Second,
		fs:            f,
		open:          f.open,
		dial:          func() (eventConn, error) { return nil, errors.New("no netlink in unit tests") },
	}
}

// tree lists every path under the fixture's configfs, sysfs and /dev.
func (f *fixture) tree() []string {
	var out []string
	_ = filepath.WalkDir(f.root, func(p string, _ fs.DirEntry, _ error) error {
		if r := f.rel(p); r != "." && !strings.HasPrefix(r, "run") {
			out = append(out, r)
		}
		return nil
	})
	return out
}

func TestCreateAndClose(t *testing.T) {
	f := newFixture(t)
	before := f.tree()
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	disk, err := tg.Create(ctx, DeviceSpec{
		Name: "disk0", Subtype: "vdisk", Config: "size=1G;lbs=4096", Size: 1 << 30, BlockSize: 4096,
		MaxSectors: 2048, CmdTimeOut: 5 * time.Second, MaxDataAreaMB: 64,
	})
	if err != nil {
		t.Fatal(err)
	}
	wantOps := []string{
		"mkdir config/target/core/user_2", // user_1 and fileio_0 are taken
		"mkdir config/target/core/user_2/disk0",
		"write config/target/core/user_2/disk0/control dev_config=vdisk/size=1G;lbs=4096",
		"write config/target/core/user_2/disk0/control dev_size=1073741824",
		"write config/target/core/user_2/disk0/control hw_block_size=4096",
		"write config/target/core/user_2/disk0/control hw_max_sectors=2048",
		"write config/target/core/user_2/disk0/control max_data_area_mb=64",
		"write config/target/core/user_2/disk0/control nl_reply_supported=-1",
		"write config/target/core/user_2/disk0/enable 1",
		"write config/target/core/user_2/disk0/attrib/cmd_time_out 5",
		"write config/target/core/user_2/disk0/attrib/tmr_notification 1",
		"open dev/uio0 0x110000",
		"mkdir config/target/loopback",
		"mkdir config/target/loopback/" + wwn("target", "disk0"),
		"mkdir config/target/loopback/" + wwn("target", "disk0") + "/tpgt_1",
		"write config/target/loopback/" + wwn("target", "disk0") + "/tpgt_1/nexus " + wwn("initiator", "disk0"),
		"mkdir config/target/loopback/" + wwn("target", "disk0") + "/tpgt_1/lun/lun_0",
		"symlink config/target/loopback/" + wwn("target", "disk0") + "/tpgt_1/lun/lun_0/disk0 -> config/target/core/user_2/disk0",
	}
	if got := f.Ops(); !slices.Equal(got, wantOps) {
		t.Errorf("ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantOps, "\n"))
	}
	want := DeviceInfo{
		DeviceConfig: DeviceConfig{Name: "disk0", HBA: 2, Subtype: "vdisk", Config: "size=1G;lbs=4096", Size: 1 << 30, BlockSize: 4096, UIO: "uio0"},
		WWN:          wwn("target", "disk0"),
		Nexus:        wwn("initiator", "disk0"),
		SCSI:         SCSIDevice{Address: "3:0:1:0", Type: 0, Block: "sda", Generic: "sg1"},
	}
	disk.Ring = tcmu.RingInfo{}
	if disk != want {
		t.Errorf("info %+v\nwant %+v", disk, want)
	}
	if !regexp.MustCompile(`^naa\.5001405[0-9a-f]{9}$`).MatchString(disk.WWN) || disk.WWN == disk.Nexus {
		t.Errorf("WWNs %s %s", disk.WWN, disk.Nexus)
	}

	n := len(f.Ops())
	tape, err := tg.Create(ctx, DeviceSpec{Name: "tape0", Subtype: "vtape", Config: "media=/x", Size: 1 << 30, CmdTimeOut: -1, NoTMRNotification: true})
	if err != nil {
		t.Fatal(err)
	}
	ops := f.Ops()[n:]
	if ops[0] != "mkdir config/target/core/user_3" || !slices.Contains(ops, "write config/target/core/user_3/tape0/attrib/cmd_time_out 0") ||
		slices.ContainsFunc(ops, func(s string) bool {
			return strings.Contains(s, "tmr_notification") || strings.Contains(s, "hw_block_size")
		}) ||
		slices.Contains(ops, "mkdir config/target/loopback") {
		t.Errorf("second device ops:\n%s", strings.Join(ops, "\n"))
	}
	if tape.SCSI != (SCSIDevice{Address: "4:0:1:0", Type: 1, Tape: "st0", Generic: "sg2"}) || tape.SCSI.String() != "/dev/nst0" {
		t.Errorf("tape SCSI %+v", tape.SCSI)
	}
	if tape.Ring.CmdrSize != fixtureRingSize || !tape.Ring.Has(tcmu.FlagReadLen) {
		t.Errorf("tape ring %+v", tape.Ring)
	}
	lib, err := tg.Create(ctx, DeviceSpec{Name: "lib0", Subtype: "vlibrary", Config: "media=/x", Size: 1 << 30})
	if err != nil {
		t.Fatal(err)
	}
	if lib.SCSI != (SCSIDevice{Address: "5:0:1:0", Type: 8, Changer: "sch0", Generic: "sg3"}) || lib.SCSI.String() != "/dev/sch0" {
		t.Errorf("library SCSI %+v", lib.SCSI)
	}
	if err := tg.Remove("lib0"); err != nil {
		t.Fatal(err)
	}
	if ds := tg.Devices(); len(ds) != 2 || ds[0].Info.Name != "disk0" || ds[1].Info.Name != "tape0" || ds[0].Stats.Failed {
		t.Errorf("Devices: %+v", ds)
	}
	if _, err := tg.Create(ctx, DeviceSpec{Name: "tape0", Subtype: "vtape", Config: "x"}); err == nil {
		t.Error("second tape0 created")
	}

	n = len(f.Ops())
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	naa := "config/target/loopback/" + wwn("target", "tape0")
	wantClose := []string{
		"unlink " + naa + "/tpgt_1/lun/lun_0/tape0",
		"rmdir " + naa + "/tpgt_1/lun/lun_0",
		"rmdir " + naa + "/tpgt_1",
		"rmdir " + naa,
		"close dev/uio1",
		"rmdir config/target/core/user_3/tape0",
		"rmdir config/target/core/user_3",
	}
	naa = "config/target/loopback/" + wwn("target", "disk0")
	wantClose = append(wantClose,
		"unlink "+naa+"/tpgt_1/lun/lun_0/disk0",
		"rmdir "+naa+"/tpgt_1/lun/lun_0",
		"rmdir "+naa+"/tpgt_1",
		"rmdir "+naa,
		"close dev/uio0",
		"rmdir config/target/core/user_2/disk0",
		"rmdir config/target/core/user_2",
		"rmdir config/target/loopback",
	)
	if got := f.Ops()[n:]; !slices.Equal(got, wantClose) {
		t.Errorf("close ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantClose, "\n"))
	}
	if after := f.tree(); !slices.Equal(before, after) {
		t.Errorf("left behind:\nbefore %v\nafter  %v", before, after)
	}
	if err := tg.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	if _, err := tg.Create(ctx, DeviceSpec{Name: "x", Subtype: "vdisk"}); !errors.Is(err, ErrClosed) {
		t.Errorf("Create after Close: %v", err)
	}
}

func TestCreateRollsBack(t *testing.T) {
	for _, c := range []struct {
		failAt string
		err    error
	}{
		{"mkdir config/target/core/user_2/", unix.ENOMEM},
		{"write config/target/core/user_2/disk0/enable", unix.ENOENT},
		{"open dev/uio0", unix.EBUSY},
		{"mkdir config/target/loopback/naa", unix.EEXIST},
		{"write config/target/loopback/naa", unix.EINVAL},
		{"symlink", unix.EIO},
	} {
		t.Run(c.failAt, func(t *testing.T) {
			f := newFixture(t)
			before := f.tree()
			tg, err := New(f.options(zaptest.NewLogger(t)))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tg.Close() }()
			f.fail[c.failAt] = c.err
			_, err = tg.Create(context.Background(), DeviceSpec{Name: "disk0", Subtype: "vdisk", Config: "size=1G", Size: 1 << 30})
			if !errors.Is(err, c.err) {
				t.Fatalf("Create: %v, want %v", err, c.err)
			}
			t.Logf("Create: %v", err)
			delete(f.fail, c.failAt)
			if err := tg.Close(); err != nil {
				t.Fatal(err)
			}
			if after := f.tree(); !slices.Equal(before, after) {
				t.Errorf("rollback left:\nbefore %v\nafter  %v\nops:\n%s", before, after, strings.Join(f.Ops(), "\n"))
			}
			// Everything made was removed in reverse order (target/loopback,
			// shared by all devices, last at Close); the failed call made
			// nothing.
			var made, removed []string
			failed := false
			loopback := false
			for _, op := range f.Ops() {
				if !failed && strings.HasPrefix(op, c.failAt) {
					failed = true
					continue
				}
				switch {
				case op == "mkdir config/target/loopback":
					loopback = true
				case strings.HasPrefix(op, "mkdir "):
					made = append(made, strings.TrimPrefix(op, "mkdir "))
				case strings.HasPrefix(op, "symlink "):
					made = append(made, strings.Fields(op)[1])
				case strings.HasPrefix(op, "rmdir "), strings.HasPrefix(op, "unlink "):
					removed = append(removed, strings.Fields(op)[1])
				}
			}
			slices.Reverse(made)
			if loopback {
				made = append(made, "config/target/loopback")
			}
			if !slices.Equal(made, removed) {
				t.Errorf("removed %v\nwant    %v", removed, made)
			}
		})
	}
}

func TestCreateFactoryError(t *testing.T) {
	f := newFixture(t)
	opts := f.options(zaptest.NewLogger(t))
	opts.Factories["vdisk"] = func(DeviceConfig, *zap.Logger) (Handler, error) { return nil, errors.New("size: missing") }
	tg, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	before := f.tree()
	if _, err := tg.Create(context.Background(), DeviceSpec{Name: "d", Subtype: "vdisk", Config: ""}); err == nil || !strings.Contains(err.Error(), "size: missing") {
		t.Fatalf("Create: %v", err)
	}
	if after := f.tree(); !slices.Equal(before, after) {
		t.Errorf("left: %v", after)
	}
	if _, err := tg.Create(context.Background(), DeviceSpec{Name: "d", Subtype: "nope"}); err == nil || !strings.Contains(err.Error(), "have: vdisk, vlibrary, vtape") {
		t.Errorf("unknown subtype: %v", err)
	}
}

func TestCreateRefusesLeftovers(t *testing.T) {
	f := newFixture(t)
	_ = os.MkdirAll(filepath.Join(f.paths.ConfigFS, "target/core/user_7/disk0"), 0o755)
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	_, err = tg.Create(context.Background(), DeviceSpec{Name: "disk0", Subtype: "vdisk", Config: "size=1G"})
	if err == nil || !strings.Contains(err.Error(), "user_7/disk0 already exists") {
		t.Fatalf("Create: %v", err)
	}
	if len(f.Ops()) != 0 {
		t.Errorf("ops %v", f.Ops())
	}
}

func TestSpecValidation(t *testing.T) {
	for _, s := range []DeviceSpec{
		{Name: "", Subtype: "vdisk"},
		{Name: "-x", Subtype: "vdisk"},
		{Name: "a/b", Subtype: "vdisk"},
		{Name: strings.Repeat("a", 65), Subtype: "vdisk"},
		{Name: "d", Subtype: "v-disk"},
		{Name: "d", Subtype: "vdisk", Config: "a=1,b=2"},
		{Name: "d", Subtype: "vdisk", Config: "path=/a:b"},
		{Name: "d", Subtype: "vdisk", Config: "a=1\nb=2"},
		{Name: "d", Subtype: "vdisk", Config: strings.Repeat("x", 250)},
		{Name: "d", Subtype: "vdisk", CmdTimeOut: 1500 * time.Millisecond},
		{Name: "d", Subtype: "vdisk", MaxDataAreaMB: -1},
	} {
		if err := s.Validate(); err == nil {
			t.Errorf("%+v accepted", s)
		}
	}
	if err := (DeviceSpec{Name: "disk_0.a-b", Subtype: "vdisk", Config: "size=1G;lbs=512"}).Validate(); err != nil {
		t.Error(err)
	}
}

func TestPreflight(t *testing.T) {
	for _, c := range []struct {
		remove string
		want   string
	}{
		{"config", "is configfs mounted"},
		{"config/target", "target_core_mod is not loaded"},
		{"sys/module/target_core_user", "modprobe target_core_user"},
		{"sys/module/tcm_loop", "modprobe tcm_loop"},
	} {
		t.Run(c.remove, func(t *testing.T) {
			f := newFixture(t)
			_ = os.RemoveAll(filepath.Join(f.root, c.remove))
			_, err := New(f.options(zap.NewNop()))
			if !errors.Is(err, ErrKernelSupport) || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("New: %v, want ErrKernelSupport mentioning %q", err, c.want)
			}
			// The lock was released: a corrected setup starts.
			_ = os.MkdirAll(filepath.Join(f.root, c.remove, "target/core"), 0o755)
			_ = os.MkdirAll(filepath.Join(f.root, "config/target/core"), 0o755)
			if tg, err := New(f.options(zap.NewNop())); err != nil {
				t.Fatalf("after fixing: %v", err)
			} else {
				_ = tg.Close()
			}
		})
	}
}

func TestSecondInstanceRefused(t *testing.T) {
	f := newFixture(t)
	tg, err := New(f.options(zap.NewNop()))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := New(f.options(zap.NewNop())); !errors.Is(err, ErrAlreadyRunning) {
		t.Fatalf("second New: %v", err)
	}
	_ = tg.Close()
	tg, err = New(f.options(zap.NewNop()))
	if err != nil {
		t.Fatalf("New after Close: %v", err)
	}
	_ = tg.Close()
}

func TestDeviceFaultLoggedOnce(t *testing.T) {
	f := newFixture(t)
	core, logs := observer.New(zapcore.InfoLevel)
	tg, err := New(f.options(zap.New(core)))
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	for _, n := range []string{"bad", "good"} {
		if _, err := tg.Create(ctx, DeviceSpec{Name: n, Subtype: "vdisk", Config: "size=1G"}); err != nil {
			t.Fatal(err)
		}
	}
	r := f.rings["uio0"]
	targettest.SetHead(r.mem, 12) // misaligned cmd_head
	r.events <- struct{}{}
	deadline := time.Now().Add(5 * time.Second)
	for tg.Devices()[0].Err == nil && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	ds := tg.Devices()
	if !errors.Is(ds[0].Err, tcmu.ErrRingCorrupt) || !ds[0].Stats.Failed || ds[1].Err != nil || ds[1].Stats.Failed {
		t.Fatalf("devices: %+v / %+v", ds[0].Err, ds[1].Err)
	}

	// The failed device's ring is reset and every command now fails at
	// once with HARDWARE ERROR 44/00 instead of timing out.
	for targettest.Head(r.mem) != 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if !slices.Contains(f.Ops(), "write config/target/core/user_2/bad/action/reset_ring 2") {
		t.Fatalf("ring not reset: %v", f.Ops())
	}
	n := targettest.PutTestUnitReady(r.mem, 0, 9)
	targettest.SetHead(r.mem, n)
	r.events <- struct{}{}
	for targettest.Tail(r.mem) != n && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if st, sense := targettest.Response(r.mem, 0); st != 0x02 || sense[2] != 0x04 || sense[12] != 0x44 {
		t.Errorf("command to a failed device: status %#x sense % x", st, sense[:18])
	}
	f.rings["uio1"].events <- struct{}{} // the other device still serves
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	errs := logs.FilterLevelExact(zapcore.ErrorLevel).All()
	if len(errs) != 1 || errs[0].ContextMap()["device"] != "bad" {
		t.Fatalf("error logs: %+v", errs)
	}
}

func TestTPGAddress(t *testing.T) {
	if a, err := tpgAddress("5:0:1\n", 0); err != nil || a != "5:0:1:0" {
		t.Errorf("%q %v", a, err)
	}
	for _, bad := range []string{"", "5:0", "a:0:1", "5:0:1:0", "-1:0:1"} {
		if _, err := tpgAddress(bad, 0); err == nil {
			t.Errorf("%q accepted", bad)
		}
	}
}

func TestFreeHBA(t *testing.T) {
	f := newFixture(t)
	core := f.paths.core()
	for _, d := range []string{"user_0", "rd_mcp_2", "pscsi_3", "iblock_10"} {
		_ = os.Mkdir(filepath.Join(core, d), 0o755)
	}
	// fileio_0, user_1 (fixture), user_0, rd_mcp_2, pscsi_3 → 4.
	if n, err := freeHBA(f, core); err != nil || n != 4 {
		t.Errorf("freeHBA = %d, %v", n, err)
	}
}

// crash stops tg's device loops and drops its lock without removing
// anything, as a SIGKILL would.
func crash(tg *Target) {
	tg.cancel()
	tg.mu.Lock()
	for _, m := range tg.devs {
		<-m.done
	}
	tg.closed = true
	tg.mu.Unlock()
	_ = tg.lock.Close()
}

// restarted creates spec on a target over f, crashes that target (its
// devices stay in configfs, as after SIGKILL) and returns a new one over
// f, as the restarted daemon; info is what the first Create returned.
func restarted(t *testing.T, f *fixture, spec DeviceSpec) (tg *Target, info DeviceInfo) {
	t.Helper()
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if info, err = tg.Create(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	crash(tg)
	if tg, err = New(f.options(zaptest.NewLogger(t))); err != nil {
		t.Fatal(err)
	}
	return tg, info
}

func TestCreateReclaimsLeftovers(t *testing.T) {
	f := newFixture(t)
	before := f.tree()
	spec := DeviceSpec{Name: "disk0", Subtype: "vdisk", Config: "size=1G", Size: 1 << 30}
	tg, _ := restarted(t, f, spec)
	n := len(f.Ops())
	// Another cfgstring: the leftover cannot be re-attached in place
	// (adopt.go) and is removed first.
	spec.Config, spec.Size = "size=2G", 2<<30
	info, err := tg.Create(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	naa := "config/target/loopback/" + wwn("target", "disk0")
	obj := "config/target/core/user_2/disk0"
	want := []string{
		"write " + obj + "/action/block_dev 1",
		"write " + obj + "/action/reset_ring 1",
		"open dev/uio0 0x110000",
		"write " + obj + "/action/block_dev 0",
		"unlink " + naa + "/tpgt_1/lun/lun_0/disk0",
		"rmdir " + naa + "/tpgt_1/lun/lun_0",
		"rmdir " + naa + "/tpgt_1",
		"rmdir " + naa,
		"close dev/uio0",
		"rmdir " + obj,
		"rmdir config/target/core/user_2",
		"mkdir config/target/core/user_2",
		"mkdir " + obj,
	}
	if got := f.Ops()[n : n+len(want)]; !slices.Equal(got, want) {
		t.Errorf("reclaim ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if info.UIO != "uio1" || info.SCSI.Block == "" {
		t.Errorf("recreated device %+v", info)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	// target/loopback stays: this daemon did not create it, and another
	// user of tcm_loop may have (the fabric directory is harmless).
	before = append(before, "config/target/loopback")
	slices.Sort(before)
	if after := f.tree(); !slices.Equal(before, after) {
		t.Errorf("left behind:\nbefore %v\nafter  %v", before, after)
	}
}

func TestCreateReclaimsUnexportedLeftover(t *testing.T) {
	f := newFixture(t)
	obj := filepath.Join(f.paths.core(), "user_4", "disk0")
	for _, n := range objFiles {
		f.touch(filepath.Join(obj, n), "")
	}
	f.touch(filepath.Join(obj, "attrib", "dev_config"), "vdisk/size=1G\n")
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	// Another dev_config: not ours, refused, untouched.
	if _, err := tg.Create(context.Background(), DeviceSpec{Name: "disk0", Subtype: "vdisk", Config: "size=2G"}); err == nil || !strings.Contains(err.Error(), "not a leftover") {
		t.Fatalf("Create with another config: %v", err)
	}
	if len(f.Ops()) != 0 {
		t.Fatalf("touched a foreign object: %v", f.Ops())
	}
	_ = os.RemoveAll(filepath.Join(obj, "attrib", "hw_block_size")) // let rmdir see only fixture files
	if _, err := tg.Create(context.Background(), DeviceSpec{Name: "disk0", Subtype: "vdisk", Config: "size=1G"}); err != nil {
		t.Fatal(err)
	}
	if ops := f.Ops(); len(ops) < 3 || ops[0] != "rmdir config/target/core/user_4/disk0" || ops[1] != "rmdir config/target/core/user_4" || ops[2] != "mkdir config/target/core/user_2" {
		t.Errorf("ops %v", ops[:min(len(ops), 4)])
	}
}

func TestCreateAdoptsIntactLeftover(t *testing.T) {
	f := newFixture(t)
	before := f.tree()
	spec := DeviceSpec{Name: "tape0", Subtype: "vtape", Config: "media=/m", Size: 1 << 30}
	tg, first := restarted(t, f, spec)
	n := len(f.Ops())
	info, err := tg.Create(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	obj := "config/target/core/user_2/tape0"
	want := []string{
		"write " + obj + "/action/block_dev 1",
		"write " + obj + "/action/reset_ring 1",
		"write " + obj + "/action/block_dev 0", // before serving: nothing waits in TCMU's qfull queue
		"open dev/uio0 0x110000",
	}
	if got := f.Ops()[n:]; !slices.Equal(got, want) {
		t.Errorf("adopt ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The same SCSI device, the same node: st keeps /dev/nst0.
	first.Ring, info.Ring = tcmu.RingInfo{}, tcmu.RingInfo{}
	if info != first || info.SCSI.Tape != "st0" || info.Origin != OriginConfig {
		t.Errorf("adopted %+v\nwant   %+v", info, first)
	}
	n = len(f.Ops())
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	naa := "config/target/loopback/" + wwn("target", "tape0")
	wantClose := []string{
		"unlink " + naa + "/tpgt_1/lun/lun_0/tape0",
		"rmdir " + naa + "/tpgt_1/lun/lun_0",
		"rmdir " + naa + "/tpgt_1",
		"rmdir " + naa,
		"close dev/uio0",
		"rmdir " + obj,
		"rmdir config/target/core/user_2",
	}
	if got := f.Ops()[n:]; !slices.Equal(got, wantClose) {
		t.Errorf("close ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(wantClose, "\n"))
	}
	before = append(before, "config/target/loopback")
	slices.Sort(before)
	if after := f.tree(); !slices.Equal(before, after) {
		t.Errorf("left behind:\nbefore %v\nafter  %v", before, after)
	}
}
