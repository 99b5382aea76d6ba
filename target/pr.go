package target

import (
	"errors"
	"io/fs"
	"path/filepath"
	"strings"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
)

// Persistent reservations are LIO's, not the handlers': the kernel's core
// answers PERSISTENT RESERVE IN/OUT and RESERVE/RELEASE for TCMU backstores
// per I_T nexus. Two things make them work for vscsid's devices:
//
//   - each backstore's wwn/vpd_unit_serial holds the serial number its
//     handler reports in VPD page 80h (scsi.UnitSerialer), written before the
//     LUN is exported (the kernel refuses it afterwards); LIO names a
//     device's APTPL state <dbroot>/pr/aptpl_<unit serial>, so with an
//     empty serial every device would share one file;
//   - <dbroot>/pr exists: LIO writes APTPL state there and fails
//     (dmesg: filp_open) when it is missing, which Debian's packages leave
//     it. New creates it, and <dbroot> if needed (the kernel's
//     target/dbroot, /etc/target by default), and so do Create and the
//     attaching of a device, since targetcli moves dbroot
//     (/etc/rtslib-fb-target) the first time it runs.

// maxUnitSerial is the longest serial the kernel takes
// (INQUIRY_VPD_SERIAL_LEN - 1).
const maxUnitSerial = 253

// setUnitSerial writes h's serial number to the storage object obj's
// wwn/vpd_unit_serial. A failure only costs persistent reservations
// their own APTPL file, so it is logged, not returned.
func (t *Target) setUnitSerial(obj string, h Handler, log *zap.Logger) {
	us, ok := scsi.As[scsi.UnitSerialer](h)
	if !ok {
		return
	}
	s := us.UnitSerial()
	if s == "" || len(s) > maxUnitSerial || strings.ContainsAny(s, "\n") {
		log.Warn("no usable unit serial for wwn/vpd_unit_serial; persistent reservations may share APTPL state", zap.String("serial", s))
		return
	}
	p := filepath.Join(obj, "wwn", "vpd_unit_serial")
	if err := t.fs.WriteAttr(p, s); err != nil {
		log.Warn("cannot set the backstore's unit serial; persistent reservations may share APTPL state", zap.String("path", p), zap.Error(err))
	}
}

// preparePR creates <dbroot>/pr if it is missing.
func (t *Target) preparePR() {
	v, err := t.fs.ReadAttr(filepath.Join(t.paths.ConfigFS, "target", "dbroot"))
	if err != nil {
		return // an old kernel without dbroot: nothing to prepare
	}
	dbroot := strings.TrimSpace(v)
	if !filepath.IsAbs(dbroot) {
		return
	}
	for _, d := range []string{dbroot, filepath.Join(dbroot, "pr")} {
		if t.fs.Exists(d) {
			continue
		}
		if err := t.fs.Mkdir(d); err != nil && !errors.Is(err, fs.ErrExist) {
			t.log.Warn("cannot create LIO's persistent-reservation directory; PERSISTENT RESERVE OUT with APTPL will fail",
				zap.String("path", d), zap.Error(err))
			return
		}
		t.log.Info("created LIO's persistent-reservation directory", zap.String("path", d))
	}
}
