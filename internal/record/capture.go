package record

import (
	"slices"
	"time"

	"github.com/vscsid/vscsid/target/tcmu"
)

// Capture turns the capture rings (tcmu.NewCaptureRing) of a recording's
// devices, in Header.Devices order, into its Commands. It is used by one
// goroutine.
type Capture struct {
	rings []*tcmu.TraceRing
	start time.Time
	recs  []tcmu.TraceRecord
	buf   []byte
	out   []Command
}

// NewCapture reads rings, the i-th that of device i, for a recording that
// began at start.
func NewCapture(rings []*tcmu.TraceRing, start time.Time) *Capture {
	return &Capture{rings: rings, start: start, recs: make([]tcmu.TraceRecord, 512)}
}

// Drain returns the commands the rings hold now, valid until the next
// call.
func (c *Capture) Drain() []Command {
	c.out = c.out[:0]
	for i, r := range c.rings {
		for {
			var n int
			n, c.buf = r.ReadCapture(c.recs, c.buf)
			for j := range c.recs[:n] {
				rec := &c.recs[j]
				var p []byte
				if rec.DataLen > 0 {
					p = slices.Clone(c.buf[rec.DataOff : rec.DataOff+uint64(rec.DataLen)])
				}
				c.out = append(c.out, FromTrace(i, rec, p, r.Epoch().Add(time.Duration(rec.End)).Sub(c.start)))
			}
			if n < len(c.recs) {
				break
			}
		}
	}
	return c.out
}
