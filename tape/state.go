package tape

import (
	"errors"
	"fmt"
)

// This file holds the drive's state that is not the medium: readiness, the
// values MODE SELECT changes, and the pure rules over them (no I/O).
//
// The life of a drive (SSC-5 4.2, 4.3):
//
//	empty ──Load(barcode)──▶ ready (BOP of partition 0, UA 28/00)
//	ready ──LOAD UNLOAD HOLD=1──▶ held ──LOAD UNLOAD LOAD=1──▶ ready (UA 28/00)
//	ready|held ──LOAD UNLOAD HOLD=0 or Unload()──▶ empty
//
// While ready, the position moves over blocks, filemarks and setmarks up to
// end of data; the early-warning zone and the physical end are properties of
// the partition's fill level (Medium.Used against MediumInfo), not states.

// readiness is whether medium access commands can run.
type readiness uint8

const (
	stateEmpty readiness = iota // no cartridge: NOT READY, MEDIUM NOT PRESENT (3A/00)
	stateHeld                   // unloaded to the hold position: NOT READY, INITIALIZING COMMAND REQUIRED (04/02)
	stateReady                  // loaded and positioned
)

func (r readiness) String() string {
	switch r {
	case stateEmpty:
		return "empty"
	case stateHeld:
		return "held"
	case stateReady:
		return "ready"
	}
	return "unknown"
}

// modeState is what MODE SELECT changes. Power-on, Reset and a LUN reset
// restore defaults (SAM-5: a logical unit reset restores mode parameters to
// their saved or default values; this drive saves none).
type modeState struct {
	blockSize   uint32 // 0 = variable-block mode
	density     uint8  // density selected for writing at BOP (0 = the drive's default)
	compression bool   // DCE of the data compression page
	rsmk        bool   // RSMK of the device configuration page: report setmarks
	sew         bool   // SEW: synchronise at early warning (accepted, always true in effect)
	pews        uint16 // programmable early warning size, MB (device configuration extension)
	dsense      bool   // D_SENSE of the control page
	lbp         lbpState
	// informational exceptions control page (0x1C) bytes 2..11, stored.
	iec [10]byte
	// eodControl is byte 8 of IBM's read/write control page (25h) on 3592
	// models: stored and reported. LTFS writes 0Ch to turn off reading
	// across end of data, which this drive never does anyway (a read at
	// EOD is BLANK CHECK).
	eodControl uint8
	// pending is the partition layout MODE SELECT of page 0x11 asked for;
	// FORMAT MEDIUM applies it (POFM=1), loading another cartridge drops it.
	pending []int64
}

func defaultModes(p *Personality, cfg Config) modeState {
	m := modeState{blockSize: p.DefaultBlockSize, compression: cfg.Compression, dsense: cfg.DSense}
	if cfg.BlockSizeSet {
		m.blockSize = cfg.BlockSize
	}
	m.iec[0] = 0x08 // DEXCPT=1: no informational exception reporting
	m.iec[1] = 0x03 // MRIE 3h (conditionally generate recovered error), never triggered
	return m
}

// inEarlyWarning reports whether a partition filled to used bytes of
// capacity is in the early-warning zone (the last ew bytes before the
// physical end). A partition without capacity figures never is.
func inEarlyWarning(used, capacity, ew int64) bool {
	if capacity <= 0 {
		return false
	}
	return used >= capacity-ew
}

// Partition size units of the medium partition page (SSC-5 8.3.4, PSUM).
const (
	psumBytes = 0
	psumKB    = 1
	psumMB    = 2
	psumUnits = 3 // 10^PARTITION UNITS bytes
)

// partitionSizes turns the medium partition page an initiator sent into the
// byte sizes for Medium.Format (SSC-5 8.3.4). total is the medium's native
// capacity; maxParts the drive's limit. It returns errOffset, the byte
// offset inside the page of the offending field, with the error.
//
//   - FDP=1: the drive picks; it makes ADDITIONAL PARTITIONS DEFINED+1 equal
//     partitions (at least two, as st's legacy FDP request means).
//   - SDP=1: ADDITIONAL PARTITIONS DEFINED+1 equal partitions.
//   - IDP=1: the partition size descriptors, in PSUM units; FFFFh means
//     "the rest". With one descriptor fewer than partitions (the SCSI-2
//     form st uses when MAXIMUM ADDITIONAL PARTITIONS is 1) the
//     descriptors size the additional partitions and partition 0 gets the
//     rest.
//   - none: one partition.
func partitionSizes(page []byte, total int64, maxParts int) (sizes []int64, errOffset int, err error) {
	if len(page) < 8 {
		return nil, 1, errors.New("page too short")
	}
	addl := int(page[3])
	flags := page[4]
	fdp, sdp, idp := flags&0x80 != 0, flags&0x40 != 0, flags&0x20 != 0
	psum := int(flags>>3) & 0x03
	units := int(page[6] & 0x0f)
	n := addl + 1
	if n > maxParts {
		return nil, 3, fmt.Errorf("%d partitions, the drive supports %d", n, maxParts)
	}
	if b2i(fdp)+b2i(sdp)+b2i(idp) > 1 {
		return nil, 4, errors.New("more than one of FDP, SDP, IDP")
	}
	equal := func(n int) []int64 {
		s := make([]int64, n)
		for i := range s {
			s[i] = total / int64(n)
		}
		s[n-1] = 0 // the rest, absorbing the rounding
		return s
	}
	switch {
	case fdp:
		return equal(max(n, 2)), 0, nil
	case sdp:
		return equal(n), 0, nil
	case !idp:
		if addl != 0 {
			return nil, 3, errors.New("additional partitions without FDP, SDP or IDP")
		}
		return []int64{0}, 0, nil
	}
	var unit int64
	switch psum {
	case psumBytes:
		unit = 1
	case psumKB:
		unit = 1000
	case psumMB:
		unit = 1000 * 1000
	case psumUnits:
		unit = 1
		for range units {
			if unit > total {
				break
			}
			unit *= 10
		}
	}
	nd := (len(page) - 8) / 2
	first := 0 // partition the first descriptor sizes
	switch {
	case nd >= n:
	case nd == n-1:
		first = 1
	default:
		return nil, 1, fmt.Errorf("%d partition size descriptors for %d partitions", nd, n)
	}
	sizes = make([]int64, n)
	rest := -1
	if first == 1 {
		rest = 0
	}
	var sum int64
	lastOff := 8
	for i := first; i < n; i++ {
		off := 8 + 2*(i-first)
		lastOff = off
		v := int64(page[off])<<8 | int64(page[off+1])
		if v == 0xffff {
			if rest >= 0 {
				return nil, off, errors.New("more than one partition sized \"the rest\"")
			}
			rest = i
			continue
		}
		if v == 0 {
			return nil, off, errors.New("zero-size partition")
		}
		sizes[i] = v * unit
		sum += sizes[i]
		if sum < 0 || sum > total || (rest >= 0 && sum == total) {
			return nil, off, fmt.Errorf("partitions of %d bytes or more exceed the medium's %d", sum, total)
		}
	}
	if rest >= 0 {
		if sum >= total {
			return nil, lastOff, fmt.Errorf("no room left for the partition sized \"the rest\" (%d of %d bytes given)", sum, total)
		}
		sizes[rest] = total - sum
	}
	return sizes, 0, nil
}

func b2i(b bool) int {
	if b {
		return 1
	}
	return 0
}
