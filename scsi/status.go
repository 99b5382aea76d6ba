package scsi

// Status is a SAM status code (SAM-5 5.3).
type Status uint8

// SAM status codes.
const (
	StatusGood                Status = 0x00
	StatusCheckCondition      Status = 0x02
	StatusConditionMet        Status = 0x04
	StatusBusy                Status = 0x08
	StatusReservationConflict Status = 0x18
	StatusTaskSetFull         Status = 0x28
	StatusACAActive           Status = 0x30
	StatusTaskAborted         Status = 0x40
)

func (s Status) String() string {
	switch s {
	case StatusGood:
		return "good"
	case StatusCheckCondition:
		return "check_condition"
	case StatusConditionMet:
		return "condition_met"
	case StatusBusy:
		return "busy"
	case StatusReservationConflict:
		return "reservation_conflict"
	case StatusTaskSetFull:
		return "task_set_full"
	case StatusACAActive:
		return "aca_active"
	case StatusTaskAborted:
		return "task_aborted"
	}
	return "unknown"
}
