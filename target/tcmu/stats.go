package tcmu

import (
	"math/bits"
	"sync/atomic"
	"time"

	"github.com/vscsid/vscsid/internal/stat"
	"github.com/vscsid/vscsid/scsi"
)

// Histogram bucket layouts. Counts are per bucket (not cumulative); the last
// bucket counts observations above the largest bound (+Inf).
var (
	// DurationBounds are the upper bounds, in seconds, of the command
	// duration histogram: powers of 4 from 1µs to 16.8s.
	DurationBounds = stat.Exponential(1e-6, 4, durBuckets)
	// TransferBounds are the upper bounds, in bytes, of the transfer size
	// histograms: powers of 2 from 512 B to 16 MiB.
	TransferBounds = stat.Exponential(512, 2, xferBuckets)
	// SegmentBounds are the upper bounds of the data segments (iovecs) per
	// command histogram: 1, 2, 4, ... 256.
	SegmentBounds = stat.Exponential(1, 2, segBuckets)
	// BatchBounds are the upper bounds of the commands-per-wakeup
	// histogram: 1, 2, 4, ... 1024.
	BatchBounds = stat.Exponential(1, 2, batchBuckets)
)

const (
	durBuckets   = 13 // 1µs·4^0 .. 1µs·4^12
	xferBuckets  = 16 // 512·2^0 .. 512·2^15 = 16 MiB
	segBuckets   = 9  // 2^0 .. 2^8
	batchBuckets = 11 // 2^0 .. 2^10
)

// durIndex maps a duration in ns to its bucket: the smallest i with
// ns <= 1000·4^i, or durBuckets for +Inf.
func durIndex(ns int64) int {
	if ns <= 1000 {
		return 0
	}
	q := uint64(ns+999) / 1000
	return min((bits.Len64(q-1)+1)/2, durBuckets)
}

// pow2Index maps v to the smallest i with v <= unit·2^i, capped at n (+Inf).
func pow2Index(v, unit uint64, n int) int {
	if v <= unit {
		return 0
	}
	q := (v + unit - 1) / unit
	return min(bits.Len64(q-1), n)
}

// Direction of a command's data transfer, as observed: Read when the
// handler produced Data-In, Write when it consumed Data-Out, None otherwise.
type Direction uint8

// Directions.
const (
	DirNone Direction = iota
	DirRead
	DirWrite
	numDirections
)

func (d Direction) String() string {
	switch d {
	case DirRead:
		return "read"
	case DirWrite:
		return "write"
	}
	return "none"
}

// stats are a device's counters. The owner goroutine is the only writer;
// Snapshot may run concurrently, so every field is atomic. Nothing here is
// a map or a lock: the per-command cost is a handful of uncontended atomic
// adds indexed by command (scsi.CommandID), sense key and bucket.
type stats struct {
	ccByOp [scsi.MaxCommandIDs]atomic.Uint64
	durSum [scsi.MaxCommandIDs]atomic.Uint64 // ns
	dur    [scsi.MaxCommandIDs][durBuckets + 1]atomic.Uint64
	// extraOp is the opcode of each further service action's command
	// (CommandID 256+k), learned when it is first seen.
	extraOp [scsi.MaxCommandIDs - 256]atomic.Uint32
	ccByKey [16]atomic.Uint64
	ccByASC [256]atomic.Uint64 // by ASC byte (ASCQ not kept: 64 Ki counters per device would be too many)
	// ccASC00 splits ASC 00h by ASCQ 00h-07h: the tape indications (filemark,
	// end of partition, setmark, beginning of partition, end of data) that
	// the metrics keep apart; other qualifiers of 00h count in ccByASC[0].
	ccASC00  [8]atomic.Uint64
	ua       atomic.Uint64
	none     atomic.Uint64 // commands without data; read/write counts are their histograms' totals
	dirBytes [numDirections]atomic.Uint64
	xfer     [numDirections][xferBuckets + 1]atomic.Uint64
	segs     [segBuckets + 1]atomic.Uint64
	segSum   atomic.Uint64
	inflight atomic.Int64
	batch    [batchBuckets + 1]atomic.Uint64
	batchSum atomic.Uint64
	wakeups  atomic.Uint64
	kicks    atomic.Uint64
	// Polling (poll.go): polls that found an entry and that ran out,
	// and the nanoseconds spent in both.
	pollFound, pollExpired, pollNanos atomic.Uint64
	tmrs                              [256]atomic.Uint64
	aborted                           atomic.Uint64
	// abortedRunning: aborts a handler saw while running (Aborted).
	abortedRunning atomic.Uint64
	unknown        atomic.Uint64
	pads           atomic.Uint64
	zeroFill       atomic.Uint64
	badSense       atomic.Uint64
	bidi           atomic.Uint64
	traceLost      atomic.Uint64
	ringMax        atomic.Uint32
}

// observe records one completed command, which is command id of the
// handler's table. Counts that are a histogram's total are not kept
// twice: every atomic add costs on the hot path.
func (s *stats) observe(c *cmdCtx, id scsi.CommandID) {
	op := min(id, scsi.MaxCommandIDs-1)
	if op >= 256 {
		s.extraOp[op-256].Store(uint32(c.op))
	}
	s.durSum[op].Add(uint64(c.dur))
	s.dur[op][durIndex(c.dur)].Add(1)
	if c.resp.Status == scsi.StatusCheckCondition {
		s.ccByOp[op].Add(1)
		k := c.resp.Sense.Key & 0xf
		s.ccByKey[k].Add(1)
		if a := c.resp.Sense.ASC; a < scsi.ASC(len(s.ccASC00)) {
			s.ccASC00[a].Add(1)
		} else {
			s.ccByASC[a>>8].Add(1)
		}
		if k == scsi.UnitAttention {
			s.ua.Add(1)
		}
	}
	dir, n := DirNone, 0
	if w := c.buf.Written(); w > 0 {
		dir, n = DirRead, w
	} else if r := c.buf.Consumed(); r > 0 {
		dir, n = DirWrite, r
	}
	if dir == DirNone {
		s.none.Add(1)
	} else {
		s.dirBytes[dir].Add(uint64(n))
		s.xfer[dir][pow2Index(uint64(n), 512, xferBuckets)].Add(1)
	}
	nseg := uint64(len(c.segs))
	s.segSum.Add(nseg)
	s.segs[pow2Index(nseg, 1, segBuckets)].Add(1)
}

func (s *stats) observeBatch(n int) {
	s.batchSum.Add(uint64(n))
	s.batch[pow2Index(uint64(n), 1, batchBuckets)].Add(1)
}

func (s *stats) ringUsed(n uint32) {
	if n > s.ringMax.Load() {
		s.ringMax.Store(n) // single writer
	}
}

// CommandStats are the statistics of one command.
type CommandStats struct {
	// ID is the command in the handler's table (scsi.CommandNamer): its
	// opcode, or 256+k for a further service action of an opcode. A
	// handler without a table counts by opcode.
	ID     scsi.CommandID
	OpCode scsi.OpCode
	// Name is the handler's name for the command (scsi.CommandNamer), ""
	// when the handler has none or does not support the command.
	Name            string
	Count           uint64
	CheckConditions uint64
	Duration        stat.Histogram // seconds spent in the handler
}

// TransferStats are the statistics of one data direction.
type TransferStats struct {
	Commands uint64
	Bytes    uint64
	Size     stat.Histogram // bytes per command; unused for DirNone
}

// DeviceStats is a point-in-time copy of a device's counters, for the
// metrics collector and for logs. Counters are monotonic over the device's
// life; InFlight and RingHighWater are gauges.
//
// What is measured, and what is not: the ring carries no timestamps, so the
// time a command waited in the ring before pickup cannot be known. Duration
// is the time spent in the handler. Batch is how many commands each wakeup
// found queued (large batches mean the kernel queued faster than we served),
// and RingHighWater the most ring bytes ever found queued (near RingSize
// means the kernel's qfull queue was probably in use).
type DeviceStats struct {
	Commands        []CommandStats // commands seen, by ascending ID
	CheckConditions [16]uint64     // by sense key
	SenseCodes      []SenseCode    // by additional sense code, ascending: ASC 00h by ASCQ up to 07h, the others by ASC only (ASCQ 0)
	UnitAttentions  uint64         // check conditions with sense key UNIT ATTENTION
	Transfers       [numDirections]TransferStats
	Segments        stat.Histogram // iovecs per command
	Batch           stat.Histogram // commands per wakeup
	Wakeups         uint64         // returns from Notifier.Wait
	// Polling of an empty ring (Device.SetPoll): the polls that found a
	// new entry (each a wake-up saved), those that ran out of their
	// window (the device then blocked), and the time spent polling.
	PollFound, PollExpired uint64
	PollTime               time.Duration
	Kicks                  uint64 // completion notifications sent
	InFlight               int64  // commands taken from the ring, not yet completed
	RingHighWater          uint32 // most ring bytes seen queued
	TMRs                   []TMRCount
	Aborted                uint64 // commands completed as TASK ABORTED without running (a TMR listed them first)
	AbortedRunning         uint64 // commands a TMR aborted while their handler ran, seen by the handler through Aborted
	UnknownEntries         uint64 // ring entries with an unknown opcode (flagged UNKNOWN_OP)
	Pads                   uint64 // PAD entries (ring wraps)
	ZeroFilledBytes        uint64 // Data-In bytes zeroed because the handler left them unwritten and READ_LEN could not say so
	// The handler's Data-In zero fills (scsi.Buffer.WriteZeros: fake_rw
	// READs): bytes written, and bytes skipped because their data-area
	// pages were known to be zero (scsi.ZeroPages).
	ZeroFillWrittenBytes, ZeroFillSkippedBytes uint64
	BadSense                                   uint64 // CHECK CONDITIONs without sense data, replaced by HARDWARE ERROR/44-00
	BidiRejected                               uint64 // bidirectional commands refused
	TraceLost                                  uint64 // trace records dropped because a reader fell behind (TraceRing)
	Failed                                     bool   // the device stopped on a ring fault
}

// SenseCode counts CHECK CONDITIONs by additional sense code.
type SenseCode struct {
	ASC   scsi.ASC // ASC<<8, the qualifier is not counted separately
	Count uint64
}

// TMRCount counts TMR notifications of one type.
type TMRCount struct {
	Type  TMRType
	Count uint64
}

// Transfer returns the statistics of direction d.
func (s *DeviceStats) Transfer(d Direction) TransferStats { return s.Transfers[d] }

func (s *stats) snapshot(namer scsi.CommandNamer) DeviceStats {
	var out DeviceStats
	for op := range s.dur {
		h := stat.Snapshot(DurationBounds, s.dur[op][:], float64(s.durSum[op].Load())/1e9)
		if h.Count == 0 {
			continue
		}
		cs := CommandStats{
			ID:              scsi.CommandID(op),
			OpCode:          scsi.OpCode(op),
			Count:           h.Count,
			CheckConditions: s.ccByOp[op].Load(),
			Duration:        h,
		}
		if op >= 256 {
			cs.OpCode = scsi.OpCode(s.extraOp[op-256].Load())
		}
		if namer != nil {
			cs.Name = namer.CommandName(scsi.CommandID(op))
		}
		out.Commands = append(out.Commands, cs)
	}
	for k := range s.ccByKey {
		out.CheckConditions[k] = s.ccByKey[k].Load()
	}
	for q := range s.ccASC00 {
		n := s.ccASC00[q].Load()
		if q == 0 {
			n += s.ccByASC[0].Load() // 00h with a qualifier past 07h
		}
		if n > 0 {
			out.SenseCodes = append(out.SenseCodes, SenseCode{ASC: scsi.ASC(q), Count: n})
		}
	}
	for a := 1; a < len(s.ccByASC); a++ {
		if n := s.ccByASC[a].Load(); n > 0 {
			out.SenseCodes = append(out.SenseCodes, SenseCode{ASC: scsi.ASC(a) << 8, Count: n})
		}
	}
	out.UnitAttentions = s.ua.Load()
	out.Transfers[DirNone].Commands = s.none.Load()
	for _, d := range []Direction{DirRead, DirWrite} {
		b := s.dirBytes[d].Load()
		h := stat.Snapshot(TransferBounds, s.xfer[d][:], float64(b))
		out.Transfers[d] = TransferStats{Commands: h.Count, Bytes: b, Size: h}
	}
	out.Segments = stat.Snapshot(SegmentBounds, s.segs[:], float64(s.segSum.Load()))
	out.Batch = stat.Snapshot(BatchBounds, s.batch[:], float64(s.batchSum.Load()))
	out.Wakeups = s.wakeups.Load()
	out.Kicks = s.kicks.Load()
	out.PollFound = s.pollFound.Load()
	out.PollExpired = s.pollExpired.Load()
	out.PollTime = time.Duration(s.pollNanos.Load())
	out.InFlight = s.inflight.Load()
	out.RingHighWater = s.ringMax.Load()
	for t := range s.tmrs {
		if n := s.tmrs[t].Load(); n > 0 {
			out.TMRs = append(out.TMRs, TMRCount{Type: TMRType(t), Count: n})
		}
	}
	out.Aborted = s.aborted.Load()
	out.AbortedRunning = s.abortedRunning.Load()
	out.UnknownEntries = s.unknown.Load()
	out.Pads = s.pads.Load()
	out.ZeroFilledBytes = s.zeroFill.Load()
	out.BadSense = s.badSense.Load()
	out.BidiRejected = s.bidi.Load()
	out.TraceLost = s.traceLost.Load()
	return out
}
