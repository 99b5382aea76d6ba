package fault

import (
	"errors"
	"fmt"
	"hash/fnv"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/scsi"
)

// A Rule is one parsed fault rule: a filter (op, lba or tape position), a
// gate (every, after, count, prob) and one action. It is an immutable
// value; ParseRule builds one and String gives it back in canonical form.
// The zero Rule has no action and is rejected by SetRules.
type Rule struct {
	ops     []opToken // empty: any command
	lba     span      // disk
	block   span      // tape logical objects
	file    span      // tape file numbers
	part    int       // tape partition, -1 = any
	every   uint64    // 0 or 1: every matching command
	after   uint64    // let the first `after` matching commands pass
	count   uint64    // 0: unlimited
	prob    float64   // 0: not set (always)
	hasPart bool
	act     action
}

// span is [start, start+n); n == 0 means "not set".
type span struct{ start, n uint64 }

func (s span) set() bool { return s.n != 0 }

// opToken is one alternative of op=: a class, an opcode or a command name
// (resolved against the handler when the rule is installed).
type opToken struct {
	class uint8
	op    uint8
	isOp  bool
	name  string
}

type actionKind uint8

const (
	actNone actionKind = iota
	actSense
	actRecovered
	actBusy
	actTaskSetFull
	actTimeout
	actDelay
	actEarlyWarning
)

// actionNames are the values of Rule.Action and of the `action` metric
// label.
var actionNames = [...]string{
	actNone:         "none",
	actSense:        "sense",
	actRecovered:    "recovered",
	actBusy:         "busy",
	actTaskSetFull:  "task_set_full",
	actTimeout:      "timeout",
	actDelay:        "delay",
	actEarlyWarning: "early_warning",
}

type action struct {
	kind   actionKind
	key    scsi.SenseKey
	asc    scsi.ASC
	ascSet bool
	dur    time.Duration // delay=, timeout= (0: cmd_time_out + HoldMargin)
	bytes  uint64        // early_warning_after=
}

// Action names the rule's action, a bounded label value: sense, recovered,
// busy, task_set_full, timeout, delay or early_warning.
func (r Rule) Action() string { return actionNames[r.act.kind] }

// SenseKey is the sense key a sense= or recovered rule reports (RECOVERED
// ERROR for recovered, NO SENSE for early_warning_after), and false for
// the other actions.
func (r Rule) SenseKey() (scsi.SenseKey, bool) {
	switch r.act.kind {
	case actSense, actRecovered:
		return r.act.key, true
	case actEarlyWarning:
		return scsi.NoSense, true
	}
	return 0, false
}

// post reports whether the action is applied to the handler's response.
func (a *action) post() bool { return a.kind == actRecovered || a.kind == actEarlyWarning }

// String returns the rule in canonical form (keys in a fixed order,
// defaults omitted), which ParseRule accepts and maps to an equal rule.
func (r Rule) String() string {
	var b cfgstring.Builder
	if len(r.ops) > 0 {
		ops := make([]string, len(r.ops))
		for i, t := range r.ops {
			ops[i] = t.String()
		}
		b.Add("op", strings.Join(ops, "|"))
	}
	spanText := func(start string, sp span) string {
		if sp.n != 1 {
			return start + "+" + strconv.FormatUint(sp.n, 10)
		}
		return start
	}
	if r.lba.set() {
		b.Add("lba", spanText("0x"+strconv.FormatUint(r.lba.start, 16), r.lba))
	}
	if r.hasPart {
		b.Add("partition", strconv.Itoa(r.part))
	}
	for _, s := range []struct {
		key string
		sp  span
	}{{"file", r.file}, {"block", r.block}} {
		if s.sp.set() {
			b.Add(s.key, spanText(strconv.FormatUint(s.sp.start, 10), s.sp))
		}
	}
	for _, g := range []struct {
		key string
		v   uint64
		def uint64
	}{{"every", r.every, 1}, {"after", r.after, 0}, {"count", r.count, 0}} {
		if g.v != g.def && (g.key != "every" || g.v != 0) {
			b.Uint(g.key, g.v)
		}
	}
	if r.prob != 0 && r.prob != 1 {
		b.Add("prob", strconv.FormatFloat(r.prob, 'g', -1, 64))
	}
	a := r.act
	asc := func() string { return hexByte(uint8(a.asc>>8)) + "/" + hexByte(uint8(a.asc)) }
	switch a.kind {
	case actSense:
		if a.ascSet {
			b.Add("sense", a.key.String()+"/"+asc())
		} else {
			b.Add("sense", a.key.String())
		}
	case actRecovered:
		if a.ascSet {
			b.Add("recovered", asc())
		} else {
			b.Key("recovered")
		}
	case actBusy:
		b.Key("busy")
	case actTaskSetFull:
		b.Key("task_set_full")
	case actTimeout:
		if a.dur != 0 {
			b.Add("timeout", a.dur.String())
		} else {
			b.Key("timeout")
		}
	case actDelay:
		b.Add("delay", a.dur.String())
	case actEarlyWarning:
		b.Size("early_warning_after", a.bytes)
	}
	return b.String()
}

func hexByte(v uint8) string {
	const hex = "0123456789abcdef"
	return "0x" + string(hex[v>>4]) + string(hex[v&0xf])
}

func (t opToken) String() string {
	switch {
	case t.isOp:
		return hexByte(t.op)
	case t.name != "":
		return t.name
	}
	if t.class == 0 {
		return "any"
	}
	for _, c := range classNames {
		if c.class == t.class {
			return c.name
		}
	}
	return "any"
}

// ---- installed rules ----

// ruleState is the mutable part of an installed rule. It survives AddRule
// and RemoveRule of other rules, and is fresh after SetRules.
type ruleState struct {
	matched  atomic.Uint64 // commands that passed the filter
	injected atomic.Uint64 // times the action was applied
	written  atomic.Uint64 // early_warning_after: bytes written by successful WRITEs
}

// bound is a Rule resolved against one device.
type bound struct {
	Rule
	id uint64
	Selector
	hasProb  bool
	thresh   uint64 // prob threshold on a 53-bit draw
	salt     uint64 // the rule's PRNG stream: FNV-1a of its canonical text
	needsPos bool
	st       *ruleState
}

// MaxRules is the most rules one device holds; it bounds the `rule`
// metric label.
const MaxRules = 64

// env is what binding a rule needs to know about the device.
type env struct {
	kind       Kind
	cmds       scsi.CommandTable
	namer      scsi.CommandNamer
	positioner bool
	cmdTimeout time.Duration
}

// bind checks r against the device and resolves its command names.
func bind(r Rule, e *env, id uint64, st *ruleState) (*bound, error) {
	if r.act.kind == actNone {
		return nil, errors.New("no action")
	}
	b := &bound{Rule: r, id: id, st: st}
	switch e.kind {
	case Changer:
		switch {
		case r.lba.set(), r.block.set(), r.file.set(), r.hasPart:
			return nil, errors.New("lba=, block=, file= and partition= address a medium; this is a changer (filter with op=)")
		case r.act.kind == actEarlyWarning:
			return nil, errors.New("early_warning_after= is a tape action; this is a changer")
		}
	case Disk:
		switch {
		case r.block.set(), r.file.set(), r.hasPart:
			return nil, errors.New("block=, file= and partition= are tape positions; this is a disk (use lba=)")
		case r.act.kind == actEarlyWarning:
			return nil, errors.New("early_warning_after= is a tape action; this is a disk")
		}
	default:
		if r.lba.set() {
			return nil, errors.New("lba= is a disk range; this is a tape (use block=, file=, partition=)")
		}
		if r.block.set() || r.file.set() || r.hasPart {
			if !e.positioner {
				return nil, errors.New("block=, file= and partition= need a drive that reports its position (fault.Positioner)")
			}
			b.needsPos = true
		}
	}
	if r.act.kind == actTimeout && r.act.dur == 0 && e.cmdTimeout == 0 {
		return nil, errors.New("timeout: cmd_time_out is 0 (the kernel never fails the command), so give a hold time: timeout=DURATION")
	}
	sel, err := resolveOps(r.ops, e)
	if err != nil {
		return nil, err
	}
	b.Selector = sel
	if r.prob != 0 && r.prob < 1 {
		b.hasProb = true
		b.thresh = uint64(r.prob * (1 << 53))
	}
	h := fnv.New64a()
	h.Write([]byte(r.String()))
	b.salt = h.Sum64()
	return b, nil
}

// Selector is an op= value resolved against a device's command table:
// the commands it selects, by ID and by class. Rules filter with it, and
// so do traces (vscsictl trace --op), so op= means the same everywhere.
type Selector struct {
	ids     [(scsi.MaxCommandIDs + 63) / 64]uint64 // scsi.CommandID bitmap; all ones for any command
	classes uint8                                  // command classes the op= classes name
}

// NewSelector parses op (the rule grammar's op= value: classes, command
// names and opcodes separated by '|') and resolves it against cmds. With
// cmds nil it only checks op's syntax (names are resolved per device).
func NewSelector(op string, cmds scsi.CommandTable) (Selector, error) {
	ops, err := parseOps(op)
	if err != nil {
		return Selector{}, fmt.Errorf("op=%s: %w", op, err)
	}
	if cmds == nil {
		return Selector{}, nil
	}
	return resolveOps(ops, &env{kind: kindOf(cmds.Set()), cmds: cmds})
}

// Selects reports whether the selector selects command id of class c.
func (s *Selector) Selects(id scsi.CommandID, c scsi.Class) bool {
	id = min(id, scsi.MaxCommandIDs-1)
	return s.ids[id>>6]&(1<<(id&63)) != 0 || s.classes&uint8(c) != 0
}

// resolveOps resolves the op= alternatives against the device; none
// selects every command.
func resolveOps(ops []opToken, e *env) (Selector, error) {
	var s Selector
	if len(ops) == 0 {
		s.selectAll()
	}
	for _, t := range ops {
		switch {
		case t.isOp: // the opcode, with every service action of it
			s.selectID(scsi.CommandID(t.op))
			for id, d := range e.cmds.All() {
				if uint8(d.OpCode) == t.op {
					s.selectID(id)
				}
			}
		case t.name != "":
			id, ok := lookupName(e, t.name)
			if !ok {
				return Selector{}, fmt.Errorf("op=%s: the %s has no command of that name", t.name, e.kind)
			}
			s.selectID(id)
		case t.class == 0:
			s.selectAll()
		case e.kind == Changer:
			return Selector{}, fmt.Errorf("op=%s: a changer has no read, write or verify commands; name the command (op=move_medium) or give its opcode", t)
		default:
			s.classes |= t.class
		}
	}
	return s, nil
}

// selectID makes the selector select command id.
func (s *Selector) selectID(id scsi.CommandID) { s.ids[id>>6] |= 1 << (id & 63) }

// selectAll makes the selector select every command.
func (s *Selector) selectAll() {
	for i := range s.ids {
		s.ids[i] = ^uint64(0)
	}
}

// lookupName finds the command the handler names name (CommandNamer), or
// failing that the command of that name in the kind's command table, then
// the opcode of that name in its command set (scsi.CommandSet.Name, then
// the generic scsi.OpCode name). The tables take their names from the one
// scsi vocabulary, so a name means one command on every device that
// serves it.
func lookupName(e *env, name string) (scsi.CommandID, bool) {
	for _, n := range []scsi.CommandNamer{e.namer, e.cmds} {
		if n == nil {
			continue
		}
		for id := range scsi.CommandID(scsi.MaxCommandIDs) {
			if n.CommandName(id) == name {
				return id, true
			}
		}
	}
	cs := e.cmds.Set()
	for op := range 256 {
		if cs.Name(scsi.OpCode(op)) == name || scsi.OpCode(op).String() == name {
			return scsi.CommandID(op), true
		}
	}
	return 0, false
}

// position is the tape position before the command, loaded on first use.
type position struct {
	loaded bool
	part   int
	object uint64
	file   uint64
}

// match applies the filter to one command. firstBad is the first LBA the
// rule's range shares with a disk command's range (the command's own LBA
// without lba=).
func (b *bound) match(c *cmdInfo, p *position, pos Positioner) (firstBad uint64, ok bool) {
	if b.ids[c.id>>6]&(1<<(c.id&63)) == 0 && b.classes&c.class == 0 {
		return 0, false
	}
	firstBad = c.lba
	if b.lba.set() {
		n := c.n
		if c.toEnd {
			n = ^uint64(0)
		}
		if !c.hasRange || !intersect(c.lba, n, b.lba.start, b.lba.n) {
			return 0, false
		}
		firstBad = max(c.lba, b.lba.start)
	}
	if b.needsPos {
		if !p.loaded {
			p.part, p.object, p.file = pos.Position()
			p.loaded = true
		}
		if b.hasPart && p.part != b.part {
			return 0, false
		}
		if b.file.set() && !intersect(p.file, 1, b.file.start, b.file.n) {
			return 0, false
		}
		if b.block.set() && !intersect(p.object, c.objects(), b.block.start, b.block.n) {
			return 0, false
		}
	}
	if b.act.kind == actEarlyWarning && c.class&(classWrite|classFilemarks) == 0 {
		return 0, false
	}
	return firstBad, true
}

// gate counts a matching command and decides whether the action applies
// to it: not spent (count), past after=, the every=-th, and the
// pseudo-random draw under prob=.
func (b *bound) gate(seed uint64) bool {
	m := b.st.matched.Add(1)
	if b.count != 0 && b.st.injected.Load() >= b.count {
		return false
	}
	if m <= b.after {
		return false
	}
	if b.every > 1 && (m-b.after)%b.every != 0 {
		return false
	}
	if b.hasProb && draw(seed, b.salt, m)>>11 >= b.thresh {
		return false
	}
	return true
}

// spent reports whether a count= rule has used up its count.
func (b *bound) spent() bool { return b.count != 0 && b.st.injected.Load() >= b.count }

// draw is a counter-based pseudo-random 64-bit value (the SplitMix64
// finaliser over the seed, a stream and an index): the n-th draw of a
// stream depends on nothing else, so a rule's faults do not shift when
// other rules or commands come and go.
func draw(seed, stream, n uint64) uint64 {
	return mix(mix(seed^stream) + n*0x9e3779b97f4a7c15)
}

func mix(x uint64) uint64 {
	x ^= x >> 30
	x *= 0xbf58476d1ce4e5b9
	x ^= x >> 27
	x *= 0x94d049bb133111eb
	x ^= x >> 31
	return x
}

// defaultASC is the additional sense code of a sense= action without one.
func defaultASC(k scsi.SenseKey, c *cmdInfo) scsi.ASC {
	switch k {
	case scsi.MediumError:
		if c.class&(classWrite|classFilemarks) != 0 {
			return scsi.WriteError
		}
		return scsi.UnrecoveredReadError
	case scsi.RecoveredError:
		return scsi.RecoveredDataWithRetries
	case scsi.NotReady:
		return scsi.LogicalUnitNotReadyCause
	case scsi.HardwareError:
		return scsi.InternalTargetFailure
	case scsi.IllegalRequest:
		return scsi.InvalidFieldInCDB
	case scsi.UnitAttention:
		return scsi.PowerOnResetOrBusDeviceReset
	case scsi.DataProtect:
		return scsi.WriteProtected
	case scsi.BlankCheck:
		return scsi.EndOfDataDetected
	case scsi.VolumeOverflow:
		return scsi.EndOfPartitionMediumDetected
	}
	return scsi.NoAdditionalSense
}

// sense builds the CHECK CONDITION sense of a sense= action for command c
// (see the package documentation for INFORMATION).
func (b *bound) sense(kind Kind, c *cmdInfo, firstBad uint64, f scsi.SenseFormat) scsi.Sense {
	s := scsi.Sense{Key: b.act.key, ASC: b.act.asc, Format: f}
	if !b.act.ascSet {
		s.ASC = defaultASC(b.act.key, c)
	}
	if kind == Disk {
		if (s.Key == scsi.MediumError || s.Key == scsi.HardwareError) && c.hasRange {
			s.Valid, s.Info = true, int64(firstBad) // AppendDescriptor writes the full 64 bits
		}
		return s
	}
	switch {
	case c.hasLen && c.class&(classRead|classWrite|classVerify|classFilemarks) != 0:
		// INFORMATION = requested minus actual: nothing moved, so the
		// whole TRANSFER LENGTH (or filemark count).
		s.Valid, s.Info = true, int64(c.n)
	case c.hasLen && c.class == classPosition:
		s.Valid, s.Info = true, c.count
	}
	if s.Key == scsi.VolumeOverflow {
		s.EOM = true
	}
	return s
}
