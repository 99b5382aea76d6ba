package changer

import (
	"fmt"
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

func (s DVCIDStyle) String() string {
	if s == DVCIDVendorSerial {
		return "vendor+product+serial"
	}
	return "serial"
}

// A Personality is the identity of an emulated library model, the first
// address of each element type (SMC-3 element addresses are the vendor's
// choice; each model documents its own in its SCSI reference) and the
// element counts a library of that model has unless configured otherwise.
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

	// Slots and MailSlots are the default storage and import/export
	// element counts.
	Slots, MailSlots int

	DVCID     DVCIDStyle
	SerialLen int // bytes of the serial number in the DVCID identifier

	Note string // what the model is, for the help text
}

// personalities are the emulated models. The identities are what the
// real libraries report in INQUIRY; the element addresses follow each
// vendor's SCSI reference, as mhvtl's personality modules do too, so
// scripts written against a real library or against mhvtl see the same
// numbers. Revisions and default counts that no public source fixes are
// vscsid's choice and say so.
//
//   - generic packs the element types from address 0: the transport at 0,
//     so that the "default transport" of MOVE MEDIUM's TRANSPORT ELEMENT
//     ADDRESS 0 is the transport itself, drives from 1, mail slots from
//     10h and storage from 1000h, and reports drives by serial number.
//   - ibm-ts3100 is the IBM TS3100/TS3200 (3573-TL): transport 1,
//     import/export from 10h, drives from 100h, storage from 1000h; DVCID
//     with vendor, product and a 10-character serial (34 bytes). Revision
//     6.50 is what a real 3573-TL reports. A TS3100 has 24 cells, one of
//     them configurable as the I/O station.
//   - ibm-ts4300 is the IBM TS4300 (machine type 3555). It answers INQUIRY
//     as a 3573-TL too (its SNMP model string is 3573-TL), with the same
//     addressing; a base module has 40 cells, 5 of them the I/O station.
//   - hp-msl-g3 is the HP MSL G3 series (MSL2024, MSL4048, MSL8096), all
//     of which report "MSL G3 Series": transport 1, storage from 20h,
//     mail slots from 1C0h, drives from 1E0h, DVCID the drive serial
//     alone in 20 bytes. An MSL2024 has 24 cells, one of them the mail
//     slot.
//   - quantum-scalar-i3 is the Quantum Scalar i3 (one product string for
//     i3 and i6): addresses 1, 10h, 100h and 1000h as in Quantum's SCSI
//     reference for its intelligent libraries; DVCID with vendor, product
//     and serial.
//   - ibm-3584 is the IBM 3584 family (TS3500, and the TS4500 that
//     succeeds it), the multi-frame library: INQUIRY IBM 03584L32 0402, as
//     a real one shows in /dev/tape/by-id and as AWS's virtual tape
//     library emulates it (medium changer type IBM-03584L32-0402);
//     transport 1, drives from 101h, import/export from 300h, storage
//     from 400h, the 3584's layout as mhvtl's IBM module has it, which
//     leaves room for 511 drives, 256 I/O cells and 64,512 storage slots;
//     DVCID with vendor, product and serial. The default contents (400
//     slots, 16 I/O cells) are vscsid's choice.
//   - stk-l700 is the StorageTek L700 of the L180/L700 SCSI reference:
//     transport 1, CAP cells from 10 (0Ah), drives from 500 (1F4h),
//     storage from 1000 (3E8h); DVCID with vendor, product and serial. It
//     is mhvtl's default library, and vscsid gives it mhvtl's default
//     revision (550V) and contents (32 slots, 4 CAP cells).
//   - stk-sl500 is the StorageTek StreamLine SL500, the SCSI-attached
//     model of the SL series: INQUIRY STK SL500; the layout of the SL500
//     Interface Reference Manual as mhvtl's STK module has it (transport
//     1, CAP cells from 10, drives from 500, storage from 1000) and its
//     DVCID with vendor, product and serial (34 bytes). A real SL500
//     holds at most 18 drives and 575 slots; vscsid allows what the
//     layout has room for (490 CAP cells, 500 drives, 64,536 slots), so
//     that it can stand for the SL3000 and SL8500, whose SCSI identity no
//     public source gives. The revision and the default contents (50
//     slots, a CAP of 5) are vscsid's choice.
//   - spectra-tseries is Spectra Logic's T-Series (T50e to T950, and
//     the T-Finity), which answers INQUIRY SPECTRA PYTHON: the layout of
//     Spectra's T-Series SCSI developer's guide as mhvtl's Spectra module
//     has it (transport 1, entry/exit from 10h, drives from 100h,
//     storage from 1000h), DVCID the drive serial alone in 32 bytes.
//     The revision and the default contents (50 slots, 10 entry/exit
//     cells) are vscsid's choice.
var personalities = []Personality{
	{
		Name: "generic", Vendor: "VSCSI", Product: "VLIBRARY", Revision: "0100",
		Transport: 0x0000, Drive: 0x0001, Mail: 0x0010, Storage: 0x1000,
		MaxDrives: 15, MaxMail: 240, MaxStorage: 0x10000 - 0x1000, Slots: 20, MailSlots: 4,
		DVCID: DVCIDSerial, SerialLen: 32,
		Note: "vscsid's own",
	},
	{
		Name: "ibm-ts3100", Vendor: "IBM", Product: "3573-TL", Revision: "6.50",
		Transport: 0x0001, Mail: 0x0010, Drive: 0x0100, Storage: 0x1000,
		MaxMail: 240, MaxDrives: 16, MaxStorage: 4096, Slots: 23, MailSlots: 1,
		DVCID: DVCIDVendorSerial, SerialLen: 10,
		Note: "IBM TS3100/TS3200",
	},
	{
		Name: "ibm-ts4300", Vendor: "IBM", Product: "3573-TL", Revision: "1210",
		Transport: 0x0001, Mail: 0x0010, Drive: 0x0100, Storage: 0x1000,
		MaxMail: 240, MaxDrives: 21, MaxStorage: 4096, Slots: 35, MailSlots: 5,
		DVCID: DVCIDVendorSerial, SerialLen: 10,
		Note: "IBM TS4300",
	},
	{
		Name: "hp-msl-g3", Vendor: "HP", Product: "MSL G3 Series", Revision: "5.30",
		Transport: 0x0001, Storage: 0x0020, Mail: 0x01c0, Drive: 0x01e0,
		MaxStorage: 0x01c0 - 0x0020, MaxMail: 0x01e0 - 0x01c0, MaxDrives: 16, Slots: 23, MailSlots: 1,
		DVCID: DVCIDSerial, SerialLen: 20,
		Note: "HP MSL2024/4048/8096",
	},
	{
		Name: "quantum-scalar-i3", Vendor: "QUANTUM", Product: "Scalar i3-i6", Revision: "203G",
		Transport: 0x0001, Mail: 0x0010, Drive: 0x0100, Storage: 0x1000,
		MaxMail: 240, MaxDrives: 24, MaxStorage: 4096, Slots: 45, MailSlots: 5,
		DVCID: DVCIDVendorSerial, SerialLen: 10,
		Note: "Quantum Scalar i3",
	},
	{
		Name: "ibm-3584", Vendor: "IBM", Product: "03584L32", Revision: "0402",
		Transport: 0x0001, Drive: 0x0101, Mail: 0x0300, Storage: 0x0400,
		MaxDrives: 0x0300 - 0x0101, MaxMail: 0x0400 - 0x0300, MaxStorage: 0x10000 - 0x0400, Slots: 400, MailSlots: 16,
		DVCID: DVCIDVendorSerial, SerialLen: 10,
		Note: "IBM 3584 (TS3500, TS4500)",
	},
	{
		Name: "stk-l700", Vendor: "STK", Product: "L700", Revision: "550V",
		Transport: 0x0001, Mail: 0x000a, Drive: 0x01f4, Storage: 0x03e8,
		MaxMail: 46, MaxDrives: 20, MaxStorage: 678, Slots: 32, MailSlots: 4,
		DVCID: DVCIDVendorSerial, SerialLen: 10,
		Note: "StorageTek L700, mhvtl's default",
	},
	{
		Name: "stk-sl500", Vendor: "STK", Product: "SL500", Revision: "1300",
		Transport: 0x0001, Mail: 0x000a, Drive: 0x01f4, Storage: 0x03e8,
		MaxMail: 0x01f4 - 0x000a, MaxDrives: 0x03e8 - 0x01f4, MaxStorage: 0x10000 - 0x03e8, Slots: 50, MailSlots: 5,
		DVCID: DVCIDVendorSerial, SerialLen: 10,
		Note: "StorageTek SL500, the SL series' layout",
	},
	{
		Name: "spectra-tseries", Vendor: "SPECTRA", Product: "PYTHON", Revision: "2000",
		Transport: 0x0001, Mail: 0x0010, Drive: 0x0100, Storage: 0x1000,
		MaxMail: 0x0100 - 0x0010, MaxDrives: 0x1000 - 0x0100, MaxStorage: 0x10000 - 0x1000, Slots: 50, MailSlots: 10,
		DVCID: DVCIDSerial, SerialLen: 32,
		Note: "Spectra Logic T-Series",
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

// personalityHelp describes every personality for ConfigDesc: the INQUIRY
// identity, the first address of each element type, the default counts,
// the limits and the DVCID style, three lines each.
func personalityHelp(indent string) string {
	var b strings.Builder
	for i := range personalities {
		p := &personalities[i]
		fmt.Fprintf(&b, "%s%s: %s %q %s (%s)\n", indent, p.Name, p.Vendor, p.Product, p.Revision, p.Note)
		fmt.Fprintf(&b, "%s  transport %s, mail %s, drives %s, storage %s\n", indent,
			elementAddr(p.Transport), elementAddr(p.Mail), elementAddr(p.Drive), elementAddr(p.Storage))
		fmt.Fprintf(&b, "%s  %d+%d slots (most %d+%d), most %d drives, DVCID %s\n", indent,
			p.Slots, p.MailSlots, p.MaxStorage, p.MaxMail, p.MaxDrives, p.DVCID)
	}
	return b.String()
}

// elementAddr writes an element address as the vendors' references do:
// decimal below 10, else hexadecimal with an h, led by 0 when it starts
// with a letter (0Ah, 1F4h).
func elementAddr(a uint16) string {
	if a < 10 {
		return fmt.Sprint(a)
	}
	s := fmt.Sprintf("%Xh", a)
	if s[0] >= 'A' {
		s = "0" + s
	}
	return s
}

// dvcidLen is the IDENTIFIER LENGTH of a data transfer element's device
// identifier.
func (p *Personality) dvcidLen() int {
	if p.DVCID == DVCIDVendorSerial {
		return 8 + 16 + p.SerialLen
	}
	return p.SerialLen
}
