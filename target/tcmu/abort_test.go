package tcmu_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/targettest"
	"github.com/vscsid/vscsid/target/tcmu"
)

// poller holds every command until tcmu.Aborted says the initiator
// aborted it (or 5 s pass), as the fault wrapper's no-response rule does.
type poller struct {
	started   chan struct{}
	inHandler atomic.Bool
	sawAbort  atomic.Int32
	canReport atomic.Bool
	resets    atomic.Int32
	resetIn   atomic.Bool // Reset was called while HandleCommand ran
}

func (p *poller) HandleCommand(ctx context.Context, cmd *scsi.Command) scsi.Response {
	if cmd.CDB[0] != 0x28 {
		return scsi.Good
	}
	p.inHandler.Store(true)
	defer p.inHandler.Store(false)
	p.canReport.Store(tcmu.CanReportAborts(ctx))
	p.started <- struct{}{}
	deadline := time.Now().Add(5 * time.Second)
	for time.Now().Before(deadline) {
		if tcmu.Aborted(ctx) {
			p.sawAbort.Add(1)
			return scsi.Response{Status: scsi.StatusTaskAborted}
		}
		time.Sleep(time.Millisecond)
	}
	return scsi.Good
}

func (p *poller) Reset() {
	p.resets.Add(1)
	if p.inHandler.Load() {
		p.resetIn.Store(true)
	}
}

func TestAbortedWhileRunning(t *testing.T) {
	for _, typ := range []tcmu.TMRType{tcmu.TMRAbortTask, tcmu.TMRLUNReset} {
		t.Run(typ.String(), func(t *testing.T) {
			k := targettest.NewKernel(t, targettest.Config{})
			h := &poller{started: make(chan struct{}, 4)}
			k.Serve(h)
			p1, _ := k.Queue(read10(1, 1), targettest.DataIn(512))
			k.Notify()
			<-h.started
			start := time.Now()
			if err := k.TMR(typ, p1); err != nil {
				t.Fatal(err)
			}
			c1 := p1.Wait()
			if !c1.Aborted || h.sawAbort.Load() != 1 {
				t.Fatalf("held command: %+v, handler saw %d aborts", c1, h.sawAbort.Load())
			}
			if el := time.Since(start); el > 2*time.Second {
				t.Errorf("the held command ended %v after the abort, not at once", el)
			}
			if !h.canReport.Load() {
				t.Error("CanReportAborts false for an in-order device's command")
			}
			// The ring goes on; the next held command is not "aborted".
			p2, _ := k.Queue(read10(2, 1), targettest.DataIn(512))
			k.Notify()
			<-h.started
			if err := k.Abort(p2); err != nil {
				t.Fatal(err)
			}
			if c2 := p2.Wait(); !c2.Aborted || h.sawAbort.Load() != 2 {
				t.Fatalf("second held command: %+v, %d aborts seen", c2, h.sawAbort.Load())
			}
			st := k.Device().Stats()
			if st.AbortedRunning != 2 || st.Aborted != 0 {
				t.Errorf("AbortedRunning %d Aborted %d, want 2 and 0", st.AbortedRunning, st.Aborted)
			}
			if typ == tcmu.TMRLUNReset {
				if h.resets.Load() != 1 || h.resetIn.Load() {
					t.Errorf("LUN RESET: %d resets, during HandleCommand %v; want 1, after it returned", h.resets.Load(), h.resetIn.Load())
				}
			}
		})
	}
}

func TestAbortedOutsideADevice(t *testing.T) {
	if tcmu.Aborted(context.Background()) || tcmu.CanReportAborts(context.Background()) {
		t.Error("a context not from a Device reports aborts")
	}
}
