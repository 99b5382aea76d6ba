package main

import (
	"fmt"
	"sort"
	"strings"
)

// A config is one configuration of an experiment: the runs that repeat it
// (the same name but for its "-rN" suffix, rep=N), and what it is, in
// words.
type config struct {
	words string
	runs  []*Run
}

// configs groups the runs by configuration, in the order of their first
// runs.
func (rep *Report) configs() []config {
	exp := rep.Res.Info["experiment"]
	var out []config
	at := map[string]int{}
	for _, r := range rep.Res.Runs {
		k := configKey(r)
		i, ok := at[k]
		if !ok {
			i = len(out)
			at[k] = i
			out = append(out, config{words: describe(exp, r)})
		}
		out[i].runs = append(out[i].runs, r)
	}
	return out
}

// configKey is a run's name without its repetition suffix.
func configKey(r *Run) string {
	if rep := r.KV["rep"]; rep != "" {
		return strings.TrimSuffix(r.Name, "-r"+rep)
	}
	return r.Name
}

// describe says what a run ran, from its keys: "partition 1, after setbsz
// 4096 (512e disk, max_blks=8)", not "e512m8-p1-setbsz4096-r3".
// Experiments without words here fall back to the run's keys.
func describe(exp string, r *Run) string {
	kv := r.KV
	switch exp {
	case "merging":
		target := map[string]string{
			"whole":     "whole disk",
			"p1":        "partition 1 (odd size)",
			"p2":        "partition 2 (4 KiB multiple)",
			"p1+setbsz": "partition 1, after setbsz 4096",
		}[kv["target"]]
		disk := map[string]string{"e512": "512e disk", "e512m8": "512e disk, max_blks=8"}[kv["device"]]
		if target != "" && disk != "" {
			return target + " (" + disk + ")"
		}
	case "sg-chaining":
		if kv["pages"] != "" {
			return fmt.Sprintf("%s, %s pages (%s KiB) per command", kv["op"], kv["pages"], kv["kib_per_cmd"])
		}
	case "direct-io":
		if kv["path"] != "" {
			return fmt.Sprintf("%s, %s, bs=%s", kv["op"], kv["path"], kv["bs"])
		}
	case "st-direct-io":
		if kv["blocks"] != "" {
			dio := map[string]string{"1": "direct I/O on", "0": "direct I/O off"}[kv["try_direct_io"]]
			return fmt.Sprintf("%s %s blocks, dd bs=%s, %s", kv["op"], kv["blocks"], kv["dd_bs"], dio)
		}
	case "alignment":
		if kv["path"] != "" {
			return fmt.Sprintf("%s %s, buffer at page+%s", kv["path"], kv["op"], kv["align"])
		}
	}
	// The keys the run was given, without the bookkeeping ones.
	var parts []string
	for _, k := range r.Extra {
		if k != "rep" {
			parts = append(parts, k+"="+kv[k])
		}
	}
	sort.Strings(parts)
	if len(parts) == 0 {
		return configKey(r)
	}
	return kv["device"] + ": " + strings.Join(parts, ", ")
}
