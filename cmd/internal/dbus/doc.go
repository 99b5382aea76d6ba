// Package dbus makes vscsid's handlers visible to targetcli, which lists
// user:<subtype> backstores only when a process announces them on the
// system bus as org.kernel.TCMUService1, the D-Bus service tcmu-runner
// defined.
//
// # What targetcli uses
//
// targetcli-fb (ui_backstore.py) calls
// org.freedesktop.DBus.ObjectManager.GetManagedObjects on
// /org/kernel/TCMUService1 of the name org.kernel.TCMUService1, and makes
// one user:<subtype> backstore per object path returned, named after its
// last element. For each it then uses the interface org.kernel.TCMUService1
// of that object:
//
//   - the ConfigDesc property, read from the GetManagedObjects answer and
//     printed by "help create" (newer targetcli builds a Gio proxy, which
//     also reads it through org.freedesktop.DBus.Properties.GetAll);
//   - CheckConfig(s "<subtype>/<cfgstring>") → (b, s), called before it
//     creates the configfs object; false aborts with "cfgstring invalid:
//     <message>";
//   - ChangeMedium(s name, t size, s "<subtype>/<cfgstring>") → (i, s),
//     its "changemedium" command; 0 is success.
//
// Service implements these, plus org.freedesktop.DBus.Properties and
// org.freedesktop.DBus.Introspectable (godbus answers
// org.freedesktop.DBus.Peer). CheckConfig and ChangeMedium strip the
// "<subtype>/" prefix and pass the cfgstring to the Handler's callbacks,
// which validate it strictly (the handler package's ParseConfig).
//
// # Living next to tcmu-runner
//
// Only one process can own org.kernel.TCMUService1. If the name is free,
// New takes it (Primary) and serves targetcli directly. If tcmu-runner (or
// any other owner) has it, New uses tcmu-runner's protocol for
// out-of-process handlers (libtcmu-register.c; Registered): for each
// handler it owns org.kernel.TCMUService1.HandlerManager1.<subtype>,
// exports the handler object at
// /org/kernel/TCMUService1/HandlerManager1/<subtype>, and calls
// org.kernel.TCMUService1.HandlerManager1.RegisterHandler(subtype,
// configdesc) on /org/kernel/TCMUService1/HandlerManager1. tcmu-runner then
// lists user:<subtype> next to its own handlers and forwards CheckConfig
// to us. It does not forward ChangeMedium (its D-Bus interface,
// tcmu-handler.xml, has no such method: targetcli's changemedium fails
// with "ChangeMedium failed"), so changemedium works only in Primary mode;
// next to tcmu-runner, vscsictl load changes the cartridge.
//
// Debian bookworm's tcmu-runner 1.5.4 does all this as described: the
// fuller VM guest (deploy/vm/full, its coexist-* checks) starts it before
// vscsid, and targetcli lists user:fbo, qcow, rbd, zbc, vdisk and vtape,
// refuses a bad vdisk cfgstring with vscsid's message, and creates
// devices of both daemons that serve I/O.
//
// The Service follows the owner of org.kernel.TCMUService1 and registers
// again when a new owner appears (tcmu-runner restarted). It never takes
// the name over when the owner leaves: tcmu-runner asks for the name
// without queueing flags, so a tcmu-runner restarted after vscsid took the
// name would wait behind vscsid forever and serve none of its own
// handlers. While nobody owns the name, targetcli lists no user
// backstores; restarting vscsid makes it Primary. Starting vscsid before
// tcmu-runner keeps tcmu-runner's handlers out of targetcli the same way:
// on hosts with both, start tcmu-runner first.
//
// # D-Bus is not the data path: the netlink reply race
//
// Registration only makes targetcli accept the backstore. The kernel then
// announces the new device over netlink to every listener, tcmu-runner
// included. tcmu-runner's netlink side knows only the handlers it loaded
// at start (libtcmu copies the list once; a D-Bus-registered handler never
// joins it): for our subtypes it logs "could not find handler for uioN",
// never opens the uio device, and replies -ENOENT at once. With netlink
// replies enabled (tcmu-runner enables them) the first reply wins, and
// tcmu-runner's comes first: in the VM guest a targetcli create of a
// user:vdisk without the option below fails ("UserBackedStorageObject
// creation failed"), and so does a targetctl restore of a saved one. Next
// to tcmu-runner, create vscsid backstores with
// control=nl_reply_supported=-1, which makes the kernel wait for nobody
// (for a restore: add ",nl_reply_supported=-1" to the backstore's
// "control" in saveconfig.json); see package target/netlink.
//
// # Access
//
// deploy/dbus/org.kernel.TCMUService1.conf lets only root own these names
// and call them (targetcli runs as root; ChangeMedium swaps media). The
// bus merges every policy file and tcmu-runner's package lets every user
// send to the service, so CheckConfig and ChangeMedium also ask the bus
// for the caller's user and answer AccessDenied to anyone but root. The
// callbacks run on godbus's goroutines, one per call, possibly
// concurrently.
package dbus
