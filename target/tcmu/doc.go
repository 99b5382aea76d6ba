// Package tcmu is vscsid's TCMU transport: it serves one device's command
// ring, handing the SCSI commands the kernel's target_core_user puts
// there to a Handler and writing their outcome back, and owns every
// syscall that takes (the uio device's wait and kick). Package target
// creates the devices and runs one Device per device.
//
// # Ring
//
// A TCMU device is one mmap of /dev/uioN: a mailbox (version 2, capability
// flags, cmdr_off/cmdr_size, cmd_head written by the kernel, cmd_tail by
// us), a command ring of variable-length entries (PAD, CMD, TMR), and a
// data area the iovecs of the entries point into (include/uapi/linux/
// target_core_user.h; abi.go mirrors it and abi_test.go pins it). The ring
// code (ring.go, entry.go) is plain bytes plus atomics: cmd_head is loaded
// with acquire semantics and cmd_tail stored with release semantics, and
// every length, offset and iovec read from shared memory is checked before
// use. An entry the kernel could not have written fails that device with
// an error wrapping ErrRingCorrupt; it never panics and never stops
// another device.
//
// # Device loop
//
// A Device has one owner goroutine (Run): Wait for the uio event, scan the
// new entries (headers, TMRs), hand each command to the Handler in ring
// order, write its status, sense and READ_LEN into the ring, move cmd_tail,
// and Kick (a 4-byte write: the kernel reaps completions only then) once
// per batch, or sooner when a batch runs long. A Handler that implements
// ConcurrentHandler is served by several goroutines with out-of-order
// completion when the kernel offers it; completions then "steal" the slot
// at the tail, as the kernel reaps by the cmd_id stored in the slot. Tape
// drives are never concurrent: SCSI tape semantics need ring order.
//
// Serving a command allocates nothing: the command, its Buffer and its
// segment table are reused, statistics are atomic counters indexed by
// opcode, sense key and bucket (stats.go), and the logger is consulted
// only through Check at Debug level.
//
// # Testing
//
// Package targettest is an in-memory fake kernel with the same layout and
// the same reaping rules; this package's tests, and those of the
// handlers, run commands through a real Device over it.
package tcmu
