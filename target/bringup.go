package target

import (
	"fmt"
	"io"
	"path/filepath"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/tcmu"
)

// bringUp is the one bring-up of a device's ring, whoever made the device
// (libtcmu's add_device(dev, reopen) is the model): Create for a new
// device of ours and for one a previous daemon left (adopt), Attach for a
// device another tool made, found at start-up or announced by a netlink
// ADDED event. It builds the handler with the factory, takes the ring
// over when a previous server may have left commands in it (reopen:
// takeOverRing), opens and maps the uio device dc.UIO, and serves it: m
// gets its dev, h, info.DeviceConfig and info.Ring, and m.undo the steps
// that close the uio device and stop serving. On error the handler is
// closed and what bringUp pushed on m.undo stays for the caller to run.
// With resume, the device continues one the previous daemon handed over
// (handover.go): the handler is told before it serves. It returns the
// device's logger.
func (t *Target) bringUp(m *managed, dc DeviceConfig, factory Factory, reopen, resume bool) (dlog *zap.Logger, err error) {
	dlog = t.log.With(zap.String("device", dc.Name), zap.Int("hba", dc.HBA), zap.String("uio", dc.UIO), zap.String("subtype", dc.Subtype))
	h, err := factory(dc, dlog)
	if err != nil {
		return dlog, fmt.Errorf("%s handler: %w", dc.Subtype, err)
	}
	defer func() {
		if err != nil {
			if c, ok := scsi.As[io.Closer](h); ok {
				_ = c.Close()
			}
		}
	}()
	if reopen {
		if err := t.takeOverRing(m.obj); err != nil {
			return dlog, err
		}
	}
	size, err := uioMapSize(t.fs, t.paths.SysFS, dc.UIO)
	if err != nil {
		return dlog, err
	}
	rd, err := t.open(filepath.Join(t.paths.Dev, dc.UIO), size)
	if err != nil {
		return dlog, err
	}
	m.undo.push("close "+dc.UIO, rd.Close)
	d, err := tcmu.NewDevice(rd.Memory(), rd, h, dlog)
	if err != nil {
		return dlog, err
	}
	if resume {
		t.resumeHandOver(dc.Name, h, dlog)
	}
	m.dev, m.h = d, h
	m.info.DeviceConfig = dc
	m.info.Ring = d.Info()
	t.serve(m, rd, dlog)
	return dlog, nil
}
