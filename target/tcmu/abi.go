package tcmu

// The TCMU shared-memory ABI, mirrored from include/uapi/linux/target_core_user.h
// (TCMU_VERSION "2.0"). The layout is the one a 64-bit kernel writes: struct
// iovec is 16 bytes. Entry and mailbox fields are native-endian; SCSI data
// inside the CDB is big-endian and decoded by package scsi.
//
// abi_test.go pins every number here to the header.

// Mailbox (struct tcmu_mailbox, packed, at mmap offset 0).
const (
	mbVersionOff  = 0  // __u16 version
	mbFlagsOff    = 2  // __u16 flags
	mbCmdrOffOff  = 4  // __u32 cmdr_off
	mbCmdrSizeOff = 8  // __u32 cmdr_size
	mbCmdHeadOff  = 12 // __u32 cmd_head, written by the kernel
	mbCmdTailOff  = 64 // __u32 cmd_tail __attribute__((__aligned__(ALIGN_SIZE))), written by us
	mbSize        = 128

	// MailboxVersion is TCMU_MAILBOX_VERSION, the only version we speak.
	MailboxVersion = 2
)

// Mailbox flags (TCMU_MAILBOX_FLAG_CAP_*): what the kernel supports.
const (
	FlagOOOC    uint16 = 1 << 0 // out-of-order completion
	FlagReadLen uint16 = 1 << 1 // rsp.read_len is honoured with TCMU_UFLAG_READ_LEN
	FlagTMR     uint16 = 1 << 2 // TMR notifications (when attrib/tmr_notification = 1)
	FlagKeepBuf uint16 = 1 << 3 // TCMU_UFLAG_KEEP_BUF
)

// Entry header (struct tcmu_cmd_entry_hdr, packed, 8 bytes).
const (
	hdrLenOpOff  = 0 // __u32 len_op: length | opcode
	hdrCmdIDOff  = 4 // __u16 cmd_id
	hdrKFlagsOff = 6 // __u8 kflags
	hdrUFlagsOff = 7 // __u8 uflags
	hdrSize      = 8

	opMask    = 0x7 // TCMU_OP_MASK
	opAlign   = 8   // TCMU_OP_ALIGN_SIZE
	cmdIDMax  = 0xffff
	cmdIDMin  = 1 // xa_alloc(..., XA_LIMIT(1, 0xffff))
	opPad     = 0 // TCMU_OP_PAD
	opCmd     = 1 // TCMU_OP_CMD
	opTMR     = 2 // TCMU_OP_TMR
	numOpKind = 3
)

// User flags (hdr.uflags), set by userspace.
const (
	UFlagUnknownOp uint8 = 0x1 // TCMU_UFLAG_UNKNOWN_OP
	UFlagReadLen   uint8 = 0x2 // TCMU_UFLAG_READ_LEN
	UFlagKeepBuf   uint8 = 0x4 // TCMU_UFLAG_KEEP_BUF
)

// Command entry (struct tcmu_cmd_entry, packed; sizeof = 112). The req and
// rsp structs overlay each other after the header.
const (
	reqIovCntOff     = 8  // __u32 iov_cnt
	reqIovBidiCntOff = 12 // __u32 iov_bidi_cnt
	reqIovDifCntOff  = 16 // __u32 iov_dif_cnt
	reqCdbOffOff     = 24 // __u64 cdb_off, absolute offset from the mmap base
	reqIovOff        = 48 // struct iovec iov[]
	iovSize          = 16 // struct iovec on a 64-bit kernel
	iovBaseOff       = 0  // void *iov_base: offset from the mmap base
	iovLenOff        = 8  // size_t iov_len

	rspStatusOff  = 8  // __u8 scsi_status
	rspReadLenOff = 12 // __u32 read_len
	rspSenseOff   = 16 // char sense_buffer[TCMU_SENSE_BUFFERSIZE]

	cmdEntrySize = 112 // sizeof(struct tcmu_cmd_entry)

	// SenseBufferSize is TCMU_SENSE_BUFFERSIZE.
	SenseBufferSize = 96
)

// TMR entry (struct tcmu_tmr_entry, packed; sizeof = 32).
const (
	tmrTypeOff   = 8  // __u8 tmr_type
	tmrCmdCntOff = 12 // __u32 cmd_cnt
	tmrCmdIDsOff = 32 // __u16 cmd_ids[]
	tmrEntrySize = 32
)

// TMRType is the tmr_type of a TMR entry (TCMU_TMR_*).
type TMRType uint8

// TMR types.
const (
	TMRUnknown         TMRType = 0
	TMRAbortTask       TMRType = 1
	TMRAbortTaskSet    TMRType = 2
	TMRClearACA        TMRType = 3
	TMRClearTaskSet    TMRType = 4
	TMRLUNReset        TMRType = 5
	TMRTargetWarmReset TMRType = 6
	TMRTargetColdReset TMRType = 7
	TMRLUNResetPRO     TMRType = 128 // pseudo reset due to a received PR OUT
)

// String returns a stable snake_case name, usable as a metric label.
func (t TMRType) String() string {
	switch t {
	case TMRUnknown:
		return "unknown"
	case TMRAbortTask:
		return "abort_task"
	case TMRAbortTaskSet:
		return "abort_task_set"
	case TMRClearACA:
		return "clear_aca"
	case TMRClearTaskSet:
		return "clear_task_set"
	case TMRLUNReset:
		return "lun_reset"
	case TMRTargetWarmReset:
		return "target_warm_reset"
	case TMRTargetColdReset:
		return "target_cold_reset"
	case TMRLUNResetPRO:
		return "lun_reset_pro"
	}
	return "other"
}

// entrySizeFor returns the length the kernel gives a command entry with n
// iovecs and a CDB of cdbLen bytes (tcmu_cmd_get_base_cmd_size and
// tcmu_cmd_get_cmd_size in drivers/target/target_core_user.c): the base is
// max(offsetof(iov[n]), sizeof(entry)); the CDB follows the base, rounded up
// to TCMU_OP_ALIGN_SIZE.
func entrySizeFor(n, cdbLen int) (base, total int) {
	base = max(reqIovOff+iovSize*n, cmdEntrySize)
	return base, base + (cdbLen+opAlign-1)&^(opAlign-1)
}

// kernelCDBLen is the kernel's scsi_command_size(): the CDB length the kernel
// copies into the ring. Group 0 → 6, 1/2 → 10, 3 → 12, 4 → 16, 5 → 12, 6/7 → 10;
// VARIABLE LENGTH (0x7f) is 8 + byte 7. It needs b[0] (and b[7] for 0x7f);
// ok is false when b is too short to tell.
func kernelCDBLen(b []byte) (n int, ok bool) {
	if len(b) == 0 {
		return 0, false
	}
	if b[0] == 0x7f {
		if len(b) < 8 {
			return 0, false
		}
		return 8 + int(b[7]), true
	}
	return [8]int{6, 10, 10, 12, 16, 12, 10, 10}[b[0]>>5], true
}
