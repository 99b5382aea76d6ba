package main

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/targettest"
	"github.com/vscsid/vscsid/target/tcmu"
)

// testRegistry stands in for the Target (which needs configfs) with
// devices built by the daemon's real factories: the lookups the daemon
// makes are the Target's, tested in package target.
type testRegistry struct {
	devs []target.DeviceStatus
	env  handlerEnv              // the factories' view of the registry (served)
	tcmu map[string]*tcmu.Device // devices a test serves over the fake kernel (Trace)
}

func (r *testRegistry) Devices() []target.DeviceStatus { return r.devs }

func (r *testRegistry) Handler(name string) (target.Handler, error) {
	for _, d := range r.devs {
		if d.Info.Name == name {
			return d.Handler, nil
		}
	}
	return nil, fmt.Errorf("device %s: %w", name, target.ErrNoDevice)
}

// SetRingPoll is the Target's: it sets each device's Poll.
func (r *testRegistry) SetRingPoll(pollOf func(name string) time.Duration) {
	for i := range r.devs {
		r.devs[i].Poll = pollOf(r.devs[i].Info.Name)
	}
}

// Trace is the Target's, for devices a test serves (serve).
func (r *testRegistry) Trace(name string, ring *tcmu.TraceRing) (func(), error) {
	if d := r.tcmu[name]; d != nil {
		return d.Trace(ring)
	}
	return nil, fmt.Errorf("device %s: %w", name, target.ErrNoDevice)
}

// serve serves the device name over the fake kernel, as the Target does
// over /dev/uioN.
func (r *testRegistry) serve(t *testing.T, name string) *targettest.Kernel {
	t.Helper()
	h, err := r.Handler(name)
	if err != nil {
		t.Fatal(err)
	}
	k := targettest.NewKernel(t, targettest.Config{})
	if r.tcmu == nil {
		r.tcmu = map[string]*tcmu.Device{}
	}
	r.tcmu[name] = k.Serve(h)
	return k
}

// add builds a device with f, as the Target would for it, and registers
// it; the handler is closed when the test ends.
func (r *testRegistry) add(t *testing.T, f target.Factory, dc target.DeviceConfig) target.Handler {
	t.Helper()
	h, err := f(dc, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeHandler(h) })
	r.devs = append(r.devs, target.DeviceStatus{Info: target.DeviceInfo{DeviceConfig: dc}, Handler: h})
	return h
}

// Create builds the device with the spec's factory and registers it, as
// the Target does once configfs has made it.
func (r *testRegistry) Create(_ context.Context, spec target.DeviceSpec) (target.DeviceInfo, error) {
	if slices.ContainsFunc(r.devs, func(d target.DeviceStatus) bool { return d.Info.Name == spec.Name }) {
		return target.DeviceInfo{}, fmt.Errorf("device %s: already created", spec.Name)
	}
	dc := target.DeviceConfig{Name: spec.Name, Subtype: spec.Subtype, Config: spec.Config, Size: spec.Size, BlockSize: spec.BlockSize}
	h, err := spec.Factory(dc, zap.NewNop())
	if err != nil {
		return target.DeviceInfo{}, err
	}
	info := target.DeviceInfo{DeviceConfig: dc}
	r.devs = append(r.devs, target.DeviceStatus{Info: info, Handler: h})
	return info, nil
}

// Remove drops a device, as Target.Remove does (and closes it).
func (r *testRegistry) Remove(name string) error {
	for i, d := range r.devs {
		if d.Info.Name == name {
			r.devs = append(r.devs[:i], r.devs[i+1:]...)
			return closeHandler(d.Handler)
		}
	}
	return fmt.Errorf("device %s: %w", name, target.ErrNoDevice)
}

// daemon is the daemon over r.
func (r *testRegistry) daemon(t *testing.T) *daemon {
	r.env.setDevices(r)
	return &daemon{cfg: &config.Config{}, tgt: r, env: &r.env, log: zaptest.NewLogger(t)}
}

// served is the factory of a device other tools create (targetcli); a
// library finds its drives in r.
func (r *testRegistry) served(typ string) target.Factory {
	r.env.setDevices(r)
	return withFaults(mustKind(typ), &r.env, config.Fault{}, config.KernelCmdTimeOut)
}
