package scsi

import (
	"encoding/binary"
	"errors"
	"fmt"
	"math"
)

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
	Deferred bool // deferred error: response code 0x71/0x73 instead of 0x70/0x72
}

// EarlyWarning is the sense of a tape write (or WRITE FILEMARKS) that
// succeeded inside the early-warning zone (SSC-5 4.2.5): NO SENSE,
// END-OF-PARTITION/MEDIUM DETECTED 00/02, EOM, VALID=0. st reads VALID=0
// (or INFORMATION 0) as "everything was written", returns the count, and
// gives ENOSPC on the next write. The drive reports it, and so does a
// fault rule that injects it.
var EarlyWarning = Sense{Key: NoSense, ASC: EndOfPartitionMediumDetected, EOM: true}

// SenseBufferSize is TCMU's sense buffer size (TCMU_SENSE_BUFFERSIZE).
const SenseBufferSize = 96

// Append appends s in its Format.
func (s Sense) Append(b []byte) []byte {
	if s.Format == DescriptorFormat {
		return s.AppendDescriptor(b)
	}
	return s.AppendFixed(b)
}

// AppendFixed appends the 18-byte fixed-format sense data (SPC-5 4.4.3):
//
//	byte 0     VALID (bit 7), RESPONSE CODE 0x70 (0x71 if Deferred)
//	byte 2     FILEMARK (7), EOM (6), ILI (5), SENSE KEY (3..0)
//	bytes 3-6  INFORMATION, big-endian, two's complement for a negative residue
//	byte 7     ADDITIONAL SENSE LENGTH = 10
//	bytes 12-13 ASC, ASCQ
//	bytes 15-17 SKSV (7), C/D (6), BPV (3), BIT POINTER (2..0), FIELD POINTER
//
// INFORMATION is four bytes: when Valid is set but Info fits neither int32
// nor uint32 (a 64-bit LBA), VALID is cleared and INFORMATION is zero, as
// SPC-5 requires; use descriptor format to report such values. When Valid
// is clear INFORMATION is zero.
func (s Sense) AppendFixed(b []byte) []byte {
	var f [18]byte
	f[0] = 0x70
	if s.Deferred {
		f[0] = 0x71
	}
	if s.Valid && s.Info >= math.MinInt32 && s.Info <= math.MaxUint32 {
		f[0] |= 0x80
		binary.BigEndian.PutUint32(f[3:7], uint32(s.Info))
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
	f[7] = 10 // additional sense length
	f[12] = byte(s.ASC >> 8)
	f[13] = byte(s.ASC)
	if s.Pointer.Valid {
		f[15] = s.Pointer.bits()
		binary.BigEndian.PutUint16(f[16:18], s.Pointer.Field)
	}
	return append(b, f[:]...)
}

// bits is the first byte of the sense-key-specific field: SKSV, C/D, BPV
// and the bit pointer (SPC-5 4.4.2.4.2, table 54).
func (p FieldPointer) bits() byte {
	v := byte(0x80)
	if p.CDB {
		v |= 0x40
	}
	if p.BitValid {
		v |= 0x08 | (p.Bit & 0x07)
	}
	return v
}

// Sense data descriptor types (SPC-5 4.4.2.1, table 28).
const (
	descInformation      = 0x00
	descSenseKeySpecific = 0x02
	descStreamCommands   = 0x04
)

// AppendDescriptor appends descriptor-format sense data (response code 0x72,
// 0x73 if Deferred; SPC-5 4.4.2) with, in this order, an information
// descriptor (type 0, 8-byte INFORMATION) when Valid, a sense-key-specific
// descriptor (type 2) when the field pointer is valid, and a stream commands
// descriptor (type 4, SSC-5 4.2.16) when any of FILEMARK/EOM/ILI is set.
// The result is at most 32 bytes.
func (s Sense) AppendDescriptor(b []byte) []byte {
	start := len(b)
	code := byte(0x72)
	if s.Deferred {
		code = 0x73
	}
	b = append(b, code, byte(s.Key&0x0f), byte(s.ASC>>8), byte(s.ASC), 0, 0, 0, 0)
	if s.Valid {
		var d [12]byte
		d[0], d[1], d[2] = descInformation, 0x0a, 0x80
		binary.BigEndian.PutUint64(d[4:], uint64(s.Info))
		b = append(b, d[:]...)
	}
	if s.Pointer.Valid {
		var d [8]byte
		d[0], d[1] = descSenseKeySpecific, 0x06
		d[4] = s.Pointer.bits()
		binary.BigEndian.PutUint16(d[5:7], s.Pointer.Field)
		b = append(b, d[:]...)
	}
	if s.Filemark || s.EOM || s.ILI {
		var d [4]byte
		d[0], d[1] = descStreamCommands, 0x02
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

// ParseSense decodes fixed (0x70/0x71) or descriptor (0x72/0x73) sense
// data, as an initiator (st, sd, sg_decode_sense) reads it. Bytes beyond
// the ADDITIONAL SENSE LENGTH are ignored; a shorter buffer is accepted if
// it holds the 8-byte header (fields past its end read as zero), but a
// truncated or malformed information, sense-key-specific or stream commands
// descriptor is an error. Unknown descriptor types are skipped.
//
// Fixed-format INFORMATION is sign-extended from 32 bits (SSC residues are
// signed); a caller that wants an unsigned 32-bit LBA takes uint32(s.Info).
// ParseSense never panics.
func ParseSense(b []byte) (Sense, error) {
	var s Sense
	if len(b) == 0 {
		return s, errors.New("sense data: empty")
	}
	code := b[0] & 0x7f
	switch code {
	case 0x70, 0x71, 0x72, 0x73:
	default:
		return s, fmt.Errorf("sense data: unsupported response code %#02x", code)
	}
	if len(b) < 8 {
		return s, fmt.Errorf("sense data: %d bytes, need at least 8", len(b))
	}
	s.Deferred = code == 0x71 || code == 0x73
	n := min(len(b), 8+int(b[7]))
	b = b[:n]
	if code == 0x70 || code == 0x71 {
		s.Format = FixedFormat
		s.Key = SenseKey(b[2] & 0x0f)
		s.Filemark = b[2]&0x80 != 0
		s.EOM = b[2]&0x40 != 0
		s.ILI = b[2]&0x20 != 0
		if b[0]&0x80 != 0 {
			s.Valid = true
			s.Info = int64(int32(binary.BigEndian.Uint32(b[3:7])))
		}
		if n >= 14 {
			s.ASC = ASC(b[12])<<8 | ASC(b[13])
		}
		if n >= 18 && b[15]&0x80 != 0 {
			s.Pointer = parseFieldPointer(b[15:18])
		}
		return s, nil
	}
	s.Format = DescriptorFormat
	s.Key = SenseKey(b[1] & 0x0f)
	s.ASC = ASC(b[2])<<8 | ASC(b[3])
	for off := 8; off < n; {
		if off+2 > n {
			return s, fmt.Errorf("sense data: descriptor at byte %d truncated", off)
		}
		typ, dlen := b[off], 2+int(b[off+1])
		if off+dlen > n {
			return s, fmt.Errorf("sense data: descriptor type %#02x at byte %d: %d bytes, only %d left", typ, off, dlen, n-off)
		}
		d := b[off : off+dlen]
		switch typ {
		case descInformation:
			if dlen != 12 {
				return s, fmt.Errorf("sense data: information descriptor at byte %d: additional length %d, want 10", off, dlen-2)
			}
			if d[2]&0x80 != 0 {
				s.Valid = true
				s.Info = int64(binary.BigEndian.Uint64(d[4:12]))
			}
		case descSenseKeySpecific:
			if dlen != 8 {
				return s, fmt.Errorf("sense data: sense key specific descriptor at byte %d: additional length %d, want 6", off, dlen-2)
			}
			if d[4]&0x80 != 0 {
				s.Pointer = parseFieldPointer(d[4:7])
			}
		case descStreamCommands:
			if dlen != 4 {
				return s, fmt.Errorf("sense data: stream commands descriptor at byte %d: additional length %d, want 2", off, dlen-2)
			}
			s.Filemark = d[3]&0x80 != 0
			s.EOM = d[3]&0x40 != 0
			s.ILI = d[3]&0x20 != 0
		}
		off += dlen
	}
	return s, nil
}

// parseFieldPointer decodes the 3-byte sense-key-specific field with SKSV set.
func parseFieldPointer(p []byte) FieldPointer {
	fp := FieldPointer{
		Valid: true,
		CDB:   p[0]&0x40 != 0,
		Field: binary.BigEndian.Uint16(p[1:3]),
	}
	if p[0]&0x08 != 0 {
		fp.BitValid = true
		fp.Bit = p[0] & 0x07
	}
	return fp
}
