package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"time"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/tcmu"
)

// transportAborts lets held commands end on ABORT TASK (fault.Options.Aborts).
type transportAborts struct{}

func (transportAborts) CanReportAborts(ctx context.Context) bool { return tcmu.CanReportAborts(ctx) }
func (transportAborts) Aborted(ctx context.Context) bool         { return tcmu.Aborted(ctx) }

// withFaults puts the handlers of kind k behind a fault.Device with fc's
// rules and timing (wrapFaults), so that faults can be added at runtime
// (vscsictl fault) to any device; without rules or timing it costs one
// atomic load per command. The fault.Device forwards the transport's
// optional interfaces (LUN reset, RECONFIG) and exposes the handler with
// Unwrap (scsi.As finds the disk or drive behind it).
func withFaults(k device.Kind, env *handlerEnv, fc config.Fault, cmdTimeOut time.Duration) target.Factory {
	return func(dc target.DeviceConfig, log *zap.Logger) (target.Handler, error) {
		h, err := k.New(device.Config{Name: dc.Name, Config: dc.Config, Size: dc.Size}, env, log)
		if err != nil {
			return nil, err
		}
		fd, err := wrapFaults(h, k.Commands, fc, cmdTimeOut)
		if err != nil {
			return nil, errors.Join(err, closeHandler(h))
		}
		if t := fd.Timing(); len(fc.Rules) > 0 || !t.IsZero() {
			log.Info("fault injection on", zap.Int("rules", len(fc.Rules)), zap.Stringer("timing", t), zap.Uint64("seed", fc.Seed))
		}
		return fd, nil
	}
}

// wrapFaults binds fc to h, a handler with the command table cmds whose
// device has attrib/cmd_time_out cmdTimeOut (delays are capped below it).
func wrapFaults(h target.Handler, cmds scsi.CommandTable, fc config.Fault, cmdTimeOut time.Duration) (*fault.Device, error) {
	opts, err := fc.Options(cmds, cmdTimeOut)
	if err != nil {
		return nil, err
	}
	opts.Aborts = transportAborts{}
	fd, err := fault.New(h, opts)
	if err != nil {
		return nil, fmt.Errorf("fault: %w", err)
	}
	return fd, nil
}

func closeHandler(h target.Handler) error {
	if c, ok := scsi.As[io.Closer](h); ok {
		return c.Close()
	}
	return nil
}
