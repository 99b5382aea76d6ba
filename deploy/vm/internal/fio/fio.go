// Package fio reads fio's JSON output (--output-format=json): the one
// reader of it under deploy/vm, for the perf report's figures and the
// guests' per-device accounting.
package fio

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"
)

// Output is the part of fio's JSON output that deploy/vm reads.
type Output struct {
	Jobs []Job `json:"jobs"`
}

// Job is one job's results (with --group_reporting, the group's).
type Job struct {
	Name        string `json:"jobname"`
	Read, Write Dir
}

// Dir is a job's results in one direction.
type Dir struct {
	IOPS     float64 `json:"iops"`
	BW       float64 `json:"bw_bytes"`
	TotalIOs float64 `json:"total_ios"`
	Clat     struct {
		Percentile map[string]float64 `json:"percentile"`
	} `json:"clat_ns"`
}

// Parse reads fio's JSON output. fio may print notices before the JSON
// object; an output without jobs is an error.
func Parse(raw []byte) (Output, error) {
	if i := strings.IndexByte(string(raw), '{'); i > 0 {
		raw = raw[i:]
	}
	var o Output
	if err := json.Unmarshal(raw, &o); err != nil {
		return Output{}, fmt.Errorf("fio JSON: %w", err)
	}
	if len(o.Jobs) == 0 {
		return Output{}, errors.New("fio JSON without jobs")
	}
	return o, nil
}

// ReadFile is Parse of a file; errors name it.
func ReadFile(path string) (Output, error) {
	raw, err := os.ReadFile(path)
	if err != nil {
		return Output{}, err
	}
	o, err := Parse(raw)
	if err != nil {
		return Output{}, fmt.Errorf("%s: %w", path, err)
	}
	return o, nil
}

// IOs is the I/Os, reads and writes, of the jobs named name, and whether
// there is one.
func (o Output) IOs(name string) (float64, bool) {
	n, found := 0.0, false
	for _, j := range o.Jobs {
		if j.Name == name {
			n += j.Read.TotalIOs + j.Write.TotalIOs
			found = true
		}
	}
	return n, found
}
