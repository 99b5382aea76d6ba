package changer

import (
	"errors"
	"time"

	"github.com/vscsid/vscsid/scsi"
)

// Move outcomes: the values of MoveCount.Outcome.
const (
	OutcomeOK      = "ok"      // the cartridge moved
	OutcomeRefused = "refused" // ILLEGAL REQUEST: source empty, destination full, a drive still loaded or held
	OutcomeFailed  = "failed"  // HARDWARE ERROR: a drive refused the load or is not there, the inventory could not be saved
)

var outcomes = [...]string{OutcomeOK, OutcomeRefused, OutcomeFailed}

// MoveCount is how many moves went from one element type to another with
// one outcome, and the time they took (SCSI MOVE MEDIUM and the operator's
// moves; imports and exports are counted apart).
type MoveCount struct {
	From, To ElementType
	Outcome  string
	Count    uint64
	Seconds  float64
}

// Stats is a snapshot of a changer's counters and occupancy.
type Stats struct {
	// Moves has one entry per (from, to, outcome) that happened.
	Moves []MoveCount
	// Elements and Full are the element counts and the full elements, by
	// type (indexed by ElementType; the transport never holds a cartridge
	// between commands).
	Elements, Full [DataTransfer + 1]int
	// Imports and Exports count the operator's imports into and exports
	// out of the mail slots.
	Imports, Exports uint64
}

// moveStats are the move counters, guarded by Changer.mu.
type moveStats struct {
	n   [DataTransfer + 1][DataTransfer + 1][len(outcomes)]uint64
	sec [DataTransfer + 1][DataTransfer + 1][len(outcomes)]float64
}

func (m *moveStats) add(from, to ElementType, err error, d time.Duration) {
	o := 0
	if err != nil {
		o = 2
		if se, ok := errors.AsType[*scsi.Error](err); ok && se.Sense.Key == scsi.IllegalRequest {
			o = 1
		}
	}
	m.n[from][to][o]++
	m.sec[from][to][o] += d.Seconds()
}

// Stats returns the changer's counters and occupancy.
func (c *Changer) Stats() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	var s Stats
	for f := range c.moves.n {
		for t := range c.moves.n[f] {
			for o, n := range c.moves.n[f][t] {
				if n > 0 {
					s.Moves = append(s.Moves, MoveCount{From: ElementType(f), To: ElementType(t), Outcome: outcomes[o],
						Count: n, Seconds: c.moves.sec[f][t][o]})
				}
			}
		}
	}
	s.Elements[Transport] = 1
	for _, t := range [...]ElementType{Storage, ImportExport, DataTransfer} {
		sl := c.inv.slots(t)
		s.Elements[t] = len(sl)
		for _, e := range sl {
			if e.Barcode != "" {
				s.Full[t]++
			}
		}
	}
	s.Imports, s.Exports = c.imports, c.exports
	return s
}
