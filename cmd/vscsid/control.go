package main

import (
	"context"
	"errors"
	"fmt"
	"slices"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/target"
)

// daemon is the running vscsid as the control socket sees it: a
// control.Service.
type daemon struct {
	cfg *Config // the config file: create uses its cmd_time_out and co.
	tgt *target.Target
	log *zap.Logger
}

func (d *daemon) Faults(name string) (control.Faults, error) { return faultList(d.tgt, name) }

func (d *daemon) AddFault(name, rule string) (uint64, error) {
	id, err := faultAdd(d.tgt, name, rule)
	if err == nil {
		d.log.Info("fault rule added (vscsictl)", zap.String("device", name), zap.Uint64("id", id), zap.String("rule", rule))
	}
	return id, err
}

func (d *daemon) RemoveFault(name string, id uint64) error {
	err := faultRemove(d.tgt, name, id)
	if err == nil {
		d.log.Info("fault rule removed (vscsictl)", zap.String("device", name), zap.Uint64("id", id))
	}
	return err
}

func (d *daemon) ClearFaults(name string) error {
	err := faultClear(d.tgt, name)
	if err == nil {
		d.log.Info("fault rules cleared (vscsictl)", zap.String("device", name))
	}
	return err
}

func (d *daemon) SetTiming(name, timing string) error {
	err := faultSetTiming(d.tgt, name, timing)
	if err == nil {
		d.log.Info("fault timing set (vscsictl)", zap.String("device", name), zap.String("timing", timing))
	}
	return err
}

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
		if ds.Err != nil {
			dj.Error = ds.Err.Error()
		}
		if t, ok := target.As[*tape.Drive](ds.Handler); ok {
			dj.Barcode = t.Stats().Barcode
		}
		out = append(out, dj)
	}
	return out
}

// create makes a device as if the config file had it; it lasts until
// remove or the daemon stops (add it to the config file to keep it).
func (d *daemon) Create(ctx context.Context, req control.CreateDevice) (control.Device, error) {
	dc := DeviceConfig{Name: req.Name, Type: req.Type, Config: req.Config, HWMaxSectors: req.HWMaxSectors}
	p, err := dc.check()
	if err != nil {
		return control.Device{}, fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	info, err := d.tgt.Create(ctx, deviceSpec(d.cfg, dc, p))
	if err != nil {
		if errors.Is(err, target.ErrClosed) {
			return control.Device{}, fmt.Errorf("%w: %w", unix.ESHUTDOWN, err)
		}
		if d.hasDevice(req.Name) {
			return control.Device{}, fmt.Errorf("%w: %w", unix.EEXIST, err)
		}
		return control.Device{}, err
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

func (d *daemon) hasDevice(name string) bool {
	return slices.ContainsFunc(d.tgt.Devices(), func(s target.DeviceStatus) bool { return s.Info.Name == name })
}

// remove removes a device vscsid created (config file or vscsictl). A
// tape drive keeps its position as at a clean stop (its Close saves it).
func (d *daemon) Remove(name string) error {
	if err := d.tgt.Remove(name); err != nil {
		switch {
		case errors.Is(err, target.ErrNoDevice):
			return fmt.Errorf("%w: %w", unix.ENODEV, err)
		case errors.Is(err, target.ErrNotOwned):
			return fmt.Errorf("%w: %w", unix.EPERM, err)
		case errors.Is(err, target.ErrClosed):
			return fmt.Errorf("%w: %w", unix.ESHUTDOWN, err)
		}
		return err
	}
	d.log.Info("device removed (vscsictl)", zap.String("device", name))
	return nil
}

func (d *daemon) Stats(name string) (control.Stats, error) {
	for _, ds := range d.tgt.Devices() {
		if ds.Info.Name == name {
			return statsOf(name, &ds.Stats), nil
		}
	}
	return control.Stats{}, fmt.Errorf("%w: no device %q", unix.ENODEV, name)
}

func (d *daemon) Load(name, barcode string) error {
	if barcode == "" {
		return fmt.Errorf("%w: no barcode", unix.EINVAL)
	}
	if err := changeMedium(d.tgt, name, barcode); err != nil {
		return err
	}
	d.log.Info("medium loaded (vscsictl)", zap.String("device", name), zap.String("medium", barcode))
	return nil
}

func (d *daemon) Unload(name string) error {
	if err := unloadMedium(d.tgt, name); err != nil {
		return err
	}
	d.log.Info("medium unloaded (vscsictl)", zap.String("device", name))
	return nil
}

// statsOf summarises a device's counters for people.
func statsOf(name string, s *target.DeviceStats) control.Stats {
	out := control.Stats{
		Name:            name,
		Commands:        []control.Command{},
		ReadBytes:       s.Transfer(target.DirRead).Bytes,
		WriteBytes:      s.Transfer(target.DirWrite).Bytes,
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

var _ control.Service = (*daemon)(nil)

// serveControl listens on path and serves s until ctx is done.
func serveControl(ctx context.Context, path string, s control.Service, log *zap.Logger) error {
	l, err := control.Listen(path)
	if err != nil {
		return err
	}
	log.Info("control socket listening", zap.String("path", path))
	return control.Serve(ctx, l, s)
}
