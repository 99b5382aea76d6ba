package trace

import (
	"bytes"
	"encoding/json"
	"time"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/tcmu"
)

// Stream turns the trace rings of a set of devices into the lines of a
// trace: the start line, then each selected command and each count of
// lost records, as JSON or (Text) as text formatted without allocating.
// It is used by one goroutine.
type Stream struct {
	f     Filter
	text  bool
	devs  []streamDev
	start time.Time
	out   bytes.Buffer
	taken bool // out was returned by Take: the next Drain starts it anew
	enc   *json.Encoder
	recs  []tcmu.TraceRecord
}

type streamDev struct {
	ring  *tcmu.TraceRing
	dec   Decoder
	match *Matcher
	lost  uint64
}

// NewStream returns a Stream of the commands f selects, in text when text.
func NewStream(f Filter, text bool) *Stream {
	s := &Stream{f: f, text: text, recs: make([]tcmu.TraceRecord, 512)}
	s.enc = json.NewEncoder(&s.out)
	return s
}

// Add adds the device name, whose command table is cmds, read from r.
func (s *Stream) Add(name string, cmds scsi.CommandTable, r *tcmu.TraceRing) error {
	m, err := s.f.Compile(cmds)
	if err != nil {
		return err
	}
	s.devs = append(s.devs, streamDev{ring: r, dec: Decoder{Device: name, Cmds: cmds, Epoch: r.Epoch()}, match: m})
	return nil
}

// Start returns the start line naming the devices added; times of the
// lines after it count from now.
func (s *Stream) Start() []byte {
	e := Event{Type: TypeStart, Time: time.Now()}
	for i := range s.devs {
		e.Devices = append(e.Devices, s.devs[i].dec.Device)
	}
	s.start = e.Time
	s.out.Reset()
	s.put(&e)
	return s.Take()
}

// Drain appends the lines of what the rings hold now to the lines not
// yet taken (Take) and returns how many bytes those are. Draining often
// keeps the rings small; taking seldom keeps the writes of a trace few.
func (s *Stream) Drain() int {
	if s.taken {
		s.out.Reset()
		s.taken = false
	}
	for i := range s.devs {
		d := &s.devs[i]
		for {
			n := d.ring.Read(s.recs)
			for j := range s.recs[:n] {
				r := &s.recs[j]
				switch {
				case !d.match.Match(r):
				case s.text:
					s.out.Write(append(d.dec.AppendText(s.out.AvailableBuffer(), r, s.start), '\n'))
				default:
					e := d.dec.Event(r)
					s.put(&e)
				}
			}
			if n < len(s.recs) {
				break
			}
		}
		if l := d.ring.Lost(); l > d.lost {
			s.put(&Event{Type: TypeLost, Time: time.Now(), Device: d.dec.Device, Lost: l - d.lost})
			d.lost = l
		}
	}
	return s.out.Len()
}

// Take returns the lines drained since the previous Take (empty: none),
// valid until the next Drain.
func (s *Stream) Take() []byte {
	s.taken = true
	return s.out.Bytes()
}

func (s *Stream) put(e *Event) {
	if s.text {
		s.out.Write(append(e.AppendText(s.out.AvailableBuffer(), s.start), '\n'))
		return
	}
	_ = s.enc.Encode(e) // a bytes.Buffer does not fail
}
