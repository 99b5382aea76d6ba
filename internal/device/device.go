// Package device describes the kinds of device vscsid serves. Each
// handler package declares its kind (disk.Kind, tape.Kind,
// changer.Kind): its TCMU subtype, its cfgstring grammar and checks, how
// to build its handler, its command table. The daemon lists the kinds
// once and knows none of them by name, so a new kind touches its own
// package and that one list.
package device

import (
	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
)

// Kind is one kind of device.
type Kind struct {
	// Subtype is the TCMU handler subtype, the head of dev_config and
	// targetcli's user:<subtype> (cfgstring.Subtype).
	Subtype string
	// Type is the device's type for metrics and operators: "disk",
	// "tape" or "changer".
	Type string
	// Desc documents the cfgstring grammar (--help, targetcli's
	// ConfigDesc).
	Desc string
	// Check validates a cfgstring of the config file strictly and
	// returns the backstore attributes it implies.
	Check func(cfg string) (Params, error)
	// Grammar validates a cfgstring as targetcli passes it: the
	// backstore's size is given apart, so a disk needs no size key.
	Grammar func(cfg string) error
	// New builds the handler of an attached device; env reaches the
	// daemon's other devices (a library's drives).
	New func(c Config, env Env, log *zap.Logger) (scsi.Handler, error)
	// Commands is the kind's command table: the commands fault rules
	// name, their classes, and how rules address the medium.
	Commands scsi.CommandTable
	// MediumBarcode, for a kind whose medium targetcli's changemedium
	// changes (a tape drive), returns the barcode its cfgstring names;
	// nil for the other kinds.
	MediumBarcode func(cfg string) (string, error)
}

// Params are the backstore attributes a cfgstring implies, and the other
// devices it names.
type Params struct {
	Size      uint64 // dev_size, bytes
	BlockSize uint32 // hw_block_size
	// Peers are the daemon's other devices this one uses (a library's
	// drives). The daemon finds them by name when the device needs them;
	// the config file's check requires each to be of its subtype and to
	// be no other device's peer under the same key.
	Peers []Peer
	// Claims are what the device needs for itself alone: the config
	// file's check refuses two devices with the same claim (two drives
	// on one cartridge, two devices with one serial number).
	Claims []Claim
	// Media is the directory the device keeps its cartridges in ("":
	// none, or in memory); a peer with SameMedia must use the same.
	Media string
}

// A Claim is a resource one device holds exclusively.
type Claim struct {
	What  string // what it is, for the message: "cartridge", "serial number"
	Value string // which one
}

// A Peer is another device a device's cfgstring names.
type Peer struct {
	Key     string // the cfgstring key that names it ("drives")
	Name    string // its device name
	Subtype string // the subtype it must be ("vtape")
	// SameMedia: the peer must keep its cartridges in this device's
	// Media (a library's drives load the library's cartridges).
	SameMedia bool
}

// Config is what New gets of an attached device.
type Config struct {
	Name   string // the configfs storage object name (cfgstring.DeviceName)
	Config string // the cfgstring after "<subtype>/"
	Size   uint64 // dev_size in bytes (targetcli's size=)
}

// Env is what a handler may reach of the daemon besides its own device.
type Env interface {
	// Handler returns the handler of the device named name, behind its
	// decorators (scsi.As reaches the emulation); an error if there is
	// none now.
	Handler(name string) (scsi.Handler, error)
}
