package tcmu_test

import (
	"context"
	"testing"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/targettest"
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
func benchRead(b *testing.B, h target.Handler) {
	k := targettest.NewKernel(b, targettest.Config{})
	k.ServeLogger(h, zap.NewNop())
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
