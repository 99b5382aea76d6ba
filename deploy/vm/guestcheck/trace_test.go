package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// tarTrace is what vscsictl trace --json gives of a tar to a drive.
const tarTrace = `{"type":"command","time":"2026-12-06T10:00:00Z","device":"t9","seq":1,"tag":1,"command":"test_unit_ready","opcode":0,"cdb":"000000000000","cdb_length":6,"direction":"none","length":0,"bytes":0,"residual":0,"segments":0,"seg0_offset":0,"seg0_length":0,"unaligned":0,"status":"good","queue_ns":0,"service_ns":1000}
{"type":"command","time":"2026-12-06T10:00:00Z","device":"t9","seq":2,"tag":2,"command":"write_6","opcode":10,"cdb":"0a0000800000","cdb_length":6,"extent":{"count":32768},"direction":"write","length":32768,"bytes":32768,"residual":0,"segments":1,"seg0_offset":0,"seg0_length":32768,"unaligned":0,"status":"good","queue_ns":0,"service_ns":1000}
{"type":"command","time":"2026-12-06T10:00:00Z","device":"t9","seq":3,"tag":3,"command":"write_6","opcode":10,"cdb":"0a0000800000","cdb_length":6,"extent":{"count":32768},"direction":"write","length":32768,"bytes":32768,"residual":0,"segments":1,"seg0_offset":0,"seg0_length":32768,"unaligned":0,"status":"good","queue_ns":0,"service_ns":1000}
{"type":"lost","time":"2026-12-06T10:00:00Z","device":"t9","lost":2,"tag":0,"opcode":0,"direction":"","length":0,"bytes":0,"residual":0,"segments":0,"seg0_offset":0,"seg0_length":0,"unaligned":0,"status":"","queue_ns":0,"service_ns":0}
{"type":"command","time":"2026-12-06T10:00:00Z","device":"t9","seq":6,"tag":1,"command":"write_filemarks_6","opcode":16,"cdb":"100000000100","cdb_length":6,"extent":{"count":1},"direction":"none","length":0,"bytes":0,"residual":0,"segments":0,"seg0_offset":0,"seg0_length":0,"unaligned":0,"status":"good","queue_ns":0,"service_ns":1000}
`

func TestTrace(t *testing.T) {
	d := t.TempDir()
	good, bad := filepath.Join(d, "good.json"), filepath.Join(d, "bad.json")
	if err := os.WriteFile(good, []byte(tarTrace), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(bad, []byte(tarTrace+"{\"type\":\"command\",\"colour\":1}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"trace-seq", good}, "test_unit_ready write_6*2 lost*2 write_filemarks_6"},
		{[]string{"trace-values", good, "write_6", "extent.count"}, "32768"},
		{[]string{"trace-values", good, "write_6", "bytes"}, "32768"},
		{[]string{"trace-values", good, "write_filemarks_6", "extent.count"}, "1"},
		{[]string{"trace-values", good, "read_6", "bytes"}, ""},
	} {
		var out strings.Builder
		if err := run(tc.args, &out); err != nil || strings.TrimSpace(out.String()) != tc.want {
			t.Errorf("%v: %q, %v; want %q", tc.args, out.String(), err, tc.want)
		}
	}
	if err := run([]string{"trace-seq", bad}, &strings.Builder{}); err == nil || !strings.Contains(err.Error(), "bad.json:6") {
		t.Errorf("a line that is no event: %v", err)
	}
}

// trace-overlap: commands in service at once, by completion and service
// time; one ending as another starts does not overlap it.
func TestTraceOverlap(t *testing.T) {
	line := func(cmd, at string, serviceMS int) string {
		return `{"type":"command","time":"2026-12-06T10:00:00.` + at + `Z","device":"fq32","command":"` + cmd + `","tag":1,"opcode":40,"direction":"read","length":4096,"bytes":4096,"residual":0,"segments":1,"seg0_offset":0,"seg0_length":4096,"unaligned":0,"status":"good","queue_ns":0,"service_ns":` + strconv.Itoa(serviceMS*1_000_000) + "}\n"
	}
	// read_10s in service over [0,100], [50,150], [200,300] and [300,400]
	// ms; an inquiry over [0,400].
	capture := `{"type":"start","time":"2026-12-06T10:00:00Z","devices":["fq32"],"tag":0,"opcode":0,"direction":"","length":0,"bytes":0,"residual":0,"segments":0,"seg0_offset":0,"seg0_length":0,"unaligned":0,"status":"","queue_ns":0,"service_ns":0}` + "\n" +
		line("read_10", "100", 100) + line("read_10", "150", 100) + line("read_10", "300", 100) + line("read_10", "400", 100) + line("inquiry", "400", 400)
	path := filepath.Join(t.TempDir(), "fq32.json")
	if err := os.WriteFile(path, []byte(capture), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"trace-overlap", path, "read_10"}, "2"},
		{[]string{"trace-overlap", path}, "3"},
		{[]string{"trace-overlap", path, "write_10"}, "0"},
	} {
		var out strings.Builder
		if err := run(tc.args, &out); err != nil || strings.TrimSpace(out.String()) != tc.want {
			t.Errorf("%v: %q, %v; want %q", tc.args, out.String(), err, tc.want)
		}
	}
}
