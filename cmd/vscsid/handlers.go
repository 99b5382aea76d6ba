package main

import (
	"errors"
	"fmt"
	"slices"
	"sync/atomic"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
	"github.com/vscsid/vscsid/tape/changer"
	"github.com/vscsid/vscsid/target"
)

// devParams are the backstore attributes a handler's config implies.
type devParams struct {
	size      uint64 // dev_size, bytes
	blockSize uint32 // hw_block_size
}

// handlerType is one subtype vscsid serves.
type handlerType struct {
	// check validates a config-file cfgstring strictly and returns what
	// configfs needs.
	check func(cfg string) (devParams, error)
	// grammar validates a cfgstring as targetcli passes it (CheckConfig):
	// the backstore's size= is given apart, so a disk needs no size key.
	grammar func(cfg string) error
	// factory builds the handler for an attached device; env reaches the
	// daemon's other devices (a library's drives).
	factory func(dc target.DeviceConfig, env *handlerEnv, log *zap.Logger) (target.Handler, error)
	// desc documents the cfgstring grammar (targetcli's ConfigDesc).
	desc string
	// commands is the kind's command table: what the fault rules may
	// filter on (LBAs or tape positions) and the commands they name.
	commands scsi.CommandTable
}

var handlerTypes = map[string]handlerType{
	"vdisk": {check: checkDisk, grammar: func(s string) error { _, err := disk.ParseConfig(s); return err }, factory: newDisk, desc: disk.ConfigDesc, commands: disk.Commands()},
	"vtape": {check: checkTape, grammar: func(s string) error { _, err := tape.ParseConfig(s); return err }, factory: newTape, desc: tape.ConfigDesc, commands: tape.Commands()},
	"vlibrary": {check: checkLibrary, grammar: func(s string) error { _, err := changer.ParseConfig(s); return err }, factory: newLibrary,
		desc: changer.ConfigDesc, commands: changer.Commands()},
}

// handlerEnv is what a handler may need of the daemon besides its own
// configuration: the target, to find a library's drives by name. The
// target is set once it exists (devices it adopts while it starts find no
// drives yet, and find them at their next command). A nil *handlerEnv
// finds nothing.
type handlerEnv struct {
	reg atomic.Value // devices
}

// setDevices makes the registry of devices (the Target) known.
func (e *handlerEnv) setDevices(d devices) { e.reg.Store(&d) }

// drive resolves a library's data transfer element to the vtape device
// of that name (changer.Resolver).
func (e *handlerEnv) drive(name string) (changer.Drive, error) {
	var reg *devices
	if e != nil {
		reg, _ = e.reg.Load().(*devices)
	}
	if reg == nil {
		return nil, fmt.Errorf("device %s: %w", name, target.ErrNoDevice)
	}
	h, err := (*reg).Handler(name)
	if err != nil {
		return nil, err
	}
	d, ok := scsi.As[*tape.Drive](h)
	if !ok {
		return nil, fmt.Errorf("device %s is not a vtape drive", name)
	}
	return d, nil
}

func typeNames() []string {
	var n []string
	for k := range handlerTypes {
		n = append(n, k)
	}
	slices.Sort(n)
	return n
}

func checkDisk(s string) (devParams, error) {
	c, err := disk.ParseConfig(s)
	if err != nil {
		return devParams{}, err
	}
	if !c.HasSize() {
		return devParams{}, errors.New("vdisk config: size= (or blocks=) is required in the config file")
	}
	return devParams{size: c.Capacity() * uint64(c.LBS), blockSize: c.LBS}, nil
}

func newDisk(dc target.DeviceConfig, _ *handlerEnv, log *zap.Logger) (target.Handler, error) {
	c, err := disk.ParseConfig(dc.Config)
	if err != nil {
		return nil, err
	}
	if !c.HasSize() {
		// targetcli: the capacity is the backstore's size= (dev_size).
		c = c.WithDefaultSize(dc.Size)
	}
	return disk.New(dc.Name, c, log)
}

// A tape's dev_size means nothing to the kernel (TCMU is passthrough); it is
// shown by targetcli, so report the drive's nominal capacity.
const tapeDevSize = 1 << 30

func checkTape(s string) (devParams, error) {
	if _, err := tape.ParseConfig(s); err != nil {
		return devParams{}, err
	}
	return devParams{size: tapeDevSize, blockSize: 512}, nil
}

// newTape opens a drive over its media directory (created on first
// start, with the configured cartridge), with the state it saved there;
// a memory=1 drive keeps its cartridges in RAM.
func newTape(dc target.DeviceConfig, _ *handlerEnv, log *zap.Logger) (target.Handler, error) {
	c, err := tape.ParseConfig(dc.Config)
	if err != nil {
		return nil, err
	}
	var lib tape.Library
	if !c.Memory {
		if lib, err = cartridge.MakeLibrary(c.Media); err != nil {
			return nil, err
		}
	}
	return tape.Open(dc.Name, c, lib, log)
}

// A library's dev_size means nothing either; it is shown by targetcli.
func checkLibrary(s string) (devParams, error) {
	if _, err := changer.ParseConfig(s); err != nil {
		return devParams{}, err
	}
	return devParams{size: tapeDevSize, blockSize: 512}, nil
}

// newLibrary opens a changer over its media directory; its drives are
// the vtape devices its drives= names, found when it needs them.
func newLibrary(dc target.DeviceConfig, env *handlerEnv, log *zap.Logger) (target.Handler, error) {
	c, err := changer.ParseConfig(dc.Config)
	if err != nil {
		return nil, err
	}
	return changer.Open(dc.Name, c, env.drive, log)
}
