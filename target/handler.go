package target

import (
	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
)

// A Handler emulates the logical unit of a device: scsi.Handler, served
// by the TCMU transport (tcmu.Handler says how).
type Handler = scsi.Handler

// DeviceConfig describes one TCMU device as the kernel (or our own config
// file) created it.
type DeviceConfig struct {
	Name      string // configfs storage object name, e.g. "disk0"
	HBA       int    // N of core/user_N
	Subtype   string // handler subtype: "vdisk", "vtape"
	Config    string // cfgstring after "<subtype>/"
	Size      uint64 // dev_size in bytes
	BlockSize uint32 // hw_block_size
	UIO       string // "uio0"
}

// A Factory builds a Handler for a device whose subtype matches. It
// validates cfg.Config and returns a descriptive error that says what is
// wrong (the error is reported to the operator or the kernel).
type Factory func(cfg DeviceConfig, log *zap.Logger) (Handler, error)
