package main

import (
	"context"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/internal/trace"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/tcmu"
)

// Tracing from the control socket (vscsictl trace): one ring per device
// and reader, drained every tracePoll. A ring holds traceRing records:
// at tracePoll that is 400,000 commands a second before any is lost,
// about 1.5 MiB per traced device while a trace runs.
const (
	traceRing = 8192
	tracePoll = 20 * time.Millisecond
)

// traced is one device of a trace.
type traced struct {
	ring   *tcmu.TraceRing
	dec    trace.Decoder
	match  *trace.Matcher
	lost   uint64
	detach func()
}

// Trace streams the commands of the devices named (none: all served now)
// that f selects (control.Service).
func (d *daemon) Trace(ctx context.Context, names []string, f trace.Filter, emit func([]trace.Event) error) error {
	all := d.tgt.Devices()
	if len(names) == 0 {
		for _, ds := range all {
			names = append(names, ds.Info.Name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var srcs []*traced
	defer func() {
		for _, s := range srcs {
			s.detach()
		}
	}()
	for _, name := range names {
		i := slices.IndexFunc(all, func(ds target.DeviceStatus) bool { return ds.Info.Name == name })
		if i < 0 {
			return fmt.Errorf("%w: no device %q", unix.ENODEV, name)
		}
		k, _ := config.KindOf(all[i].Info.Subtype)
		m, err := f.Compile(k.Commands)
		if err != nil {
			return fmt.Errorf("%w: device %s: %w", unix.EINVAL, name, err)
		}
		r := tcmu.NewTraceRing(traceRing)
		detach, err := d.tgt.Trace(name, r)
		if err != nil {
			return withErrno(err, unix.EINVAL)
		}
		srcs = append(srcs, &traced{ring: r, dec: trace.Decoder{Device: name, Cmds: k.Commands, Epoch: r.Epoch()}, match: m, detach: detach})
	}
	if err := emit(nil); err != nil {
		return nil
	}
	recs := make([]tcmu.TraceRecord, 512)
	var out []trace.Event
	tick := time.NewTicker(tracePoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		out = out[:0]
		for _, s := range srcs {
			for {
				n := s.ring.Read(recs)
				for i := range recs[:n] {
					if s.match.Match(&recs[i]) {
						out = append(out, s.dec.Event(&recs[i]))
					}
				}
				if n < len(recs) {
					break
				}
			}
			if l := s.ring.Lost(); l > s.lost {
				out = append(out, trace.Event{Type: trace.TypeLost, Time: time.Now(), Device: s.dec.Device, Lost: l - s.lost})
				s.lost = l
			}
		}
		if len(out) > 0 {
			if err := emit(out); err != nil {
				return nil // the reader went away
			}
		}
	}
}
