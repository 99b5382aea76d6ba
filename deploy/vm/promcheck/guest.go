package main

import (
	"bufio"
	"bytes"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sys/unix"
)

// The guest's side as the host sees it: deploy/vm/run booting the metrics
// scenario, its console (the figures and the ready marker), its result
// lines.

// readyMarker is the console line the scenario prints once its figures
// are out and vscsid holds for the host.
const readyMarker = "VMTEST-METRICS-READY"

// parseGuest reads the scenario's "METRICS-GUEST key value" console lines
// (carriage returns dropped; a later line for a key wins).
func parseGuest(r io.Reader) (map[string]string, error) {
	m := map[string]string{}
	sc := bufio.NewScanner(r)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		line := strings.ReplaceAll(sc.Text(), "\r", "")
		rest, ok := strings.CutPrefix(line, "METRICS-GUEST ")
		if !ok {
			continue
		}
		key, value, _ := strings.Cut(strings.TrimSpace(rest), " ")
		if key != "" {
			m[key] = strings.TrimSpace(value)
		}
	}
	return m, sc.Err()
}

// hasMarker reports whether a console log has a line beginning with the
// ready marker.
func hasMarker(console []byte) bool {
	for line := range bytes.Lines(console) {
		if bytes.HasPrefix(line, []byte(readyMarker)) {
			return true
		}
	}
	return false
}

// guestRun is deploy/vm/run in a session of its own, its output (stdout
// and stderr) in a file and, line by line, on the host's output.
type guestRun struct {
	cmd     *exec.Cmd
	out     *lineTee
	done    chan struct{} // closed when run has exited
	waitErr error         // run's exit, after done
}

func startRun(vmDir string, args []string, outFile string, stdout io.Writer) (*guestRun, error) {
	f, err := os.Create(outFile)
	if err != nil {
		return nil, err
	}
	g := &guestRun{out: &lineTee{file: f, w: stdout}, done: make(chan struct{})}
	g.cmd = exec.Command(filepath.Join(vmDir, "run"), args...)
	g.cmd.Stdout, g.cmd.Stderr = g.out, g.out
	g.cmd.SysProcAttr = &unix.SysProcAttr{Setsid: true} // killSession stops all it started
	if err := g.cmd.Start(); err != nil {
		_ = f.Close()
		return nil, fmt.Errorf("start %s: %w", g.cmd.Path, err)
	}
	go func() {
		g.waitErr = g.cmd.Wait()
		g.out.close()
		close(g.done)
	}()
	return g, nil
}

func (g *guestRun) exited() bool {
	select {
	case <-g.done:
		return true
	default:
		return false
	}
}

// status is run's exit for a message ("status 1", "signal: killed"), ""
// for 0.
func (g *guestRun) status() string {
	ps := g.cmd.ProcessState
	switch {
	case ps == nil:
		return "not started"
	case ps.ExitCode() == 0:
		return ""
	case ps.ExitCode() > 0:
		return "status " + strconv.Itoa(ps.ExitCode())
	}
	return ps.String()
}

// stop ends run and everything in its session (qemu runs under timeout(1),
// which leaves run's process group but not its session) and waits for run.
func (g *guestRun) stop() {
	if !g.exited() {
		killSession(g.cmd.Process.Pid)
	}
	<-g.done
}

// killSession sends SIGTERM to every process of session sid.
func killSession(sid int) {
	stats, _ := filepath.Glob("/proc/[0-9]*/stat")
	for _, f := range stats {
		b, err := os.ReadFile(f)
		if err != nil {
			continue // gone meanwhile
		}
		// pid (comm) state ppid pgrp session ...: comm may hold spaces
		// and parentheses.
		i := bytes.LastIndexByte(b, ')')
		if i < 0 {
			continue
		}
		fields := strings.Fields(string(b[i+1:]))
		if len(fields) < 4 || fields[3] != strconv.Itoa(sid) {
			continue
		}
		if pid, err := strconv.Atoi(filepath.Base(filepath.Dir(f))); err == nil {
			_ = unix.Kill(pid, unix.SIGTERM) // gone meanwhile is fine
		}
	}
}

// lineTee writes everything to file, and whole lines to w (a lockedWriter,
// so that they do not cut through the host's own lines).
type lineTee struct {
	mu      sync.Mutex
	file    *os.File
	w       io.Writer
	partial []byte
}

func (t *lineTee) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if _, err := t.file.Write(p); err != nil {
		return 0, err
	}
	t.partial = append(t.partial, p...)
	if i := bytes.LastIndexByte(t.partial, '\n'); i >= 0 {
		_, _ = t.w.Write(t.partial[:i+1]) // the host's output: nothing to do on error
		t.partial = append(t.partial[:0], t.partial[i+1:]...)
	}
	return len(p), nil
}

// close writes a last line without a newline, and closes the file.
func (t *lineTee) close() {
	t.mu.Lock()
	defer t.mu.Unlock()
	if len(t.partial) > 0 {
		_, _ = t.w.Write(append(t.partial, '\n'))
		t.partial = nil
	}
	_ = t.file.Close() // read back whole by countResults; a lost line shows there
}
