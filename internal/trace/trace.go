// Package trace turns the records a device's trace ring holds
// (tcmu.TraceRecord) into what vscsictl trace shows: an Event per command,
// decoded with the device's command table, its JSON form (one object per
// line, the --json output and the control socket's stream) and its text
// line; and the filters that select them.
package trace

import (
	"encoding/hex"
	"slices"
	"time"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/tcmu"
)

// Event types.
const (
	TypeStart   = "start"   // the first line: the trace of Devices began at Time
	TypeCommand = "command" // one completed command
	TypeLost    = "lost"    // Lost records of Device were dropped before this line (the reader fell behind)
)

// Event is one line of a trace. Its JSON form is the documented
// `vscsictl trace --json` format (docs/trace.md); fields are only ever
// added to it.
type Event struct {
	Type   string    `json:"type"`
	Time   time.Time `json:"time"` // when the command completed
	Device string    `json:"device,omitempty"`
	// Devices are the devices traced (Type start).
	Devices []string `json:"devices,omitempty"`
	// Lost is the number of records dropped (Type lost).
	Lost uint64 `json:"lost,omitempty"`
	// Seq is the device's count of traced commands: a gap is lost
	// records.
	Seq       uint64  `json:"seq,omitempty"`
	Tag       uint16  `json:"tag"`               // the TCMU ring's cmd_id
	Command   string  `json:"command,omitempty"` // the command's name in the device's table, or its opcode in hex
	OpCode    uint8   `json:"opcode"`
	CDB       string  `json:"cdb,omitempty"` // hex, at most the first 32 bytes
	CDBLength int     `json:"cdb_length,omitempty"`
	Extent    *Extent `json:"extent,omitempty"`
	// Direction is read (Data-In produced), write (Data-Out consumed) or
	// none; Length the command's data buffer, Bytes what moved, Residual
	// the rest.
	Direction string `json:"direction"`
	Length    uint32 `json:"length"`
	Bytes     uint32 `json:"bytes"`
	Residual  uint32 `json:"residual"`
	// Segments are the data buffer's iovecs; the first one's offset in
	// the data area and length; how many are not page aligned (offset or
	// length).
	Segments   uint32 `json:"segments"`
	Seg0Offset uint32 `json:"seg0_offset"`
	Seg0Length uint32 `json:"seg0_length"`
	Unaligned  uint32 `json:"unaligned"`
	Status     string `json:"status"`
	Sense      *Sense `json:"sense,omitempty"`
	// QueueNS is from when the device loop first saw the command in the
	// ring to when it started; ServiceNS the time in the handler
	// (fault delays and timing models included).
	QueueNS   int64 `json:"queue_ns"`
	ServiceNS int64 `json:"service_ns"`
	Fault     bool  `json:"fault,omitempty"`   // a fault rule acted
	Timing    bool  `json:"timing,omitempty"`  // the timing model delayed it
	Aborted   bool  `json:"aborted,omitempty"` // a TMR aborted it before it ran
	ReadLen   bool  `json:"read_len,omitempty"`
}

// Extent is what the command addresses: LBA and Blocks on a disk (ToEnd:
// to the end of the medium), the transfer length or count on a tape
// (Fixed: in blocks, else bytes; SPACE's count is signed), the element
// addresses on a medium changer (MOVE MEDIUM: transport, source,
// destination; READ ELEMENT STATUS: the first, with Count elements).
type Extent struct {
	LBA      *uint64  `json:"lba,omitempty"`
	Blocks   *uint64  `json:"blocks,omitempty"`
	ToEnd    bool     `json:"to_end,omitempty"`
	Count    *int64   `json:"count,omitempty"`
	Fixed    bool     `json:"fixed,omitempty"`
	Elements []uint16 `json:"elements,omitempty"`
	// A tape LOCATE's destination: DestType (0 logical object, 1 file,
	// 3 end of data), Object and Partition (when the CDB changes it).
	Locate    bool   `json:"locate,omitempty"`
	DestType  uint8  `json:"dest_type,omitempty"`
	Object    uint64 `json:"object,omitempty"`
	Partition *uint8 `json:"partition,omitempty"`
}

// Sense is a CHECK CONDITION's sense data, decoded.
type Sense struct {
	Key      string `json:"key"` // snake_case name (scsi.SenseKey)
	ASC      uint8  `json:"asc"`
	ASCQ     uint8  `json:"ascq"`
	Name     string `json:"name,omitempty"` // T10's description of ASC/ASCQ
	Info     *int64 `json:"info,omitempty"` // INFORMATION, when valid
	Filemark bool   `json:"filemark,omitempty"`
	EOM      bool   `json:"eom,omitempty"`
	ILI      bool   `json:"ili,omitempty"`
}

// Decoder decodes the records of one device. Its methods are used by one
// goroutine at a time.
type Decoder struct {
	Device string
	Cmds   scsi.CommandTable // the device kind's table; nil: opcodes only
	Epoch  time.Time         // tcmu.TraceRing.Epoch
	ev     Event             // AppendText's scratch
	vals   values
}

// values hold what an Event's pointers point at, so that one allocation
// (Event) or none (AppendText) serves a record.
type values struct {
	ext       Extent
	sense     Sense
	lba, n    uint64
	count     int64
	info      int64
	partition uint8
	elements  [4]uint16
}

// opNames are "0x00".."0xff": the name of an opcode no table names.
var opNames = func() (n [256]string) {
	for i := range n {
		n[i] = "0x" + hex.EncodeToString([]byte{byte(i)})
	}
	return n
}()

// Event decodes r.
func (d *Decoder) Event(r *tcmu.TraceRecord) Event {
	v := new(values)
	var e Event
	d.decode(&e, v, r)
	e.Time = d.Epoch.Add(time.Duration(r.End))
	e.CDB = hex.EncodeToString(r.CDB[:min(int(r.CDBLen), len(r.CDB))])
	if e.Extent != nil && len(e.Extent.Elements) > 0 {
		e.Extent.Elements = slices.Clone(e.Extent.Elements)
	}
	return e
}

// AppendText appends r's text line (Event.AppendText) without allocating.
func (d *Decoder) AppendText(b []byte, r *tcmu.TraceRecord, start time.Time) []byte {
	e := &d.ev
	d.decode(e, &d.vals, r)
	return e.appendCommand(b, int64(d.Epoch.Sub(start))+r.End)
}

// decode fills e from r, its pointers pointing into v; all but the time
// and the CDB, which the text line does not show.
func (d *Decoder) decode(e *Event, v *values, r *tcmu.TraceRecord) {
	cdb := scsi.CDB(r.CDB[:min(int(r.CDBLen), len(r.CDB))])
	// Fields set one by one: a composite literal is built aside and copied.
	*e = Event{}
	e.Type = TypeCommand
	e.Device = d.Device
	e.Seq = r.Seq
	e.Tag = r.Tag
	e.OpCode = r.CDB[0]
	e.CDBLength = int(r.CDBLen)
	e.Length = r.Length
	e.Segments = r.Segments
	e.Seg0Offset = r.Seg0Offset
	e.Seg0Length = r.Seg0Length
	e.Unaligned = r.Unaligned
	e.Status = r.Status.String()
	e.QueueNS = r.Start - r.Seen
	e.ServiceNS = r.End - r.Start
	e.Fault = r.Acted&scsi.ActedFault != 0
	e.Timing = r.Acted&scsi.ActedTiming != 0
	e.Aborted = r.Flags&tcmu.TraceAborted != 0
	e.ReadLen = r.Flags&tcmu.TraceReadLen != 0
	switch {
	case r.Written > 0:
		e.Direction, e.Bytes = "read", r.Written
	case r.Consumed > 0:
		e.Direction, e.Bytes = "write", r.Consumed
	default:
		e.Direction = "none"
	}
	e.Residual = r.Length - min(e.Bytes, r.Length)
	if d.Cmds != nil {
		e.Command = d.Cmds.CommandName(r.ID)
		if x, ok := d.Cmds.Extent(cdb); ok {
			e.Extent = v.extent(x, d.Cmds.Set())
		}
	}
	if e.Command == "" {
		e.Command = opNames[r.CDB[0]]
	}
	if r.Status == scsi.StatusCheckCondition {
		e.Sense = v.senseOf(r.Sense)
	}
}

// SenseOf decodes s.
func SenseOf(s scsi.Sense) *Sense { return new(values).senseOf(s) }

func (v *values) senseOf(s scsi.Sense) *Sense {
	v.sense = Sense{Key: s.Key.String(), ASC: s.ASC.Code(), ASCQ: s.ASC.Qualifier(), Name: s.ASC.Name(),
		Filemark: s.Filemark, EOM: s.EOM, ILI: s.ILI}
	if s.Valid {
		v.info = s.Info
		v.sense.Info = &v.info
	}
	return &v.sense
}

// Equal reports whether s and o say the same (the name follows from the
// codes).
func (s *Sense) Equal(o *Sense) bool {
	if s == nil || o == nil {
		return s == o
	}
	return s.Key == o.Key && s.ASC == o.ASC && s.ASCQ == o.ASCQ && s.Filemark == o.Filemark && s.EOM == o.EOM && s.ILI == o.ILI &&
		(s.Info == nil) == (o.Info == nil) && (s.Info == nil || *s.Info == *o.Info)
}

// String is the sense as the text line shows it, without the name.
func (s *Sense) String() string {
	if s == nil {
		return "none"
	}
	return string(s.appendTo(nil, false))
}

// appendTo appends the sense's text: key, ASC/ASCQ in hex, the name in
// quotes (withName), FM, EOM and ILI, info=INFORMATION.
func (s *Sense) appendTo(b []byte, withName bool) []byte {
	b = append(b, s.Key...)
	b = append(b, ' ')
	b = appendHex(b, s.ASC)
	b = append(b, '/')
	b = appendHex(b, s.ASCQ)
	if withName && s.Name != "" {
		b = append(b, " \""...)
		b = append(b, s.Name...)
		b = append(b, '"')
	}
	b = appendMarks(b, s.Filemark, " FM", s.EOM, " EOM", s.ILI, " ILI")
	if s.Info != nil {
		b = append(b, " info="...)
		b = appendInt(b, *s.Info)
	}
	return b
}

func (v *values) extent(x scsi.Extent, cs scsi.CommandSet) *Extent {
	v.ext = Extent{}
	switch {
	case cs == scsi.SBC:
		v.lba, v.n = x.LBA, x.Blocks
		v.ext.LBA, v.ext.Blocks, v.ext.ToEnd = &v.lba, &v.n, x.ToEnd
	case cs == scsi.SMC:
		v.elements = x.Elements
		v.ext.Elements = v.elements[:x.NElements]
		if x.Count != 0 {
			v.count = x.Count
			v.ext.Count = &v.count
		}
	case x.Locate:
		v.ext.Locate, v.ext.DestType, v.ext.Object = true, x.DestType, x.Object
		if x.HasPartition {
			v.partition = x.Partition
			v.ext.Partition = &v.partition
		}
	default:
		v.count = x.Count
		v.ext.Count, v.ext.Fixed = &v.count, x.Fixed
	}
	return &v.ext
}

// AppendText appends e's text line, blkparse-like: time since start
// (seconds), device, sequence number, direction (R, W or -), command,
// extent, bytes moved of the buffer, the segment layout, status and
// sense, queue and service time, and what acted. docs/trace.md shows
// examples.
func (e *Event) AppendText(b []byte, start time.Time) []byte {
	since := int64(e.Time.Sub(start))
	if e.Type == TypeCommand {
		return e.appendCommand(b, since)
	}
	b = appendSeconds(b, since)
	b = append(b, ' ')
	if e.Type == TypeStart {
		b = append(b, "tracing "...)
		for i, d := range e.Devices {
			if i > 0 {
				b = append(b, ", "...)
			}
			b = append(b, d...)
		}
		return b
	}
	b = append(b, e.Device...)
	if e.Type == TypeLost {
		b = append(b, " LOST "...)
		b = appendUint(b, e.Lost)
		return append(b, " records (the reader fell behind)"...)
	}
	return b
}

// appendCommand appends a command's text line, since ns after the start.
func (e *Event) appendCommand(b []byte, since int64) []byte {
	b = appendSeconds(b, since)
	b = append(b, ' ')
	b = append(b, e.Device...)
	b = append(b, " #"...)
	b = appendUint(b, e.Seq)
	switch e.Direction {
	case "read":
		b = append(b, " R "...)
	case "write":
		b = append(b, " W "...)
	default:
		b = append(b, " - "...)
	}
	b = append(b, e.Command...)
	if x := e.Extent; x != nil {
		switch {
		case x.LBA != nil:
			b = append(b, " lba="...)
			b = appendUint(b, *x.LBA)
			if x.ToEnd {
				b = append(b, "+end"...)
			} else {
				b = append(b, '+')
				b = appendUint(b, *x.Blocks)
			}
		case x.Locate:
			switch x.DestType {
			case 0:
				b = appendUint(append(b, " object="...), x.Object)
			case 1:
				b = appendUint(append(b, " file="...), x.Object)
			case 3:
				b = append(b, " eod"...)
			default:
				b = appendUint(append(b, " dest_type="...), uint64(x.DestType))
				b = appendUint(append(b, " id="...), x.Object)
			}
			if x.Partition != nil {
				b = append(b, " partition="...)
				b = appendUint(b, uint64(*x.Partition))
			}
		case len(x.Elements) > 0:
			b = append(b, " elements="...)
			for i, el := range x.Elements {
				if i > 0 {
					b = append(b, ',')
				}
				b = appendUint(b, uint64(el))
			}
			if x.Count != nil {
				b = append(b, " count="...)
				b = appendInt(b, *x.Count)
			}
		case x.Count != nil:
			b = append(b, " count="...)
			b = appendInt(b, *x.Count)
			if x.Fixed {
				b = append(b, " fixed"...)
			}
		}
	}
	if e.Length > 0 {
		b = append(b, ' ')
		b = appendUint(b, uint64(e.Bytes))
		b = append(b, '/')
		b = appendUint(b, uint64(e.Length))
		b = append(b, "B "...)
		b = appendUint(b, uint64(e.Segments))
		b = append(b, "seg@"...)
		b = appendUint(b, uint64(e.Seg0Offset))
		b = append(b, '+')
		b = appendUint(b, uint64(e.Seg0Length))
		if e.Unaligned > 0 {
			b = append(b, " unaligned="...)
			b = appendUint(b, uint64(e.Unaligned))
		}
	}
	b = append(b, ' ')
	b = append(b, e.Status...)
	if s := e.Sense; s != nil {
		b = s.appendTo(append(b, ' '), true)
	}
	b = append(b, " q="...)
	b = appendDuration(b, e.QueueNS)
	b = append(b, " s="...)
	b = appendDuration(b, e.ServiceNS)
	b = appendMarks(b, e.Fault, " [fault]", e.Timing, " [timing]", e.Aborted, " [aborted]")
	return b
}

// appendMarks appends each of three marks that is on.
func appendMarks(b []byte, on1 bool, m1 string, on2 bool, m2 string, on3 bool, m3 string) []byte {
	if on1 {
		b = append(b, m1...)
	}
	if on2 {
		b = append(b, m2...)
	}
	if on3 {
		b = append(b, m3...)
	}
	return b
}

// appendUint appends v in decimal: as strconv.AppendUint(b, v, 10), but
// in place, two digits at a time (strconv formats into a buffer of its
// own and copies: a fifth of a text line's cost).
func appendUint(b []byte, v uint64) []byte {
	if v < 10 {
		return append(b, byte('0'+v))
	}
	n := 2
	for x := v / 100; x > 0; x /= 10 {
		n++
	}
	l := len(b)
	b = append(b, "00000000000000000000"[:n]...)
	i := l + n
	for v >= 100 {
		q := v / 100
		d := (v - q*100) * 2
		i -= 2
		b[i], b[i+1] = digitPairs[d], digitPairs[d+1]
		v = q
	}
	if v >= 10 {
		b[i-2], b[i-1] = digitPairs[v*2], digitPairs[v*2+1]
	} else {
		b[i-1] = byte('0' + v)
	}
	return b
}

const digitPairs = "00010203040506070809101112131415161718192021222324252627282930313233343536373839404142434445464748495051525354555657585960616263646566676869707172737475767778798081828384858687888990919293949596979899"

func appendInt(b []byte, v int64) []byte {
	if v < 0 {
		return appendUint(append(b, '-'), uint64(-v))
	}
	return appendUint(b, uint64(v))
}

func appendHex(b []byte, v uint8) []byte {
	const digits = "0123456789abcdef"
	return append(b, digits[v>>4], digits[v&0xf])
}

// appendDuration appends ns as microseconds below 10 ms, else
// milliseconds, with one decimal.
//
// The text line's three numbers with a decimal point are formatted with
// integer arithmetic by constants (a division by a constant is a
// multiplication): floating-point formatting was a sixth of a line's
// cost, and divisions by a variable unit another quarter. Both round
// half away from zero.
func appendDuration(b []byte, ns int64) []byte {
	if ns < 0 {
		b, ns = append(b, '-'), -ns
	}
	if ns < 10_000_000 {
		q := uint64(ns+50) / 100
		return append(appendUint(b, q/10), '.', byte('0'+q%10), 'u', 's')
	}
	q := uint64(ns+50_000) / 100_000
	return append(appendUint(b, q/10), '.', byte('0'+q%10), 'm', 's')
}

// appendSeconds appends ns as seconds with six decimals.
func appendSeconds(b []byte, ns int64) []byte {
	if ns < 0 {
		b, ns = append(b, '-'), -ns
	}
	q := uint64(ns+500) / 1000
	b = append(appendUint(b, q/1_000_000), ".000000"...)
	for i, f := len(b)-1, q%1_000_000; f > 0; i, f = i-1, f/10 {
		b[i] = byte('0' + f%10)
	}
	return b
}
