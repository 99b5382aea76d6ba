package main

import (
	"context"
	"errors"
	"testing"
	"time"

	"golang.org/x/sys/unix"

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
		done <- d.Trace(ctx, []string{"tape0"}, trace.Filter{Op: "write|write_filemarks_6"}, func(evs []trace.Event) error {
			if evs == nil {
				close(started)
			}
			for _, e := range evs {
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
		err := d.Trace(context.Background(), []string{tc.dev}, tc.f, func([]trace.Event) error { return errors.New("no stream") })
		if !errors.Is(err, tc.errno) {
			t.Errorf("trace %s %+v: %v, want %v", tc.dev, tc.f, err, tc.errno)
		}
	}
}
