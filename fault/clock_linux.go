package fault

import (
	"errors"
	"time"

	"golang.org/x/sys/unix"
)

// nanosleeper sleeps in clock_nanosleep(CLOCK_MONOTONIC); it keeps its
// timespecs so that a sleep does not allocate.
type nanosleeper struct{ ts, rem unix.Timespec }

// sleep sleeps d, resuming after a signal (the Go runtime's preemption
// signal interrupts it).
func (n *nanosleeper) sleep(d time.Duration) {
	n.ts = unix.NsecToTimespec(int64(d))
	for {
		err := unix.ClockNanosleep(unix.CLOCK_MONOTONIC, 0, &n.ts, &n.rem)
		if !errors.Is(err, unix.EINTR) {
			return
		}
		n.ts = n.rem
	}
}
