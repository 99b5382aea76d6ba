package tcmu_test

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/targettest"
	"github.com/vscsid/vscsid/target/tcmu"
)

// zeroRead is the trivial handler of the benchmark: a fake_rw READ.
func zeroRead(_ context.Context, cmd *scsi.Command) scsi.Response {
	cmd.Data.WriteZeros(cmd.Data.Len())
	return scsi.Good
}

type concurrentZero struct{ n int }

func (c concurrentZero) HandleCommand(ctx context.Context, cmd *scsi.Command) scsi.Response {
	return zeroRead(ctx, cmd)
}

func (c concurrentZero) Concurrent() int { return c.n }

// benchRead pushes b.N 4 KiB READ(10)s through a device over the fake
// kernel. The kernel side queues as many as the ring holds per
// notification and does not gather the data, so what is measured is the
// device: ring walk, entry validation, handler call, completion, stats,
// and one Kick per batch.
func benchRead(b *testing.B, h target.Handler) { benchReadTraced(b, h, false) }

// benchReadTraced is benchRead with a trace ring attached when traced, and
// a reader draining it as vscsictl trace does (every 10 ms).
func benchReadTraced(b *testing.B, h target.Handler, traced bool) {
	k := targettest.NewKernel(b, targettest.Config{})
	dev := k.ServeLogger(h, zap.NewNop())
	if traced {
		r := tcmu.NewTraceRing(4096)
		detach, err := dev.Trace(r)
		if err != nil {
			b.Fatal(err)
		}
		stop := make(chan struct{})
		done := make(chan struct{})
		go func() {
			defer close(done)
			buf := make([]tcmu.TraceRecord, 256)
			t := time.NewTicker(10 * time.Millisecond)
			defer t.Stop()
			for {
				for n := 1; n > 0; {
					n = r.Read(buf)
				}
				select {
				case <-stop:
					return
				case <-t.C:
				}
			}
		}()
		b.Cleanup(func() {
			close(stop)
			<-done
			detach()
			b.ReportMetric(float64(r.Lost()), "lost")
		})
	}
	cdb := read10(0, 8)
	d := targettest.DataIn(4096)
	if bad, err := k.Pump(cdb, d, 1000); bad != 0 || err != nil { // warm up: grow what grows once
		b.Fatalf("warm-up: %d bad, %v", bad, err)
	}
	b.ReportAllocs()
	b.SetBytes(4096)
	b.ResetTimer()
	bad, err := k.Pump(cdb, d, b.N)
	b.StopTimer()
	if bad != 0 || err != nil {
		b.Fatalf("%d commands not GOOD, err %v", bad, err)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "cmds/s")
}

func BenchmarkRead4K(b *testing.B) { benchRead(b, scsi.HandlerFunc(zeroRead)) }

func BenchmarkRead4KConcurrent(b *testing.B) { benchRead(b, concurrentZero{4}) }

func BenchmarkRead4KTraced(b *testing.B) { benchReadTraced(b, scsi.HandlerFunc(zeroRead), true) }
