//go:build !linux

package tcmu

// osYield: devices serve only on Linux, where it is sched_yield(2).
func osYield() {}
