package changer

import (
	"path/filepath"

	"fmt"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

// DeviceKind is the vlibrary device kind.
var DeviceKind = device.Kind{
	Subtype:  "vlibrary",
	Type:     "changer",
	Desc:     ConfigDesc,
	Check:    checkConfig,
	Grammar:  func(s string) error { _, err := ParseConfig(s); return err },
	New:      newKind,
	Commands: changerCommands,
}

func checkConfig(s string) (device.Params, error) {
	c, err := ParseConfig(s)
	if err != nil {
		return device.Params{}, err
	}
	p := tape.DevParams
	for _, d := range c.Drives {
		p.Peers = append(p.Peers, device.Peer{Key: "drives", Name: d, Subtype: cartridge.DriveKind.Subtype, SameMedia: true})
	}
	p.Media = filepath.Clean(c.Media)
	// One library per media directory: its inventory and cartridges are
	// the library's.
	p.Claims = append(p.Claims, device.Claim{What: "library media directory", Value: filepath.Clean(c.Media)})
	if c.Serial != "" {
		p.Claims = append(p.Claims, device.Claim{What: "serial number", Value: c.Serial})
	}
	return p, nil
}

// newKind opens a changer over its media directory; its drives are the
// vtape devices its drives= names, found in env when it needs them.
func newKind(dc device.Config, env device.Env, log *zap.Logger) (scsi.Handler, error) {
	c, err := ParseConfig(dc.Config)
	if err != nil {
		return nil, err
	}
	return Open(dc.Name, c, driveResolver(env), log)
}

// driveResolver finds a data transfer element's drive among env's
// devices, behind its decorators.
func driveResolver(env device.Env) Resolver {
	return func(name string) (Drive, error) {
		if env == nil {
			return nil, errNoDriveName
		}
		h, err := env.Handler(name)
		if err != nil {
			return nil, err
		}
		d, ok := scsi.As[*tape.Drive](h)
		if !ok {
			return nil, fmt.Errorf("device %s is not a vtape drive", name)
		}
		return d, nil
	}
}
