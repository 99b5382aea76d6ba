package main

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
)

// procKeys are procstat's keys, in the order it prints them.
var procKeys = []string{"ticks", "sys_ticks", "syscr", "syscw", "vcsw", "nvcsw",
	"rss_kb", "rss_anon_kb", "rss_file_kb", "rss_shmem_kb", "threads"}

// readProc reads the counters of process pid from the proc file system
// at root (see proc(5)):
//
//	ticks, sys_ticks  utime+stime and stime of /proc/PID/stat (fields 14
//	                  and 15: every thread's, in clock ticks)
//	syscr, syscw      read and write system calls, /proc/PID/io
//	vcsw, nvcsw       voluntary and involuntary context switches, summed
//	                  over /proc/PID/task/*/status (the process's own
//	                  status counts its main thread only)
//	rss_kb, rss_anon_kb, rss_file_kb, rss_shmem_kb
//	                  VmRSS, RssAnon, RssFile, RssShmem of /proc/PID/status
//	threads           Threads of /proc/PID/status
func readProc(root, pid string) (map[string]int64, error) {
	if n, err := strconv.Atoi(pid); err != nil || n <= 0 {
		return nil, usageError("procstat: not a process ID: " + pid)
	}
	dir := filepath.Join(root, pid)
	out := map[string]int64{}
	stat, err := os.ReadFile(filepath.Join(dir, "stat"))
	if err != nil {
		return nil, err
	}
	// The command name (field 2) is in parentheses and may hold spaces
	// and parentheses itself: the fields are counted after its last ")".
	i := bytes.LastIndexByte(stat, ')')
	if i < 0 {
		return nil, fmt.Errorf("%s/stat: no command name", dir)
	}
	f := strings.Fields(string(stat[i+1:])) // f[0] is field 3, state
	if len(f) < 13 {
		return nil, fmt.Errorf("%s/stat: too few fields", dir)
	}
	utime, err1 := strconv.ParseInt(f[14-3], 10, 64)
	stime, err2 := strconv.ParseInt(f[15-3], 10, 64)
	if err := errors.Join(err1, err2); err != nil {
		return nil, fmt.Errorf("%s/stat: %w", dir, err)
	}
	out["ticks"], out["sys_ticks"] = utime+stime, stime
	for file, keys := range map[string][][2]string{
		"io":     {{"syscr", "syscr"}, {"syscw", "syscw"}},
		"status": {{"VmRSS", "rss_kb"}, {"RssAnon", "rss_anon_kb"}, {"RssFile", "rss_file_kb"}, {"RssShmem", "rss_shmem_kb"}, {"Threads", "threads"}},
	} {
		m, err := readColonFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		for _, k := range keys {
			v, ok := m[k[0]]
			if !ok {
				return nil, fmt.Errorf("%s/%s: no %s", dir, file, k[0])
			}
			out[k[1]] = v
		}
	}
	tasks, err := filepath.Glob(filepath.Join(dir, "task", "*", "status"))
	if err != nil || len(tasks) == 0 {
		return nil, fmt.Errorf("%s/task: no thread", dir)
	}
	for _, t := range tasks {
		m, err := readColonFile(t)
		if errors.Is(err, fs.ErrNotExist) {
			continue // the thread ended since the glob
		}
		if err != nil {
			return nil, err
		}
		out["vcsw"] += m["voluntary_ctxt_switches"]
		out["nvcsw"] += m["nonvoluntary_ctxt_switches"]
	}
	return out, nil
}

// readColonFile reads the integer values of a "Key: value [kB]" file
// (/proc/PID/status, /proc/PID/io); lines of other values are left out.
func readColonFile(path string) (map[string]int64, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	m := map[string]int64{}
	sc := bufio.NewScanner(bytes.NewReader(b))
	for sc.Scan() {
		k, v, ok := strings.Cut(sc.Text(), ":")
		if !ok {
			continue
		}
		if f := strings.Fields(v); len(f) > 0 {
			if n, err := strconv.ParseInt(f[0], 10, 64); err == nil {
				m[k] = n
			}
		}
	}
	return m, sc.Err()
}

// procStat prints readProc's counters of pid: every key as key=value, a
// line each, or the values of keys, in their order, on one line.
func procStat(root, pid string, keys []string, w io.Writer) error {
	m, err := readProc(root, pid)
	if err != nil {
		return err
	}
	if len(keys) == 0 {
		for _, k := range procKeys {
			if _, err := fmt.Fprintf(w, "%s=%d\n", k, m[k]); err != nil {
				return err
			}
		}
		return nil
	}
	vals := make([]string, len(keys))
	for i, k := range keys {
		v, ok := m[k]
		if !ok {
			return usageError(fmt.Sprintf("procstat: no key %s (keys: %s)", k, strings.Join(procKeys, " ")))
		}
		vals[i] = strconv.FormatInt(v, 10)
	}
	_, err = fmt.Fprintln(w, strings.Join(vals, " "))
	return err
}

// inodeRef is the inode number of a socket:[N], pipe:[N] or anon_inode:[N]
// descriptor target.
var inodeRef = regexp.MustCompile(`:\[[0-9]+\]$`)

// readFDs counts what process pid's descriptors point at (the targets of
// /proc/PID/fd/*, inode numbers dropped: socket:[]), by target.
func readFDs(root, pid string) (map[string]int, error) {
	if n, err := strconv.Atoi(pid); err != nil || n <= 0 {
		return nil, usageError("fds: not a process ID: " + pid)
	}
	dir := filepath.Join(root, pid, "fd")
	ents, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	out := map[string]int{}
	for _, e := range ents {
		t, err := os.Readlink(filepath.Join(dir, e.Name()))
		if errors.Is(err, fs.ErrNotExist) {
			continue // closed since the listing
		}
		if err != nil {
			return nil, err
		}
		out[inodeRef.ReplaceAllString(t, ":[]")]++
	}
	return out, nil
}

// fds prints readFDs's counts as "COUNT TARGET" lines sorted by target,
// or, given a suffix, the number of descriptors whose target ends in it.
func fds(root, pid string, suffix []string, w io.Writer) error {
	m, err := readFDs(root, pid)
	if err != nil {
		return err
	}
	if len(suffix) == 1 {
		n := 0
		for t, c := range m {
			if strings.HasSuffix(t, suffix[0]) {
				n += c
			}
		}
		_, err := fmt.Fprintln(w, n)
		return err
	}
	for _, t := range slices.Sorted(maps.Keys(m)) {
		if _, err := fmt.Fprintf(w, "%d %s\n", m[t], t); err != nil {
			return err
		}
	}
	return nil
}
