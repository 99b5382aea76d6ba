// Package netlink speaks the kernel's TCM-USER generic netlink family
// (drivers/target/target_core_user.c, include/uapi/linux/target_core_user.h):
// the events by which the kernel announces user backstores that were
// enabled, removed or reconfigured, and the replies a daemon sends back.
//
// # Events and replies
//
// The kernel multicasts ADDED_DEVICE, REMOVED_DEVICE and RECONFIG_DEVICE on
// the family's "config" group, to listeners in every network namespace.
// Each carries the uio device name ("tcm-user/<hba>/<name>/<dev_config>",
// see ParseDeviceName), its minor and the target core's device id;
// RECONFIG_DEVICE carries one of the new dev_config, dev_size or
// emulate_write_cache. Receive returns them as Added, Removed and Reconfig.
//
// A daemon that has declared, with SetFeatures(true), that it replies must
// answer each event with Reply: the kernel waits for the reply,
// uninterruptibly and without a timeout, in the configfs write that caused
// the event (enable, rmdir, attribute store), and returns the reply's
// status from that write. The declaration is module-global and outlives the
// daemon; a device whose control file got nl_reply_supported=-1 before it
// was enabled is never waited for (vscsid creates its own devices that
// way). Without the declaration, enable succeeds at once and the daemon
// attaches to the device whenever it sees the event; RECONFIG writes still
// fail with ESRCH while nobody listens.
//
// # Several daemons, one kernel: the reply race
//
// The kernel takes the first reply whose device id matches and rejects the
// later ones (ErrNotPending), logging "tcmu nl cmd <cmd>/<status>
// completion could not find device with dev id <id>" for each; so it does
// for every reply to a device it does not wait for, at KERN_ERR (package
// target therefore sends none for devices whose nl_reply_supported is 0 or
// less). tcmu-runner listens on
// the same group, turns replies on, and answers every event of a subtype
// it does not serve: ADDED -ENOENT, REMOVED 0, RECONFIG -ENODEV
// (libtcmu.c). It answers before vscsid has opened the device, so the
// enable of one of our devices fails with ENOENT (seen with Debian's
// tcmu-runner 1.5.4 in deploy/vm/full).
// Nothing in the protocol says which daemon a device belongs to, so there
// is no way to win that race reliably: next to tcmu-runner, create devices
// with nl_reply_supported=-1 (targetcli: control=nl_reply_supported=-1),
// and never answer events for subtypes we do not serve. The D-Bus side of
// the coexistence is in package cmd/internal/dbus.
//
// # Starting up: block_netlink and reset_netlink
//
// Events sent while no daemon runs are lost, and a device enabled while
// replies were on (by an earlier daemon) waits for a reply that will not
// come. tcmu-runner therefore starts like this (libtcmu.c, main.c):
//
//  1. write 1 to /sys/module/target_core_user/parameters/block_netlink:
//     new events fail at once with EAGAIN instead of queueing;
//  2. write 1 to .../parameters/reset_netlink: every command still waiting
//     for a reply completes with -EINTR (it needs block_netlink=1, else
//     EBUSY);
//  3. Dial, join the group, SetFeatures(true);
//  4. scan /sys/class/uio/uio*/name for "tcm-user/..." devices and attach
//     the ones it serves (block_dev=1, reset_ring=1, open, block_dev=0);
//  5. write 0 to block_netlink.
//
// Those are sysfs writes, done by package target, not here. Events that
// arrive between the scan and the subscription, or that are dropped when
// the socket buffer overflows (ErrEventsLost), are recovered the same way:
// by scanning again.
//
// If target_core_user is unloaded, the family disappears and Receive
// returns ErrFamilyRemoved; the group membership does not survive a reload,
// so the caller must Dial again.
//
// # Tests
//
// NewConn accepts connections built on mdlayher/netlink's nltest and
// genltest fakes, which is how the package is tested without a kernel.
//
// # Platforms
//
// Generic netlink is Linux's: off Linux the package builds, but Dial fails
// with "vscsid needs Linux" (dial_others.go), and the tests against the
// fake kernel, which use Linux's genetlink numbers, build on Linux only.
package netlink
