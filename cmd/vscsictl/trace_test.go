package main

import (
	"io"
	"maps"
	"strings"
	"testing"
)

// TestCountLost: the lost lines of a piece are counted, per device, and a
// command line that says LOST elsewhere is not one.
func TestCountLost(t *testing.T) {
	text := `0.100000 tape0 #7 W write_6 count=32768 32768/32768B 8seg@4096+4096 good q=3.0us s=120.5us
0.200000 tape0 LOST 5 records (the reader fell behind)
0.300000 tape0 #13 - read_6 count=512 0/512B 1seg@0+512 check_condition medium_error 3b/07 "LOST OF FORMAT" q=0.0us s=1.0us
0.400000 disk1 LOST 2 records (the reader fell behind)
0.500000 tape0 LOST 1 records (the reader fell behind)
`
	got := map[string]uint64{}
	countLost([]byte(text), false, got)
	if want := map[string]uint64{"tape0": 6, "disk1": 2}; !maps.Equal(got, want) {
		t.Errorf("text: %v, want %v", got, want)
	}
	js := `{"type":"command","device":"tape0","seq":7,"sense":{"name":"LOST OF FORMAT"}}
{"type":"lost","time":"2026-12-06T10:00:00.003Z","device":"tape0","lost":5}
`
	got = map[string]uint64{}
	countLost([]byte(js), true, got)
	if want := map[string]uint64{"tape0": 5}; !maps.Equal(got, want) {
		t.Errorf("json: %v, want %v", got, want)
	}
}

// BenchmarkTracePiece is what vscsictl trace does with a 64 KiB piece of
// text lines: search it for lost lines and write it.
func BenchmarkTracePiece(b *testing.B) {
	line := "12.345678 perf_fake_rw #123456 R read_10 lba=123456+8 4096/4096B 1seg@0+4096 good q=12.3us s=4.5us\n"
	n := (64 << 10) / len(line)
	piece := []byte(strings.Repeat(line, n))
	lost := map[string]uint64{}
	b.SetBytes(int64(len(piece)))
	for b.Loop() {
		countLost(piece, false, lost)
		_, _ = io.Discard.Write(piece)
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/line")
}
