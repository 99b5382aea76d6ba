package tcmu

import "testing"

// The numbers below are include/uapi/linux/target_core_user.h (linux-libc-dev
// 6.1) as a C compiler lays it out on x86_64 (gcc, offsetof/sizeof):
//
//	#define TCMU_MAILBOX_VERSION 2
//	#define ALIGN_SIZE 64 /* Should be enough for most CPUs */
//	#define TCMU_MAILBOX_FLAG_CAP_OOOC (1 << 0) /* Out-of-order completions */
//	#define TCMU_MAILBOX_FLAG_CAP_READ_LEN (1 << 1) /* Read data length */
//	#define TCMU_MAILBOX_FLAG_CAP_TMR (1 << 2) /* TMR notifications */
//	#define TCMU_MAILBOX_FLAG_CAP_KEEP_BUF (1<<3) /* Keep buf after cmd completion */
//
//	struct tcmu_mailbox {
//		__u16 version;
//		__u16 flags;
//		__u32 cmdr_off;
//		__u32 cmdr_size;
//		__u32 cmd_head;
//		/* Updated by user. On its own cacheline */
//		__u32 cmd_tail __attribute__((__aligned__(ALIGN_SIZE)));
//	} __attribute__((packed));
//
//	enum tcmu_opcode { TCMU_OP_PAD = 0, TCMU_OP_CMD, TCMU_OP_TMR };
//
//	struct tcmu_cmd_entry_hdr {
//		__u32 len_op;
//		__u16 cmd_id;
//		__u8 kflags;
//	#define TCMU_UFLAG_UNKNOWN_OP 0x1
//	#define TCMU_UFLAG_READ_LEN   0x2
//	#define TCMU_UFLAG_KEEP_BUF   0x4
//		__u8 uflags;
//	} __attribute__((packed));
//
//	#define TCMU_OP_MASK 0x7
//	#define TCMU_SENSE_BUFFERSIZE 96
//
//	struct tcmu_cmd_entry {
//		struct tcmu_cmd_entry_hdr hdr;
//		union {
//			struct {
//				__u32 iov_cnt;
//				__u32 iov_bidi_cnt;
//				__u32 iov_dif_cnt;
//				__u64 cdb_off;
//				__u64 __pad1;
//				__u64 __pad2;
//				struct iovec iov[0];
//			} req;
//			struct {
//				__u8 scsi_status;
//				__u8 __pad1;
//				__u16 __pad2;
//				__u32 read_len;
//				char sense_buffer[TCMU_SENSE_BUFFERSIZE];
//			} rsp;
//		};
//	} __attribute__((packed));
//
//	struct tcmu_tmr_entry {
//		struct tcmu_cmd_entry_hdr hdr;
//	#define TCMU_TMR_UNKNOWN		0
//	#define TCMU_TMR_ABORT_TASK		1
//	#define TCMU_TMR_ABORT_TASK_SET		2
//	#define TCMU_TMR_CLEAR_ACA		3
//	#define TCMU_TMR_CLEAR_TASK_SET		4
//	#define TCMU_TMR_LUN_RESET		5
//	#define TCMU_TMR_TARGET_WARM_RESET	6
//	#define TCMU_TMR_TARGET_COLD_RESET	7
//	/* Pseudo reset due to received PR OUT */
//	#define TCMU_TMR_LUN_RESET_PRO		128
//		__u8 tmr_type;
//		__u8 __pad1;
//		__u16 __pad2;
//		__u32 cmd_cnt;
//		__u64 __pad3;
//		__u64 __pad4;
//		__u16 cmd_ids[];
//	} __attribute__((packed));
//
//	#define TCMU_OP_ALIGN_SIZE sizeof(__u64)
//
// The outer structs are packed but the anonymous req struct is not, so
// cdb_off sits at 24, 8-byte aligned. The compiled layout, for the record:
//
//	mb size 128 ver 0 flags 2 cmdr_off 4 cmdr_size 8 head 12 tail 64
//	hdr 8 len_op 0 cmd_id 4 kflags 6 uflags 7
//	entry 112 iov_cnt 8 bidi 12 dif 16 cdb_off 24 pad1 32 pad2 40 iov 48 iovsz 16
//	rsp status 8 read_len 12 sense 16
//	tmr 32 type 8 cnt 12 ids 32
//	iov_base 0 iov_len 8
func TestABI(t *testing.T) {
	for _, c := range []struct {
		name      string
		got, want int
	}{
		{"TCMU_MAILBOX_VERSION", MailboxVersion, 2},
		{"mailbox.version", mbVersionOff, 0},
		{"mailbox.flags", mbFlagsOff, 2},
		{"mailbox.cmdr_off", mbCmdrOffOff, 4},
		{"mailbox.cmdr_size", mbCmdrSizeOff, 8},
		{"mailbox.cmd_head", mbCmdHeadOff, 12},
		{"mailbox.cmd_tail", mbCmdTailOff, 64},
		{"sizeof(tcmu_mailbox)", mbSize, 128},
		{"CAP_OOOC", int(FlagOOOC), 1 << 0},
		{"CAP_READ_LEN", int(FlagReadLen), 1 << 1},
		{"CAP_TMR", int(FlagTMR), 1 << 2},
		{"CAP_KEEP_BUF", int(FlagKeepBuf), 1 << 3},
		{"hdr.len_op", hdrLenOpOff, 0},
		{"hdr.cmd_id", hdrCmdIDOff, 4},
		{"hdr.kflags", hdrKFlagsOff, 6},
		{"hdr.uflags", hdrUFlagsOff, 7},
		{"sizeof(tcmu_cmd_entry_hdr)", hdrSize, 8},
		{"TCMU_OP_MASK", opMask, 7},
		{"TCMU_OP_ALIGN_SIZE", opAlign, 8},
		{"TCMU_OP_PAD", opPad, 0},
		{"TCMU_OP_CMD", opCmd, 1},
		{"TCMU_OP_TMR", opTMR, 2},
		{"TCMU_UFLAG_UNKNOWN_OP", int(UFlagUnknownOp), 1},
		{"TCMU_UFLAG_READ_LEN", int(UFlagReadLen), 2},
		{"TCMU_UFLAG_KEEP_BUF", int(UFlagKeepBuf), 4},
		{"req.iov_cnt", reqIovCntOff, 8},
		{"req.iov_bidi_cnt", reqIovBidiCntOff, 12},
		{"req.iov_dif_cnt", reqIovDifCntOff, 16},
		{"req.cdb_off", reqCdbOffOff, 24},
		{"req.iov", reqIovOff, 48},
		{"sizeof(struct iovec)", iovSize, 16},
		{"iovec.iov_base", iovBaseOff, 0},
		{"iovec.iov_len", iovLenOff, 8},
		{"rsp.scsi_status", rspStatusOff, 8},
		{"rsp.read_len", rspReadLenOff, 12},
		{"rsp.sense_buffer", rspSenseOff, 16},
		{"TCMU_SENSE_BUFFERSIZE", SenseBufferSize, 96},
		{"sizeof(tcmu_cmd_entry)", cmdEntrySize, 112},
		{"tmr.tmr_type", tmrTypeOff, 8},
		{"tmr.cmd_cnt", tmrCmdCntOff, 12},
		{"tmr.cmd_ids", tmrCmdIDsOff, 32},
		{"sizeof(tcmu_tmr_entry)", tmrEntrySize, 32},
		{"TCMU_TMR_UNKNOWN", int(TMRUnknown), 0},
		{"TCMU_TMR_ABORT_TASK", int(TMRAbortTask), 1},
		{"TCMU_TMR_ABORT_TASK_SET", int(TMRAbortTaskSet), 2},
		{"TCMU_TMR_CLEAR_ACA", int(TMRClearACA), 3},
		{"TCMU_TMR_CLEAR_TASK_SET", int(TMRClearTaskSet), 4},
		{"TCMU_TMR_LUN_RESET", int(TMRLUNReset), 5},
		{"TCMU_TMR_TARGET_WARM_RESET", int(TMRTargetWarmReset), 6},
		{"TCMU_TMR_TARGET_COLD_RESET", int(TMRTargetColdReset), 7},
		{"TCMU_TMR_LUN_RESET_PRO", int(TMRLUNResetPRO), 128},
		// The response must fit in the smallest command entry, and the
		// sense buffer must end inside it (a completion never reaches
		// the CDB the kernel copied after the base).
		{"rsp end", rspSenseOff + SenseBufferSize, cmdEntrySize},
	} {
		if c.got != c.want {
			t.Errorf("%s = %d, want %d", c.name, c.got, c.want)
		}
	}
}

func TestEntrySize(t *testing.T) {
	// tcmu_cmd_get_base_cmd_size / tcmu_cmd_get_cmd_size.
	for _, c := range []struct{ iovs, cdb, base, total int }{
		{0, 6, 112, 120},
		{1, 10, 112, 128},
		{4, 16, 112, 128},
		{5, 16, 128, 144},
		{256, 16, 48 + 16*256, 48 + 16*256 + 16},
		{1, 12, 112, 128},
		{1, 32, 112, 144},
	} {
		if b, tot := entrySizeFor(c.iovs, c.cdb); b != c.base || tot != c.total {
			t.Errorf("entrySizeFor(%d, %d) = %d, %d; want %d, %d", c.iovs, c.cdb, b, tot, c.base, c.total)
		}
	}
}

func TestKernelCDBLen(t *testing.T) {
	// scsi_command_size: COMMAND_SIZE(opcode) from scsi_command_size_tbl
	// {6, 10, 10, 12, 16, 12, 10, 10}, and 8+cdb[7] for VARIABLE LENGTH.
	for _, c := range []struct {
		cdb  []byte
		n    int
		okay bool
	}{
		{[]byte{0x00}, 6, true},
		{[]byte{0x28}, 10, true},
		{[]byte{0x5a}, 10, true},
		{[]byte{0x7e}, 12, true},
		{[]byte{0x88}, 16, true},
		{[]byte{0xa8}, 12, true},
		{[]byte{0xc0}, 10, true},
		{[]byte{0xff}, 10, true},
		{[]byte{0x7f, 0, 0, 0, 0, 0, 0, 0x18}, 32, true},
		{[]byte{0x7f, 0, 0}, 0, false},
		{nil, 0, false},
	} {
		if n, ok := kernelCDBLen(c.cdb); n != c.n || ok != c.okay {
			t.Errorf("kernelCDBLen(% x) = %d, %v; want %d, %v", c.cdb, n, ok, c.n, c.okay)
		}
	}
}
