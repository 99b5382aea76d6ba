package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/internal/buildinfo"
	"github.com/vscsid/vscsid/internal/record"
	"github.com/vscsid/vscsid/internal/trace"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/tcmu"
)

// Tracing and recording from the control socket (vscsictl trace, vscsictl
// record): one ring per device and reader, drained every tracePoll. A
// ring holds traceRing records: at tracePoll that is 400,000 commands a
// second before any is lost, about 1.5 MiB per traced device while a trace
// runs. A recording's ring also holds recordBytes of Data-Out payloads:
// 3 GiB/s at tracePoll.
const (
	traceRing   = 8192
	recordBytes = 64 << 20
	tracePoll   = 20 * time.Millisecond
)

// traced is one device of a trace or a recording.
type traced struct {
	ring   *tcmu.TraceRing
	status target.DeviceStatus
	cmds   scsi.CommandTable
	lost   uint64
	detach func()
}

// attachRings attaches a ring newRing makes to each device named (none:
// every device served now), in name order. The caller detaches them.
func (d *daemon) attachRings(names []string, newRing func() *tcmu.TraceRing) ([]*traced, error) {
	all := d.tgt.Devices()
	if len(names) == 0 {
		for _, ds := range all {
			names = append(names, ds.Info.Name)
		}
	}
	slices.Sort(names)
	names = slices.Compact(names)
	var srcs []*traced
	for _, name := range names {
		i := slices.IndexFunc(all, func(ds target.DeviceStatus) bool { return ds.Info.Name == name })
		if i < 0 {
			detachAll(srcs)
			return nil, fmt.Errorf("%w: no device %q", unix.ENODEV, name)
		}
		k, _ := config.KindOf(all[i].Info.Subtype)
		r := newRing()
		detach, err := d.tgt.Trace(name, r)
		if err != nil {
			detachAll(srcs)
			return nil, withErrno(err, unix.EINVAL)
		}
		srcs = append(srcs, &traced{ring: r, status: all[i], cmds: k.Commands, detach: detach})
	}
	return srcs, nil
}

func detachAll(srcs []*traced) {
	for _, s := range srcs {
		s.detach()
	}
}

// drain calls each every tracePoll until ctx is done or each fails.
func drain(ctx context.Context, each func() error) error {
	tick := time.NewTicker(tracePoll)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
		if err := each(); err != nil {
			return nil // the reader went away
		}
	}
}

// Trace streams the commands of the devices named (none: all served now)
// that f selects (control.Service), after a start event naming them: JSON
// lines, or text lines when text (formatted here without allocating, so
// that a trace costs the daemon little).
func (d *daemon) Trace(ctx context.Context, names []string, f trace.Filter, text bool, emit func(lines []byte) error) error {
	srcs, err := d.attachRings(names, func() *tcmu.TraceRing { return tcmu.NewTraceRing(traceRing) })
	if err != nil {
		return err
	}
	defer detachAll(srcs)
	matchers := make([]*trace.Matcher, len(srcs))
	decoders := make([]trace.Decoder, len(srcs))
	for i, s := range srcs {
		if matchers[i], err = f.Compile(s.cmds); err != nil {
			return fmt.Errorf("%w: device %s: %w", unix.EINVAL, s.status.Info.Name, err)
		}
		decoders[i] = trace.Decoder{Device: s.status.Info.Name, Cmds: s.cmds, Epoch: s.ring.Epoch()}
	}
	var out bytes.Buffer
	enc := json.NewEncoder(&out)
	put := func(e *trace.Event, start time.Time) {
		if text {
			out.Write(append(e.AppendText(out.AvailableBuffer(), start), '\n'))
			return
		}
		_ = enc.Encode(e) // a bytes.Buffer does not fail
	}
	start := trace.Event{Type: trace.TypeStart, Time: time.Now()}
	for _, s := range srcs {
		start.Devices = append(start.Devices, s.status.Info.Name)
	}
	put(&start, start.Time)
	if err := emit(out.Bytes()); err != nil {
		return nil
	}
	recs := make([]tcmu.TraceRecord, 512)
	return drain(ctx, func() error {
		out.Reset()
		for i, s := range srcs {
			for {
				n := s.ring.Read(recs)
				for j := range recs[:n] {
					r := &recs[j]
					switch {
					case !matchers[i].Match(r):
					case text:
						out.Write(append(decoders[i].AppendText(out.AvailableBuffer(), r, start.Time), '\n'))
					default:
						e := decoders[i].Event(r)
						put(&e, start.Time)
					}
				}
				if n < len(recs) {
					break
				}
			}
			if l := s.ring.Lost(); l > s.lost {
				put(&trace.Event{Type: trace.TypeLost, Time: time.Now(), Device: s.status.Info.Name, Lost: l - s.lost}, start.Time)
				s.lost = l
			}
		}
		if out.Len() == 0 {
			return nil
		}
		return emit(out.Bytes())
	})
}

// Record streams a recording of the devices named (control.Service):
// first its header, then every command the devices complete, with their
// Data-Out payloads when payloads.
func (d *daemon) Record(ctx context.Context, names []string, payloads bool, emit func(*record.Header, []record.Command) error) error {
	srcs, err := d.attachRings(names, func() *tcmu.TraceRing { return tcmu.NewCaptureRing(traceRing, recordBytes, payloads) })
	if err != nil {
		return err
	}
	defer detachAll(srcs)
	start := time.Now()
	h := record.Header{VSCSID: buildinfo.Version(), Started: start, Payloads: payloads}
	for _, s := range srcs {
		dev := record.Device{Name: s.status.Info.Name, Subtype: s.status.Info.Subtype, Config: s.status.Info.Config,
			Size: s.status.Info.Size, BlockSize: s.status.Info.BlockSize}
		if fd, ok := scsi.As[*fault.Device](s.status.Handler); ok {
			dev.Fault = faultOf(fd)
		}
		h.Devices = append(h.Devices, dev)
	}
	if err := emit(&h, nil); err != nil {
		return nil
	}
	recs := make([]tcmu.TraceRecord, 512)
	var buf []byte
	var out []record.Command
	return drain(ctx, func() error {
		out = out[:0]
		for i, s := range srcs {
			for {
				var n int
				n, buf = s.ring.ReadCapture(recs, buf)
				for j := range recs[:n] {
					r := &recs[j]
					var p []byte
					if r.DataLen > 0 {
						p = slices.Clone(buf[r.DataOff : r.DataOff+uint64(r.DataLen)])
					}
					out = append(out, record.FromTrace(i, r, p, s.ring.Epoch().Add(time.Duration(r.End)).Sub(start)))
				}
				if n < len(recs) {
					break
				}
			}
		}
		if len(out) == 0 {
			return nil
		}
		return emit(nil, out)
	})
}

// faultOf is what a recording keeps of a device's fault injection: nil
// when there is none.
func faultOf(fd *fault.Device) *record.Fault {
	rules, tm := fd.Rules(), fd.Timing()
	if len(rules) == 0 && tm.IsZero() {
		return nil
	}
	f := &record.Fault{Seed: fd.Seed()}
	for _, r := range rules {
		f.Rules = append(f.Rules, r.String())
	}
	if !tm.IsZero() {
		f.Timing = tm.String()
	}
	return f
}
