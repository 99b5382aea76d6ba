package tcmu

import (
	"runtime"
	"time"
)

// Adaptive polling. A device served in ring order normally blocks in
// Notifier.Wait as soon as the ring is empty, so at queue depth 1 every
// command costs the daemon a wake-up (the kernel's uio_event_notify
// waking the waiting thread) before it is even seen; under TCG, and on
// real machines with deep C-states, that wake-up is most of the
// command's latency. With a poll window set, the loop keeps looking at
// cmd_head for up to that long after it served a batch, and serves what
// the kernel queues meanwhile without a wake-up; when the window passes
// with nothing queued it blocks as before, so an idle device costs no
// CPU after its window. The kernel notifies the uio device for every
// command either way: a command found by polling leaves one pending
// edge, and the next Wait returns at once, finds the ring empty and,
// having served nothing, blocks without polling again.
//
// The spin yields on every look, to the Go scheduler (runtime.Gosched:
// other goroutines on the processor run) and to the kernel's
// (sched_yield: other threads on the CPU run), so that it takes only CPU
// time nothing else wants: at queue depth 1 the initiator waits anyway,
// while under a deep queue the initiator's threads need the CPU the spin
// would hold. It reads the clock only every pollClockEvery looks. A device served by several
// workers (ConcurrentHandler) does not poll: its waits happen on a
// goroutine of their own, which polling the ring would not spare.

// MaxPollWindow bounds SetPoll: a window past it would only burn a CPU
// per device for nothing a blocking wait does not do as well.
const MaxPollWindow = time.Second

// pollClockEvery is how many looks at cmd_head the spin makes between
// two clock reads (and two checks of the context).
const pollClockEvery = 16

// SetPoll sets the device's poll window (0, the default: block as soon
// as the ring is empty). It takes effect at the next empty ring, and may
// be called from any goroutine while the device serves. It panics on a
// window outside 0..MaxPollWindow: callers validate it.
func (d *Device) SetPoll(window time.Duration) {
	if window < 0 || window > MaxPollWindow {
		panic("tcmu: poll window out of range")
	}
	d.pollWindow.Store(int64(window))
}

// Poll returns the device's poll window.
func (d *Device) Poll() time.Duration { return time.Duration(d.pollWindow.Load()) }

// poll spins for up to the poll window while the ring is empty and
// reports whether the kernel queued an entry meanwhile (or cmd_head is
// no longer valid, for step to report). It returns false at once
// without a window, for a device served concurrently, and when done is
// closed.
func (d *Device) poll(done <-chan struct{}) bool {
	w := d.pollWindow.Load()
	if w <= 0 || d.info.Workers > 1 {
		return false
	}
	start := d.now()
	for i := 1; ; i++ {
		if h, err := d.r.loadHead(); err != nil || h != d.scanPos {
			d.st.pollFound.Add(1)
			d.st.pollNanos.Add(uint64(d.now() - start))
			return true
		}
		if i%pollClockEvery == 0 {
			now := d.now()
			if now-start >= w {
				d.st.pollNanos.Add(uint64(now - start))
				d.st.pollExpired.Add(1)
				return false
			}
			select {
			case <-done:
				d.st.pollNanos.Add(uint64(now - start))
				return false
			default:
			}
		}
		runtime.Gosched()
		osYield()
	}
}
