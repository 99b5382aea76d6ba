// Package disk emulates an SBC-4 direct-access block device ("vdisk"), in
// the spirit of the kernel's scsi_debug: a fake_rw disk that discards
// writes and reads zeros, or a RAM store wrapped across a larger virtual
// capacity, with configurable logical/physical block sizes, alignment,
// block limits, thin provisioning, write protect and write cache.
//
// A *Disk satisfies target.Handler structurally (HandleCommand) and
// scsi.CommandNamer (CommandName); it does not import target. Commands
// are dispatched through a fixed 256-entry table indexed by opcode, whose
// names are the bounded `command` metric label values. The common SPC
// commands (INQUIRY, REQUEST SENSE, MODE SENSE/SELECT, REPORT SUPPORTED
// OPERATION CODES, unit attentions) come from an embedded scsi.SPC; this
// package supplies its VPD pages (B0, B1, B2), mode pages (01, 08, 0A),
// block descriptor and command usage data.
//
// Policies where SBC leaves a choice (see the methods for detail):
//   - Data-In shorter than the transfer length: the data that fits is
//     returned and the transport reports the residual (Buffer.Written).
//     Longer: only the transfer length is written.
//   - Data-Out shorter than the transfer length (WRITE, VERIFY with
//     BYTCHK, WRITE SAME): ILLEGAL REQUEST, INVALID FIELD IN CDB pointing
//     at the TRANSFER LENGTH field, and nothing is written, so a block is
//     never torn. Longer: the excess is ignored.
//   - Transfer length above max_blks (when reported): 24/00.
//   - WRITE SAME with NUMBER OF LOGICAL BLOCKS 0: 24/00 (WSNZ=1).
//   - RDPROTECT/WRPROTECT/VRPROTECT != 0 (no protection information),
//     FUA_NV, reserved bits of WRITE byte 1, ANCHOR, and NACA in the
//     CONTROL byte: 24/00 with the field pointer.
//   - VERIFY in fake_rw mode is GOOD without comparing, like scsi_debug.
//   - A stopped unit (START STOP UNIT with START=0) answers media access
//     commands and TEST UNIT READY with NOT READY, 04/02 (initializing
//     command required) until started.
//   - A new Disk reports POWER ON, RESET, OR BUS DEVICE RESET OCCURRED
//     (29/00) once, as a real unit does after power-on.
//
// Live changes (the kernel's RECONFIG_DEVICE, which target forwards):
// Resize follows attrib/dev_size when the capacity came from it (a
// cfgstring without size= or blocks=, as targetcli makes it), Reconfigure
// takes a new cfgstring that changes only size= or blocks=, and
// SetWriteCache follows attrib/emulate_write_cache (the WCE bit MODE
// SELECT also changes). A new capacity is reported to the initiator with
// UNIT ATTENTION 2A/09 (CAPACITY DATA HAS CHANGED), a WCE change with
// 2A/01 (MODE PARAMETERS CHANGED). Every other key (lbs, mode, pbexp, the
// identity...) fixes what the kernel has read already and needs a new
// backstore: Reconfigure refuses it, naming the keys.
//
// Concurrency: HandleCommand must not be called concurrently (the target
// delivers one device's commands in ring order); Stats, Config, Resize,
// SetWriteCache and Reconfigure may be called from any goroutine, also
// while a command runs. A change takes effect at the next command: the
// command path checks for one with a single atomic load and takes no
// lock.
package disk
