// Package target is vscsid's side of the kernel's LIO target: it creates,
// adopts and removes TCMU user backstores in configfs, exports them
// through tcm_loop and iSCSI, follows the kernel's TCM-USER netlink
// e// opcode, sense key and bucket (stats.go), and the logger is consulted
// only through Check at Debug level.
//
// # Lifecycle
//
// Target creates each configured device as a user backstore in configfs
// (configfs.go), opens and maps its uio device (tcmu.OpenUIO), starts the
// device loop (tcmu.Device), then exports it through its own tcm_loop target (loop.go)
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
// the same reaping rules; the transport's tests, and those of the
// handlers, run commands through a real tcmu.Device over it, and target's
// own fake configfs hands its devices targettest mailboxes. Everything that needs a
// kernel (configfs semantics, uio, tcm_loop attach) is exercised by the
// VM harness in deploy/vm.
//
// # Platforms
//
// TCMU is Linux's. The package builds everywhere (its registry and tests
// are plain Go), but off Linux opening a uio device and taking the lock
// file fail with "TCMU needs Linux" (tcmu.OpenUIO, lock_others.go), so New
// fails there at once.
package target
