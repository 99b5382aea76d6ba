package target

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/target/netlink"
)

// Origin says who created a device.
type Origin uint8

// Origins of a device.
const (
	// OriginConfig: created by Create (vscsid's config file), removed by
	// Close.
	OriginConfig Origin = iota
	// OriginAttached: created by another tool (targetcli, targetctl
	// restore, an earlier vscsid) and attached by its uio name; Close lets
	// go of it but leaves it in configfs.
	OriginAttached
)

func (o Origin) String() string {
	switch o {
	case OriginConfig:
		return "config"
	case OriginAttached:
		return "attached"
	}
	return "origin(" + strconv.Itoa(int(o)) + ")"
}

// ErrNotOurs is returned by Attach for a device whose subtype has no
// Factory: it belongs to another daemon (tcmu-runner) and is left alone.
var ErrNotOurs = errors.New("no handler for this subtype")

// Attach serves a TCMU device that already exists, created by someone else
// (targetcli's /backstores/user:<subtype> create, targetctl restore): name
// is its uio device name, tcm-user/<hba>/<name>/<subtype>/<cfgstring>, as
// /sys/class/uio/uioN/name reads. Attach checks that the subtype has a
// Factory (else ErrNotOurs), builds the Handler with it (which validates
// the cfgstring), opens and maps /dev/uioN and starts serving. It creates
// nothing in configfs and exports nothing: the LUN is the creator's
// business. A device already served is not attached twice: Attach returns
// its description.
//
// A device that may have been served before (found at start-up, see Run)
// is taken over with takeOverRing before it is opened and served.
func (t *Target) Attach(ctx context.Context, name string) (DeviceInfo, error) {
	return t.attach(ctx, name, "", true)
}

// attach does Attach; uioN, when known (a netlink event carries the minor),
// saves the lookup, and reopen selects the take-over sequence.
func (t *Target) attach(_ context.Context, name, uioN string, reopen bool) (info DeviceInfo, err error) {
	hba, objName, subtype, cfg, err := netlink.ParseDeviceName(strings.TrimSpace(name))
	if err != nil {
		return info, err
	}
	factory, ok := t.factories[subtype]
	if !ok {
		return info, fmt.Errorf("device %s: subtype %q: %w (have: %s)", objName, subtype, ErrNotOurs, strings.Join(slices.Sorted(maps.Keys(t.factories)), ", "))
	}
	t.createMu.Lock()
	defer t.createMu.Unlock()
	t.mu.Lock()
	closed := t.closed
	var existing *managed
	for _, m := range t.devs {
		if m.info.HBA == hba && m.info.Name == objName {
			existing = m
		}
	}
	if existing != nil {
		info = existing.info
	}
	t.mu.Unlock()
	switch {
	case closed:
		return info, ErrClosed
	case existing != nil && existing.serving():
		return info, nil
	case existing != nil:
		// A device of that name whose ring is gone: an enable that lost
		// the netlink reply race to another daemon (tcmu-runner answers
		// ENOENT first; the kernel unregisters the uio device and no
		// REMOVED follows), or a removal whose event has not arrived.
		// This is a new device of the same name: let go of the old one.
		t.log.Info("replacing a device of the same name that no longer serves",
			zap.String("device", objName), zap.Int("hba", hba), zap.String("old_uio", existing.info.UIO))
		if err := t.letGo(existing); err != nil {
			t.log.Warn("letting go of the old device", zap.String("device", objName), zap.Error(err))
		}
	}
	f := t.fs
	devConfig := subtype + "/" + cfg
	if uioN == "" {
		if uioN, err = findUIO(f, t.paths.SysFS, uioName(hba, objName, devConfig)); err != nil {
			return info, fmt.Errorf("device %s: %w", objName, err)
		}
	}
	obj := filepath.Join(t.paths.core(), "user_"+strconv.Itoa(hba), objName)
	dc := DeviceConfig{Name: objName, HBA: hba, Subtype: subtype, Config: cfg, UIO: uioN, BlockSize: 512}
	if v, err := f.ReadAttr(filepath.Join(obj, "attrib", "dev_size")); err == nil {
		dc.Size, _ = strconv.ParseUint(strings.TrimSpace(v), 10, 64)
	}
	if v, err := f.ReadAttr(filepath.Join(obj, "attrib", "hw_block_size")); err == nil {
		if n, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32); err == nil && n > 0 {
			dc.BlockSize = uint32(n)
		}
	}
	m := &managed{done: make(chan struct{}), obj: obj}
	// The kernel waits for netlink replies about this device only if its
	// nl_reply_supported (final once enabled) is > 0; a reply it does not
	// wait for is logged at KERN_ERR ("completion could not find
	// device"). Unreadable: reply, which is always safe.
	if v, err := f.ReadAttr(filepath.Join(obj, "attrib", "nl_reply_supported")); err == nil {
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && n <= 0 {
			m.noReply = true
		}
	}
	m.info.Origin = OriginAttached
	defer func() {
		if err != nil {
			if uerr := m.undo.run(); uerr != nil {
				err = errors.Join(err, fmt.Errorf("roll back: %w", uerr))
			}
		}
	}()
	dlog, err := t.bringUp(m, dc, factory, reopen, t.resumes(objName, devConfig))
	if err != nil {
		return info, fmt.Errorf("device %s: %w", objName, err)
	}
	// targetcli sets target/dbroot (rtslib: /etc/rtslib-fb-target) when it
	// first runs, after New prepared the old one: LIO fails PERSISTENT
	// RESERVE OUT with APTPL (LTFS registers at every open) without
	// <dbroot>/pr.
	t.preparePR()
	if lun, ok := t.findLUN(obj); ok {
		m.info.SCSI, _ = probeSCSI(f, t.paths.SysFS, lun)
	}
	t.register(m)
	dlog.Info("device attached (created by another tool)", zap.Bool("reopened", reopen),
		zap.String("node", m.info.SCSI.String()), zap.Uint32("cmdr_size", m.info.Ring.CmdrSize),
		zap.Uint64("data_area_bytes", m.info.Ring.DataSize), zap.Int("workers", m.info.Ring.Workers))
	return m.info, nil
}

// action writes v to the storage object's action/<file>. Kernels without
// the file (before 4.14) are tolerated: there is then nothing to block or
// reset.
func (t *Target) action(obj, file, v string) error {
	p := filepath.Join(obj, "action", file)
	if err := t.fs.WriteAttr(p, v); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write %s to %s: %w", v, p, err)
	}
	return nil
}

// findLUN returns the SCSI address (H:C:T:L) of a tcm_loop LUN that
// exports obj, if any.
func (t *Target) findLUN(obj string) (addr string, ok bool) {
	t.walkLUNs(t.paths.loopback(), obj, func(tpgDir string, lun int) bool {
		v, err := t.fs.ReadAttr(filepath.Join(tpgDir, "address"))
		if err != nil {
			return true
		}
		addr, err = tpgAddress(v, lun)
		ok = err == nil
		return !ok
	})
	return addr, ok
}

// walkLUNs calls fn with the TPG directory and LUN number of every LUN
// under the fabric directory dir (target/<fabric>/<wwn>/tpgt_N/lun/lun_M)
// that links the storage object obj, until fn returns false.
func (t *Target) walkLUNs(dir, obj string, fn func(tpgDir string, lun int) bool) {
	want, err := filepath.EvalSymlinks(obj)
	if err != nil {
		return
	}
	t.eachLUN(dir, func(tpgDir string, lun int, dst string) bool {
		return dst != want || fn(tpgDir, lun)
	})
}

// eachLUN calls fn with the TPG directory, LUN number and resolved
// storage object path of every LUN link under the fabric directory dir,
// until fn returns false.
func (t *Target) eachLUN(dir string, fn func(tpgDir string, lun int, dst string) bool) {
	f := t.fs
	wwns, _ := f.ReadDir(dir)
	for _, w := range wwns {
		tpgs, _ := f.ReadDir(filepath.Join(dir, w))
		for _, tpg := range tpgs {
			if !strings.HasPrefix(tpg, "tpgt_") {
				continue
			}
			tpgDir := filepath.Join(dir, w, tpg)
			luns, _ := f.ReadDir(filepath.Join(tpgDir, "lun"))
			for _, lun := range luns {
				n, err := strconv.Atoi(strings.TrimPrefix(lun, "lun_"))
				if err != nil {
					continue
				}
				links, _ := f.ReadDir(filepath.Join(tpgDir, "lun", lun))
				for _, l := range links {
					dst, err := filepath.EvalSymlinks(filepath.Join(tpgDir, "lun", lun, l))
					if err != nil {
						continue
					}
					if !fn(tpgDir, n, dst) {
						return
					}
				}
			}
		}
	}
}

// FabricLUNs is how many LUNs of one fabric export a device.
type FabricLUNs struct {
	Fabric string // configfs fabric directory: loopback (tcm_loop), iscsi, vhost, ...
	LUNs   int
}

// exportsByObject counts the LUNs that export each storage object, by
// fabric in fabric order, keyed by the object's resolved path: one walk
// of configfs for all devices (a walk per device made Devices, and with
// it every metrics scrape and vscsictl devices, cost devices x LUNs link
// resolutions: 14 s for 65 devices under qemu TCG).
func (t *Target) exportsByObject() map[string][]FabricLUNs {
	out := map[string][]FabricLUNs{}
	root := filepath.Join(t.paths.ConfigFS, "target")
	fabrics, _ := t.fs.ReadDir(root)
	slices.Sort(fabrics)
	for _, fab := range fabrics {
		if fab == "core" {
			continue
		}
		t.eachLUN(filepath.Join(root, fab), func(_ string, _ int, dst string) bool {
			e := out[dst]
			if len(e) == 0 || e[len(e)-1].Fabric != fab {
				e = append(e, FabricLUNs{Fabric: fab})
			}
			e[len(e)-1].LUNs++
			out[dst] = e
			return true
		})
	}
	return out
}

// find returns the registered device hba/name, or nil.
func (t *Target) find(hba int, name string) *managed {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, m := range t.devs {
		if m.info.HBA == hba && m.info.Name == name {
			return m
		}
	}
	return nil
}

// Detach stops serving an attached device and closes its uio device,
// without touching configfs: the kernel is removing it (REMOVED event) or
// its creator wants it back. It reports whether the device was served.
// A device created by Create is not detached (Close removes it).
//
// A device of the config file that another tool removes (it unlinked our
// LUN and removed the storage object: the kernel sends REMOVED from that
// rmdir and waits for the reply) is let go the same way: its loop stops
// and its uio device is closed, nothing in configfs is touched (a configfs
// operation here could wait on the very rmdir that waits for our reply),
// and it leaves the registry; what is left of its tcm_loop target is
// reclaimed at the next start.
func (t *Target) Detach(hba int, name string) (bool, error) {
	t.createMu.Lock()
	defer t.createMu.Unlock()
	m := t.find(hba, name)
	if m == nil {
		return false, nil
	}
	if m.info.Origin != OriginAttached {
		t.log.Warn("device of the config file removed by another tool; it is no longer served",
			zap.String("device", name), zap.Int("hba", hba))
	}
	return true, t.letGo(m)
}

// letGo stops serving m and closes its uio device without touching
// configfs, and drops it from the registry; the caller holds createMu.
func (t *Target) letGo(m *managed) error {
	if m.info.Origin == OriginAttached {
		return t.release(m, false)
	}
	t.mu.Lock()
	t.devs = slices.DeleteFunc(t.devs, func(x *managed) bool { return x == m })
	t.mu.Unlock()
	m.stop()
	return m.rd.Close()
}

// drainTimeout bounds how long release waits for in-flight commands.
const drainTimeout = 5 * time.Second

// release stops serving m and closes its uio device; the caller holds
// createMu. With drain (the daemon stops, the device stays), it first
// blocks the device so that no new command enters the ring, waits until
// the ring is empty (cmd_head == cmd_tail) or drainTimeout passes, and
// unblocks it after closing: commands sent meanwhile wait in the ring for
// the next daemon.
func (t *Target) release(m *managed, drain bool) error {
	t.mu.Lock()
	t.devs = slices.DeleteFunc(t.devs, func(x *managed) bool { return x == m })
	t.mu.Unlock()
	var errs []error
	if drain {
		if err := t.action(m.obj, "block_dev", "1"); err != nil {
			errs = append(errs, err)
		}
		t.drain(m)
	}
	if err := m.undo.run(); err != nil {
		errs = append(errs, err)
	}
	if drain {
		if err := t.action(m.obj, "block_dev", "0"); err != nil {
			errs = append(errs, err)
		}
	}
	t.log.Info("device detached", zap.String("device", m.info.Name), zap.Int("hba", m.info.HBA), zap.Bool("drained", drain))
	return errors.Join(errs...)
}

// drain waits until m's ring holds no command the loop has taken and not
// completed, or drainTimeout passes, and reports whether it emptied; the
// device is blocked (block_dev=1), so that no new command enters.
func (t *Target) drain(m *managed) bool {
	if m.dev == nil {
		return true
	}
	deadline := time.Now().Add(drainTimeout)
	for !m.dev.Idle() && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	if !m.dev.Idle() {
		t.log.Warn("commands still in flight after the drain timeout; the next daemon resets the ring",
			zap.String("device", m.info.Name), zap.Duration("timeout", drainTimeout))
		return false
	}
	return true
}

// errnoOf maps an attach or reconfigure error to the negative errno the
// kernel hands to the configfs write waiting for the reply, by the
// daemon's policy (Options.Errno).
func (t *Target) errnoOf(err error) int32 {
	if err == nil {
		return 0
	}
	if t.opts.Errno != nil {
		if en := t.opts.Errno(err); en != 0 {
			return -int32(en)
		}
	}
	if en, ok := errors.AsType[unix.Errno](err); ok && en != 0 {
		return -int32(en)
	}
	return -int32(unix.EINVAL)
}

// takeOverRing readies the ring of a device a dead daemon (or another
// tool) may have left commands in: block_dev=1, reset_ring=1 (what is left
// in the ring is completed with BUSY and the initiator retries it), then
// block_dev=0 at once, before the device is opened and served. The device
// is unblocked before it is served, not after as tcmu-runner does: a
// command that arrives while TCMU is blocked waits in its qfull queue,
// which neither unblocking nor a kick without completions runs
// (qfull_time_out is -1: forever), so an initiator with one command
// outstanding (mtx, a single dd) would wait for its own timeout and an
// ABORT TASK. Commands that arrive after the reset wait in the ring until
// the new loop serves them, as on a new device. A failure after
// block_dev=1 unblocks again.
func (t *Target) takeOverRing(obj string) error {
	if err := t.action(obj, "block_dev", "1"); err != nil {
		return err
	}
	if err := t.action(obj, "reset_ring", "1"); err != nil {
		return errors.Join(err, t.action(obj, "block_dev", "0"))
	}
	return t.action(obj, "block_dev", "0")
}
