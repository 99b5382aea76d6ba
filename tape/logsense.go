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
	logTapeAlert    = 0x2e // SSC-5 8.2.5 TapeAlert
	logTapeCapacity = 0x31 // tape capacity (IBM/HP LTO vendor page LTFS reads)
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

var logPages = [...]uint8{logSupported, logSeqAccess, logSelfTest, logVolumeStats, logTapeAlert, logTapeCapacity}

// Log parameter control bytes (SPC-5 7.3.2.2.2): FORMAT AND LINKING 00b
// bounded data counter, 01b ASCII list, 11b binary list.
const (
	ctlCounter = 0x00
	ctlASCII   = 0x01
	ctlBinary  = 0x03
)

const mib = 1 << 20

// logWriter appends log parameters whose code is at least ptr (the
// PARAMETER POINTER of the CDB).
type logWriter struct {
	b   []byte
	ptr uint16
}

func (w *logWriter) param(code uint16, ctl byte, val ...byte) {
	if code < w.ptr {
		return
	}
	w.b = binary.BigEndian.AppendUint16(w.b, code)
	w.b = append(w.b, ctl, byte(len(val)))
	w.b = append(w.b, val...)
}

func (w *logWriter) u8(code uint16, ctl byte, v uint8) { w.param(code, ctl, v) }

func (w *logWriter) u32(code uint16, ctl byte, v uint64) {
	w.param(code, ctl, byte(v>>24), byte(v>>16), byte(v>>8), byte(v))
}

func (w *logWriter) u64(code uint16, ctl byte, v uint64) {
	var b [8]byte
	binary.BigEndian.PutUint64(b[:], v)
	w.param(code, ctl, b[:]...)
}

// perPartition appends a volume statistics parameter made of partition
// record descriptors (SSC-5 8.2.4: length 07h, reserved, PARTITION NUMBER,
// a 4-byte value).
func (w *logWriter) perPartition(code uint16, n int, value func(p int) uint64) {
	if code < w.ptr {
		return
	}
	w.b = binary.BigEndian.AppendUint16(w.b, code)
	w.b = append(w.b, ctlBinary, byte(8*n))
	for p := range n {
		w.b = append(w.b, 7, 0, byte(p>>8), byte(p))
		w.b = binary.BigEndian.AppendUint32(w.b, uint32(min(value(p), 0xffffffff)))
	}
}

// logSense is LOG SENSE (SPC-5 6.9): byte 1 PPC (bit 1) and SP (bit 0) are
// not supported; byte 2 PC (bits 7..6, every page control returns the
// current values) and PAGE CODE; byte 3 SUBPAGE CODE (00h, or FFh with page
// 00h for the supported pages and subpages list); PARAMETER POINTER bytes
// 5-6; ALLOCATION LENGTH bytes 7-8. Pages: 00h supported pages, 0Ch
// sequential-access device, 10h self-test results, 17h volume statistics, 2Eh TapeAlert (64
// flags, all clear), 31h tape capacity, and on the IBM models 37h
// performance characteristics (subpages 00h and 64h, the parameters LTFS
// reads). Without a cartridge the capacity figures are zero.
func (d *Drive) logSense(cmd *scsi.Command) scsi.Response {
	c := cmd.CDB
	if c.Byte(1)&0x02 != 0 {
		return check(scsi.InvalidFieldSense(1, 1))
	}
	if c.Byte(1)&0x01 != 0 {
		return check(scsi.InvalidFieldSense(1, 0))
	}
	page, sub := c.Byte(2)&0x3f, c.Byte(3)
	if sub != 0 && (page != logSupported || sub != 0xff) && (!d.pers.IBM || page != logPerformance || sub != subPerfCapacity) {
		return check(scsi.InvalidFieldSense(3, -1))
	}
	w := logWriter{b: append(d.buf[:0], page, sub, 0, 0), ptr: c.Uint16(5)}
	if sub != 0 {
		w.b[0] |= 0x40 // SPF
	}
	switch page {
	case logSupported:
		for _, p := range logPages {
			w.b = append(w.b, p)
			if sub == 0xff {
				w.b = append(w.b, 0)
				if p == logSupported {
					w.b = append(w.b, logSupported, 0xff)
				}
			}
		}
		if d.pers.IBM {
			w.b = append(w.b, logPerformance)
			if sub == 0xff {
				w.b = append(w.b, 0, logPerformance, subPerfCapacity)
			}
		}
	case logSeqAccess:
		d.seqAccessPage(&w)
	case logSelfTest:
		w.b = d.spc.SelfTests.AppendParams(w.b, w.ptr)
	case logVolumeStats:
		d.volumeStatsPage(&w)
	case logTapeAlert:
		for f := uint16(1); f <= 64; f++ {
			w.u8(f, ctlCounter, 0)
		}
	case logTapeCapacity:
		for p := range 2 {
			remaining, maximum := d.partitionMiB(p)
			w.u32(uint16(1+p), ctlCounter, remaining)
			w.u32(uint16(3+p), ctlCounter, maximum)
		}
	case logPerformance:
		if !d.pers.IBM {
			return check(scsi.InvalidFieldSense(2, 5))
		}
		if sub == subPerfCapacity {
			w.u32(perfCQLossWrite, ctlBinary, 0) // no capacity lost
		} else {
			w.u8(perfCartCondition, ctlBinary, 100) // a cartridge in perfect condition
		}
	default:
		return check(scsi.InvalidFieldSense(2, 5))
	}
	binary.BigEndian.PutUint16(w.b[2:], uint16(len(w.b)-4))
	d.buf = w.b
	scsi.WriteParameterData(cmd.Data, w.b, int(c.Uint16(7)))
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
// bytes from and to the initiator (no compression: the same as to and from
// the medium), and the capacity of the current partition in MiB.
func (d *Drive) seqAccessPage(w *logWriter) {
	written, read := d.st.writtenBytes.Load(), d.st.readBytes.Load()
	w.u64(0x0000, ctlCounter, written)
	w.u64(0x0001, ctlCounter, written)
	w.u64(0x0002, ctlCounter, read)
	w.u64(0x0003, ctlCounter, read)
	var used, toEW, ew int64
	if d.state != stateEmpty {
		p := d.partition()
		c, e := d.capacity(p)
		used, toEW, ew = d.med.Used(p), max(c-e, 0), e
	}
	w.u32(0x0004, ctlCounter, uint64(used)/mib)
	w.u32(0x0005, ctlCounter, uint64(toEW)/mib)
	w.u32(0x0006, ctlCounter, uint64(ew)/mib)
	w.u8(0x0100, ctlCounter, 0) // cleaning required: no
}

// volumeStatsPage is the volume statistics log page (SSC-5 8.2.4) with the
// per-partition capacity parameters LTFS reads (202h approximate native
// capacity, 203h approximate used native capacity, 204h remaining capacity
// to early warning), in megabytes (10^6 bytes) as SSC has them and as LTFS
// converts them to MiB; LTFS reads 203h, two partitions of it, for the EOD
// status (FFFFFFFFh would be a missing EOD). LTFS rejects a zero
// capacity, so they are only reported with a cartridge loaded.
func (d *Drive) volumeStatsPage(w *logWriter) {
	w.u8(0x0000, ctlBinary, 1) // page valid
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
	w.u32(0x0001, ctlBinary, 1) // volume mounts: this one
	w.u32(0x0016, ctlBinary, uint64(total)/1e6)
	w.u32(0x0017, ctlBinary, uint64(used)/1e6)
	var serial [32]byte
	putASCII(serial[:], d.barcode)
	w.param(0x0040, ctlASCII, serial[:]...)
	w.u8(0x0080, ctlBinary, b2u8(d.info.WriteProtected))
	w.u8(0x0081, ctlBinary, b2u8(d.info.WORM))
	w.perPartition(0x0202, n, func(p int) uint64 { c, _ := d.capacity(p); return uint64(c) / 1e6 })
	w.perPartition(0x0203, n, func(p int) uint64 { return uint64(d.med.Used(p)) / 1e6 })
	w.perPartition(0x0204, n, func(p int) uint64 {
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
// or no parameter list) is accepted, and there is nothing to reset: the
// counters are the drive's lifetime counters that metrics read. SP (bit 0)
// and parameter data are refused.
func (d *Drive) logSelect(cmd *scsi.Command) scsi.Response {
	c := cmd.CDB
	if c.Byte(1)&0x01 != 0 {
		return check(scsi.InvalidFieldSense(1, 0))
	}
	if c.Uint16(7) != 0 {
		return check(scsi.InvalidFieldSense(7, -1))
	}
	return scsi.Good
}
