package main

import (
	"encoding/json"
	"testing"

	"github.com/vscsid/vscsid/internal/stat"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/tcmu"
)

func TestStatsOf(t *testing.T) {
	h := stat.Histogram{Bounds: []float64{0.001, 0.01, 0.1}, Counts: []uint64{50, 45, 4, 1}, Count: 100, Sum: 1.5}
	var s tcmu.DeviceStats
	s.Commands = []tcmu.CommandStats{{OpCode: 0x0a, Name: "WRITE(6)", Count: 100, CheckConditions: 2, Duration: h}}
	s.CheckConditions[scsi.MediumError] = 2
	s.Transfers[tcmu.DirWrite].Bytes = 1 << 20
	got := statsOf("tape0", &s)
	c := got.Commands[0]
	if c.MeanSeconds != 0.015 || c.P50Seconds != 0.001 || c.P99Seconds != 0.1 || got.WriteBytes != 1<<20 || got.CheckConditions["medium_error"] != 2 {
		b, _ := json.Marshal(got)
		t.Errorf("statsOf: %s", b)
	}
	if q := h.Quantile(1); q != -1 {
		t.Errorf("p100 = %v, want -1 (above the last bound)", q)
	}
	if q := (stat.Histogram{}).Quantile(0.5); q != 0 {
		t.Errorf("empty quantile %v", q)
	}
}
