package changer

import (
	"encoding/binary"
	"errors"
	"time"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
)

// changerCommands is the changer's command table (named by scsi.SMC). The
// usage bitmaps are what REPORT SUPPORTED OPERATION CODES reports (SPC-5
// 6.35.3: a bit set for every CDB bit the changer looks at; in the
// CONTROL byte only NACA, which scsi.Table.Serve refuses).
var changerCommands = scsi.NewTable(scsi.SMC, scsi.Readiness[*Changer]{Closed: (*Changer).isClosed}, []scsi.Op[*Changer]{
	{Respond: (*Changer).testUnitReady,
		Desc: scsi.Usage(byte(scsi.TestUnitReady), 0, 0, 0, 0, 0x04)},
	{Respond: (*Changer).requestSense,
		Desc: scsi.Usage(byte(scsi.RequestSense), 0x01, 0, 0, 0xff, 0x04)},
	{Respond: (*Changer).initElementStatus,
		Desc: scsi.Usage(byte(scsi.InitElementStatus), 0, 0, 0, 0, 0x04).WithClass(scsi.ClassInventory).WithTimeout(600)},
	{Respond: (*Changer).inquiry,
		Desc: scsi.Usage(byte(scsi.Inquiry), 0x03, 0xff, 0xff, 0xff, 0x04)},
	{Respond: (*Changer).modeSelect,
		Desc: scsi.Usage(byte(scsi.ModeSelect6), 0x11, 0, 0, 0xff, 0x04)},
	{Respond: (*Changer).modeSense,
		Desc: scsi.Usage(byte(scsi.ModeSense6), 0x08, 0xff, 0xff, 0xff, 0x04)},
	{Respond: (*Changer).sendDiagnostic,
		Desc: scsi.Usage(byte(scsi.SendDiagnostic), 0xf7, 0, 0xff, 0xff, 0x04).WithTimeout(600)},
	{Respond: (*Changer).preventAllow,
		Desc: scsi.Usage(byte(scsi.PreventAllowMedium), 0, 0, 0, 0x03, 0x04)},
	{Respond: (*Changer).openCloseImportExport,
		Desc: scsi.Usage(byte(scsi.OpenCloseImportExport), 0, 0xff, 0xff, 0x1f, 0x04)},
	{Respond: (*Changer).positionToElement,
		Desc: scsi.Usage(byte(scsi.PositionToElement), 0, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x01, 0x04).WithClass(scsi.ClassMove).WithTimeout(60).WithExtent(elementExtent)},
	{Respond: (*Changer).initElementStatusRange,
		Desc: scsi.Usage(byte(scsi.InitElemStatusRange), 0x03, 0xff, 0xff, 0, 0, 0xff, 0xff, 0, 0x04).WithClass(scsi.ClassInventory).WithTimeout(600).WithExtent(elementExtent)},
	{Respond: (*Changer).logSense,
		Desc: scsi.Usage(byte(scsi.LogSense), 0x03, 0xff, 0xff, 0, 0xff, 0xff, 0xff, 0xff, 0x04)},
	{Respond: (*Changer).modeSelect,
		Desc: scsi.Usage(byte(scsi.ModeSelect10), 0x11, 0, 0, 0, 0, 0, 0xff, 0xff, 0x04)},
	{Respond: (*Changer).modeSense,
		Desc: scsi.Usage(byte(scsi.ModeSense10), 0x18, 0xff, 0xff, 0, 0, 0, 0xff, 0xff, 0x04)},
	{Respond: (*Changer).reportSupportedOpCodes,
		Desc: scsi.Usage(byte(scsi.MaintenanceIn), scsi.SAReportSupportedOpCodes, 0x87, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0x04).WithSA(scsi.SAReportSupportedOpCodes)},
	{Respond: (*Changer).moveMedium,
		Desc: scsi.Usage(byte(scsi.MoveMedium), 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0, 0, 0x01, 0x04).WithClass(scsi.ClassMove).WithTimeout(300).WithExtent(elementExtent)},
	{Respond: (*Changer).exchangeMedium,
		Desc: scsi.Usage(byte(scsi.ExchangeMedium), 0, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x03, 0x04).WithClass(scsi.ClassMove).WithTimeout(600).WithExtent(elementExtent)},
	{Respond: (*Changer).readElementStatus,
		Desc: scsi.Usage(byte(scsi.ReadElementStatus), 0x1f, 0xff, 0xff, 0xff, 0xff, 0x03, 0xff, 0xff, 0xff, 0, 0x04).WithTimeout(120).WithExtent(elementExtent)},
}...)

// Commands is the changer's command table, the same for every changer:
// the names and classes fault rules read, known before a changer is
// opened.
func Commands() *scsi.Table[*Changer] { return changerCommands }

// The conditions of MOVE MEDIUM, as real libraries report them.
var (
	ErrSourceEmpty     = scsi.NewError(scsi.IllegalRequest, scsi.MediumSourceElementEmpty)
	ErrDestinationFull = scsi.NewError(scsi.IllegalRequest, scsi.MediumDestinationElementFull)
	// ErrStillLoaded: autounload=0 and the source drive has the cartridge
	// loaded; the initiator must unload it (mt offline) first.
	ErrStillLoaded = scsi.NewError(scsi.IllegalRequest, scsi.MediumRemovalPrevented)
	// ErrDrivePrevents: the drive's initiator prevents medium removal.
	ErrDrivePrevents = scsi.NewError(scsi.IllegalRequest, scsi.MediumRemovalPreventedByDTE)
	// ErrMailOpen: the import/export station is open (OPEN/CLOSE
	// IMPORT/EXPORT ELEMENT); the transport cannot reach its elements
	// until it is closed. NOT READY 3A/02, MEDIUM NOT PRESENT - TRAY OPEN,
	// as mhvtl reports an open MAP.
	ErrMailOpen = scsi.NewError(scsi.NotReady, scsi.MediumNotPresentTrayOpen)
	// ErrLoadFailed: the drive is not there, or refused the load or the
	// unload for another reason.
	ErrLoadFailed = scsi.NewError(scsi.HardwareError, scsi.MediumLoadOrEjectFailed)
	// ErrIncompatibleMedium: the drive does not read the cartridge's
	// generation or format (an LTO-9 cartridge in an LTO-10 drive, an
	// LTO-6 one in an LTO-8 drive): ILLEGAL REQUEST 30/00, INCOMPATIBLE
	// MEDIUM INSTALLED, and the cartridge stays where it was.
	ErrIncompatibleMedium = scsi.NewError(scsi.IllegalRequest, scsi.IncompatibleMediumInstalled)
)

// invalidElement is 21/01 INVALID ELEMENT ADDRESS pointing at the address
// field at byte off of the CDB.
func invalidElement(off int) scsi.Sense {
	return scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.InvalidElementAddress,
		Pointer: scsi.FieldPointer{Valid: true, CDB: true, Field: uint16(off)}}
}

func (c *Changer) testUnitReady(*scsi.Command) scsi.Response { return scsi.Good }

func (c *Changer) requestSense(cmd *scsi.Command) scsi.Response {
	return c.spc.RequestSense(cmd, scsi.Sense{})
}

func (c *Changer) inquiry(cmd *scsi.Command) scsi.Response { return c.spc.Inquiry(cmd) }
func (c *Changer) sendDiagnostic(cmd *scsi.Command) scsi.Response {
	return c.spc.SendDiagnostic(cmd)
}

// changerLogPages are the LOG SENSE pages of the changer, in order.
var changerLogPages = [...]uint8{scsi.LogSupportedPages, scsi.SelfTestResultsPage, scsi.LogTapeAlert}

// logSense is LOG SENSE (SPC-5 6.9, SMC-3 7.2): 00h the supported pages
// (subpage FFh: and subpages), 10h the self-test results of SEND
// DIAGNOSTIC, 2Eh TapeAlert (64 changer flags, all clear: the robot never
// fails). Other pages and subpages are 24/00.
func (c *Changer) logSense(cmd *scsi.Command) scsi.Response {
	ls, err := scsi.DecodeLogSense(cmd.CDB)
	if err != nil {
		return c.spc.ResponseFor(err)
	}
	if ls.Subpage != 0 && (ls.Page != scsi.LogSupportedPages || ls.Subpage != 0xff) {
		return c.spc.ResponseFor(scsi.InvalidField(3, -1))
	}
	w := scsi.NewLogPage(c.buf, ls)
	switch ls.Page {
	case scsi.LogSupportedPages:
		for _, p := range changerLogPages {
			w.B = append(w.B, p)
			if ls.Subpage == 0xff {
				w.B = append(w.B, 0)
				if p == scsi.LogSupportedPages {
					w.B = append(w.B, p, 0xff)
				}
			}
		}
	case scsi.SelfTestResultsPage:
		w.B = c.spc.SelfTests.AppendParams(w.B, w.Ptr)
	case scsi.LogTapeAlert:
		w.TapeAlert(0)
	default:
		return c.spc.ResponseFor(scsi.InvalidField(2, 5))
	}
	c.buf = w.Finish()
	scsi.WriteParameterData(cmd.Data, c.buf, ls.Alloc)
	return scsi.Good
}
func (c *Changer) modeSense(cmd *scsi.Command) scsi.Response  { return c.spc.ModeSense(cmd) }
func (c *Changer) modeSelect(cmd *scsi.Command) scsi.Response { return c.spc.ModeSelect(cmd) }

func (c *Changer) reportSupportedOpCodes(cmd *scsi.Command) scsi.Response {
	return c.spc.ReportSupportedOpCodes(cmd)
}

// Mode page codes of SMC-3 7.3.
const (
	pageElementAddress = 0x1d
	pageTransportGeom  = 0x1e
	pageCapabilities   = 0x1f
)

// modePages are the Control page (D_SENSE) and the three SMC pages,
// fixed for the configured layout.
func (c *Changer) modePages() scsi.ModePages {
	ea := make([]byte, 20)
	ea[0], ea[1] = pageElementAddress, 18
	for i, t := range [...]ElementType{Transport, Storage, ImportExport, DataTransfer} {
		binary.BigEndian.PutUint16(ea[2+4*i:], c.base(t))
		binary.BigEndian.PutUint16(ea[4+4*i:], uint16(c.count(t)))
	}
	// One transport, no rotation (no double-sided media).
	geom := []byte{pageTransportGeom, 2, 0, 0}
	// Device capabilities: cartridges rest in storage, mail slots and
	// drives (not the transport); MOVE MEDIUM moves from any of them to
	// any of them (bytes 4-7: from MT, ST, IE, DT) and EXCHANGE MEDIUM
	// exchanges between any of them (bytes 12-15, the same order; not
	// with the transport, which holds nothing).
	const stDtIe = 0x0e // STOR/ST→ bits: storage 1, import/export 2, data transfer 3
	caps := make([]byte, 20)
	caps[0], caps[1] = pageCapabilities, 18
	caps[2] = stDtIe
	caps[4], caps[5], caps[6], caps[7] = stDtIe, stDtIe, stDtIe, stDtIe
	caps[13], caps[14], caps[15] = stDtIe, stDtIe, stDtIe
	return scsi.ModePages{Pages: []scsi.ModePage{
		c.spc.ControlModePage(),
		scsi.FixedModePage(ea),
		scsi.FixedModePage(geom),
		scsi.FixedModePage(caps),
	}}
}

// preventAllow is PREVENT ALLOW MEDIUM REMOVAL (SPC-5 6.16, SMC-3 6.13):
// PREVENT 01b locks the mail slots against the operator (Import and
// Export fail); the transport still moves cartridges in and out of them.
func (c *Changer) preventAllow(cmd *scsi.Command) scsi.Response {
	switch cmd.CDB.Byte(4) & 0x03 {
	case 0:
		c.prevent = false
	case 1:
		c.prevent = true
	default:
		return scsi.CheckCondition(scsi.InvalidFieldSense(4, 1))
	}
	return scsi.Good
}

// openCloseImportExport is OPEN/CLOSE IMPORT/EXPORT ELEMENT (SMC-3 6.5):
// ELEMENT ADDRESS bytes 2-3 names a mail slot, ACTION CODE (byte 4 bits
// 4-0) is 00h open or 01h close. The mail slots are one station with one
// door: opening it hands them to the operator (the transport cannot reach
// them: ACCESS=0 in their element status, moves to or from them NOT READY
// 3A/02), and is refused with 05/53/02 while an initiator prevents medium
// removal. Closing it gives them back and reports UNIT ATTENTION 28/01,
// as a real library does once it has scanned the station. Opening an
// open station or closing a closed one is GOOD and changes nothing.
func (c *Changer) openCloseImportExport(cmd *scsi.Command) scsi.Response {
	l, ok := c.lookup(cmd.CDB.Uint16(2))
	if !ok || l.Type != ImportExport {
		return scsi.CheckCondition(invalidElement(2))
	}
	switch cmd.CDB.Byte(4) & 0x1f {
	case 0:
		if c.prevent {
			return scsi.CheckCondition(scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.MediumRemovalPrevented})
		}
		if !c.mailOpen {
			c.mailOpen = true
			c.log.Info("import/export station opened")
		}
	case 1:
		if c.mailOpen {
			c.mailOpen = false
			c.spc.UA.Add(scsi.ImportOrExportElementAccessed)
			c.log.Info("import/export station closed")
		}
	default:
		return scsi.CheckCondition(scsi.InvalidFieldSense(4, 4))
	}
	return scsi.Good
}

// reachable checks that the transport can reach every element of locs: a
// mail slot cannot be reached while the station is open.
func (c *Changer) reachable(locs ...Loc) error {
	if !c.mailOpen {
		return nil
	}
	for _, l := range locs {
		if l.Type == ImportExport {
			return ErrMailOpen
		}
	}
	return nil
}

// checkTransport validates a TRANSPORT ELEMENT ADDRESS: the transport's,
// or 0 for the default transport (SMC-3 6.6).
func (c *Changer) checkTransport(addr uint16) bool {
	return addr == 0 || addr == c.pers.Transport
}

// element returns the element at the address field at byte off of the
// CDB, which must not be the transport.
func (c *Changer) element(cdb scsi.CDB, off int) (Loc, bool) {
	l, ok := c.lookup(cdb.Uint16(off))
	return l, ok && l.Type != Transport
}

// positionToElement is POSITION TO ELEMENT (SMC-3 6.10): there is no arm
// to move; the addresses are checked.
func (c *Changer) positionToElement(cmd *scsi.Command) scsi.Response {
	cdb := cmd.CDB
	switch {
	case !c.checkTransport(cdb.Uint16(2)):
		return scsi.CheckCondition(invalidElement(2))
	case cdb.Byte(8)&0x01 != 0:
		return scsi.CheckCondition(scsi.InvalidFieldSense(8, 0)) // INVERT
	}
	if _, ok := c.element(cdb, 4); !ok {
		return scsi.CheckCondition(invalidElement(4))
	}
	return scsi.Good
}

// initElementStatus is INITIALIZE ELEMENT STATUS (SMC-3 6.3): the
// inventory is reconciled with the media directory and the drives.
func (c *Changer) initElementStatus(*scsi.Command) scsi.Response {
	if err := c.reconcile(); err != nil {
		c.log.Error("initialize element status failed", zap.Error(err))
		return scsi.ResponseFor(scsi.ErrInternal)
	}
	return scsi.Good
}

// initElementStatusRange is INITIALIZE ELEMENT STATUS WITH RANGE (SMC-3
// 6.4). With RANGE set the starting address must be an element's; the
// whole library is reconciled either way (it costs one directory read).
func (c *Changer) initElementStatusRange(cmd *scsi.Command) scsi.Response {
	if cmd.CDB.Byte(1)&0x01 != 0 {
		if _, ok := c.lookup(cmd.CDB.Uint16(2)); !ok {
			return scsi.CheckCondition(invalidElement(2))
		}
	}
	return c.initElementStatus(cmd)
}

// exchangeMedium is EXCHANGE MEDIUM (SMC-3 6.2): TRANSPORT ELEMENT
// ADDRESS bytes 2-3, SOURCE ADDRESS 4-5, FIRST DESTINATION ADDRESS 6-7,
// SECOND DESTINATION ADDRESS 8-9; INV1 and INV2 (byte 10 bits 1, 0) are
// refused (single-sided media). What mtx exchange sends, with the second
// destination the source.
func (c *Changer) exchangeMedium(cmd *scsi.Command) scsi.Response {
	cdb := cmd.CDB
	if b := cdb.Byte(10) & 0x03; b != 0 {
		return scsi.CheckCondition(scsi.InvalidFieldSense(10, int(b>>1)))
	}
	if !c.checkTransport(cdb.Uint16(2)) {
		return scsi.CheckCondition(invalidElement(2))
	}
	src, ok := c.element(cdb, 4)
	if !ok {
		return scsi.CheckCondition(invalidElement(4))
	}
	first, ok := c.element(cdb, 6)
	if !ok || first == src {
		return scsi.CheckCondition(invalidElement(6))
	}
	second, ok := c.element(cdb, 8)
	if !ok || second == first {
		return scsi.CheckCondition(invalidElement(8))
	}
	return scsi.ResponseFor(c.exchange(src, first, second))
}

// moveMedium is MOVE MEDIUM (SMC-3 6.6).
func (c *Changer) moveMedium(cmd *scsi.Command) scsi.Response {
	cdb := cmd.CDB
	if cdb.Byte(10)&0x01 != 0 {
		return scsi.CheckCondition(scsi.InvalidFieldSense(10, 0)) // INVERT: single-sided media
	}
	if !c.checkTransport(cdb.Uint16(2)) {
		return scsi.CheckCondition(invalidElement(2))
	}
	src, ok := c.element(cdb, 4)
	if !ok {
		return scsi.CheckCondition(invalidElement(4))
	}
	dst, ok := c.element(cdb, 6)
	if !ok {
		return scsi.CheckCondition(invalidElement(6))
	}
	return scsi.ResponseFor(c.move(src, dst))
}

// move moves the cartridge in src to dst: the drive at either end is
// unloaded or loaded, then the inventory is saved; only then is the move
// done. A failure leaves the inventory as it was. Every move is counted
// and timed (Stats).
func (c *Changer) move(src, dst Loc) error {
	start := time.Now()
	err := c.doMove(src, dst)
	c.moves.add(src.Type, dst.Type, err, time.Since(start))
	return err
}

func (c *Changer) doMove(src, dst Loc) error {
	if err := c.reachable(src, dst); err != nil {
		return err
	}
	ss, ds := c.slot(src), c.slot(dst)
	if ss.Barcode == "" {
		return ErrSourceEmpty
	}
	if ds.Barcode != "" {
		return ErrDestinationFull
	}
	if dst.Type == DataTransfer {
		if err := c.checkReceiver(dst); err != nil {
			return err
		}
	}
	if src.Type == DataTransfer {
		if err := c.takeFromDrive(src.Index); err != nil {
			return err
		}
	}
	moved := carried(src, *ss)
	return c.commit([]Loc{dst, src}, []Slot{moved, {}})
}

// exchange is EXCHANGE MEDIUM's move (SMC-3 6.2): the cartridge in src to
// first, the one in first to second, which may be src itself (a swap).
// Both cartridges leave their drives first, as the transport holds one
// while it carries the other; the inventory is saved once, so a crash
// leaves either the old or the new arrangement.
func (c *Changer) exchange(src, first, second Loc) error {
	start := time.Now()
	err := c.doExchange(src, first, second)
	c.moves.add(src.Type, first.Type, err, time.Since(start))
	return err
}

func (c *Changer) doExchange(src, first, second Loc) error {
	if err := c.reachable(src, first, second); err != nil {
		return err
	}
	ss, fs := c.slot(src), c.slot(first)
	if ss.Barcode == "" || fs.Barcode == "" {
		return ErrSourceEmpty // the first destination is the second move's source
	}
	if second != src && c.slot(second).Barcode != "" {
		return ErrDestinationFull
	}
	if second.Type == DataTransfer && second != src {
		if err := c.checkReceiver(second); err != nil {
			return err
		}
	}
	for _, l := range [...]Loc{src, first} {
		if l.Type == DataTransfer {
			if err := c.takeFromDrive(l.Index); err != nil {
				return err
			}
		}
	}
	a, b := carried(src, *ss), carried(first, *fs)
	locs, slots := []Loc{first, second}, []Slot{a, b}
	if second != src {
		locs, slots = append(locs, src), append(slots, Slot{})
	}
	return c.commit(locs, slots)
}

// carried is the slot a cartridge taken from l arrives with: it keeps the
// storage element it came from when it comes out of a drive.
func carried(l Loc, s Slot) Slot {
	moved := Slot{Barcode: s.Barcode, Source: s.Source}
	if l.Type != DataTransfer || s.Source == nil {
		moved.Source = &Loc{l.Type, l.Index}
	}
	return moved
}

// checkReceiver checks that drive dst can take a cartridge: it is there
// and holds none loaded from outside the library.
func (c *Changer) checkReceiver(dst Loc) error {
	d, err := c.drive(dst.Index)
	if err != nil {
		c.log.Warn("move into a drive that is not there", zap.String("drive", c.cfg.Drives[dst.Index]), zap.Error(err))
		return ErrLoadFailed
	}
	if d.Stats().Barcode != "" {
		return ErrDestinationFull // loaded outside the library
	}
	return nil
}

// commit puts slots[i] into locs[i]: the drives among locs that receive
// a cartridge load it, then the change is journalled (and now and then a
// snapshot written, store.save). If a load or the save
// fails, the inventory is left as it was and the drives loaded here are
// unloaded again (the cartridges they had are already out).
func (c *Changer) commit(locs []Loc, slots []Slot) error {
	var loaded []Drive
	undo := func() {
		for _, d := range loaded {
			if err := d.Unload(); err != nil {
				c.log.Warn("cannot unload the drive after the failed move", zap.Error(err))
			}
		}
	}
	for i, l := range locs {
		if l.Type != DataTransfer || slots[i].Barcode == "" {
			continue
		}
		d, err := c.drive(l.Index)
		if err == nil {
			err = d.Load(slots[i].Barcode)
		}
		if err != nil {
			c.log.Warn("drive refused the cartridge", zap.String("drive", c.cfg.Drives[l.Index]),
				zap.String("medium", slots[i].Barcode), zap.Error(err))
			undo()
			return ErrLoadFailed
		}
		loaded = append(loaded, d)
		if d.RefusesLoaded() {
			c.log.Info("drive does not read the cartridge's format; move refused", zap.String("drive", c.cfg.Drives[l.Index]),
				zap.String("medium", slots[i].Barcode))
			undo()
			return ErrIncompatibleMedium
		}
	}
	old := make([]Slot, len(locs))
	for i, l := range locs {
		old[i] = *c.slot(l)
	}
	for i, l := range locs {
		*c.slot(l) = slots[i]
	}
	if err := c.store.journal(locs, slots); err != nil {
		for i := len(locs) - 1; i >= 0; i-- {
			*c.slot(locs[i]) = old[i]
		}
		c.log.Error("inventory not saved; move undone", zap.String("medium", slots[0].Barcode), zap.Error(err))
		undo()
		return ErrLoadFailed
	}
	if c.store.compactDue() {
		// The move is durable in the journal already: a snapshot that
		// fails leaves the journal to hold it, and is tried again.
		if err := c.store.save(&c.inv); err != nil {
			c.log.Warn("inventory snapshot not written; the journal keeps the moves", zap.Error(err))
		}
	}
	return nil
}

// takeFromDrive readies drive i's cartridge for the transport: an
// ejected (or absent) drive is ready; a loaded one is unloaded with
// autounload=1 and refused otherwise.
func (c *Changer) takeFromDrive(i int) error {
	d, err := c.drive(i)
	if err != nil {
		return nil // no drive holds the image: the transport takes it
	}
	if d.Stats().Barcode == "" {
		return nil
	}
	if !c.cfg.AutoUnload {
		return ErrStillLoaded
	}
	switch err := d.Unload(); {
	case err == nil, errors.Is(err, tape.ErrNoMedium):
		return nil
	case errors.Is(err, tape.ErrRemovalPrevented):
		return ErrDrivePrevents
	default:
		c.log.Warn("drive did not unload", zap.String("drive", c.cfg.Drives[i]), zap.Error(err))
		return ErrLoadFailed
	}
}

// readElementStatus is READ ELEMENT STATUS (SMC-3 6.11): from the
// STARTING ELEMENT ADDRESS on, at most NUMBER OF ELEMENTS descriptors of
// the ELEMENT TYPE CODE (0: every type), one element status page per
// type in address order. VOLTAG adds the primary volume tag (PVOLTAG;
// there are no alternate tags), DVCID the drives' device identifiers;
// CURDATA changes nothing (the status is always current). The header's
// byte count is that of the whole report, however much the allocation
// length lets through, so that the initiator can ask again.
//
// Errors: a reserved element type code → 24/00 (byte 1); no element of
// the type at or after the starting address → 21/01 (byte 2), unless the
// library has no element of that type at all (an empty report).
func (c *Changer) readElementStatus(cmd *scsi.Command) scsi.Response {
	cdb := cmd.CDB
	voltag := cdb.Byte(1)&0x10 != 0
	want := ElementType(cdb.Byte(1) & 0x0f)
	if want > DataTransfer {
		return scsi.CheckCondition(scsi.InvalidFieldSense(1, 3))
	}
	start, limit := cdb.Uint16(2), int(cdb.Uint16(4))
	dvcid := cdb.Byte(6)&0x01 != 0
	alloc := int(cdb.Uint24(7))

	b := append(c.buf[:0], 0, 0, 0, 0, 0, 0, 0, 0)
	first, n, found := start, 0, false
	for _, t := range c.order {
		if want != AllElements && t != want {
			continue
		}
		base, count := c.base(t), c.count(t)
		i0 := 0
		if start > base {
			i0 = int(start - base)
		}
		if i0 >= count {
			continue
		}
		found = true
		k := min(count-i0, limit-n)
		if k <= 0 {
			break
		}
		if n == 0 {
			first = base + uint16(i0)
		}
		dl := c.descLen(t, voltag, dvcid)
		var flags byte
		if voltag {
			flags = pVolTag
		}
		size := k * dl
		b = append(b, byte(t), flags, byte(dl>>8), byte(dl), 0, byte(size>>16), byte(size>>8), byte(size))
		for i := i0; i < i0+k; i++ {
			b = c.appendDescriptor(b, Loc{t, i}, voltag, dvcid)
		}
		n += k
	}
	// A type this library has none of (a library without drives, or
	// without mail slots) reports no element wherever it starts, as mtx
	// asks for every type page 1Dh lists, with a count of zero.
	if !found && (want == AllElements || c.count(want) > 0) {
		return scsi.CheckCondition(invalidElement(2))
	}
	binary.BigEndian.PutUint16(b[0:], first)
	binary.BigEndian.PutUint16(b[2:], uint16(n))
	size := len(b) - 8
	b[5], b[6], b[7] = byte(size>>16), byte(size>>8), byte(size)
	c.buf = b
	scsi.WriteParameterData(cmd.Data, b, alloc)
	return scsi.Good
}

// elementExtent decodes the element addresses of the changer's commands
// that name elements (scsi.Extent.Elements), for traces.
func elementExtent(c scsi.CDB) (scsi.Extent, bool) {
	var e scsi.Extent
	n := 10 // POSITION TO ELEMENT, INITIALIZE ELEMENT STATUS WITH RANGE
	at := func(off ...int) {
		for _, o := range off {
			e.Elements[e.NElements] = c.Uint16(o)
			e.NElements++
		}
	}
	switch c.OpCode() {
	case scsi.MoveMedium:
		n = 12
		at(2, 4, 6)
	case scsi.ExchangeMedium:
		n = 12
		at(2, 4, 6, 8)
	case scsi.PositionToElement:
		at(2, 4)
	case scsi.ReadElementStatus:
		n = 12
		at(2)
		e.Count = int64(c.Uint16(4))
	case scsi.InitElemStatusRange:
		at(2)
		e.Count = int64(c.Uint16(6))
	default:
		return e, false
	}
	return e, len(c) >= n
}
