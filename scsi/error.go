package scsi

import (
	"errors"
	"fmt"
)

// Error is a SCSI outcome carried as a Go error inside handlers: handler
// methods return error, and one function (ResponseFor) turns it into the
// wire Response. A command set's own conditions (tape: filemark, end of
// data, end of medium) are *Error values too, built by the handler with
// the sense it reports and a message of its own, so that ResponseFor
// needs no knowledge of them.
type Error struct {
	Sense Sense
	// Msg, when set, is the error's text instead of the sense key and ASC
	// (a sentinel such as tape.ErrEndOfData keeps its own message).
	Msg string
}

func (e *Error) Error() string {
	if e.Msg != "" {
		return e.Msg
	}
	if n := e.Sense.ASC.Name(); n != "" {
		return fmt.Sprintf("scsi: %s %s (%s)", e.Sense.Key, e.Sense.ASC, n)
	}
	return fmt.Sprintf("scsi: %s %s", e.Sense.Key, e.Sense.ASC)
}

// NewError returns an *Error with the given key and ASC.
func NewError(key SenseKey, asc ASC) *Error {
	return &Error{Sense: Sense{Key: key, ASC: asc}}
}

// Preallocated errors for the frequent cases, so returning them never allocates.
var (
	ErrInvalidOpCode    = NewError(IllegalRequest, InvalidCommandOperationCode)
	ErrLBAOutOfRange    = NewError(IllegalRequest, LBAOutOfRange)
	ErrWriteProtected   = NewError(DataProtect, WriteProtected)
	ErrMediumNotPresent = NewError(NotReady, MediumNotPresent)
	ErrInternal         = NewError(HardwareError, InternalTargetFailure)
	ErrParameterListLen = NewError(IllegalRequest, ParameterListLengthError)
	// ErrDataLength (0E/03 INVALID FIELD IN COMMAND INFORMATION UNIT): the
	// transport's expected data transfer length does not match what the
	// CDB transfers, for a command that must not run on part of its data
	// (LIO's own backstores answer a WRITE so).
	ErrDataLength = NewError(IllegalRequest, InvalidFieldInCommandIU)
	// ErrSavingParametersNotSupported (39/00): MODE SENSE with PC=11b, or
	// LOG SELECT/SENSE with SP, on a unit that keeps no saved parameters.
	ErrSavingParametersNotSupported = NewError(IllegalRequest, SavingParametersNotSupported)
)

// InvalidField returns ILLEGAL REQUEST / INVALID FIELD IN CDB (24/00) with
// the field pointer at byte (and bit, if bit >= 0) of the CDB.
func InvalidField(byteOff int, bit int) *Error {
	return &Error{Sense: InvalidFieldSense(byteOff, bit)}
}

// InvalidFieldSense is the sense of InvalidField as a value, for paths
// that must not allocate.
func InvalidFieldSense(byteOff int, bit int) Sense {
	return Sense{Key: IllegalRequest, ASC: InvalidFieldInCDB, Pointer: fieldPointer(true, byteOff, bit)}
}

// InvalidParameter returns ILLEGAL REQUEST / INVALID FIELD IN PARAMETER LIST
// (26/00) pointing at byte (and bit, if bit >= 0) of the parameter data.
func InvalidParameter(byteOff int, bit int) *Error {
	return &Error{Sense: InvalidParameterSense(byteOff, bit)}
}

// InvalidParameterSense is the sense of InvalidParameter as a value.
func InvalidParameterSense(byteOff int, bit int) Sense {
	return Sense{Key: IllegalRequest, ASC: InvalidFieldInParameterList, Pointer: fieldPointer(false, byteOff, bit)}
}

func fieldPointer(cdb bool, byteOff, bit int) FieldPointer {
	p := FieldPointer{Valid: true, CDB: cdb, Field: uint16(byteOff)}
	if bit >= 0 {
		p.BitValid, p.Bit = true, uint8(bit)
	}
	return p
}

// SenseOf returns the sense data err carries: that of the first *Error in
// its chain (errors.AsType). ok is false for nil and for an error that carries
// none (a failed backend, an I/O error): what that means is the handler's
// choice. An *Error, or one wrapped by fmt.Errorf's %w, is found without
// allocating.
func SenseOf(err error) (s Sense, ok bool) {
	se, ok := errors.AsType[*Error](err) // allocates only for an As method
	if !ok {
		return Sense{}, false
	}
	return se.Sense, true
}

// ResponseFor is the one place an error becomes a Response: nil → GOOD;
// an error carrying sense (SenseOf) → CHECK CONDITION with it; anything
// else → HARDWARE ERROR / INTERNAL TARGET FAILURE (44/00). The sense is in
// fixed format; a unit with D_SENSE converts with SPC.ResponseFor (or
// Response.WithFormat).
func ResponseFor(err error) Response {
	if err == nil {
		return Good
	}
	if s, ok := SenseOf(err); ok {
		return CheckCondition(s)
	}
	return CheckCondition(Sense{Key: HardwareError, ASC: InternalTargetFailure})
}

// WithFormat returns r with its sense data in format f (the unit's
// D_SENSE); a response without sense is returned unchanged. It is the one
// place the D_SENSE choice is applied: SPC uses it for its own responses
// and handlers for the response they return.
func (r Response) WithFormat(f SenseFormat) Response {
	if r.Status == StatusCheckCondition {
		r.Sense.Format = f
	}
	return r
}
