package targettest

// What an initiator sees: data descriptions, queued and completed
// commands, task management, and the batch helpers the benchmarks use.

import (
	"encoding/binary"
	"errors"
	"fmt"
	"time"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/tcmu"
)

// Data describes a command's data transfer.
type Data struct {
	out  []byte
	in   int
	segs int
}

// NoData is a command without data.
var NoData = Data{}

// DataOut is a Data-Out transfer (WRITE, MODE SELECT): the kernel copies b
// into the data area before queuing the command.
func DataOut(b []byte) Data { return Data{out: b} }

// DataIn is a Data-In transfer of n bytes (READ, INQUIRY): the kernel sets
// up the iovecs and gathers what the device returns.
func DataIn(n int) Data { return Data{in: n} }

// Segments asks for the transfer to be scattered over n iovecs (n runs of
// data-area blocks that are not adjacent), to exercise multi-segment paths.
// n is capped at the number of blocks the transfer needs.
func (d Data) Segments(n int) Data { d.segs = n; return d }

// Len is the transfer length.
func (d Data) Len() int { return len(d.out) + d.in }

// Completion is a command as the initiator sees it after the kernel reaped
// it.
type Completion struct {
	ID     uint16
	Status scsi.Status
	// Sense is the 96-byte sense buffer, copied when the status is CHECK
	// CONDITION (and UNKNOWN_OP was not set), else nil.
	Sense []byte
	// Data is the Data-In the initiator receives: read_len bytes when
	// READ_LEN was set (and the kernel supports it), the whole buffer for
	// other statuses, nothing for CHECK CONDITION without READ_LEN.
	Data     []byte
	Residual int    // data length − len(Data), for Data-In
	ReadLen  uint32 // rsp.read_len, when the READ_LEN uflag was set
	Flags    uint8  // uflags as the device left them
	// Aborted is set when a TMR aborted the command: the initiator sees
	// the abort whatever Status says.
	Aborted bool
}

// SenseKey returns the sense key of Sense (fixed or descriptor format).
func (c Completion) SenseKey() scsi.SenseKey {
	switch {
	case len(c.Sense) < 3:
		return 0
	case c.Sense[0]&0x7f >= 0x72:
		return scsi.SenseKey(c.Sense[1] & 0xf)
	}
	return scsi.SenseKey(c.Sense[2] & 0xf)
}

// ASC returns the additional sense code and qualifier of Sense.
func (c Completion) ASC() scsi.ASC {
	switch {
	case len(c.Sense) < 14:
		return 0
	case c.Sense[0]&0x7f >= 0x72:
		return scsi.ASC(c.Sense[2])<<8 | scsi.ASC(c.Sense[3])
	}
	return scsi.ASC(c.Sense[12])<<8 | scsi.ASC(c.Sense[13])
}

// Errors returned by Queue.
var (
	ErrNoSpace = errors.New("targettest: no ring or data space (the kernel would queue the command in its qfull queue)")
	ErrTooBig  = errors.New("targettest: command larger than the data area or half the ring")
	ErrBroken  = errors.New("targettest: ring is broken")
)

// Pending is a queued command whose completion has not been reaped yet.
type Pending struct {
	k    *Kernel
	id   uint16
	done chan struct{}
	c    Completion
}

// ID is the command's cmd_id.
func (p *Pending) ID() uint16 { return p.id }

// Done reports whether the command has been reaped.
func (p *Pending) Done() bool {
	select {
	case <-p.done:
		return true
	default:
		return false
	}
}

// Wait waits for the command's completion. It fails the test after 10 s
// (call it from the test goroutine).
func (p *Pending) Wait() Completion {
	p.k.t.Helper()
	select {
	case <-p.done:
		return p.c
	case <-time.After(10 * time.Second):
		p.k.t.Fatalf("targettest: cmd_id %d not completed after 10s (device stats: %+v)", p.id, p.k.deviceStats())
		return Completion{}
	}
}

// Queue writes a command entry into the ring without notifying the device
// (as the kernel does while the device is plugged). It returns ErrNoSpace
// when ring or data space is short until completions are reaped.
func (k *Kernel) Queue(cdb []byte, d Data) (*Pending, error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	p := &Pending{k: k, done: make(chan struct{})}
	s, err := k.queueLocked(cdb, d, p)
	if err != nil {
		return nil, err
	}
	p.id = s.id
	return p, nil
}

// Submit queues one command (waiting for space if needed), notifies the
// device and waits for the completion. It fails the test on error.
func (k *Kernel) Submit(cdb []byte, d Data) Completion {
	k.t.Helper()
	return k.SubmitAll(Request{CDB: cdb, Data: d})[0]
}

// Request is one command for SubmitAll.
type Request struct {
	CDB  []byte
	Data Data
}

// SubmitAll queues every request before one notification (so the device
// sees them as one batch, as far as ring and data space allow), then waits
// for all completions, returned in request order.
func (k *Kernel) SubmitAll(reqs ...Request) []Completion {
	k.t.Helper()
	ps := make([]*Pending, len(reqs))
	for i, r := range reqs {
		for {
			p, err := k.Queue(r.CDB, r.Data)
			if err == nil {
				ps[i] = p
				break
			}
			if !errors.Is(err, ErrNoSpace) {
				k.t.Fatalf("targettest: queue request %d: %v", i, err)
			}
			k.Notify()
			if !k.waitProgress(10 * time.Second) {
				k.t.Fatalf("targettest: no ring space for request %d after 10s", i)
			}
		}
	}
	k.Notify()
	out := make([]Completion, len(reqs))
	for i, p := range ps {
		out[i] = p.Wait()
	}
	return out
}

// waitProgress waits until a Kick reaped something, or timeout.
func (k *Kernel) waitProgress(timeout time.Duration) bool {
	k.mu.Lock()
	defer k.mu.Unlock()
	start := k.lastCleaned
	deadline := time.Now().Add(timeout)
	t := time.AfterFunc(timeout, k.cond.Broadcast)
	defer t.Stop()
	for k.lastCleaned == start && k.broken == nil && !k.stopped {
		if time.Now().After(deadline) {
			return false
		}
		k.cond.Wait()
	}
	return k.lastCleaned != start
}

// Abort aborts outstanding commands as an ABORT TASK would: the kernel
// lists the ones still in the ring in a TMR entry (when tmr_notification is
// on) and notifies the device. Their completions report Aborted.
func (k *Kernel) Abort(ps ...*Pending) error { return k.TMR(tcmu.TMRAbortTask, ps...) }

// TMR queues a task management notification of type typ listing the
// commands of ps that are still outstanding (tcmu_tmr_notify), and
// notifies the device.
func (k *Kernel) TMR(typ tcmu.TMRType, ps ...*Pending) error {
	k.mu.Lock()
	var ids []uint16
	for _, p := range ps {
		if s := k.ids[p.id]; s != nil && s.pending == p {
			s.aborted = true
			ids = append(ids, p.id)
		}
	}
	if !k.tmrNotify || k.flags&tcmu.FlagTMR == 0 {
		k.mu.Unlock()
		return nil
	}
	size := roundUp(tmrHdrSize+2*len(ids), 8)
	pos, err := k.reserveLocked(size)
	if err != nil {
		k.mu.Unlock()
		return err
	}
	e := k.entry(pos, size)
	clear(e)
	ne := binary.NativeEndian
	ne.PutUint32(e[0:], uint32(size)|opTMR)
	e[8] = byte(typ)
	ne.PutUint32(e[12:], uint32(len(ids)))
	for i, id := range ids {
		ne.PutUint16(e[tmrHdrSize+2*i:], id)
	}
	k.publishLocked(pos, size)
	k.mu.Unlock()
	k.Notify()
	return nil
}

// Pump pushes n copies of one command through the device as fast as ring
// and data space allow: it queues as many as fit, notifies once, and waits
// for reaps. Completions are checked (GOOD, no residual) but not kept and
// Data-In is not gathered, so the fake costs little and allocates nothing:
// it is the driver for benchmarks. It returns how many completed otherwise
// than GOOD without residual.
func (k *Kernel) Pump(cdb []byte, d Data, n int) (bad int, err error) {
	k.mu.Lock()
	defer k.mu.Unlock()
	startDone, startBad := k.pumpDone, k.pumpBad
	queued := 0
	for k.pumpDone-startDone < n {
		q := 0
		for queued < n {
			if _, err := k.queueLocked(cdb, d, nil); err != nil {
				if errors.Is(err, ErrNoSpace) {
					break
				}
				return k.pumpBad - startBad, err
			}
			queued++
			q++
		}
		if q > 0 {
			k.Notify()
		}
		if k.pumpDone-startDone >= n {
			break
		}
		if k.broken != nil {
			return k.pumpBad - startBad, k.broken
		}
		if k.stopped {
			return k.pumpBad - startBad, fmt.Errorf("targettest: device stopped: %w", k.devErr)
		}
		k.cond.Wait()
	}
	return k.pumpBad - startBad, nil
}
