package changer

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/tape/cartridge"
)

// ElementType is an SMC-3 element type code (READ ELEMENT STATUS byte 1,
// element status page byte 0).
type ElementType uint8

// Element types.
const (
	AllElements  ElementType = 0 // READ ELEMENT STATUS filter: every type
	Transport    ElementType = 1 // medium transport element (the robot)
	Storage      ElementType = 2 // storage element (slot)
	ImportExport ElementType = 3 // import/export element (mail slot)
	DataTransfer ElementType = 4 // data transfer element (drive)
)

var typeNames = [...]string{"all", "transport", "storage", "mail", "drive"}

func (t ElementType) String() string {
	if int(t) < len(typeNames) {
		return typeNames[t]
	}
	return fmt.Sprintf("type%d", uint8(t))
}

// MarshalText spells the type as the inventory file does.
func (t ElementType) MarshalText() ([]byte, error) { return []byte(t.String()), nil }

// UnmarshalText reads a type as MarshalText spells it.
func (t *ElementType) UnmarshalText(b []byte) error {
	i := slices.Index(typeNames[:], string(b))
	if i < 1 {
		return fmt.Errorf("element type %q: want transport, storage, mail or drive", b)
	}
	*t = ElementType(i)
	return nil
}

// Loc names an element by type and index within its type (0-based),
// independently of the personality's addresses, so that an inventory
// survives a change of personality.
type Loc struct {
	Type  ElementType `json:"type"`
	Index int         `json:"index"`
}

// Slot is what one element holds.
type Slot struct {
	Barcode string `json:"barcode,omitempty"` // "" = empty
	// Source is the element the cartridge was last moved from by the
	// transport, reported as SValid and SOURCE STORAGE ELEMENT ADDRESS;
	// nil when it was placed by the operator or by reconciliation.
	Source *Loc `json:"source,omitempty"`
	// ImpExp is the IMPEXP bit of a mail slot: the operator put the
	// cartridge there (Import); false when the transport did.
	ImpExp bool `json:"impexp,omitempty"`
}

// Inventory is where every cartridge of the library is: one Slot per
// storage, import/export and data transfer element (the transport never
// holds one between commands), and the cartridges that were exported
// (their images stay in the media directory but they are not in the
// library until imported again).
type Inventory struct {
	Version int      `json:"version"`
	Storage []Slot   `json:"storage"`
	Mail    []Slot   `json:"mail"`
	Drives  []Slot   `json:"drives"`
	Outside []string `json:"outside,omitempty"`
}

// inventoryVersion is the version of the file format.
const inventoryVersion = 1

// Layout is how many elements of each kind a library has.
type Layout struct {
	Storage, Mail, Drives int
}

// Slots returns the slots of element type t (nil for the transport).
func (inv *Inventory) Slots(t ElementType) []Slot { return inv.slots(t) }

// slots returns the slots of element type t (nil for the transport).
func (inv *Inventory) slots(t ElementType) []Slot {
	switch t {
	case Storage:
		return inv.Storage
	case ImportExport:
		return inv.Mail
	case DataTransfer:
		return inv.Drives
	}
	return nil
}

// Where returns the element that holds barcode.
func (inv *Inventory) Where(barcode string) (Loc, bool) {
	for _, t := range [...]ElementType{DataTransfer, Storage, ImportExport} {
		for i, s := range inv.slots(t) {
			if s.Barcode == barcode {
				return Loc{t, i}, true
			}
		}
	}
	return Loc{}, false
}

// Barcodes returns every barcode in an element, in element order (drives,
// storage, mail), duplicates included.
func (inv *Inventory) Barcodes() []string {
	var out []string
	for _, t := range [...]ElementType{DataTransfer, Storage, ImportExport} {
		for _, s := range inv.slots(t) {
			if s.Barcode != "" {
				out = append(out, s.Barcode)
			}
		}
	}
	return out
}

// clone returns a deep copy of inv.
func (inv *Inventory) clone() Inventory {
	out := Inventory{Version: inv.Version, Outside: slices.Clone(inv.Outside)}
	out.Storage, out.Mail, out.Drives = cloneSlots(inv.Storage), cloneSlots(inv.Mail), cloneSlots(inv.Drives)
	return out
}

func cloneSlots(s []Slot) []Slot {
	out := slices.Clone(s)
	for i := range out {
		if out[i].Source != nil {
			l := *out[i].Source
			out[i].Source = &l
		}
	}
	return out
}

// Report says what Reconcile changed. Every list is sorted.
type Report struct {
	Missing    []string // in the inventory, image gone: the element is shown empty
	Duplicates []string // in more than one element: kept in the first (drives, storage, mail)
	Placed     []string // put into a free storage (then mail) slot: new images, or elements the layout no longer has
	Unplaced   []string // images for which no element was free: not in the library
	FromDrive  []string // moved into the drive that reports it loaded
}

// Changed reports whether Reconcile changed anything.
func (r *Report) Changed() bool {
	return len(r.Missing)+len(r.Duplicates)+len(r.Placed)+len(r.Unplaced)+len(r.FromDrive) > 0
}

// Reconcile is the inventory policy, a pure function: given the saved
// inventory, the library's layout, the barcodes of the images in the
// media directory and, per drive, the barcode the drive itself reports
// loaded ("" when it is empty or unknown), it returns an inventory of
// exactly the layout's size in which every image is in at most one
// element and every element holds an existing image:
//
//   - a saved entry whose image is gone is dropped (Missing);
//   - a barcode saved in more than one element stays in the first, in
//     the order drives, storage, mail (Duplicates);
//   - a drive that reports a cartridge loaded holds it, wherever the
//     inventory had it (FromDrive); what the inventory had in that drive
//     is placed anew. A drive that is empty but has a cartridge in the
//     inventory keeps it: it was unloaded and waits for the transport,
//     as in a real library;
//   - exported cartridges stay outside;
//   - the other images, and the cartridges of elements beyond the
//     layout, go into the free storage slots in order, then the free
//     mail slots (Placed), or stay out when none is free (Unplaced).
func Reconcile(saved Inventory, l Layout, images []string, loaded []string) (Inventory, Report) {
	var rep Report
	out := Inventory{
		Version: inventoryVersion,
		Storage: make([]Slot, l.Storage),
		Mail:    make([]Slot, l.Mail),
		Drives:  make([]Slot, l.Drives),
	}
	have := make(map[string]bool, len(images))
	for _, b := range images {
		have[b] = true
	}
	placed := make(map[string]bool)
	var homeless []string
	valid := func(src *Loc) *Loc {
		if src == nil || src.Index < 0 || src.Index >= len(out.slots(src.Type)) {
			return nil
		}
		c := *src
		return &c
	}
	for _, t := range [...]ElementType{DataTransfer, Storage, ImportExport} {
		dst := out.slots(t)
		for i, s := range saved.slots(t) {
			b := s.Barcode
			switch {
			case b == "":
				continue
			case placed[b]:
				rep.Duplicates = append(rep.Duplicates, b)
				continue
			case !have[b] || cfgstring.Barcode(b) != nil:
				rep.Missing = append(rep.Missing, b)
				continue
			}
			placed[b] = true
			if i >= len(dst) {
				homeless = append(homeless, b)
				continue
			}
			dst[i] = Slot{Barcode: b, Source: valid(s.Source), ImpExp: s.ImpExp && t == ImportExport}
		}
	}
	for i, b := range loaded {
		if i >= l.Drives || b == "" || !have[b] || out.Drives[i].Barcode == b {
			continue
		}
		var src *Loc
		if at, ok := out.Where(b); ok {
			s := &out.slots(at.Type)[at.Index]
			src = s.Source
			if at.Type != DataTransfer {
				src = &Loc{at.Type, at.Index}
			}
			*s = Slot{}
		}
		homeless = slices.DeleteFunc(homeless, func(h string) bool { return h == b })
		if cur := out.Drives[i].Barcode; cur != "" {
			homeless = append(homeless, cur)
		}
		out.Drives[i] = Slot{Barcode: b, Source: src}
		placed[b] = true
		rep.FromDrive = append(rep.FromDrive, b)
	}
	for _, b := range saved.Outside {
		if have[b] && !placed[b] {
			out.Outside = append(out.Outside, b)
			placed[b] = true
		}
	}
	for _, b := range images {
		if !placed[b] && cfgstring.Barcode(b) == nil {
			homeless = append(homeless, b)
			placed[b] = true
		}
	}
	for _, b := range homeless {
		if s := firstFree(out.Storage, out.Mail); s != nil {
			*s = Slot{Barcode: b}
			rep.Placed = append(rep.Placed, b)
		} else {
			rep.Unplaced = append(rep.Unplaced, b)
		}
	}
	for _, l := range [...]*[]string{&rep.Missing, &rep.Duplicates, &rep.Placed, &rep.Unplaced, &rep.FromDrive} {
		slices.Sort(*l)
	}
	return out, rep
}

// firstFree returns the first empty slot of the lists, in order.
func firstFree(lists ...[]Slot) *Slot {
	for _, l := range lists {
		for i := range l {
			if l[i].Barcode == "" {
				return &l[i]
			}
		}
	}
	return nil
}

// store keeps a library's inventory in <dir>/.library-<name>.json (the
// snapshot) and <dir>/.library-<name>.journal (the moves since; see
// journal.go).
type store struct {
	dir, name string
	// crash, when set (tests), is asked before each step of a save; true
	// stops the save there as a crash would, leaving the files as they
	// are.
	crash func(step saveStep) bool
	jf    *os.File // the journal, open for appending once a move wrote to it
	// records is the number of records in the journal; compact, when not
	// 0 (tests), replaces compactAfter.
	records, compact int
}

// compactDue reports whether the journal has grown enough for the next
// move to write a snapshot.
func (s *store) compactDue() bool {
	n := s.compact
	if n == 0 {
		n = compactAfter
	}
	return s.records >= n
}

// close closes the journal.
func (s *store) close() error {
	if s.jf == nil {
		return nil
	}
	err := s.jf.Close()
	s.jf = nil
	return err
}

// saveStep is a step of store.save, in order.
type saveStep int

const (
	stepCreate  saveStep = iota // create the temporary file
	stepWrite                   // write the inventory into it
	stepSync                    // fsync it
	stepRename                  // rename it over the inventory
	stepSyncDir                 // fsync the directory
	numSteps
	// The steps of a journal append (store.journal).
	stepJournalWrite // write the record
	stepJournalSync  // fsync the journal
)

// errCrashed is what a save cut by the crash hook returns.
var errCrashed = errors.New("changer: inventory save cut (simulated crash)")

func (s *store) path() string { return filepath.Join(s.dir, ".library-"+s.name+".json") }

// tempPrefix starts the name of the temporary files of a save.
func (s *store) tempPrefix() string { return ".library-" + s.name + ".json.tmp-" }

// maxInventoryFile bounds the inventory file: 64,512 slots of JSON take
// less than 8 MiB.
const maxInventoryFile = 16 << 20

// load reads the saved inventory; ok is false when there is none.
func (s *store) load() (inv Inventory, ok bool, err error) {
	b, err := cartridge.ReadStateFile(s.path(), maxInventoryFile)
	if errors.Is(err, fs.ErrNotExist) {
		return inv, false, nil
	}
	if err != nil {
		return inv, false, fmt.Errorf("changer: inventory: %w", err)
	}
	if err := json.Unmarshal(b, &inv); err != nil {
		return inv, false, fmt.Errorf("changer: inventory %s: %w", s.path(), err)
	}
	if inv.Version != inventoryVersion {
		return inv, false, fmt.Errorf("changer: inventory %s: version %d, this build reads %d", s.path(), inv.Version, inventoryVersion)
	}
	if err := s.replay(&inv); err != nil {
		return inv, false, err
	}
	return inv, true, nil
}

// setAside renames the inventory and its journal, whatever they are
// (damaged, a FIFO, a symbolic link), to NAME.damaged-TIME beside them, so
// that nothing is lost and the next save starts afresh; it returns the
// new names.
func (s *store) setAside() ([]string, error) {
	stamp := time.Now().UTC().Format("20060102T150405Z")
	var kept []string
	for _, p := range []string{s.path(), s.journalPath()} {
		to := p + ".damaged-" + stamp
		err := os.Rename(p, to)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return kept, err
		}
		kept = append(kept, filepath.Base(to))
	}
	return kept, cartridge.SyncDir(s.dir)
}

// removeTemps deletes what saves cut by a crash left behind: this
// library's temporary files only (cartridge.IsTemp), not the inventory of
// a library whose name extends this one's; and the cartridges whose
// creation a crash cut (cartridge.RemoveStaleCreates).
func (s *store) removeTemps() error {
	if err := cartridge.RemoveTemps(s.dir, s.tempPrefix(), ""); err != nil {
		return fmt.Errorf("changer: stale inventory temporary file: %w", err)
	}
	if err := cartridge.RemoveStaleCreates(s.dir); err != nil {
		return fmt.Errorf("changer: cartridge creation cut by a crash: %w", err)
	}
	return nil
}

// save replaces the inventory atomically and durably: a temporary file
// in the same directory, written and fsynced, renamed over the inventory,
// and the directory fsynced; then the journal, whose moves the snapshot
// holds, is emptied. A crash at any point leaves either the old
// inventory or the new one under the inventory's name (rename is atomic),
// plus at most a temporary file that the next open removes, and a journal
// whose records, applied again, change nothing.
func (s *store) save(inv *Inventory) error {
	b, err := json.MarshalIndent(inv, "", "\t")
	if err != nil {
		return err
	}
	b = append(b, '\n')
	cut := func(step saveStep) bool { return s.crash != nil && s.crash(step) }
	if cut(stepCreate) {
		return errCrashed
	}
	f, err := os.CreateTemp(s.dir, s.tempPrefix()+"*")
	if err != nil {
		return fmt.Errorf("changer: inventory %s: %w", s.path(), cartridge.StripPath(err))
	}
	if cut(stepWrite) {
		// A torn write, as a crash leaves it: what the simulated crash
		// returns is the point, not these errors.
		_, _ = f.Write(b[:len(b)/2])
		_ = f.Close()
		return errCrashed
	}
	_, err = f.Write(b)
	if err == nil && cut(stepSync) {
		_ = f.Close() // a crash before the sync: the file may be anything
		return errCrashed
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil && cut(stepRename) {
		return errCrashed
	}
	if err == nil {
		err = os.Rename(f.Name(), s.path())
	}
	if err != nil {
		_ = os.Remove(f.Name()) // best effort: Open deletes leftover temporary files
		return fmt.Errorf("changer: inventory %s: %w", s.path(), cartridge.StripPath(err))
	}
	if cut(stepSyncDir) {
		return errCrashed
	}
	if err := cartridge.SyncDir(s.dir); err != nil {
		return err
	}
	return s.emptyJournal()
}
