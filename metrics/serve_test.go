package metrics_test

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"
	"golang.org/x/crypto/bcrypt"

	"github.com/vscsid/vscsid/metrics"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}

func freeAddr(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	_ = l.Close()
	return addr
}

// serve starts Serve with args and returns a function that stops it and
// returns its error.
func serve(t *testing.T, args ...string) (stop func() error, errc <-chan error) {
	t.Helper()
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	wf := metrics.AddFlags(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	src := fixture()
	reg, err := metrics.NewRegistry(collector(src...))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan error, 1)
	log := slog.New(slog.NewTextHandler(io.Discard, nil))
	go func() { ch <- metrics.Serve(ctx, reg, wf, log) }()
	stop = func() error {
		cancel()
		select {
		case err := <-ch:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("Serve did not return after cancel")
			return nil
		}
	}
	return stop, ch
}

var client = &http.Client{Timeout: 30 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}}

// get polls url until the server answers (it starts asynchronously).
func get(t *testing.T, url, user, pass string) (int, string) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for {
		req, err := http.NewRequest(http.MethodGet, url, nil)
		if err != nil {
			t.Fatal(err)
		}
		if user != "" {
			req.SetBasicAuth(user, pass)
		}
		resp, err := client.Do(req)
		if err == nil {
			body, err := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if err != nil {
				t.Fatal(err)
			}
			return resp.StatusCode, string(body)
		}
		if time.Now().After(deadline) {
			t.Fatalf("GET %s: %v", url, err)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestServe(t *testing.T) {
	addr := freeAddr(t)
	stop, _ := serve(t, "--web.listen-address", addr)
	code, body := get(t, "http://"+addr+"/metrics", "", "")
	if code != http.StatusOK {
		t.Fatalf("GET /metrics: %d\n%s", code, body)
	}
	for _, want := range []string{
		`vscsi_devices{type="disk"} 1`,
		`vscsi_scsi_commands_total{command="read_10",device="disk0"} 100`,
		"vscsi_build_info{",
		"go_goroutines ",
		"promhttp_metric_handler_requests_total",
	} {
		if !strings.Contains(body, want) {
			t.Errorf("/metrics lacks %q", want)
		}
	}
	if code, body := get(t, "http://"+addr+"/", "", ""); code != http.StatusOK || !strings.Contains(body, "/metrics") {
		t.Errorf("GET /: %d, want a landing page linking /metrics:\n%s", code, body)
	}
	if err := stop(); err != nil {
		t.Fatalf("Serve after cancel = %v, want nil", err)
	}
	if _, err := client.Get("http://" + addr + "/metrics"); err == nil {
		t.Error("server still answers after Serve returned")
	}
}

// --web.config.file enables exporter-toolkit's bcrypt basic auth.
func TestServeBasicAuth(t *testing.T) {
	hash, err := bcrypt.GenerateFromPassword([]byte("s3cret"), bcrypt.MinCost)
	if err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(cfg, fmt.Appendf(nil, "basic_auth_users:\n  prometheus: %s\n", hash), 0o600); err != nil {
		t.Fatal(err)
	}
	addr := freeAddr(t)
	stop, _ := serve(t, "--web.listen-address", addr, "--web.config.file", cfg)
	defer func() { _ = stop() }()
	if code, _ := get(t, "http://"+addr+"/metrics", "", ""); code != http.StatusUnauthorized {
		t.Errorf("without credentials: %d, want 401", code)
	}
	if code, _ := get(t, "http://"+addr+"/metrics", "prometheus", "wrong"); code != http.StatusUnauthorized {
		t.Errorf("wrong password: %d, want 401", code)
	}
	if code, body := get(t, "http://"+addr+"/metrics", "prometheus", "s3cret"); code != http.StatusOK || !strings.Contains(body, "vscsi_devices") {
		t.Errorf("with credentials: %d, want 200 and metrics", code)
	}
}

// A process fault: Serve returns an error instead of running without a
// metrics endpoint.
func TestServeStartErrors(t *testing.T) {
	busy, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = busy.Close() }()
	badCfg := filepath.Join(t.TempDir(), "web.yml")
	if err := os.WriteFile(badCfg, []byte("basic_auth_users:\n  prometheus: not-a-bcrypt-hash\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		args []string
		want string
	}{
		{"port in use", []string{"--web.listen-address", busy.Addr().String()}, "address already in use"},
		{"bad address", []string{"--web.listen-address", "127.0.0.1:http-alt-nope"}, "unknown port"},
		{"missing web config", []string{"--web.listen-address", freeAddr(t), "--web.config.file", "/nonexistent/web.yml"}, "no such file"},
		{"bad web config", []string{"--web.listen-address", freeAddr(t), "--web.config.file", badCfg}, "hash"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			stop, errc := serve(t, tc.args...)
			select {
			case err := <-errc:
				if err == nil || !strings.Contains(err.Error(), tc.want) {
					t.Fatalf("Serve = %v, want an error containing %q", err, tc.want)
				}
			case <-time.After(5 * time.Second):
				_ = stop()
				t.Fatal("Serve did not fail")
			}
		})
	}
}

func TestAddFlags(t *testing.T) {
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{nil, []string{"127.0.0.1:9544"}},
		{[]string{"--web.listen-address", "[::1]:9544"}, []string{"[::1]:9544"}},
		{[]string{"--web.listen-address", "127.0.0.1:1", "--web.listen-address=[::1]:2"}, []string{"127.0.0.1:1", "[::1]:2"}},
	} {
		fs := flag.NewFlagSet("test", flag.ContinueOnError)
		wf := metrics.AddFlags(fs)
		if err := fs.Parse(tc.args); err != nil {
			t.Fatal(err)
		}
		if got := *wf.WebListenAddresses; strings.Join(got, " ") != strings.Join(tc.want, " ") {
			t.Errorf("%q: addresses %q, want %q", tc.args, got, tc.want)
		}
		if *wf.WebSystemdSocket || *wf.WebConfigFile != "" || *wf.Pprof {
			t.Errorf("%q: systemd socket %v, config file %q, pprof %v; want false, \"\", false", tc.args, *wf.WebSystemdSocket, *wf.WebConfigFile, *wf.Pprof)
		}
	}
	fs := flag.NewFlagSet("test", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	metrics.AddFlags(fs)
	if err := fs.Parse([]string{"--web.listen-address="}); err == nil {
		t.Error("empty --web.listen-address accepted")
	}
}

func TestServeNeedsArguments(t *testing.T) {
	err := metrics.Serve(context.Background(), nil, nil, nil)
	if err == nil || errors.Is(err, context.Canceled) {
		t.Fatalf("Serve(nil...) = %v, want an error", err)
	}
}

// --web.pprof serves the runtime profiles on the metrics listener; without
// it the paths are not there.
func TestServePprof(t *testing.T) {
	for _, on := range []bool{false, true} {
		addr := freeAddr(t)
		args := []string{"--web.listen-address", addr}
		if on {
			args = append(args, "--web.pprof")
		}
		stop, _ := serve(t, args...)
		code, body := get(t, "http://"+addr+"/debug/pprof/", "", "")
		if on && (code != http.StatusOK || !strings.Contains(body, "goroutine")) {
			t.Errorf("--web.pprof: GET /debug/pprof/: %d, want the profile index:\n%s", code, body)
		}
		if !on && code != http.StatusNotFound {
			t.Errorf("without --web.pprof: GET /debug/pprof/: %d, want 404:\n%s", code, body)
		}
		code, body = get(t, "http://"+addr+"/debug/pprof/symbol", "", "")
		if on != (code == http.StatusOK && strings.Contains(body, "num_symbols")) {
			t.Errorf("--web.pprof=%v: GET /debug/pprof/symbol: %d\n%s", on, code, body)
		}
		if code, body := get(t, "http://"+addr+"/", "", ""); on != strings.Contains(body, "/debug/pprof/profile") {
			t.Errorf("--web.pprof=%v: landing page (%d) links /debug/pprof/profile = %v:\n%s", on, code, !on, body)
		}
		if err := stop(); err != nil {
			t.Fatal(err)
		}
	}
}
