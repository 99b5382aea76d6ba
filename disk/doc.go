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
//   - Data-Out of WRITE, WRITE AND VERIFY or COMPARE AND WRITE not
//     exactly the transfer length (the transport's expected length, the
//     only length TCMU gives): ILLEGAL REQUEST, 0E/03 INVALID FIELD IN
//     COMMAND INFORMATION UNIT, and nothing is written, as LIO's own
//     backstores answer (a block is never torn). VERIFY with BYTCHK and
//     WRITE SAME with less Data-Out than they compare or write: 24/00;
//     the excess of a longer one is ignored.
//   - Data-In longer than the transfer length: the transport reports the
//     residual (underflow). Shorter: the data that fits, GOOD; TCMU
//     cannot report an overflow residual (target_core_user.c only ever
//     shortens a read with READ_LEN), so the initiator sees no residual.
//   - Transfer length above max_blks (when reported): 24/00.
//   - WRITE SAME with NUMBER OF LOGICAL BLOCKS 0: 24/00 (WSNZ=1).
//   - RDPROTECT/WRPROTECT/VRPROTECT != 0 (no protection information),
//     FUA_NV, reserved bits of WRITE byte 1, ANCHOR, and NACA in the
//     CONTROL byte: 24/00 with the field pointer.
//   - VERIFY and COMPARE AND WRITE in fake_rw mode compare nothing, like
//     scsi_debug's fake_rw.
//   - COMPARE AND WRITE is atomic against every other command of the
//     device (they run one at a time); up to 255 blocks (or max_blks).
//   - PRE-FETCH answers CONDITION MET: every block is as close as a cache.
//   - GET LBA STATUS reports the RAM store's 64 KiB chunks: mapped where
//     written, deallocated where never written or freed (UNMAP and WRITE
//     SAME free a chunk they leave all zero).
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
