package tcmu

import (
	"context"
	"errors"
	"fmt"
	"io"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"
	"time"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
)

// A Notifier is the doorbell pair of one TCMU device: the UIO file in
// production, a channel in tests (targettest.Kernel).
type Notifier interface {
	// Wait blocks until the kernel has signalled new ring entries since
	// the previous Wait, or ctx is done (then it returns ctx.Err()).
	Wait(ctx context.Context) error
	// Kick tells the kernel that cmd_tail moved: it reaps completions only
	// when kicked.
	Kick() error
}

// The mid-batch kick rule. One Kick per batch is the cheap case
// (tcmu-runner does only that): a Kick is a write(2) into
// tcmu_irqcontrol, which reaps every completion up to cmd_tail at once.
// While the device works through a long batch, finished commands would
// otherwise wait for the whole batch, and their data-area blocks (freed
// only when reaped) could leave the kernel without room for the next
// commands, which it then holds in its qfull queue until a Kick. So a
// batch also kicks when
//   - kickEvery completions are waiting, or
//   - the waiting completions hold a quarter of the data area, or
//   - the oldest waiting completion finished kickInterval ago (slow
//     commands: timing models, large store transfers).
//
// The interval is a millisecond, not less: on a slow host (TCG) most
// commands take longer than a shorter one, which would then kick after
// every command and double the wake-ups.
const (
	kickEvery    = 16
	kickInterval = time.Millisecond
)

// yieldEvery bounds how long the in-order loop goes without passing
// through the Go scheduler. The loop blocks in epoll_wait(2), and a
// goroutine that comes back from a system call to the P it left resumes
// without a scheduling pass, so to the runtime's monitor (sysmon) it looks
// like one goroutine running for ever: after 10 ms (forcePreemptNS) sysmon
// preempts it with a signal and takes its P away during the next wait, and
// each time it does it goes back to polling every 20 µs: several system
// calls per command. A runtime.Gosched every few milliseconds is a
// scheduling pass that costs one wake-up of an idle thread, and sysmon
// then sleeps 10 ms at a time. docs/performance.md has the
// measurements.
const yieldEvery = 4 * time.Millisecond

// RingInfo describes the TCMU limits in force for a device, as the kernel
// set them in the mailbox.
type RingInfo struct {
	Version    uint16
	Flags      uint16 // TCMU_MAILBOX_FLAG_CAP_*: FlagOOOC, FlagReadLen, FlagTMR, FlagKeepBuf
	CmdrOffset uint32 // command ring offset in the mapping
	CmdrSize   uint32 // command ring bytes
	DataOffset uint64 // data area offset in the mapping
	DataSize   uint64 // data area bytes: the largest transfer one command can have
	MapSize    uint64 // bytes mapped
	Workers    int    // > 0: commands are served by that many goroutines with out-of-order completion
}

// Has reports whether the kernel offers capability f.
func (i RingInfo) Has(f uint16) bool { return i.Flags&f == f }

// Device serves one TCMU ring with one Handler.
//
// Concurrency: Run is called once, by the owner, usually in its own
// goroutine; the device's loop then is the only reader and writer of the
// ring. Stats and Info may be called from any goroutine at any time.
type Device struct {
	r   *ring
	n   Notifier
	h   Handler
	log *zap.Logger
	// logCmds: the logger takes debug lines (--log.level debug), which
	// log every command. The level is fixed for the daemon's life, so
	// the per-command path tests a bool, not the logger's cores.
	logCmds bool
	namer   scsi.CommandNamer
	reset   scsi.Resetter // nil unless the handler implements it and runs in order
	info    RingInfo
	readLen bool
	epoch   time.Time
	st      stats
	started atomic.Bool
	failed  atomic.Bool
	// pollWindow: nanoseconds the in-order loop polls an empty ring
	// before it blocks (poll.go); 0 blocks at once.
	pollWindow atomic.Int64

	// Owned by the loop goroutine.
	tail          uint32 // completion cursor: published cmd_tail
	readPos       uint32 // next entry to hand out
	scanPos       uint32 // entries before it have valid headers and their TMRs applied
	inflight      int    // commands between tail and readPos not yet completed
	seen          idSet  // cmd_ids of scanned, not yet handed out commands
	aborted       idSet  // of those, the ones a TMR listed
	unkicked      int    // cmd_tail moves since the last Kick
	unkickedBytes uint64 // data-area bytes of the completions among them
	firstUnkicked int64  // when the oldest of them finished
	kickBytes     uint64 // unkickedBytes that force a Kick: a quarter of the data area
	yielded       int64  // when the in-order loop last called runtime.Gosched (yieldEvery)
	batch         int
	c0            *cmdCtx
	sense         [SenseBufferSize]byte

	// The command the in-order loop is running (Aborted): running while
	// its handler runs, cur its cmd_id, curAborted once a TMR listed it;
	// resetPending defers a LUN RESET seen meanwhile until it returns.
	running, curAborted, resetPending bool
	cur                               uint16

	// Tracing (trace.go): tracers is the set of attached rings, changed
	// under traceMu; the loop loads it once per command. tracing says
	// the loop found rings at the last completion (it then keeps scan
	// marks); traceSeq counts the commands traced.
	traceMu  sync.Mutex
	tracers  atomic.Pointer[tracers]
	tracing  bool
	traceSeq uint64
	marks    struct {
		buf      [scanMarks]scanMark
		first, n int
	}
}

type idSet [(cmdIDMax + 1) / 64]uint64

func (s *idSet) set(id uint16)      { s[id>>6] |= 1 << (id & 63) }
func (s *idSet) has(id uint16) bool { return s[id>>6]&(1<<(id&63)) != 0 }
func (s *idSet) del(id uint16)      { s[id>>6] &^= 1 << (id & 63) }

// NewDevice returns a Device over mem, a TCMU mapping laid out by the
// kernel (mailbox, command ring, data area), signalled through n. It
// validates the mailbox. Serving starts with Run.
//
// If h is a ConcurrentHandler asking for more than one worker and the
// kernel offers out-of-order completion, commands are served concurrently.
func NewDevice(mem []byte, n Notifier, h Handler, log *zap.Logger) (*Device, error) {
	if n == nil || h == nil || log == nil {
		return nil, errors.New("target: NewDevice needs a notifier, a handler and a logger")
	}
	r, err := newRing(mem)
	if err != nil {
		return nil, err
	}
	tail, _ := r.loadTail() // validated by newRing
	d := &Device{
		r:         r,
		n:         n,
		h:         h,
		log:       log,
		logCmds:   log.Core().Enabled(zap.DebugLevel),
		readLen:   r.flags&FlagReadLen != 0,
		epoch:     time.Now(),
		tail:      tail,
		readPos:   tail,
		scanPos:   tail,
		c0:        newCmdCtx(),
		kickBytes: max(1, (uint64(len(mem))-r.dataOff)/4),
		info: RingInfo{
			Version:    r.version,
			Flags:      r.flags,
			CmdrOffset: r.cmdrOff,
			CmdrSize:   r.cmdrSize,
			DataOffset: r.dataOff,
			DataSize:   uint64(len(mem)) - r.dataOff,
			MapSize:    uint64(len(mem)),
		},
	}
	d.namer, _ = scsi.As[scsi.CommandNamer](h)
	d.reset, _ = scsi.As[scsi.Resetter](h)
	if ch, ok := scsi.As[ConcurrentHandler](h); ok {
		if w := ch.Concurrent(); w > 1 {
			if r.flags&FlagOOOC != 0 {
				d.info.Workers = w
			} else {
				log.Warn("kernel does not offer out-of-order completion; serving commands one at a time in ring order",
					zap.Int("workers", w), zap.Uint16("mailbox_flags", r.flags))
			}
		}
	}
	return d, nil
}

// Idle reports that every command the kernel put in the ring was
// completed (cmd_head == cmd_tail). Safe from any goroutine.
func (d *Device) Idle() bool {
	h, err := d.r.loadHead()
	if err != nil {
		return true
	}
	tl, err := d.r.loadTail()
	return err == nil && h == tl
}

// Info returns the ring limits in force.
func (d *Device) Info() RingInfo { return d.info }

// Failed reports whether Run ended with an error (Stats().Failed, without
// the snapshot).
func (d *Device) Failed() bool { return d.failed.Load() }

// Stats returns a snapshot of the device's counters.
func (d *Device) Stats() DeviceStats {
	s := d.st.snapshot(d.namer)
	s.Failed = d.failed.Load()
	s.ZeroFillSkippedBytes, s.ZeroFillWrittenBytes = d.r.zero.FillStats()
	return s
}

// Run serves the ring until ctx is done (it then returns nil) or the device
// fails: a ring fault (an error wrapping ErrRingCorrupt), a failing
// Notifier, a memory fault in the mapping or a panicking Handler. A failed
// device stops serving; the commands left in its ring are failed by the
// kernel after cmd_time_out. Run does not log the error it returns. When
// Run returns, the Handler has been closed if it is an io.Closer.
func (d *Device) Run(ctx context.Context) (err error) {
	if !d.started.CompareAndSwap(false, true) {
		return errors.New("target: Device.Run called twice")
	}
	defer func() {
		if c, ok := scsi.As[io.Closer](d.h); ok {
			if cerr := c.Close(); cerr != nil && err == nil {
				err = fmt.Errorf("close handler: %w", cerr)
			}
		}
		if err != nil {
			d.failed.Store(true)
		}
	}()
	if d.info.Workers > 1 {
		return d.runConcurrent(ctx)
	}
	return d.runInOrder(ctx)
}

// guard turns a panic of the calling goroutine (a fault on an unmapped
// data page, with SetPanicOnFault, or a Handler bug) into an error.
func guard(err *error) {
	if p := recover(); p != nil {
		*err = &PanicError{Value: p, Stack: debug.Stack()}
	}
}

// PanicError reports a panic caught while serving a device: a Handler bug,
// or a memory fault on the mapping (the kernel unmapped a data page we
// touched).
type PanicError struct {
	Value any
	Stack []byte
}

func (e *PanicError) Error() string { return fmt.Sprintf("panic while serving: %v", e.Value) }

func (d *Device) now() int64 { return int64(time.Since(d.epoch)) }

func (d *Device) runInOrder(ctx context.Context) (err error) {
	defer debug.SetPanicOnFault(debug.SetPanicOnFault(true))
	defer guard(&err)
	ctx = context.WithValue(ctx, deviceKey{}, d) // for Aborted; once, not per command
	done := ctx.Done()
	for {
		stop, served, err := d.drain(ctx, done)
		if err != nil {
			return err
		}
		if err := d.kick(); err != nil {
			return err
		}
		if stop {
			return nil
		}
		// Poll only after serving: a wake-up that found the ring empty
		// (the edge a polled command left) blocks at once.
		if served && d.poll(done) {
			continue
		}
		if err := d.n.Wait(ctx); err != nil {
			if ctx.Err() != nil {
				return nil
			}
			return fmt.Errorf("wait for ring events: %w", err)
		}
		d.st.wakeups.Add(1)
	}
}

// drain serves, in ring order, every command queued. It reports stop when
// ctx was cancelled between two commands, and served when it consumed
// any entry.
func (d *Device) drain(ctx context.Context, done <-chan struct{}) (stop, served bool, err error) {
	c := d.c0
	for {
		loaded, empty, err := d.step(c)
		if err != nil {
			return false, served, err
		}
		if empty {
			d.endBatch()
			return false, served, nil
		}
		served = true
		if !loaded {
			continue
		}
		d.cur, d.running, d.curAborted = c.id, true, false
		d.execute(ctx, c)
		d.running = false
		if d.curAborted {
			d.st.abortedRunning.Add(1)
		}
		if d.resetPending {
			d.resetPending = false
			d.reset.Reset()
		}
		if err := d.finish(c); err != nil {
			return false, served, err
		}
		if d.kickDue(c.end) {
			if err := d.kick(); err != nil {
				return false, served, err
			}
		}
		if c.end-d.yielded >= int64(yieldEvery) {
			d.yielded = c.end
			runtime.Gosched()
		}
		select {
		case <-done:
			d.endBatch()
			return true, served, nil
		default:
		}
	}
}

func (d *Device) endBatch() {
	if d.batch > 0 {
		d.st.observeBatch(d.batch)
		d.batch = 0
	}
}

// kickDue applies the mid-batch kick rule at now, the end of the command
// just completed (0 for one that did not run: it then counts by number
// and bytes only).
func (d *Device) kickDue(now int64) bool {
	if d.unkicked == 0 {
		return false
	}
	return d.unkicked >= kickEvery || d.unkickedBytes >= d.kickBytes ||
		(now > 0 && now-d.firstUnkicked >= int64(kickInterval))
}

func (d *Device) kick() error {
	if d.unkicked == 0 {
		return nil
	}
	d.unkicked, d.unkickedBytes, d.firstUnkicked = 0, 0, 0
	d.st.kicks.Add(1)
	if err := d.n.Kick(); err != nil {
		return fmt.Errorf("kick: %w", err)
	}
	return nil
}

// scan validates the headers of the entries from scanPos to head, applies
// TMR entries to the commands queued before them and flags unknown
// opcodes. Scanning ahead of the commands being served is what lets an
// ABORT TASK skip a command that is still waiting in the ring.
func (d *Device) scan(head uint32) error {
	d.st.ringUsed(d.r.used(d.tail, head))
	if d.tracing {
		d.markScan(head)
	}
	for d.scanPos != head {
		pos := d.scanPos
		op, n, err := d.r.header(pos, d.r.used(pos, head))
		if err != nil {
			return err
		}
		switch op {
		case opCmd:
			d.seen.set(d.r.cmdID(pos))
		case opPad:
			d.st.pads.Add(1)
		case opTMR:
			typ, cnt, err := d.r.tmr(pos, n)
			if err != nil {
				return err
			}
			d.st.tmrs[typ].Add(1)
			if (typ == TMRLUNReset || typ == TMRLUNResetPRO) && d.reset != nil && d.info.Workers == 0 {
				// The handler's state is owned by this goroutine when
				// commands run in ring order; a concurrent handler is
				// not reset from here (its Reset would race its workers).
				// From inside the handler (Aborted) it waits.
				if d.running {
					d.resetPending = true
				} else {
					d.reset.Reset()
				}
			}
			for i := range cnt {
				switch id := d.r.tmrID(pos, i); {
				case d.seen.has(id):
					d.aborted.set(id)
				case d.running && id == d.cur:
					d.curAborted = true
				}
			}
		default:
			// include/uapi/linux/target_core_user.h: set UNKNOWN_OP
			// and skip. The kernel writes only PAD, CMD and TMR.
			d.r.setUFlags(pos, UFlagUnknownOp)
			d.st.unknown.Add(1)
		}
		d.scanPos = d.r.next(pos, n)
	}
	return nil
}

// step looks at the entry at readPos. A command entry is loaded into c
// (loaded); any other entry is consumed; empty means nothing is queued.
func (d *Device) step(c *cmdCtx) (loaded, empty bool, err error) {
	head, err := d.r.loadHead()
	if err != nil {
		return false, false, err
	}
	if head != d.scanPos {
		if err := d.scan(head); err != nil {
			return false, false, err
		}
	}
	if d.readPos == d.scanPos {
		return false, true, nil
	}
	pos := d.readPos
	op, n := d.r.op(pos)
	if op != opCmd {
		d.readPos = d.r.next(pos, n)
		if d.inflight == 0 {
			// Nothing before it is outstanding: pass it now. The kernel
			// reclaims the space only when kicked, and may be holding
			// commands in its qfull queue until it does.
			d.tail = d.readPos
			d.r.storeTail(d.tail)
			if d.unkicked == 0 {
				d.firstUnkicked = d.now()
			}
			d.unkicked++
		}
		return false, false, nil
	}
	if err := d.r.load(c, pos, n); err != nil {
		return false, false, err
	}
	c.seen = 0
	if d.tracing {
		c.seen = d.seenAt(pos)
	}
	d.readPos = d.r.next(pos, n)
	d.inflight++
	d.st.inflight.Add(1)
	d.batch++
	d.seen.del(c.id)
	if d.aborted.has(c.id) {
		d.aborted.del(c.id)
		c.aborted = true
	}
	return true, false, nil
}

// execute runs c through the handler, unless a TMR aborted it or it is a
// bidirectional command (which no Handler can express).
func (d *Device) execute(ctx context.Context, c *cmdCtx) {
	defer c.buf.Settle() // before the completion frees the data blocks
	switch {
	case c.aborted:
		d.st.aborted.Add(1)
		c.dur, c.end = 0, 0
		return
	case c.bidi:
		d.st.bidi.Add(1)
		c.resp = scsi.ResponseFor(scsi.ErrInvalidOpCode)
		c.dur, c.end = 0, 0
		return
	}
	start := d.now()
	c.resp = d.h.HandleCommand(ctx, &c.cmd)
	c.end = d.now()
	c.dur = c.end - start
	if !d.logCmds {
		return
	}
	if ce := d.log.Check(zap.DebugLevel, "scsi command"); ce != nil {
		ce.Write(zap.Uint16("cmd_id", c.id), zap.Uint8("opcode", c.op),
			zap.Int("bytes", c.buf.Len()), zap.Int("written", c.buf.Written()), zap.Int("consumed", c.buf.Consumed()),
			zap.Stringer("status", c.resp.Status), zap.Stringer("sense_key", c.resp.Sense.Key),
			zap.Uint16("asc", uint16(c.resp.Sense.ASC)), zap.Duration("duration", time.Duration(c.dur)))
	}
}

// finish writes c's response into the ring and moves cmd_tail. The
// response goes into the first command slot at the tail, which is c's own
// slot when commands complete in ring order and another command's slot
// ("stolen") when they complete out of order: the kernel reaps slots in
// ring order and looks each command up by the cmd_id stored in the slot
// (tcmu_handle_completions). PAD, TMR and unknown entries at the tail are
// passed over, never written.
func (d *Device) finish(c *cmdCtx) error {
	pos := d.tail
	for {
		if pos == d.readPos {
			return fmt.Errorf("target: no ring slot left to complete cmd_id %d (tail %d)", c.id, d.tail)
		}
		op, n := d.r.op(pos)
		if op == opCmd {
			break
		}
		pos = d.r.next(pos, n)
	}
	status, uflags, readLen, sense := d.response(c)
	d.r.complete(pos, c.id, status, uflags, readLen, sense)
	_, n := d.r.op(pos)
	pos = d.r.next(pos, n)
	for pos != d.readPos {
		op, n := d.r.op(pos)
		if op == opCmd {
			break
		}
		pos = d.r.next(pos, n)
	}
	d.tail = pos
	d.r.storeTail(pos)
	d.inflight--
	d.st.inflight.Add(-1)
	if d.unkicked == 0 {
		d.firstUnkicked = c.end
		if c.end == 0 {
			d.firstUnkicked = d.now()
		}
	}
	d.unkicked++
	d.unkickedBytes += uint64(c.buf.Len())
	if !c.aborted { // never ran: counted in Aborted only
		d.st.observe(c, d.commandID(c))
	}
	if t := d.tracers.Load(); t != nil {
		d.tracing = true
		d.trace(t, c, status, uflags)
	} else if d.tracing {
		d.tracing, d.marks.n = false, 0
	}
	return nil
}

// commandID is c's command in the handler's table (scsi.CommandNamer), or
// its opcode when the handler names none.
func (d *Device) commandID(c *cmdCtx) scsi.CommandID {
	if d.namer == nil {
		return scsi.CommandID(c.op)
	}
	return d.namer.CommandID(c.cdb[:c.cdbLen])
}

// response maps c's outcome to the entry's status, uflags, read_len and
// sense (include/uapi/linux/target_core_user.h; the kernel's side is
// tcmu_handle_completion):
//
//   - CHECK CONDITION: sense in its format. Data-In the handler produced
//     goes back with it only through READ_LEN (SCF_TREAT_READ_AS_NORMAL);
//     without READ_LEN the kernel returns no data at all.
//   - any other status: the kernel returns the whole Data-In buffer, so a
//     short read is reported with READ_LEN; where READ_LEN cannot say it
//     (the kernel lacks it, or nothing was written: read_len 0 means "not
//     set") the unwritten rest is zeroed so no stale data-area bytes from
//     an earlier command reach the initiator.
func (d *Device) response(c *cmdCtx) (status, uflags uint8, readLen uint32, sense []byte) {
	if c.aborted {
		return uint8(scsi.StatusTaskAborted), 0, 0, nil
	}
	status = uint8(c.resp.Status)
	n, w := c.buf.Len(), c.buf.Written()
	if c.resp.Status == scsi.StatusCheckCondition {
		if c.resp.Sense == (scsi.Sense{}) {
			d.st.badSense.Add(1)
			c.resp.Sense = scsi.Sense{Key: scsi.HardwareError, ASC: scsi.InternalTargetFailure}
		}
		sense = c.resp.Sense.Append(d.sense[:0])
		if w > 0 && d.readLen {
			uflags, readLen = UFlagReadLen, uint32(w)
		}
		return status, uflags, readLen, sense
	}
	if w >= n || c.buf.Consumed() > 0 {
		return status, 0, 0, nil
	}
	if w > 0 && d.readLen {
		return status, UFlagReadLen, uint32(w), nil
	}
	d.st.zeroFill.Add(uint64(n - w))
	zeroFrom(c.segs, w)
	return status, 0, 0, nil
}

// zeroFrom clears segs from byte offset off to the end.
func zeroFrom(segs [][]byte, off int) {
	for _, s := range segs {
		if off >= len(s) {
			off -= len(s)
			continue
		}
		clear(s[off:])
		off = 0
	}
}
