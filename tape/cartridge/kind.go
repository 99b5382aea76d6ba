package cartridge

import (
	"path/filepath"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
)

// DriveKind is the vtape device kind: a tape.Drive over the cartridges of
// its media directory, a Library of this package (which is why the kind
// is declared here: package tape cannot import its store).
var DriveKind = device.Kind{
	Subtype:       "vtape",
	Type:          "tape",
	Desc:          tape.ConfigDesc,
	Check:         checkDrive,
	Grammar:       func(s string) error { _, err := tape.ParseConfig(s); return err },
	New:           newDrive,
	Commands:      tape.Commands(),
	MediumBarcode: tape.ChangeMediumBarcode,
}

func checkDrive(s string) (device.Params, error) {
	c, err := tape.ParseConfig(s)
	if err != nil {
		return device.Params{}, err
	}
	p := tape.DevParams
	if !c.Memory {
		p.Media = filepath.Clean(c.Media)
	}
	if !c.Memory && c.Barcode != "" {
		p.Claims = append(p.Claims, device.Claim{What: "cartridge", Value: filepath.Join(filepath.Clean(c.Media), c.Barcode)})
	}
	if c.Serial != "" {
		p.Claims = append(p.Claims, device.Claim{What: "serial number", Value: c.Serial})
	}
	return p, nil
}

// newDrive opens a drive over its media directory (created on first
// start, with the configured cartridge), with the state it saved there;
// a memory=1 drive keeps its cartridges in RAM.
func newDrive(dc device.Config, _ device.Env, log *zap.Logger) (scsi.Handler, error) {
	c, err := tape.ParseConfig(dc.Config)
	if err != nil {
		return nil, err
	}
	var lib tape.Library
	if !c.Memory {
		if lib, err = MakeLibrary(c.Media); err != nil {
			return nil, err
		}
	}
	return tape.Open(dc.Name, c, lib, log)
}
