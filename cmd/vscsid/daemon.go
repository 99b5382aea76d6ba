package main

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"slices"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/changer"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/tcmu"
)

// devices is what the daemon asks of the Target, the one registry of
// devices: nothing here keeps a map of its own (the tests give a fixed
// set of real handlers).
type devices interface {
	Devices() []target.DeviceStatus
	Handler(name string) (target.Handler, error)
	Trace(name string, r *tcmu.TraceRing) (detach func(), err error)
	Create(ctx context.Context, spec target.DeviceSpec) (target.DeviceInfo, error)
	Remove(name string) error
	SetRingPoll(pollOf func(name string) time.Duration)
}

// daemon is the running vscsid as operators reach it: the control socket
// (a control.Service) and targetcli's changemedium over D-Bus. Its errors
// wrap the unix.Errno that D-Bus reports and the control socket turns
// into an HTTP status (withErrno).
type daemon struct {
	mu  sync.Mutex     // guards cfg; held through a reload
	cfg *config.Config // the config file: Create uses its cmd_time_out and co.
	tgt devices
	env *handlerEnv // what the handlers of devices it creates reach
	log *zap.Logger
}

var _ control.Service = (*daemon)(nil)

// errnos are the daemon's errno policy: which errno an error of target,
// tape or the changer is on the wire, the same on the control socket
// (HTTP status), in D-Bus replies and in the netlink replies to the
// kernel (target.Options.Errno).
var errnos = []struct {
	err   error
	errno unix.Errno
}{
	{target.ErrNoDevice, unix.ENODEV},
	{target.ErrNotOwned, unix.EPERM},
	{target.ErrClosed, unix.ESHUTDOWN},
	{target.ErrAmbiguous, unix.EINVAL},
	{tape.ErrNoMedium, enomedium},
	{tape.ErrMediumPresent, unix.EBUSY},
	{tape.ErrRemovalPrevented, unix.EBUSY},
	{tape.ErrClosed, unix.ENODEV},
	{fs.ErrNotExist, unix.ENOENT},
	{changer.ErrPrevented, unix.EBUSY},
	{changer.ErrNoFreeSlot, unix.ENOSPC},
	{changer.ErrInLibrary, unix.EEXIST},
	{changer.ErrEmptySlot, unix.ENOENT},
	{changer.ErrNoSuchSlot, unix.EINVAL},
	{changer.ErrNoSuchElement, unix.EINVAL},
	{changer.ErrClosed, unix.ENODEV},
	{changer.ErrSourceEmpty, unix.ENOENT},
	{changer.ErrDestinationFull, unix.EBUSY},
	{changer.ErrStillLoaded, unix.EBUSY},
	{changer.ErrDrivePrevents, unix.EBUSY},
	{changer.ErrLoadFailed, unix.EIO},
	{changer.ErrIncompatibleMedium, emediumtype},
}

// errnoOf is the errno of err: the one it wraps, else that of the first
// of errnos it matches, else 0.
func errnoOf(err error) unix.Errno {
	if en, ok := errors.AsType[unix.Errno](err); ok {
		return en
	}
	for _, e := range errnos {
		if errors.Is(err, e.err) {
			return e.errno
		}
	}
	return 0
}

// withErrno wraps err in its errno (errnoOf), or in dflt (0: none). An
// error that already wraps an errno is left alone.
func withErrno(err error, dflt unix.Errno) error {
	if err == nil {
		return nil
	}
	if _, ok := errors.AsType[unix.Errno](err); ok {
		return err
	}
	errno := errnoOf(err)
	if errno == 0 {
		errno = dflt
	}
	if errno == 0 {
		return err
	}
	return fmt.Errorf("%w: %w", errno, err)
}

// handler returns the handler of the device named name.
func (d *daemon) handler(name string) (target.Handler, error) {
	h, err := d.tgt.Handler(name)
	if errors.Is(err, target.ErrNoDevice) {
		return nil, fmt.Errorf("%w: no device %q", unix.ENODEV, name)
	}
	return h, withErrno(err, unix.EINVAL)
}

// handlerAs returns the T behind the handler of the device named name.
func handlerAs[T any](d *daemon, name, what string) (T, error) {
	var zero T
	h, err := d.handler(name)
	if err != nil {
		return zero, err
	}
	t, ok := scsi.As[T](h)
	if !ok {
		return zero, fmt.Errorf("%w: device %q %s", unix.ENOTSUP, name, what)
	}
	return t, nil
}

func (d *daemon) drive(name string) (*tape.Drive, error) {
	return handlerAs[*tape.Drive](d, name, "is not a tape drive")
}

func (d *daemon) faults(name string) (*fault.Device, error) {
	return handlerAs[*fault.Device](d, name, "has no fault injection")
}

// Devices lists every device served.
func (d *daemon) Devices() []control.Device {
	var out []control.Device
	for _, ds := range d.tgt.Devices() {
		i := ds.Info
		dj := control.Device{
			Name: i.Name, Type: typeOf(i.Subtype), Subtype: i.Subtype, Origin: i.Origin.String(),
			HBA: i.HBA, UIO: i.UIO, Address: i.SCSI.Address, Generic: i.SCSI.Generic, Failed: ds.Stats.Failed,
		}
		if i.SCSI.Address != "" {
			dj.Node = i.SCSI.String()
		}
		if ds.Poll > 0 {
			dj.RingPoll = ds.Poll.String()
		}
		if ds.Err != nil {
			dj.Error = ds.Err.Error()
		}
		if m, ok := scsi.As[scsi.MediumHolder](ds.Handler); ok {
			dj.Barcode = m.LoadedBarcode()
		}
		out = append(out, dj)
	}
	return out
}

// Create makes a device as if the config file had it; it lasts until
// Remove or the daemon stops (add it to the config file to keep it).
func (d *daemon) Create(ctx context.Context, req control.CreateDevice) (control.Device, error) {
	dc := config.Device{Name: req.Name, Type: req.Type, Config: req.Config, HWMaxSectors: req.HWMaxSectors}
	p, err := dc.Check()
	if err != nil {
		return control.Device{}, fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	d.mu.Lock()
	cfg := d.cfg
	d.mu.Unlock()
	info, err := d.tgt.Create(ctx, deviceSpec(cfg, d.env, dc, p))
	if err != nil {
		if slices.ContainsFunc(d.tgt.Devices(), func(s target.DeviceStatus) bool { return s.Info.Name == req.Name }) {
			return control.Device{}, fmt.Errorf("%w: %w", unix.EEXIST, err)
		}
		return control.Device{}, withErrno(err, 0)
	}
	d.log.Info("device created (vscsictl)", zap.String("device", info.Name), zap.String("subtype", info.Subtype),
		zap.String("config", info.Config), zap.String("scsi", info.SCSI.Address), zap.String("node", info.SCSI.String()))
	for _, dj := range d.Devices() {
		if dj.Name == info.Name {
			return dj, nil
		}
	}
	return control.Device{}, fmt.Errorf("%w: device %s was removed while being created", unix.ENODEV, info.Name)
}

// Remove removes a device vscsid created (config file or vscsictl). A
// tape drive keeps its position as at a clean stop (its Close saves it).
func (d *daemon) Remove(name string) error {
	if err := d.tgt.Remove(name); err != nil {
		return withErrno(err, 0)
	}
	d.log.Info("device removed (vscsictl)", zap.String("device", name))
	return nil
}

// Stats summarises a device's counters.
func (d *daemon) Stats(name string) (control.Stats, error) {
	for _, ds := range d.tgt.Devices() {
		if ds.Info.Name == name {
			return statsOf(name, &ds.Stats), nil
		}
	}
	return control.Stats{}, fmt.Errorf("%w: no device %q", unix.ENODEV, name)
}

// statsOf summarises a device's counters for people.
func statsOf(name string, s *tcmu.DeviceStats) control.Stats {
	out := control.Stats{
		Name:            name,
		Commands:        []control.Command{},
		ReadBytes:       s.Transfer(tcmu.DirRead).Bytes,
		WriteBytes:      s.Transfer(tcmu.DirWrite).Bytes,
		CheckConditions: map[string]uint64{},
		InFlight:        s.InFlight,
		Aborted:         s.Aborted,
		Failed:          s.Failed,
	}
	for _, c := range s.Commands {
		cj := control.Command{OpCode: uint8(c.OpCode), Name: c.Name, Count: c.Count, CheckConditions: c.CheckConditions,
			P50Seconds: c.Duration.Quantile(0.5), P99Seconds: c.Duration.Quantile(0.99)}
		if c.Duration.Count > 0 {
			cj.MeanSeconds = c.Duration.Sum / float64(c.Duration.Count)
		}
		out.Commands = append(out.Commands, cj)
	}
	for k, n := range s.CheckConditions {
		if n > 0 {
			out.CheckConditions[scsi.SenseKey(k).String()] = n
		}
	}
	return out
}

// Load puts barcode in a tape drive (vscsictl load).
func (d *daemon) Load(name, barcode string) error {
	if barcode == "" {
		return fmt.Errorf("%w: no barcode", unix.EINVAL)
	}
	return d.changeMedium(name, barcode, "vscsictl")
}

// changeMedium puts barcode in the drive name, ejecting what is in it
// first; an empty barcode only ejects (tape.Drive.Change). The drive saves
// its new state itself.
func (d *daemon) changeMedium(name, barcode, who string) error {
	dr, err := d.drive(name)
	if err != nil {
		return err
	}
	if err := d.notInLibrary(name); err != nil {
		return err
	}
	if err := dr.Change(barcode); err != nil {
		return withErrno(err, unix.EINVAL)
	}
	d.log.Info("medium changed ("+who+")", zap.String("device", name), zap.String("medium", barcode))
	return nil
}

// Unload ejects the cartridge; ENOMEDIUM when the drive is empty.
func (d *daemon) Unload(name string) error {
	dr, err := d.drive(name)
	if err != nil {
		return err
	}
	if err := d.notInLibrary(name); err != nil {
		return err
	}
	if err := dr.Unload(); err != nil {
		return withErrno(err, unix.EINVAL)
	}
	d.log.Info("medium unloaded (vscsictl)", zap.String("device", name))
	return nil
}

// Faults describes a device's fault injection.
func (d *daemon) Faults(name string) (control.Faults, error) {
	fd, err := d.faults(name)
	if err != nil {
		return control.Faults{}, err
	}
	st := fd.Stats()
	out := control.Faults{Name: name, Timing: fd.Timing().String(), Rules: []control.FaultRule{},
		Delayed: st.Delays.Count, Clamped: st.Clamped, Held: st.Held, Interrupted: st.Interrupted}
	for _, r := range fd.Injected() {
		out.Rules = append(out.Rules, control.FaultRule{ID: r.ID, Rule: r.Rule.String(), Action: r.Action,
			Matched: r.Matched, Injected: r.Injected, Spent: r.Spent})
	}
	return out, nil
}

// AddFault installs a rule (fault.RuleDesc) and returns its ID.
func (d *daemon) AddFault(name, rule string) (uint64, error) {
	fd, err := d.faults(name)
	if err != nil {
		return 0, err
	}
	r, err := fault.ParseRule(rule)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	id, err := fd.AddRule(r)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	d.log.Info("fault rule added (vscsictl)", zap.String("device", name), zap.Uint64("id", id), zap.String("rule", rule))
	return id, nil
}

// RemoveFault removes the rule id.
func (d *daemon) RemoveFault(name string, id uint64) error {
	fd, err := d.faults(name)
	if err != nil {
		return err
	}
	if err := fd.RemoveRule(id); err != nil {
		return fmt.Errorf("%w: %w", unix.ENOENT, err)
	}
	d.log.Info("fault rule removed (vscsictl)", zap.String("device", name), zap.Uint64("id", id))
	return nil
}

// ClearFaults removes every rule.
func (d *daemon) ClearFaults(name string) error {
	fd, err := d.faults(name)
	if err != nil {
		return err
	}
	fd.Clear()
	d.log.Info("fault rules cleared (vscsictl)", zap.String("device", name))
	return nil
}

// SetTiming sets the timing model (fault.TimingDesc; "" for none).
func (d *daemon) SetTiming(name, timing string) error {
	fd, err := d.faults(name)
	if err != nil {
		return err
	}
	tm, err := fault.ParseTiming(timing)
	if err != nil {
		return fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	if err := fd.SetTiming(tm); err != nil {
		return fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	d.log.Info("fault timing set (vscsictl)", zap.String("device", name), zap.String("timing", timing))
	return nil
}
