package tape

import (
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"slices"
	"sync"
)

// MemoryMedium is a cartridge kept in RAM: a Medium for tests and quick
// experiments (memory=1). Its contents last as long as the MemoryLibrary
// that holds it. Block data is stored back to back in one byte slice per
// partition with a small index entry per object, so a write in the middle
// truncates by re-slicing and rewriting a cartridge reuses its memory: once
// a partition has been filled, streaming WRITE and READ do not allocate.
//
// Capacity accounting: every object costs MemoryObjectOverhead bytes (the
// memory its index entry takes) plus its data, so filemarks fill a
// cartridge too and RAM use stays within about twice the capacity whatever
// the initiator writes (a WRITE FILEMARKS count of 16 million, a stream of
// 1-byte blocks). Memory cartridges default to a small capacity.
//
// Like every Medium, it is used by one drive goroutine at a time.
type MemoryMedium struct {
	info MediumInfo
	ew   int64 // early-warning size requested at creation, reapplied by Format
	// native is the capacity at creation, all partitions together: Format
	// lays partitions out in it (as a cartridge image does), so partitions
	// that leave room unused, or SET CAPACITY, do not shrink the medium
	// for good.
	native int64
	parts  []memPart
	cur    int // current partition
	pos    int // object index in the current partition (len(objs) = EOD)
	attrs  map[uint16][]byte
	open   bool
	lib    *MemoryLibrary

	codec   Codec
	key     *Key
	plain   []byte // staging for encoding a block, and for decoding one
	dec     []byte // decoded data of the encoded block at decAt
	decAt   int    // 1 + index of the object dec holds (0: none), in decPart
	decPart int
}

type memPart struct {
	objs []memObj
	data []byte
}

// memObj is one logical object. off is where its data starts (for marks:
// where the next block's data would start), files/sets count the marks
// before it.
type memObj struct {
	kind    Kind
	n       int   // stored data bytes
	logical int   // the block's length as written (n unless encoded)
	enc     uint8 // encoding flags (0: stored as written)
	off     int64
	files   uint64
	sets    uint64
}

// MemoryObjectOverhead is what each logical object costs on a memory
// cartridge besides its data.
const MemoryObjectOverhead = 64

// NewMemoryMedium returns an empty cartridge described by info: Barcode,
// Density, WriteProtected, WORM, and Capacity (one entry per partition) are
// used; EarlyWarning defaults to 1/64 of each partition's capacity when
// absent. Partitions is len(Capacity).
func NewMemoryMedium(info MediumInfo) (*MemoryMedium, error) {
	n := len(info.Capacity)
	if n < 1 || n > 4 {
		return nil, fmt.Errorf("memory medium %s: %d partitions, want 1 to 4", info.Barcode, n)
	}
	info.Capacity = slices.Clone(info.Capacity)
	ew := make([]int64, n)
	for i, c := range info.Capacity {
		if c <= 0 {
			return nil, fmt.Errorf("memory medium %s: partition %d capacity %d", info.Barcode, i, c)
		}
		ew[i] = c / 64
		if i < len(info.EarlyWarning) {
			ew[i] = info.EarlyWarning[i]
		}
		if ew[i] < 0 || ew[i] >= c {
			return nil, fmt.Errorf("memory medium %s: partition %d early warning %d not below capacity %d", info.Barcode, i, ew[i], c)
		}
	}
	info.EarlyWarning = ew
	info.Partitions = n
	var native int64
	for _, c := range info.Capacity {
		native += c
	}
	return &MemoryMedium{info: info, ew: ew[0], native: native, parts: make([]memPart, n), attrs: map[uint16][]byte{}, open: true}, nil
}

var errMemoryClosed error = &ClosedError{Object: "tape: memory medium"}

// Info implements Medium.
func (m *MemoryMedium) Info() MediumInfo {
	i := m.info
	i.Capacity = slices.Clone(i.Capacity)
	i.EarlyWarning = slices.Clone(i.EarlyWarning)
	return i
}

// Used implements Medium: the data bytes in partition part plus
// MemoryObjectOverhead per object.
func (m *MemoryMedium) Used(part int) int64 {
	if part < 0 || part >= len(m.parts) {
		return 0
	}
	p := &m.parts[part]
	return int64(len(p.data)) + int64(len(p.objs))*MemoryObjectOverhead
}

// fits reports whether an object of n data bytes fits at the current
// position (everything after it being discarded).
func (m *MemoryMedium) fits(n int) bool {
	need := m.dataOffset() + int64(n) + int64(m.pos+1)*MemoryObjectOverhead
	return need <= m.info.Capacity[m.cur]
}

// Pos implements Medium.
func (m *MemoryMedium) Pos() Position {
	p := &m.parts[m.cur]
	pos := Position{Partition: m.cur, Object: uint64(m.pos)}
	switch {
	case m.pos < len(p.objs):
		pos.File, pos.Set = p.objs[m.pos].files, p.objs[m.pos].sets
	case m.pos > 0:
		last := &p.objs[m.pos-1]
		pos.File, pos.Set = last.files, last.sets
		switch last.kind {
		case KindFilemark:
			pos.File++
		case KindSetmark:
			pos.Set++
		}
	}
	return pos
}

// Peek implements Medium.
func (m *MemoryMedium) Peek() (Object, error) {
	if !m.open {
		return Object{}, errMemoryClosed
	}
	p := &m.parts[m.cur]
	if m.pos >= len(p.objs) {
		return Object{Kind: KindEOD}, nil
	}
	o := &p.objs[m.pos]
	return o.object(), nil
}

func (o *memObj) object() Object {
	if o.kind != KindBlock {
		return Object{Kind: o.kind}
	}
	return Object{Kind: o.kind, Len: o.logical, Stored: o.n, Encoding: o.enc}
}

// KAD implements Medium.
func (m *MemoryMedium) KAD() (akad, ukad []byte, err error) {
	if !m.open {
		return nil, nil, errMemoryClosed
	}
	p := &m.parts[m.cur]
	if m.pos >= len(p.objs) {
		return nil, nil, nil
	}
	o := &p.objs[m.pos]
	akad, ukad = BlockKAD(p.data[o.off:o.off+int64(o.n)], o.enc)
	return akad, ukad, nil
}

// SetKey implements Medium.
func (m *MemoryMedium) SetKey(k *Key) {
	m.key = k
	m.decAt = 0
}

// ReadAt implements Medium (and io.ReaderAt) over the block at the current
// position.
func (m *MemoryMedium) ReadAt(b []byte, off int64) (int, error) {
	if !m.open {
		return 0, errMemoryClosed
	}
	p := &m.parts[m.cur]
	if m.pos >= len(p.objs) || p.objs[m.pos].kind != KindBlock {
		return 0, errors.New("tape: memory medium: no block at the current position")
	}
	o := &p.objs[m.pos]
	if off < 0 || off > int64(o.logical) {
		return 0, io.EOF
	}
	data := p.data[o.off : o.off+int64(o.n)]
	if o.enc != 0 {
		if m.decAt != m.pos+1 || m.decPart != m.cur {
			// Decode works in place: on a copy, not on the medium.
			m.plain = grow(m.plain, o.n)
			copy(m.plain, data)
			dec, err := m.codec.Decode(m.plain[:o.n], o.enc, m.key)
			if err != nil {
				return 0, err
			}
			m.dec, m.decAt, m.decPart = dec, m.pos+1, m.cur
		}
		data = m.dec
	}
	n := copy(b, data[off:])
	if n < len(b) {
		return n, io.EOF
	}
	return n, nil
}

// Next implements Medium.
func (m *MemoryMedium) Next() error {
	if !m.open {
		return errMemoryClosed
	}
	if m.pos >= len(m.parts[m.cur].objs) {
		return ErrEndOfData
	}
	m.pos++
	return nil
}

// Prev implements Medium.
func (m *MemoryMedium) Prev() (Object, error) {
	if !m.open {
		return Object{}, errMemoryClosed
	}
	if m.pos == 0 {
		return Object{}, ErrBeginningOfPart
	}
	m.pos--
	o := &m.parts[m.cur].objs[m.pos]
	return o.object(), nil
}

// Locate implements Medium.
func (m *MemoryMedium) Locate(part int, obj uint64) error {
	if !m.open {
		return errMemoryClosed
	}
	if part < 0 || part >= len(m.parts) {
		return ErrNoPartition
	}
	m.cur = part
	n := uint64(len(m.parts[part].objs))
	if obj >= n {
		m.pos = int(n)
		return ErrEndOfData
	}
	m.pos = int(obj)
	return nil
}

// truncateAt returns the data offset at which the current position starts.
func (m *MemoryMedium) dataOffset() int64 {
	p := &m.parts[m.cur]
	if m.pos < len(p.objs) {
		return p.objs[m.pos].off
	}
	return int64(len(p.data))
}

// checkWrite applies write protection and WORM to a write of an object at
// the current position.
func (m *MemoryMedium) checkWrite() error {
	switch {
	case !m.open:
		return errMemoryClosed
	case m.info.WriteProtected:
		return ErrWriteProtected
	case m.info.WORM && m.pos < len(m.parts[m.cur].objs):
		return ErrWORMOverwrite
	}
	return nil
}

// append adds an object at the current position, after truncating there.
func (m *MemoryMedium) append(kind Kind, n int) *memObj {
	p := &m.parts[m.cur]
	pos := m.Pos()
	off := m.dataOffset()
	p.objs = p.objs[:m.pos]
	p.data = p.data[:off]
	p.objs = append(p.objs, memObj{kind: kind, n: n, logical: n, off: off, files: pos.File, sets: pos.Set})
	m.decAt = 0
	m.pos++
	return &p.objs[len(p.objs)-1]
}

// WriteBlock implements Medium. It reads exactly n bytes from r. A block
// to compress is staged and compressed first; the stored bytes are kept.
func (m *MemoryMedium) WriteBlock(r io.Reader, n int, enc Encoding) (int, error) {
	if err := m.checkWrite(); err != nil {
		return 0, err
	}
	if n <= 0 {
		return 0, fmt.Errorf("tape: memory medium: block length %d", n)
	}
	if !enc.Compress && enc.Key == nil {
		buf, err := m.reserve(n)
		if err != nil {
			return 0, err
		}
		if _, err := io.ReadFull(r, buf); err != nil {
			// The tail after the position may be overwritten: it is gone,
			// as after a failed write on tape. End of data is here now.
			p := &m.parts[m.cur]
			off := m.dataOffset()
			p.objs, p.data = p.objs[:m.pos], p.data[:off]
			m.decAt = 0
			return 0, fmt.Errorf("tape: memory medium: reading block data: %w", err)
		}
		m.commit(n, n, 0)
		return n, nil
	}
	m.plain = grow(m.plain, n)
	if _, err := io.ReadFull(r, m.plain[:n]); err != nil {
		return 0, fmt.Errorf("tape: memory medium: reading block data: %w", err)
	}
	data, flags := m.codec.Encode(0, m.plain[:n], enc)
	if flags == 0 {
		data = m.plain[:n]
	}
	buf, err := m.reserve(len(data))
	if err != nil {
		return 0, err
	}
	copy(buf, data)
	m.commit(n, len(data), flags)
	return len(data), nil
}

// reserve returns room for n stored bytes at the current position, after
// checking that they fit; commit makes them a block.
func (m *MemoryMedium) reserve(n int) ([]byte, error) {
	if !m.fits(n) {
		return nil, ErrEndOfMedium
	}
	p := &m.parts[m.cur]
	off := m.dataOffset()
	end := int(off) + n
	if end > cap(p.data) {
		// Grow geometrically, but never past the partition's capacity.
		c := max(end, 2*cap(p.data), 64<<10)
		c = int(min(int64(c), m.info.Capacity[m.cur]))
		d := make([]byte, int(off), c)
		copy(d, p.data[:off])
		p.data = d
	}
	return p.data[off:end], nil
}

// commit appends the block of logical length n whose stored bytes
// (encoded as flags say) reserve returned.
func (m *MemoryMedium) commit(n, stored int, flags uint8) {
	p := &m.parts[m.cur]
	end := m.dataOffset() + int64(stored)
	o := m.append(KindBlock, stored)
	o.logical, o.enc = n, flags
	p.data = p.data[:end]
	if flags&EncEncrypted != 0 {
		m.info.Encrypted = true
	}
}

// WriteMark implements Medium.
func (m *MemoryMedium) WriteMark(kind Kind) error {
	if kind != KindFilemark && kind != KindSetmark {
		return fmt.Errorf("tape: memory medium: mark kind %d", kind)
	}
	if err := m.checkWrite(); err != nil {
		return err
	}
	if !m.fits(0) {
		return ErrEndOfMedium
	}
	m.append(kind, 0)
	return nil
}

// Erase implements Medium.
func (m *MemoryMedium) Erase() error {
	if err := m.checkWrite(); err != nil {
		return err
	}
	p := &m.parts[m.cur]
	off := m.dataOffset()
	p.objs = p.objs[:m.pos]
	p.data = p.data[:off]
	m.decAt = 0
	return nil
}

// Format implements Medium.
func (m *MemoryMedium) Format(sizes []int64) error {
	switch {
	case !m.open:
		return errMemoryClosed
	case m.info.WriteProtected:
		return ErrWriteProtected
	case m.info.WORM && m.hasData():
		return ErrWORMOverwrite
	case len(sizes) < 1 || len(sizes) > 4:
		return fmt.Errorf("tape: memory medium: %d partitions, want 1 to 4", len(sizes))
	}
	total := m.native
	capacity := make([]int64, len(sizes))
	var sum int64
	for i, s := range sizes {
		if s < 0 || (s == 0 && i != len(sizes)-1) {
			return fmt.Errorf("tape: memory medium: partition %d size %d", i, s)
		}
		capacity[i] = s
		sum += s
	}
	if sum > total {
		return fmt.Errorf("tape: memory medium: partitions of %d bytes exceed the capacity %d", sum, total)
	}
	if capacity[len(capacity)-1] == 0 {
		capacity[len(capacity)-1] = total - sum
		if total-sum <= 0 {
			return fmt.Errorf("tape: memory medium: no room for the last partition")
		}
	}
	ew := make([]int64, len(sizes))
	for i, c := range capacity {
		ew[i] = min(m.ew, c/2)
	}
	m.info.Capacity, m.info.EarlyWarning, m.info.Partitions, m.info.Encrypted = capacity, ew, len(sizes), false
	m.parts = make([]memPart, len(sizes))
	m.cur, m.pos, m.decAt = 0, 0, 0
	return nil
}

func (m *MemoryMedium) hasData() bool {
	for i := range m.parts {
		if len(m.parts[i].objs) > 0 {
			return true
		}
	}
	return false
}

// Attribute implements Medium.
func (m *MemoryMedium) Attribute(id uint16) ([]byte, bool) {
	v, ok := m.attrs[id]
	return slices.Clone(v), ok
}

// SetAttribute implements Medium. An empty value removes the attribute.
func (m *MemoryMedium) SetAttribute(id uint16, val []byte) error {
	if !m.open {
		return errMemoryClosed
	}
	if len(val) == 0 {
		delete(m.attrs, id)
		return nil
	}
	m.attrs[id] = slices.Clone(val)
	return nil
}

// Sync implements Medium (nothing to make durable).
func (m *MemoryMedium) Sync() error {
	if !m.open {
		return errMemoryClosed
	}
	return nil
}

// Close implements Medium: the cartridge goes back to its library (or, if
// it has none, becomes unusable).
func (m *MemoryMedium) Close() error {
	if !m.open {
		return errMemoryClosed
	}
	m.open = false
	if m.lib != nil {
		m.lib.release(m.info.Barcode)
	}
	return nil
}

// MemoryLibrary is a Library of MemoryMedium cartridges. Opening an unknown
// barcode creates a blank cartridge from the template; cartridges keep
// their contents across unload and load for the life of the library. It is
// safe for concurrent use.
type MemoryLibrary struct {
	mu       sync.Mutex
	template MediumInfo
	carts    map[string]*MemoryMedium
	inUse    map[string]bool
}

// NewMemoryLibrary returns a library that creates cartridges like template
// (Barcode is replaced by the barcode asked for).
func NewMemoryLibrary(template MediumInfo) (*MemoryLibrary, error) {
	template.Barcode = "template"
	if _, err := NewMemoryMedium(template); err != nil {
		return nil, err
	}
	return &MemoryLibrary{template: template, carts: map[string]*MemoryMedium{}, inUse: map[string]bool{}}, nil
}

// Add puts a prepared cartridge into the library (replacing one with the
// same barcode that is not in use).
func (l *MemoryLibrary) Add(m *MemoryMedium) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inUse[m.info.Barcode] {
		return fmt.Errorf("memory library: cartridge %s is in use", m.info.Barcode)
	}
	m.lib = l
	m.open = false
	l.carts[m.info.Barcode] = m
	return nil
}

// Open implements Library.
func (l *MemoryLibrary) Open(barcode string) (Medium, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	if l.inUse[barcode] {
		return nil, fmt.Errorf("memory library: cartridge %s is in use", barcode)
	}
	m, ok := l.carts[barcode]
	if !ok {
		info := l.template
		info.Barcode = barcode
		var err error
		if m, err = NewMemoryMedium(info); err != nil {
			return nil, err
		}
		m.lib = l
		l.carts[barcode] = m
	}
	m.open = true
	m.cur, m.pos = 0, 0
	l.inUse[barcode] = true
	// LOAD COUNT, as an image keeps it (a cleaning cartridge's use count).
	var n uint64
	if v := m.attrs[attrLoadCount]; len(v) == 8 {
		n = binary.BigEndian.Uint64(v)
	}
	m.attrs[attrLoadCount] = binary.BigEndian.AppendUint64(nil, n+1)
	return m, nil
}

func (l *MemoryLibrary) release(barcode string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.inUse, barcode)
}

var _ Medium = (*MemoryMedium)(nil)
