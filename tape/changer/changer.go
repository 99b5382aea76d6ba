package changer

import (
	"context"
	"errors"
	"fmt"
	"hash/fnv"
	"reflect"
	"slices"
	"sync"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

// Drive is what the changer needs of a data transfer element. *tape.Drive
// satisfies it.
type Drive interface {
	// Load inserts and loads the cartridge (MOVE MEDIUM into the drive).
	Load(barcode string) error
	// RefusesLoaded reports that the loaded cartridge is of a format the
	// drive does not read (the move then fails and is undone).
	RefusesLoaded() bool
	// Unload ejects the cartridge; it fails with tape.ErrRemovalPrevented
	// while the drive's initiator prevents medium removal.
	Unload() error
	// Stats reports the cartridge in the drive (Barcode, "" if none).
	Stats() tape.Stats
	// Personality and UnitSerial identify the drive for DVCID.
	Personality() tape.Personality
	UnitSerial() string
}

var _ Drive = (*tape.Drive)(nil)

// A Resolver returns the drive of a device name (an element of
// Config.Drives). The changer calls it whenever it needs the drive, so
// drives may come and go; an error means the drive is not there now.
type Resolver func(name string) (Drive, error)

// Errors of the operator API.
var (
	ErrPrevented     = errors.New("changer: an initiator prevents medium removal (PREVENT ALLOW MEDIUM REMOVAL)")
	ErrNoFreeSlot    = errors.New("changer: no free mail slot")
	ErrInLibrary     = errors.New("changer: the cartridge is already in the library")
	ErrEmptySlot     = errors.New("changer: the mail slot is empty")
	ErrNoSuchSlot    = errors.New("changer: no such mail slot")
	ErrNoSuchElement = errors.New("changer: no such element")
	ErrClosed        = errors.New("changer: closed")
	errNoDriveName   = errors.New("changer: no drive resolver")
)

// Changer is an emulated SMC medium changer: one logical unit that
// satisfies scsi.Handler and scsi.CommandNamer. Commands are served one
// at a time (a mutex serialises them with the operator methods Import,
// Export and Close). A command that moves a cartridge completes, the
// drive loaded or unloaded and the inventory saved, before HandleCommand
// returns.
type Changer struct {
	name    string
	cfg     Config
	pers    *Personality
	lib     *cartridge.Library
	resolve Resolver
	log     *zap.Logger
	store   store

	mu      sync.Mutex
	closed  bool
	spc     scsi.SPC
	inv     Inventory
	prevent bool
	// mailOpen: the import/export station is open to the operator
	// (OPEN/CLOSE IMPORT/EXPORT ELEMENT); not kept across restarts, a
	// library powers on with its door closed.
	mailOpen bool
	order    [4]ElementType // element types by first address
	buf      []byte

	moves            moveStats
	imports, exports uint64
}

// Open returns the changer name (the device name: the inventory file and
// the default serial number derive from it) over the media directory of
// cfg. It reads the saved inventory, removes what an interrupted save
// left, reconciles the inventory with the directory and the drives
// (Reconcile; what changed is logged) and saves it when that changed
// anything. resolve may be nil (no drive is ever found).
func Open(name string, cfg Config, resolve Resolver, log *zap.Logger) (*Changer, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("vlibrary %s: %w", name, err)
	}
	if err := cfgstring.DeviceName(name); err != nil {
		return nil, fmt.Errorf("vlibrary: %w", err)
	}
	if log == nil {
		log = zap.NewNop()
	}
	lib, err := cartridge.MakeLibrary(cfg.Media)
	if err != nil {
		return nil, fmt.Errorf("vlibrary %s: %w", name, err)
	}
	p, _ := LookupPersonality(cfg.Personality)
	c := &Changer{name: name, cfg: cfg, pers: p, lib: lib, resolve: resolve, log: log,
		store: store{dir: lib.Dir(), name: name}}
	c.order = [4]ElementType{Transport, Storage, ImportExport, DataTransfer}
	slices.SortFunc(c.order[:], func(a, b ElementType) int { return int(c.base(a)) - int(c.base(b)) })
	if err := c.store.removeTemps(); err != nil {
		return nil, fmt.Errorf("vlibrary %s: %w", name, err)
	}
	saved, found, err := c.store.load()
	damaged := err != nil
	if damaged {
		// A damaged inventory must not keep the library, and with it the
		// daemon's other devices, down: it is kept aside as it is, and
		// the inventory is rebuilt from the media directory.
		kept, aerr := c.store.setAside()
		if aerr != nil {
			return nil, fmt.Errorf("vlibrary %s: %w (and it cannot be set aside: %w)", name, err, aerr)
		}
		log.Warn("the saved inventory cannot be read; it is kept aside and the library is rebuilt from the media directory",
			zap.Error(err), zap.Strings("kept", kept))
		saved = Inventory{}
	}
	if !found && !damaged && cfg.Cartridges > 0 {
		if err := c.populate(); err != nil {
			return nil, fmt.Errorf("vlibrary %s: %w", name, err)
		}
	}
	c.inv = saved
	if err := c.reconcile(); err != nil {
		return nil, fmt.Errorf("vlibrary %s: %w", name, err)
	}
	c.initSPC()
	c.spc.UA.Add(scsi.PowerOnResetOrBusDeviceReset)
	c.buf = make([]byte, 0, 4096)
	log.Info("library ready", zap.String("personality", p.Name), zap.Int("slots", cfg.Slots),
		zap.Int("mailslots", cfg.MailSlots), zap.Strings("drives", cfg.Drives))
	return c, nil
}

// populate creates the configured labelled cartridges (first start); an
// image that exists is kept as it is.
func (c *Changer) populate() error {
	labels, err := cfgstring.BarcodeSeries(c.cfg.First, c.cfg.Cartridges)
	if err != nil {
		return err
	}
	made := 0
	for _, b := range labels {
		switch err := c.lib.Create(b, cartridge.Options{Capacity: c.cfg.Capacity}); {
		case err == nil:
			made++
		case !errors.Is(err, cartridge.ErrExists):
			return fmt.Errorf("create cartridge %s: %w", b, err)
		}
	}
	c.log.Info("labelled cartridges created", zap.Int("created", made), zap.Int("kept", len(labels)-made),
		zap.String("first", labels[0]), zap.String("last", labels[len(labels)-1]))
	return nil
}

// layout is the configured element counts.
func (c *Changer) layout() Layout {
	return Layout{Storage: c.cfg.Slots, Mail: c.cfg.MailSlots, Drives: len(c.cfg.Drives)}
}

// reconcile runs Reconcile against the media directory and the drives,
// logs what it changed and saves the result if it differs from c.inv.
func (c *Changer) reconcile() error {
	images, err := c.lib.List()
	if err != nil {
		return fmt.Errorf("list the media directory: %w", err)
	}
	loaded := make([]string, len(c.cfg.Drives))
	for i := range loaded {
		if d, err := c.drive(i); err == nil {
			loaded[i] = d.Stats().Barcode
		}
	}
	inv, rep := Reconcile(c.inv, c.layout(), images, loaded)
	if len(rep.Missing) > 0 {
		c.log.Warn("cartridges in the inventory have no image; their elements are shown empty", zap.Strings("media", rep.Missing))
	}
	if len(rep.Duplicates) > 0 {
		c.log.Warn("cartridges were in more than one element; kept in the first", zap.Strings("media", rep.Duplicates))
	}
	if len(rep.Unplaced) > 0 {
		c.log.Warn("no free slot for cartridges; they are not in the library", zap.Strings("media", rep.Unplaced))
	}
	if len(rep.Placed) > 0 {
		c.log.Info("cartridges placed in free slots", zap.Strings("media", rep.Placed))
	}
	if len(rep.FromDrive) > 0 {
		c.log.Info("cartridges found loaded in drives", zap.Strings("media", rep.FromDrive))
	}
	if reflect.DeepEqual(inv, c.inv) {
		return nil
	}
	old := c.inv
	c.inv = inv
	if err := c.store.save(&c.inv); err != nil {
		c.inv = old
		return err
	}
	return nil
}

// drive resolves data transfer element i.
func (c *Changer) drive(i int) (Drive, error) {
	if c.resolve == nil {
		return nil, errNoDriveName
	}
	d, err := c.resolve(c.cfg.Drives[i])
	if err == nil && d == nil {
		err = fmt.Errorf("changer: drive %s not found", c.cfg.Drives[i])
	}
	return d, err
}

func (c *Changer) serial() string {
	if c.cfg.Serial != "" {
		return c.cfg.Serial
	}
	h := fnv.New64a()
	h.Write([]byte("vlibrary/" + c.name))
	return fmt.Sprintf("%010d", h.Sum64()%1e10)
}

// UnitSerial is the unit serial number of VPD page 80h.
func (c *Changer) UnitSerial() string { return c.serial() }

// UnitIdentity is the standard INQUIRY identification (set at Open, read
// only after).
func (c *Changer) UnitIdentity() scsi.Identity { return c.spc.Identity }

func (c *Changer) initSPC() {
	h := fnv.New64a()
	h.Write([]byte("vlibrary/" + c.serial()))
	c.spc.Identity = scsi.Identity{
		PeripheralType: 0x08, // medium changer
		Removable:      true,
		Vendor:         c.pers.Vendor,
		Product:        c.pers.Product,
		Revision:       c.pers.Revision,
		Serial:         c.serial(),
		NAA:            scsi.NAARegistered(0x001405, h.Sum64()),
		Versions:       []uint16{scsi.VersionSAM5, scsi.VersionSPC4, scsi.VersionSMC3},
	}
	c.spc.Modes = c.modePages()
	c.spc.Commands = changerCommands.Commands()
	c.spc.SelfTests.Reported = true // LOG SENSE page 10h
	c.spc.SenseFormat = scsi.FixedFormat
	if c.cfg.DSense {
		c.spc.SenseFormat = scsi.DescriptorFormat
	}
}

// Drives returns the device names of the data transfer elements, in
// element order.
func (c *Changer) Drives() []string { return slices.Clone(c.cfg.Drives) }

// Move is the operator moving a cartridge from src to dst (the library's
// front panel, vscsictl library move): MOVE MEDIUM with its checks,
// refused while an initiator prevents medium removal. The changer then
// reports UNIT ATTENTION 28/00 (NOT READY TO READY CHANGE, MEDIUM MAY
// HAVE CHANGED), as after a door was opened, so that the initiator
// rereads the element status. The error is a *scsi.Error for the SCSI
// conditions (source empty, destination full, ...).
func (c *Changer) Move(src, dst Loc) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.operatorAccess(); err != nil {
		return err
	}
	for _, l := range [...]Loc{src, dst} {
		if l.Index < 0 || l.Index >= c.count(l.Type) || l.Type == Transport {
			return fmt.Errorf("vlibrary %s: move: %w: %s %d (%s)", c.name, ErrNoSuchElement, l.Type, l.Index, c.layoutText())
		}
	}
	if err := c.move(src, dst); err != nil {
		return fmt.Errorf("vlibrary %s: move %s %d to %s %d: %w", c.name, src.Type, src.Index, dst.Type, dst.Index, err)
	}
	c.spc.UA.Add(scsi.NotReadyToReadyChange)
	c.log.Info("cartridge moved (operator)", zap.String("medium", c.slot(dst).Barcode),
		zap.Stringer("from", src.Type), zap.Int("from_index", src.Index), zap.Stringer("to", dst.Type), zap.Int("to_index", dst.Index))
	return nil
}

// layoutText describes the element counts for errors.
func (c *Changer) layoutText() string {
	return fmt.Sprintf("%d slots, %d mail slots, %d drives", c.cfg.Slots, c.cfg.MailSlots, len(c.cfg.Drives))
}

// Personality returns the library model.
func (c *Changer) Personality() Personality { return *c.pers }

// Inventory returns a copy of where every cartridge is.
func (c *Changer) Inventory() Inventory {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.inv.clone()
}

// HandleCommand implements scsi.Handler: the command through the
// changer's command table, serialised with the operator methods.
func (c *Changer) HandleCommand(_ context.Context, cmd *scsi.Command) scsi.Response {
	c.mu.Lock()
	r := changerCommands.Serve(c, &c.spc, cmd)
	c.mu.Unlock()
	return r
}

// isClosed is the changer's scsi.Readiness, called by Serve under c.mu.
func (c *Changer) isClosed() bool { return c.closed }

// CommandID and CommandName implement scsi.CommandNamer: the name of a
// command in SMC (scsi.SMC), or "" for one the changer does not support.
func (c *Changer) CommandID(cdb scsi.CDB) scsi.CommandID { return changerCommands.CommandID(cdb) }

// CommandName is the name of command id (scsi.CommandNamer).
func (c *Changer) CommandName(id scsi.CommandID) string { return changerCommands.CommandName(id) }

// Reset is the LUN RESET task management function: UNIT ATTENTION 29/00,
// PREVENT MEDIUM REMOVAL cleared, D_SENSE back to the configuration's.
func (c *Changer) Reset() {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spc.UA.Add(scsi.PowerOnResetOrBusDeviceReset)
	c.prevent = false
	c.spc.SenseFormat = scsi.FixedFormat
	if c.cfg.DSense {
		c.spc.SenseFormat = scsi.DescriptorFormat
	}
}

// ResumeHandOver is called before the changer serves its first command
// when it takes over from the same library of a daemon that stopped for a
// planned restart (target.HandOverResumer): its inventory is the saved one
// the initiator knows, so the power-on unit attention is dropped.
func (c *Changer) ResumeHandOver() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.spc.UA.Clear()
	return true
}

// UsesPeers reports that the changer acts on other devices, its drives
// (target.PeerUser): a daemon that stops lets go of it before them, so
// that a move it finishes on the way out unloads a drive that still
// serves.
func (c *Changer) UsesPeers() bool { return len(c.cfg.Drives) > 0 }

// Close makes the changer refuse further commands with NOT READY. The
// inventory is already saved; the drives are not touched.
func (c *Changer) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return c.store.close()
}

// Import is the operator putting the cartridge barcode, whose image is in
// the media directory, into the first free mail slot: the slot shows it
// with IMPEXP set, and the changer reports UNIT ATTENTION 28/01 (IMPORT
// OR EXPORT ELEMENT ACCESSED) so that the initiator rereads the element
// status. It returns the mail slot's index (0-based).
func (c *Changer) Import(barcode string) (int, error) {
	if err := cfgstring.Barcode(barcode); err != nil {
		return 0, fmt.Errorf("vlibrary %s: import %q: barcode: %w", c.name, barcode, err)
	}
	if err := c.lib.Check(barcode); err != nil {
		return 0, fmt.Errorf("vlibrary %s: import: %w", c.name, err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.operatorAccess(); err != nil {
		return 0, err
	}
	if at, ok := c.inv.Where(barcode); ok {
		return 0, fmt.Errorf("vlibrary %s: import %s: %w (%s %d)", c.name, barcode, ErrInLibrary, at.Type, at.Index)
	}
	i := slices.IndexFunc(c.inv.Mail, func(s Slot) bool { return s.Barcode == "" })
	if i < 0 {
		return 0, fmt.Errorf("vlibrary %s: import %s: %w", c.name, barcode, ErrNoFreeSlot)
	}
	outside := c.inv.Outside
	c.inv.Mail[i] = Slot{Barcode: barcode, ImpExp: true}
	c.inv.Outside = slices.DeleteFunc(slices.Clone(outside), func(b string) bool { return b == barcode })
	if err := c.store.save(&c.inv); err != nil {
		c.inv.Mail[i], c.inv.Outside = Slot{}, outside
		return 0, fmt.Errorf("vlibrary %s: import %s: %w", c.name, barcode, err)
	}
	c.spc.UA.Add(scsi.ImportOrExportElementAccessed)
	c.imports++
	c.log.Info("cartridge imported", zap.String("medium", barcode), zap.Int("mailslot", i))
	return i, nil
}

// Export is the operator taking the cartridge out of mail slot slot
// (0-based): it leaves the library (its image stays in the media
// directory, and reconciliation does not bring it back until Import), and
// the changer reports UNIT ATTENTION 28/01.
func (c *Changer) Export(slot int) (string, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if err := c.operatorAccess(); err != nil {
		return "", err
	}
	if slot < 0 || slot >= len(c.inv.Mail) {
		return "", fmt.Errorf("vlibrary %s: export %d: %w (%d mail slots)", c.name, slot, ErrNoSuchSlot, len(c.inv.Mail))
	}
	old := c.inv.Mail[slot]
	if old.Barcode == "" {
		return "", fmt.Errorf("vlibrary %s: export %d: %w", c.name, slot, ErrEmptySlot)
	}
	outside := c.inv.Outside
	c.inv.Mail[slot] = Slot{}
	c.inv.Outside = append(slices.Clone(outside), old.Barcode)
	if err := c.store.save(&c.inv); err != nil {
		c.inv.Mail[slot], c.inv.Outside = old, outside
		return "", fmt.Errorf("vlibrary %s: export %d: %w", c.name, slot, err)
	}
	c.spc.UA.Add(scsi.ImportOrExportElementAccessed)
	c.exports++
	c.log.Info("cartridge exported", zap.String("medium", old.Barcode), zap.Int("mailslot", slot))
	return old.Barcode, nil
}

func (c *Changer) operatorAccess() error {
	switch {
	case c.closed:
		return ErrClosed
	case c.prevent:
		return ErrPrevented
	}
	return nil
}

// String describes the changer for logs.
func (c *Changer) String() string {
	return "vlibrary " + c.name + " (" + c.pers.Name + ", serial " + c.serial() + ")"
}
