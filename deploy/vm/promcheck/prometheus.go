package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"time"

	"golang.org/x/sys/unix"
)

// The host's Prometheus server (Debian's prometheus package) for
// metrics-test: scraping the guest's vscsid through the port forward every
// second, with the project's rules loaded.

// promConfig is the server's configuration: scrape and rule evaluation
// every second, the rules file, job vscsid with the one target.
func promConfig(rules, target string) string {
	return fmt.Sprintf(`global:
  scrape_interval: 1s
  scrape_timeout: 1s
  evaluation_interval: 1s
rule_files:
  - %q
scrape_configs:
  - job_name: vscsid
    static_configs:
      - targets: [%q]
`, rules, target)
}

// promServer is a running prometheus.
type promServer struct {
	cmd  *exec.Cmd
	done chan struct{} // closed when it has exited
	log  string        // its output
}

// startPrometheus writes the configuration into dir, checks it with
// promtool check config, starts prometheus listening on listen with its
// TSDB in dir, and waits (at most 20 s) until it is ready.
func startPrometheus(ctx context.Context, dir, rules, target, listen string) (*promServer, error) {
	cfg := filepath.Join(dir, "prometheus.yml")
	if err := os.WriteFile(cfg, []byte(promConfig(rules, target)), 0o644); err != nil {
		return nil, err
	}
	if out, err := exec.CommandContext(ctx, "promtool", "check", "config", cfg).CombinedOutput(); err != nil {
		return nil, fmt.Errorf("promtool check config: %s", bytes.TrimSpace(out))
	}
	p := &promServer{done: make(chan struct{}), log: filepath.Join(dir, "prometheus.log")}
	logf, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	defer func() { _ = logf.Close() }() // prometheus holds its own descriptor
	p.cmd = exec.Command("prometheus", "--config.file="+cfg, "--storage.tsdb.path="+filepath.Join(dir, "tsdb"),
		"--web.listen-address="+listen)
	p.cmd.Stdout, p.cmd.Stderr = logf, logf
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("start prometheus: %w", err)
	}
	go func() {
		_ = p.cmd.Wait() // stop's signal, or the exit startPrometheus reports
		close(p.done)
	}()
	a := newAPI("http://" + listen)
	for range 100 {
		if a.ready(ctx) {
			return p, nil
		}
		select {
		case <-p.done:
			return nil, fmt.Errorf("prometheus exited: %s", lastLines(p.log, 5))
		case <-time.After(200 * time.Millisecond):
		}
	}
	p.stop()
	return nil, errors.New("prometheus is not ready after 20 s")
}

// stop sends SIGTERM and waits for the exit.
func (p *promServer) stop() {
	_ = p.cmd.Process.Signal(unix.SIGTERM) // exited already is fine
	<-p.done
}

// lastLines is the last n lines of a file, joined by "; ".
func lastLines(path string, n int) string {
	b, err := os.ReadFile(path)
	if err != nil {
		return err.Error()
	}
	lines := strings.Split(strings.TrimRight(string(b), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "; ")
}

// freePorts returns n TCP ports of 127.0.0.1 that nobody listens on now,
// all different.
func freePorts(n int) ([]int, error) {
	var ports []int
	for range n {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			return nil, fmt.Errorf("no free port: %w", err)
		}
		defer func() { _ = l.Close() }() // held until all are picked
		ports = append(ports, l.Addr().(*net.TCPAddr).Port)
	}
	return ports, nil
}
