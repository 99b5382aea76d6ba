package scsi

import "encoding/binary"

// SenseKey is a SCSI sense key (SPC-5 4.4.8, table 52).
type SenseKey uint8

// Sense keys.
const (
	NoSense        SenseKey = 0x0
	RecoveredError SenseKey = 0x1
	NotReady       SenseKey = 0x2
	MediumError    SenseKey = 0x3
	HardwareError  SenseKey = 0x4
	IllegalRequest SenseKey = 0x5
	UnitAttention  SenseKey = 0x6
	DataProtect    SenseKey = 0x7
	BlankCheck     SenseKey = 0x8
	VendorSpecific SenseKey = 0x9
	CopyAborted    SenseKey = 0xa
	AbortedCommand SenseKey = 0xb
	VolumeOverflow SenseKey = 0xd
	Miscompare     SenseKey = 0xe
	Completed      SenseKey = 0xf
)

var senseKeyNames = [16]string{
	"no_sense", "recovered_error", "not_ready", "medium_error",
	"hardware_error", "illegal_request", "unit_attention", "data_protect",
	"blank_check", "vendor_specific", "copy_aborted", "aborted_command",
	"reserved_0c", "volume_overflow", "miscompare", "completed",
}

// String returns the snake_case name of k, stable for use as a metric label.
func (k SenseKey) String() string { return senseKeyNames[k&0xf] }

// SenseFormat selects fixed (0x70) or descriptor (0x72) sense data.
type SenseFormat uint8

// Sense data formats.
const (
	FixedFormat      SenseFormat = 0
	DescriptorFormat SenseFormat = 1
)

// FieldPointer is the sense-key-specific field pointer of an ILLEGAL REQUEST
// (SPC-5 4.4.2.2): which byte (and optionally bit) of the CDB or of the
// parameter data was wrong.
type FieldPointer struct {
	Valid    bool   // SKSV
	CDB      bool   // C/D: true = the error is in the CDB, false = in the parameter data
	BitValid bool   // BPV
	Bit      uint8  // bit pointer, 0..7
	Field    uint16 // byte offset
}

// Sense is the value of a CHECK CONDITION: sense key, additional sense code
// and the stream-command bits tape needs. It is a plain value (no slices) so
// that building one never allocates.
type Sense struct {
	Key      SenseKey
	ASC      ASC   // ASC<<8 | ASCQ
	Info     int64 // INFORMATION; signed residue for tape; meaningful if Valid
	Valid    bool  // INFORMATION is valid
	Filemark bool
	EOM      bool
	ILI      bool
	Pointer  FieldPointer
	Format   SenseFormat
}

// SenseBufferSize is TCMU's sense buffer size (TCMU_SENSE_BUFFERSIZE).
const SenseBufferSize = 96

// Append appends s in its Format.
func (s Sense) Append(b []byte) []byte {
	if s.Format == DescriptorFormat {
		return s.AppendDescriptor(b)
	}
	return s.AppendFixed(b)
}

// AppendFixed appends the 18-byte fixed-format sense data (response code 0x70,
// SPC-5 4.4.3).
func (s Sense) AppendFixed(b []byte) []byte {
	var f [18]byte
	f[0] = 0x70
	if s.Valid {
		f[0] |= 0x80
	}
	f[2] = byte(s.Key & 0x0f)
	if s.Filemark {
		f[2] |= 0x80
	}
	if s.EOM {
		f[2] |= 0x40
	}
	if s.ILI {
		f[2] |= 0x20
	}
	binary.BigEndian.PutUint32(f[3:7], uint32(int32(s.Info)))
	f[7] = 10 // additional sense length
	f[12] = byte(s.ASC >> 8)
	f[13] = byte(s.ASC)
	if s.Pointer.Valid {
		f[15] = 0x80 | s.Pointer.bits()
		binary.BigEndian.PutUint16(f[16:18], s.Pointer.Field)
	}
	return append(b, f[:]...)
}

func (p FieldPointer) bits() byte {
	var v byte
	if p.CDB {
		v |= 0x40
	}
	if p.BitValid {
		v |= 0x08 | (p.Bit & 0x07)
	}
	return v
}

// AppendDescriptor appends descriptor-format sense data (response code 0x72,
// SPC-5 4.4.2) with an information descriptor (type 0) when Valid, a
// sense-key-specific descriptor (type 2) when the field pointer is valid, and
// a stream commands descriptor (type 4, SSC) when any of FM/EOM/ILI is set.
func (s Sense) AppendDescriptor(b []byte) []byte {
	start := len(b)
	b = append(b, 0x72, byte(s.Key&0x0f), byte(s.ASC>>8), byte(s.ASC), 0, 0, 0, 0)
	if s.Valid {
		var d [12]byte
		d[0], d[1], d[2] = 0x00, 0x0a, 0x80
		binary.BigEndian.PutUint64(d[4:], uint64(s.Info))
		b = append(b, d[:]...)
	}
	if s.Pointer.Valid {
		var d [8]byte
		d[0], d[1] = 0x02, 0x06
		d[4] = 0x80 | s.Pointer.bits()
		binary.BigEndian.PutUint16(d[5:7], s.Pointer.Field)
		b = append(b, d[:]...)
	}
	if s.Filemark || s.EOM || s.ILI {
		var d [4]byte
		d[0], d[1] = 0x04, 0x02
		if s.Filemark {
			d[3] |= 0x80
		}
		if s.EOM {
			d[3] |= 0x40
		}
		if s.ILI {
			d[3] |= 0x20
		}
		b = append(b, d[:]...)
	}
	b[start+7] = byte(len(b) - start - 8)
	return b
}
