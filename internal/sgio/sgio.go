// Package sgio sends SCSI commands through a Linux SCSI generic node
// (/dev/sgN) with the SG_IO ioctl (include/scsi/sg.h, version 3
// interface): the initiator's side of a command, as sg3_utils sends it.
// vscsictl replay uses it to run a recording against a live device;
// the VM experiments use it to ask for direct I/O.
package sgio

import (
	"errors"
	"fmt"
	"time"
)

// Dir is a command's data direction.
type Dir int8

// Directions.
const (
	None       Dir = iota // no data
	ToDevice              // Data-Out
	FromDevice            // Data-In
)

// Request is one command.
type Request struct {
	CDB  []byte
	Dir  Dir
	Data []byte // the Data-Out bytes, or room for the Data-In; len is the expected transfer length
	// Sense receives the sense data (up to 252 bytes; nil: none kept).
	Sense   []byte
	Timeout time.Duration // 0: 60 s
	// Direct asks the kernel to transfer to or from Data itself rather
	// than through its own buffer (SG_FLAG_DIRECT_IO); Reply.Direct says
	// whether it did.
	Direct bool
}

// Reply is how the command ended.
type Reply struct {
	Status   uint8  // the SCSI status byte
	SenseLen int    // bytes of Request.Sense written
	Resid    int    // the expected transfer length less the bytes transferred
	Host     uint16 // the host adapter's status (DID_*): 0 when the command reached the device
	Driver   uint16 // the driver's status (DRIVER_*)
	Duration time.Duration
	Direct   bool // the transfer was direct (Request.Direct)
}

// Err is nil when the command reached the device and got a status back
// (any status: CHECK CONDITION is an answer, not a failure), and says
// what stood in the way otherwise.
func (r Reply) Err() error {
	if r.Host != 0 {
		return fmt.Errorf("host status 0x%02x: the command did not reach the device", r.Host)
	}
	if r.Driver&^driverSense != 0 {
		return fmt.Errorf("driver status 0x%02x", r.Driver)
	}
	return nil
}

// driverSense (DRIVER_SENSE) only says sense data came back.
const driverSense = 0x08

// ErrUnsupported is returned where SG_IO does not exist (not Linux).
var ErrUnsupported = errors.New("SG_IO needs Linux")
