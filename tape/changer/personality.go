package changer

import (
	"slices"
	"strings"
)

// DVCIDStyle is how READ ELEMENT STATUS with DVCID=1 identifies the drive
// in a data transfer element descriptor (SMC-3 6.11.4.5: CODE SET 2h,
// ASCII).
type DVCIDStyle uint8

// DVCID styles.
const (
	// DVCIDSerial: IDENTIFIER TYPE 0h, the drive's serial number alone,
	// space-padded to Personality.SerialLen (HP, Quantum, Spectra).
	DVCIDSerial DVCIDStyle = iota
	// DVCIDVendorSerial: IDENTIFIER TYPE 1h (T10 vendor ID based), vendor
	// (8), product (16) and serial number (SerialLen), space-padded (IBM:
	// 34 bytes, the serial in 10).
	DVCIDVendorSerial
)

// A Personality is the identity of an emulated library model and the
// first address of each element type (SMC-3 element addresses are the
// vendor's choice; each model documents its own in its SCSI reference).
type Personality struct {
	Name     string // config value of the personality key
	Vendor   string // T10 vendor identification, at most 8
	Product  string // at most 16
	Revision string // at most 4

	// First element address of each type. The ranges must not overlap
	// for the configured counts; Max* bound the counts so that they
	// cannot.
	Transport, Mail, Drive, Storage uint16
	MaxMail, MaxDrives, MaxStorage  int

	DVCID     DVCIDStyle
	SerialLen int // bytes of the serial number in the DVCID identifier
}

// personalities are the emulated models.
//
// generic packs the element types from address 0: the transport at 0,
// so that the "default transport" of MOVE MEDIUM's TRANSPORT ELEMENT
// ADDRESS 0 is the transport itself, drives from 1, mail slots from
// 10h and storage from 1000h, and reports drives by serial number.
//
// ibm-ts3100 is the IBM TS3100/TS3200 (3573-TL) as its SCSI reference
// lays it out and mhvtl emulates it: transport 1, import/export from
// 10h, drives from 100h, storage from 1000h; DVCID with vendor, product
// and a 10-character serial (34 bytes). Revision 6.50 is what a real
// 3573-TL reports in INQUIRY.
var personalities = []Personality{
	{
		Name: "generic", Vendor: "VSCSI", Product: "VLIBRARY", Revision: "0100",
		Transport: 0x0000, Drive: 0x0001, Mail: 0x0010, Storage: 0x1000,
		MaxDrives: 15, MaxMail: 240, MaxStorage: 4096,
		DVCID: DVCIDSerial, SerialLen: 32,
	},
	{
		Name: "ibm-ts3100", Vendor: "IBM", Product: "3573-TL", Revision: "6.50",
		Transport: 0x0001, Mail: 0x0010, Drive: 0x0100, Storage: 0x1000,
		MaxMail: 240, MaxDrives: 16, MaxStorage: 4096,
		DVCID: DVCIDVendorSerial, SerialLen: 10,
	},
}

// LookupPersonality returns the personality named name.
func LookupPersonality(name string) (*Personality, bool) {
	i := slices.IndexFunc(personalities, func(p Personality) bool { return p.Name == name })
	if i < 0 {
		return nil, false
	}
	return &personalities[i], true
}

// personalityList names the personalities for messages.
func personalityList() string {
	names := make([]string, len(personalities))
	for i := range personalities {
		names[i] = personalities[i].Name
	}
	return strings.Join(names, ", ")
}

// dvcidLen is the IDENTIFIER LENGTH of a data transfer element's device
// identifier.
func (p *Personality) dvcidLen() int {
	if p.DVCID == DVCIDVendorSerial {
		return 8 + 16 + p.SerialLen
	}
	return p.SerialLen
}
