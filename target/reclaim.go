package target

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"slices"
	"strings"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/tcmu"
)

// A daemon that dies without Close (SIGKILL, a watchdog kill, a crash)
// leaves its devices in configfs: the storage object, the uio device with
// commands stuck in its ring, and the tcm_loop LUN the SCSI stack still
// uses. A restart must not trip over them, or systemd's restart loop would
// never bring the device back. reclaim removes such leftovers before
// Create makes the device anew.
//
// Leftovers are recognised as ours, and only then touched, when the
// tcm_loop target whose WWN vscsid derives from the device name exists, or
// when the storage object is not exported and has exactly the dev_config
// being created. Anything else (a backstore of the same name made with
// targetcli) is refused with an error.
//
// An exported leftover is unexported while served, as on Close, because
// the kernel may send commands while detaching (sd's SYNCHRONIZE CACHE):
// block_dev=1 and reset_ring=1 complete what the dead daemon left in the
// ring with BUSY (tcmu-runner's restart sequence), then a placeholder
// handler answers NOT READY / LOGICAL UNIT IS IN PROCESS OF BECOMING READY
// while the LUN is removed.
//
// The placeholder's answer is one initiators retry: an iSCSI initiator's
// session outlives the daemon, and the commands reset_ring completed with
// BUSY come back at once, before the TPG is disabled. sd retries 04/01
// (the midlayer a few times at once, then with a delay for up to
// (retries+1) × its timeout) and sends it to the device made anew after
// the session recovers. LOGICAL UNIT NOT READY, OFFLINE (04/12), which
// this answered before, fails the write: an I/O error in dd under kill -9.
// sd's SYNCHRONIZE CACHE on detach (tcm_loop) still ends within its few
// immediate retries.

// notReady is the placeholder handler of a leftover being removed.
func notReady(context.Context, *scsi.Command) scsi.Response {
	return scsi.CheckCondition(scsi.Sense{Key: scsi.NotReady, ASC: scsi.LogicalUnitBecomingReady})
}

func (t *Target) reclaim(spec DeviceSpec) error {
	f := t.fs
	naaDir := filepath.Join(t.paths.loopback(), wwn("target", spec.Name))
	obj, objOK := findObject(f, t.paths.core(), spec.Name)
	ourISCSI := spec.ISCSI != nil && f.Exists(filepath.Join(t.paths.iscsi(), spec.ISCSI.IQN))
	ours := f.Exists(naaDir) || ourISCSI
	if !ours && !objOK {
		return nil
	}
	if objOK {
		ts := slices.DeleteFunc(t.iscsiTargets(obj), func(iqn string) bool { return spec.ISCSI != nil && iqn == spec.ISCSI.IQN })
		if len(ts) > 0 {
			return fmt.Errorf("storage object %s is exported by iSCSI target %s, which this device's config did not make: remove it first (targetcli /iscsi delete %s)", obj, strings.Join(ts, ", "), ts[0])
		}
	}
	tpg := filepath.Join(naaDir, "tpgt_1")
	lun := filepath.Join(tpg, "lun", "lun_0")
	link := filepath.Join(lun, spec.Name)
	loopExported := f.Exists(link)
	exported := loopExported || ourISCSI
	if !ours {
		cfg, err := f.ReadAttr(filepath.Join(obj, "attrib", "dev_config"))
		if err != nil || strings.TrimSpace(cfg) != spec.devConfig() {
			return fmt.Errorf("storage object %s already exists and is not a leftover of this device (dev_config %q, want %q): remove it first", obj, cfg, spec.devConfig())
		}
	}
	t.log.Warn("removing a leftover of this device from a daemon that did not stop cleanly",
		zap.String("device", spec.Name), zap.String("object", obj), zap.String("wwn", filepath.Base(naaDir)), zap.Bool("exported", exported))

	var u undo // run in reverse: the order of the steps below, backwards
	if objOK {
		hba := filepath.Dir(obj)
		u.push("remove "+hba, func() error {
			if err := f.Rmdir(hba); err != nil && !isBusy(err) {
				return err
			}
			return nil
		})
		u.push("remove "+obj, func() error { return f.Rmdir(obj) })
	}
	if exported && objOK {
		if err := t.serveLeftover(&u, spec.Name, obj); err != nil {
			return errors.Join(err, u.run())
		}
	}
	for _, d := range []string{naaDir, tpg, lun} {
		if f.Exists(d) {
			u.push("remove "+d, func() error { return f.Rmdir(d) })
		}
	}
	if loopExported {
		u.push("unlink "+link, func() error { return f.Unlink(link) })
	}
	if ourISCSI {
		// First of all, while the ring is served: disabling the TPG
		// waits for the commands its sessions have in flight.
		u.push("remove the leftover iSCSI target", func() error { return t.removeLeftoverISCSI(spec) })
	}
	if err := u.run(); err != nil {
		return fmt.Errorf("remove leftover: %w", err)
	}
	return nil
}

// serveLeftover resets the leftover's ring and serves it with the
// placeholder handler; it pushes the steps that stop serving.
func (t *Target) serveLeftover(u *undo, name, obj string) error {
	f := t.fs
	for _, a := range []struct{ file, v string }{{"block_dev", "1"}, {"reset_ring", "1"}} {
		p := filepath.Join(obj, "action", a.file)
		if err := f.WriteAttr(p, a.v); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("write %s to %s: %w", a.v, p, err)
		}
	}
	prefix := fmt.Sprintf("tcm-user/%s/%s/", strings.TrimPrefix(filepath.Base(filepath.Dir(obj)), "user_"), name)
	dir := filepath.Join(t.paths.SysFS, "class", "uio")
	names, _ := f.ReadDir(dir)
	uioN := ""
	for _, n := range names {
		if v, err := f.ReadAttr(filepath.Join(dir, n, "name")); err == nil && strings.HasPrefix(v, prefix) {
			uioN = n
		}
	}
	if uioN == "" {
		return fmt.Errorf("leftover %s is exported but has no uio device (tcm-user/...%s): cannot unexport it safely", obj, prefix)
	}
	size, err := uioMapSize(f, t.paths.SysFS, uioN)
	if err != nil {
		return err
	}
	rd, err := t.open(filepath.Join(t.paths.Dev, uioN), size)
	if err != nil {
		return err
	}
	u.push("close "+uioN, rd.Close)
	d, err := tcmu.NewDevice(rd.Memory(), rd, scsi.HandlerFunc(notReady), t.log.With(zap.String("device", name), zap.String("uio", uioN)))
	if err != nil {
		return err
	}
	ctx, stop := context.WithCancel(t.ctx)
	done := make(chan error, 1)
	go func() { done <- d.Run(ctx) }()
	u.push("stop serving leftover "+name, func() error { stop(); return <-done })
	p := filepath.Join(obj, "action", "block_dev")
	if err := f.WriteAttr(p, "0"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write 0 to %s: %w", p, err)
	}
	return nil
}
