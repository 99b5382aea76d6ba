package record

import (
	"context"
	"encoding/hex"
	"errors"
	"fmt"
	"hash/crc32"
	"io"
	"strconv"
	"time"

	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/internal/trace"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/tcmu"
)

// FromTrace is the Command of device index dev that a capture ring
// recorded (tcmu.NewCaptureRing), with its Data-Out payload (nil for a
// digests-only recording); t is its completion time since the
// recording began.
func FromTrace(dev int, rec *tcmu.TraceRecord, payload []byte, t time.Duration) Command {
	n := min(int(rec.CDBLen), len(rec.CDB))
	c := Command{
		Seq: rec.Seq, Dev: dev, T: int64(t),
		CDB: hex.EncodeToString(rec.CDB[:n]), CDBLength: int(rec.CDBLen),
		Length: rec.Length, Out: payload, OutCRC: rec.OutCRC,
		Status:  rec.Status.String(),
		Written: rec.Written, Consumed: rec.Consumed, InCRC: rec.InCRC,
		// Aborted and refused bidirectional commands never reached the
		// handler.
		Aborted: rec.Flags&(tcmu.TraceAborted|tcmu.TraceBidi) != 0,
	}
	if rec.Status == scsi.StatusCheckCondition {
		c.Sense = trace.SenseOf(rec.Sense)
	}
	return c
}

// Builder builds the handler of a recorded device; env finds the other
// devices of the recording by name (a library's drives). Replay closes
// the handlers it built.
type Builder func(d Device, env device.Env) (scsi.Handler, error)

// Divergence is one way a replayed command answered differently.
type Divergence struct {
	Seq    uint64 // the command's sequence number in the recording
	Device string
	CDB    string // hex
	Field  string // status, sense, written, consumed, data_in, lost, cdb
	Want   string
	Got    string
}

func (d Divergence) String() string {
	return fmt.Sprintf("%s #%d cdb %s: %s: recorded %s, replayed %s", d.Device, d.Seq, d.CDB, d.Field, d.Want, d.Got)
}

// Result is what a replay found.
type Result struct {
	Commands    int // commands replayed
	Skipped     int // recorded commands that never ran (aborted, refused): not replayed
	Divergences []Divergence
}

// A Target runs the commands of a replay on the recording's devices:
// rebuilt in this process (Replay's handlers), or live ones reached
// through the kernel (SGTarget).
type Target interface {
	// Run runs c on the recording's device dev (an index in
	// Header.Devices) and sets its outcome.
	Run(ctx context.Context, dev int, c *Call) error
}

// Call is one command a Target runs, and its outcome.
type Call struct {
	CDB  []byte
	Data []byte // the recorded Length bytes: the Data-Out payload, or zeros for the Data-In
	// Out: the command carried Data-Out when it was recorded (its handler
	// read some).
	Out bool

	Status  scsi.Status
	Sense   *trace.Sense // CHECK CONDITION only
	Written int          // Data-In bytes, at the start of Data
	// Consumed is the Data-Out bytes the device read; -1 when the target
	// cannot tell (SG_IO reports one residual, the Data-In's).
	Consumed int
}

// Replay rebuilds the recording's devices with build and replays the
// recording on them (ReplayTo).
func Replay(ctx context.Context, r *Reader, build Builder) (res Result, err error) {
	env := &replayEnv{byName: map[string]scsi.Handler{}}
	hs := make(handlers, len(r.Header.Devices))
	defer func() {
		for _, h := range hs {
			if c, ok := scsi.As[io.Closer](h); ok && h != nil {
				err = errors.Join(err, c.Close())
			}
		}
	}()
	for i, d := range r.Header.Devices {
		h, err := build(d, env)
		if err != nil {
			return res, fmt.Errorf("device %s: %w", d.Name, err)
		}
		hs[i], env.byName[d.Name] = h, h
	}
	return ReplayTo(ctx, r, hs)
}

// ReplayTo runs the recording's commands on t in their recorded order,
// comparing each response with the recorded one: status, sense, the
// Data-In and Data-Out byte counts (the residual) and, for a recording
// with payloads, the digest of the Data-In. The devices start as new
// ones do, with the unit attentions of their power-on cleared by TEST
// UNIT READY as the kernel's scan clears them, so a recording replays
// when it was made from new devices (memory cartridges, a new media
// directory) after the kernel attached them. A gap in a device's
// sequence numbers (commands the recording lost) is a divergence: what
// follows cannot be trusted to replay.
func ReplayTo(ctx context.Context, r *Reader, t Target) (res Result, err error) {
	for i := range r.Header.Devices {
		if err := clearAttentions(ctx, t, i); err != nil {
			return res, fmt.Errorf("device %s: %w", r.Header.Devices[i].Name, err)
		}
	}
	last := make([]uint64, len(r.Header.Devices))
	var call Call
	for {
		c, err := r.Next()
		if errors.Is(err, io.EOF) {
			return res, nil
		}
		if err != nil {
			return res, err
		}
		name := r.Header.Devices[c.Dev].Name
		diverge := func(field, want, got string) {
			res.Divergences = append(res.Divergences, Divergence{Seq: c.Seq, Device: name, CDB: c.CDB, Field: field, Want: want, Got: got})
		}
		if l := last[c.Dev]; l != 0 && c.Seq != l+1 {
			diverge("lost", "seq "+strconv.FormatUint(l+1, 10), "seq "+strconv.FormatUint(c.Seq, 10)+": the recording lost commands")
		}
		last[c.Dev] = c.Seq
		if c.Aborted {
			res.Skipped++
			continue
		}
		raw, err := hex.DecodeString(c.CDB)
		if err != nil || len(raw) == 0 {
			return res, fmt.Errorf("%s #%d: cdb %q is not hex", name, c.Seq, c.CDB)
		}
		if c.CDBLength != len(raw) {
			diverge("cdb", strconv.Itoa(c.CDBLength)+" bytes", "only "+strconv.Itoa(len(raw))+" recorded: not replayed")
			continue
		}
		if cap(call.Data) < int(c.Length) {
			call.Data = make([]byte, c.Length)
		}
		call = Call{CDB: raw, Data: call.Data[:c.Length], Out: c.Out != nil || c.Consumed > 0}
		clear(call.Data)
		copy(call.Data, c.Out)
		if err := t.Run(ctx, c.Dev, &call); err != nil {
			return res, fmt.Errorf("%s #%d cdb %s: %w", name, c.Seq, c.CDB, err)
		}
		res.Commands++
		if got := call.Status.String(); got != c.Status {
			diverge("status", c.Status, got)
		}
		if !call.Sense.Equal(c.Sense) {
			diverge("sense", c.Sense.String(), call.Sense.String())
		}
		w := call.Written
		if uint32(w) != c.Written {
			diverge("written", strconv.FormatUint(uint64(c.Written), 10), strconv.Itoa(w))
		}
		if n := call.Consumed; n >= 0 && uint32(n) != c.Consumed {
			diverge("consumed", strconv.FormatUint(uint64(c.Consumed), 10), strconv.Itoa(n))
		}
		if r.Header.Payloads && w > 0 && uint32(w) == c.Written {
			if got := crc32.Checksum(call.Data[:w], crc32c); got != c.InCRC {
				diverge("data_in", fmt.Sprintf("crc32c %08x", c.InCRC), fmt.Sprintf("crc32c %08x", got))
			}
		}
	}
}

var crc32c = crc32.MakeTable(crc32.Castagnoli)

// clearAttentions sends TEST UNIT READY to device dev until it reports
// no UNIT ATTENTION (at most 16 times).
func clearAttentions(ctx context.Context, t Target, dev int) error {
	for range 16 {
		c := Call{CDB: make([]byte, 6)}
		if err := t.Run(ctx, dev, &c); err != nil {
			return err
		}
		if c.Status != scsi.StatusCheckCondition || c.Sense == nil || c.Sense.Key != scsi.UnitAttention.String() {
			return nil
		}
	}
	return nil
}

// handlers is the Target of devices rebuilt in this process.
type handlers []scsi.Handler

func (hs handlers) Run(ctx context.Context, dev int, c *Call) error {
	cdb, err := scsi.ParseCDB(c.CDB)
	if err != nil {
		cdb = c.CDB // the handler answers a malformed CDB as it would
	}
	cmd := scsi.Command{CDB: cdb, Data: scsi.NewBuffer(c.Data)}
	resp := hs[dev].HandleCommand(ctx, &cmd)
	c.Status, c.Sense = resp.Status, nil
	if resp.Status == scsi.StatusCheckCondition {
		c.Sense = trace.SenseOf(resp.Sense)
	}
	c.Written, c.Consumed = cmd.Data.Written(), cmd.Data.Consumed()
	return nil
}

// replayEnv is the device.Env of replayed devices: the others of the
// recording.
type replayEnv struct{ byName map[string]scsi.Handler }

func (e *replayEnv) Handler(name string) (scsi.Handler, error) {
	if h := e.byName[name]; h != nil {
		return h, nil
	}
	return nil, fmt.Errorf("device %s is not in the recording", name)
}
