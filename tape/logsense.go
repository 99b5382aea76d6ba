package tape

import (
	"encoding/binary"

	"github.com/vscsid/vscsid/scsi"
)

// LOG SENSE pages (SPC-5 7.3, SSC-5 8.2).
const (
	logSupported    = 0x00
	logSeqAccess    = 0x0c // SSC-5 8.2.3 sequential-access device
	logSelfTest     = scsi.SelfTestResultsPage
	logVolumeStats  = 0x17 // SSC-5 8.2.4 volume statistics
	logCompression  = 0x1b // SSC-5 8.2.2 data compression
	logTapeAlert    = 0x2e // SSC-5 8.2.5 TapeAlert
	logTapeCapacity = 0x31 // tape capacity (IBM/HP LTO vendor page LTFS reads)
	logLTOCompress  = 0x32 // IBM LTO data compression: 1Bh's parameters (IBM models only)
	logPerformance  = 0x37 // IBM LTO performance characteristics (IBM models only)
	subPerfCapacity = 0x64 // its capacity group, mount values, advanced counters
)

// Parameters of the IBM performance page that LTFS reads: the media
// efficiency (cartridge condition, percent) of subpage 00h, and the
// active capacity-loss rate while writing of subpage 64h (a 16.16 fixed
// point ratio).
const (
	perfCartCondition = 0x0001
	perfCQLossWrite   = 0x7113
)

var logPages = [...]uint8{logSupported, logSeqAccess, logSelfTest, logVolumeStats, logCompression, logTapeAlert, logTapeCapacity}

const (
	ctlCounter = scsi.LogCounter
	ctlASCII   = scsi.LogASCII
	ctlBinary  = scsi.LogBinary
)

const mib = 1 << 20

// logWriter is the shared log page writer.
type logWriter = scsi.LogPage

// perPartition appends a volume statistics parameter made of partition
// record descriptors (SSC-5 8.2.4: length 07h, reserved, PARTITION NUMBER,
// a 4-byte value).
func perPartition(w *logWriter, code uint16, n int, value func(p int) uint64) {
	if code < w.Ptr {
		return
	}
	w.B = binary.BigEndian.AppendUint16(w.B, code)
	w.B = append(w.B, ctlBinary, byte(8*n))
	for p := range n {
		w.B = append(w.B, 7, 0, byte(p>>8), byte(p))
		w.B = binary.BigEndian.AppendUint32(w.B, uint32(min(value(p), 0xffffffff)))
	}
}

// logSense is LOG SENSE (SPC-5 6.9): byte 1 PPC (bit 1) and SP (bit 0) are
// not supported; byte 2 PC (bits 7..6, every page control returns the
// current values) and PAGE CODE; byte 3 SUBPAGE CODE (00h, or FFh with page
// 00h for the supported pages and subpages list); PARAMETER POINTER bytes
// 5-6; ALLOCATION LENGTH bytes 7-8. Pages: 00h supported pages, 0Ch
// sequential-access device, 10h self-test results, 17h volume statistics,
// 1Bh data compression, 2Eh TapeAlert (64 flags, all clear), 31h tape
// capacity, and on the IBM models 32h data compression (IBM's page number
// for 1Bh's parameters) and 37h performance characteristics (subpages 00h
// and 64h, the parameters LTFS reads). Without a cartridge the capacity figures are zero.
func (d *Drive) logSense(cmd *scsi.Command) scsi.Response {
	ls, err := scsi.DecodeLogSense(cmd.CDB)
	if err != nil {
		return d.spc.ResponseFor(err)
	}
	page, sub := ls.Page, ls.Subpage
	if sub != 0 && (page != logSupported || sub != 0xff) && (!d.pers.IBM || page != logPerformance || sub != subPerfCapacity) {
		return check(scsi.InvalidFieldSense(3, -1))
	}
	w := scsi.NewLogPage(d.buf, ls)
	switch page {
	case logSupported:
		for _, p := range logPages {
			w.B = append(w.B, p)
			if sub == 0xff {
				w.B = append(w.B, 0)
				if p == logSupported {
					w.B = append(w.B, logSupported, 0xff)
				}
			}
		}
		if d.pers.IBM {
			w.B = append(w.B, logLTOCompress)
			if sub == 0xff {
				w.B = append(w.B, 0)
			}
			w.B = append(w.B, logPerformance)
			if sub == 0xff {
				w.B = append(w.B, 0, logPerformance, subPerfCapacity)
			}
		}
	case logSeqAccess:
		d.seqAccessPage(&w)
	case logSelfTest:
		w.B = d.spc.SelfTests.AppendParams(w.B, w.Ptr)
	case logVolumeStats:
		d.volumeStatsPage(&w)
	case logCompression:
		d.compressionPage(&w)
	case logLTOCompress:
		if !d.pers.IBM {
			return check(scsi.InvalidFieldSense(2, 5))
		}
		d.compressionPage(&w)
	case logTapeAlert:
		w.TapeAlert(d.alerts)
	case logTapeCapacity:
		for p := range 2 {
			remaining, maximum := d.partitionMiB(p)
			w.U32(uint16(1+p), ctlCounter, remaining)
			w.U32(uint16(3+p), ctlCounter, maximum)
		}
	case logPerformance:
		if !d.pers.IBM {
			return check(scsi.InvalidFieldSense(2, 5))
		}
		if sub == subPerfCapacity {
			w.U32(perfCQLossWrite, ctlBinary, 0) // no capacity lost
		} else {
			w.U8(perfCartCondition, ctlBinary, 100) // a cartridge in perfect condition
		}
	default:
		return check(scsi.InvalidFieldSense(2, 5))
	}
	d.buf = w.Finish()
	scsi.WriteParameterData(cmd.Data, d.buf, ls.Alloc)
	return scsi.Good
}

// partitionMiB returns the remaining and maximum native capacity of
// partition p of the loaded cartridge, in MiB (0 without one, or for a
// partition the cartridge does not have).
func (d *Drive) partitionMiB(p int) (remaining, maximum uint64) {
	if d.state == stateEmpty || p >= d.info.Partitions {
		return 0, 0
	}
	c, _ := d.capacity(p)
	used := d.med.Used(p)
	return uint64(max(c-used, 0)) / mib, uint64(c) / mib
}

// seqAccessPage is the sequential-access device log page (SSC-5 8.2.3):
// data bytes received from the initiator by WRITE and written to the
// medium (after compression), read from the medium and sent by READ,
// since the cartridge was loaded; and the capacity of the current
// partition in MiB.
func (d *Drive) seqAccessPage(w *logWriter) {
	c := d.sinceLoad()
	w.U64(0x0000, ctlCounter, c.written)
	w.U64(0x0001, ctlCounter, c.mediumWritten)
	w.U64(0x0002, ctlCounter, c.mediumRead)
	w.U64(0x0003, ctlCounter, c.read)
	var used, toEW, ew int64
	if d.state != stateEmpty {
		p := d.partition()
		c, e := d.capacity(p)
		used, toEW, ew = d.med.Used(p), max(c-e, 0), e
	}
	w.U32(0x0004, ctlCounter, uint64(used)/mib)
	w.U32(0x0005, ctlCounter, uint64(toEW)/mib)
	w.U32(0x0006, ctlCounter, uint64(ew)/mib)
	w.U8(0x0100, ctlCounter, 0) // cleaning required: no
}

// compressionPage is the data compression log page (SSC-5 8.2.2; the
// same parameters as IBM LTO's page 32h): the read and write compression
// ratios × 100 (host bytes over medium bytes; 0 before any data moved),
// the bytes sent to and received from the initiator and read from and
// written to the medium since the cartridge was loaded, each as whole
// MiB (2^20 bytes) and the bytes beyond them, and whether compression
// is enabled (DCE).
func (d *Drive) compressionPage(w *logWriter) {
	c := d.sinceLoad()
	w.U32(0x0000, ctlCounter, ratio100(c.read, c.mediumRead))
	w.U32(0x0001, ctlCounter, ratio100(c.written, c.mediumWritten))
	for i, n := range [...]uint64{c.read, c.mediumRead, c.written, c.mediumWritten} {
		code := uint16(0x0002 + 2*i)
		w.U32(code, ctlCounter, n/mib)
		w.U32(code+1, ctlCounter, n%mib)
	}
	w.U8(0x0100, ctlCounter, b2u8(d.mode.compression))
}

// ratio100 is host/medium × 100, 0 when nothing reached the medium.
func ratio100(host, medium uint64) uint64 {
	if medium == 0 {
		return 0
	}
	return host * 100 / medium
}

// sinceLoad returns the byte counters since the load or the last LOG
// SELECT reset.
func (d *Drive) sinceLoad() byteCounts {
	c, b := d.st.bytes(), d.logBase
	return byteCounts{c.read - b.read, c.written - b.written, c.mediumRead - b.mediumRead, c.mediumWritten - b.mediumWritten}
}

// volumeStatsPage is the volume statistics log page (SSC-5 8.2.4) with the
// per-partition capacity parameters LTFS reads (202h approximate native
// capacity, 203h approximate used native capacity, 204h remaining capacity
// to early warning), in megabytes (10^6 bytes) as SSC has them and as LTFS
// converts them to MiB; LTFS reads 203h, two partitions of it, for the EOD
// status (FFFFFFFFh would be a missing EOD). LTFS rejects a zero
// capacity, so they are only reported with a cartridge loaded.
func (d *Drive) volumeStatsPage(w *logWriter) {
	w.U8(0x0000, ctlBinary, 1) // page valid
	if d.state == stateEmpty {
		return
	}
	n := d.info.Partitions
	var total, used int64
	for p := range n {
		c, _ := d.capacity(p)
		total += c
		used += d.med.Used(p)
	}
	w.U32(0x0001, ctlBinary, 1) // volume mounts: this one
	w.U32(0x0016, ctlBinary, uint64(total)/1e6)
	w.U32(0x0017, ctlBinary, uint64(used)/1e6)
	var serial [32]byte
	putASCII(serial[:], d.barcode)
	w.Param(0x0040, ctlASCII, serial[:]...)
	w.U8(0x0080, ctlBinary, b2u8(d.info.WriteProtected))
	w.U8(0x0081, ctlBinary, b2u8(d.info.WORM))
	perPartition(w, 0x0202, n, func(p int) uint64 { c, _ := d.capacity(p); return uint64(c) / 1e6 })
	perPartition(w, 0x0203, n, func(p int) uint64 { return uint64(d.med.Used(p)) / 1e6 })
	perPartition(w, 0x0204, n, func(p int) uint64 {
		c, ew := d.capacity(p)
		return uint64(max(c-ew-d.med.Used(p), 0)) / 1e6
	})
}

func b2u8(b bool) uint8 {
	if b {
		return 1
	}
	return 0
}

// logSelect is LOG SELECT (SPC-5 6.8). Only resetting (PCR, byte 1 bit 1,
// or no parameter list) is accepted: it restarts the byte counts of the
// sequential-access and data compression pages (the drive's lifetime
// counters, which metrics read, go on). SP (bit 0) and parameter data are
// refused.
func (d *Drive) logSelect(cmd *scsi.Command) scsi.Response {
	c := cmd.CDB
	if c.Byte(1)&0x01 != 0 {
		return check(scsi.InvalidFieldSense(1, 0))
	}
	if c.Uint16(7) != 0 {
		return check(scsi.InvalidFieldSense(7, -1))
	}
	d.logBase = d.st.bytes()
	return scsi.Good
}
