package main

import (
	"fmt"
	"slices"
	"sync/atomic"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape/cartridge"
	"github.com/vscsid/vscsid/tape/changer"
	"github.com/vscsid/vscsid/target"
)

// kinds are the device kinds vscsid serves, each declared by its own
// package: a new kind is one line here.
var kinds = []device.Kind{disk.DeviceKind, cartridge.DriveKind, changer.DeviceKind}

// kindOf returns the kind of subtype.
func kindOf(subtype string) (device.Kind, bool) {
	i := slices.IndexFunc(kinds, func(k device.Kind) bool { return k.Subtype == subtype })
	if i < 0 {
		return device.Kind{}, false
	}
	return kinds[i], true
}

// typeNames are the subtypes, sorted.
func typeNames() []string {
	n := make([]string, len(kinds))
	for i, k := range kinds {
		n[i] = k.Subtype
	}
	slices.Sort(n)
	return n
}

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
