package trace_test

import (
	"testing"
	"time"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/internal/trace"
	"github.com/vscsid/vscsid/scsi"
)

// BenchmarkAppendText: what the daemon spends per traced command on a text
// line (filter and format).
func BenchmarkAppendText(b *testing.B) {
	d := trace.Decoder{Device: "perf_fake_rw", Cmds: disk.DeviceKind.Commands, Epoch: time.Unix(100, 0)}
	r := record(read10, scsi.StatusGood, 37*time.Microsecond)
	r.Length, r.Written, r.Segments = 4096, 4096, 1
	buf := make([]byte, 0, 512)
	start := time.Unix(100, 0)
	m, _ := trace.Filter{}.Compile(disk.DeviceKind.Commands)
	b.ReportAllocs()
	for b.Loop() {
		if m.Match(r) {
			buf = d.AppendText(buf[:0], r, start)
		}
	}
}
