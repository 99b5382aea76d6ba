//go:build linux

package tcmu

import "golang.org/x/sys/unix"

// osYield gives the CPU to another runnable thread, if any
// (sched_yield(2)); with none it returns at once. Raw: it never blocks.
func osYield() { _, _, _ = unix.RawSyscall(unix.SYS_SCHED_YIELD, 0, 0, 0) }
