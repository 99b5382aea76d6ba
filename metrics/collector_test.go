package metrics_test

import (
	"bytes"
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

	"github.com/vscsid/vscsid/internal/stat"
	"github.com/vscsid/vscsid/metrics"
)

var update = flag.Bool("update", false, "rewrite testdata/*.prom golden files")

// Bucket layouts as target exports them (target/stats.go).
var (
	durationBounds = pow(13, 1e-6, 4)   // 1µs .. 16.8s
	transferBounds = pow(16, 512, 2)    // 512 B .. 16 MiB
	segmentBounds  = pow(9, 1, 2)       // 1 .. 256
	batchBounds    = pow(11, 1, 2)      // 1 .. 1024
	delayBounds    = pow(14, 1e-6, 4)   // 1µs .. 67s (target/fault.DelayBounds)
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

// fixture is a disk that served 4 KiB reads and 1 MiB writes (tcm_loop
// sends 1 MiB in 256 segments) and a loaded tape drive.
func fixture() []metrics.Device {
	disk := metrics.Device{
		Name: "disk0", Type: metrics.TypeDisk, Subtype: "vdisk", HBA: 1, UIO: "uio0",
		Vendor: "VSCSI", Product: "VDISK", Revision: "0001",
		Exports: []metrics.Export{{Fabric: "iscsi", LUNs: 1}, {Fabric: "loopback", LUNs: 1}},
		Transport: metrics.Transport{
			Commands: []metrics.Command{
				{Name: "test_unit_ready", Count: 3, CheckConditions: 1, Duration: hist(durationBounds, 3e-6, map[int]uint64{1: 3})},
				{Name: "read_10", Count: 100, Duration: hist(durationBounds, 0.0021, map[int]uint64{2: 60, 3: 40})},
				{Name: "write_10", Count: 50, CheckConditions: 1, Duration: hist(durationBounds, 0.2, map[int]uint64{6: 50})},
				// Two opcodes the disk does not know: one "other" series.
				{Name: "", Count: 2, CheckConditions: 2, Duration: hist(durationBounds, 2e-6, map[int]uint64{0: 2})},
				{Name: "", Count: 1, CheckConditions: 1, Duration: hist(durationBounds, 1e-6, map[int]uint64{0: 1})},
			},
			CheckConditions: [16]uint64{5: 3, 6: 1, 3: 1},
			SenseCodes: []metrics.SenseCode{
				{Code: 0x2000, Count: 3},
				{Code: 0x2900, Count: 1},
				{Code: 0x1100, Count: 1},
			},
			UnitAttentions: 1,
			Read:           metrics.Transfer{Commands: 100, Bytes: 100 * 4096, Size: hist(transferBounds, 100*4096, map[int]uint64{3: 100})},
			Write:          metrics.Transfer{Commands: 50, Bytes: 50 << 20, Size: hist(transferBounds, 50<<20, map[int]uint64{11: 50})},
			Segments:       hist(segmentBounds, 100+50*256, map[int]uint64{0: 100, 8: 50}),
			Batch:          hist(batchBounds, 156, map[int]uint64{0: 120, 4: 2}),
			Wakeups:        122,
			Kicks:          122,
			InFlight:       1,
			RingHighWater:  65536,
			RingFull:       ptr(uint64(0)),
			TMRs:           []metrics.TMR{{Type: "abort_task", Count: 2}},
			Aborted:        1, AbortedRunning: 2,
			Pads: 3, ZeroFillWritten: 8192, ZeroFillSkipped: 1 << 20,
		},
		Ring: metrics.Ring{
			CommandRingBytes: 8<<20 - 128, DataAreaBytes: 1 << 30,
			OOOC: true, ReadLen: true, TMR: true,
			BlockSize: 512, CmdTimeOut: ptr(30 * time.Second),
		},
		Disk: &metrics.Disk{
			Mode: "fake_rw", Blocks: 2 << 20, LogicalBlockSize: 512, PhysicalBlockSize: 4096,
			WriteCache: true, MisalignedReads: 7,
		},
		// Three rules installed (the second removed since: IDs stay
		// unique), ten 10 ms delays, one of them clamped.
		Fault: &metrics.Fault{
			Rules: []metrics.FaultRule{
				{ID: 1, Action: "delay", Matched: 10, Injected: 10},
				{ID: 3, Action: "sense", Matched: 4, Injected: 1, Spent: true},
				{ID: 4, Action: "timeout", Matched: 0},
			},
			Delays:  hist(delayBounds, 0.1, map[int]uint64{7: 10}),
			Clamped: 1, Held: 2, Interrupted: 1,
		},
	}
	tape := metrics.Device{
		Name: "tape0", Type: metrics.TypeTape, Subtype: "vtape", HBA: 2, UIO: "uio1",
		Vendor: "IBM", Product: "ULT3580-TD8", Revision: "0001",
		Transport: metrics.Transport{
			Commands: []metrics.Command{
				{Name: "write_6", Count: 10, Duration: hist(durationBounds, 0.01, map[int]uint64{5: 10})},
				{Name: "read_6", Count: 4, CheckConditions: 2, Duration: hist(durationBounds, 0.004, map[int]uint64{4: 4})},
			},
			CheckConditions: [16]uint64{0: 1, 8: 1},
			Read:            metrics.Transfer{Commands: 4, Bytes: 3 * 10240, Size: hist(transferBounds, 3*10240, map[int]uint64{5: 3})},
			Write:           metrics.Transfer{Commands: 10, Bytes: 10 * 10240, Size: hist(transferBounds, 10*10240, map[int]uint64{5: 10})},
			Segments:        hist(segmentBounds, 16, map[int]uint64{2: 4}),
			Batch:           hist(batchBounds, 14, map[int]uint64{0: 14}),
			Wakeups:         14,
			Kicks:           14,
		},
		Ring: metrics.Ring{CommandRingBytes: 8<<20 - 128, DataAreaBytes: 64 << 20, ReadLen: true, Workers: 1},
		Tape: &metrics.Tape{
			Loaded: true, Barcode: "VSC001L8", LoadTime: time.Unix(1767225600, 500e6),
			Object: 12, File: 2, UsedBytes: 1 << 20, CapacityBytes: 12e12,
			FilemarksWritten: 2, Cleanings: 3, CleanNow: true, ILIEvents: 1, FilemarkEvents: 1, EODEvents: 1,
		},
		// Behind the injector with no rule installed: the delay series
		// are there from the start, at zero.
		Fault: &metrics.Fault{Delays: hist(delayBounds, 0, nil)},
	}
	lib := metrics.Device{
		Name: "lib0", Type: metrics.TypeChanger, Subtype: "vlibrary", HBA: 3, UIO: "uio2",
		Vendor: "VSCSI", Product: "VLIBRARY", Revision: "0100",
		Transport: metrics.Transport{
			Commands: []metrics.Command{
				{Name: "move_medium", Count: 3, CheckConditions: 1, Duration: hist(durationBounds, 0.006, map[int]uint64{4: 3})},
			},
			CheckConditions: [16]uint64{5: 1},
		},
		Ring: metrics.Ring{CommandRingBytes: 8<<20 - 128, DataAreaBytes: 64 << 20, Workers: 1},
		Changer: &metrics.Changer{
			Moves: []metrics.ChangerMove{
				{From: "storage", To: "drive", Outcome: "ok", Count: 2, Seconds: 0.004},
				{From: "storage", To: "storage", Outcome: "refused", Count: 1, Seconds: 0.0001},
			},
			Elements: []metrics.ChangerElements{
				{Type: "transport", Count: 1}, {Type: "storage", Count: 20, Full: 18},
				{Type: "mail", Count: 4, Full: 1}, {Type: "drive", Count: 2, Full: 2},
			},
			Imports: 1, Exports: 2,
		},
	}
	return []metrics.Device{disk, tape, lib}
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
	golden(t, "collector.prom", metrics.NewCollector(metrics.SourceFunc(func() []metrics.Device { return src })))
}

// An unloaded drive reports medium_loaded 0 and nothing about a medium:
// no barcode, position or fill.
func TestCollectUnloadedTape(t *testing.T) {
	src := []metrics.Device{{Name: "tape1", Type: metrics.TypeTape, Subtype: "vtape", Tape: &metrics.Tape{FilemarksWritten: 5}}}
	golden(t, "unloaded_tape.prom", metrics.NewCollector(metrics.SourceFunc(func() []metrics.Device { return src })))
}

// No devices: vscsi_devices is still there, at 0 for both types.
func TestCollectNoDevices(t *testing.T) {
	c := metrics.NewCollector(metrics.SourceFunc(func() []metrics.Device { return nil }))
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
	c := metrics.NewCollector(metrics.SourceFunc(func() []metrics.Device { return src }))
	problems, err := testutil.CollectAndLint(c)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Errorf("lint: %s: %s", p.Metric, p.Text)
	}
}

// Fault rules and sense codes as the daemon's adapter produces them for a
// disk with a config rule and a tape drive with a runtime rule (its test,
// in cmd/vscsid, checks that it produces these values): the rule IDs are
// per device, the sense codes are named.
func TestCollectAdaptedFaults(t *testing.T) {
	d0 := metrics.Device{Name: "d0", Type: metrics.TypeDisk, Subtype: "vdisk", HBA: 1, UIO: "uio0",
		Disk:  &metrics.Disk{Blocks: 2048, LogicalBlockSize: 512, PhysicalBlockSize: 512},
		Fault: &metrics.Fault{Rules: []metrics.FaultRule{{ID: 1, Action: "sense", Matched: 1, Injected: 1}}, Delays: hist(delayBounds, 0, nil)},
	}
	d0.Transport.CheckConditions[3] = 1
	d0.Transport.SenseCodes = []metrics.SenseCode{{Code: 0x1100, Count: 1}, {Code: 0x2900, Count: 1}}
	t0 := metrics.Device{Name: "t0", Type: metrics.TypeTape, Subtype: "vtape", HBA: 2, UIO: "uio1",
		Tape:  &metrics.Tape{Loaded: true, Barcode: "VSC001"},
		Fault: &metrics.Fault{Rules: []metrics.FaultRule{{ID: 1, Action: "busy", Matched: 1, Injected: 1}}, Delays: hist(delayBounds, 0, nil)},
	}
	c := metrics.NewCollector(metrics.SourceFunc(func() []metrics.Device { return []metrics.Device{d0, t0} }))
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
	reg.MustRegister(metrics.NewCollector(metrics.SourceFunc(func() []metrics.Device { return src })))
	if _, err := reg.Gather(); err != nil {
		t.Fatal(err)
	}
}

// Bad input from the Source is a gathering error for the affected series,
// never a panic, and the rest is still gathered.
func TestCollectBadInput(t *testing.T) {
	good := fixture()[0]
	dup := good
	badHist := metrics.Device{Name: "disk9", Type: metrics.TypeDisk}
	badHist.Transport.Segments = stat.Histogram{Bounds: segmentBounds, Counts: []uint64{1}}
	mixed := metrics.Device{Name: "disk8", Type: metrics.TypeDisk}
	mixed.Transport.Commands = []metrics.Command{
		{Name: "", Count: 1, Duration: hist(durationBounds, 1, map[int]uint64{0: 1})},
		{Name: "", Count: 1, Duration: hist(shortBounds, 1, map[int]uint64{0: 1})},
	}
	badLabel := metrics.Device{Name: "disk7\xff", Type: metrics.TypeDisk}
	empty := metrics.Device{Type: metrics.TypeDisk}
	dupRule := metrics.Device{Name: "disk6", Type: metrics.TypeDisk, Fault: &metrics.Fault{
		Rules: []metrics.FaultRule{{ID: 2, Action: "busy"}, {ID: 2, Action: "delay"}},
	}}
	for _, tc := range []struct {
		name string
		devs []metrics.Device
		want string
	}{
		{"duplicate name", []metrics.Device{good, dup}, `duplicate device name "disk0"`},
		{"histogram shape", []metrics.Device{good, badHist}, "1 counts for 9 bounds"},
		{"merge with other bounds", []metrics.Device{good, mixed}, "0 counts for 13 bounds"},
		{"label not utf-8", []metrics.Device{good, badLabel}, "is not valid UTF-8: device dropped"},
		{"empty name", []metrics.Device{good, empty}, "empty name"},
		{"duplicate fault rule", []metrics.Device{good, dupRule}, `device "disk6": duplicate fault rule 2`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			reg := prometheus.NewPedanticRegistry()
			reg.MustRegister(metrics.NewCollector(metrics.SourceFunc(func() []metrics.Device { return tc.devs })))
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
	reg, err := metrics.NewRegistry(metrics.NewCollector(metrics.SourceFunc(func() []metrics.Device { return src })))
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
	devs := make([]metrics.Device, 8)
	for i := range devs {
		devs[i] = base[i%2]
		devs[i].Name = base[i%2].Name[:4] + string(rune('0'+i))
	}
	// A disk serves ~28 opcodes; give every device a full table.
	for i := range devs {
		cmds := make([]metrics.Command, 28)
		for j := range cmds {
			cmds[j] = metrics.Command{Name: "cmd_" + string(rune('a'+j)), Count: 1, Duration: hist(durationBounds, 1e-6, map[int]uint64{0: 1})}
		}
		devs[i].Transport.Commands = cmds
	}
	c := metrics.NewCollector(metrics.SourceFunc(func() []metrics.Device { return devs }))
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
	devs := make([]metrics.Device, 8)
	for i := range devs {
		devs[i] = base[i%2]
		devs[i].Name = base[i%2].Name[:4] + string(rune('0'+i))
	}
	reg, err := metrics.NewRegistry(metrics.NewCollector(metrics.SourceFunc(func() []metrics.Device { return devs })))
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
