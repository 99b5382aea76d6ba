package fault

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strings"
	"time"

	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/scsi"
)

// TimingDesc documents the timing grammar. Keep it in step with
// ParseTiming.
const TimingDesc = `fault timing: semicolon-separated key=value pairs, e.g.
  latency=2ms;jitter=1ms;rate=160MB/s                  (disk)
  latency=0;jitter=50us;dist=exp;jitter_max=2ms         (scsi_debug random + ndelay)
  model=dds                                             (tape, DAT72-like)
  model=lto9;rate=300MB/s;overhead=1ms                  (tape, preset + overrides)
every command:
  latency     DURATION added to every command (scsi_debug delay/ndelay)
  jitter      DURATION: random extra latency, uniform in [0, jitter) or,
              with dist=exp, exponential with mean jitter
  dist        uniform (default) or exp
  jitter_max  DURATION: cap of the exponential jitter (default 10 x jitter)
data rate:
  rate        RATE (160MB/s, 3.5MB/s, 1GiB/s): data bytes per second; a
              token bucket without model=, the drive's native rate with it
  burst       SIZE: token bucket depth (default 10ms of rate, at least 4KiB)
tape drive model (model= sets them all; the keys after it override):
  model       dds, lto5, lto6, lto7, lto8, lto9, lto10, custom (all zero)
  buffer      SIZE: drive buffer; writes complete once buffered, reads are
              read ahead into it while the tape streams
  overhead    DURATION every tape command costs
  reposition  DURATION lost when streaming breaks (backhitch)
  load, unload, rewind, locate  DURATION: mechanical times (unload and
              rewind also travel back to BOT, locate and space travel the
              distance, at search speed)
  search      RATE: high-speed positioning, bytes of tape per second
medium changer (robot) model:
  move        DURATION of one move of the transport: MOVE MEDIUM and
              POSITION TO ELEMENT take one, EXCHANGE MEDIUM two
  inventory   DURATION of INITIALIZE ELEMENT STATUS (a barcode scan)
Delays are cut to cmd_time_out minus min(1s, cmd_time_out/2) per command.`

// Dist is the distribution of the random part of the latency.
type Dist uint8

// Distributions.
const (
	Uniform     Dist = iota // uniform in [0, Jitter)
	Exponential             // exponential with mean Jitter, at most JitterMax
)

// Timing is a device's timing model. The zero value adds no delay. Build
// one with ParseTiming; a hand-built Timing is validated when installed.
type Timing struct {
	Latency   time.Duration // every command
	Jitter    time.Duration // random extra latency (scale)
	Dist      Dist
	JitterMax time.Duration // Exponential only; 0 = 10 × Jitter

	Rate  uint64 // data bytes/s: token bucket, or the tape model's native rate
	Burst uint64 // token bucket depth in bytes; 0 = Rate/100, at least 4 KiB

	// Model names a tape drive model ("" = none); the fields below are
	// its parameters.
	Model      string
	Buffer     uint64        // drive buffer, bytes
	Overhead   time.Duration // every tape command
	Reposition time.Duration // backhitch when streaming breaks
	Load       time.Duration
	Unload     time.Duration // after the rewind
	Rewind     time.Duration // plus the travel back to BOT at Search
	Locate     time.Duration // LOCATE and SPACE, plus the travel at Search
	Search     uint64        // positioning speed, bytes of tape per second

	// Medium changer: the robot's mechanical times.
	Move      time.Duration // one move of the transport
	Inventory time.Duration // INITIALIZE ELEMENT STATUS
}

// tapeModels are the presets of model=. The figures are rough public
// numbers for the drive families (native rate, buffer, load and full
// rewind times; search speed = capacity / full rewind time), not
// measurements. The DDS overhead is fitted to the figures of the
// mailing-list thread "st try_direct_io" (2006): a DAT72 reading 1
// KiB fixed blocks with direct I/O took 6m10s for 1,000,000 commands
// (about 370 us each), while 32 KiB blocks streamed.
var tapeModels = map[string]Timing{
	"dds": {Model: "dds", Rate: 3_500_000, Buffer: 8 << 20, Overhead: 300 * time.Microsecond,
		Reposition: time.Second, Load: 15 * time.Second, Unload: 5 * time.Second,
		Rewind: time.Second, Locate: time.Second, Search: 2e9},
	"lto5":   ltoModel("lto5", 140e6, 256<<20, 15e9),
	"lto6":   ltoModel("lto6", 160e6, 1<<30, 25e9),
	"lto7":   ltoModel("lto7", 300e6, 1<<30, 60e9),
	"lto8":   ltoModel("lto8", 360e6, 1<<30, 120e9),
	"lto9":   ltoModel("lto9", 400e6, 1<<30, 180e9),
	"lto10":  ltoModel("lto10", 400e6, 1<<30, 300e9),
	"custom": {Model: "custom"},
}

func ltoModel(name string, rate, buffer, search uint64) Timing {
	return Timing{Model: name, Rate: rate, Buffer: buffer, Overhead: 100 * time.Microsecond,
		Reposition: 2 * time.Second, Load: 15 * time.Second, Unload: 15 * time.Second,
		Rewind: 2 * time.Second, Locate: 2 * time.Second, Search: search}
}

var timingKeys = []string{
	"model", "latency", "jitter", "dist", "jitter_max", "rate", "burst",
	"buffer", "overhead", "reposition", "load", "unload", "rewind", "locate", "search",
	"move", "inventory",
}

// MustParseTiming is ParseTiming for known-good strings; it panics on error.
func MustParseTiming(s string) Timing {
	t, err := ParseTiming(s)
	if err != nil {
		panic(err)
	}
	return t
}

// ParseTiming parses a timing model (grammar: TimingDesc), strictly. An
// empty string is the zero Timing. model= applies its preset first,
// wherever it appears; the other keys override it.
func ParseTiming(s string) (Timing, error) {
	var t Timing
	pairs, err := cfgstring.Split(s)
	if err != nil {
		return Timing{}, err
	}
	kv := make(map[string]string, len(pairs))
	order := make([]string, 0, len(pairs))
	for _, p := range pairs {
		k, v := p.Key, p.Value
		known := false
		for _, key := range timingKeys {
			known = known || key == k
		}
		switch {
		case !known:
			return Timing{}, fmt.Errorf("unknown key %q (want one of %s)", k, strings.Join(timingKeys, ", "))
		case !p.HasValue || v == "":
			return Timing{}, fmt.Errorf("%s: needs a value (%s=...)", k, k)
		}
		kv[k] = v
		order = append(order, k)
	}
	if m, ok := kv["model"]; ok {
		preset, known := tapeModels[m]
		if !known {
			return Timing{}, fmt.Errorf("model=%s: unknown model (want dds, lto5, lto6, lto7, lto8, lto9, lto10 or custom)", m)
		}
		t = preset
	}
	for _, k := range order {
		if err := t.set(k, kv[k]); err != nil {
			return Timing{}, fmt.Errorf("%s=%s: %w", k, kv[k], err)
		}
	}
	if err := t.validate(); err != nil {
		return Timing{}, err
	}
	return t, nil
}

func (t *Timing) set(k, v string) error {
	var err error
	dur := func(d *time.Duration) { *d, err = cfgstring.Duration(v) }
	switch k {
	case "model":
	case "latency":
		dur(&t.Latency)
	case "jitter":
		dur(&t.Jitter)
	case "jitter_max":
		dur(&t.JitterMax)
	case "dist":
		switch v {
		case "uniform":
			t.Dist = Uniform
		case "exp":
			t.Dist = Exponential
		default:
			err = errors.New("want uniform or exp")
		}
	case "rate":
		t.Rate, err = parseRate(v)
	case "search":
		t.Search, err = parseRate(v)
	case "burst":
		t.Burst, err = cfgstring.Size(v)
	case "buffer":
		t.Buffer, err = cfgstring.Size(v)
	case "overhead":
		dur(&t.Overhead)
	case "reposition":
		dur(&t.Reposition)
	case "load":
		dur(&t.Load)
	case "unload":
		dur(&t.Unload)
	case "rewind":
		dur(&t.Rewind)
	case "locate":
		dur(&t.Locate)
	case "move":
		dur(&t.Move)
	case "inventory":
		dur(&t.Inventory)
	}
	return err
}

// validate checks the combinations ParseTiming and hand-built values must
// respect.
func (t *Timing) validate() error {
	for _, d := range []struct {
		key string
		v   time.Duration
	}{{"latency", t.Latency}, {"jitter", t.Jitter}, {"jitter_max", t.JitterMax}, {"overhead", t.Overhead},
		{"reposition", t.Reposition}, {"load", t.Load}, {"unload", t.Unload}, {"rewind", t.Rewind}, {"locate", t.Locate},
		{"move", t.Move}, {"inventory", t.Inventory}} {
		if d.v < 0 {
			return fmt.Errorf("%s: negative", d.key)
		}
	}
	switch {
	case t.Dist > Exponential:
		return errors.New("dist: want uniform or exp")
	case t.JitterMax != 0 && t.Dist != Exponential:
		return errors.New("jitter_max: only with dist=exp")
	case t.JitterMax != 0 && t.JitterMax < t.Jitter:
		return errors.New("jitter_max: less than jitter")
	case t.Dist == Exponential && t.Jitter == 0:
		return errors.New("dist=exp: needs jitter=")
	case t.Burst != 0 && t.Rate == 0:
		return errors.New("burst: needs rate=")
	case t.Model == "" && (t.Buffer != 0 || t.Overhead != 0 || t.Reposition != 0 || t.Load != 0 ||
		t.Unload != 0 || t.Rewind != 0 || t.Locate != 0 || t.Search != 0):
		return errors.New("buffer, overhead, reposition, load, unload, rewind, locate and search are tape model keys: give model= (custom for none of the presets)")
	case t.Model != "" && t.Burst != 0:
		return errors.New("burst: a tape model buffers instead (buffer=)")
	case t.Model != "" && (t.Move != 0 || t.Inventory != 0):
		return errors.New("move and inventory are medium changer keys, not tape model keys")
	}
	if t.Model != "" {
		if _, ok := tapeModels[t.Model]; !ok {
			return fmt.Errorf("model=%s: unknown model", t.Model)
		}
	}
	return nil
}

// IsZero reports whether t adds no delay at all.
func (t Timing) IsZero() bool { return t == Timing{} }

// String returns t in canonical form: model= first, then the keys that
// differ from the model's preset (or from zero), in a fixed order.
func (t Timing) String() string {
	var base Timing
	var b cfgstring.Builder
	if t.Model != "" {
		base = tapeModels[t.Model]
		b.Add("model", t.Model)
	}
	d := func(k string, v, def time.Duration) {
		if v != def {
			b.Add(k, v.String())
		}
	}
	d("latency", t.Latency, base.Latency)
	d("jitter", t.Jitter, base.Jitter)
	if t.Dist == Exponential {
		b.Add("dist", "exp")
	}
	d("jitter_max", t.JitterMax, base.JitterMax)
	if t.Rate != base.Rate {
		b.Add("rate", formatRate(t.Rate))
	}
	if t.Burst != base.Burst {
		b.Size("burst", t.Burst)
	}
	if t.Buffer != base.Buffer {
		b.Size("buffer", t.Buffer)
	}
	d("overhead", t.Overhead, base.Overhead)
	d("reposition", t.Reposition, base.Reposition)
	d("load", t.Load, base.Load)
	d("unload", t.Unload, base.Unload)
	d("rewind", t.Rewind, base.Rewind)
	d("locate", t.Locate, base.Locate)
	if t.Search != base.Search {
		b.Add("search", formatRate(t.Search))
	}
	d("move", t.Move, 0)
	d("inventory", t.Inventory, 0)
	return b.String()
}

// ---- the running model ----

// defaultAvgBlock is the block size assumed for positioning distances
// until the first data command shows the real one.
const defaultAvgBlock = 64 << 10

// timer is a Timing in force on one device, with the state of its
// models. Only the command goroutine touches the state.
//
// The tape model keeps two byte counters per direction, the host's and the
// tape's: writes complete once they fit the buffer (host - tape <= Buffer)
// and the tape drains it at Rate; reads complete once the tape has read
// their bytes, and the tape reads ahead at most Buffer bytes past the
// host. The tape stops when it catches up with the host (writing) or fills
// the buffer (reading); it then needs Reposition before it moves again.
// WRITE FILEMARKS, positioning and a change of direction first write out
// the buffer (or drop the read-ahead) and stop the tape; the mechanism is
// then busy until their mechanical time has passed.
type timer struct {
	cfg      Timing
	burstDur time.Duration // token bucket depth in time
	tape     bool
	robot    bool // a medium changer: Move and Inventory apply
	salt     uint64

	seq uint64        // commands drawn for jitter
	tat time.Duration // token bucket: theoretical arrival time

	dir       int8          // +1 writing, -1 reading, 0 neither since the last stop
	host      uint64        // bytes the host has written / consumed
	taped     uint64        // bytes the tape has written / read, as of tT
	tT        time.Duration // the tape moves at Rate from tT on (when moving)
	moving    bool
	stalled   bool          // stopped by an underrun or a full buffer: repositions to restart
	busy      time.Duration // the mechanism is busy until then
	tapeBytes uint64        // estimated distance from BOT
	avgBlock  uint64
	objBefore uint64 // LOCATE/SPACE: position before the command
	hasBefore bool
}

func newTimer(t Timing, kind Kind) (*timer, error) {
	if err := t.validate(); err != nil {
		return nil, err
	}
	if t.Model != "" && kind != Tape {
		return nil, fmt.Errorf("model=%s: a tape drive model on a %s", t.Model, kind)
	}
	if (t.Move != 0 || t.Inventory != 0) && kind != Changer {
		return nil, fmt.Errorf("move and inventory: medium changer keys on a %s", kind)
	}
	tm := &timer{cfg: t, tape: t.Model != "", robot: kind == Changer, avgBlock: defaultAvgBlock, salt: 0x74696d696e67} // "timing"
	if t.Rate != 0 && !tm.tape {
		burst := t.Burst
		if burst == 0 {
			burst = max(t.Rate/100, 4096)
		}
		tm.burstDur = xferDur(burst, t.Rate)
	}
	return tm, nil
}

// latency is the per-command delay before the command runs: the fixed
// latency plus the random part.
func (tm *timer) latency(seed uint64) time.Duration {
	d := tm.cfg.Latency
	if tm.cfg.Jitter == 0 {
		return d
	}
	tm.seq++
	u := float64(draw(seed, tm.salt, tm.seq)>>11) / (1 << 53) // [0, 1)
	var j float64
	if tm.cfg.Dist == Exponential {
		j = -math.Log1p(-u) * float64(tm.cfg.Jitter)
		limit := tm.cfg.JitterMax
		if limit == 0 {
			limit = 10 * tm.cfg.Jitter
		}
		j = min(j, float64(limit))
	} else {
		j = u * float64(tm.cfg.Jitter)
	}
	return satAdd(d, time.Duration(j))
}

// before notes what the model needs from before the command runs (the
// tape position a LOCATE or SPACE starts from).
func (tm *timer) before(c *cmdInfo, pos Positioner) {
	tm.hasBefore = false
	if tm.tape && c.class == classPosition && pos != nil {
		_, tm.objBefore, _ = pos.Position()
		tm.hasBefore = true
	}
}

// after returns when the command completes in the model, given that it
// arrived at arr and moved `moved` data bytes, and whether it reached the
// medium (so a NOT READY rewind costs nothing).
func (tm *timer) after(arr time.Duration, c *cmdInfo, moved uint64, r *scsi.Response, pos Positioner) time.Duration {
	if tm.robot {
		// The transport does one thing at a time; a refused move costs
		// nothing.
		var mech time.Duration
		switch {
		case !reachedMedium(r):
		case c.class == classMove && c.op == uint8(scsi.ExchangeMedium):
			mech = satAdd(tm.cfg.Move, tm.cfg.Move)
		case c.class == classMove:
			mech = tm.cfg.Move
		case c.class == classInventory:
			mech = tm.cfg.Inventory
		}
		if mech == 0 {
			return arr
		}
		tm.busy = satAdd(max(arr, tm.busy), mech)
		return tm.busy
	}
	if !tm.tape {
		if tm.cfg.Rate == 0 || moved == 0 {
			return arr
		}
		// GCRA: the command may run ahead of the rate by the burst.
		tm.tat = satAdd(max(tm.tat, arr), xferDur(moved, tm.cfg.Rate))
		return tm.tat - tm.burstDur
	}
	cfg := &tm.cfg
	ov := satAdd(arr, cfg.Overhead)
	ran := reachedMedium(r)
	switch {
	case c.class&(classRead|classWrite|classVerify) != 0 && moved > 0:
		dir := int8(-1)
		if c.class&classWrite != 0 {
			dir = 1
		}
		if tm.dir != dir {
			tm.stop(arr)
			tm.dir = dir
		}
		tm.advance(arr)
		done := ov
		if dir > 0 {
			tm.start(arr)
			tm.host += moved
			if tm.host-tm.taped > cfg.Buffer { // wait until the rest fits
				done = max(done, satAdd(tm.tT, xferDur(tm.host-cfg.Buffer-tm.taped, cfg.Rate)))
			}
		} else {
			need := tm.host + moved
			tm.start(arr) // consuming frees buffer space: the tape reads on
			if tm.taped < need {
				done = max(done, satAdd(tm.tT, xferDur(need-tm.taped, cfg.Rate)))
			}
			tm.host = need
		}
		tm.tapeBytes += moved
		tm.avgBlock = (tm.avgBlock*7 + moved/c.objects()) / 8
		return done
	case c.class == classFilemarks && ran:
		// WRITE FILEMARKS is a synchronisation point: the buffer is
		// written out first (IMMED=1 returns before that).
		tm.stop(arr)
		if c.immed {
			return ov
		}
		return max(ov, tm.busy)
	case c.class&(classPosition|classMech) != 0 && ran:
		tm.stop(arr)
		start := max(arr, tm.busy)
		var mech time.Duration
		switch {
		case c.op == uint8(scsi.Rewind):
			mech = satAdd(cfg.Rewind, xferDur(tm.tapeBytes, cfg.Search))
			tm.tapeBytes = 0
		case c.op == uint8(scsi.LoadUnload) && c.loadBit:
			mech = cfg.Load
			tm.tapeBytes = 0
		case c.op == uint8(scsi.LoadUnload):
			mech = satAdd(satAdd(cfg.Rewind, xferDur(tm.tapeBytes, cfg.Search)), cfg.Unload)
			tm.tapeBytes = 0
		case c.class == classPosition:
			mech = cfg.Locate
			if tm.hasBefore && pos != nil {
				_, obj, _ := pos.Position()
				dist := obj - tm.objBefore
				if obj < tm.objBefore {
					dist = tm.objBefore - obj
				}
				mech = satAdd(mech, xferDur(satMul(dist, tm.avgBlock), cfg.Search))
				tm.tapeBytes = satMul(obj, tm.avgBlock)
			}
		}
		tm.busy = satAdd(start, mech)
		if c.immed {
			return ov
		}
		return max(ov, tm.busy)
	}
	return ov
}

// advance moves the tape to time t: it stops when it catches up with the
// host (writing) or fills the buffer (reading).
func (tm *timer) advance(t time.Duration) {
	if !tm.moving || t <= tm.tT {
		return
	}
	limit := tm.host // writing: cannot pass what the host gave
	if tm.dir < 0 {
		limit = tm.host + tm.cfg.Buffer // reading: at most a buffer ahead
	}
	if tm.cfg.Rate == 0 { // no rate: the tape keeps up instantly and never stalls
		tm.taped, tm.moving = limit, false
		return
	}
	adv := bytesIn(t-tm.tT, tm.cfg.Rate)
	if adv >= limit-tm.taped {
		tm.taped, tm.moving, tm.stalled = limit, false, true
		return
	}
	tm.taped += adv
	tm.tT = t
}

// start sets a stopped tape moving: at once, or after the mechanism is
// free, plus a reposition if it stopped by running dry or full.
func (tm *timer) start(arr time.Duration) {
	if tm.moving {
		return
	}
	tm.tT = max(arr, tm.busy)
	if tm.stalled {
		tm.tT = satAdd(tm.tT, tm.cfg.Reposition)
	}
	tm.moving, tm.stalled = true, false
}

// stop writes out the buffer (reading: drops the read-ahead), stops the
// tape and leaves the mechanism busy until that is done.
func (tm *timer) stop(arr time.Duration) {
	tm.advance(arr)
	if tm.dir > 0 && tm.host > tm.taped {
		tm.busy = max(tm.busy, satAdd(tm.tT, xferDur(tm.host-tm.taped, tm.cfg.Rate)))
	}
	tm.dir, tm.host, tm.taped, tm.moving, tm.stalled = 0, 0, 0, false, false
}

// bytesIn is how many bytes pass in d at rate bytes/s.
func bytesIn(d time.Duration, rate uint64) uint64 {
	if d <= 0 || rate == 0 {
		return 0
	}
	hi, lo := bits.Mul64(uint64(d), rate)
	if hi >= uint64(time.Second) {
		return math.MaxUint64
	}
	q, _ := bits.Div64(hi, lo, uint64(time.Second))
	return q
}

// reachedMedium reports whether a command got as far as the medium: GOOD,
// or a CHECK CONDITION other than those reported before any motion (NOT
// READY, ILLEGAL REQUEST, UNIT ATTENTION, DATA PROTECT).
func reachedMedium(r *scsi.Response) bool {
	switch r.Status {
	case scsi.StatusGood:
		return true
	case scsi.StatusCheckCondition:
		switch r.Sense.Key {
		case scsi.NotReady, scsi.IllegalRequest, scsi.UnitAttention, scsi.DataProtect:
			return false
		}
		return true
	}
	return false
}

func satMul(a, b uint64) uint64 {
	if a != 0 && b > math.MaxUint64/a {
		return math.MaxUint64
	}
	return a * b
}
