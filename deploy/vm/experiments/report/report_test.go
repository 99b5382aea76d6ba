package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/deploy/vm/internal/prom"
)

const before = `# HELP vscsi_scsi_transfer_bytes x
# TYPE vscsi_scsi_transfer_bytes histogram
vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="512"} 10
vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="4096"} 10
vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="+Inf"} 10
vscsi_scsi_transfer_bytes_count{device="d0",direction="read"} 10
vscsi_scsi_transfer_bytes_bucket{device="d1",direction="read",le="512"} 99
vscsi_scsi_commands_total{device="d0",command="read_10"} 10
vscsi_scsi_read_bytes_total{device="d0"} 5120
vscsi_scsi_command_duration_seconds_sum{device="d0",command="read_10"} 0.001
vscsi_scsi_command_duration_seconds_count{device="d0",command="read_10"} 10
vscsi_device_info{device="d0",product="A \"q\" b"} 1
`

const after = `vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="512"} 14
vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="4096"} 20
vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="+Inf"} 21
vscsi_scsi_transfer_bytes_count{device="d0",direction="read"} 21
vscsi_scsi_transfer_bytes_bucket{device="d1",direction="read",le="512"} 1000
vscsi_scsi_commands_total{device="d0",command="read_10"} 21
vscsi_scsi_commands_total{device="d0",command="test_unit_ready"} 2
vscsi_scsi_read_bytes_total{device="d0"} 1.048576e+06
vscsi_scsi_command_duration_seconds_sum{device="d0",command="read_10"} 0.0032
vscsi_scsi_command_duration_seconds_count{device="d0",command="read_10"} 21
vscsi_device_info{device="d0",product="A \"q\" b"} 1
`

func parse(t *testing.T, s string) prom.Scrape {
	t.Helper()
	sc, err := prom.Parse(strings.NewReader(s))
	if err != nil {
		t.Fatal(err)
	}
	return sc
}

func TestHistDelta(t *testing.T) {
	b, a := parse(t, before), parse(t, after)
	got := HistDelta(b, a, "vscsi_scsi_transfer_bytes", map[string]string{"device": "d0", "direction": "read"})
	want := []float64{4, 6, 1} // ≤512, (512,4096], (4096,+Inf)
	if len(got) != len(want) {
		t.Fatalf("got %v", got)
	}
	for i := range want {
		if got[i].Count != want[i] {
			t.Errorf("bin %d (le %v): %v, want %v", i, got[i].Le, got[i].Count, want[i])
		}
	}
	if v := a.Sum("vscsi_device_info", map[string]string{"product": `A "q" b`}); v != 1 {
		t.Errorf("escaped label: sum %v", v)
	}
}

func TestReportEndToEnd(t *testing.T) {
	in := filepath.Join(t.TempDir(), "exp-merging")
	out := t.TempDir()
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	files := map[string]string{
		"results.txt": "info kernel=6.1.0-57-amd64 experiment=merging\n" +
			"run r1 device=d0 rc=0 t0=10.00 t1=12.00 cpu0=100,0,100,800,0,0,0,0,0,0 cpu1=110,0,150,940,0,0,0,0,0,0 target=p1\n",
		"r1.before.prom": before,
		"r1.after.prom":  after,
		"r1.out":         "1048576 bytes (1.0 MB, 1.0 MiB) copied, 2 s, 0.5 MB/s\n",
		"vscsid.yaml":    "devices: []\n",
	}
	for n, c := range files {
		if err := os.WriteFile(filepath.Join(in, n), []byte(c), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	if err := run(in, out, ""); err != nil {
		t.Fatal(err)
	}
	md, err := os.ReadFile(filepath.Join(out, "report.md"))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"**6.1.0-57-amd64**",
		// 1048576-5120 bytes in 2 s = 0.5 MB/s; 11 data commands; vscsid 2.2 ms / 11 commands = 200 us; sys 50/200 = 25 %, busy 60/200 = 30 %.
		"| r1 | d0 | p1 | 0 | 2.00 | 1.0 | 0.0 | 0.5 | 11 | 92.6 | 0 | 200 | 25 | 30 |",
		"| run | read_10 | test_unit_ready |",
		"| r1 | 11 | 2 |",
		"| d0: target=p1 | 1 | 11 | 4 | 6 | 1 |",
		"| configuration | n | commands | ≤ 512 B | ≤ 4 KiB | ≤ +Inf |",
	} {
		if !strings.Contains(string(md), want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	if _, err := os.Stat(filepath.Join(out, "transfer-read.svg")); err != nil {
		t.Error(err)
	}
}

func TestKeyLine(t *testing.T) {
	sgdd := "reading (SG_IO) on sg device, error: Invalid argument\nsg_read failed, at or after lba=0 [0x0]\n0+0 records out\n"
	if got := keyLine(sgdd, true); got != "reading (SG_IO) on sg device, error: Invalid argument" {
		t.Errorf("failed run: %q", got)
	}
	ok := "time to transfer data: 1.2 secs at 213.24 MB/sec\n524288+0 records in\n524288+0 records out\n"
	if got := keyLine(ok, false); got != "time to transfer data: 1.2 secs at 213.24 MB/sec" {
		t.Errorf("good run: %q", got)
	}
	if got := keyLine("a\nlast\n\n", false); got != "last" {
		t.Errorf("fallback: %q", got)
	}
}

func TestPivotRatio(t *testing.T) {
	mk := func(name, dio, rc string, bytes float64) *Run {
		after := prom.Scrape{{Name: "vscsi_scsi_read_bytes_total", Labels: map[string]string{"device": "t"}, Value: bytes}}
		return &Run{Name: name, KV: map[string]string{"device": "t", "rc": rc, "t0": "0", "t1": "2",
			"blocks": "fixed-1k", "op": "read", "try_direct_io": dio}, After: after}
	}
	rep := &Report{Res: &Results{Runs: []*Run{mk("a", "1", "0", 2e6), mk("b", "0", "0", 8e6), mk("c", "0", "1", 0)}}}
	rep.Res.Runs[2].KV["blocks"] = "var-32k"
	var b strings.Builder
	pivots["test"] = []Pivot{{Title: "T", Filter: map[string]string{"op": "read"}, Rows: []string{"blocks"}, Col: "try_direct_io", Value: mbs, Ratio: "1/0"}}
	defer delete(pivots, "test")
	rep.pivotTables(&b, "test")
	for _, want := range []string{
		"| blocks | try_direct_io=1 | try_direct_io=0 | ratio |",
		"| fixed-1k | 1.00 | 4.00 | 0.25 |", // 2e6 B / 2 s vs 8e6 B / 2 s
		"| var-32k | – | failed | – |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
}

func TestPivotMedian(t *testing.T) {
	mk := func(bytes float64, rc string) *Run {
		return &Run{KV: map[string]string{"device": "d", "rc": rc, "t0": "0", "t1": "1"},
			After: prom.Scrape{{Name: "vscsi_scsi_read_bytes_total", Labels: map[string]string{"device": "d"}, Value: bytes}}}
	}
	p := Pivot{Value: mbs, Num: mbsNum}
	if got := p.cellValue([]*Run{mk(3e6, "0"), mk(1e6, "0"), mk(2e6, "0")}); got != "2.00 (1.00–3.00, n=3)" {
		t.Errorf("median of three: %q", got)
	}
	if got := p.cellValue([]*Run{mk(4e6, "0"), mk(2e6, "0"), mk(0, "1")}); got != "3.00 (2.00–4.00, n=2), 1 failed" {
		t.Errorf("with a failure: %q", got)
	}
	if got := p.cellValue([]*Run{mk(0, "1")}); got != "failed" {
		t.Errorf("single failure: %q", got)
	}
}

// The repetitions of a configuration are one row and one bar, labelled in
// words; the bins run over every bucket between the smallest and the
// largest used.
func TestHistogramOneRowPerConfiguration(t *testing.T) {
	hist := func(n512, n4k, n128k float64) prom.Scrape {
		var sc prom.Scrape
		cum := 0.0
		for _, b := range []struct {
			le string
			n  float64
		}{{"512", n512}, {"1024", 0}, {"2048", 0}, {"4096", n4k}, {"65536", 0}, {"131072", n128k}, {"+Inf", 0}} {
			cum += b.n
			sc = append(sc, prom.Sample{Name: "vscsi_scsi_transfer_bytes_bucket", Labels: map[string]string{"device": "e512m8", "direction": "read", "le": b.le}, Value: cum})
		}
		return sc
	}
	run := func(name, target, rep string, after prom.Scrape) *Run {
		return &Run{Name: name, KV: map[string]string{"device": "e512m8", "target": target, "rep": rep, "rc": "0"}, Extra: []string{"target", "rep"}, After: after}
	}
	out := t.TempDir()
	rep := &Report{Out: out, Res: &Results{Info: map[string]string{"experiment": "merging"}, Runs: []*Run{
		run("e512m8-whole-r1", "whole", "1", hist(0, 0, 131)),
		run("e512m8-p1-setbsz4096-r1", "p1+setbsz", "1", hist(16000, 440, 0)),
		run("e512m8-whole-r2", "whole", "2", hist(0, 0, 129)),
		run("e512m8-p1-setbsz4096-r2", "p1+setbsz", "2", hist(16100, 400, 0)),
		run("e512m8-p1-setbsz4096-r3", "p1+setbsz", "3", hist(15900, 420, 0)),
	}}}
	var b strings.Builder
	if err := rep.histTable(&b, "Read transfer size", "vscsi_scsi_transfer_bytes", "read", "bytes", "t.svg"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"| configuration | n | commands | ≤ 512 B | ≤ 1 KiB | ≤ 2 KiB | ≤ 4 KiB | ≤ 64 KiB | ≤ 128 KiB |",
		"| whole disk (512e disk, max_blks=8) | 2 | 130 (129–131) | 0 | 0 | 0 | 0 | 0 | 130 |",
		"| partition 1, after setbsz 4096 (512e disk, max_blks=8) | 3 | 16.4k (16.3k–16.5k) | 16k | 0 | 0 | 420 | 0 | 0 |",
	} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("lacks %q:\n%s", want, b.String())
		}
	}
	svg, err := os.ReadFile(filepath.Join(out, "t.svg"))
	if err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(string(svg), "(512e disk, max_blks=8)<"); n != 2 {
		t.Errorf("%d labelled rows in the chart, want 2 (one per configuration):\n%s", n, svg)
	}
	if strings.Contains(string(svg), "-r1") {
		t.Errorf("the chart names a repetition:\n%s", svg)
	}

	// With no 512-byte command at all, the small bins are still there, at
	// 0: that no command was that small is what merging asks, and the
	// chart's legend must show the bin.
	rep.Res.Runs = []*Run{run("e512m8-whole-r1", "whole", "1", hist(0, 440, 131))}
	b.Reset()
	if err := rep.histTable(&b, "Read transfer size", "vscsi_scsi_transfer_bytes", "read", "bytes", "t.svg"); err != nil {
		t.Fatal(err)
	}
	if want := "| whole disk (512e disk, max_blks=8) | 1 | 571 | 0 | 0 | 0 | 440 | 0 | 131 |"; !strings.Contains(b.String(), want) {
		t.Errorf("lacks %q:\n%s", want, b.String())
	}
	if svg, _ := os.ReadFile(filepath.Join(out, "t.svg")); !strings.Contains(string(svg), ">≤ 512 B<") {
		t.Errorf("the chart has no ≤ 512 B bin when none was used:\n%s", svg)
	}
}

// sg-chaining's report carries the full guest's iSCSI and tcm_loop table when
// it is given one, and says how to get it when not; other experiments
// have no such section.
func TestTransportsSection(t *testing.T) {
	const table = "| transport | pages |\n|---|---|\n| iscsi | 2048 |\n"
	for _, tc := range []struct {
		exp, table string
		want       []string
		not        []string
	}{
		{"sg-chaining", table, []string{"## iSCSI beside tcm_loop", "| iscsi | 2048 |", "2048 pages arrive as 8 MiB commands"}, []string{"Not run"}},
		{"sg-chaining", "", []string{"## iSCSI beside tcm_loop", "Not run with this report", "--suite chaining"}, []string{"| iscsi |"}},
		{"merging", table, nil, []string{"iSCSI beside", "| iscsi |"}},
	} {
		var b strings.Builder
		(&Report{Transports: tc.table}).transports(&b, tc.exp)
		for _, w := range tc.want {
			if !strings.Contains(b.String(), w) {
				t.Errorf("%s: section lacks %q:\n%s", tc.exp, w, b.String())
			}
		}
		for _, w := range tc.not {
			if strings.Contains(b.String(), w) {
				t.Errorf("%s: section has %q:\n%s", tc.exp, w, b.String())
			}
		}
	}
}

func TestTraces(t *testing.T) {
	dir := t.TempDir()
	lines := `{"type":"start","time":"2026-12-06T10:00:00Z","devices":["big"]}
{"type":"command","time":"2026-12-06T10:00:00.001Z","device":"big","seq":1,"command":"read_10","opcode":40,"extent":{"lba":0,"blocks":256},"direction":"read","length":131072,"bytes":131072,"segments":1,"seg0_offset":0,"seg0_length":131072,"status":"good"}
{"type":"command","time":"2026-12-06T10:00:00.002Z","device":"big","seq":2,"command":"read_10","opcode":40,"extent":{"lba":256,"blocks":256},"direction":"read","length":131072,"bytes":131072,"segments":1,"seg0_offset":0,"seg0_length":131072,"status":"good"}
`
	if err := os.WriteFile(filepath.Join(dir, "trace-read-32p.json"), []byte(lines), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "trace-read-512p.json"), []byte(`{"type":"start","time":"2026-12-06T10:00:00Z","devices":["big"]}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := (&Report{In: dir}).traces(&b); err != nil {
		t.Fatal(err)
	}
	md := b.String()
	for _, want := range []string{"### read-32p", "| 2 | read_10 | read | 131072 | 1 | 131072 | 0 | good |", "0.002000 big #2 R read_10 lba=256+256", "### read-512p\n\nNo command reached vscsid."} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
}
