package scsi

import (
	"errors"
	"fmt"
)

// Error is a SCSI outcome carried as a Go error inside handlers: handler
// methods return error, and one function (ResponseFor) turns it into the
// wire Response.
type Error struct {
	Sense Sense
}

func (e *Error) Error() string {
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
	// ErrSavingParametersNotSupported (39/00): MODE SENSE with PC=11b, or
	// LOG SELECT/SENSE with SP, on a unit that keeps no saved parameters.
	ErrSavingParametersNotSupported = NewError(IllegalRequest, SavingParametersNotSupported)
)

// InvalidField returns ILLEGAL REQUEST / INVALID FIELD IN CDB (24/00) with
// the field pointer at byte (and bit, if bit >= 0) of the CDB.
func InvalidField(byteOff int, bit int) *Error {
	e := &Error{Sense: Sense{Key: IllegalRequest, ASC: InvalidFieldInCDB}}
	e.Sense.Pointer = FieldPointer{Valid: true, CDB: true, Field: uint16(byteOff)}
	if bit >= 0 {
		e.Sense.Pointer.BitValid = true
		e.Sense.Pointer.Bit = uint8(bit)
	}
	return e
}

// InvalidParameter returns ILLEGAL REQUEST / INVALID FIELD IN PARAMETER LIST
// (26/00) pointing at byte (and bit, if bit >= 0) of the parameter data.
func InvalidParameter(byteOff int, bit int) *Error {
	e := &Error{Sense: Sense{Key: IllegalRequest, ASC: InvalidFieldInParameterList}}
	e.Sense.Pointer = FieldPointer{Valid: true, CDB: false, Field: uint16(byteOff)}
	if bit >= 0 {
		e.Sense.Pointer.BitValid = true
		e.Sense.Pointer.Bit = uint8(bit)
	}
	return e
}

// ResponseFor maps an error returned by a handler method to a Response:
// nil → GOOD, *Error → CHECK CONDITION with its sense, anything else →
// HARDWARE ERROR / INTERNAL TARGET FAILURE (44/00).
func ResponseFor(err error) Response {
	if err == nil {
		return Good
	}
	var se *Error
	if errors.As(err, &se) {
		return CheckCondition(se.Sense)
	}
	return CheckCondition(Sense{Key: HardwareError, ASC: InternalTargetFailure})
}
