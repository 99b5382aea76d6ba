package tape

import (
	"errors"

	"github.com/vscsid/vscsid/scsi"
)

// Errors of the operator API (Load, Unload, Close).
var (
	ErrNoMedium         = errors.New("tape: no cartridge in the drive")
	ErrMediumPresent    = errors.New("tape: a cartridge is already in the drive")
	ErrRemovalPrevented = errors.New("tape: medium removal prevented by the initiator (PREVENT ALLOW MEDIUM REMOVAL)")
	// ErrClosed is a Drive used after Close. Media used after Close return
	// a ClosedError naming themselves (cartridge.ErrClosed), which
	// errors.Is matches to ErrClosed too.
	ErrClosed error = &ClosedError{Object: "tape: drive"}
)

// ClosedError is the error of a drive or medium used after Close. Every
// ClosedError matches ErrClosed (errors.Is), so a caller tests for one
// sentinel whichever object was closed.
type ClosedError struct {
	Object string // what was closed, as the message says it: "tape: drive"
}

func (e *ClosedError) Error() string { return e.Object + " closed" }

// Is reports whether target is ErrClosed.
func (e *ClosedError) Is(target error) bool { return target == ErrClosed }

// This file is the one place that knows how SSC conditions look on the
// wire: the sense data of each row of the data-transfer table of SSC-5
// 4.2.x (the same combinations scsi_debug's
// tape emulation and the Linux st driver use). The constructors return
// values, so reporting a condition never allocates.

// filemarkSense: a READ or SPACE crossed a filemark. NO SENSE, FILEMARK
// DETECTED 00/01, FM bit, INFORMATION = residue (variable READ: the
// requested length; fixed READ: blocks not read; SPACE: count not spaced).
func filemarkSense(residue int64) scsi.Sense {
	return scsi.Sense{Key: scsi.NoSense, ASC: scsi.FilemarkDetected, Filemark: true, Valid: true, Info: residue}
}

// setmarkSense: a READ or SPACE crossed a setmark (RSMK=1, or SPACE over
// setmarks). NO SENSE, SETMARK DETECTED 00/03, FM bit (SSC-2 4.2.x).
func setmarkSense(residue int64) scsi.Sense {
	return scsi.Sense{Key: scsi.NoSense, ASC: scsi.SetmarkDetected, Filemark: true, Valid: true, Info: residue}
}

// eodSense: READ, SPACE or LOCATE ran into end of data. BLANK CHECK, END-OF-
// DATA DETECTED 00/05; the position stays at EOD.
func eodSense(residue int64, valid bool) scsi.Sense {
	return scsi.Sense{Key: scsi.BlankCheck, ASC: scsi.EndOfDataDetected, Valid: valid, Info: residue}
}

// bopSense: a backward SPACE reached beginning of partition. NO SENSE,
// BEGINNING-OF-PARTITION/MEDIUM DETECTED 00/04, EOM bit, INFORMATION = the
// count not spaced (absolute value, as st and scsi_debug use it).
func bopSense(residue int64, valid bool) scsi.Sense {
	return scsi.Sense{Key: scsi.NoSense, ASC: scsi.BeginningOfPartitionDetected, EOM: true, Valid: valid, Info: residue}
}

// iliSense: incorrect length. NO SENSE 00/00, ILI bit, INFORMATION =
// requested − actual (variable: bytes, negative for an overlength block;
// fixed: blocks not transferred).
func iliSense(residue int64) scsi.Sense {
	return scsi.Sense{Key: scsi.NoSense, ASC: scsi.NoAdditionalSense, ILI: true, Valid: true, Info: residue}
}

// earlyWarningSense: the write (or write filemarks) succeeded inside the
// early-warning zone (scsi.EarlyWarning).
func earlyWarningSense() scsi.Sense { return scsi.EarlyWarning }

// overflowSense: physical end of partition; nothing more was written.
// VOLUME OVERFLOW 00/02, EOM bit, INFORMATION = what was not written
// (variable: bytes, fixed: blocks, WRITE FILEMARKS: marks).
func overflowSense(residue int64) scsi.Sense {
	return scsi.Sense{Key: scsi.VolumeOverflow, ASC: scsi.EndOfPartitionMediumDetected, EOM: true, Valid: true, Info: residue}
}

// lbpWriteSense: a WRITE block's protection information does not match
// its data (LBP_W): HARDWARE ERROR, LOGICAL BLOCK GUARD CHECK FAILED 10/01
// (what IBM LTO drives return and LTFS maps to a write protection
// error); the block and those after it are not written. INFORMATION as
// for an overflow.
func lbpWriteSense(residue int64) scsi.Sense {
	return scsi.Sense{Key: scsi.HardwareError, ASC: scsi.LogicalBlockGuardCheckFailed, Valid: true, Info: residue}
}

// notReady: NOT READY with the given ASC (3A/00 no cartridge, 04/02 the
// cartridge is unloaded to the hold position and needs a LOAD).
func notReady(asc scsi.ASC) scsi.Sense { return scsi.Sense{Key: scsi.NotReady, ASC: asc} }

// dataProtect: 27/00 write protected, 30/0C WORM overwrite attempted.
func dataProtect(asc scsi.ASC) scsi.Sense { return scsi.Sense{Key: scsi.DataProtect, ASC: asc} }

// illegal returns ILLEGAL REQUEST with asc and no field pointer.
func illegal(asc scsi.ASC) scsi.Sense { return scsi.Sense{Key: scsi.IllegalRequest, ASC: asc} }

// faultErrs are the conditions of a Medium error that carries no sense (an
// I/O error of the image), by the direction data was moving: MEDIUM ERROR
// unrecovered read error (11/00) or write error (0C/00), else HARDWARE
// ERROR internal target failure (44/00).
var faultErrs = [...]error{
	dirNone:  scsi.ErrInternal,
	dirRead:  scsi.NewError(scsi.MediumError, scsi.UnrecoveredReadError),
	dirWrite: scsi.NewError(scsi.MediumError, scsi.WriteError),
}

// isFault reports whether a Medium error is a device fault (a broken
// image or an I/O error, not a SCSI outcome), which the drive logs.
func isFault(err error) bool {
	_, carries := scsi.SenseOf(err)
	return !carries || errors.Is(err, ErrCorrupt)
}

// ioDir says which way data was moving when a Medium call failed.
type ioDir uint8

const (
	dirNone ioDir = iota
	dirRead
	dirWrite
)
