package tape

import (
	"encoding/binary"
	"slices"

	"github.com/vscsid/vscsid/scsi"
)

// Medium auxiliary memory (MAM) attributes, SPC-5 7.4: READ ATTRIBUTE and
// WRITE ATTRIBUTE.
//
// Attributes 0000h-03FFh are device attributes the drive computes (read
// only); 0400h-07FFh medium attributes (read only: the cartridge's, else
// values derived from it); 0800h-0BFFh host attributes and 1400h-17FFh
// vendor-specific host attributes are stored on the cartridge through
// Medium.Attribute/SetAttribute.
//
// VOLUME COHERENCY INFORMATION (080Ch) is kept per partition, as LTFS
// writes one for each partition; the Medium interface has one value per
// attribute, so the drive stores 080Ch as a sequence of records
// [partition (1 byte), length (2 bytes), value] and reads back the record
// of the partition the CDB names.

// Attribute identifiers.
const (
	attrRemainingCapacity     = 0x0000
	attrMaximumCapacity       = 0x0001
	attrTapeAlertFlags        = 0x0002
	attrLoadCount             = 0x0003
	attrMAMSpaceRemaining     = 0x0004
	attrAssigningOrganization = 0x0005
	attrFormattedDensityCode  = 0x0006
	attrVolumeChangeReference = 0x0009
	attrMediumManufacturer    = 0x0400
	attrMediumSerialNumber    = 0x0401
	attrMediumDensityCode     = 0x0405
	attrMediumType            = 0x0408
	attrVolumeCoherency       = 0x080c

	attrFormatBinary = 0x00
	attrFormatASCII  = 0x01
	attrFormatText   = 0x02

	mamCapacity = 16 << 10 // nominal MAM size (LTO cartridge memory is 4-16 KiB)
)

// hostAttrs are the standard host attributes with their format and maximum
// length (SPC-5 7.4.2.4, table "Host type attributes").
var hostAttrs = map[uint16]struct {
	format byte
	max    int
}{
	0x0800: {attrFormatASCII, 8},    // APPLICATION VENDOR
	0x0801: {attrFormatASCII, 32},   // APPLICATION NAME
	0x0802: {attrFormatASCII, 8},    // APPLICATION VERSION
	0x0803: {attrFormatText, 160},   // USER MEDIUM TEXT LABEL
	0x0804: {attrFormatASCII, 12},   // DATE AND TIME LAST WRITTEN
	0x0805: {attrFormatBinary, 1},   // TEXT LOCALIZATION IDENTIFIER
	0x0806: {attrFormatASCII, 32},   // BARCODE
	0x0807: {attrFormatText, 80},    // OWNING HOST TEXTUAL NAME
	0x0808: {attrFormatText, 160},   // MEDIA POOL
	0x0809: {attrFormatASCII, 16},   // PARTITION USER TEXT LABEL
	0x080a: {attrFormatBinary, 1},   // LOAD/UNLOAD AT PARTITION
	0x080b: {attrFormatASCII, 16},   // APPLICATION FORMAT VERSION
	0x080c: {attrFormatBinary, 256}, // VOLUME COHERENCY INFORMATION
	0x0820: {attrFormatBinary, 36},  // MEDIUM GLOBALLY UNIQUE IDENTIFIER
	0x0821: {attrFormatBinary, 36},  // MEDIA POOL GLOBALLY UNIQUE IDENTIFIER
}

// maxHostAttr is the length limit of other host and vendor attributes.
const maxHostAttr = 1024

func hostWritable(id uint16) bool {
	return id >= 0x0800 && id <= 0x0bff || id >= 0x1400 && id <= 0x17ff
}

// attrFormat is the FORMAT of attribute id.
func attrFormat(id uint16) byte {
	switch id {
	case attrAssigningOrganization, attrMediumManufacturer, attrMediumSerialNumber, 0x0406:
		return attrFormatASCII
	}
	if h, ok := hostAttrs[id]; ok {
		return h.format
	}
	return attrFormatBinary
}

// attribute returns the value of attribute id for partition part of the
// loaded cartridge, ok false when it is not available.
func (d *Drive) attribute(id uint16, part int) ([]byte, bool) {
	u64 := func(v uint64) []byte { return binary.BigEndian.AppendUint64(nil, v) }
	switch id {
	case attrRemainingCapacity:
		r, _ := d.partitionMiB(part)
		return u64(r), true
	case attrMaximumCapacity:
		_, m := d.partitionMiB(part)
		return u64(m), true
	case attrTapeAlertFlags:
		return u64(d.alerts), true
	case attrMAMSpaceRemaining:
		return u64(mamCapacity / 2), true
	case attrAssigningOrganization:
		org := make([]byte, 8)
		den := d.pers.density(d.mediumDensity())
		if den == nil {
			den = d.pers.DefaultDensity()
		}
		putASCII(org, den.Organization)
		return org, true
	case attrFormattedDensityCode, attrMediumDensityCode:
		return []byte{d.mediumDensity()}, true
	case attrVolumeChangeReference:
		if v, ok := d.med.Attribute(id); ok && len(v) > 0 {
			return v, true
		}
		return []byte{0, 0, 0, 0}, true
	case attrVolumeCoherency:
		blob, _ := d.med.Attribute(id)
		return vciGet(blob, part)
	}
	if v, ok := d.med.Attribute(id); ok && len(v) > 0 && (id == attrLoadCount || id >= 0x0400 && id <= 0x07ff || hostWritable(id)) {
		return v, true
	}
	switch id {
	case attrMediumManufacturer:
		v := make([]byte, 8)
		putASCII(v, "VSCSI")
		return v, true
	case attrMediumSerialNumber:
		v := make([]byte, 32)
		putASCII(v, d.barcode)
		return v, true
	case attrMediumType:
		if d.info.WORM {
			return []byte{0x80}, true
		}
		return []byte{0x00}, true
	}
	return nil, false
}

// computedAttrs are the device and medium attributes always available.
var computedAttrs = []uint16{
	attrRemainingCapacity, attrMaximumCapacity, attrTapeAlertFlags, attrMAMSpaceRemaining,
	attrAssigningOrganization, attrFormattedDensityCode, attrVolumeChangeReference,
	attrMediumManufacturer, attrMediumSerialNumber, attrMediumDensityCode, attrMediumType,
}

// availableAttrs lists the attributes available for partition part in
// ascending order: the computed ones and whatever the cartridge holds in
// the medium, host and vendor ranges (probed one identifier at a time: the
// Medium interface has no listing).
func (d *Drive) availableAttrs(part int) []uint16 {
	ids := slices.Clone(computedAttrs)
	probe := func(lo, hi uint16) {
		for id := lo; id <= hi; id++ {
			if slices.Contains(computedAttrs, id) {
				continue
			}
			if _, ok := d.attribute(id, part); ok {
				ids = append(ids, id)
			}
		}
	}
	probe(0x0003, 0x0003) // LOAD COUNT, if the cartridge keeps one
	probe(0x0400, 0x07ff)
	probe(0x0800, 0x0bff)
	probe(0x1400, 0x17ff)
	slices.Sort(ids)
	return ids
}

// supportedAttrs lists the attributes the drive supports (SUPPORTED
// ATTRIBUTES service action): computed, standard host attributes.
func supportedAttrs() []uint16 {
	ids := slices.Clone(computedAttrs)
	for id := range hostAttrs {
		ids = append(ids, id)
	}
	slices.Sort(ids)
	return ids
}

// READ ATTRIBUTE service actions (SPC-5 6.21).
const (
	raValues        = 0x00
	raList          = 0x01
	raVolumeList    = 0x02
	raPartitionList = 0x03
	raSupported     = 0x05
)

// readAttribute is READ ATTRIBUTE (SPC-5 6.21): byte 1 SERVICE ACTION, byte
// 5 LOGICAL VOLUME NUMBER (0), byte 7 PARTITION NUMBER, bytes 8-9 FIRST
// ATTRIBUTE IDENTIFIER, bytes 10-13 ALLOCATION LENGTH. ATTRIBUTE VALUES
// returns the attributes from the first one on; if that one is not
// available the command fails with 24/00 at byte 8 (what LTO drives do and
// LTFS treats as "not set").
func (d *Drive) readAttribute(cmd *scsi.Command) scsi.Response {
	c := cmd.CDB
	sa := c.Byte(1) & 0x1f
	if c.Byte(5) != 0 {
		return check(scsi.InvalidFieldSense(5, -1))
	}
	part := int(c.Byte(7))
	if part >= d.info.Partitions {
		return check(scsi.InvalidFieldSense(7, -1))
	}
	first := c.Uint16(8)
	b := d.buf[:0]
	switch sa {
	case raValues:
		b = append(b, 0, 0, 0, 0)
		found := false
		for _, id := range d.availableAttrs(part) {
			if id < first {
				continue
			}
			found = found || id == first
			v, _ := d.attribute(id, part)
			flags := attrFormat(id)
			if id < 0x0800 {
				flags |= 0x80 // READ ONLY
			}
			b = binary.BigEndian.AppendUint16(b, id)
			b = append(b, flags)
			b = binary.BigEndian.AppendUint16(b, uint16(len(v)))
			b = append(b, v...)
		}
		if !found {
			return check(scsi.InvalidFieldSense(8, -1))
		}
		binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	case raList, raSupported:
		ids := supportedAttrs()
		if sa == raList {
			ids = d.availableAttrs(part)
		}
		b = append(b, 0, 0, 0, 0)
		for _, id := range ids {
			if id >= first {
				b = binary.BigEndian.AppendUint16(b, id)
			}
		}
		binary.BigEndian.PutUint32(b, uint32(len(b)-4))
	case raVolumeList:
		b = append(b, 0, 2, 0, 1)
	case raPartitionList:
		b = append(b, 0, 2, 0, byte(d.info.Partitions))
	default:
		return check(scsi.InvalidFieldSense(1, 4))
	}
	d.buf = b
	scsi.WriteParameterData(cmd.Data, b, int(min(c.Uint32(10), 1<<30)))
	return scsi.Good
}

// writeAttribute is WRITE ATTRIBUTE (SPC-5 6.49): byte 1 WTC (bit 0,
// write-through: every write is), byte 5 LOGICAL VOLUME NUMBER, byte 7
// PARTITION NUMBER, bytes 10-13 PARAMETER LIST LENGTH. The list is a 4-byte
// PARAMETER DATA LENGTH and attributes (identifier, format, length, value;
// length 0 deletes). The whole list is checked before anything is stored:
// a read-only or reserved identifier, or a value longer than the attribute
// allows, is ILLEGAL REQUEST 26/00 pointing at it.
func (d *Drive) writeAttribute(cmd *scsi.Command) scsi.Response {
	c := cmd.CDB
	if c.Byte(5) != 0 {
		return check(scsi.InvalidFieldSense(5, -1))
	}
	part := int(c.Byte(7))
	if part >= d.info.Partitions {
		return check(scsi.InvalidFieldSense(7, -1))
	}
	plen := int(min(c.Uint32(10), 1<<20))
	if plen == 0 {
		return scsi.Good
	}
	if plen < 4 || cmd.Data.Len() < plen {
		return check(scsi.ErrParameterListLen.Sense)
	}
	if d.info.WriteProtected {
		return check(dataProtect(scsi.WriteProtected))
	}
	list := make([]byte, plen)
	if n, _ := cmd.Data.Read(list); n < plen {
		return check(scsi.ErrParameterListLen.Sense)
	}
	end := min(4+int(binary.BigEndian.Uint32(list)), plen)
	type attr struct {
		id  uint16
		val []byte
	}
	var attrs []attr
	for off := 4; off < end; {
		if off+5 > end {
			return check(scsi.ErrParameterListLen.Sense)
		}
		id := binary.BigEndian.Uint16(list[off:])
		n := int(binary.BigEndian.Uint16(list[off+3:]))
		if off+5+n > end {
			return check(scsi.ErrParameterListLen.Sense)
		}
		if !hostWritable(id) {
			return check(scsi.InvalidParameterSense(off, -1))
		}
		limit := maxHostAttr
		if h, ok := hostAttrs[id]; ok {
			limit = h.max
			if list[off+2]&0x03 != h.format {
				return check(scsi.InvalidParameterSense(off+2, 1))
			}
		}
		if n > limit {
			return check(scsi.InvalidParameterSense(off+3, -1))
		}
		attrs = append(attrs, attr{id, list[off+5 : off+5+n]})
		off += 5 + n
	}
	for _, a := range attrs {
		val := a.val
		if a.id == attrVolumeCoherency {
			blob, _ := d.med.Attribute(a.id)
			val = vciPut(blob, part, a.val)
		}
		if err := d.med.SetAttribute(a.id, val); err != nil {
			return d.fault(err, dirWrite)
		}
	}
	return scsi.Good
}

// vciGet extracts partition part's record from the packed VOLUME COHERENCY
// INFORMATION value.
func vciGet(blob []byte, part int) ([]byte, bool) {
	for len(blob) >= 3 {
		p, n := int(blob[0]), int(binary.BigEndian.Uint16(blob[1:]))
		if 3+n > len(blob) {
			return nil, false
		}
		if p == part {
			return blob[3 : 3+n], true
		}
		blob = blob[3+n:]
	}
	return nil, false
}

// vciPut returns the packed value with partition part's record replaced by
// val (removed when val is empty).
func vciPut(blob []byte, part int, val []byte) []byte {
	var out []byte
	for len(blob) >= 3 {
		p, n := int(blob[0]), int(binary.BigEndian.Uint16(blob[1:]))
		if 3+n > len(blob) {
			break
		}
		if p != part {
			out = append(out, blob[:3+n]...)
		}
		blob = blob[3+n:]
	}
	if len(val) > 0 {
		out = append(out, byte(part), byte(len(val)>>8), byte(len(val)))
		out = append(out, val...)
	}
	return out
}
