package cartridge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
)

// Medium auxiliary memory (SPC-5 7.4 READ/WRITE ATTRIBUTE).
//
// Host attributes are stored in the superblock's attribute area and written
// durably (superblock + fdatasync) by SetAttribute. Device and medium
// attributes are computed from the superblock when asked for. Attribute
// values are the raw value bytes; the drive adds the SPC attribute header
// (identifier, READ ONLY and FORMAT, length).

// Attribute identifiers served or stored (SPC-5 table 346..349).
const (
	AttrRemainingCapacity   uint16 = 0x0000 // computed by the drive from Used/Capacity
	AttrMaximumCapacity     uint16 = 0x0001 // computed by the drive
	AttrLoadCount           uint16 = 0x0003
	AttrMAMSpaceRemaining   uint16 = 0x0004
	AttrFormattedDensity    uint16 = 0x0006
	AttrInitializationCount uint16 = 0x0007
	AttrVolumeChangeRef     uint16 = 0x0009
	AttrMediumManufacturer  uint16 = 0x0400
	AttrMediumSerial        uint16 = 0x0401
	AttrMediumLength        uint16 = 0x0402
	AttrMediumWidth         uint16 = 0x0403
	AttrAssigningOrg        uint16 = 0x0404
	AttrMediumDensity       uint16 = 0x0405
	AttrManufactureDate     uint16 = 0x0406
	AttrMAMCapacity         uint16 = 0x0407
	AttrMediumType          uint16 = 0x0408
	AttrMediumTypeInfo      uint16 = 0x0409
	AttrApplicationVendor   uint16 = 0x0800
	AttrUserMediumTextLabel uint16 = 0x0803
	AttrBarcode             uint16 = 0x0806
	AttrVolumeCoherency     uint16 = 0x080C
	AttrVolumeLock          uint16 = 0x1623 // vendor specific; written by LTFS
)

// MAMCapacity is the size of the emulated medium auxiliary memory reported
// in MAM CAPACITY. Host attributes may use all of it but mamReserved, each
// accounted as its SPC size (5-byte attribute header + value).
const (
	MAMCapacity = 16384
	mamReserved = 1024
	hostMAMSize = MAMCapacity - mamReserved
)

// Nominal physical properties reported as medium attributes.
const (
	mediumManufacturer = "VSCSID"
	assigningOrg       = "LTO-CVE"
	mediumLengthMeters = 960
	mediumWidthTenthMM = 127
)

// Errors of SetAttribute. Each also wraps the *scsi.Error the drive should
// report (scsi.ResponseFor finds it with errors.As).
var (
	ErrAttributeReadOnly = errors.New("cartridge: attribute is read-only")
	ErrAttributeLength   = errors.New("cartridge: attribute value too long")
	ErrMAMFull           = errors.New("cartridge: medium auxiliary memory full")

	senseInvalidParamList = scsi.NewError(scsi.IllegalRequest, scsi.InvalidFieldInParameterList)
	// SPC-5: 55h/06h AUXILIARY MEMORY OUT OF SPACE.
	senseMAMFull = scsi.NewError(scsi.IllegalRequest, scsi.ASC(0x5506))
)

// HostWritable reports whether the host may write attribute id: the host
// type range 0800h–0BFFh and vendor-specific host range 1800h–1BFFh of SPC,
// plus 1400h–17FFh, which SPC lists as vendor-specific medium attributes
// but which LTO/DLT/T10000 drives and LTFS (volume lock, 1623h) use as host
// attributes.
func HostWritable(id uint16) bool {
	return id >= 0x0800 && id <= 0x0BFF || id >= 0x1400 && id <= 0x1BFF
}

// hostAttrMax gives the defined length of the fixed-size standard host
// attributes (SPC-5 table 349); values may be shorter, never longer.
var hostAttrMax = map[uint16]int{
	0x0800: 8, 0x0801: 32, 0x0802: 8, 0x0803: 160, 0x0804: 12, 0x0805: 1,
	0x0806: 32, 0x0807: 80, 0x0808: 160, 0x0809: 16, 0x080A: 1, 0x080B: 16,
}

// mamKey identifies a stored host attribute: the partition it belongs to
// (0 for the volume-wide attributes) and its identifier.
type mamKey struct {
	part uint8
	id   uint16
}

// PartitionAttribute reports whether attribute id has a value per partition
// rather than one per volume. LTFS keeps one VOLUME COHERENCY INFORMATION
// per partition (it describes the last index written to that partition).
func PartitionAttribute(id uint16) bool { return id == AttrVolumeCoherency }

// decodeMAM parses the attribute area: {partition uint8, id uint16,
// length uint16, value}... in increasing (partition, id) order, no
// duplicates, no empty values.
func decodeMAM(b []byte) (map[mamKey][]byte, error) {
	m := make(map[mamKey][]byte)
	prev := -1
	for len(b) > 0 {
		if len(b) < 5 {
			return nil, errors.New("attribute area truncated")
		}
		k := mamKey{part: b[0], id: binary.LittleEndian.Uint16(b[1:])}
		n := int(binary.LittleEndian.Uint16(b[3:]))
		order := int(k.part)<<16 | int(k.id)
		if order <= prev || n == 0 || len(b) < 5+n || !HostWritable(k.id) ||
			k.part >= maxPartitions || k.part != 0 && !PartitionAttribute(k.id) {
			return nil, fmt.Errorf("bad attribute %#04x in attribute area", k.id)
		}
		m[k] = append([]byte(nil), b[5:5+n]...)
		prev = order
		b = b[5+n:]
	}
	return m, nil
}

func encodeMAM(m map[mamKey][]byte) []byte {
	keys := make([]mamKey, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	slices.SortFunc(keys, func(a, b mamKey) int {
		return (int(a.part)<<16 | int(a.id)) - (int(b.part)<<16 | int(b.id))
	})
	var b []byte
	for _, k := range keys {
		v := m[k]
		b = append(b, k.part)
		b = binary.LittleEndian.AppendUint16(b, k.id)
		b = binary.LittleEndian.AppendUint16(b, uint16(len(v)))
		b = append(b, v...)
	}
	return b
}

func hostMAMUsed(m map[mamKey][]byte) int {
	n := 0
	for _, v := range m {
		n += 5 + len(v)
	}
	return n
}

func keyFor(part int, id uint16) mamKey {
	if !PartitionAttribute(id) {
		part = 0
	}
	return mamKey{part: uint8(part), id: id}
}

// Attribute returns the value of MAM attribute id for partition 0 (see
// AttributeIn), or ok false when the medium has no such attribute.
func (m *Image) Attribute(id uint16) ([]byte, bool) { return m.AttributeIn(0, id) }

// SetAttribute stores host attribute id for partition 0 (see SetAttributeIn).
func (m *Image) SetAttribute(id uint16, val []byte) error { return m.SetAttributeIn(0, id, val) }

// AttributeIn returns the value of MAM attribute id as READ ATTRIBUTE with
// PARTITION NUMBER part reports it, or ok false when the medium has no such
// attribute (or no such partition). Only PartitionAttribute ids differ by
// partition. Device attributes 0000h and 0001h (remaining and maximum
// capacity in partition) are left to the drive, which has Used and
// Capacity. The returned slice is the caller's.
func (m *Image) AttributeIn(part int, id uint16) ([]byte, bool) {
	if part < 0 || part >= len(m.parts) {
		return nil, false
	}
	if v, ok := m.mam[keyFor(part, id)]; ok {
		return slices.Clone(v), true
	}
	be := binary.BigEndian // attribute values are big-endian (SPC-5 7.4.2)
	switch id {
	case AttrLoadCount:
		return be.AppendUint64(nil, m.sb.loadCount), true
	case AttrMAMSpaceRemaining:
		return be.AppendUint64(nil, uint64(hostMAMSize-hostMAMUsed(m.mam))), true
	case AttrFormattedDensity, AttrMediumDensity:
		return []byte{m.sb.density}, true
	case AttrInitializationCount:
		return be.AppendUint16(nil, uint16(min(m.sb.formatCount, 0xFFFF))), true
	case AttrVolumeChangeRef:
		// A host that reads the reference (LTFS stores it in its volume
		// coherency information) must see it change with the next write.
		m.vcrFresh = false
		return be.AppendUint32(nil, uint32(m.sb.vcr)), true
	case AttrMediumManufacturer:
		return ascii(mediumManufacturer, 8), true
	case AttrMediumSerial:
		return ascii(fmt.Sprintf("%016X", m.sb.serial), 32), true
	case AttrMediumLength:
		return be.AppendUint32(nil, mediumLengthMeters), true
	case AttrMediumWidth:
		return be.AppendUint32(nil, mediumWidthTenthMM), true
	case AttrAssigningOrg:
		return ascii(assigningOrg, 8), true
	case AttrManufactureDate:
		return ascii(time.Unix(m.sb.created, 0).UTC().Format("20060102"), 8), true
	case AttrMAMCapacity:
		return be.AppendUint64(nil, MAMCapacity), true
	case AttrMediumType:
		if m.sb.flags&flagWORM != 0 {
			return []byte{0x80}, true // write-once medium
		}
		return []byte{0x00}, true // data medium
	case AttrMediumTypeInfo:
		return []byte{0, 0}, true
	case AttrBarcode:
		return ascii(m.sb.barcode, 32), true
	}
	return nil, false
}

// computedAttrs are the attributes AttributeIn always answers.
var computedAttrs = []uint16{
	AttrLoadCount, AttrMAMSpaceRemaining, AttrFormattedDensity,
	AttrInitializationCount, AttrVolumeChangeRef, AttrMediumManufacturer,
	AttrMediumSerial, AttrMediumLength, AttrMediumWidth, AttrAssigningOrg,
	AttrMediumDensity, AttrManufactureDate, AttrMAMCapacity, AttrMediumType,
	AttrMediumTypeInfo, AttrBarcode,
}

// AttributeIDs returns the identifiers AttributeIn answers for partition
// part, in increasing order (for the ATTRIBUTE LIST service action).
func (m *Image) AttributeIDs(part int) []uint16 {
	ids := slices.Clone(computedAttrs)
	for k := range m.mam {
		if k == keyFor(part, k.id) && !slices.Contains(ids, k.id) {
			ids = append(ids, k.id)
		}
	}
	slices.Sort(ids)
	return ids
}

// SetAttributeIn stores host attribute id (for partition part if
// PartitionAttribute(id), else for the volume); an empty value deletes it
// (SPC-5 6.40). The change is durable when SetAttributeIn returns.
func (m *Image) SetAttributeIn(part int, id uint16, val []byte) error {
	if err := m.checkOpen(); err != nil {
		return err
	}
	if part < 0 || part >= len(m.parts) {
		return tape.ErrNoPartition
	}
	if m.writeProtected() {
		// IBM and HP refuse WRITE ATTRIBUTE on a write-protected cartridge
		// with DATA PROTECT 27/00 (T10 07-382).
		return tape.ErrWriteProtected
	}
	if !HostWritable(id) {
		return fmt.Errorf("%w: %#04x: %w", ErrAttributeReadOnly, id, senseInvalidParamList)
	}
	if limit, ok := hostAttrMax[id]; ok && len(val) > limit || len(val) > 0xFFFF {
		return fmt.Errorf("%w: %#04x has %d bytes: %w", ErrAttributeLength, id, len(val), senseInvalidParamList)
	}
	k := keyFor(part, id)
	old, had := m.mam[k]
	restore := func() {
		if had {
			m.mam[k] = old
		} else {
			delete(m.mam, k)
		}
	}
	if len(val) == 0 {
		if !had {
			return nil
		}
		delete(m.mam, k)
	} else {
		m.mam[k] = slices.Clone(val)
		if hostMAMUsed(m.mam) > hostMAMSize {
			restore()
			return fmt.Errorf("%w: %#04x: %w", ErrMAMFull, id, senseMAMFull)
		}
	}
	if err := m.persistSuperblock(); err != nil {
		restore()
		return err
	}
	return nil
}

// ascii returns s left-aligned and space-padded to n bytes (SPC ASCII
// attribute format), truncated if longer.
func ascii(s string, n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = ' '
	}
	copy(b, s)
	return b
}
