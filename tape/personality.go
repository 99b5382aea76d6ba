package tape

import (
	"fmt"
	"slices"
	"strings"
)

// A Density is one recording format a drive reads (and maybe writes), as
// REPORT DENSITY SUPPORT describes it (SSC-5 7.7, density support data
// block descriptor) and as the MODE SENSE block descriptor reports it.
type Density struct {
	Code         uint8  // density code (primary; the secondary code is the same)
	Name         string // DENSITY NAME, 8 ASCII characters, e.g. "U-916"
	Description  string // DESCRIPTION, 20 ASCII characters
	Organization string // ASSIGNING ORGANIZATION, 8 ASCII characters
	BitsPerMM    uint32 // 24 bits; 0 = does not apply (helical scan)
	Width        uint16 // MEDIA WIDTH in tenths of a millimetre
	Tracks       uint16
	CapacityMB   uint32 // nominal native capacity, 10^6 bytes
	Writable     bool   // WRTOK: the drive writes this density too
	// Medium type descriptor (REPORT DENSITY SUPPORT with MEDIUM TYPE=1).
	MediumName   string // MEDIUM TYPE NAME, 8 ASCII characters, e.g. "LTO9Data"
	MediumDesc   string // DESCRIPTION of the medium type, 20 characters
	MediumLength uint16 // metres
	// CartridgeType is the medium type code IBM drives report in the
	// mode parameter header for a data cartridge of this density (the
	// generation in the high nibble, 8h; WORM adds 4h); 0 = none.
	CartridgeType uint8
}

// A Personality is the identity and the fixed capabilities of an emulated
// drive model: what INQUIRY, READ BLOCK LIMITS, MODE SENSE and REPORT
// DENSITY SUPPORT say, and which optional features exist.
//
// The table values (density codes, bits per mm, tracks, nominal capacities,
// medium lengths) are the public LTO/DDS figures drives report; the
// revisions are chosen to pass the firmware-level gates of LTFS's IBM
// backend, which compares the 4 revision bytes as a big-endian number
// (LTO-5 at least "B170", LTO-8 at least "HB81"). The vendor and product
// are those LTFS's supported-drive tables match as prefixes: "IBM"
// ULT3580-TDn for LTO-5 to LTO-9, "HP" Ultrium n-SCSI for LTO-5 to LTO-7
// and "HPE" Ultrium n-SCSI for LTO-8 and LTO-9 (the vendor string those
// drives report).
type Personality struct {
	Name     string // config value of the personality key
	Vendor   string // T10 vendor identification, at most 8
	Product  string // at most 16
	Revision string // at most 4
	Note     string // what the help text says of the model besides its identity

	// DefaultBlockSize is the block size at power-on and after a reset:
	// 0 = variable-block mode. DDS drives wake up in fixed 1024-byte mode
	// ("Seagate (now Quantum) drives usually wake up in fixed block mode
	// with 1024 byte block size", in the mailing-list thread "st try_direct_io" (2006)).
	DefaultBlockSize uint32
	// MaxBlockSize is the largest block the real drive accepts; the
	// configured max_block may not exceed it.
	MaxBlockSize uint32
	// Densities lists what the drive reads, oldest first; Densities[len-1]
	// is the drive's own (default, DEFLT) density, written to new media.
	Densities []Density
	// Setmarks: WRITE FILEMARKS WSMK and SPACE codes 4/5 (DDS yes, LTO no).
	Setmarks bool
	// MaxPartitions the medium partition page allows (1..4).
	MaxPartitions int
	// WORM media are supported (reported in VPD B0h and REPORT DENSITY
	// SUPPORT medium types).
	WORM bool
	// LBP is the mask (1<<method) of the logical block protection methods
	// the model implements: Reed-Solomon CRC from LTO-5, CRC32C too from
	// LTO-7 (the generations LTFS picks them by); 0 = none.
	LBP uint8
	// Encryption: the model encrypts (SECURITY PROTOCOL IN/OUT, tape data
	// encryption, AES-256-GCM), as LTO-4 and later drives do.
	Encryption bool
	// IBM: the model has the IBM LTO vendor interfaces LTFS's IBM backend
	// uses: diagnostic page 80h (forced dump, read back with READ BUFFER),
	// the cartridge type as the mode header's medium type, mode page 25h
	// (read/write control) and log page 37h.
	IBM bool
}

// DefaultDensity is the drive's native density.
func (p *Personality) DefaultDensity() *Density { return &p.Densities[len(p.Densities)-1] }

// density returns the table entry for code, or nil.
func (p *Personality) density(code uint8) *Density {
	for i := range p.Densities {
		if p.Densities[i].Code == code {
			return &p.Densities[i]
		}
	}
	return nil
}

// LTO densities (LTO-CVE assigned codes; bits per mm, tracks and nominal
// native capacity as LTO drives report them in REPORT DENSITY SUPPORT).
var (
	densityLTO3 = Density{Code: 0x44, Name: "U-316", Description: "Ultrium 3/16T", Organization: "LTO-CVE",
		BitsPerMM: 9638, Width: 127, Tracks: 704, CapacityMB: 400000,
		MediumName: "LTO3Data", MediumDesc: "Ultrium 3 Data Tape", MediumLength: 680, CartridgeType: 0x38}
	densityLTO4 = Density{Code: 0x46, Name: "U-416", Description: "Ultrium 4/16T", Organization: "LTO-CVE",
		BitsPerMM: 12725, Width: 127, Tracks: 896, CapacityMB: 800000,
		MediumName: "LTO4Data", MediumDesc: "Ultrium 4 Data Tape", MediumLength: 820, CartridgeType: 0x48}
	densityLTO5 = Density{Code: 0x58, Name: "U-516", Description: "Ultrium 5/16T", Organization: "LTO-CVE",
		BitsPerMM: 15142, Width: 127, Tracks: 1280, CapacityMB: 1500000,
		MediumName: "LTO5Data", MediumDesc: "Ultrium 5 Data Tape", MediumLength: 846, CartridgeType: 0x58}
	densityLTO6 = Density{Code: 0x5a, Name: "U-616", Description: "Ultrium 6/16T", Organization: "LTO-CVE",
		BitsPerMM: 15142, Width: 127, Tracks: 2176, CapacityMB: 2500000,
		MediumName: "LTO6Data", MediumDesc: "Ultrium 6 Data Tape", MediumLength: 846, CartridgeType: 0x68}
	densityLTO7 = Density{Code: 0x5c, Name: "U-732", Description: "Ultrium 7/32T", Organization: "LTO-CVE",
		BitsPerMM: 19107, Width: 127, Tracks: 3584, CapacityMB: 6000000,
		MediumName: "LTO7Data", MediumDesc: "Ultrium 7 Data Tape", MediumLength: 960, CartridgeType: 0x78}
	densityLTO8 = Density{Code: 0x5e, Name: "U-832", Description: "Ultrium 8/32T", Organization: "LTO-CVE",
		BitsPerMM: 20669, Width: 127, Tracks: 6656, CapacityMB: 12000000,
		MediumName: "LTO8Data", MediumDesc: "Ultrium 8 Data Tape", MediumLength: 960, CartridgeType: 0x88}
	densityLTO9 = Density{Code: 0x60, Name: "U-932", Description: "Ultrium 9/32T", Organization: "LTO-CVE",
		BitsPerMM: 21456, Width: 127, Tracks: 8960, CapacityMB: 18000000,
		MediumName: "LTO9Data", MediumDesc: "Ultrium 9 Data Tape", MediumLength: 1035, CartridgeType: 0x98}
	// LTO-10: two cartridges, 30 TB and the 40 TB one, each with its own
	// density code and cartridge type (LTFS's TC_DC_LTO10/LTOP10 and
	// TC_MP_LTO10D/LTOP10D_CART); bits per mm and tracks as the IBM LTO
	// SCSI reference gives them. The medium length is not published:
	// 0, "not reported".
	densityLTO10 = Density{Code: 0x62, Name: "U1032A", Description: "Ultrium 10/32T", Organization: "LTO-CVE",
		BitsPerMM: 21657, Width: 127, Tracks: 15104, CapacityMB: 30000000,
		MediumName: "LTO10Dat", MediumDesc: "Ultrium 10 Data Tape", CartridgeType: 0xa8}
	densityLTO10P = Density{Code: 0x63, Name: "U1032P", Description: "Ultrium 10P/32T", Organization: "LTO-CVE",
		BitsPerMM: 22441, Width: 127, Tracks: 15104, CapacityMB: 40000000,
		MediumName: "LTO10PDt", MediumDesc: "Ultrium 10 40TB Tape", CartridgeType: 0xa9}
)

// DDS densities (3.81 mm helical scan: bits per mm does not apply).
var (
	densityDDS3 = Density{Code: 0x25, Name: "DDS-3", Description: "DDS-3 12GB", Organization: "ECMA",
		Width: 38, Tracks: 1, CapacityMB: 12000,
		MediumName: "DDS3", MediumDesc: "DDS-3 125m", MediumLength: 125}
	densityDDS4 = Density{Code: 0x26, Name: "DDS-4", Description: "DDS-4 20GB", Organization: "ECMA",
		Width: 38, Tracks: 1, CapacityMB: 20000,
		MediumName: "DDS4", MediumDesc: "DDS-4 150m", MediumLength: 150}
	densityDAT72 = Density{Code: 0x47, Name: "DAT-72", Description: "DAT 72 36GB", Organization: "ECMA",
		Width: 38, Tracks: 1, CapacityMB: 36000,
		MediumName: "DAT72", MediumDesc: "DAT 72 170m", MediumLength: 170}
)

// densityGeneric is the vendor-specific format of the generic drive.
var densityGeneric = Density{Code: 0x80, Name: "VTAPE", Description: "vscsid virtual tape", Organization: "VSCSI",
	Width: 127, Tracks: 1, Writable: true,
	MediumName: "VTAPE", MediumDesc: "vscsid virtual tape"}

// ltoTable returns the density table of an LTO generation-n drive: LTO-5
// to LTO-7 read two generations back and write one back; LTO-8 and LTO-9
// read and write one generation back; LTO-10 reads and writes its own two
// cartridges only (no LTO-9), the 30 TB one its default.
func ltoTable(n int) []Density {
	if n == 10 {
		return []Density{withWritable(densityLTO10P), withWritable(densityLTO10)}
	}
	all := []Density{densityLTO3, densityLTO4, densityLTO5, densityLTO6, densityLTO7, densityLTO8, densityLTO9}
	own := n - 3 // index of generation n
	var t []Density
	back := 2
	if n >= 8 {
		back = 1
	}
	for i := own - back; i <= own; i++ {
		d := all[i]
		d.Writable = i >= own-1
		t = append(t, d)
	}
	return t
}

const (
	maxBlockLTO = 8 << 20   // IBM LTO READ BLOCK LIMITS maximum (0x800000)
	maxBlock24  = 1<<24 - 1 // the 24-bit fields of READ BLOCK LIMITS and READ/WRITE(6)
)

func ltoPersonality(name, vendor, product, rev string, gen int) Personality {
	parts := 4
	if gen == 5 {
		parts = 2
	}
	maxBlock := uint32(maxBlockLTO)
	if vendor != "IBM" {
		maxBlock = maxBlock24
	}
	lbp, note := uint8(lbpMaskRS), "LBP: RS-CRC"
	if gen >= 7 {
		lbp |= lbpMaskCRC32C
		note += ", CRC32C"
	}
	return Personality{
		Name: name, Vendor: vendor, Product: product, Revision: rev, Note: note,
		MaxBlockSize: maxBlock, Densities: ltoTable(gen),
		MaxPartitions: parts, WORM: true, IBM: vendor == "IBM", LBP: lbp, Encryption: true,
	}
}

// personalities is the table behind the personality config key.
var personalities = []Personality{
	{
		Name: "generic", Vendor: "VSCSI", Product: "VTAPE", Revision: "0100",
		Note:         "variable blocks; LBP: RS-CRC, CRC32C",
		MaxBlockSize: maxBlock24, Densities: []Density{densityGeneric},
		MaxPartitions: 4, WORM: true, LBP: lbpMaskRS | lbpMaskCRC32C, Encryption: true,
	},
	ltoPersonality("lto5", "IBM", "ULT3580-TD5", "Q3F0", 5),
	ltoPersonality("lto6", "IBM", "ULT3580-TD6", "Q3F0", 6),
	ltoPersonality("lto7", "IBM", "ULT3580-TD7", "Q3F0", 7),
	ltoPersonality("lto8", "IBM", "ULT3580-TD8", "Q3F0", 8),
	ltoPersonality("lto9", "IBM", "ULT3580-TD9", "Q3F0", 9),
	// IBM calls LTO-10 "generation A": its product ID is ULT3580-TDA, which
	// LTFS's supported-drive table matches (ULT3580-TD10 would not).
	ltoPersonality("lto10", "IBM", "ULT3580-TDA", "Q3F0", 10),
	ltoPersonality("hp-lto5", "HP", "Ultrium 5-SCSI", "Z6ED", 5),
	ltoPersonality("hp-lto6", "HP", "Ultrium 6-SCSI", "Z6ED", 6),
	ltoPersonality("hp-lto7", "HP", "Ultrium 7-SCSI", "Z6ED", 7),
	ltoPersonality("hp-lto8", "HPE", "Ultrium 8-SCSI", "Z6ED", 8),
	ltoPersonality("hp-lto9", "HPE", "Ultrium 9-SCSI", "Z6ED", 9),
	{
		Name: "dat72", Vendor: "HP", Product: "DAT72", Revision: "A060",
		Note:             "DDS, setmarks, fixed 1024-byte blocks at start",
		DefaultBlockSize: 1024, MaxBlockSize: maxBlock24,
		Densities: []Density{
			withWritable(densityDDS3), withWritable(densityDDS4), withWritable(densityDAT72),
		},
		Setmarks: true, MaxPartitions: 2,
	},
}

func withWritable(d Density) Density { d.Writable = true; return d }

// LookupPersonality returns the personality with the given config name.
func LookupPersonality(name string) (*Personality, bool) {
	for i := range personalities {
		if personalities[i].Name == name {
			return &personalities[i], true
		}
	}
	return nil, false
}

// PersonalityNames lists the valid values of the personality key.
func PersonalityNames() []string {
	names := make([]string, len(personalities))
	for i := range personalities {
		names[i] = personalities[i].Name
	}
	return names
}

func personalityList() string {
	n := PersonalityNames()
	slices.Sort(n)
	return strings.Join(n, " ")
}

// personalityHelp lists every personality with its INQUIRY vendor, product
// and revision, one a line, indented for ConfigDesc.
func personalityHelp(indent string) string {
	var b strings.Builder
	for i := range personalities {
		p := &personalities[i]
		line := fmt.Sprintf("%s%-8s %-5s %-15s %s", indent, p.Name, p.Vendor, p.Product, p.Revision)
		if p.Note != "" {
			line += " (" + p.Note + ")"
		}
		b.WriteString(line + "\n")
	}
	return b.String()
}
