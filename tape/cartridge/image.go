package cartridge

import (
	crand "crypto/rand"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/tape"
)

// Image is a cartridge image file opened for a drive (Open by barcode,
// OpenFile by path) or for inspection (OpenReadOnly, OpenFileReadOnly). It
// implements tape.Medium.
//
// An Image is used by one goroutine at a time and is not safe for
// concurrent use. It holds a flock on the file while open, so a second
// Open of the same file, from this or another process, fails with ErrInUse.
//
// Block data is read with ReadAt straight from the file and written with one
// pwrite per block through a reused buffer: reading or writing a block in
// steady state does not allocate.
type Image struct {
	f        *os.File
	path     string
	readOnly bool // opened read-only: every write fails with ErrWriteProtected
	closed   bool

	sb    superblock // state as the next superblock write will record it
	slot  int        // slot holding the newest valid superblock
	parts []partition
	mam   map[mamKey][]byte
	info  tape.MediumInfo // cached for Info; rebuilt by Format

	part  int // current partition
	cur   pos // current position in it
	hdr   recHeader
	hdrOK bool // hdr is the header of the record at cur

	rbuf    []byte // read buffer, allocated by the first read of a block in pieces
	rbufOK  bool   // rbuf holds the verified data of the block at cur
	crc     uint32 // running CRC of a large block's data, for reads in order
	crcNext int64  // data offset the running CRC has reached
	codec   tape.Codec
	key     *tape.Key // decrypts encrypted blocks (SetKey)
	ebuf    []byte    // stored data of an encoded block being read
	dbuf    []byte    // its decoded data (the codec's buffer)
	dbufOK  bool      // dbuf holds the decoded data of the block at cur

	dirty    bool // records written since the last fdatasync
	sbDirty  bool // superblock fields changed since the last superblock write
	vcrFresh bool // the volume change reference was bumped and not read since

	rng     *rand.ChaCha8
	scratch [recHeaderSize + encPrefixSize]byte
	wbuf    []byte // record write buffer, allocated by the first write
	sbuf    []byte // superblock buffer

	recovery []Recovery

	// Test seams for the crash tests, which simulate power loss with file
	// snapshots: afterSync runs after every fdatasync (the durable state),
	// and noSync skips the fdatasync itself, which only costs time there.
	afterSync func()
	noSync    bool
}

// pos is a position in a partition: before object obj, whose record starts
// at off (relative to the partition's region), with the numbering and chain
// values a record written there must carry.
type pos struct {
	off     int64
	obj     uint64
	file    uint64
	set     uint64
	prevID  uint64 // id of the record before (the partition's bop id at BOP)
	prevLen uint32 // size of the record before (0 at BOP)
}

type partition struct {
	start    int64 // file offset of the region
	capacity int64
	ew       int64
	bop      uint64
	last     bool // the region is the last in the file: shrink with ftruncate
	eod      pos  // end of data
	synced   pos  // end of data as the superblock on disk records it
	fileEnd  int64
	// tailDirty: bytes after eod may hold stale or torn records; the next
	// write there cleans them (ftruncate, or EOD marker + hole punch).
	tailDirty bool
	idx       index
}

func (p *partition) bopPos() pos { return pos{prevID: p.bop} }

// follows reports whether h is the record that belongs at position s of
// partition part: same partition, numbering and link to the previous record.
func (h *recHeader) follows(part uint8, s pos) bool {
	return h.part == part && h.obj == s.obj && h.file == s.file && h.set == s.set &&
		h.prev == s.prevID && h.prevLen == s.prevLen
}

// next returns the position after the record h at s.
func (s pos) next(h *recHeader) pos {
	n := pos{off: s.off + h.size(), obj: s.obj + 1, file: s.file, set: s.set, prevID: h.id, prevLen: uint32(h.size())}
	switch h.typ {
	case recFilemark:
		n.file++
	case recSetmark:
		n.set++
	}
	return n
}

// Errors of the image store besides the tape.Err* sentinels.
var (
	ErrInUse = errors.New("cartridge: in use")
	// ErrClosed is an image used after Close; it matches tape.ErrClosed.
	ErrClosed error = &tape.ClosedError{Object: "cartridge: image"}
)

// corrupt returns an error matching tape.ErrCorrupt.
func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", tape.ErrCorrupt, fmt.Sprintf(format, args...))
}

// OpenFile opens the image at path for reading and writing and locks it. A
// file the process may not write is opened read-only and reported as
// write-protected.
//
// An image is a regular file: a symbolic link is not followed (it could
// lead out of the media directory) and a FIFO or device is refused, with
// ErrNotRegular.
func OpenFile(path string) (*Image, error) {
	f, err := openRegular(path, os.O_RDWR)
	readOnly := false
	if errors.Is(err, fs.ErrPermission) || errors.Is(err, errReadOnlyFS) {
		f, err = openRegular(path, os.O_RDONLY)
		readOnly = true
	}
	if err != nil {
		return nil, err
	}
	return open(f, path, readOnly, true)
}

// ErrNotRegular is returned for a cartridge path that is a symbolic link,
// a FIFO, a device or a directory.
var ErrNotRegular = errors.New("cartridge: not a regular file")

// openRegular opens path with flag, without following a final symbolic
// link and without blocking on a FIFO, and refuses anything but a regular
// file.
func openRegular(path string, flag int) (*os.File, error) {
	f, err := os.OpenFile(path, flag|unix.O_NOFOLLOW|unix.O_NONBLOCK, 0)
	if errors.Is(err, unix.ELOOP) {
		return nil, fmt.Errorf("%w: %s is a symbolic link (cartridge images and state files are regular files in the media directory)", ErrNotRegular, path)
	}
	if err != nil {
		return nil, err
	}
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%w: %s is %s", ErrNotRegular, path, FileKind(st.Mode()))
	}
	if err != nil {
		_ = f.Close() // opened only to look
		return nil, err
	}
	return f, nil
}

// ReadStateFile reads a small state file of the media directory (a
// drive's saved state, a library's inventory and journal) as cartridges
// are opened: never through a final symbolic link, never blocking on a
// FIFO, only a regular file, and at most limit bytes. A missing file is
// an error that wraps fs.ErrNotExist.
func ReadStateFile(path string, limit int64) ([]byte, error) {
	f, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	b, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, fmt.Errorf("%s: larger than %d bytes, not a state file of vscsid's", path, limit)
	}
	return b, nil
}

// FileKind names a non-regular file's type for messages ("a FIFO",
// "a device node", ...).
func FileKind(m fs.FileMode) string {
	switch {
	case m&fs.ModeSymlink != 0:
		return "a symlink"
	case m.IsDir():
		return "a directory"
	case m&fs.ModeNamedPipe != 0:
		return "a FIFO"
	case m&fs.ModeSocket != 0:
		return "a socket"
	case m&fs.ModeDevice != 0:
		return "a device node"
	}
	return "not a regular file"
}

// OpenFileReadOnly opens the image at path for inspection with a shared
// lock: it fails with ErrInUse while a drive has the cartridge loaded.
// Nothing is ever written to the file.
func OpenFileReadOnly(path string) (*Image, error) {
	f, err := openRegular(path, os.O_RDONLY)
	if err != nil {
		return nil, err
	}
	return open(f, path, true, false)
}

func open(f *os.File, path string, readOnly, exclusive bool) (*Image, error) {
	if err := lockFile(f, exclusive); err != nil {
		_ = f.Close() // best effort: the lock error is the one to report
		if errors.Is(err, errWouldBlock) {
			return nil, fmt.Errorf("%w: %s is locked by another drive or process", ErrInUse, path)
		}
		return nil, fmt.Errorf("lock %s: %w", path, err)
	}
	m := &Image{f: f, path: path, readOnly: readOnly}
	if err := m.load(); err != nil {
		_ = f.Close() // releases the lock; the load error is the one to report
		return nil, fmt.Errorf("open %s: %w", path, err)
	}
	return m, nil
}

func (m *Image) load() error {
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return err
	}
	m.rng = rand.NewChaCha8(seed)
	st, err := m.f.Stat()
	if err != nil {
		return err
	}
	if !st.Mode().IsRegular() {
		return errors.New("not a regular file")
	}
	size := st.Size()

	// Superblock: the valid slot with the higher sequence number.
	buf := make([]byte, slotSize)
	var best *superblock
	var errs [2]error
	for i := range 2 {
		n, err := m.f.ReadAt(buf, int64(i)*slotSize)
		if err != nil && !errors.Is(err, io.EOF) {
			return err
		}
		sb, err := unmarshalSuperblock(buf[:n])
		if err != nil {
			errs[i] = err
			continue
		}
		if best == nil || sb.seq > best.seq {
			best, m.slot = sb, i
		}
	}
	if best == nil {
		return corrupt("no valid header (slot A: %v; slot B: %v)", errs[0], errs[1])
	}
	m.sb = *best
	m.mam, _ = decodeMAM(m.sb.mam) // validated by unmarshalSuperblock
	m.sb.mam = nil

	m.parts = make([]partition, len(m.sb.parts))
	var lastStart int64 = -1
	for i, e := range m.sb.parts {
		p := &m.parts[i]
		p.start, p.capacity, p.ew, p.bop = e.start, e.capacity, e.ew, e.bop
		p.synced = pos{off: e.end, obj: e.objects, file: e.files, set: e.sets, prevID: e.lastID, prevLen: e.lastLen}
		p.idx.init()
		lastStart = max(lastStart, e.start)
	}
	for i := range m.parts {
		p := &m.parts[i]
		p.last = p.start == lastStart
		if p.last {
			p.fileEnd = max(0, size-p.start)
		}
		r, err := m.recover(i)
		if err != nil {
			return err
		}
		m.recovery = append(m.recovery, r)
	}
	m.buildInfo()
	m.setPos(0, m.parts[0].bopPos())
	return nil
}

func (m *Image) setPos(part int, s pos) {
	m.part, m.cur = part, s
	m.hdrOK = false
	m.rbufOK, m.dbufOK = false, false
	m.crcNext = 0
}

// Path returns the file name the image was opened with.
func (m *Image) Path() string { return m.path }

func (m *Image) checkOpen() error {
	if m.closed {
		return ErrClosed
	}
	return nil
}

func (m *Image) writeProtected() bool {
	return m.readOnly || m.sb.flags&flagWriteProtected != 0
}

func (m *Image) checkWritable() error {
	if m.closed {
		return ErrClosed
	}
	if m.writeProtected() {
		return tape.ErrWriteProtected
	}
	return nil
}

func (m *Image) buildInfo() {
	m.info = tape.MediumInfo{
		Barcode:        m.sb.barcode,
		Density:        m.sb.density,
		WriteProtected: m.writeProtected(),
		WORM:           m.sb.flags&flagWORM != 0,
		Encrypted:      m.sb.flags&flagEncrypted != 0,
		Partitions:     len(m.parts),
		Capacity:       make([]int64, len(m.parts)),
		EarlyWarning:   make([]int64, len(m.parts)),
	}
	for i, p := range m.parts {
		m.info.Capacity[i] = p.capacity
		m.info.EarlyWarning[i] = p.ew
	}
}

// Info describes the cartridge. The slices are shared: do not modify them.
func (m *Image) Info() tape.MediumInfo { return m.info }

// Used returns the bytes used in partition part: record headers and data
// up to the end of data.
func (m *Image) Used(part int) int64 {
	if part < 0 || part >= len(m.parts) {
		return 0
	}
	return m.parts[part].eod.off
}

// Pos returns the current position.
func (m *Image) Pos() tape.Position {
	return tape.Position{Partition: m.part, Object: m.cur.obj, File: m.cur.file, Set: m.cur.set}
}

// Close syncs and releases the medium (and its lock).
func (m *Image) Close() error {
	if m.closed {
		return ErrClosed
	}
	err := m.Sync()
	m.closed = true
	if cerr := m.f.Close(); err == nil && cerr != nil {
		err = fmt.Errorf("cartridge: close: %w", cerr)
	}
	return err
}

// countLoad increments the load count (MAM LOAD COUNT) and persists it.
// The medium auxiliary memory is not covered by the write-protect tab, so a
// write-protected cartridge counts its loads too; a read-only file cannot.
func (m *Image) countLoad() error {
	if m.readOnly {
		return nil
	}
	m.sb.loadCount++
	return m.persistSuperblock()
}

// SetWriteProtected sets or clears the cartridge's write-protect tab.
func (m *Image) SetWriteProtected(wp bool) error {
	if err := m.checkOpen(); err != nil {
		return err
	}
	if m.readOnly {
		return tape.ErrWriteProtected
	}
	old := m.sb.flags
	if wp {
		m.sb.flags |= flagWriteProtected
	} else {
		m.sb.flags &^= flagWriteProtected
	}
	if err := m.persistSuperblock(); err != nil {
		m.sb.flags = old
		return err
	}
	m.buildInfo()
	return nil
}
