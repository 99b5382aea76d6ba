package cartridge

import (
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/tape"
)

// Ext is the file name extension of cartridge images: a cartridge with
// barcode B lives in <dir>/B.vtape.
const Ext = ".vtape"

// Defaults for Options: the size of a new image cartridge (a memory=1
// drive's RAM cartridges have tape.DefaultMemoryCapacity).
const (
	DefaultCapacity     = 2 << 30
	DefaultEarlyWarning = 16 << 20
)

// Errors of the media directory.
var (
	ErrBadBarcode = errors.New("cartridge: invalid barcode")
	ErrNotFound   = errors.New("no cartridge")
	ErrExists     = errors.New("cartridge already exists")
)

// ValidateBarcode checks an LTO-style barcode (volume serial + media id)
// by the rule the vtape cfgstring's barcode= uses (cfgstring.Barcode: 1
// to 8 characters from A-Z and 0-9), so a barcode is always a plain file
// name. The error wraps ErrBadBarcode.
func ValidateBarcode(barcode string) error {
	if err := cfgstring.Barcode(barcode); err != nil {
		return fmt.Errorf("%w %q: %w", ErrBadBarcode, barcode, err)
	}
	return nil
}

// Path returns the image file of barcode in dir (barcode must be valid).
func Path(dir, barcode string) string {
	return filepath.Join(dir, barcode+Ext)
}

// Options describe a new cartridge.
type Options struct {
	// Capacity is the native capacity in bytes (record headers included);
	// 0 means DefaultCapacity.
	Capacity int64
	// EarlyWarning is how many bytes before the end of a partition the
	// early-warning zone starts: at most a quarter of Capacity (Create
	// refuses more), and each partition uses at most a quarter of its own
	// size; 0 means DefaultEarlyWarning (at most a quarter of Capacity).
	EarlyWarning int64
	// Partitions are the partition sizes, as for Format; nil means one
	// partition of the whole capacity.
	Partitions []int64
	// Density is the density code recorded on the medium (0: the drive's
	// default).
	Density        uint8
	WriteProtected bool
	WORM           bool
}

// ErrNoDirectory is returned for an empty media directory name, which
// would otherwise mean the current directory.
var ErrNoDirectory = errors.New("cartridge: no media directory given")

// Create creates an empty cartridge image for barcode in dir. It
// never replaces an existing cartridge. The image appears complete or not
// at all: it is written under a temporary name, synced, linked into place
// and the directory synced.
func Create(dir, barcode string, opts Options) error {
	if dir == "" {
		return ErrNoDirectory
	}
	if err := ValidateBarcode(barcode); err != nil {
		return err
	}
	if opts.Capacity == 0 {
		opts.Capacity = DefaultCapacity
	}
	if opts.EarlyWarning == 0 {
		opts.EarlyWarning = min(DefaultEarlyWarning, opts.Capacity/4)
	}
	if opts.Capacity < MinPartitionSize || opts.Capacity > maxCapacity {
		return fmt.Errorf("cartridge: capacity %s is out of range %s..%s", cfgstring.FormatSize(uint64(max(opts.Capacity, 0))), cfgstring.FormatSize(MinPartitionSize), cfgstring.FormatSize(maxCapacity))
	}
	if opts.EarlyWarning < 0 || opts.EarlyWarning > opts.Capacity/4 {
		// Each partition clamps it to a quarter of its own size; the
		// cartridge keeps what its partitions use.
		return fmt.Errorf("cartridge: early warning %s is more than a quarter of the capacity %s", cfgstring.FormatSize(uint64(max(opts.EarlyWarning, 0))), cfgstring.FormatSize(uint64(opts.Capacity)))
	}
	sizes := opts.Partitions
	if len(sizes) == 0 {
		sizes = []int64{opts.Capacity}
	}
	var seed [32]byte
	if _, err := crand.Read(seed[:]); err != nil {
		return err
	}
	rng := rand.NewChaCha8(seed)
	parts, err := layout(sizes, opts.Capacity, opts.EarlyWarning, rng)
	if err != nil {
		return err
	}
	sb := superblock{
		version: 1, seq: 1, serial: rng.Uint64(), created: now().Unix(), capacity: opts.Capacity,
		earlyWarning: opts.EarlyWarning, density: opts.Density, parts: parts, barcode: barcode,
	}
	if opts.WriteProtected {
		sb.flags |= flagWriteProtected
	}
	if opts.WORM {
		sb.flags |= flagWORM
	}
	path := Path(dir, barcode)
	if _, err := os.Lstat(path); err == nil {
		return fmt.Errorf("%w: %s", ErrExists, path)
	}

	var rnd [createTempRandom]byte
	_, _ = crand.Read(rnd[:])
	tmp := filepath.Join(dir, "."+barcode+Ext+createTempInfix+hex.EncodeToString(rnd[:]))
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		if errors.Is(err, fs.ErrNotExist) {
			return fmt.Errorf("cartridge: media directory %s does not exist", dir)
		}
		return fmt.Errorf("cartridge: create in media directory %s: %w", dir, StripPath(err))
	}
	defer func() { _ = os.Remove(tmp) }() // after a successful Link it only drops the temporary name
	b := sb.marshal(make([]byte, slotSize))
	_, err = f.WriteAt(b, 0)
	if err == nil {
		err = f.Truncate(dataStart) // slot B: zeros, i.e. invalid
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cartridge: create %s: %w", path, StripPath(err))
	}
	// link(2) fails if path exists, where rename(2) would replace it.
	if err := os.Link(tmp, path); err != nil {
		if errors.Is(err, fs.ErrExist) {
			return fmt.Errorf("%w: %s", ErrExists, path)
		}
		return fmt.Errorf("cartridge: create %s: %w", path, StripPath(err))
	}
	if err := os.Remove(tmp); err != nil {
		return err
	}
	return SyncDir(dir)
}

// StripPath returns err without the file name that an *fs.PathError or
// *os.LinkError carries, keeping the operation ("write: no space left on
// device"). The writers of temporary files use it: the caller's message
// names the file the user knows, not the temporary one.
func StripPath(err error) error {
	var pe *fs.PathError
	if errors.As(err, &pe) {
		return fmt.Errorf("%s: %w", pe.Op, pe.Err)
	}
	var le *os.LinkError
	if errors.As(err, &le) {
		return fmt.Errorf("%s: %w", le.Op, le.Err)
	}
	return err
}

// SyncDir fsyncs the directory dir, so that a rename or a new file in it
// survives a power loss.
func SyncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return err
	}
	err = d.Sync()
	if cerr := d.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		return fmt.Errorf("cartridge: sync directory %s: %w", dir, err)
	}
	return nil
}

// Open opens the cartridge barcode in dir for a drive or for writing
// (import): exclusively locked; ErrInUse if someone else has it. Unlike
// Library.Open it does not count a load.
func Open(dir, barcode string) (*Image, error) {
	if dir == "" {
		return nil, ErrNoDirectory
	}
	if err := ValidateBarcode(barcode); err != nil {
		return nil, err
	}
	m, err := OpenFile(Path(dir, barcode))
	if err != nil {
		return nil, notFound(err, dir, barcode)
	}
	if err := m.checkBarcode(barcode); err != nil {
		return nil, err
	}
	return m, nil
}

// checkBarcode closes m and refuses it when its header names another
// barcode than its file name: a copied or renamed image would otherwise
// be loaded under a label that is not its own.
func (m *Image) checkBarcode(barcode string) error {
	if h := m.sb.barcode; h != "" && h != barcode {
		_ = m.Close() // refused
		return fmt.Errorf("%w: %s says it is cartridge %q, not %s (a copied or renamed image? rename it back, or create %s with vscsictl media create)",
			tape.ErrCorrupt, m.path, h, barcode, barcode)
	}
	return nil
}

// OpenReadOnly opens the cartridge barcode in dir for inspection
// (shared lock; nothing is written).
func OpenReadOnly(dir, barcode string) (*Image, error) {
	if dir == "" {
		return nil, ErrNoDirectory
	}
	if err := ValidateBarcode(barcode); err != nil {
		return nil, err
	}
	m, err := OpenFileReadOnly(Path(dir, barcode))
	if err != nil {
		return nil, notFound(err, dir, barcode)
	}
	if err := m.checkBarcode(barcode); err != nil {
		return nil, err
	}
	return m, nil
}

func notFound(err error, dir, barcode string) error {
	if errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("%w %s in %s: %w", ErrNotFound, barcode, dir, err)
	}
	return err
}

// List returns the barcodes of the cartridges in dir, sorted.
// Files whose name is not a valid barcode plus Ext are ignored.
func List(dir string) ([]string, error) {
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, fmt.Errorf("cartridge: media directory %s does not exist", dir)
	}
	if err != nil {
		return nil, err
	}
	var out []string
	for _, e := range ents {
		name, ok := strings.CutSuffix(e.Name(), Ext)
		if !ok || !e.Type().IsRegular() || ValidateBarcode(name) != nil {
			continue
		}
		out = append(out, name)
	}
	slices.Sort(out)
	return out, nil
}

// Library is a media directory: a tape.Library whose cartridges are the
// image files in it. It is safe for concurrent use (it holds no state but
// the directory; the images' locks arbitrate).
type Library struct {
	dir string
}

var _ tape.Library = (*Library)(nil)
var _ tape.Medium = (*Image)(nil)

// NewLibrary returns the library of the media directory dir, which must
// exist.
func NewLibrary(dir string) (*Library, error) {
	if dir == "" {
		return nil, ErrNoDirectory
	}
	st, err := os.Stat(dir)
	if err != nil {
		return nil, fmt.Errorf("cartridge: media directory: %w", err)
	}
	if !st.IsDir() {
		return nil, fmt.Errorf("cartridge: media directory %s is not a directory", dir)
	}
	return &Library{dir: dir}, nil
}

// Dir returns the media directory.
func (l *Library) Dir() string { return l.dir }

// Open loads the cartridge with the given barcode: it opens the image
// exclusively and counts the load (MAM LOAD COUNT).
func (l *Library) Open(barcode string) (tape.Medium, error) {
	m, err := Open(l.dir, barcode)
	if err != nil {
		return nil, err
	}
	if err := m.countLoad(); err != nil {
		_ = m.Close() // best effort: the count error is the one to report
		return nil, err
	}
	return m, nil
}

// List returns the barcodes in the library: List of its directory.
func (l *Library) List() ([]string, error) { return List(l.dir) }

// Create creates a cartridge in the library: Create in its directory.
func (l *Library) Create(barcode string, opts Options) error {
	return Create(l.dir, barcode, opts)
}

// now is replaceable in tests.
var now = time.Now

// IsTemp reports whether name is a temporary file that os.CreateTemp made
// with the pattern prefix+"*"+suffix: what lies between is its random
// decimal number and nothing else. Matching the prefix alone is not
// enough: device names may hold dots, so ".library-a.json.tmp-" also
// starts the inventory of a library named "a.json.tmp-x".
func IsTemp(name, prefix, suffix string) bool {
	mid, ok := strings.CutPrefix(name, prefix)
	if !ok {
		return false
	}
	mid, ok = strings.CutSuffix(mid, suffix)
	if !ok || mid == "" {
		return false
	}
	for _, c := range mid {
		if c < '0' || c > '9' {
			return false
		}
	}
	return true
}

// Create writes a new image under a temporary name,
// "."+barcode+Ext+createTempInfix+hex of createTempRandom random bytes,
// then links it to its own name.
const (
	createTempInfix  = ".tmp-"
	createTempRandom = 6
)

// staleCreateAge is how old a temporary file of Create must be to be a
// leftover of a crash: a Create in progress (another daemon's, vscsictl
// media create) holds one for milliseconds.
const staleCreateAge = time.Minute

// isCreateTemp reports whether name is a temporary file of Create.
func isCreateTemp(name string) bool {
	rest, ok := strings.CutPrefix(name, ".")
	i := strings.LastIndex(rest, Ext+createTempInfix)
	if !ok || i < 0 || ValidateBarcode(rest[:i]) != nil {
		return false
	}
	h := rest[i+len(Ext)+len(createTempInfix):]
	if len(h) != 2*createTempRandom {
		return false
	}
	_, err := hex.DecodeString(h)
	return err == nil && strings.ToLower(h) == h
}

// RemoveStaleCreates removes from dir the temporary files of Creates that
// a crash cut (isCreateTemp, older than staleCreateAge): a daemon opening
// a media directory calls it, so that they do not accumulate.
func RemoveStaleCreates(dir string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if !e.Type().IsRegular() || !isCreateTemp(e.Name()) {
			continue
		}
		if info, err := e.Info(); err != nil || time.Since(info.ModTime()) < staleCreateAge {
			continue
		}
		if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
			return err
		}
	}
	return nil
}

// RemoveTemps removes the temporary files of pattern prefix+"*"+suffix
// (IsTemp) from dir: what saves cut by a crash left behind. The caller
// owns what they were saving (the daemon's lock, a device's name).
func RemoveTemps(dir, prefix, suffix string) error {
	ents, err := os.ReadDir(dir)
	if err != nil {
		return err
	}
	for _, e := range ents {
		if IsTemp(e.Name(), prefix, suffix) {
			if err := os.Remove(filepath.Join(dir, e.Name())); err != nil && !errors.Is(err, fs.ErrNotExist) {
				return err
			}
		}
	}
	return nil
}
