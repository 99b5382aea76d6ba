package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/cmd/internal/config"
)

// Reload applies next, a config file that passed the checks, to the
// running daemon (SIGHUP, systemctl reload): config.PlanReload says what
// changes, or refuses the whole file. Removed devices go, new ones are
// made, changed fault rules and timing models are set in place; every
// other device is untouched. A step that fails is reported and the rest
// still applied; the daemon then runs what the new file says, less that.
func (d *daemon) Reload(ctx context.Context, next *config.Config) (config.Reload, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	plan, err := config.PlanReload(d.cfg, next)
	if err != nil {
		return plan, err
	}
	var errs []error
	for _, name := range plan.Remove {
		if err := d.tgt.Remove(name); err != nil {
			errs = append(errs, fmt.Errorf("remove device %s: %w", name, err))
			continue
		}
		d.log.Info("device removed (reload)", zap.String("device", name))
	}
	for _, dev := range plan.Add {
		k, _ := config.KindOf(dev.Type)
		p, _ := k.Check(dev.Config) // checked by config.Parse
		info, err := d.tgt.Create(ctx, deviceSpec(next, d.env, dev, p))
		if err != nil {
			errs = append(errs, fmt.Errorf("create device %s: %w", dev.Name, err))
			continue
		}
		d.log.Info("device created (reload)", zap.String("device", info.Name), zap.String("subtype", info.Subtype),
			zap.String("node", info.SCSI.String()))
	}
	for _, dev := range plan.Faults {
		if err := d.setFaults(dev); err != nil {
			errs = append(errs, fmt.Errorf("device %s: fault: %w", dev.Name, err))
			continue
		}
		d.log.Info("fault rules and timing set (reload)", zap.String("device", dev.Name))
	}
	if plan.Poll {
		d.tgt.SetRingPoll(next.PollOf)
		d.log.Info("ring poll windows set (reload)", zap.Duration("ring_poll", time.Duration(next.RingPoll)))
	}
	d.cfg = next
	return plan, errors.Join(errs...)
}

// setFaults replaces dev's fault rules and timing model with its config's.
func (d *daemon) setFaults(dev config.Device) error {
	fd, err := d.faults(dev.Name)
	if err != nil {
		return err
	}
	var fc config.Fault
	if dev.Fault != nil {
		fc = *dev.Fault
	}
	tm, rules, err := fc.Parse()
	if err != nil {
		return err
	}
	if err := fd.SetRules(rules); err != nil { // nothing changes on error
		return err
	}
	return fd.SetTiming(tm)
}
