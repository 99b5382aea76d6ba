package tcmu_test

import (
	"testing"
	"time"

	"github.com/vscsid/vscsid/target/targettest"
	"github.com/vscsid/vscsid/target/tcmu"
)

// With a poll window longer than the test, the commands queued after the
// first are found by polling: at most one wake-up (the first command's,
// unless the device's first look found it), and the edges the others left
// make no second.
func TestPollFindsCommandWithoutWakeup(t *testing.T) {
	k := targettest.Serve(t, fill{w: 512})
	k.Device().SetPoll(tcmu.MaxPollWindow)
	for range 3 {
		if c := k.Submit(read10(0, 1), targettest.DataIn(512)); c.Status != 0 {
			t.Fatalf("status %#x", c.Status)
		}
	}
	st := k.Device().Stats()
	if st.Wakeups > 1 || st.PollFound != 2 || st.PollExpired != 0 || st.PollTime <= 0 {
		t.Errorf("wakeups %d, polls found %d, expired %d, time %v; want <= 1, 2, 0, > 0", st.Wakeups, st.PollFound, st.PollExpired, st.PollTime)
	}
}

// A window that runs out leaves the device blocked, as without polling:
// the next command is a wake-up, not a poll.
func TestPollWindowRunsOut(t *testing.T) {
	k := targettest.Serve(t, fill{w: 512})
	d := k.Device()
	d.SetPoll(time.Millisecond)
	k.Submit(read10(0, 1), targettest.DataIn(512))
	// Submit returned after the command's completion was reaped, so the
	// device waits now only if it did after the command: its window ran
	// out.
	for !k.Waiting() {
		time.Sleep(time.Millisecond)
	}
	before := d.Stats().Wakeups
	k.Submit(read10(0, 1), targettest.DataIn(512))
	st := d.Stats()
	if st.Wakeups != before+1 || st.PollFound != 0 || st.PollExpired != 1 || st.PollTime < time.Millisecond {
		t.Errorf("wakeups %d, polls found %d, expired %d, time %v; want %d, 0, 1, >= 1ms", st.Wakeups, st.PollFound, st.PollExpired, st.PollTime, before+1)
	}
}

// Without a window (the default) the device never polls.
func TestNoPollByDefault(t *testing.T) {
	k := targettest.Serve(t, fill{w: 512})
	for range 3 {
		k.Submit(read10(0, 1), targettest.DataIn(512))
	}
	if st := k.Device().Stats(); st.PollFound+st.PollExpired != 0 || st.PollTime != 0 || st.Wakeups != 3 {
		t.Errorf("polls found %d, expired %d, time %v, wakeups %d; want none and 3 wake-ups", st.PollFound, st.PollExpired, st.PollTime, st.Wakeups)
	}
	if w := k.Device().Poll(); w != 0 {
		t.Errorf("default window %v", w)
	}
}

// A device stopping while it polls returns at once.
func TestPollStopsWithDevice(t *testing.T) {
	k := targettest.NewKernel(t, targettest.Config{})
	d := k.Serve(fill{w: 512})
	d.SetPoll(tcmu.MaxPollWindow)
	k.Submit(read10(0, 1), targettest.DataIn(512))
	// The cleanup cancels the device while it polls; goleak (TestMain)
	// and Serve's cleanup fail the test if Run does not return.
}

func TestSetPollRange(t *testing.T) {
	k := targettest.Serve(t, fill{w: 512})
	for _, w := range []time.Duration{-1, tcmu.MaxPollWindow + 1} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("SetPoll(%v) did not panic", w)
				}
			}()
			k.Device().SetPoll(w)
		}()
	}
}
