package metrics_test

import (
	"bytes"
	"context"
	"errors"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"github.com/prometheus/common/expfmt"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/internal/stat"
	"github.com/vscsid/vscsid/metrics"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/changer"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/tcmu"
)

var update = flag.Bool("update", false, "rewrite testdata/*.prom golden files")

// Bucket layouts as target exports them (target/stats.go).
var (
	durationBounds = pow(13, 1e-6, 4)   // 1µs .. 16.8s
	transferBounds = pow(16, 512, 2)    // 512 B .. 16 MiB
	segmentBounds  = pow(9, 1, 2)       // 1 .. 256
	batchBounds    = pow(11, 1, 2)      // 1 .. 1024
	delayBounds    = pow(14, 1e-6, 4)   // 1µs .. 67s (fault.DelayBounds)
	shortBounds    = []float64{1, 2, 4} // for the merge tests
)

func pow(n int, first, factor float64) []float64 {
	b := make([]float64, n)
	v := first
	for i := range b {
		b[i] = v
		v *= factor
	}
	return b
}

// hist builds a Histogram over bounds with the given non-cumulative
// counts at bucket indexes (idx → count), and a sum.
func hist(bounds []float64, sum float64, at map[int]uint64) stat.Histogram {
	h := stat.Histogram{Bounds: bounds, Counts: make([]uint64, len(bounds)+1), Sum: sum}
	for i, n := range at {
		h.Counts[i] = n
		h.Count += n
	}
	return h
}

func ptr[T any](v T) *T { return &v }

// Fakes of what the collector reads behind a device's handler: each
// emulation's identity and Stats, and a fault injector wrapping it.
type (
	fakeUnit struct{ id scsi.Identity }
	fakeDisk struct {
		fakeUnit
		st disk.Stats
	}
	fakeTape struct {
		fakeUnit
		st tape.Stats
	}
	fakeChanger struct {
		fakeUnit
		st changer.Stats
	}
	fakeFault struct {
		h     scsi.Handler
		st    fault.Stats
		rules []fault.RuleStats
	}
)

func (fakeUnit) HandleCommand(context.Context, *scsi.Command) scsi.Response { return scsi.Good }
func (u fakeUnit) UnitIdentity() scsi.Identity                              { return u.id }
func (d fakeDisk) Stats() disk.Stats                                        { return d.st }
func (t fakeTape) Stats() tape.Stats                                        { return t.st }
func (c fakeChanger) Stats() changer.Stats                                  { return c.st }
func (f fakeFault) HandleCommand(ctx context.Context, c *scsi.Command) scsi.Response {
	return f.h.HandleCommand(ctx, c)
}
func (f fakeFault) Unwrap() scsi.Handler        { return f.h }
func (f fakeFault) Stats() fault.Stats          { return f.st }
func (f fakeFault) Injected() []fault.RuleStats { return f.rules }

func id(vendor, product, rev string) fakeUnit {
	return fakeUnit{scsi.Identity{Vendor: vendor, Product: product, Revision: rev}}
}

// status is a device as the Target reports it.
func status(name, subtype string, hba int, uio string, h scsi.Handler) target.DeviceStatus {
	return target.DeviceStatus{Handler: h, Info: target.DeviceInfo{
		DeviceConfig: target.DeviceConfig{Name: name, Subtype: subtype, HBA: hba, UIO: uio},
	}}
}

func transfers(read, write tcmu.TransferStats) (t [3]tcmu.TransferStats) {
	t[tcmu.DirRead], t[tcmu.DirWrite] = read, write
	return t
}

// cmdTimeOut is the daemon's cmd_time_out the fixture's collectors export.
var fixtureOptions = metrics.Options{CmdTimeOut: ptr(30 * time.Second)}

func collector(devs ...target.DeviceStatus) *metrics.Collector {
	return metrics.NewCollector(metrics.SourceFunc(func() []target.DeviceStatus { return devs }), fixtureOptions)
}

// fixture is a disk that served 4 KiB reads and 1 MiB writes (tcm_loop
// sends 1 MiB in 256 segments) and a loaded tape drive, both behind a
// fault injector, and a library.
func fixture() []target.DeviceStatus {
	dk := status("disk0", "vdisk", 1, "uio0", fakeFault{
		h: fakeDisk{id("VSCSI", "VDISK", "0001"), disk.Stats{
			Mode: disk.ModeFakeRW, Blocks: 2 << 20, LogicalBlockSize: 512, PhysicalBlockSize: 4096,
			WriteCache: true, MisalignedReads: 7,
		}},
		// Three rules installed (the second removed since: IDs stay
		// unique), ten 10 ms delays, one of them clamped.
		rules: []fault.RuleStats{
			{ID: 1, Action: "delay", Matched: 10, Injected: 10},
			{ID: 3, Action: "sense", Matched: 4, Injected: 1, Spent: true},
			{ID: 4, Action: "timeout", Matched: 0},
		},
		st: fault.Stats{Delays: hist(delayBounds, 0.1, map[int]uint64{7: 10}), Clamped: 1, Held: 2, Interrupted: 1},
	})
	dk.Exports = []target.FabricLUNs{{Fabric: "iscsi", LUNs: 1}, {Fabric: "loopback", LUNs: 1}}
	dk.Info.BlockSize = 512
	dk.Info.Ring = tcmu.RingInfo{CmdrSize: 8<<20 - 128, DataSize: 1 << 30, Flags: tcmu.FlagOOOC | tcmu.FlagReadLen | tcmu.FlagTMR}
	dk.Stats = tcmu.DeviceStats{
		Commands: []tcmu.CommandStats{
			{Name: "test_unit_ready", Count: 3, CheckConditions: 1, Duration: hist(durationBounds, 3e-6, map[int]uint64{1: 3})},
			{Name: "read_10", Count: 100, Duration: hist(durationBounds, 0.0021, map[int]uint64{2: 60, 3: 40})},
			{Name: "write_10", Count: 50, CheckConditions: 1, Duration: hist(durationBounds, 0.2, map[int]uint64{6: 50})},
			// Two opcodes the disk does not know: one "other" series.
			{Name: "", Count: 2, CheckConditions: 2, Duration: hist(durationBounds, 2e-6, map[int]uint64{0: 2})},
			{Name: "", Count: 1, CheckConditions: 1, Duration: hist(durationBounds, 1e-6, map[int]uint64{0: 1})},
		},
		CheckConditions: [16]uint64{5: 3, 6: 1, 3: 1},
		SenseCodes:      []tcmu.SenseCode{{ASC: 0x2000, Count: 3}, {ASC: 0x2900, Count: 1}, {ASC: 0x1100, Count: 1}},
		UnitAttentions:  1,
		Transfers: transfers(
			tcmu.TransferStats{Commands: 100, Bytes: 100 * 4096, Size: hist(transferBounds, 100*4096, map[int]uint64{3: 100})},
			tcmu.TransferStats{Commands: 50, Bytes: 50 << 20, Size: hist(transferBounds, 50<<20, map[int]uint64{11: 50})}),
		Segments:  hist(segmentBounds, 100+50*256, map[int]uint64{0: 100, 8: 50}),
		Batch:     hist(batchBounds, 156, map[int]uint64{0: 120, 4: 2}),
		Wakeups:   122,
		PollFound: 40, PollExpired: 3, PollTime: 1500 * time.Microsecond,
		Kicks:         122,
		InFlight:      1,
		RingHighWater: 65536,
		TMRs:          []tcmu.TMRCount{{Type: tcmu.TMRAbortTask, Count: 2}},
		Aborted:       1, AbortedRunning: 2,
		Pads: 3, ZeroFillWrittenBytes: 8192, ZeroFillSkippedBytes: 1 << 20,
	}

	// Behind the injector with no rule installed: the delay series are
	// there from the start, at zero.
	tp := status("tape0", "vtape", 2, "uio1", fakeFault{
		h: fakeTape{id("IBM", "ULT3580-TD8", "0001"), tape.Stats{
			Loaded: true, Barcode: "VSC001L8", LoadTime: time.Unix(1767225600, 500e6),
			Object: 12, File: 2, UsedBytes: 1 << 20, CapacityBytes: 12e12,
			FilemarksWritten: 2, Cleanings: 3, CleanNow: true, ILIEvents: 1, FilemarkEvents: 1, EODEvents: 1,
			ReadBytes: 3 << 20, WrittenBytes: 4 << 20, MediumReadBytes: 1 << 20, MediumWrittenBytes: 2 << 20,
			DecryptedBytes: 1 << 20, EncryptedBytes: 2 << 20,
		}},
		st: fault.Stats{Delays: hist(delayBounds, 0, nil)},
	})
	tp.Info.Ring = tcmu.RingInfo{CmdrSize: 8<<20 - 128, DataSize: 64 << 20, Flags: tcmu.FlagReadLen, Workers: 1}
	tp.Stats = tcmu.DeviceStats{
		Commands: []tcmu.CommandStats{
			{Name: "write_6", Count: 10, Duration: hist(durationBounds, 0.01, map[int]uint64{5: 10})},
			{Name: "read_6", Count: 4, CheckConditions: 2, Duration: hist(durationBounds, 0.004, map[int]uint64{4: 4})},
		},
		CheckConditions: [16]uint64{0: 1, 8: 1},
		Transfers: transfers(
			tcmu.TransferStats{Commands: 4, Bytes: 3 * 10240, Size: hist(transferBounds, 3*10240, map[int]uint64{5: 3})},
			tcmu.TransferStats{Commands: 10, Bytes: 10 * 10240, Size: hist(transferBounds, 10*10240, map[int]uint64{5: 10})}),
		Segments: hist(segmentBounds, 16, map[int]uint64{2: 4}),
		Batch:    hist(batchBounds, 14, map[int]uint64{0: 14}),
		Wakeups:  14,
		Kicks:    14,
	}

	var cs changer.Stats
	cs.Moves = []changer.MoveCount{
		{From: changer.Storage, To: changer.DataTransfer, Outcome: "ok", Count: 2, Seconds: 0.004},
		{From: changer.Storage, To: changer.Storage, Outcome: "refused", Count: 1, Seconds: 0.0001},
	}
	cs.Elements[changer.Transport], cs.Elements[changer.Storage], cs.Elements[changer.ImportExport], cs.Elements[changer.DataTransfer] = 1, 20, 4, 2
	cs.Full[changer.Storage], cs.Full[changer.ImportExport], cs.Full[changer.DataTransfer] = 18, 1, 2
	cs.Imports, cs.Exports = 1, 2
	lib := status("lib0", "vlibrary", 3, "uio2", fakeChanger{id("VSCSI", "VLIBRARY", "0100"), cs})
	lib.Info.Ring = tcmu.RingInfo{CmdrSize: 8<<20 - 128, DataSize: 64 << 20, Workers: 1}
	lib.Stats = tcmu.DeviceStats{
		Commands: []tcmu.CommandStats{
			{Name: "move_medium", Count: 3, CheckConditions: 1, Duration: hist(durationBounds, 0.006, map[int]uint64{4: 3})},
		},
		CheckConditions: [16]uint64{5: 1},
	}
	return []target.DeviceStatus{dk, tp, lib}
}

func golden(t *testing.T, name string, c prometheus.Collector) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		reg := prometheus.NewPedanticRegistry()
		reg.MustRegister(c)
		mfs, err := reg.Gather()
		if err != nil {
			t.Fatal(err)
		}
		var buf bytes.Buffer
		enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				t.Fatal(err)
			}
		}
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	if err := testutil.CollectAndCompare(c, f); err != nil {
		t.Fatal(err)
	}
}

func TestCollectGolden(t *testing.T) {
	src := fixture()
	golden(t, "collector.prom", collector(src...))
}

// An unloaded drive reports medium_loaded 0 and nothing about a medium:
// no barcode, position or fill.
func TestCollectUnloadedTape(t *testing.T) {
	golden(t, "unloaded_tape.prom", collector(status("tape1", "vtape", 0, "", fakeTape{st: tape.Stats{FilemarksWritten: 5}})))
}

// No devices: vscsi_devices is still there, at 0 for both types.
func TestCollectNoDevices(t *testing.T) {
	c := collector()
	want := `# HELP vscsi_devices Number of devices served, by SCSI peripheral type.
# TYPE vscsi_devices gauge
vscsi_devices{type="changer"} 0
vscsi_devices{type="disk"} 0
vscsi_devices{type="tape"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want)); err != nil {
		t.Fatal(err)
	}
}

func TestCollectAndLint(t *testing.T) {
	src := fixture()
	c := collector(src...)
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// Fault rules and sense codes of a disk with a config rule and a tape
// drive with a runtime rule (cmd/vscsid's TestMetricsOfRealDevices builds
// them with the real factories): the rule IDs are per device, the sense
// codes are named.
func TestCollectFaults(t *testing.T) {
	d0 := status("d0", "vdisk", 1, "uio0", fakeFault{
		h:     fakeDisk{st: disk.Stats{Blocks: 2048, LogicalBlockSize: 512, PhysicalBlockSize: 512}},
		rules: []fault.RuleStats{{ID: 1, Action: "sense", Matched: 1, Injected: 1}}, st: fault.Stats{Delays: hist(delayBounds, 0, nil)},
	})
	d0.Stats.CheckConditions[3] = 1
	d0.Stats.SenseCodes = []tcmu.SenseCode{{ASC: 0x1100, Count: 1}, {ASC: 0x2900, Count: 1}}
	t0 := status("t0", "vtape", 2, "uio1", fakeFault{
		h:     fakeTape{st: tape.Stats{Loaded: true, Barcode: "VSC001"}},
		rules: []fault.RuleStats{{ID: 1, Action: "busy", Matched: 1, Injected: 1}}, st: fault.Stats{Delays: hist(delayBounds, 0, nil)},
	})
	c := collector(d0, t0)
	want := `# HELP vscsi_fault_injected_total Times an installed fault rule applied its action, by rule ID and action.
# TYPE vscsi_fault_injected_total counter
vscsi_fault_injected_total{action="busy",device="t0",rule="1"} 1
vscsi_fault_injected_total{action="sense",device="d0",rule="1"} 1
# HELP vscsi_scsi_sense_codes_total Commands completed with CHECK CONDITION, by additional sense code (a fixed set of names; others are "other").
# TYPE vscsi_scsi_sense_codes_total counter
vscsi_scsi_sense_codes_total{asc="power_on_reset_or_bus_device_reset",device="d0"} 1
vscsi_scsi_sense_codes_total{asc="unrecovered_read_error",device="d0"} 1
# HELP vscsi_fault_held_total Commands a timeout rule held without completing them (the kernel times them out).
# TYPE vscsi_fault_held_total counter
vscsi_fault_held_total{device="d0"} 0
vscsi_fault_held_total{device="t0"} 0
`
	if err := testutil.CollectAndCompare(c, strings.NewReader(want),
		"vscsi_fault_injected_total", "vscsi_scsi_sense_codes_total", "vscsi_fault_held_total"); err != nil {
		t.Error(err)
	}
	if probs, err := testutil.CollectAndLint(c); err != nil || len(probs) > 0 {
		t.Errorf("lint: %v %+v", err, probs)
	}
}

// Describe and Collect agree: a pedantic registry checks that every
// collected metric matches a described Desc, and the registry's own
// consistency checks (one help and type per name, unique label sets).
func TestPedantic(t *testing.T) {
	src := fixture()
	reg := prometheus.NewPedanticRegistry()
	reg.MustRegister(collector(src...))
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

// Bad input from the Source is a gathering error for the affected series,
// never a panic, and the rest is still gathered.
func TestCollectBadInput(t *testing.T) {
	good := fixture()[0]
	dup := good
	badHist := status("disk9", "vdisk", 0, "", fakeDisk{})
	badHist.Stats.Segments = stat.Histogram{Bounds: segmentBounds, Counts: []uint64{1}}
	mixed := status("disk8", "vdisk", 0, "", fakeDisk{})
	mixed.Stats.Commands = []tcmu.CommandStats{
		{Name: "", Count: 1, Duration: hist(durationBounds, 1, map[int]uint64{0: 1})},
		{Name: "", Count: 1, Duration: hist(shortBounds, 1, map[int]uint64{0: 1})},
	}
	badLabel := status("disk7\xff", "vdisk", 0, "", fakeDisk{})
	empty := status("", "vdisk", 0, "", fakeDisk{})
	dupRule := status("disk6", "vdisk", 0, "", fakeFault{h: fakeDisk{},
		rules: []fault.RuleStats{{ID: 2, Action: "busy"}, {ID: 2, Action: "delay"}},
	})
	for _, tc := range []struct {
		name string
		devs []target.DeviceStatus
		want string
	}{
		{"duplicate name", []target.DeviceStatus{good, dup}, `duplicate device name "disk0"`},
		{"histogram shape", []target.DeviceStatus{good, badHist}, "1 counts for 9 bounds"},
		{"merge with other bounds", []target.DeviceStatus{good, mixed}, "0 counts for 13 bounds"},
		{"label not utf-8", []target.DeviceStatus{good, badLabel}, "is not valid UTF-8: device dropped"},
		{"empty name", []target.DeviceStatus{good, empty}, "empty name"},
		{"duplicate fault rule", []target.DeviceStatus{good, dupRule}, `device "disk6": duplicate fault rule 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(collector(tc.devs...))
			mfs, err := reg.Gather()
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("Gather error = %v, want one containing %q", err, tc.want)
			}
			// disk0's series survive.
			found := false
			for _, mf := range mfs {
				if mf.GetName() == "vscsi_disk_capacity_bytes" {
					for _, m := range mf.GetMetric() {
						if m.GetLabel()[0].GetValue() == "disk0" && m.GetGauge().GetValue() == 1<<30 {
							found = true
						}
					}
				}
			}
			if !found {
				t.Errorf("disk0's capacity is missing from the gathered metrics")
			}
		})
	}
}

// The exposition of a full registry (Go, process, build info and vscsi
// metrics) passes `promtool check metrics`, as node_exporter's
// checkmetrics.sh requires. In CI (CI=true) a missing promtool fails the
// test: the Debian package "prometheus" provides it.
func TestPromtoolCheckMetrics(t *testing.T) {
	promtool, err := exec.LookPath("promtool")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatal("promtool not found; CI must install it (apt-get install -y prometheus)")
		}
		t.Skip("skipping, promtool not found (try: 'apt-get install -y prometheus')")
	}
	src := fixture()
	reg, err := metrics.NewRegistry(collector(src...))
	if err != nil {
		t.Fatal(err)
	}
	mfs, err := reg.Gather()
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
	for _, mf := range mfs {
		if err := enc.Encode(mf); err != nil {
			t.Fatal(err)
		}
	}
	if !strings.Contains(buf.String(), "vscsi_build_info{") || !strings.Contains(buf.String(), "process_cpu_seconds_total") ||
		!strings.Contains(buf.String(), "go_goroutines") {
		t.Errorf("registry lacks the build info, process or Go collector:\n%s", buf.String())
	}
	cmd := exec.Command(promtool, "check", "metrics")
	cmd.Stdin = &buf
	out, err := cmd.CombinedOutput()
	var exit *exec.ExitError
	if errors.As(err, &exit) || len(bytes.TrimSpace(out)) > 0 {
		t.Fatalf("promtool check metrics: %v\n%s", err, out)
	}
	if err != nil {
		t.Fatal(err)
	}
}

func BenchmarkCollect8Devices(b *testing.B) {
	base := fixture()
	devs := make([]target.DeviceStatus, 8)
	for i := range devs {
		devs[i] = base[i%2]
		devs[i].Info.Name = base[i%2].Info.Name[:4] + string(rune('0'+i))
	}
	// A disk serves ~28 opcodes; give every device a full table.
	for i := range devs {
		cmds := make([]tcmu.CommandStats, 28)
		for j := range cmds {
			cmds[j] = tcmu.CommandStats{Name: "cmd_" + string(rune('a'+j)), Count: 1, Duration: hist(durationBounds, 1e-6, map[int]uint64{0: 1})}
		}
		devs[i].Stats.Commands = cmds
	}
	c := collector(devs...)
	ch := make(chan prometheus.Metric, 4096)
	b.ReportAllocs()
	n := 0
	for b.Loop() {
		c.Collect(ch)
		n = len(ch)
		for len(ch) > 0 {
			<-ch
		}
	}
	b.ReportMetric(float64(n), "metrics/op")
}

// BenchmarkScrape8Devices is what one scrape of /metrics costs beyond
// Collect: the registry's gathering (sorting, consistency checks) and the
// text encoding.
func BenchmarkScrape8Devices(b *testing.B) {
	base := fixture()
	devs := make([]target.DeviceStatus, 8)
	for i := range devs {
		devs[i] = base[i%2]
		devs[i].Info.Name = base[i%2].Info.Name[:4] + string(rune('0'+i))
	}
	reg, err := metrics.NewRegistry(collector(devs...))
	if err != nil {
		b.Fatal(err)
	}
	b.ReportAllocs()
	var size int
	for b.Loop() {
		mfs, err := reg.Gather()
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		enc := expfmt.NewEncoder(&buf, expfmt.NewFormat(expfmt.TypeTextPlain))
		for _, mf := range mfs {
			if err := enc.Encode(mf); err != nil {
				b.Fatal(err)
			}
		}
		size = buf.Len()
	}
	b.ReportMetric(float64(size), "bytes/scrape")
}
