package disk

import (
	"errors"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/scsi"
)

// DeviceKind is the vdisk device kind.
var DeviceKind = device.Kind{
	Subtype:  "vdisk",
	Type:     "disk",
	Desc:     ConfigDesc,
	Check:    checkConfig,
	Grammar:  func(s string) error { _, err := ParseConfig(s); return err },
	New:      newKind,
	Commands: sbcCommands,
}

// checkConfig is the config file's check: the capacity is required there
// (targetcli gives it as the backstore's size instead).
func checkConfig(s string) (device.Params, error) {
	c, err := ParseConfig(s)
	if err != nil {
		return device.Params{}, err
	}
	if !c.HasSize() {
		return device.Params{}, errors.New("vdisk config: size= (or blocks=) is required in the config file")
	}
	p := device.Params{Size: c.Capacity() * uint64(c.LBS), BlockSize: c.LBS}
	if c.Serial != "" {
		p.Claims = append(p.Claims, device.Claim{What: "serial number", Value: c.Serial})
	}
	return p, nil
}

// newKind builds the disk of an attached device; without a size in its
// cfgstring (targetcli) the capacity is the backstore's size= (dev_size).
func newKind(dc device.Config, _ device.Env, log *zap.Logger) (scsi.Handler, error) {
	c, err := ParseConfig(dc.Config)
	if err != nil {
		return nil, err
	}
	if !c.HasSize() {
		c = c.WithDefaultSize(dc.Size)
	}
	return New(dc.Name, c, log)
}
