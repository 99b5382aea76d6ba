package main

import (
	"context"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/targettest"
)

// The handlers as vscsid serves them: every device behind its fault
// wrapper (withFaults), with no rule or timing installed. Compare with
// disk's BenchmarkRead4K/BenchmarkWrite4K (the bare handler).
func benchWired(b *testing.B, cdb scsi.CDB) {
	benchWiredWith(b, config.Fault{}, cdb)
}

// benchWiredWith runs cdb against a store-mode disk d0 behind a fault
// wrapper with fc.
func benchWiredWith(b *testing.B, fc config.Fault, cdb scsi.CDB) {
	h, err := withFaults(mustKind("vdisk"), nil, fc, config.KernelCmdTimeOut)(target.DeviceConfig{Name: "d0", Subtype: "vdisk", Config: "size=1G;mode=store"}, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	seg := [][]byte{make([]byte, 4096)}
	buf := scsi.NewBuffer(seg...)
	cmd := &scsi.Command{CDB: cdb, Data: buf}
	ctx := context.Background()
	h.HandleCommand(ctx, cmd) // the power-on UNIT ATTENTION
	b.SetBytes(4096)
	b.ReportAllocs()
	for b.Loop() {
		buf.Reset(seg)
		if r := h.HandleCommand(ctx, cmd); r.Status != scsi.StatusGood {
			b.Fatal(r)
		}
	}
}

func BenchmarkWiredRead4K(b *testing.B) {
	benchWired(b, scsi.CDB{0x28, 0, 0, 0, 0x10, 0, 0, 0, 8, 0})
}

func BenchmarkWiredWrite4K(b *testing.B) {
	benchWired(b, scsi.CDB{0x2a, 0, 0, 0, 0x10, 0, 0, 0, 8, 0})
}

// With rules installed that do not match (an LBA range elsewhere), the
// cost of evaluating them.
func BenchmarkWiredRead4KRules(b *testing.B) {
	fc := config.Fault{Rules: []string{"op=read;lba=100000+10;sense=medium_error", "op=write;every=1000000;busy"}}
	benchWiredWith(b, fc, scsi.CDB{0x28, 0, 0, 0, 0x10, 0, 0, 0, 8, 0})
}

// BenchmarkLatency2ms measures what a configured timing of latency=2ms
// does to the duration the transport records, through the fake TCMU ring
// with the device served as vscsid serves it. It reports the mean of the
// transport's duration histogram for READ(10) (what
// vscsi_scsi_command_duration_seconds shows) against the configured 2 ms.
func BenchmarkLatency2ms(b *testing.B) {
	h, err := withFaults(mustKind("vdisk"), nil, config.Fault{Timing: "latency=2ms"}, config.KernelCmdTimeOut)(target.DeviceConfig{Name: "d0", Subtype: "vdisk", Config: "size=1G"}, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	k := targettest.NewKernel(b, targettest.Config{})
	dev := k.ServeLogger(h, zap.NewNop())
	k.Submit([]byte{0, 0, 0, 0, 0, 0}, targettest.Data{}) // power-on UNIT ATTENTION
	cdb := []byte{0x28, 0, 0, 0, 0x10, 0, 0, 0, 8, 0}
	b.ResetTimer()
	if bad, err := k.Pump(cdb, targettest.DataIn(4096), b.N); bad != 0 || err != nil {
		b.Fatalf("%d bad, %v", bad, err)
	}
	b.StopTimer()
	for _, c := range dev.Stats().Commands {
		if c.OpCode == 0x28 && c.Duration.Count > 0 {
			mean := c.Duration.Sum / float64(c.Duration.Count)
			b.ReportMetric(mean*1e3, "ms-recorded/cmd")
			b.ReportMetric((mean/0.002-1)*100, "%-off-2ms")
		}
	}
}

// BenchmarkLatency1msDepth1 and …Depth32: a disk with latency=1ms under a
// queue as deep as the fake ring holds, served one command at a time and
// 32 at once (fault depth: 32). It reports commands per second: at most
// 1,000 one at a time, up to 32 times that with depth 32.
func BenchmarkLatency1msDepth1(b *testing.B)  { benchDepth(b, 1) }
func BenchmarkLatency1msDepth32(b *testing.B) { benchDepth(b, 32) }

func benchDepth(b *testing.B, depth int) {
	h, err := withFaults(mustKind("vdisk"), nil, config.Fault{Timing: "latency=1ms", Depth: depth}, config.KernelCmdTimeOut)(target.DeviceConfig{Name: "d0", Subtype: "vdisk", Config: "size=1G"}, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	k := targettest.NewKernel(b, targettest.Config{})
	k.ServeLogger(h, zap.NewNop())
	k.Submit([]byte{0, 0, 0, 0, 0, 0}, targettest.Data{}) // power-on UNIT ATTENTION
	cdb := []byte{0x28, 0, 0, 0, 0x10, 0, 0, 0, 8, 0}
	b.ResetTimer()
	start := time.Now()
	if bad, err := k.Pump(cdb, targettest.DataIn(4096), b.N); bad != 0 || err != nil {
		b.Fatalf("%d bad, %v", bad, err)
	}
	b.ReportMetric(float64(b.N)/time.Since(start).Seconds(), "cmds/s")
}
