package fault_test

import (
	"bytes"
	"context"
	"encoding/binary"
	"encoding/hex"
	"io"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
)

func unhex(t *testing.T, s string) []byte {
	t.Helper()
	b, err := hex.DecodeString(strings.ReplaceAll(s, " ", ""))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// TestGoldenSense pins the exact bytes the initiator receives for each
// action, in both sense formats.
func TestGoldenSense(t *testing.T) {
	for _, tc := range []struct {
		name   string
		kind   scsi.CommandTable
		format scsi.SenseFormat
		rule   string
		cdb    []byte
		want   string
		calls  int // handler runs
	}{
		{"disk read medium error, fixed, INFORMATION = first bad LBA", diskCmds, scsi.FixedFormat,
			"op=read;lba=0x1234+10;sense=medium_error/0x11/0x00", rw10(0x28, 0x1230, 16),
			"f0 00 03 00001234 0a 00000000 11 00 00 000000", 1},
		{"same in descriptor format", diskCmds, scsi.DescriptorFormat,
			"op=read;lba=0x1234+10;sense=medium_error/0x11/0x00", rw10(0x28, 0x1230, 16),
			"72 03 11 00 000000 0c  00 0a 80 00 0000000000001234", 1},
		{"disk write medium error defaults to WRITE ERROR 0c/00", diskCmds, scsi.FixedFormat,
			"op=write;sense=medium_error", rw10(0x2a, 0x10, 1),
			"f0 00 03 00000010 0a 00000000 0c 00 00 000000", 0},
		{"64-bit LBA: fixed format cannot carry it (VALID=0)", diskCmds, scsi.FixedFormat,
			"lba=0x100000000;sense=hardware_error", rw16(0x88, 0x100000000, 8),
			"70 00 04 00000000 0a 00000000 44 00 00 000000", 0},
		{"64-bit LBA in descriptor format", diskCmds, scsi.DescriptorFormat,
			"lba=0x100000000;sense=hardware_error", rw16(0x88, 0x100000000, 8),
			"72 04 44 00 000000 0c  00 0a 80 00 0000000100000000", 0},
		{"disk not ready: no INFORMATION", diskCmds, scsi.FixedFormat,
			"sense=not_ready/0x04/0x01", tur,
			"70 00 02 00000000 0a 00000000 04 01 00 000000", 0},
		{"tape fixed read blank check: residue in blocks", tapeCmds, scsi.FixedFormat,
			"op=read;sense=blank_check", tape6(0x08, true, 3),
			"f0 00 08 00000003 0a 00000000 00 05 00 000000", 0},
		{"tape variable read medium error: residue in bytes", tapeCmds, scsi.FixedFormat,
			"op=read;sense=medium_error", tape6(0x08, false, 0x2800),
			"f0 00 03 00002800 0a 00000000 11 00 00 000000", 0},
		{"tape write volume overflow: EOM", tapeCmds, scsi.FixedFormat,
			"op=write;sense=volume_overflow", tape6(0x0a, false, 512),
			"f0 00 4d 00000200 0a 00000000 00 02 00 000000", 0},
		{"tape volume overflow, descriptor: stream commands descriptor", tapeCmds, scsi.DescriptorFormat,
			"op=write;sense=volume_overflow", tape6(0x0a, false, 512),
			"72 0d 00 02 000000 10  00 0a 80 00 0000000000000200  04 02 00 40", 0},
		{"tape WRITE FILEMARKS volume overflow: filemarks not written", tapeCmds, scsi.FixedFormat,
			"op=write_filemarks_6;sense=volume_overflow", tape6(0x10, false, 2),
			"f0 00 4d 00000002 0a 00000000 00 02 00 000000", 0},
		{"tape SPACE blank check: count not spaced, signed", tapeCmds, scsi.FixedFormat,
			"op=0x11;sense=blank_check", []byte{0x11, 1, 0xff, 0xff, 0xfe, 0},
			"f0 00 08 fffffffe 0a 00000000 00 05 00 000000", 0},
		{"a rule on a zone: RESET WRITE POINTER of the zone at 0x8000", diskCmds, scsi.DescriptorFormat,
			"op=reset_write_pointer;lba=0x8000+0x8000;sense=hardware_error", zbcOut(0x04, 0x8000, false),
			"72 04 44 00 000000 0c  00 0a 80 00 0000000000008000", 0},
		{"the same rule on the zone's PRE-FETCH", diskCmds, scsi.DescriptorFormat,
			"lba=0x8000+0x8000;sense=hardware_error", rw16(0x90, 0x9000, 1),
			"72 04 44 00 000000 0c  00 0a 80 00 0000000000009000", 0},
		{"recovered: the command runs, RECOVERED ERROR 17/01", diskCmds, scsi.FixedFormat,
			"op=read;recovered", rw10(0x28, 0, 1),
			"70 00 01 00000000 0a 00000000 17 01 00 000000", 1},
		{"recovered with the given ASC", diskCmds, scsi.FixedFormat,
			"op=read;recovered=5d/00", rw10(0x28, 0, 1),
			"70 00 01 00000000 0a 00000000 5d 00 00 000000", 1},
	} {
		rec := &recorder{}
		var h fault.Handler = rec
		if tc.kind == tapeCmds {
			h = &positioned{}
		}
		d := newDevice(t, h, fault.Options{Commands: tc.kind, SenseFormat: tc.format}, tc.rule)
		r, _ := run(d, tc.cdb, 16*512)
		if r.Status != scsi.StatusCheckCondition {
			t.Errorf("%s: status %v", tc.name, r.Status)
			continue
		}
		if got, want := r.Sense.Append(nil), unhex(t, tc.want); !bytes.Equal(got, want) {
			t.Errorf("%s:\n got % x\nwant % x", tc.name, got, want)
		}
		calls := len(rec.calls)
		if p, ok := h.(*positioned); ok {
			calls = len(p.calls)
		}
		if calls != tc.calls {
			t.Errorf("%s: handler ran %d times, want %d", tc.name, calls, tc.calls)
		}
	}
}

// zbcOut is a ZBC OUT CDB of service action sa on the zone at id, or on
// every zone.
func zbcOut(sa byte, id uint64, all bool) []byte {
	c := []byte{0x94, sa, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}
	binary.BigEndian.PutUint64(c[2:], id)
	if all {
		c[14] = 0x01
	}
	return c
}

// A rule on a zone's range leaves the commands on other zones, and those
// on every zone, alone.
func TestZoneRuleScope(t *testing.T) {
	rec := &recorder{}
	d := newDevice(t, rec, fault.Options{Commands: diskCmds}, "op=reset_write_pointer;lba=0x8000+0x8000;sense=hardware_error")
	for _, cdb := range [][]byte{zbcOut(0x04, 0x10000, false), zbcOut(0x04, 0x8000, true)} {
		if r, _ := run(d, cdb, 0); r.Status != scsi.StatusGood {
			t.Errorf("% x: %v %+v, want the handler's GOOD", cdb, r.Status, r.Sense)
		}
	}
	if len(rec.calls) != 2 {
		t.Errorf("the handler ran %d times, want 2", len(rec.calls))
	}
}

// TestStatusActions: busy and task_set_full answer without the handler.
func TestStatusActions(t *testing.T) {
	for rule, want := range map[string]scsi.Status{"busy": scsi.StatusBusy, "task_set_full": scsi.StatusTaskSetFull} {
		rec := &recorder{}
		d := newDevice(t, rec, fault.Options{}, rule)
		if r, _ := run(d, rw10(0x2a, 0, 1), 512); r.Status != want || r.Sense != (scsi.Sense{}) {
			t.Errorf("%s: %+v", rule, r)
		}
		if len(rec.calls) != 0 {
			t.Errorf("%s: the handler ran", rule)
		}
	}
}

// TestPrefixTransfer: a READ hit by a medium error mid-range returns the
// blocks before the bad one (READ_LEN), and runs the handler with the
// TRANSFER LENGTH cut to them; a genuine failure of those wins.
func TestPrefixTransfer(t *testing.T) {
	rec := &recorder{}
	d := newDevice(t, rec, fault.Options{}, "op=read;lba=0x1234+10;sense=medium_error")
	r, buf := run(d, rw10(0x28, 0x1230, 16), 16*512)
	if r.Sense.Info != 0x1234 || buf.Written() != 4*512 {
		t.Fatalf("sense %+v, %d bytes written, want INFORMATION 0x1234 and 2048 bytes", r.Sense, buf.Written())
	}
	if want := rw10(0x28, 0x1230, 4); !bytes.Equal(rec.calls[0], want) {
		t.Errorf("handler got % x, want % x", rec.calls[0], want)
	}
	rec.resp = scsi.CheckCondition(scsi.Sense{Key: scsi.IllegalRequest, ASC: scsi.LBAOutOfRange})
	if r, _ := run(d, rw10(0x28, 0x1230, 16), 16*512); r.Sense.Key != scsi.IllegalRequest {
		t.Errorf("a failing prefix gave %+v, want the handler's ILLEGAL REQUEST", r)
	}
	if st := d.Injected(); st[0].Injected != 1 {
		t.Errorf("the genuine failure was counted as injected: %+v", st)
	}
}

// TestPrefixOnRealDisk runs the prefix against the disk emulation in
// store mode: what sd counts as good is really transferred (READ) and
// really written (WRITE), and nothing from the bad block on.
func TestPrefixOnRealDisk(t *testing.T) {
	cfg, err := disk.ParseConfig("size=1MiB;lbs=512;mode=store")
	if err != nil {
		t.Fatal(err)
	}
	dk, err := disk.New("d0", cfg, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	d := newDevice(t, dk, fault.Options{})
	for range 3 { // power-on unit attention
		run(d, tur, 0)
	}
	pattern := func(fill byte) []byte { return bytes.Repeat([]byte{fill}, 16*512) }
	write := func(fill byte) scsi.Response {
		buf := scsi.NewBuffer(pattern(fill))
		return d.HandleCommand(context.Background(), &scsi.Command{CDB: rw10(0x2a, 0, 16), Data: buf})
	}
	if r := write(0xaa); r.Status != scsi.StatusGood {
		t.Fatalf("write: %+v", r)
	}
	if err := d.SetRules([]fault.Rule{fault.MustParseRule("op=write;lba=8;sense=medium_error")}); err != nil {
		t.Fatal(err)
	}
	if r := write(0x55); r.Sense.Key != scsi.MediumError || r.Sense.Info != 8 || r.Sense.ASC != scsi.WriteError {
		t.Fatalf("write over lba 8: %+v", r)
	}
	if err := d.SetRules([]fault.Rule{fault.MustParseRule("op=read;lba=12+2;sense=medium_error")}); err != nil {
		t.Fatal(err)
	}
	r, buf := run(d, rw10(0x28, 0, 16), 16*512)
	if r.Sense.Key != scsi.MediumError || r.Sense.Info != 12 || buf.Written() != 12*512 {
		t.Fatalf("read: %+v, %d bytes", r, buf.Written())
	}
	d.Clear()
	in := make([]byte, 16*512)
	r = d.HandleCommand(context.Background(), &scsi.Command{CDB: rw10(0x28, 0, 16), Data: scsi.NewBuffer(in)})
	if r.Status != scsi.StatusGood {
		t.Fatalf("read back: %+v", r)
	}
	if want := append(pattern(0x55)[:8*512], pattern(0xaa)[:8*512]...); !bytes.Equal(in, want) {
		t.Error("blocks 0-7 should hold the second write and 8-15 the first")
	}
}

// posDrive gives the tape drive the Positioner the fault rules need (the
// lead adds it to tape.Drive).
type posDrive struct{ *tape.Drive }

func (p posDrive) Position() (int, uint64, uint64) {
	s := p.Stats()
	return s.Partition, s.Object, s.File
}

func newTape(t *testing.T) posDrive {
	t.Helper()
	cfg, err := tape.ParseConfig("memory=1;barcode=T00001")
	if err != nil {
		t.Fatal(err)
	}
	dr, err := tape.New("tape0", cfg, nil, zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = dr.Close() })
	for range 5 {
		if r, _ := run(dr, tur, 0); r.Status == scsi.StatusGood {
			break
		}
	}
	return posDrive{dr}
}

// TestTapeEarlyWarningAndPosition drives the tape emulation: the early
// warning answer after a byte count (the data is written), and a medium
// error at a block on READ (nothing moves).
func TestTapeEarlyWarningAndPosition(t *testing.T) {
	tp := newTape(t)
	d := newDevice(t, tp, fault.Options{Commands: tapeCmds}, "early_warning_after=100KiB")
	block := bytes.Repeat([]byte{0x42}, 32<<10)
	for i := 1; i <= 5; i++ {
		r := d.HandleCommand(context.Background(), &scsi.Command{CDB: tape6(0x0a, false, 32<<10), Data: scsi.NewBuffer(block)})
		if i <= 3 && r.Status != scsi.StatusGood {
			t.Fatalf("write %d: %+v", i, r)
		}
		if i > 3 {
			want := "70 00 40 00000000 0a 00000000 00 02 00 000000" // NO SENSE, EOM, 00/02, VALID=0: as the drive reports it
			if got := r.Sense.Append(nil); r.Status != scsi.StatusCheckCondition || !bytes.Equal(got, unhex(t, want)) {
				t.Fatalf("write %d: %v % x, want early warning", i, r.Status, got)
			}
		}
		if _, obj, _ := tp.Position(); obj != uint64(i) {
			t.Fatalf("after write %d the drive is at object %d: the write did not reach it", i, obj)
		}
	}
	if r, _ := run(d, tape6(0x10, false, 1), 0); r.Sense.EOM != true || r.Sense.Key != scsi.NoSense {
		t.Errorf("WRITE FILEMARKS in early warning: %+v", r)
	}
	if st := d.Injected(); st[0].Injected != 3 || st[0].Matched != 6 {
		t.Errorf("stats %+v", st)
	}

	if err := d.SetRules([]fault.Rule{fault.MustParseRule("op=read;block=2;sense=medium_error")}); err != nil {
		t.Fatal(err)
	}
	run(d, []byte{0x01, 0, 0, 0, 0, 0}, 0) // REWIND
	for i := range 2 {
		if r, buf := run(d, tape6(0x08, false, 32<<10), 32<<10); r.Status != scsi.StatusGood || buf.Written() != 32<<10 {
			t.Fatalf("read %d: %+v", i, r)
		}
	}
	r, buf := run(d, tape6(0x08, false, 32<<10), 32<<10)
	if r.Sense.Key != scsi.MediumError || r.Sense.Info != 32<<10 || buf.Written() != 0 {
		t.Fatalf("read at block 2: %+v, %d bytes", r, buf.Written())
	}
	if _, obj, _ := tp.Position(); obj != 2 {
		t.Errorf("the failed read moved the tape to %d", obj)
	}
	d.Clear()
	if r, _ := run(d, tape6(0x08, false, 32<<10), 32<<10); r.Status != scsi.StatusGood {
		t.Errorf("read at block 2 without rules: %+v", r)
	}
}

// TestTimeout: the command is held past cmd_time_out, never runs, and
// completes with ABORTED COMMAND 08/01 that nobody reads.
func TestTimeout(t *testing.T) {
	clk := &fakeClock{}
	rec := &recorder{}
	d := newDevice(t, rec, fault.Options{Clock: clk, CmdTimeout: 30 * time.Second}, "op=write;timeout", "op=read;timeout=90s")
	r, _ := run(d, rw10(0x2a, 0, 1), 512)
	if r.Sense.Key != scsi.AbortedCommand || r.Sense.ASC != scsi.LogicalUnitCommunicationTimeout || len(rec.calls) != 0 {
		t.Errorf("%+v, %d handler calls", r, len(rec.calls))
	}
	run(d, rw10(0x28, 0, 1), 512)
	if s := clk.take(); len(s) != 2 || s[0] != 32*time.Second || s[1] != 90*time.Second {
		t.Errorf("held %v, want [32s 1m30s] (cmd_time_out + HoldMargin, then the rule's own, neither capped)", s)
	}
	if st := d.Stats(); st.Held != 2 || st.Clamped != 0 {
		t.Errorf("stats %+v", st)
	}
	// A stopping device ends the hold: BUSY.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if r := d.HandleCommand(ctx, &scsi.Command{CDB: rw10(0x2a, 0, 1), Data: scsi.NewBuffer(make([]byte, 512))}); r.Status != scsi.StatusBusy {
		t.Errorf("cancelled hold: %v", r.Status)
	}
	if st := d.Stats(); st.Interrupted != 1 {
		t.Errorf("interrupted %d", st.Interrupted)
	}
}

// abortAfter reports the held command aborted from its n-th poll on.
type abortAfter struct{ polls, n int }

func (a *abortAfter) CanReportAborts(context.Context) bool { return true }
func (a *abortAfter) Aborted(context.Context) bool {
	a.polls++
	return a.polls >= a.n
}

// TestTimeoutEndsOnAbort: with the transport reporting aborts, a held
// command polls every 10 ms and ends when the initiator aborts it (TASK
// ABORTED, which the kernel ignores); never aborted, it is held its
// whole time and answers as before.
func TestTimeoutEndsOnAbort(t *testing.T) {
	clk := &fakeClock{}
	ab := &abortAfter{n: 200} // 2 s into the hold, as sd's timeout of 2 s
	d := newDevice(t, &recorder{}, fault.Options{Clock: clk, CmdTimeout: 4 * time.Second, Aborts: ab}, "op=read;timeout")
	r, _ := run(d, rw10(0x28, 0, 1), 512)
	s := clk.take()
	var held time.Duration
	for _, x := range s {
		held += x
	}
	if r.Status != scsi.StatusTaskAborted || held != 2*time.Second || len(s) != 200 || s[0] != 10*time.Millisecond {
		t.Errorf("aborted hold: %v after %v in %d sleeps, want TASK ABORTED after 2s in 200", r.Status, held, len(s))
	}
	ab.polls, ab.n = 0, 1<<30
	r, _ = run(d, rw10(0x28, 0, 1), 512)
	held = 0
	for _, x := range clk.take() {
		held += x
	}
	if r.Sense.Key != scsi.AbortedCommand || held != 4*time.Second+fault.HoldMargin {
		t.Errorf("unaborted hold: %+v after %v, want 08/01 after 6s", r, held)
	}
}

// senseFormatter reports descriptor format, as a disk with D_SENSE=1.
type senseFormatter struct{ recorder }

func (senseFormatter) CurrentSenseFormat() scsi.SenseFormat { return scsi.DescriptorFormat }

// TestSenseFormat: injected sense follows the handler's D_SENSE (reported,
// or learned from its CHECK CONDITIONs).
func TestSenseFormat(t *testing.T) {
	d := newDevice(t, &senseFormatter{}, fault.Options{}, "op=read;sense=aborted_command")
	if r, _ := run(d, rw10(0x28, 0, 1), 512); r.Sense.Format != scsi.DescriptorFormat {
		t.Error("SenseFormatReporter ignored")
	}
	rec := &recorder{resp: scsi.CheckCondition(scsi.Sense{Key: scsi.UnitAttention, Format: scsi.DescriptorFormat})}
	d = newDevice(t, rec, fault.Options{}, "op=read;sense=aborted_command")
	if r, _ := run(d, rw10(0x28, 0, 1), 512); r.Sense.Format != scsi.FixedFormat {
		t.Error("format before the handler spoke: want Options.SenseFormat (fixed)")
	}
	run(d, tur, 0)
	if r, _ := run(d, rw10(0x28, 0, 1), 512); r.Sense.Format != scsi.DescriptorFormat {
		t.Error("format not learned from the handler's CHECK CONDITION")
	}
}

// TestUnwrap: scsi.As finds the wrapped handler's optional operations
// (command names, io.Closer) through Unwrap; the wrapper is concurrent
// only with a Depth above 1.
func TestUnwrap(t *testing.T) {
	rec := &recorder{names: map[scsi.OpCode]string{0x28: "read_10"}}
	d := newDevice(t, rec, fault.Options{})
	if n, ok := scsi.As[scsi.CommandNamer](d); !ok || n.CommandName(0x28) != "read_10" || d.Unwrap() != fault.Handler(rec) {
		t.Error("the recorder's CommandName is not found through the wrapper")
	}
	if d.Concurrent() != 0 {
		t.Errorf("Device without Depth: Concurrent() = %d, want 0 (ring order)", d.Concurrent())
	}
	tp := newTape(t)
	dt := newDevice(t, tp, fault.Options{Commands: tapeCmds})
	if n, ok := scsi.As[scsi.CommandNamer](dt); !ok || n.CommandName(0x08) != "read_6" {
		t.Errorf("tape CommandName(0x08) not found through the wrapper")
	}
	c, ok := scsi.As[io.Closer](dt)
	if !ok {
		t.Fatal("the drive's Close is not found through the wrapper")
	}
	if err := c.Close(); err != nil {
		t.Errorf("Close: %v", err)
	}
	if r, _ := run(dt, tur, 0); r.Status != scsi.StatusCheckCondition {
		t.Errorf("the drive was not closed: %+v", r)
	}
}

// TestActedMarksCommands: traces learn from Command.Acted which commands a
// rule or the timing model changed, and only those.
func TestActedMarksCommands(t *testing.T) {
	clk := &fakeClock{}
	d := newDevice(t, &recorder{}, fault.Options{Commands: diskCmds, Clock: clk}, "op=write;busy", "op=read;lba=100;delay=1ms")
	for _, tc := range []struct {
		cdb  []byte
		want scsi.Acted
	}{
		{rw10(0x28, 0, 1), 0},
		{rw10(0x2a, 0, 1), scsi.ActedFault},
		{rw10(0x28, 100, 1), scsi.ActedFault},
	} {
		cmd := scsi.Command{CDB: tc.cdb, Data: new(scsi.Buffer)}
		d.HandleCommand(context.Background(), &cmd)
		if cmd.Acted != tc.want {
			t.Errorf("% x: acted %v, want %v", tc.cdb, cmd.Acted, tc.want)
		}
	}
	if err := d.SetTiming(fault.MustParseTiming("latency=1ms")); err != nil {
		t.Fatal(err)
	}
	cmd := scsi.Command{CDB: rw10(0x28, 0, 1), Data: new(scsi.Buffer)}
	d.HandleCommand(context.Background(), &cmd)
	if cmd.Acted != scsi.ActedTiming {
		t.Errorf("timing model: acted %v, want timing", cmd.Acted)
	}
}
