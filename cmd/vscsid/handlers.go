package main

import (
	"fmt"
	"sync/atomic"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
)

// handlerEnv is what a handler may need of the daemon besides its own
// configuration (device.Env): the target, to find a library's drives by
// name. The target is set once it exists (devices it adopts while it
// starts find no drives yet, and find them at their next command). A nil
// *handlerEnv finds nothing.
type handlerEnv struct {
	reg atomic.Value // devices
}

// setDevices makes the registry of devices (the Target) known.
func (e *handlerEnv) setDevices(d devices) { e.reg.Store(&d) }

// Handler implements device.Env.
func (e *handlerEnv) Handler(name string) (scsi.Handler, error) {
	var reg *devices
	if e != nil {
		reg, _ = e.reg.Load().(*devices)
	}
	if reg == nil {
		return nil, fmt.Errorf("device %s: %w", name, target.ErrNoDevice)
	}
	return (*reg).Handler(name)
}
