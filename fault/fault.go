package fault

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sync"
	"sync/atomic"
	"time"

	"github.com/vscsid/vscsid/scsi"
)

// Handler is scsi.Handler (and so target.Handler) under a local name: this
// package does not import the transport.
type Handler = scsi.Handler

// Positioner is implemented by a tape drive that reports its logical
// position: the partition, the logical object number (blocks and
// filemarks from the beginning of the partition, as READ POSITION reports
// it) and the file number (filemarks passed). It must be cheap and safe to
// call from the command goroutine between commands. block=, file= and
// partition= rules and the positioning times of the tape model need it.
type Positioner interface {
	Position() (partition int, object, file uint64)
}

// MediumCounter is implemented by a tape drive that compresses:
// MediumBytes is the data bytes it has moved to and from the medium so
// far, after compression. The timing model's rate then applies to those
// bytes, as a drive's tape speed does, rather than to the transfer: a
// compressible stream goes faster.
type MediumCounter interface {
	MediumBytes() uint64
}

// SenseFormatReporter is implemented by a handler that can say which
// sense format (D_SENSE) it currently uses, so that injected sense data
// matches it. Without it the wrapper follows the handler's last CHECK
// CONDITION.
type SenseFormatReporter interface {
	CurrentSenseFormat() scsi.SenseFormat
}

// HoldMargin is how long past cmd_time_out a timeout rule without a hold
// time keeps a command: TCMU's timer fires up to a second late
// (round_jiffies_up).
const HoldMargin = 2 * time.Second

// holdPoll is how often a held command looks for an ABORT TASK.
const holdPoll = 10 * time.Millisecond

// Options configure a Device.
type Options struct {
	// Commands is the command table of the wrapped handler's kind
	// (disk.Commands, tape.Commands, changer.Commands): its command set
	// decides which filters rules may use and how CDBs are decoded, and
	// its entries give each command's name, class and IMMED bit.
	// Required.
	Commands scsi.CommandTable
	// CmdTimeout is the device's TCMU cmd_time_out in force (0 = the
	// kernel never expires commands). It caps every delay and sets the
	// default hold of a timeout rule. Pass the effective value: a daemon
	// setting of 0 that keeps the kernel default is 30 s here.
	CmdTimeout time.Duration
	// Seed seeds the pseudo-random draws of prob= rules and of the
	// timing jitter.
	Seed uint64
	// SenseFormat is the sense format of injected CHECK CONDITIONs until
	// the handler shows its own (see SenseFormatReporter).
	SenseFormat scsi.SenseFormat
	// Rules and Timing are installed at start (they may be empty).
	Rules  []Rule
	Timing Timing
	// Clock is the time source; nil means the real clock.
	Clock Clock
	// Aborts tells a held command (a timeout rule) that the initiator
	// aborted it, so that it ends then, as a real device drops an
	// aborted task: the transport's tcmu.CanReportAborts and
	// tcmu.Aborted. Nil: a held command is held for its whole time.
	Aborts AbortReporter
	// Depth is how many commands a disk serves at once (0 and 1: one at
	// a time, in ring order). Above 1 the Device is a concurrent handler
	// (tcmu.ConcurrentHandler): the delays of that many commands (their
	// latency, delay= rules and rate) run at the same time, as a real
	// disk's queue overlaps them, while the wrapped handler still sees
	// one command at a time. Disks only: a tape drive or a changer is
	// sequential. Fixed for the Device's life.
	Depth int
}

// MaxDepth bounds Options.Depth: each command in service holds a goroutine
// and a clock, and LIO's queue to a TCMU device is deeper than any disk's.
const MaxDepth = 256

// AbortReporter is the transport's view of ABORT TASK for the command
// being served under ctx (tcmu.CanReportAborts, tcmu.Aborted).
type AbortReporter interface {
	CanReportAborts(ctx context.Context) bool
	Aborted(ctx context.Context) bool
}

// Device is a Handler that injects faults and delays in front of another.
//
// Concurrency: with Depth 0 or 1, HandleCommand must not be called
// concurrently with itself (the transport's in-order loop calls it). With
// a Depth above 1 up to Depth calls may run at once (the transport's
// workers, through Concurrent): the rule and timing state and the wrapped
// handler are then used under a mutex, and only the sleeps overlap. All
// other methods may be called from any goroutine at any time, also while
// commands run.
type Device struct {
	h        Handler
	namer    scsi.CommandNamer
	pos      Positioner
	medium   MediumCounter
	fmtr     SenseFormatReporter
	env      env
	seed     uint64
	maxDelay time.Duration // per-command delay cap, MaxInt64 = none
	clock    Clock
	aborts   AbortReporter
	plan     atomic.Pointer[plan]
	st       stats

	mu     sync.Mutex // serialises the writers of plan
	nextID uint64

	// depth > 1: cmu serialises the command path but for its sleeps, and
	// clocks hands each command in service a clock of its own (sharing
	// one epoch, so the timing model's instants compare).
	depth  int
	cmu    sync.Mutex
	clocks chan Clock

	// Owned by the command goroutine (with depth > 1: under cmu).
	format  scsi.SenseFormat
	scratch [32]byte
	sub     scsi.Command
	prefix  scsi.Buffer // the Data-Out of sub, for a write
}

// plan is the immutable set of rules and timing in force; nil when there
// is neither.
type plan struct {
	rules []*bound
	timer *timer
}

// New wraps h. It checks opts.Rules and opts.Timing against the device
// (disk or tape, the handler's command names, whether it reports its
// position).
func New(h Handler, opts Options) (*Device, error) {
	if h == nil {
		return nil, errors.New("fault: New needs a handler")
	}
	if opts.Commands == nil {
		return nil, errors.New("fault: New needs the handler's command table (Options.Commands)")
	}
	kind := kindOf(opts.Commands.Set())
	if opts.CmdTimeout < 0 {
		return nil, errors.New("fault: negative cmd_time_out")
	}
	d := &Device{h: h, seed: opts.Seed, clock: opts.Clock, aborts: opts.Aborts, format: opts.SenseFormat, maxDelay: math.MaxInt64}
	d.namer, _ = scsi.As[scsi.CommandNamer](h)
	d.pos, _ = scsi.As[Positioner](h)
	d.medium, _ = scsi.As[MediumCounter](h)
	d.fmtr, _ = scsi.As[SenseFormatReporter](h)
	d.env = env{kind: kind, cmds: opts.Commands, namer: d.namer, positioner: d.pos != nil, cmdTimeout: opts.CmdTimeout}
	if opts.CmdTimeout > 0 {
		d.maxDelay = opts.CmdTimeout - min(time.Second, opts.CmdTimeout/2)
	}
	if d.clock == nil {
		d.clock = newRealClock()
	}
	switch {
	case opts.Depth < 0 || opts.Depth > MaxDepth:
		return nil, fmt.Errorf("fault: depth %d: want 1..%d", opts.Depth, MaxDepth)
	case opts.Depth > 1 && kind != Disk:
		return nil, fmt.Errorf("fault: depth %d: only a disk serves commands at once (a tape drive and a changer are sequential)", opts.Depth)
	case opts.Depth > 1:
		d.depth = opts.Depth
		d.clocks = make(chan Clock, opts.Depth)
		rc, _ := d.clock.(*realClock)
		for range opts.Depth {
			if rc != nil {
				d.clocks <- rc.sibling()
			} else {
				d.clocks <- d.clock // an injected clock serves every command
			}
		}
	}
	if err := d.SetTiming(opts.Timing); err != nil {
		return nil, err
	}
	if err := d.SetRules(opts.Rules); err != nil {
		return nil, err
	}
	return d, nil
}

// Concurrent implements tcmu.ConcurrentHandler: the Depth it was made
// with (0 with none, so the transport serves it in ring order).
func (d *Device) Concurrent() int { return d.depth }

// MaxDelay is the cap on the delay of one command (0: none).
func (d *Device) MaxDelay() time.Duration {
	if d.maxDelay == math.MaxInt64 {
		return 0
	}
	return d.maxDelay
}

// Unwrap returns the wrapped handler: scsi.As finds its optional
// operations (command names, LUN reset, reconfiguration, io.Closer)
// through it, so Device does not forward them.
func (d *Device) Unwrap() Handler { return d.h }

// ---- rule and timing management ----

// SetRules replaces all rules; their counters start at zero and they get
// new IDs. An empty list removes every rule. On error nothing changes.
func (d *Device) SetRules(rules []Rule) error {
	if len(rules) > MaxRules {
		return fmt.Errorf("fault: %d rules, at most %d per device", len(rules), MaxRules)
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	bs := make([]*bound, 0, len(rules))
	for i, r := range rules {
		b, err := bind(r, &d.env, d.nextID+uint64(i)+1, &ruleState{})
		if err != nil {
			return fmt.Errorf("rule %d %q: %w", i, r.String(), err)
		}
		bs = append(bs, b)
	}
	d.nextID += uint64(len(rules))
	d.publish(bs, d.current().timer)
	return nil
}

// AddRule appends a rule and returns its ID. The other rules keep their
// counters.
func (d *Device) AddRule(r Rule) (uint64, error) {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := d.current()
	if len(cur.rules) >= MaxRules {
		return 0, fmt.Errorf("fault: already %d rules, at most %d per device", len(cur.rules), MaxRules)
	}
	b, err := bind(r, &d.env, d.nextID+1, &ruleState{})
	if err != nil {
		return 0, fmt.Errorf("rule %q: %w", r.String(), err)
	}
	d.nextID++
	d.publish(append(cur.rules[:len(cur.rules):len(cur.rules)], b), cur.timer)
	return b.id, nil
}

// ErrNoRule is returned by RemoveRule for an ID that is not installed.
var ErrNoRule = errors.New("fault: no such rule")

// RemoveRule removes the rule with the given ID; the others keep their
// counters.
func (d *Device) RemoveRule(id uint64) error {
	d.mu.Lock()
	defer d.mu.Unlock()
	cur := d.current()
	for i, b := range cur.rules {
		if b.id == id {
			rest := make([]*bound, 0, len(cur.rules)-1)
			rest = append(append(rest, cur.rules[:i]...), cur.rules[i+1:]...)
			d.publish(rest, cur.timer)
			return nil
		}
	}
	return fmt.Errorf("%w: %d", ErrNoRule, id)
}

// Clear removes every rule (the timing stays).
func (d *Device) Clear() {
	d.mu.Lock()
	defer d.mu.Unlock()
	d.publish(nil, d.current().timer)
}

// SetTiming replaces the timing model; its state (token bucket, tape
// buffer and position estimate) starts afresh. The zero Timing removes it.
func (d *Device) SetTiming(t Timing) error {
	var tm *timer
	if !t.IsZero() {
		var err error
		if tm, err = newTimer(t, d.env.kind); err != nil {
			return fmt.Errorf("timing %q: %w", t.String(), err)
		}
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	d.publish(d.current().rules, tm)
	return nil
}

// Timing returns the timing model in force.
func (d *Device) Timing() Timing {
	if p := d.plan.Load(); p != nil && p.timer != nil {
		return p.timer.cfg
	}
	return Timing{}
}

// Seed returns the seed of the device's pseudo-random draws
// (Options.Seed): a recording keeps it so that a replay draws the same.
func (d *Device) Seed() uint64 { return d.seed }

// Rules returns the installed rules in evaluation order.
func (d *Device) Rules() []Rule {
	p := d.plan.Load()
	if p == nil {
		return nil
	}
	out := make([]Rule, len(p.rules))
	for i, b := range p.rules {
		out[i] = b.Rule
	}
	return out
}

// Injected returns the counters of the installed rules, in evaluation
// order.
func (d *Device) Injected() []RuleStats {
	p := d.plan.Load()
	if p == nil {
		return nil
	}
	out := make([]RuleStats, len(p.rules))
	for i, b := range p.rules {
		out[i] = RuleStats{
			ID: b.id, Rule: b.Rule, Action: b.Action(),
			Matched: b.st.matched.Load(), Injected: b.st.injected.Load(), Spent: b.spent(),
		}
	}
	return out
}

// Stats returns the delay and timeout counters.
func (d *Device) Stats() Stats { return d.st.snapshot() }

// current returns the plan in force, never nil. Callers hold d.mu.
func (d *Device) current() *plan {
	if p := d.plan.Load(); p != nil {
		return p
	}
	return &plan{}
}

// publish installs a new plan (nil when empty: the fast path).
func (d *Device) publish(rules []*bound, tm *timer) {
	if len(rules) == 0 && tm == nil {
		d.plan.Store(nil)
		return
	}
	d.plan.Store(&plan{rules: rules, timer: tm})
}

// ---- the command path ----

// HandleCommand implements target.Handler.
func (d *Device) HandleCommand(ctx context.Context, cmd *scsi.Command) scsi.Response {
	p := d.plan.Load()
	if d.depth == 0 {
		if p == nil {
			return d.h.HandleCommand(ctx, cmd)
		}
		return d.handle(ctx, p, cmd, d.clock)
	}
	clk := <-d.clocks // never waits: at most depth commands are in service
	d.cmu.Lock()
	var r scsi.Response
	if p == nil {
		r = d.h.HandleCommand(ctx, cmd)
	} else {
		r = d.handle(ctx, p, cmd, clk)
	}
	d.cmu.Unlock()
	d.clocks <- clk
	return r
}

// sleep waits dur on clk; with depth > 1 without cmu, so the delays of the
// commands in service overlap.
func (d *Device) sleep(ctx context.Context, clk Clock, dur time.Duration) error {
	if d.depth == 0 {
		return clk.Sleep(ctx, dur)
	}
	d.cmu.Unlock()
	err := clk.Sleep(ctx, dur)
	d.cmu.Lock()
	return err
}

var (
	busy        = scsi.Response{Status: scsi.StatusBusy}
	taskSetFull = scsi.Response{Status: scsi.StatusTaskSetFull}
)

// handle serves cmd under the plan p, sleeping on clk (with depth > 1, it
// is called and returns with cmu held; sleep lets go of it meanwhile).
func (d *Device) handle(ctx context.Context, p *plan, cmd *scsi.Command, clk Clock) scsi.Response {
	var c cmdInfo
	decode(d.env.kind, d.env.cmds, cmd.CDB, &c)
	var (
		pos      position
		delay    time.Duration
		armed    uint64 // post rules that passed their gate
		ew       uint64 // early_warning_after rules that passed their filter
		term     *bound
		firstBad uint64
	)
	for i, b := range p.rules {
		fb, ok := b.match(&c, &pos, d.pos)
		if !ok {
			continue
		}
		if b.act.kind == actEarlyWarning {
			ew |= 1 << i
		}
		if !b.gate(d.seed) {
			continue
		}
		if b.act.kind == actDelay {
			delay = satAdd(delay, b.act.dur)
			b.st.injected.Add(1)
			cmd.Acted |= scsi.ActedFault
			continue
		}
		if b.act.post() {
			armed |= 1 << i
			continue
		}
		term, firstBad = b, fb
		break
	}
	if term != nil {
		cmd.Acted |= scsi.ActedFault
		if term.act.kind == actTimeout {
			return d.hold(ctx, term, clk)
		}
	}
	tm := p.timer
	if tm != nil {
		if l := tm.latency(d.seed); l > 0 {
			delay = satAdd(delay, l)
			cmd.Acted |= scsi.ActedTiming
		}
	}
	budget := d.maxDelay
	var slept time.Duration
	clamped := false
	if delay > 0 {
		if delay > budget {
			delay, clamped = budget, true
		}
		budget -= delay
		slept = delay
		if err := d.sleep(ctx, clk, delay); err != nil {
			d.st.interrupted.Add(1)
			d.account(slept, clamped)
			return busy
		}
	}
	if term != nil {
		d.account(slept, clamped)
		return d.inject(ctx, term, &c, cmd, firstBad)
	}
	var arr time.Duration
	var medium uint64
	if tm != nil {
		tm.before(&c, d.pos)
		arr = clk.Now()
		if d.medium != nil {
			medium = d.medium.MediumBytes()
		}
	}
	r := d.h.HandleCommand(ctx, cmd)
	d.learn(&r)
	if tm != nil {
		var moved uint64
		switch {
		case d.medium != nil:
			moved = d.medium.MediumBytes() - medium
		case cmd.Data != nil:
			moved = uint64(cmd.Data.Written() + cmd.Data.Consumed())
		}
		done := tm.after(arr, &c, moved, &r, d.pos)
		if wait := done - clk.Now(); wait > 0 {
			cmd.Acted |= scsi.ActedTiming
			if wait > budget {
				wait, clamped = budget, true
			}
			slept += wait
			if err := d.sleep(ctx, clk, wait); err != nil {
				d.st.interrupted.Add(1)
			}
		}
	}
	d.account(slept, clamped)
	if ew != 0 && c.class&classWrite != 0 && cmd.Data != nil {
		// What the drive took, whatever it answered (its own early
		// warning or a VOLUME OVERFLOW may still have written data).
		for i, b := range p.rules {
			if ew&(1<<i) != 0 {
				b.st.written.Add(uint64(cmd.Data.Consumed()))
			}
		}
	}
	if armed != 0 && r.Status == scsi.StatusGood {
		if pr := d.post(p, armed, r); pr != r {
			cmd.Acted |= scsi.ActedFault
			return pr
		}
	}
	return r
}

// account records the delay one command got.
func (d *Device) account(slept time.Duration, clamped bool) {
	if clamped {
		d.st.clamped.Add(1)
	}
	if slept > 0 {
		d.st.observe(slept)
	}
}

// learn follows the handler's sense format.
func (d *Device) learn(r *scsi.Response) {
	if r.Status == scsi.StatusCheckCondition {
		d.format = r.Sense.Format
	}
}

func (d *Device) senseFormat() scsi.SenseFormat {
	if d.fmtr != nil {
		return d.fmtr.CurrentSenseFormat()
	}
	return d.format
}

// inject answers a command with a terminal action instead of the handler.
func (d *Device) inject(ctx context.Context, b *bound, c *cmdInfo, cmd *scsi.Command, firstBad uint64) scsi.Response {
	switch b.act.kind {
	case actBusy:
		b.st.injected.Add(1)
		return busy
	case actTaskSetFull:
		b.st.injected.Add(1)
		return taskSetFull
	}
	key := b.act.key
	if d.env.kind == Disk && c.ext.Partial && c.hasRange && firstBad > c.lba &&
		(key == scsi.MediumError || key == scsi.HardwareError) {
		// The blocks before the first failing LBA are transferred: sd
		// completes (INFORMATION - LBA) blocks of the request as good.
		// A write of them gets exactly their Data-Out (a disk refuses
		// Data-Out longer than the transfer length); a read may fill
		// the start of the whole buffer.
		data := cmd.Data
		if scsi.Class(c.class)&scsi.ClassWrite != 0 && c.n > 0 {
			d.prefix.ResetPrefix(cmd.Data, int(uint64(cmd.Data.Len())/c.n*(firstBad-c.lba)))
			data = &d.prefix
		}
		d.sub = scsi.Command{CDB: c.ext.WithLength(d.scratch[:], cmd.CDB, firstBad-c.lba), Data: data}
		r := d.h.HandleCommand(ctx, &d.sub)
		d.sub = scsi.Command{}
		if data != cmd.Data {
			cmd.Data.Discard(data.Consumed())
		}
		d.learn(&r)
		if r.Status != scsi.StatusGood {
			return r // a genuine failure of the good part wins
		}
	}
	b.st.injected.Add(1)
	return scsi.CheckCondition(b.sense(d.env.kind, c, firstBad, d.senseFormat()))
}

// hold is the timeout action: no answer within cmd_time_out.
func (d *Device) hold(ctx context.Context, b *bound, clk Clock) scsi.Response {
	dur := b.act.dur
	if dur == 0 {
		dur = d.env.cmdTimeout + HoldMargin
	}
	b.st.injected.Add(1)
	d.st.held.Add(1)
	if d.aborts != nil && d.aborts.CanReportAborts(ctx) {
		// Like a real device, drop the task when the initiator aborts
		// it (sd's timeout shorter than cmd_time_out: ABORT TASK), so
		// the abort completes now instead of at cmd_time_out.
		end := clk.Now() + dur
		for left := dur; left > 0; left = end - clk.Now() {
			if err := d.sleep(ctx, clk, min(left, holdPoll)); err != nil {
				d.st.interrupted.Add(1)
				return busy
			}
			if d.aborts.Aborted(ctx) {
				return scsi.Response{Status: scsi.StatusTaskAborted}
			}
		}
		return scsi.CheckCondition(scsi.Sense{Key: scsi.AbortedCommand, ASC: scsi.LogicalUnitCommunicationTimeout, Format: d.senseFormat()})
	}
	if err := d.sleep(ctx, clk, dur); err != nil {
		d.st.interrupted.Add(1)
		return busy
	}
	// The kernel has failed the command by now; this completion only
	// frees its ring slot.
	return scsi.CheckCondition(scsi.Sense{Key: scsi.AbortedCommand, ASC: scsi.LogicalUnitCommunicationTimeout, Format: d.senseFormat()})
}

// post applies the first armed recovered or early-warning rule that
// fires to r, a GOOD response.
func (d *Device) post(p *plan, armed uint64, r scsi.Response) scsi.Response {
	for i, b := range p.rules {
		if armed&(1<<i) == 0 {
			continue
		}
		switch b.act.kind {
		case actRecovered:
			s := scsi.Sense{Key: scsi.RecoveredError, ASC: b.act.asc, Format: d.senseFormat()}
			if !b.act.ascSet {
				s.ASC = defaultASC(scsi.RecoveredError, nil) // needs no command
			}
			b.st.injected.Add(1)
			return scsi.CheckCondition(s)
		case actEarlyWarning:
			if b.st.written.Load() >= b.act.bytes {
				b.st.injected.Add(1)
				s := scsi.EarlyWarning
				s.Format = d.senseFormat()
				return scsi.CheckCondition(s)
			}
		}
	}
	return r
}

// Check validates opts (its rules, timing and depth) as New does for a
// handler of the command table opts.Commands, without one: a tape drive
// is taken to report its position, as tape.Drive does. The config
// checker uses it, so that a bad fault block is refused before any
// device is built.
func Check(opts Options) error {
	var h Handler = checkHandler{}
	if opts.Commands != nil && kindOf(opts.Commands.Set()) == Tape {
		h = checkPositioner{}
	}
	_, err := New(h, opts)
	return err
}

// checkHandler and checkPositioner stand for the handler in Check; they
// serve no command.
type (
	checkHandler    struct{ Handler }
	checkPositioner struct{ checkHandler }
)

func (checkPositioner) Position() (int, uint64, uint64) { return 0, 0, 0 }
