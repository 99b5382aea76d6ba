package target

import (
	"bufio"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/scsi"
)

// A planned restart (systemctl restart, a package upgrade) hands the
// devices over to the next daemon instead of removing them. HandOver lets
// go of every device the way Close lets go of one another tool made: the
// device is blocked, the commands in flight complete (up to
// drainTimeout), the loop stops and the handler closes (a drive saves its
// position and settings for Resume), the uio device closes, and the device
// is unblocked. Every configfs object, tcm_loop LUN and iSCSI export stays,
// so /dev/stN, /dev/sdX, a tape an application holds open and the iSCSI
// sessions stay too;
// commands sent meanwhile wait in the ring, or in the kernel's qfull queue,
// for the next daemon, within cmd_time_out.
//
// HandOver then writes a record beside the lock file naming each device,
// its dev_config and whether its drain completed. The next New reads and
// removes the record; Create's adopt, or Attach for a device another tool
// made, takes each device over in place, and a device the record lists
// with the same dev_config and a completed drain is told before it serves
// that the initiator's view of it continues (HandOverResumer): it raises no
// power-on unit attention when what the initiator saw survived (a fake_rw
// disk, a library's inventory). A device without the record (a crash, a
// drain that timed out, a changed cfgstring) starts from power-on.
//
// The record lives beside the lock file, in /run/vscsid under systemd:
// runtime state, gone at a reboot, when configfs is empty too. The unit
// keeps the directory across a restart (RuntimeDirectoryPreserve=restart)
// and lets systemd remove it on a stop.

// HandOverResumer is implemented by handlers that can continue from a
// planned hand-over without the initiator noticing.
type HandOverResumer interface {
	// ResumeHandOver is called before the handler serves its first
	// command, when it takes over a device that the previous daemon
	// handed over cleanly (HandOver) with the same configuration. It
	// drops the power-on unit attentions and returns true if the device
	// is the one the initiator used (its medium survived the restart),
	// and keeps them and returns false otherwise (a RAM disk whose data
	// was not carried over).
	ResumeHandOver() bool
}

// A HandOverCarrier is a handler with state that lives only in the
// daemon's memory: a RAM store disk's data, a zoned disk's write
// pointers. HandOver saves it, after the device stopped serving, through
// Options.Keeper (systemd's file-descriptor store: a memory file); the
// next daemon loads it before ResumeHandOver, which then finds the
// device as the initiator left it.
type HandOverCarrier interface {
	// SaveHandOver writes the state to w. The handler serves no command
	// afterwards.
	SaveHandOver(w io.Writer) error
	// LoadHandOver reads what SaveHandOver wrote, before the handler
	// serves. On error the handler is left as built (power-on).
	LoadHandOver(r io.Reader) error
}

// A StateKeeper keeps state across a restart of the daemon, in memory:
// systemd's file-descriptor store (cmd/internal/systemd.FDStore).
type StateKeeper interface {
	// Keep keeps what save writes for the next daemon under name.
	Keep(name string, save func(io.Writer) error) error
	// Take returns what the previous daemon kept under name, and
	// forgets it; nil if nothing. The caller closes it.
	Take(name string) io.ReadCloser
	// Release drops what the previous daemon kept that nobody took, and
	// returns its names. Run calls it once the devices found at start-up
	// are attached.
	Release() []string
}

// carryName is the name a device's carried state is kept under.
func carryName(device string) string { return "handover." + device }

// handOverVersion is the record's format version; a record of another
// version is ignored (its devices start from power-on).
const handOverVersion = 1

type handOverRecord struct {
	Version int              `json:"version"`
	Time    time.Time        `json:"time"`
	Devices []handOverDevice `json:"devices"`
}

type handOverDevice struct {
	Name      string `json:"name"`
	DevConfig string `json:"dev_config"`
	// Ours: the daemon made it (not targetcli); ISCSI names the iSCSI
	// target it made for it, if any. Such a device that the next
	// daemon's config no longer lists is removed (RemoveStale).
	Ours  bool   `json:"ours,omitempty"`
	ISCSI string `json:"iscsi,omitempty"`
	// Drained: every command the device had taken completed before it
	// was let go. Otherwise the next daemon's take-over completes the
	// rest with BUSY and the initiator sends them again: the device
	// starts from power-on, so that a tape drive's initiator knows the
	// position may have moved.
	Drained bool `json:"drained"`
}

// maxHandOverRecord bounds the record read at start: a few hundred bytes
// a device.
const maxHandOverRecord = 16 << 20

func (p Paths) handOver() string { return filepath.Join(filepath.Dir(p.Lock), "handover.json") }

// HandOver lets go of every device without removing any (see above) and
// records them for the next daemon. Like Close, it ends the Target.
func (t *Target) HandOver() error {
	t.createMu.Lock()
	defer t.createMu.Unlock()
	devs, _, ok := t.end()
	if !ok {
		return nil
	}

	rec := handOverRecord{Version: handOverVersion}
	var errs []error
	for i := len(devs) - 1; i >= 0; i-- {
		m := devs[i]
		drained, err := t.pause(m)
		if err != nil {
			errs = append(errs, fmt.Errorf("hand over device %s: %w", m.info.Name, err))
		}
		carried := drained && err == nil && t.carry(m)
		d := handOverDevice{Name: m.info.Name, DevConfig: m.info.Subtype + "/" + m.info.Config, Drained: drained && err == nil,
			Ours: m.info.Origin != OriginAttached}
		if ts := t.iscsiTargets(m.obj); d.Ours && len(ts) == 1 {
			d.ISCSI = ts[0]
		}
		rec.Devices = append(rec.Devices, d)
		t.log.Info("device handed over: it stays in the kernel for the next daemon", zap.String("device", m.info.Name), zap.Bool("drained", drained), zap.Bool("carried", carried))
	}
	t.ended()
	rec.Time = time.Now()
	if err := writeHandOver(t.paths.handOver(), &rec); err != nil {
		errs = append(errs, fmt.Errorf("hand-over record (the next daemon starts the devices from power-on): %w", err))
	}
	t.cancel()
	errs = append(errs, t.lock.Close())
	return errors.Join(errs...)
}

// pause stops serving m and closes its uio device, leaving configfs as it
// is: release's drain without its removal steps. It reports whether the
// ring drained.
func (t *Target) pause(m *managed) (drained bool, err error) {
	var errs []error
	if err := t.action(m.obj, "block_dev", "1"); err != nil {
		errs = append(errs, err)
	}
	drained = t.drain(m)
	if m.stop != nil {
		m.stop()
	}
	if m.rd != nil {
		errs = append(errs, m.rd.Close())
	}
	if err := t.action(m.obj, "block_dev", "0"); err != nil {
		errs = append(errs, err)
	}
	return drained, errors.Join(errs...)
}

// carry saves the in-memory state of m's handler, if it has any, for the
// next daemon, and reports whether it did. A failure is logged, not
// returned: the device then starts from power-on, which is always safe.
func (t *Target) carry(m *managed) bool {
	c, ok := scsi.As[HandOverCarrier](m.h)
	if !ok {
		return false
	}
	if t.opts.Keeper == nil {
		t.log.Info("the device's data is in this daemon's memory and nothing can keep it: the next daemon starts it from power-on", zap.String("device", m.info.Name))
		return false
	}
	if err := t.opts.Keeper.Keep(carryName(m.info.Name), c.SaveHandOver); err != nil {
		t.log.Warn("the device's data is in this daemon's memory and could not be kept: the next daemon starts it from power-on", zap.String("device", m.info.Name), zap.Error(err))
		return false
	}
	return true
}

// writeHandOver writes rec to path: a temporary file renamed over it,
// mode 0600.
func writeHandOver(path string, rec *handOverRecord) error {
	b, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	if err := os.Rename(tmp, path); err != nil {
		_ = os.Remove(tmp) // best effort: the rename's error is the one to report
		return err
	}
	return nil
}

// takeHandOver reads and removes the record of the previous daemon's
// hand-over, keyed by device name: empty when there is none or it cannot
// be read (said in the log), since without it devices start from
// power-on, which is always safe.
func (t *Target) takeHandOver() map[string]handOverDevice {
	path := t.paths.handOver()
	f, err := os.OpenFile(path, os.O_RDONLY|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	var rec handOverRecord
	if err == nil {
		err = func() error {
			defer func() { _ = f.Close() }() // read only
			if st, err := f.Stat(); err != nil || !st.Mode().IsRegular() || st.Size() > maxHandOverRecord {
				return fmt.Errorf("not a regular file of at most %d bytes", maxHandOverRecord)
			}
			return json.NewDecoder(f).Decode(&rec)
		}()
	}
	if rerr := os.Remove(path); rerr != nil && !errors.Is(rerr, fs.ErrNotExist) && err == nil {
		err = rerr
	}
	if err == nil && rec.Version != handOverVersion {
		err = fmt.Errorf("version %d, this daemon reads %d", rec.Version, handOverVersion)
	}
	if err != nil {
		t.log.Warn("the previous daemon's hand-over record is unusable; its devices start from power-on", zap.String("path", path), zap.Error(err))
		return nil
	}
	out := make(map[string]handOverDevice, len(rec.Devices))
	for _, d := range rec.Devices {
		out[d.Name] = d
	}
	t.log.Info("taking over from a planned stop", zap.Time("stopped", rec.Time), zap.Int("devices", len(out)))
	return out
}

// RemoveStale removes the devices the previous daemon made and handed
// over that no Create has taken over since: the config no longer lists
// them (or lists them under another name). Call it once the config's
// devices are created, before Run attaches what it finds, which would
// otherwise serve them as another tool's. Devices another tool made are
// left alone: Run takes them over.
func (t *Target) RemoveStale() error {
	t.createMu.Lock()
	defer t.createMu.Unlock()
	var errs []error
	for name, d := range t.handedOver {
		if !d.Ours {
			continue
		}
		delete(t.handedOver, name)
		subtype, cfg, _ := strings.Cut(d.DevConfig, "/")
		spec := DeviceSpec{Name: name, Subtype: subtype, Config: cfg}
		if d.ISCSI != "" {
			spec.ISCSI = &ISCSIExport{IQN: d.ISCSI}
		}
		t.log.Info("removing a handed-over device the config no longer lists", zap.String("device", name))
		if err := t.reclaim(spec); err != nil {
			errs = append(errs, fmt.Errorf("device %s: %w", name, err))
		}
	}
	return errors.Join(errs...)
}

// resumes reports whether the device name with devConfig was handed over
// cleanly by the previous daemon, and forgets it: only the first device
// of that name takes the hand-over.
func (t *Target) resumes(name, devConfig string) bool {
	d, ok := t.handedOver[name]
	delete(t.handedOver, name)
	return ok && d.DevConfig == devConfig && d.Drained
}

// resumeHandOver tells h it continues a handed-over device, after loading
// the state the previous daemon carried over, if any.
func (t *Target) resumeHandOver(name string, h Handler, log *zap.Logger) {
	if c, ok := scsi.As[HandOverCarrier](h); ok {
		if r := t.take(name); r == nil {
			log.Info("the previous daemon kept none of the device's data")
		} else {
			err := c.LoadHandOver(bufio.NewReaderSize(r, 1<<20))
			_ = r.Close() // read only
			if err != nil {
				log.Warn("the device's data the previous daemon kept is unusable", zap.Error(err))
			}
		}
	}
	if r, ok := scsi.As[HandOverResumer](h); ok {
		if r.ResumeHandOver() {
			log.Info("continuing the device the previous daemon handed over: the initiator sees no change")
		} else {
			log.Info("taking over the handed-over device from power-on: what the initiator saw did not survive the restart (a unit attention says so)")
		}
	}
}

// take returns the state the previous daemon kept for device name, or nil.
func (t *Target) take(name string) io.ReadCloser {
	if t.opts.Keeper == nil {
		return nil
	}
	return t.opts.Keeper.Take(carryName(name))
}
