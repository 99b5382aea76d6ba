//go:build !linux

package fault

import "time"

// nanosleeper off Linux is the runtime's timer: x/sys/unix has no
// clock_nanosleep there, and the daemon that needs fine sleeps runs on
// Linux only. A short sleep is then late by the timer's resolution.
type nanosleeper struct{}

func (*nanosleeper) sleep(d time.Duration) { time.Sleep(d) }
