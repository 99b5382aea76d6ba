package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/internal/record"
	"github.com/vscsid/vscsid/internal/record/recordtest"
	"github.com/vscsid/vscsid/internal/trace"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/targettest"
)

// TestTraceTapeWrites: what vscsictl trace shows of a tar to a drive,
// through the daemon's Trace: the filter's commands only, decoded with the
// drive's table.
func TestTraceTapeWrites(t *testing.T) {
	reg, _ := newTestDrive(t)
	k := reg.serve(t, "tape0")
	d := reg.daemon(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	events := make(chan trace.Event, 16)
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		done <- d.Trace(ctx, []string{"tape0"}, trace.Filter{Op: "write|write_filemarks_6"}, false, func(lines []byte) error {
			for l := range bytes.Lines(lines) {
				var e trace.Event
				if err := json.Unmarshal(l, &e); err != nil {
					return err
				}
				if e.Type == trace.TypeStart {
					close(started)
					continue
				}
				events <- e
			}
			return nil
		})
	}()
	<-started
	k.Submit([]byte{0, 0, 0, 0, 0, 0}, targettest.NoData) // TEST UNIT READY: the power-on attention
	k.Submit([]byte{0, 0, 0, 0, 0, 0}, targettest.NoData)
	if c := k.Submit([]byte{0x0a, 0, 0, 0x03, 0xe8, 0}, targettest.DataOut(make([]byte, 1000))); c.Status != scsi.StatusGood {
		t.Fatalf("WRITE(6): %v", c.Status)
	}
	if c := k.Submit([]byte{0x10, 0, 0, 0, 1, 0}, targettest.NoData); c.Status != scsi.StatusGood {
		t.Fatalf("WRITE FILEMARKS(6): %v", c.Status)
	}
	var got []trace.Event
	for len(got) < 2 {
		select {
		case e := <-events:
			got = append(got, e)
		case <-time.After(5 * time.Second):
			t.Fatalf("events so far %+v", got)
		}
	}
	w, fm := got[0], got[1]
	if w.Command != "write_6" || w.Direction != "write" || w.Bytes != 1000 || w.Extent == nil || w.Extent.Count == nil || *w.Extent.Count != 1000 || w.Extent.Fixed {
		t.Errorf("WRITE(6) event %+v", w)
	}
	if fm.Command != "write_filemarks_6" || fm.Extent == nil || *fm.Extent.Count != 1 || fm.Seq != w.Seq+1 {
		t.Errorf("WRITE FILEMARKS(6) event %+v (after seq %d)", fm, w.Seq)
	}
	cancel()
	if err := <-done; err != nil {
		t.Errorf("trace ended with %v", err)
	}
	for _, tc := range []struct {
		dev   string
		f     trace.Filter
		errno unix.Errno
	}{
		{"nope", trace.Filter{}, unix.ENODEV},
		{"tape0", trace.Filter{Op: "no_such_command"}, unix.EINVAL},
	} {
		err := d.Trace(context.Background(), []string{tc.dev}, tc.f, false, func([]byte) error { return errors.New("no stream") })
		if !errors.Is(err, tc.errno) {
			t.Errorf("trace %s %+v: %v, want %v", tc.dev, tc.f, err, tc.errno)
		}
	}
}

// recordWhile records the devices named through d while run submits want
// commands to them, and returns the recording.
func recordWhile(t *testing.T, d *daemon, names []string, want int, run func()) []byte {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	var file bytes.Buffer
	var w *record.Writer
	got := make(chan int, 64)
	started := make(chan struct{})
	done := make(chan error, 1)
	go func() {
		n := 0
		done <- d.Record(ctx, names, true, func(h *record.Header, cmds []record.Command) error {
			if h != nil {
				var err error
				w, err = record.NewWriter(&file, *h)
				close(started)
				return err
			}
			for i := range cmds {
				if err := w.Write(&cmds[i]); err != nil {
					return err
				}
			}
			n += len(cmds)
			got <- n
			return nil
		})
	}()
	<-started
	run()
	for n := 0; n < want; {
		select {
		case n = <-got:
		case <-time.After(5 * time.Second):
			t.Fatalf("recorded %d of %d commands", n, want)
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return file.Bytes()
}

// replayWith replays the recording rec with build.
func replayWith(t *testing.T, rec []byte, build record.Builder) record.Result {
	t.Helper()
	r, err := record.NewReader(bytes.NewReader(rec))
	if err != nil {
		t.Fatal(err)
	}
	res, err := record.Replay(context.Background(), r, build)
	if err != nil {
		t.Fatal(err)
	}
	return res
}

// clearAttentions takes the power-on and medium attentions, as the
// kernel's scan does before anyone records.
func clearAttentions(k *targettest.Kernel) {
	for range 4 {
		k.Submit([]byte{0, 0, 0, 0, 0, 0}, targettest.NoData)
	}
}

// TestRecordReplay: a recording of a drive made through the daemon
// replays with no difference against the same code, through the
// replay's own media directory, and a drive whose ILI residue has the
// wrong sign differs.
func TestRecordReplay(t *testing.T) {
	reg, _ := newTestDrive(t)
	k := reg.serve(t, "tape0")
	clearAttentions(k)
	block := bytes.Repeat([]byte("vscsid "), 100)
	cmds := []struct {
		cdb  []byte
		data targettest.Data
	}{
		{[]byte{0, 0, 0, 0, 0, 0}, targettest.NoData},
		{[]byte{0x0a, 0, 0, 0x02, 0xbc, 0}, targettest.DataOut(block)}, // WRITE(6) 700 bytes
		{[]byte{0x10, 0, 0, 0, 1, 0}, targettest.NoData},               // WRITE FILEMARKS(6)
		{[]byte{0x01, 0, 0, 0, 0, 0}, targettest.NoData},               // REWIND
		{[]byte{0x08, 0, 0, 0x04, 0, 0}, targettest.DataIn(1024)},      // READ(6) 1024: ILI, residue 324
		{[]byte{0x08, 0, 0, 0x04, 0, 0}, targettest.DataIn(1024)},      // the filemark
	}
	rec := recordWhile(t, reg.daemon(t), []string{"tape0"}, len(cmds), func() {
		for _, c := range cmds {
			k.Submit(c.cdb, c.data)
		}
	})
	r, err := record.NewReader(bytes.NewReader(rec))
	if err != nil || r.Header.Devices[0].Subtype != "vtape" || !r.Header.Payloads {
		t.Fatalf("header %+v, %v", r.Header, err)
	}
	if res := replayWith(t, rec, config.ReplayBuilder(t.TempDir())); res.Commands != len(cmds) || len(res.Divergences) != 0 {
		t.Fatalf("replay of the same code: %d commands, differences %v", res.Commands, res.Divergences)
	}
	res := replayWith(t, rec, func(dev record.Device, env device.Env) (scsi.Handler, error) {
		h, err := config.ReplayBuilder(t.TempDir())(dev, env)
		return recordtest.NegatedInfo(h), err
	})
	if len(res.Divergences) == 0 || res.Divergences[0].Field != "sense" || !strings.Contains(res.Divergences[0].Got, "info=-324") {
		t.Errorf("the wrong ILI sign: differences %v", res.Divergences)
	}
}

// TestRecordReplayWithFaults: a device whose fault rule fails half of the
// writes at random replays the same failures: the recording keeps the
// rules and the seed.
func TestRecordReplayWithFaults(t *testing.T) {
	reg, _ := newTestDrive(t)
	k := reg.serve(t, "tape0")
	clearAttentions(k)
	d := reg.daemon(t)
	if _, err := d.AddFault("tape0", "op=write;prob=0.5;sense=medium_error"); err != nil {
		t.Fatal(err)
	}
	const n = 40
	failed := 0
	rec := recordWhile(t, d, []string{"tape0"}, n, func() {
		for range n {
			if c := k.Submit([]byte{0x0a, 0, 0, 0, 100, 0}, targettest.DataOut(make([]byte, 100))); c.Status != scsi.StatusGood {
				failed++
			}
		}
	})
	if failed == 0 || failed == n {
		t.Fatalf("%d of %d writes failed: the rule did not draw", failed, n)
	}
	r, _ := record.NewReader(bytes.NewReader(rec))
	if f := r.Header.Devices[0].Fault; f == nil || len(f.Rules) != 1 {
		t.Fatalf("recorded fault setup %+v", f)
	}
	if res := replayWith(t, rec, config.ReplayBuilder(t.TempDir())); res.Commands != n || len(res.Divergences) != 0 {
		t.Errorf("replay: %d commands, differences %v", res.Commands, res.Divergences)
	}
}

// TestTraceText: with text, the daemon sends the lines vscsictl prints.
func TestTraceText(t *testing.T) {
	reg, _ := newTestDrive(t)
	k := reg.serve(t, "tape0")
	clearAttentions(k)
	d := reg.daemon(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	lines := make(chan string, 16)
	done := make(chan error, 1)
	go func() {
		done <- d.Trace(ctx, []string{"tape0"}, trace.Filter{}, true, func(b []byte) error {
			for l := range bytes.Lines(b) {
				lines <- string(l)
			}
			return nil
		})
	}()
	if l := <-lines; !strings.HasPrefix(l, "0.000000 tracing tape0\n") {
		t.Fatalf("first line %q", l)
	}
	k.Submit([]byte{0x0a, 0, 0, 0x03, 0xe8, 0}, targettest.DataOut(make([]byte, 1000)))
	select {
	case l := <-lines:
		if !strings.Contains(l, " tape0 #1 W write_6 count=1000 1000/1000B 1seg@") || !strings.HasSuffix(l, "\n") {
			t.Errorf("WRITE(6) line %q", l)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("no line")
	}
	cancel()
	if err := <-done; err != nil {
		t.Error(err)
	}
}
