package main

import (
	"context"
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
// 3 GiB/s at tracePoll. A trace's lines go out when traceBatch bytes of
// them wait, or traceFlush after the previous write: a few writes a
// second on the socket rather than one per drain, since each wakes the
// reader (on a loaded machine, the CPU the traced device needs). A busy
// trace's lines (about 150 bytes a command) fill traceBatch in a tenth of
// a second at 11,000 commands a second; 64 KiB pieces woke the reader
// four times as often, and cost the traced device more (docs/trace.md).
const (
	traceRing   = 8192
	recordBytes = 64 << 20
	tracePoll   = 20 * time.Millisecond
	traceBatch  = 256 << 10
	traceFlush  = 200 * time.Millisecond
)

// traced is one device of a trace or a recording.
type traced struct {
	ring   *tcmu.TraceRing
	status target.DeviceStatus
	cmds   scsi.CommandTable
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
// lines, or text lines when text (trace.Stream).
func (d *daemon) Trace(ctx context.Context, names []string, f trace.Filter, text bool, emit func(lines []byte) error) error {
	srcs, err := d.attachRings(names, func() *tcmu.TraceRing { return tcmu.NewTraceRing(traceRing) })
	if err != nil {
		return err
	}
	defer detachAll(srcs)
	st := trace.NewStream(f, text)
	for _, s := range srcs {
		if err := st.Add(s.status.Info.Name, s.cmds, s.ring); err != nil {
			return fmt.Errorf("%w: device %s: %w", unix.EINVAL, s.status.Info.Name, err)
		}
	}
	if err := emit(st.Start()); err != nil {
		return nil
	}
	last := time.Now()
	return drain(ctx, func() error {
		if n := st.Drain(); n >= traceBatch || (n > 0 && time.Since(last) >= traceFlush) {
			last = time.Now()
			return emit(st.Take())
		}
		return nil
	})
}

// Record streams a recording of the devices named (control.Service):
// first its header, then every command the devices complete, with their
// Data-Out payloads when payloads.
func (d *daemon) Record(ctx context.Context, names []string, payloads bool, emit func(*record.Header, []record.Command) error) error {
	payloadMax := -1
	if !payloads {
		payloadMax = record.ParameterListMax
	}
	srcs, err := d.attachRings(names, func() *tcmu.TraceRing { return tcmu.NewCaptureRing(traceRing, recordBytes, payloadMax) })
	if err != nil {
		return err
	}
	defer detachAll(srcs)
	start := time.Now()
	h := record.Header{VSCSID: buildinfo.Version(), Started: start, Payloads: payloads}
	if !payloads {
		h.PayloadMax = payloadMax
	}
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
	rings := make([]*tcmu.TraceRing, len(srcs))
	for i, s := range srcs {
		rings[i] = s.ring
	}
	c := record.NewCapture(rings, start)
	return drain(ctx, func() error {
		if cmds := c.Drain(); len(cmds) > 0 {
			return emit(nil, cmds)
		}
		return nil
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
