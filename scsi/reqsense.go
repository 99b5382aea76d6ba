package scsi

// REQUEST SENSE and the unit attention queue it and the dispatchers
// report from.

// UnitAttentions is a small queue of pending unit attention conditions
// (SPC-5 5.14). The zero value is empty. Not safe for concurrent use: the
// owning handler serialises it like the rest of its state.
type UnitAttentions struct {
	q [8]ASC
	n int
}

// Add queues a unit attention; duplicates are dropped, and when full the
// oldest is replaced by the newest.
func (u *UnitAttentions) Add(asc ASC) {
	for i := 0; i < u.n; i++ {
		if u.q[i] == asc {
			return
		}
	}
	if u.n == len(u.q) {
		copy(u.q[:], u.q[1:])
		u.n--
	}
	u.q[u.n] = asc
	u.n++
}

// Pending reports whether any unit attention is queued.
func (u *UnitAttentions) Pending() bool { return u.n > 0 }

// Pop removes and returns the oldest unit attention.
func (u *UnitAttentions) Pop() (ASC, bool) {
	if u.n == 0 {
		return 0, false
	}
	a := u.q[0]
	copy(u.q[:], u.q[1:u.n])
	u.n--
	return a, true
}

// Clear drops every pending unit attention.
func (u *UnitAttentions) Clear() { u.n = 0 }

// RequestSense answers REQUEST SENSE (SPC-5 6.39) with the unit's current
// sense cur as parameter data, in descriptor format when DESC (byte 1 bit 0)
// is set and fixed format otherwise, with GOOD status. When cur is empty (NO
// SENSE, no ASC, no flags) and a unit attention is pending, the unit
// attention is reported and cleared instead (SAM-5 5.14, UA_INTLCK_CTRL
// 00b); otherwise the result is NO SENSE / NO ADDITIONAL SENSE INFORMATION.
func (s *SPC) RequestSense(cmd *Command, cur Sense) Response {
	c := cmd.CDB
	alloc := int(c.Byte(4))
	if cur.Key == NoSense && cur.ASC == 0 && !cur.Valid && !cur.Filemark && !cur.EOM && !cur.ILI {
		if asc, ok := s.UA.Pop(); ok {
			cur = Sense{Key: UnitAttention, ASC: asc}
		}
	}
	cur.Format = FixedFormat
	if c.Byte(1)&0x01 != 0 {
		cur.Format = DescriptorFormat
	}
	s.buf = cur.Append(s.buf[:0])
	WriteParameterData(cmd.Data, s.buf, alloc)
	return Good
}

// TakeUnitAttention reports a pending unit attention for cmd, removing it
// from the queue. INQUIRY, REPORT LUNS and REQUEST SENSE never take one
// (SAM-5 5.14 / SPC-5 5.14).
func (s *SPC) TakeUnitAttention(cmd *Command) (Response, bool) {
	switch cmd.CDB.OpCode() {
	case Inquiry, ReportLUNs, RequestSense:
		return Good, false
	}
	asc, ok := s.UA.Pop()
	if !ok {
		return Good, false
	}
	return s.CheckCondition(Sense{Key: UnitAttention, ASC: asc}), true
}
