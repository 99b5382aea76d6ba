package cartridge

import (
	"encoding/binary"
	"errors"
	"fmt"
	"hash/crc32"

	"github.com/vscsid/vscsid/tape"
)

// On-disk layout. FORMAT.md is the byte-exact description; the constants
// and the encode/decode functions in this file are its only implementation.
// All integers are little-endian.

const (
	slotSize       = 32 << 10 // each of the two superblock slots
	slotFixed      = 512      // fixed part of a slot; attributes follow
	slotCRCOff     = 508      // CRC-32C of [0,508) and of the attribute area
	dataStart      = 2 * slotSize
	partEntryOff   = 160
	partEntrySize  = 80
	maxPartitions  = 4
	headerMagic    = "VSCSITAP"
	formatVersion  = 2 // what this program writes when a record needs it; it reads 1 and 2
	barcodeFieldSz = 32

	recHeaderSize = 64
	recMagic      = 0x43455256 // "VREC" as little-endian bytes
	recCRCOff     = 60
	// encPrefixSize is the least an encoded record's data starts with:
	// the logical length (tape.PrefixSize; format version 2).
	encPrefixSize = tape.PrefixSize
	// maxDataLen is the longest record data: a block of MaxBlockLen
	// encoded with the most overhead.
	maxDataLen = MaxBlockLen + tape.MaxEncodingOverhead

	// MaxBlockLen is the largest block the image stores: the largest
	// transfer length of a variable-block READ/WRITE(6) (SSC-5 7.2, 24-bit
	// field), which is also the largest SIMH standard record.
	MaxBlockLen = 1<<24 - 1
)

// Record types on disk. 1..3 equal tape.Kind by choice, not by dependency.
const (
	recBlock    uint8 = 1
	recFilemark uint8 = 2
	recSetmark  uint8 = 3
	recEOD      uint8 = 4 // end-of-data marker: not an object, ends the chain
)

// Record encodings (header byte 6, format version 2) are the tape
// package's encoding flags (tape.EncCompressed, tape.EncEncrypted): an
// encoded block's data is tape.Codec's, prefix first.
const knownEnc = tape.EncKnown

// Superblock flags.
const (
	flagWriteProtected = 1 << 0
	flagWORM           = 1 << 1
	flagEncrypted      = 1 << 2 // version 2: encrypted blocks written since the format
	knownFlags         = flagWriteProtected | flagWORM | flagEncrypted
)

var castagnoli = crc32.MakeTable(crc32.Castagnoli)

// recHeader is the decoded 64-byte header in front of every record.
type recHeader struct {
	typ     uint8
	part    uint8
	length  uint32 // data bytes following the header
	prevLen uint32 // total size of the previous record in the partition, 0 at BOP
	obj     uint64 // logical object number of this record in its partition
	file    uint64 // filemarks before this record in its partition
	set     uint64 // setmarks before this record in its partition
	id      uint64 // random identity of this record
	prev    uint64 // id of the previous record (or the partition's BOP id)
	dataCRC uint32 // CRC-32C of the data bytes
	enc     uint8  // encoding flags (enc*): 0 for a block stored as written
	// logical is the block's length as the host wrote it: length for a
	// plain block, the encoding prefix's value for an encoded one.
	logical uint32
}

func (h *recHeader) size() int64 { return recHeaderSize + int64(h.length) }

// put encodes h into b[:64] and stamps the header CRC.
func (h *recHeader) put(b []byte) {
	_ = b[recHeaderSize-1]
	le := binary.LittleEndian
	le.PutUint32(b[0:], recMagic)
	b[4] = h.typ
	b[5] = h.part
	b[6], b[7] = h.enc, 0
	le.PutUint32(b[8:], h.length)
	le.PutUint32(b[12:], h.prevLen)
	le.PutUint64(b[16:], h.obj)
	le.PutUint64(b[24:], h.file)
	le.PutUint64(b[32:], h.set)
	le.PutUint64(b[40:], h.id)
	le.PutUint64(b[48:], h.prev)
	le.PutUint32(b[56:], h.dataCRC)
	le.PutUint32(b[60:], crc32.Checksum(b[:recCRCOff], castagnoli))
}

// errBadHeader is returned by parse; it never leaves the package unwrapped.
var errBadHeader = errors.New("bad record header")

// parse decodes b[:64] and, for an encoded block, the logical length from
// the encoding prefix in b[64:68] (b is then at least that long; zeros
// where the file ended). It checks what a header can check about itself
// (magic, CRC, type, encoding, reserved byte, length bounds); the caller
// checks that it is the header it expects at that position (chain,
// numbering).
func (h *recHeader) parse(b []byte) error {
	if len(b) < recHeaderSize {
		return errBadHeader
	}
	le := binary.LittleEndian
	if le.Uint32(b[0:]) != recMagic {
		return errBadHeader
	}
	if le.Uint32(b[60:]) != crc32.Checksum(b[:recCRCOff], castagnoli) {
		return errBadHeader
	}
	if b[6]&^knownEnc != 0 || b[7] != 0 {
		return errBadHeader
	}
	h.enc = b[6]
	h.typ = b[4]
	h.part = b[5]
	h.length = le.Uint32(b[8:])
	h.prevLen = le.Uint32(b[12:])
	h.obj = le.Uint64(b[16:])
	h.file = le.Uint64(b[24:])
	h.set = le.Uint64(b[32:])
	h.id = le.Uint64(b[40:])
	h.prev = le.Uint64(b[48:])
	h.dataCRC = le.Uint32(b[56:])
	switch h.typ {
	case recBlock:
		if h.length == 0 || h.length > maxDataLen || h.enc == 0 && h.length > MaxBlockLen {
			return errBadHeader
		}
		h.logical = h.length
		if h.enc != 0 {
			if len(b) < recHeaderSize+encPrefixSize || h.length <= encPrefixSize {
				return errBadHeader
			}
			h.logical = le.Uint32(b[recHeaderSize:])
			if h.logical == 0 || h.logical > MaxBlockLen {
				return errBadHeader
			}
		}
	case recFilemark, recSetmark, recEOD:
		if h.length != 0 || h.enc != 0 {
			return errBadHeader
		}
		h.logical = 0
	default:
		return errBadHeader
	}
	if h.prevLen != 0 && (h.prevLen < recHeaderSize || h.prevLen > recHeaderSize+maxDataLen) {
		return errBadHeader
	}
	return nil
}

// partEntry is one row of the superblock's partition table: the region of
// the file that holds the partition and its state at the last sync point.
type partEntry struct {
	start    int64  // file offset of the partition's region
	capacity int64  // region size = capacity in bytes (headers included)
	ew       int64  // early-warning size
	bop      uint64 // prev id of the first record
	end      int64  // synced end of data, relative to start (= bytes used)
	objects  uint64 // objects before the synced end
	files    uint64
	sets     uint64
	lastID   uint64 // id of the record before the synced end (bop when empty)
	lastLen  uint32 // its size (0 when empty)
}

// superblock is the decoded content of a slot.
type superblock struct {
	version      uint16 // 1 until a record needs version 2 (an encoded block)
	seq          uint64 // update counter: the valid slot with the higher seq wins
	flags        uint32
	serial       uint64
	created      int64 // unix seconds
	capacity     int64 // native capacity: what Format may divide
	earlyWarning int64
	loadCount    uint64
	formatCount  uint64
	vcr          uint64 // volume change reference
	density      uint8
	parts        []partEntry
	barcode      string
	mam          []byte // encoded attribute area
}

// maxMAMArea bounds the encoded attribute area so a slot always fits.
const maxMAMArea = slotSize - slotFixed

// marshal encodes sb into b (len >= slotFixed+len(mam)) and returns the
// bytes to write.
func (sb *superblock) marshal(b []byte) []byte {
	n := slotFixed + len(sb.mam)
	b = b[:n]
	clear(b)
	le := binary.LittleEndian
	copy(b[0:8], headerMagic)
	le.PutUint16(b[8:], sb.version)
	le.PutUint16(b[10:], slotFixed)
	le.PutUint32(b[12:], sb.flags)
	le.PutUint64(b[16:], sb.seq)
	le.PutUint64(b[24:], sb.serial)
	le.PutUint64(b[32:], uint64(sb.created))
	le.PutUint64(b[40:], uint64(sb.capacity))
	le.PutUint64(b[48:], uint64(sb.earlyWarning))
	le.PutUint64(b[56:], sb.loadCount)
	le.PutUint64(b[64:], sb.formatCount)
	le.PutUint64(b[72:], sb.vcr)
	b[80] = sb.density
	b[81] = uint8(len(sb.parts))
	le.PutUint32(b[84:], uint32(len(sb.mam)))
	bc := b[88 : 88+barcodeFieldSz]
	for i := range bc {
		bc[i] = ' '
	}
	copy(bc, sb.barcode)
	for i, p := range sb.parts {
		e := b[partEntryOff+i*partEntrySize:]
		le.PutUint64(e[0:], uint64(p.start))
		le.PutUint64(e[8:], uint64(p.capacity))
		le.PutUint64(e[16:], uint64(p.ew))
		le.PutUint64(e[24:], p.bop)
		le.PutUint64(e[32:], uint64(p.end))
		le.PutUint64(e[40:], p.objects)
		le.PutUint64(e[48:], p.files)
		le.PutUint64(e[56:], p.sets)
		le.PutUint64(e[64:], p.lastID)
		le.PutUint32(e[72:], p.lastLen)
	}
	copy(b[slotFixed:], sb.mam)
	crc := crc32.Checksum(b[:slotCRCOff], castagnoli)
	crc = crc32.Update(crc, castagnoli, b[slotFixed:n])
	le.PutUint32(b[slotCRCOff:], crc)
	return b
}

// unmarshalSuperblock decodes and validates one slot. b holds the whole
// slot (slotSize bytes, or fewer if the file is shorter).
func unmarshalSuperblock(b []byte) (*superblock, error) {
	if len(b) < slotFixed {
		return nil, errors.New("slot truncated")
	}
	le := binary.LittleEndian
	if string(b[0:8]) != headerMagic {
		return nil, errors.New("bad magic")
	}
	version := le.Uint16(b[8:])
	if version < 1 || version > formatVersion {
		return nil, fmt.Errorf("unsupported format version %d (this program reads versions 1 to %d)", version, formatVersion)
	}
	if le.Uint16(b[10:]) != slotFixed {
		return nil, errors.New("bad header length")
	}
	mamLen := le.Uint32(b[84:])
	if mamLen > maxMAMArea || int(slotFixed+mamLen) > len(b) {
		return nil, errors.New("bad attribute area length")
	}
	crc := crc32.Checksum(b[:slotCRCOff], castagnoli)
	crc = crc32.Update(crc, castagnoli, b[slotFixed:slotFixed+mamLen])
	if crc != le.Uint32(b[slotCRCOff:]) {
		return nil, errors.New("checksum mismatch")
	}
	sb := &superblock{
		version:      version,
		flags:        le.Uint32(b[12:]),
		seq:          le.Uint64(b[16:]),
		serial:       le.Uint64(b[24:]),
		created:      int64(le.Uint64(b[32:])),
		capacity:     int64(le.Uint64(b[40:])),
		earlyWarning: int64(le.Uint64(b[48:])),
		loadCount:    le.Uint64(b[56:]),
		formatCount:  le.Uint64(b[64:]),
		vcr:          le.Uint64(b[72:]),
		density:      b[80],
	}
	if sb.flags&^knownFlags != 0 {
		return nil, fmt.Errorf("unknown flags %#x", sb.flags)
	}
	n := int(b[81])
	if n < 1 || n > maxPartitions {
		return nil, fmt.Errorf("bad partition count %d", n)
	}
	if sb.capacity <= 0 || sb.capacity > maxCapacity || sb.earlyWarning < 0 || sb.earlyWarning > sb.capacity {
		return nil, errors.New("bad capacity")
	}
	bc := b[88 : 88+barcodeFieldSz]
	end := len(bc)
	for end > 0 && bc[end-1] == ' ' {
		end--
	}
	sb.barcode = string(bc[:end])
	sb.parts = make([]partEntry, n)
	for i := range sb.parts {
		e := b[partEntryOff+i*partEntrySize:]
		p := partEntry{
			start:    int64(le.Uint64(e[0:])),
			capacity: int64(le.Uint64(e[8:])),
			ew:       int64(le.Uint64(e[16:])),
			bop:      le.Uint64(e[24:]),
			end:      int64(le.Uint64(e[32:])),
			objects:  le.Uint64(e[40:]),
			files:    le.Uint64(e[48:]),
			sets:     le.Uint64(e[56:]),
			lastID:   le.Uint64(e[64:]),
			lastLen:  le.Uint32(e[72:]),
		}
		if err := p.validate(); err != nil {
			return nil, fmt.Errorf("partition %d: %w", i, err)
		}
		sb.parts[i] = p
	}
	if err := checkLayout(sb.parts, sb.capacity); err != nil {
		return nil, err
	}
	sb.mam = append([]byte(nil), b[slotFixed:slotFixed+mamLen]...)
	if _, err := decodeMAM(sb.mam); err != nil {
		return nil, err
	}
	return sb, nil
}

// maxCapacity bounds capacities so that offsets never overflow int64.
const maxCapacity = 1 << 60

func (p *partEntry) validate() error {
	switch {
	case p.start < dataStart || p.start > maxCapacity:
		return errors.New("bad region start")
	case p.capacity < recHeaderSize || p.capacity > maxCapacity:
		return errors.New("bad capacity")
	case p.ew < 0 || p.ew > p.capacity:
		return errors.New("bad early warning")
	case p.end < 0 || p.end > p.capacity:
		return errors.New("bad end of data")
	case p.objects < p.files || p.objects-p.files < p.sets:
		return errors.New("bad object counts")
	case p.objects > uint64(p.end)/recHeaderSize:
		return errors.New("bad object count")
	case (p.end == 0) != (p.objects == 0):
		return errors.New("bad end of data")
	case p.end == 0 && (p.lastLen != 0 || p.lastID != p.bop):
		return errors.New("bad empty partition")
	case p.end > 0 && (p.lastLen < recHeaderSize || int64(p.lastLen) > p.end):
		return errors.New("bad last record")
	}
	return nil
}

// checkLayout checks that the partition regions do not overlap and that
// their total does not exceed the native capacity.
func checkLayout(parts []partEntry, capacity int64) error {
	var total int64
	for i, p := range parts {
		total += p.capacity
		for j := range i {
			q := parts[j]
			if p.start < q.start+q.capacity && q.start < p.start+p.capacity {
				return fmt.Errorf("partitions %d and %d overlap", j, i)
			}
		}
	}
	if total > capacity {
		return errors.New("partitions exceed the capacity")
	}
	return nil
}
