package trace_test

import (
	"encoding/json"
	"net/url"
	"strings"
	"testing"
	"time"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/internal/trace"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/changer"
	"github.com/vscsid/vscsid/target/tcmu"
)

// record is a traced command of cdb.
func record(cdb []byte, st scsi.Status, service time.Duration) *tcmu.TraceRecord {
	r := &tcmu.TraceRecord{Seq: 1, CDBLen: uint16(len(cdb)), Status: st, Start: 1000, End: 1000 + int64(service), Seen: 400}
	copy(r.CDB[:], cdb)
	r.ID = scsi.CommandID(cdb[0])
	return r
}

var (
	read10  = []byte{0x28, 0, 0, 0, 0x10, 0, 0, 0, 8, 0} // LBA 4096, 8 blocks
	write10 = []byte{0x2a, 0, 0, 0, 0x20, 0, 0, 0, 8, 0} // LBA 8192
	write6  = []byte{0x0a, 1, 0, 0, 2, 0}                // fixed, 2 blocks
)

func TestDecodeDisk(t *testing.T) {
	d := trace.Decoder{Device: "disk0", Cmds: disk.DeviceKind.Commands, Epoch: time.Unix(100, 0)}
	r := record(read10, scsi.StatusGood, 50*time.Microsecond)
	r.Length, r.Written, r.Segments, r.Seg0Offset, r.Seg0Length = 4096, 4096, 2, 8192, 512
	e := d.Event(r)
	if e.Command != "read_10" || e.Extent == nil || *e.Extent.LBA != 4096 || *e.Extent.Blocks != 8 || e.Direction != "read" || e.QueueNS != 600 {
		t.Fatalf("event %+v", e)
	}
	line := string(e.AppendText(nil, time.Unix(100, 0)))
	if want := "0.000051 disk0 #1 R read_10 lba=4096+8 4096/4096B 2seg@8192+512 good q=0.6us s=50.0us"; line != want {
		t.Errorf("text %q\nwant %q", line, want)
	}
	b, err := json.Marshal(e)
	if err != nil {
		t.Fatal(err)
	}
	var back trace.Event
	if err := json.Unmarshal(b, &back); err != nil || back.Seq != 1 || *back.Extent.LBA != 4096 || !back.Time.Equal(e.Time) {
		t.Errorf("JSON round trip %s: %+v %v", b, back, err)
	}
	r = record([]byte{0xc0, 0, 0, 0, 0, 0}, scsi.StatusCheckCondition, 0)
	r.Sense = scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.InvalidCommandOperationCode}
	e = d.Event(r)
	if e.Command != "0xc0" || e.Sense == nil || e.Sense.Key != "illegal_request" || e.Sense.ASC != 0x20 || e.Sense.Name != "INVALID COMMAND OPERATION CODE" || e.Sense.Info != nil {
		t.Errorf("unknown opcode event %+v sense %+v", e, e.Sense)
	}
}

func TestFilter(t *testing.T) {
	slow := record(read10, scsi.StatusGood, 5*time.Millisecond)
	fast := record(write10, scsi.StatusGood, time.Microsecond)
	bad := record(read10, scsi.StatusCheckCondition, time.Microsecond)
	bad.Sense = scsi.Sense{Key: scsi.MediumError, ASC: 0x1100}
	for _, tc := range []struct {
		f    trace.Filter
		want [3]bool // slow, fast, bad
	}{
		{trace.Filter{}, [3]bool{true, true, true}},
		{trace.Filter{Op: "read"}, [3]bool{true, false, true}},
		{trace.Filter{Op: "write_10|0x28"}, [3]bool{true, true, true}},
		{trace.Filter{Op: "write"}, [3]bool{false, true, false}},
		{trace.Filter{Status: "check"}, [3]bool{false, false, true}},
		{trace.Filter{Status: "good"}, [3]bool{true, true, false}},
		{trace.Filter{Sense: "medium_error/0x11"}, [3]bool{false, false, true}},
		{trace.Filter{Sense: "3/11/01"}, [3]bool{false, false, false}},
		{trace.Filter{LBA: "4100"}, [3]bool{true, false, true}},
		{trace.Filter{LBA: "4104+4096"}, [3]bool{false, true, false}},
		{trace.Filter{MinLatency: time.Millisecond}, [3]bool{true, false, false}},
		{trace.Filter{Op: "read", MinLatency: time.Millisecond}, [3]bool{true, false, false}},
	} {
		m, err := tc.f.Compile(disk.DeviceKind.Commands)
		if err != nil {
			t.Fatalf("%+v: %v", tc.f, err)
		}
		got := [3]bool{m.Match(slow), m.Match(fast), m.Match(bad)}
		if got != tc.want {
			t.Errorf("%+v: matches %v, want %v", tc.f, got, tc.want)
		}
		// The filter survives the control socket's query.
		q := url.Values{}
		tc.f.Query(q)
		if back, err := trace.FilterFromQuery(q); err != nil || back != tc.f {
			t.Errorf("%+v through %s: %+v, %v", tc.f, q.Encode(), back, err)
		}
	}
	tm, err := trace.Filter{Op: "write|write_filemarks_6"}.Compile(tape.Commands())
	if err != nil {
		t.Fatal(err)
	}
	if !tm.Match(record(write6, scsi.StatusGood, 0)) || tm.Match(record([]byte{0x08, 1, 0, 0, 2, 0}, scsi.StatusGood, 0)) {
		t.Error("tape op filter: WRITE(6) not selected or READ(6) selected")
	}
	if _, err := (trace.Filter{LBA: "1"}).Compile(tape.Commands()); err != nil {
		t.Errorf("an lba filter on a tape compiles (it matches nothing): %v", err)
	}
	for _, f := range []trace.Filter{{Op: "nonsense_command"}, {Status: "fine"}, {Sense: "a/b/c/d"}, {Sense: "16"}, {Sense: "3/xyz"}, {LBA: "1+0"}, {LBA: "+"}} {
		if _, err := f.Compile(disk.DeviceKind.Commands); err == nil {
			t.Errorf("%+v compiled", f)
		}
	}
	if _, err := trace.FilterFromQuery(url.Values{"min_latency": {"soon"}}); err == nil {
		t.Error("min_latency=soon accepted")
	}
}

func TestDecodeChanger(t *testing.T) {
	d := trace.Decoder{Device: "lib0", Cmds: changer.Commands(), Epoch: time.Unix(0, 0)}
	e := d.Event(record([]byte{0xa5, 0, 0, 1, 0x04, 0x01, 0x01, 0x00, 0, 0, 0, 0}, scsi.StatusGood, 0))
	if line := string(e.AppendText(nil, time.Unix(0, 0))); !strings.Contains(line, " - move_medium elements=1,1025,256 good ") {
		t.Errorf("MOVE MEDIUM: %q", line)
	}
	e = d.Event(record([]byte{0xb8, 0x12, 0x03, 0xe8, 0, 20, 0x02, 0, 0x10, 0, 0, 0}, scsi.StatusGood, 0))
	if e.Extent == nil || len(e.Extent.Elements) != 1 || e.Extent.Elements[0] != 1000 || *e.Extent.Count != 20 {
		t.Errorf("READ ELEMENT STATUS extent %+v", e.Extent)
	}
}

func TestDecodeLocate(t *testing.T) {
	d := trace.Decoder{Device: "t0", Cmds: tape.Commands(), Epoch: time.Unix(0, 0)}
	for _, tc := range []struct {
		cdb  []byte
		want string
	}{
		{[]byte{0x2b, 0x02, 0, 0, 0, 0x01, 0x00, 0, 1, 0}, " - locate_10 object=256 partition=1 good "},
		{[]byte{0x2b, 0, 0, 0, 0, 0, 7, 0, 0, 0}, " - locate_10 object=7 good "},
		{[]byte{0x92, 0x08, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0}, " - locate_16 file=3 good "},
		{[]byte{0x92, 0x18, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}, " - locate_16 eod good "},
	} {
		e := d.Event(record(tc.cdb, scsi.StatusGood, 0))
		line := string(e.AppendText(nil, time.Unix(0, 0)))
		if !strings.Contains(line, tc.want) {
			t.Errorf("% x: %q, want %q", tc.cdb, line, tc.want)
		}
	}
}

// TestAppendTextAllocs: the daemon formats text lines without allocating.
func TestAppendTextAllocs(t *testing.T) {
	d := trace.Decoder{Device: "disk0", Cmds: disk.DeviceKind.Commands, Epoch: time.Unix(100, 0)}
	r := record(read10, scsi.StatusCheckCondition, time.Microsecond)
	r.Sense = scsi.Sense{Key: scsi.MediumError, ASC: 0x1100, Valid: true, Info: 4096}
	buf := make([]byte, 0, 512)
	start := time.Unix(100, 0)
	if n := testing.AllocsPerRun(100, func() { buf = d.AppendText(buf[:0], r, start) }); n != 0 {
		t.Errorf("%v allocations per line", n)
	}
	e := d.Event(r)
	if want := string(e.AppendText(nil, start)); string(buf) != want {
		t.Errorf("AppendText %q, Event's %q", buf, want)
	}
}
