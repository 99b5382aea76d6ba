package target

import (
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// A daemon that did not stop cleanly (SIGKILL, a crash, the watchdog)
// leaves its devices in place, still exported: st and sd still hold
// /dev/nstN and /dev/sdX, and a backup job may have the tape open. When the
// leftover is exactly what the config asks for, Create re-attaches it in
// place (adopt) instead of removing and recreating it (reclaim.go), so the
// SCSI device and its node survive the restart. The conditions, all
// required:
//
//   - the tcm_loop target vscsid derives from the device name exists, with
//     LUN 0 linked to the storage object of that name; for a device
//     exported over iSCSI only, its iSCSI target's LUN 0 is;
//   - the storage object's attrib/dev_config is the one being created;
//   - its uio device exists (tcm-user/<hba>/<name>/<dev_config>).
//
// The iSCSI target is kept as it is, its sessions logged in, when it is
// exactly what the config asks for (keepISCSI); otherwise it is removed
// once the ring is served again and made anew, and its initiators log in
// again.
//
// Anything else (a changed cfgstring, an unexported object, a missing LUN)
// takes the reclaim path: remove, then create anew, and the SCSI device is
// new. Other attributes (dev_size, hw_max_sectors, cmd_time_out) are not
// compared: the kernel refuses most of them while the LUN is exported, so a
// change to them needs a stop of vscsid (which removes the device) and a
// start.
//
// Adopting brings the ring up with a take-over (bringUp with reopen). The
// new Handler starts from power-on: a tape drive reports UNIT ATTENTION 29/00, so st
// knows the position may be lost. Close then removes the adopted device
// like one it created.
func (t *Target) adopt(spec DeviceSpec, factory Factory) (info DeviceInfo, ok bool, err error) {
	f := t.fs
	naaDir := filepath.Join(t.paths.loopback(), wwn("target", spec.Name))
	tpg := filepath.Join(naaDir, "tpgt_1")
	lun := filepath.Join(tpg, "lun", "lun_0")
	link := filepath.Join(lun, spec.Name)
	if spec.NoLoopback {
		if spec.ISCSI == nil {
			return info, false, nil
		}
		link = t.paths.iscsiLUNLink(spec.ISCSI.IQN, spec.Name)
	}
	obj, objOK := findObject(f, t.paths.core(), spec.Name)
	if !objOK || !f.IsLink(link) || !sameObject(link, obj) {
		return info, false, nil
	}
	if cfg, err := f.ReadAttr(filepath.Join(obj, "attrib", "dev_config")); err != nil || strings.TrimSpace(cfg) != spec.devConfig() {
		return info, false, nil
	}
	hba, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(filepath.Dir(obj)), "user_"))
	if err != nil {
		return info, false, nil
	}
	uioN, err := findUIO(f, t.paths.SysFS, uioName(hba, spec.Name, spec.devConfig()))
	if err != nil {
		return info, false, nil
	}
	t.log.Info("re-attaching in place a device left by a daemon that did not stop cleanly",
		zap.String("device", spec.Name), zap.String("object", obj), zap.String("uio", uioN))

	m := &managed{done: make(chan struct{}), obj: obj, noReply: true} // ours: nl_reply_supported=-1
	defer func() {
		if err != nil {
			// Leave the configfs objects: they are still the kernel's
			// live device; the caller falls back to reclaiming them.
			if uerr := m.undo.runFrom(m.served); uerr != nil {
				err = errors.Join(err, uerr)
			}
		}
	}()
	// Close removes it as Create's undo would: LUN first, then the ring,
	// then the storage object and its HBA.
	hbaDir := filepath.Dir(obj)
	m.undo.push("remove "+hbaDir, func() error {
		if err := f.Rmdir(hbaDir); err != nil && !isBusy(err) {
			return err
		}
		return nil
	})
	m.undo.push("remove "+obj, func() error { return f.Rmdir(obj) })
	m.served = len(m.undo)
	dc := DeviceConfig{Name: spec.Name, HBA: hba, Subtype: spec.Subtype, Config: spec.Config, Size: spec.Size, BlockSize: spec.BlockSize, UIO: uioN}
	if dc.BlockSize == 0 {
		dc.BlockSize = 512
	}
	dlog, err := t.bringUp(m, dc, factory, true, t.resumes(spec.Name, spec.devConfig()))
	if err != nil {
		return info, false, err
	}
	if !spec.NoLoopback {
		for _, p := range []string{naaDir, tpg, lun} {
			m.undo.push("remove "+p, func() error { return f.Rmdir(p) })
		}
		m.undo.push("unlink "+link, func() error { return f.Unlink(link) })
	}
	kept := spec.ISCSI != nil && t.keepISCSI(m, spec.Name, obj, spec.ISCSI)
	if kept {
		t.log.Info("iSCSI target taken over in place: its sessions stay logged in",
			zap.String("device", spec.Name), zap.String("iqn", spec.ISCSI.IQN))
	}
	if spec.ISCSI != nil && !kept {
		// The leftover iSCSI target is removed now that the ring is
		// served again (disabling its TPG waits for the commands its
		// sessions have in flight), then made anew from the spec; its
		// initiators log in again.
		if err := t.removeLeftoverISCSI(spec); err != nil {
			return info, false, err
		}
		if err := t.exportISCSI(m, spec.Name, obj, spec.ISCSI); err != nil {
			return info, false, fmt.Errorf("iSCSI export: %w", err)
		}
	}

	m.info = DeviceInfo{DeviceConfig: dc, Ring: m.info.Ring}
	if !spec.NoLoopback {
		nexus, _ := f.ReadAttr(filepath.Join(tpg, "nexus"))
		if v, err := f.ReadAttr(filepath.Join(tpg, "address")); err == nil {
			if addr, err := tpgAddress(v, 0); err == nil {
				m.info.SCSI, _ = probeSCSI(f, t.paths.SysFS, addr)
			}
		}
		m.info.WWN, m.info.Nexus = filepath.Base(naaDir), strings.TrimSpace(nexus)
	}
	t.register(m)
	dlog.Info("device re-attached in place", zap.String("node", m.info.SCSI.String()), zap.String("address", m.info.SCSI.Address))
	return m.info, true, nil
}

// sameObject reports whether the symbolic link link resolves to what path
// resolves to.
func sameObject(link, path string) bool {
	dst, err1 := filepath.EvalSymlinks(link)
	want, err2 := filepath.EvalSymlinks(path)
	return err1 == nil && err2 == nil && dst == want
}

// runFrom runs the steps pushed from index i on, in reverse, and drops
// them: the earlier ones are kept.
func (u *undo) runFrom(i int) error {
	tail := (*u)[i:]
	*u = (*u)[:i]
	return tail.run()
}
