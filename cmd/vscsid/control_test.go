package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
)

type fakeController struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeController) devices() []deviceJSON {
	return []deviceJSON{{Name: "tape0", Type: "tape", Subtype: "vtape", Origin: "config", HBA: 2, UIO: "uio1",
		Address: "3:0:1:0", Node: "/dev/nst0", Generic: "sg2", Barcode: "A1"}}
}

func (f *fakeController) stats(name string) (statsJSON, error) {
	if name != "tape0" {
		return statsJSON{}, fmt.Errorf("%w: no device %q", unix.ENODEV, name)
	}
	return statsJSON{Name: name, Commands: []commandJSON{{OpCode: 8, Name: "READ(6)", Count: 3}}, CheckConditions: map[string]uint64{}}, nil
}

func (f *fakeController) load(name, barcode string) error {
	f.mu.Lock()
	f.calls = append(f.calls, "load "+name+" "+barcode)
	f.mu.Unlock()
	if barcode == "NOPE" {
		return mediumErrno(fmt.Errorf("cartridge NOPE: %w", os.ErrNotExist))
	}
	return nil
}

func (f *fakeController) unload(name string) error {
	f.mu.Lock()
	f.calls = append(f.calls, "unload "+name)
	f.mu.Unlock()
	return fmt.Errorf("%w: empty", enomedium)
}

func (f *fakeController) faultList(name string) (faultsJSON, error) {
	return faultsJSON{Name: name, Rules: []faultRuleJSON{{ID: 1, Rule: "every=100;timeout", Action: "timeout", Matched: 7}}}, nil
}

func (f *fakeController) faultAdd(name, rule string) (uint64, error) {
	f.record("fault add " + name + " " + rule)
	return 2, nil
}

func (f *fakeController) faultRemove(name string, id uint64) error {
	f.record(fmt.Sprintf("fault del %s %d", name, id))
	return nil
}

func (f *fakeController) faultClear(name string) error {
	f.record("fault clear " + name)
	return nil
}

func (f *fakeController) faultTiming(name, timing string) error {
	f.record("fault timing " + name + " " + timing)
	return nil
}

func (f *fakeController) create(_ context.Context, req control.CreateDevice) (deviceJSON, error) {
	f.record(fmt.Sprintf("create %s %s %s %d", req.Name, req.Type, req.Config, req.HWMaxSectors))
	if req.Name == "tape0" {
		return deviceJSON{}, fmt.Errorf("%w: device tape0 exists", unix.EEXIST)
	}
	if _, err := (DeviceConfig{Name: req.Name, Type: req.Type, Config: req.Config, HWMaxSectors: req.HWMaxSectors}).check(); err != nil {
		return deviceJSON{}, fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	return deviceJSON{Name: req.Name, Type: "disk", Subtype: req.Type, Origin: "config", HBA: 5, UIO: "uio4", Node: "/dev/sdc"}, nil
}

func (f *fakeController) remove(name string) error {
	f.record("remove " + name)
	switch name {
	case "tc0":
		return fmt.Errorf("%w: %w", unix.EPERM, target.ErrNotOwned)
	case "x":
		return fmt.Errorf("%w: %w", unix.ENODEV, target.ErrNoDevice)
	}
	return nil
}

func (f *fakeController) record(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.mu.Unlock()
}

// startControl serves c on a socket in a temporary directory.
func startControl(t *testing.T, c controller) (string, *http.Client) {
	t.Helper()
	dir, err := os.MkdirTemp("", "vsc") // short: sun_path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { os.RemoveAll(dir) })
	path := filepath.Join(dir, "vscsid.sock")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveControl(ctx, path, c, zaptest.NewLogger(t)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	deadline := time.Now().Add(5 * time.Second)
	for {
		if conn, err := net.Dial("unix", path); err == nil {
			conn.Close()
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("control socket never came up")
		}
		time.Sleep(5 * time.Millisecond)
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	t.Cleanup(hc.CloseIdleConnections)
	return path, hc
}

func TestControlSocket(t *testing.T) {
	f := &fakeController{}
	path, hc := startControl(t, f)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v %v, want 0600", st.Mode(), err)
	}
	do := func(method, url, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://vscsid"+url, strings.NewReader(body))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	for _, tc := range []struct {
		method, url, body string
		status            int
		want              string
	}{
		{"GET", "/v1/devices", "", 200, `[{"name":"tape0","type":"tape","subtype":"vtape","origin":"config","hba":2,"uio":"uio1","scsi_address":"3:0:1:0","node":"/dev/nst0","generic":"sg2","barcode":"A1","failed":false}]`},
		{"GET", "/v1/devices/tape0/stats", "", 200, `{"name":"tape0","commands":[{"opcode":8,"name":"READ(6)","count":3,"check_conditions":0,"mean_seconds":0,"p50_seconds":0,"p99_seconds":0}],"read_bytes":0,"write_bytes":0,"check_conditions":{},"in_flight":0,"aborted":0,"failed":false}`},
		{"GET", "/v1/devices/x/stats", "", 404, `{"error":"no such device: no device \"x\"","errno":"ENODEV"}`},
		{"POST", "/v1/devices/tape0/load", `{"barcode":"B2"}`, 204, ``},
		{"POST", "/v1/devices/tape0/load", `{"barcode":"NOPE"}`, 404, `{"error":"no such file or directory: cartridge NOPE: file does not exist","errno":"ENOENT"}`},
		{"POST", "/v1/devices/tape0/load", `{"barcod":"B2"}`, 400, ``},
		{"POST", "/v1/devices/tape0/unload", ``, 409, `{"error":"no medium found: empty","errno":"ENOMEDIUM"}`},
		{"DELETE", "/v1/devices", ``, 405, ``},
		{"POST", "/v1/devices", `{"name":"d9","type":"vdisk","config":"size=64M","hw_max_sectors":256}`, 201, `{"name":"d9","type":"disk","subtype":"vdisk","origin":"config","hba":5,"uio":"uio4","node":"/dev/sdc","failed":false}`},
		{"POST", "/v1/devices", `{"name":"d9","type":"vdisk","config":"size=64M;lbs=3"}`, 400, ``},
		{"POST", "/v1/devices", `{"name":"tape0","type":"vtape","config":"memory=1"}`, 409, ``},
		{"POST", "/v1/devices", `{"name":"d9","typ":"vdisk"}`, 400, ``},
		{"DELETE", "/v1/devices/d9", ``, 204, ``},
		{"DELETE", "/v1/devices/tc0", ``, 403, `{"error":"operation not permitted: device created by another tool","errno":"EPERM"}`},
		{"DELETE", "/v1/devices/x", ``, 404, ``},
		{"GET", "/v1/devices/d0/faults", "", 200, `{"name":"d0","timing":"","rules":[{"id":1,"rule":"every=100;timeout","action":"timeout","matched":7,"injected":0,"spent":false}],"delayed":0,"clamped":0,"held":0,"interrupted":0}`},
		{"POST", "/v1/devices/d0/faults", `{"rule":"busy"}`, 200, `{"id":2}`},
		{"DELETE", "/v1/devices/d0/faults/2", ``, 204, ``},
		{"DELETE", "/v1/devices/d0/faults/x", ``, 400, ``},
		{"DELETE", "/v1/devices/d0/faults", ``, 204, ``},
		{"PUT", "/v1/devices/d0/faults/timing", `{"timing":"latency=1ms"}`, 204, ``},
	} {
		status, body := do(tc.method, tc.url, tc.body)
		if status != tc.status || (tc.want != "" && body != tc.want) || (tc.want == "" && tc.status == 204 && body != "") {
			t.Errorf("%s %s %s: %d %s\nwant %d %s", tc.method, tc.url, tc.body, status, body, tc.status, tc.want)
		}
	}
	if want := []string{"load tape0 B2", "load tape0 NOPE", "unload tape0",
		"create d9 vdisk size=64M 256", "create d9 vdisk size=64M;lbs=3 0", "create tape0 vtape memory=1 0", "remove d9", "remove tc0", "remove x",
		"fault add d0 busy", "fault del d0 2", "fault clear d0", "fault timing d0 latency=1ms"}; !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %v, want %v", f.calls, want)
	}
}

func TestControlSocketReplacesStaleSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "vsc")
	if err != nil {
		t.Fatal(err)
	}
	defer os.RemoveAll(dir)
	path := filepath.Join(dir, "s")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	l.Close() // a daemon that died leaves its socket file
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- serveControl(ctx, path, &fakeController{}, zaptest.NewLogger(t)) }()
	time.Sleep(50 * time.Millisecond)
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if err := serveControl(context.Background(), path, &fakeController{}, zaptest.NewLogger(t)); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("regular file at the socket path: %v", err)
	}
}

func TestStatsOf(t *testing.T) {
	h := target.Histogram{Bounds: []float64{0.001, 0.01, 0.1}, Counts: []uint64{50, 45, 4, 1}, Count: 100, Sum: 1.5}
	var s target.DeviceStats
	s.Commands = []target.CommandStats{{OpCode: 0x0a, Name: "WRITE(6)", Count: 100, CheckConditions: 2, Duration: h}}
	s.CheckConditions[scsi.MediumError] = 2
	s.Transfers[target.DirWrite].Bytes = 1 << 20
	got := statsOf("tape0", &s)
	c := got.Commands[0]
	if c.MeanSeconds != 0.015 || c.P50Seconds != 0.001 || c.P99Seconds != 0.1 || got.WriteBytes != 1<<20 || got.CheckConditions["medium_error"] != 2 {
		b, _ := json.Marshal(got)
		t.Errorf("statsOf: %s", b)
	}
	if q := quantile(h, 1); q != -1 {
		t.Errorf("p100 = %v, want -1 (above the last bound)", q)
	}
	if q := quantile(target.Histogram{}, 0.5); q != 0 {
		t.Errorf("empty quantile %v", q)
	}
}
