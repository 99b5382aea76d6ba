// Package target is vscsid's TCMU transport: it makes the kernel's LIO
// target (target_core_user, exported to this host through tcm_loop) send
// SCSI commands to Go Handlers, and owns every syscall that takes.
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
// # Lifecycle
//
// Target creates each configured device as a user backstore in configfs
// (configfs.go), opens and maps its uio device (uio_linux.go), starts the
// device loop, then exports it through its own tcm_loop target (loop.go)
// and reports the sd/st/sg names the kernel gave it. Close undoes exactly
// what was created, in reverse order, LUNs first while the devices are
// still served. A lock file keeps a second daemon out.
//
// Devices made by other tools (targetcli's /backstores/user:vtape create,
// targetctl restore) are served too, side by side with ours in the
// registry (DeviceInfo.Origin): Run attaches those that exist at start
// (Scan: block_dev=1, reset_ring=1, open, serve, block_dev=0, the way
// tcmu-runner takes over a ring a dead daemon left) and then follows the
// kernel's TCM-USER netlink events (events.go): ADDED → Attach and reply
// the Factory's verdict, REMOVED → stop serving and reply 0. Events for
// subtypes without a Factory are tcmu-runner's and get no reply. configfs
// objects of attached devices are never created or removed here: Close
// drains them (block_dev=1, wait until cmd_head == cmd_tail, close,
// block_dev=0) and leaves them. A device loop that fails because its
// storage object was removed under it (the kernel unregisters the uio
// device of one of ours before its REMOVED event arrives) ends quietly.
//
// RECONFIG (a write of attrib/dev_config, dev_size or emulate_write_cache
// on an enabled device) is answered 0 when the value does not change, so
// that targetctl restore never fails; otherwise the handler's optional
// Reconfigurer, Resizer or WriteCacher decides, called from the event
// goroutine while commands run: nil → 0, and the registry (DeviceInfo's
// Config and Size) follows; an error wrapping errors.ErrUnsupported, or no
// such interface → EOPNOTSUPP; any other error → EINVAL. vdisk implements
// all three (package disk: a capacity that came from dev_size follows it,
// a cfgstring may change only size=/blocks=, WCE follows
// emulate_write_cache; the next command gets UNIT ATTENTION 2A/09 or
// 2A/01), vtape none. The kernel stores the new value only after a 0 for
// devices whose events it waits for (made by another tool while vscsid
// had replies on); for the config file's devices (nl_reply_supported=-1)
// and devices enabled while no daemon listened it does not wait: the write
// succeeds and the attribute changes whatever the handler said (a refusal
// is only logged). No reply is sent for a device whose
// attrib/nl_reply_supported is 0 or less (ours are -1): the kernel does not
// wait for it and would log each reply at KERN_ERR as "completion could not
// find device".
//
// Which path a device takes at start: a device of the config file is made
// by Create. If a daemon that did not stop cleanly left it intact (our
// tcm_loop target with LUN 0 linked to the object, the same dev_config, its
// uio device), Create re-attaches it in place (adopt.go) and st/sd keep
// their device nodes; otherwise it removes the leftover (reclaim.go) and
// creates the device anew. Everything else of our subtypes found in
// /sys/class/uio is re-attached in place by Scan.
//
// # Testing
//
// Package targettest is an in-memory fake kernel with the same layout and
// the same reaping rules; target's own tests, and those of the handlers,
// run commands through a real Device over it. Everything that needs a
// kernel (configfs semantics, uio, tcm_loop attach) is exercised by the
// VM harness in deploy/vm.
//
// # Platforms
//
// TCMU is Linux's. The package builds everywhere (its ring, registry and
// tests are plain Go), but off Linux opening a uio device and taking the
// lock file fail with "TCMU needs Linux" (uio_others.go, lock_others.go),
// so New fails there at once.
package target
