package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestColumnMax(t *testing.T) {
	// The soak's RSS samples: seconds, VmRSS, RssAnon, RssFile, RssShmem,
	// threads (KiB); the restarted daemon's are smaller.
	rss := filepath.Join(t.TempDir(), "rss")
	samples := "4 53100 30428 10600 12072 73\n521 121716 57956 50408 13352 74\n631 23120 11332 32 11756 23\n"
	if err := os.WriteFile(rss, []byte(samples), 0o644); err != nil {
		t.Fatal(err)
	}
	empty := filepath.Join(t.TempDir(), "empty")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	expectRuns(t, "", []runCase{
		{[]string{"column-max", rss, "2", "3"}, "121716 57956\n"},
		{[]string{"column-max", rss, "6"}, "74\n"},
		{[]string{"column-max", empty, "2", "3"}, "0 0\n"},
	}, [][]string{
		{"column-max", rss, "7"}, // no such column
		{"column-max", rss, "0"},
		{"column-max", rss},
		{"column-max", filepath.Join(t.TempDir(), "none"), "1"},
	})
}

// testdata/heap-debug1.txt: the soak's heap profile at the peak, its
// records cut to the first, and the MemStats vscsid's runtime appends.
func TestMemStats(t *testing.T) {
	var b strings.Builder
	if err := runIn([]string{"memstats", "testdata/heap-debug1.txt"}, nil, &b); err != nil {
		t.Fatal(err)
	}
	want := "HeapAlloc 30783672; HeapSys 54296576; HeapIdle 21118976; HeapInuse 33177600; HeapReleased 6045696; " +
		"Stack 4423680 / 4423680; MSpan 191360 / 391680; GCSys 3662592; OtherSys 663192; Sys 64923928; NextGC 58752466; NumGC 16\n"
	if b.String() != want {
		t.Errorf("got  %q\nwant %q", b.String(), want)
	}
	if err := runIn([]string{"memstats", "testdata/fio-randrw.json"}, nil, &b); err == nil {
		t.Error("memstats of a file without them: no error")
	}
}
