package scsi

import (
	"fmt"
	"iter"
	"slices"
)

// The command spine: every kind of logical unit (disk, tape drive, medium
// changer) declares its commands as a Table, and Table.Serve does the
// steps SAM and SPC require of every command, once and the same way for
// all of them. tcmu-runner's generic dispatcher over per-handler ops
// tables is the model.

// Class says what a command does to the medium or the library. Fault rules
// (op=read, op=media), the timing models and traces select commands by
// class; a command with none has Class 0.
type Class uint8

// Command classes.
const (
	ClassRead      Class = 1 << iota // disk READ(6/10/12/16); tape READ(6/16), READ REVERSE(6/16)
	ClassWrite                       // disk WRITE(6/10/12/16), WRITE AND VERIFY, WRITE SAME; tape WRITE(6/16)
	ClassVerify                      // disk VERIFY(10/12/16); tape VERIFY(6/16)
	ClassFilemarks                   // tape WRITE FILEMARKS(6/16)
	ClassPosition                    // tape LOCATE(10/16), SPACE(6/16)
	ClassMech                        // tape REWIND, LOAD UNLOAD, ERASE
	ClassMove                        // changer MOVE MEDIUM, EXCHANGE MEDIUM, POSITION TO ELEMENT
	ClassInventory                   // changer INITIALIZE ELEMENT STATUS (WITH RANGE)
)

// Bit locates a one-bit field of a CDB, such as IMMED. The zero Bit is no
// field.
type Bit struct {
	Byte uint8 // CDB byte
	Mask uint8 // the bit in it; 0: the command has no such field
}

// In reports whether the bit is set in c (false for a CDB too short to
// hold it, and for the zero Bit).
func (b Bit) In(c CDB) bool { return b.Mask != 0 && c.Byte(int(b.Byte))&b.Mask != 0 }

// Desc describes one command a logical unit serves: what REPORT SUPPORTED
// OPERATION CODES reports of it (CommandInfo: opcode, service action, the
// CDB usage bitmap whose length is the CDB length, timeout), what Serve
// checks before running it, and what fault rules and traces read of it.
type Desc struct {
	CommandInfo
	// Medium: the command needs a ready medium (a loaded cartridge, a
	// started disk); otherwise it fails with the unit's NOT READY sense.
	Medium bool
	Class  Class
	Immed  Bit // the IMMED bit, if the command has one
	// Extent decodes what the CDB addresses on the medium (fault rules'
	// lba= and block= filters, traces); nil for a command that addresses
	// nothing. It must accept any CDB bytes, return false for one too
	// short, and not allocate.
	Extent func(CDB) (Extent, bool)
}

// Usage returns the Desc of the command whose CDB usage bitmap (SPC-5
// 6.35.3) is usage: usage[0] is the opcode, len(usage) the CDB length, and
// a bit is set for every CDB bit the unit evaluates (in the CONTROL byte,
// NACA: 04h). The With methods add the rest.
func Usage(usage ...byte) Desc {
	var op OpCode
	if len(usage) > 0 {
		op = OpCode(usage[0])
	}
	return Desc{CommandInfo: CommandInfo{OpCode: op, Usage: usage}}
}

// WithSA is d for service action sa of its opcode.
func (d Desc) WithSA(sa uint16) Desc { d.HasSA, d.ServiceAction = true, sa; return d }

// WithMedium is d needing a ready medium.
func (d Desc) WithMedium() Desc { d.Medium = true; return d }

// WithClass is d of class c.
func (d Desc) WithClass(c Class) Desc { d.Class = c; return d }

// WithImmed is d with its IMMED bit at bit mask of CDB byte b.
func (d Desc) WithImmed(b, mask uint8) Desc { d.Immed = Bit{Byte: b, Mask: mask}; return d }

// WithExtent is d whose extent f decodes.
func (d Desc) WithExtent(f func(CDB) (Extent, bool)) Desc { d.Extent = f; return d }

// WithTimeout is d with the nominal timeout REPORT SUPPORTED OPERATION
// CODES reports, in seconds.
func (d Desc) WithTimeout(seconds uint32) Desc { d.Timeout = seconds; return d }

// Op is one entry of a command table: the command's description and the
// method of U that runs it. Exactly one of Run and Respond is set: Run
// returns an error, which Serve turns into the response (ResponseFor: a
// *Error's sense, HARDWARE ERROR for anything else); Respond builds the
// response itself (tape sense with residues, SPC helpers).
type Op[U any] struct {
	Desc
	Run     func(U, *Command) error
	Respond func(U, *Command) Response
}

// Readiness tells Serve the state of a unit of type U. Serve calls the
// functions with the unit's commands serialised, as HandleCommand is; a
// nil function means never closed, or always ready.
type Readiness[U any] struct {
	// Closed reports whether the unit is gone (removed, shutting down):
	// every command then fails with NOT READY, LOGICAL UNIT NOT READY,
	// CAUSE NOT REPORTABLE.
	Closed func(U) bool
	// NotReady returns the sense of a command that needs the medium
	// (Desc.Medium) and true while there is none usable, and false when
	// the unit is ready.
	NotReady func(U) (Sense, bool)
}

// CommandID identifies one command of a Table: the opcode of the first
// (or only) entry of an opcode, and 256+k for its k-th further entry (a
// service action of an opcode that has one already, such as GET LBA
// STATUS beside READ CAPACITY(16)). Metrics count and fault rules select
// commands by CommandID, so two service actions of one opcode are two
// commands. An opcode the table does not serve has the opcode as its ID.
type CommandID uint16

// MaxCommandIDs bounds CommandID: the 256 opcodes and up to 16 further
// service actions in one table.
const MaxCommandIDs = 256 + 16

// CommandTable is a Table seen without its unit type: what the layers
// around a unit (fault rules, metrics, traces) read of its commands.
// Every *Table satisfies it.
type CommandTable interface {
	CommandNamer
	Set() CommandSet
	Lookup(op OpCode) *Desc
	Describe(cdb CDB) *Desc
	Extent(cdb CDB) (Extent, bool)
	All() iter.Seq2[CommandID, *Desc]
}

// Table is the command set of one kind of logical unit U, indexed by
// opcode: a lookup is one array index, and a scan of the service actions
// for the few opcodes that have them. A Table is immutable once built and
// shared by every unit of the kind.
type Table[U any] struct {
	set   CommandSet
	ready Readiness[U]
	first [256]uint8 // 1 + index in ops of the opcode's first entry; 0: not supported
	ops   []Op[U]    // in opcode order, then service action order
	ids   []CommandID
	extra [MaxCommandIDs - 256]uint8 // 1 + index in ops of CommandID 256+k; 0: none
	infos []CommandInfo
}

// NewTable returns the table of ops in command set cs, for units whose
// state ready tells. It panics on a
// table that is wrong by construction (a programmer error, caught by the
// package's tests): an entry without a usage bitmap or whose bitmap does
// not start with its opcode, with neither or both of Run and Respond, two
// entries for one command, or an opcode served both with and without a
// service action.
func NewTable[U any](cs CommandSet, ready Readiness[U], ops ...Op[U]) *Table[U] {
	t := &Table[U]{set: cs, ready: ready, ops: slices.Clone(ops)}
	slices.SortStableFunc(t.ops, func(a, b Op[U]) int {
		if a.OpCode != b.OpCode {
			return int(a.OpCode) - int(b.OpCode)
		}
		return int(a.ServiceAction) - int(b.ServiceAction)
	})
	if len(t.ops) > 255 {
		panic("scsi: command table over 255 entries")
	}
	for i := range t.ops {
		o := &t.ops[i]
		switch {
		case len(o.Usage) == 0 || o.Usage[0] != byte(o.OpCode):
			panic(fmt.Sprintf("scsi: %s: usage bitmap does not start with the opcode", o.Name(cs)))
		case (o.Run == nil) == (o.Respond == nil):
			panic(fmt.Sprintf("scsi: %s: exactly one of Run and Respond must be set", o.Name(cs)))
		}
		if t.first[o.OpCode] == 0 {
			t.first[o.OpCode] = uint8(i + 1)
			continue
		}
		p := &t.ops[i-1]
		if !o.HasSA || !p.HasSA || o.ServiceAction == p.ServiceAction {
			panic(fmt.Sprintf("scsi: %s: opcode %#02x listed twice", o.Name(cs), uint8(o.OpCode)))
		}
	}
	t.ids = make([]CommandID, len(t.ops))
	next := 0
	for i := range t.ops {
		if int(t.first[t.ops[i].OpCode]) == i+1 {
			t.ids[i] = CommandID(t.ops[i].OpCode)
			continue
		}
		if next == len(t.extra) {
			panic(fmt.Sprintf("scsi: %s: more than %d further service actions", t.ops[i].Name(cs), len(t.extra)))
		}
		t.ids[i] = CommandID(256 + next)
		t.extra[next] = uint8(i + 1)
		next++
	}
	infos := make([]CommandInfo, len(t.ops))
	for i := range t.ops {
		infos[i] = t.ops[i].CommandInfo
	}
	t.infos = WithCoreCommands(infos)
	return t
}

// Select returns a table of the entries of t for which keep is true (a
// unit whose configuration leaves out a command: a disk without
// provisioning has no UNMAP). Each kept command keeps its CommandID, so
// units of one kind agree on them whatever they leave out.
func (t *Table[U]) Select(keep func(*Desc) bool) *Table[U] {
	var ops []Op[U]
	var ids []CommandID
	for i := range t.ops {
		if keep(&t.ops[i].Desc) {
			ops = append(ops, t.ops[i])
			ids = append(ids, t.ids[i])
		}
	}
	s := NewTable(t.set, t.ready, ops...)
	s.extra = [len(t.extra)]uint8{}
	for i, id := range ids { // NewTable keeps the order of an ordered table
		s.ids[i] = id
		if id >= 256 {
			s.extra[id-256] = uint8(i + 1)
		}
	}
	return s
}

// Set is the command set the table belongs to.
func (t *Table[U]) Set() CommandSet { return t.set }

// Commands is what REPORT SUPPORTED OPERATION CODES lists (SPC.Commands):
// the table and the CoreCommands LIO answers for every unit, in opcode
// order. The slice is shared; callers must not modify it.
func (t *Table[U]) Commands() []CommandInfo { return t.infos }

// All yields the ID and description of every entry, in opcode order,
// then service action order.
func (t *Table[U]) All() iter.Seq2[CommandID, *Desc] {
	return func(yield func(CommandID, *Desc) bool) {
		for i := range t.ops {
			if !yield(t.ids[i], &t.ops[i].Desc) {
				return
			}
		}
	}
}

// Lookup returns the description of opcode op: of its one entry, or, for
// an opcode served with several service actions, of the first of them.
// It returns nil for an opcode the table does not serve.
func (t *Table[U]) Lookup(op OpCode) *Desc {
	i := t.first[op]
	if i == 0 {
		return nil
	}
	return &t.ops[i-1].Desc
}

// find returns 1 + the index of the entry serving cdb (its opcode and,
// for an opcode with service actions, its service action); 0 when the
// table does not serve the opcode; -1 when it serves the opcode but not
// the service action. cdb must not be empty.
func (t *Table[U]) find(cdb CDB) int {
	i := int(t.first[cdb[0]])
	if i == 0 || !t.ops[i-1].HasSA {
		return i
	}
	op := t.ops[i-1].OpCode
	sa := uint16(cdb.ServiceAction())
	if op == VariableLength {
		sa = cdb.VariableServiceAction()
	}
	for ; i <= len(t.ops) && t.ops[i-1].OpCode == op; i++ {
		if t.ops[i-1].ServiceAction == sa {
			return i
		}
	}
	return -1
}

// Describe returns the description of the entry serving cdb, nil when the
// table does not serve it (opcode or service action) or cdb is empty.
func (t *Table[U]) Describe(cdb CDB) *Desc {
	if len(cdb) == 0 {
		return nil
	}
	if i := t.find(cdb); i > 0 {
		return &t.ops[i-1].Desc
	}
	return nil
}

// Extent decodes what cdb addresses on the medium, by its command's entry
// (Desc.Extent); false for a command the table does not serve, one that
// addresses nothing, or a CDB too short for it. It never allocates.
func (t *Table[U]) Extent(cdb CDB) (Extent, bool) {
	d := t.Describe(cdb)
	if d == nil || d.Extent == nil {
		return Extent{}, false
	}
	return d.Extent(cdb)
}

// CommandID is the ID of the command cdb asks for: its entry's, or the
// opcode for one the table does not serve (a service action it does not
// serve counts as its opcode's first entry). It never allocates.
func (t *Table[U]) CommandID(cdb CDB) CommandID {
	if len(cdb) == 0 {
		return 0
	}
	if i := t.find(cdb); i > 0 {
		return t.ids[i-1]
	}
	return CommandID(cdb[0])
}

// CommandName is the name of command id in the table's command set, ""
// if the table does not serve it: the bounded `command` metric label
// and the op= of fault rules (CommandNamer). Commands are named after
// their service action where they have one (0x9e/0x10 read_capacity_16,
// 0xa3/0x0c report_supported_opcodes). It never allocates.
func (t *Table[U]) CommandName(id CommandID) string {
	var i uint8
	switch {
	case id < 256:
		i = t.first[id]
	case int(id-256) < len(t.extra):
		i = t.extra[id-256]
	}
	if i == 0 || t.ids[i-1] != id { // a Select left out the opcode's own entry
		return ""
	}
	return t.ops[i-1].Name(t.set)
}

// Senses of the spine, the same for every kind of unit.
var (
	senseClosed    = Sense{Key: NotReady, ASC: LogicalUnitNotReadyCause}
	senseInvalidOp = Sense{Key: IllegalRequest, ASC: InvalidCommandOperationCode}
	// A CDB shorter than its opcode's length lacks the field that would
	// be in error, so there is nothing for a field pointer to point at.
	senseShortCDB = Sense{Key: IllegalRequest, ASC: InvalidFieldInCDB}
)

// Serve runs cmd on unit u, whose common SPC state is s, after the steps
// every command takes, in this order:
//
//  1. a closed unit: NOT READY 04/00;
//  2. a pending unit attention (SAM-5 5.14; not for INQUIRY, REPORT
//     LUNS, REQUEST SENSE): UNIT ATTENTION, the attention consumed;
//  3. an opcode the table does not serve: ILLEGAL REQUEST 20/00 INVALID
//     COMMAND OPERATION CODE; a service action it does not serve of an
//     opcode it does: 24/00 INVALID FIELD IN CDB pointing at the SERVICE
//     ACTION field;
//  4. a CDB shorter than the command's length: 24/00, without a field
//     pointer (the transport normally guarantees the length);
//  5. NACA=1 in the CONTROL byte, which no unit supports (SAM-5 5.9):
//     24/00 pointing at bit 2 of the CONTROL byte;
//  6. a command that needs the medium while the unit is not ready: the
//     unit's NOT READY sense;
//
// then the command itself; an error it returns becomes sense through
// ResponseFor. Sense is returned in the unit's current format (D_SENSE).
// A nil cmd.Data is served as an empty buffer. Serve never panics on any
// CDB and does not allocate.
func (t *Table[U]) Serve(u U, s *SPC, cmd *Command) Response {
	return t.serve(u, s, cmd).WithFormat(s.SenseFormat)
}

func (t *Table[U]) serve(u U, s *SPC, cmd *Command) Response {
	if cmd.Data == nil {
		s.empty.Reset(nil)
		c := *cmd
		c.Data = &s.empty
		cmd = &c
	}
	if t.ready.Closed != nil && t.ready.Closed(u) {
		return CheckCondition(senseClosed)
	}
	if r, ok := s.TakeUnitAttention(cmd); ok {
		return r
	}
	cdb := cmd.CDB
	if len(cdb) == 0 {
		return CheckCondition(senseInvalidOp)
	}
	i := t.find(cdb)
	switch {
	case i == 0:
		return CheckCondition(senseInvalidOp)
	case i < 0:
		// The SERVICE ACTION field is at byte 1 (bytes 8-9 of a
		// variable-length CDB); a CDB too short to hold it has nothing
		// for the field pointer to point at.
		switch {
		case OpCode(cdb[0]) == VariableLength && len(cdb) > 9:
			return CheckCondition(InvalidFieldSense(8, 7))
		case OpCode(cdb[0]) != VariableLength && len(cdb) > 1:
			return CheckCondition(InvalidFieldSense(1, 4))
		}
		return CheckCondition(senseShortCDB)
	}
	o := &t.ops[i-1]
	n := len(o.Usage)
	if len(cdb) < n {
		return CheckCondition(senseShortCDB)
	}
	if cdb[n-1]&0x04 != 0 {
		return CheckCondition(InvalidFieldSense(n-1, 2))
	}
	if o.Medium && t.ready.NotReady != nil {
		if sense, bad := t.ready.NotReady(u); bad {
			return CheckCondition(sense)
		}
	}
	if o.Respond != nil {
		return o.Respond(u, cmd)
	}
	if err := o.Run(u, cmd); err != nil {
		return ResponseFor(err)
	}
	return Good
}
