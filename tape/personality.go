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
	// CartridgeType and WORMCartridgeType are the medium type codes IBM
	// drives report in the mode parameter header for a data and a WORM
	// cartridge of this density (LTO: the generation in the high nibble,
	// 8h, WORM adds 4h; 3592: 9xh data, Axh WORM); 0 = none (a WORM
	// cartridge of a density without a WORM type reports the data type).
	CartridgeType     uint8
	WORMCartridgeType uint8
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
	// Enterprise: an IBM 3592 drive, with the mode pages LTFS reads from
	// those only: 23h (medium sense: write protection), 24h
	// (initiator-specific extensions: the LBP methods), and byte 8 of
	// page 25h changeable (LTFS turns off reading across end of data).
	Enterprise bool
}

// ltoMediaIDs are the LTO barcode media ids (a label's last two
// characters) with the density of the generation each names. Type M
// (M8, an LTO-7 cartridge initialised at 5Dh) is left out: it is a
// format, not a cartridge generation, and only the drive that
// initialises it decides it.
var ltoMediaIDs = map[string]uint8{"L5": 0x58, "L6": 0x5a, "L7": 0x5c, "L8": 0x5e, "L9": 0x60, "LA": 0x62}

// labelDensity is the density a cartridge labelled barcode has on this
// drive before its image records one: on an LTO drive the generation its
// LTO media id names, as a real cartridge's memory tells the drive (a
// blank LTO-9 cartridge is LTO-9, which an LTO-10 drive neither reads nor
// writes); 0 otherwise, the drive's default.
func (p *Personality) labelDensity(barcode string) uint8 {
	if len(barcode) < 2 || p.DefaultDensity().Organization != "LTO-CVE" {
		return 0
	}
	return ltoMediaIDs[barcode[len(barcode)-2:]]
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
// LTO-9's 23,031 bits per mm is FreeBSD's libmt density table's, which
// takes its LTO figures from IBM's LTO SCSI references (mhvtl reports
// 21,456, with no source).
var (
	densityLTO3 = Density{Code: 0x44, Name: "U-316", Description: "Ultrium 3/16T", Organization: "LTO-CVE",
		BitsPerMM: 9638, Width: 127, Tracks: 704, CapacityMB: 400000,
		MediumName: "LTO3Data", MediumDesc: "Ultrium 3 Data Tape", MediumLength: 680, CartridgeType: 0x38, WORMCartridgeType: 0x3c}
	densityLTO4 = Density{Code: 0x46, Name: "U-416", Description: "Ultrium 4/16T", Organization: "LTO-CVE",
		BitsPerMM: 12725, Width: 127, Tracks: 896, CapacityMB: 800000,
		MediumName: "LTO4Data", MediumDesc: "Ultrium 4 Data Tape", MediumLength: 820, CartridgeType: 0x48, WORMCartridgeType: 0x4c}
	densityLTO5 = Density{Code: 0x58, Name: "U-516", Description: "Ultrium 5/16T", Organization: "LTO-CVE",
		BitsPerMM: 15142, Width: 127, Tracks: 1280, CapacityMB: 1500000,
		MediumName: "LTO5Data", MediumDesc: "Ultrium 5 Data Tape", MediumLength: 846, CartridgeType: 0x58, WORMCartridgeType: 0x5c}
	densityLTO6 = Density{Code: 0x5a, Name: "U-616", Description: "Ultrium 6/16T", Organization: "LTO-CVE",
		BitsPerMM: 15142, Width: 127, Tracks: 2176, CapacityMB: 2500000,
		MediumName: "LTO6Data", MediumDesc: "Ultrium 6 Data Tape", MediumLength: 846, CartridgeType: 0x68, WORMCartridgeType: 0x6c}
	densityLTO7 = Density{Code: 0x5c, Name: "U-732", Description: "Ultrium 7/32T", Organization: "LTO-CVE",
		BitsPerMM: 19107, Width: 127, Tracks: 3584, CapacityMB: 6000000,
		MediumName: "LTO7Data", MediumDesc: "Ultrium 7 Data Tape", MediumLength: 960, CartridgeType: 0x78, WORMCartridgeType: 0x7c}
	densityLTO8 = Density{Code: 0x5e, Name: "U-832", Description: "Ultrium 8/32T", Organization: "LTO-CVE",
		BitsPerMM: 20669, Width: 127, Tracks: 6656, CapacityMB: 12000000,
		MediumName: "LTO8Data", MediumDesc: "Ultrium 8 Data Tape", MediumLength: 960, CartridgeType: 0x88, WORMCartridgeType: 0x8c}
	densityLTO9 = Density{Code: 0x60, Name: "U-932", Description: "Ultrium 9/32T", Organization: "LTO-CVE",
		BitsPerMM: 23031, Width: 127, Tracks: 8960, CapacityMB: 18000000,
		MediumName: "LTO9Data", MediumDesc: "Ultrium 9 Data Tape", MediumLength: 1035, CartridgeType: 0x98, WORMCartridgeType: 0x9c}
	// LTO-10: two cartridges, 30 TB and the 40 TB one, each with its own
	// density code and cartridge type (LTFS's TC_DC_LTO10/LTOP10 and
	// TC_MP_LTO10D/LTOP10D_CART); bits per mm and tracks as the IBM LTO
	// SCSI reference gives them. The medium length is not published:
	// 0, "not reported".
	densityLTO10 = Density{Code: 0x62, Name: "U1032A", Description: "Ultrium 10/32T", Organization: "LTO-CVE",
		BitsPerMM: 21657, Width: 127, Tracks: 15104, CapacityMB: 30000000,
		MediumName: "LTO10Dat", MediumDesc: "Ultrium 10 Data Tape", CartridgeType: 0xa8, WORMCartridgeType: 0xac}
	densityLTO10P = Density{Code: 0x63, Name: "U1032P", Description: "Ultrium 10P/32T", Organization: "LTO-CVE",
		BitsPerMM: 22441, Width: 127, Tracks: 15104, CapacityMB: 40000000,
		MediumName: "LTO10PDt", MediumDesc: "Ultrium 10 40TB Tape", CartridgeType: 0xa9}
)

// IBM 3592 densities: each format on the cartridge type it is native to
// (E07 on JC, E08 and 55F on JD, 60F on JE, 70F on JF), with that
// cartridge's WORM type (JY, JZ, JV; JF has none). The names and bits per
// mm are those of IBM's 3592 SCSI reference as FreeBSD's density table
// (lib/libmt) has them, 70F's included; the track counts and medium
// lengths are not in the sources this table was made from: 0, "not
// reported". A real 3592 may write an older format on a newer cartridge
// (a TS1150 writes E07 on JC); here a cartridge's type is that of the
// format it holds, which is what the mode header reports and LTFS checks.
var (
	density3592E07 = Density{Code: 0x54, Name: "3592A4", Description: "3592 E07 (TS1140)", Organization: "IBM",
		BitsPerMM: 19686, Width: 127, CapacityMB: 4000000,
		MediumName: "3592JC", MediumDesc: "IBM 3592 JC data", CartridgeType: 0x93, WORMCartridgeType: 0xa3}
	density3592E08 = Density{Code: 0x55, Name: "3592A5", Description: "3592 E08 (TS1150)", Organization: "IBM",
		BitsPerMM: 20670, Width: 127, CapacityMB: 10000000,
		MediumName: "3592JD", MediumDesc: "IBM 3592 JD data", CartridgeType: 0x94, WORMCartridgeType: 0xa4}
	density3592_55F = Density{Code: 0x56, Name: "3592B5", Description: "3592 55F (TS1155)", Organization: "IBM",
		BitsPerMM: 20670, Width: 127, CapacityMB: 15000000,
		MediumName: "3592JD", MediumDesc: "IBM 3592 JD data", CartridgeType: 0x94, WORMCartridgeType: 0xa4}
	density3592_60F = Density{Code: 0x57, Name: "3592A6", Description: "3592 60F (TS1160)", Organization: "IBM",
		BitsPerMM: 21850, Width: 127, CapacityMB: 20000000,
		MediumName: "3592JE", MediumDesc: "IBM 3592 JE data", CartridgeType: 0x95, WORMCartridgeType: 0xa5}
	density3592_70F = Density{Code: 0x59, Name: "3592A7", Description: "3592 70F (TS1170)", Organization: "IBM",
		BitsPerMM: 21850, Width: 127, CapacityMB: 50000000,
		MediumName: "3592JF", MediumDesc: "IBM 3592 JF data", CartridgeType: 0x96}
)

// StorageTek T10000 densities: A and B format on T1 cartridges, C and D on
// T2, with the native capacities Oracle publishes and the track counts of
// A and B; C's and D's bits per mm and tracks are not in the sources this
// table was made from (0: not reported).
var (
	densityT10KA = Density{Code: 0x4a, Name: "T10000A", Description: "T10000A format", Organization: "STK",
		Width: 127, Tracks: 768, CapacityMB: 500000, MediumName: "T10000T1", MediumDesc: "T10000 T1 cartridge"}
	densityT10KB = Density{Code: 0x4b, Name: "T10000B", Description: "T10000B format", Organization: "STK",
		Width: 127, Tracks: 1152, CapacityMB: 1000000, MediumName: "T10000T1", MediumDesc: "T10000 T1 cartridge"}
	densityT10KC = Density{Code: 0x4c, Name: "T10000C", Description: "T10000C format", Organization: "STK",
		Width: 127, CapacityMB: 5000000, MediumName: "T10000T2", MediumDesc: "T10000 T2 cartridge"}
	densityT10KD = Density{Code: 0x4d, Name: "T10000D", Description: "T10000D format", Organization: "STK",
		Width: 127, CapacityMB: 8500000, MediumName: "T10000T2", MediumDesc: "T10000 T2 cartridge"}
)

// Quantum SDLT densities and native capacities: 49h is SDLT 320 in
// FreeBSD's density table ("SDLTapeI(160)", 7598 bits per mm); 4Ah is
// the code SDLT 600 drives report (other tools, mhvtl among them, use it;
// FreeBSD's table lists 4Ah only as T10000A, the codes being vendor
// specific).
var (
	densitySDLT320 = Density{Code: 0x49, Name: "SDLT320", Description: "SDLT 320 160GB", Organization: "QUANTUM",
		BitsPerMM: 7598, Width: 127, CapacityMB: 160000, MediumName: "SDLT-I", MediumDesc: "Super DLTtape I"}
	densitySDLT600 = Density{Code: 0x4a, Name: "SDLT600", Description: "SDLT 600 300GB", Organization: "QUANTUM",
		Width: 127, CapacityMB: 300000, MediumName: "SDLT-II", MediumDesc: "Super DLTtape II"}
)

// densityNames are the names of density codes an operator may give a new
// cartridge (vscsictl media create --density): the format it was written
// in, which decides the drives that read it. LTO-1, LTO-2 and LTO-7 type M
// have no entry of their own in the drive tables (no drive here writes
// them) but name their codes.
var densityNames = []struct {
	name string
	code uint8
}{
	{"lto1", 0x40}, {"lto2", 0x42}, {"lto3", densityLTO3.Code}, {"lto4", densityLTO4.Code},
	{"lto5", densityLTO5.Code}, {"lto6", densityLTO6.Code}, {"lto7", densityLTO7.Code}, {"ltom8", 0x5d},
	{"lto8", densityLTO8.Code}, {"lto9", densityLTO9.Code}, {"lto10", densityLTO10.Code}, {"lto10p", densityLTO10P.Code},
	{"e07", density3592E07.Code}, {"e08", density3592E08.Code}, {"55f", density3592_55F.Code},
	{"60f", density3592_60F.Code}, {"70f", density3592_70F.Code},
	{"t10000a", densityT10KA.Code}, {"t10000b", densityT10KB.Code}, {"t10000c", densityT10KC.Code}, {"t10000d", densityT10KD.Code},
	{"sdlt320", densitySDLT320.Code}, {"sdlt600", densitySDLT600.Code},
	{"dds3", densityDDS3.Code}, {"dds4", densityDDS4.Code}, {"dat72", densityDAT72.Code},
}

// DensityCode returns the density code named name (DensityNames; case and
// dashes do not matter: LTO-9 is lto9).
func DensityCode(name string) (uint8, bool) {
	name = strings.ToLower(strings.ReplaceAll(name, "-", ""))
	for _, d := range densityNames {
		if d.name == name {
			return d.code, true
		}
	}
	return 0, false
}

// DensityNames lists the names DensityCode knows, in table order.
func DensityNames() []string {
	n := make([]string, len(densityNames))
	for i, d := range densityNames {
		n[i] = d.name
	}
	return n
}

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

const (
	maxBlock3592 = 2 << 20   // 3592 READ BLOCK LIMITS maximum
	maxBlockT10K = 2_097_152 // T10000 READ BLOCK LIMITS maximum
)

// ibm3592Personality is a 3592 drive: IBM's enterprise interfaces, four
// partitions, WORM, encryption, and RS-CRC logical block protection,
// CRC32C too from the TS1150 (which is how LTFS, reading page 24h,
// chooses). dens lists what it reads, its own format last.
func ibm3592Personality(name, product string, crc32c bool, dens ...Density) Personality {
	lbp, note := uint8(lbpMaskRS), "3592; LBP: RS-CRC"
	if crc32c {
		lbp |= lbpMaskCRC32C
		note += ", CRC32C"
	}
	return Personality{
		Name: name, Vendor: "IBM", Product: product, Revision: rev3592, Note: note,
		MaxBlockSize: maxBlock3592, Densities: dens,
		MaxPartitions: 4, WORM: true, IBM: true, Enterprise: true, LBP: lbp, Encryption: true,
	}
}

// rev3592 is the 3592 models' revision: LTFS refuses a TS1140 below
// "3694" (the same big-endian comparison as for LTO).
const rev3592 = "4A70"

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
	// IBM 3592: the product IDs LTFS's IBM backend matches; what each
	// reads and writes as in LTFS's table of them (the TS1155 and TS1160
	// read E07 cartridges but no longer write them, so E07 is there
	// without withWritable; the TS1170 reads only its own JF).
	ibm3592Personality("ts1140", "03592E07", false, withWritable(density3592E07)),
	ibm3592Personality("ts1150", "03592E08", true, withWritable(density3592E07), withWritable(density3592E08)),
	ibm3592Personality("ts1155", "0359255F", true, density3592E07, withWritable(density3592E08), withWritable(density3592_55F)),
	ibm3592Personality("ts1160", "0359260F", true, density3592E07, withWritable(density3592E08),
		withWritable(density3592_55F), withWritable(density3592_60F)),
	ibm3592Personality("ts1170", "0359270F", true, withWritable(density3592_70F)),
	// StorageTek T10000C and D: 2 MiB blocks; the C writes only its own
	// format on T2 and reads the A and B formats of T1 cartridges, the D
	// writes its own and reads C, B and A. Their LBP methods are Oracle's
	// own (F0h, F1h), not the SSC ones vscsid implements, and their
	// encryption is keyed by Oracle's key manager, not by SECURITY
	// PROTOCOL OUT: neither is offered. Four partitions (the D has ten;
	// vscsid's cartridges hold four).
	{
		Name: "t10000c", Vendor: "STK", Product: "T10000C", Revision: "1.57",
		Note:          "2 MiB blocks, T2 cartridges",
		MaxBlockSize:  maxBlockT10K,
		Densities:     []Density{densityT10KA, densityT10KB, withWritable(densityT10KC)},
		MaxPartitions: 2, WORM: true,
	},
	{
		Name: "t10000d", Vendor: "STK", Product: "T10000D", Revision: "4.10",
		Note:          "2 MiB blocks, T2 cartridges",
		MaxBlockSize:  maxBlockT10K,
		Densities:     []Density{densityT10KA, densityT10KB, densityT10KC, withWritable(densityT10KD)},
		MaxPartitions: 4, WORM: true,
	},
	// A Super DLT drive for backup software that still ships DLT support:
	// Quantum's SDLT600, which reads SDLT320 cartridges.
	{
		Name: "sdlt600", Vendor: "QUANTUM", Product: "SDLT600", Revision: "5252",
		Note:          "Super DLT, reads SDLT320",
		MaxBlockSize:  maxBlock24,
		Densities:     []Density{densitySDLT320, withWritable(densitySDLT600)},
		MaxPartitions: 1,
	},
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
