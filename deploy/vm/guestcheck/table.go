package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"strings"
)

// columnMax prints the maximum of each column (1-based) of a file of
// whitespace-separated numbers, space separated; 0 for a file without
// lines.
func columnMax(path string, columns []string, w io.Writer) error {
	cols := make([]int, len(columns))
	for i, c := range columns {
		n, err := strconv.Atoi(c)
		if err != nil || n < 1 {
			return usageError("column-max: not a column number: " + c)
		}
		cols[i] = n
	}
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	maxes := make([]float64, len(cols))
	for i := range maxes {
		maxes[i] = math.Inf(-1)
	}
	lines := 0
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 {
			continue
		}
		lines++
		for i, c := range cols {
			if c > len(f) {
				return fmt.Errorf("%s:%d: no column %d", path, lines, c)
			}
			v, err := strconv.ParseFloat(f[c-1], 64)
			if err != nil {
				return fmt.Errorf("%s:%d: column %d: %w", path, lines, c, err)
			}
			maxes[i] = max(maxes[i], v)
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	out := make([]string, len(maxes))
	for i, m := range maxes {
		if lines == 0 {
			m = 0
		}
		out[i] = formatValue(m)
	}
	_, err = fmt.Fprintln(w, strings.Join(out, " "))
	return err
}

// memStatsKeys are the Go runtime's MemStats that memStats prints, in
// its order.
var memStatsKeys = []string{"HeapAlloc", "HeapSys", "HeapIdle", "HeapInuse", "HeapReleased",
	"Stack", "MSpan", "GCSys", "OtherSys", "Sys", "NextGC", "NumGC"}

// memStats prints, on one line, the Go runtime's MemStats of a heap
// profile's text form (/debug/pprof/heap?debug=1, which ends with them as
// "# Name = value" lines): "HeapAlloc N; HeapSys N; ...", Stack and MSpan
// as "in use / from the OS".
func memStats(path string, w io.Writer) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return err
	}
	m := map[string]string{}
	for l := range strings.Lines(string(b)) {
		if k, v, ok := strings.Cut(strings.TrimPrefix(strings.TrimSpace(l), "# "), " = "); ok {
			m[k] = v
		}
	}
	var out []string
	for _, k := range memStatsKeys {
		if v, ok := m[k]; ok {
			out = append(out, k+" "+v)
		}
	}
	if len(out) == 0 {
		return fmt.Errorf("%s: no MemStats (a heap profile's debug=1 text has them)", path)
	}
	_, err = fmt.Fprintln(w, strings.Join(out, "; "))
	return err
}
