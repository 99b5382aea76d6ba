//go:build linux

package control

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/internal/record"
	"github.com/vscsid/vscsid/internal/trace"
)

// fakeService records the calls the server makes and answers as the
// daemon would.
type fakeService struct {
	mu    sync.Mutex
	calls []string
}

func (f *fakeService) record(s string) {
	f.mu.Lock()
	f.calls = append(f.calls, s)
	f.mu.Unlock()
}

func (f *fakeService) Devices() []Device {
	return []Device{{Name: "tape0", Type: "tape", Subtype: "vtape", Origin: "config", HBA: 2, UIO: "uio1",
		Address: "3:0:1:0", Node: "/dev/nst0", Generic: "sg2", Barcode: "A1"}}
}

func (f *fakeService) Create(_ context.Context, req CreateDevice) (Device, error) {
	f.record(fmt.Sprintf("create %s %s %s %d", req.Name, req.Type, req.Config, req.HWMaxSectors))
	switch {
	case req.Name == "tape0":
		return Device{}, fmt.Errorf("%w: device tape0 exists", unix.EEXIST)
	case strings.Contains(req.Config, "lbs=3"):
		return Device{}, fmt.Errorf("%w: lbs=3: want 512, 1024, 2048 or 4096", unix.EINVAL)
	}
	return Device{Name: req.Name, Type: "disk", Subtype: req.Type, Origin: "config", HBA: 5, UIO: "uio4", Node: "/dev/sdc"}, nil
}

func (f *fakeService) Remove(name string) error {
	f.record("remove " + name)
	switch name {
	case "tc0":
		return fmt.Errorf("%w: device created by another tool", unix.EPERM)
	case "x":
		return fmt.Errorf("%w: no such device", unix.ENODEV)
	}
	return nil
}

func (f *fakeService) Stats(name string) (Stats, error) {
	if name != "tape0" {
		return Stats{}, fmt.Errorf("%w: no device %q", unix.ENODEV, name)
	}
	return Stats{Name: name, Commands: []Command{{OpCode: 8, Name: "read_6", Count: 3}}, CheckConditions: map[string]uint64{}}, nil
}

func (f *fakeService) Load(name, barcode string) error {
	f.record("load " + name + " " + barcode)
	if barcode == "NOPE" {
		return fmt.Errorf("%w: cartridge NOPE: %w", unix.ENOENT, os.ErrNotExist)
	}
	return nil
}

func (f *fakeService) Unload(name string) error {
	f.record("unload " + name)
	return fmt.Errorf("%w: empty", unix.ENOMEDIUM)
}

func (f *fakeService) Faults(name string) (Faults, error) {
	return Faults{Name: name, Rules: []FaultRule{{ID: 1, Rule: "every=100;timeout", Action: "timeout", Matched: 7}}}, nil
}

func (f *fakeService) AddFault(name, rule string) (uint64, error) {
	f.record("fault add " + name + " " + rule)
	return 2, nil
}

func (f *fakeService) RemoveFault(name string, id uint64) error {
	f.record(fmt.Sprintf("fault del %s %d", name, id))
	return nil
}

func (f *fakeService) ClearFaults(name string) error {
	f.record("fault clear " + name)
	return nil
}

func (f *fakeService) SetTiming(name, timing string) error {
	f.record("fault timing " + name + " " + timing)
	return nil
}

func (f *fakeService) Library(name string) (Library, error) {
	if name != "lib0" {
		return Library{}, fmt.Errorf("%w: device %q is not a library", unix.ENOTSUP, name)
	}
	return Library{Name: name, Personality: "generic", Serial: "S1", Outside: []string{},
		Elements: []Element{{ElementRef: ElementRef{"drive", 0}, Address: 1, Barcode: "A2", Device: "tape0", Source: &ElementRef{"storage", 1}}}}, nil
}

func (f *fakeService) Move(name string, m Move) error {
	f.record(fmt.Sprintf("move %s %s %d %s %d", name, m.From.Type, m.From.Index, m.To.Type, m.To.Index))
	if m.To.Type == "drive" {
		return fmt.Errorf("%w: destination full", unix.EBUSY)
	}
	return nil
}

func (f *fakeService) Import(name, barcode string) (Element, error) {
	f.record("import " + name + " " + barcode)
	return Element{ElementRef: ElementRef{"mail", 0}, Address: 16, Barcode: barcode, ImpExp: true}, nil
}

func (f *fakeService) Export(name string, index int) (Element, error) {
	f.record(fmt.Sprintf("export %s %d", name, index))
	return Element{ElementRef: ElementRef{"mail", index}, Address: 16, Barcode: "A3"}, nil
}

// Trace refuses device x, then streams two events per batch until the
// reader or the server goes away.
func (f *fakeService) Trace(ctx context.Context, devices []string, flt trace.Filter, text bool, emit func([]byte) error) error {
	f.record(fmt.Sprintf("trace %v op=%s min=%v text=%v", devices, flt.Op, flt.MinLatency, text))
	if slices.Contains(devices, "x") {
		return fmt.Errorf("%w: no device %q", unix.ENODEV, "x")
	}
	if slices.Contains(devices, "pieces") || slices.Contains(devices, "cut") {
		// Lines in pieces that split them: one longer than the client's
		// buffer, one cut in two; "cut" ends in the middle of a line.
		long := `{"type":"command","cdb":"` + strings.Repeat("0", 100<<10) + `"}` + "\n"
		pieces := []string{long[:40<<10], long[40<<10 : 90<<10], long[90<<10:] + `{"type":"lo`, `st","lost":2}` + "\n"}
		if slices.Contains(devices, "cut") {
			pieces = append(pieces, `{"type":"comm`)
		}
		for _, p := range pieces {
			if err := emit([]byte(p)); err != nil {
				return nil
			}
		}
		return nil
	}
	if err := emit([]byte(`{"type":"start","devices":["tape0"]}` + "\n")); err != nil {
		return nil
	}
	for seq := uint64(1); ; seq += 2 {
		var lines []byte
		for _, e := range []trace.Event{{Type: trace.TypeCommand, Device: "tape0", Seq: seq, Command: "write_6"},
			{Type: trace.TypeLost, Device: "tape0", Lost: 3}} {
			b, _ := json.Marshal(e)
			lines = append(append(lines, b...), '\n')
		}
		if err := emit(lines); err != nil {
			return nil
		}
		select {
		case <-ctx.Done():
			return nil
		case <-time.After(10 * time.Millisecond):
		}
	}
}

// Record streams a header and one command, then waits for the end.
func (f *fakeService) Record(ctx context.Context, devices []string, payloads bool, emit func(*record.Header, []record.Command) error) error {
	f.record(fmt.Sprintf("record %v payloads=%v", devices, payloads))
	if slices.Contains(devices, "x") {
		return fmt.Errorf("%w: no device %q", unix.ENODEV, "x")
	}
	h := record.Header{Format: record.Format, Version: record.Version, Devices: []record.Device{{Name: "tape0", Subtype: "vtape", Config: "memory=1"}}}
	if err := emit(&h, nil); err != nil {
		return nil
	}
	if err := emit(nil, []record.Command{{Seq: 1, CDB: "000000000000", CDBLength: 6, Status: "good"}}); err != nil {
		return nil
	}
	<-ctx.Done()
	return nil
}

// start serves s on a socket in a temporary directory.
func start(t *testing.T, s Service) string {
	t.Helper()
	dir, err := os.MkdirTemp("", "vsc") // short: sun_path has 108 bytes
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	path := filepath.Join(dir, "vscsid.sock")
	l, err := Listen(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- Serve(ctx, l, s) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	})
	return path
}

// The routes and bodies as raw HTTP: what any client of the socket sees.
func TestServerWire(t *testing.T) {
	f := &fakeService{}
	path := start(t, f)
	st, err := os.Stat(path)
	if err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("socket mode %v %v, want 0600", st.Mode(), err)
	}
	hc := &http.Client{Transport: &http.Transport{DialContext: func(ctx context.Context, _, _ string) (net.Conn, error) {
		return (&net.Dialer{}).DialContext(ctx, "unix", path)
	}}}
	defer hc.CloseIdleConnections()
	do := func(method, url, body string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, "http://vscsid"+url, strings.NewReader(body))
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer func() { _ = resp.Body.Close() }()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, strings.TrimSpace(string(b))
	}
	for _, tc := range []struct {
		method, url, body string
		status            int
		want              string
	}{
		{"GET", "/v1/devices", "", 200, `[{"name":"tape0","type":"tape","subtype":"vtape","origin":"config","hba":2,"uio":"uio1","scsi_address":"3:0:1:0","node":"/dev/nst0","generic":"sg2","barcode":"A1","failed":false}]`},
		{"GET", "/v1/devices/tape0/stats", "", 200, `{"name":"tape0","commands":[{"opcode":8,"name":"read_6","count":3,"check_conditions":0,"mean_seconds":0,"p50_seconds":0,"p99_seconds":0}],"read_bytes":0,"write_bytes":0,"check_conditions":{},"in_flight":0,"aborted":0,"failed":false}`},
		{"GET", "/v1/devices/x/stats", "", 404, `{"error":"no such device: no device \"x\"","errno":"ENODEV"}`},
		{"POST", "/v1/devices/tape0/load", `{"barcode":"B2"}`, 204, ``},
		{"POST", "/v1/devices/tape0/load", `{"barcode":"NOPE"}`, 404, `{"error":"no such file or directory: cartridge NOPE: file does not exist","errno":"ENOENT"}`},
		{"POST", "/v1/devices/tape0/load", `{"barcod":"B2"}`, 400, ``},
		{"POST", "/v1/devices/tape0/unload", ``, 409, `{"error":"no medium found: empty","errno":"ENOMEDIUM"}`},
		{"DELETE", "/v1/devices", ``, 405, ``},
		{"GET", "/v1/trace?format=xml", ``, 400, `{"error":"invalid argument: format=\"xml\": want json or text","errno":"EINVAL"}`},
		{"GET", "/v1/trace?min_latency=soon", ``, 400, ``},
		{"GET", "/v1/record?payloads=maybe", ``, 400, ``},
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
		{"GET", "/v1/libraries/lib0", "", 200, `{"name":"lib0","personality":"generic","serial":"S1","elements":[{"type":"drive","index":0,"address":1,"barcode":"A2","source":{"type":"storage","index":1},"device":"tape0"}],"outside":[]}`},
		{"GET", "/v1/libraries/tape0", "", 400, ``},
		{"POST", "/v1/libraries/lib0/move", `{"from":{"type":"storage","index":2},"to":{"type":"mail","index":0}}`, 204, ``},
		{"POST", "/v1/libraries/lib0/move", `{"from":{"type":"storage","index":2},"to":{"type":"drive","index":0}}`, 409, ``},
		{"POST", "/v1/libraries/lib0/import", `{"barcode":"A9"}`, 200, `{"type":"mail","index":0,"address":16,"barcode":"A9","impexp":true}`},
		{"POST", "/v1/libraries/lib0/export", `{"index":1}`, 200, `{"type":"mail","index":1,"address":16,"barcode":"A3"}`},
		{"POST", "/v1/libraries/lib0/export", `{"slot":1}`, 400, ``},
	} {
		status, body := do(tc.method, tc.url, tc.body)
		if status != tc.status || (tc.want != "" && body != tc.want) || (tc.want == "" && tc.status == 204 && body != "") {
			t.Errorf("%s %s %s: %d %s\nwant %d %s", tc.method, tc.url, tc.body, status, body, tc.status, tc.want)
		}
	}
	if want := []string{"load tape0 B2", "load tape0 NOPE", "unload tape0",
		"create d9 vdisk size=64M 256", "create d9 vdisk size=64M;lbs=3 0", "create tape0 vtape memory=1 0", "remove d9", "remove tc0", "remove x",
		"fault add d0 busy", "fault del d0 2", "fault clear d0", "fault timing d0 latency=1ms",
		"move lib0 storage 2 mail 0", "move lib0 storage 2 drive 0", "import lib0 A9", "export lib0 1"}; !reflect.DeepEqual(f.calls, want) {
		t.Errorf("calls %v, want %v", f.calls, want)
	}
}

// The Client reaches every route, and a refusal comes back as *Error with
// the daemon's errno and the HTTP status.
func TestClientRoundTrip(t *testing.T) {
	f := &fakeService{}
	c := NewClient(start(t, f))
	defer c.Close()
	ctx := context.Background()
	devs, err := c.Devices(ctx)
	if err != nil || !reflect.DeepEqual(devs, f.Devices()) {
		t.Errorf("Devices = %+v, %v", devs, err)
	}
	if d, err := c.Create(ctx, CreateDevice{Name: "d9", Type: "vdisk", Config: "size=64M", HWMaxSectors: 256}); err != nil || d.Node != "/dev/sdc" {
		t.Errorf("Create = %+v, %v", d, err)
	}
	if s, err := c.Stats(ctx, "tape0"); err != nil || s.Commands[0].Count != 3 {
		t.Errorf("Stats = %+v, %v", s, err)
	}
	if fl, err := c.Faults(ctx, "d0"); err != nil || fl.Rules[0].Matched != 7 {
		t.Errorf("Faults = %+v, %v", fl, err)
	}
	if id, err := c.AddFault(ctx, "d0", "busy"); err != nil || id != 2 {
		t.Errorf("AddFault = %d, %v", id, err)
	}
	if l, err := c.Library(ctx, "lib0"); err != nil || l.Elements[0].Device != "tape0" || l.Elements[0].Source.Index != 1 {
		t.Errorf("Library = %+v, %v", l, err)
	}
	if e, err := c.Import(ctx, "lib0", "A9"); err != nil || !e.ImpExp || e.Barcode != "A9" {
		t.Errorf("Import = %+v, %v", e, err)
	}
	if e, err := c.Export(ctx, "lib0", 1); err != nil || e.Barcode != "A3" {
		t.Errorf("Export = %+v, %v", e, err)
	}
	for name, err := range map[string]error{
		"Move":        c.Move(ctx, "lib0", Move{From: ElementRef{"storage", 0}, To: ElementRef{"mail", 0}}),
		"Load":        c.Load(ctx, "tape0", "B2"),
		"Remove":      c.Remove(ctx, "d9"),
		"RemoveFault": c.RemoveFault(ctx, "d0", 2),
		"ClearFaults": c.ClearFaults(ctx, "d0"),
		"SetTiming":   c.SetTiming(ctx, "d0", "latency=1ms"),
	} {
		if err != nil {
			t.Errorf("%s: %v", name, err)
		}
	}
	for _, tc := range []struct {
		err    error
		errno  string
		status int
	}{
		{c.Unload(ctx, "tape0"), "ENOMEDIUM", 409},
		{c.Load(ctx, "tape0", "NOPE"), "ENOENT", 404},
		{c.Remove(ctx, "tc0"), "EPERM", 403},
		{c.Move(ctx, "lib0", Move{To: ElementRef{"drive", 0}}), "EBUSY", 409},
		{func() error { _, err := c.Stats(ctx, "x"); return err }(), "ENODEV", 404},
	} {
		e, ok := errors.AsType[*Error](tc.err)
		if !ok || e.Errno != tc.errno || e.Status != tc.status || e.Message == "" {
			t.Errorf("refusal %v: want *Error %s %d", tc.err, tc.errno, tc.status)
		}
	}
}

// TestClientTrace: the stream arrives in whole lines, a refusal before it
// starts is an *Error, the reader can stop it, and a daemon shutting
// down ends it (start's cleanup checks Serve returns).
func TestClientTrace(t *testing.T) {
	f := &fakeService{}
	c := NewClient(start(t, f))
	defer c.Close()
	ctx := context.Background()
	nop := func([]byte) error { return nil }
	err := c.Trace(ctx, []string{"x"}, trace.Filter{}, false, nop)
	if e, ok := errors.AsType[*Error](err); !ok || e.Status != http.StatusNotFound || e.Errno != "ENODEV" {
		t.Fatalf("trace of a missing device: %v", err)
	}
	err = c.Trace(ctx, nil, trace.Filter{Op: "read|", MinLatency: time.Millisecond}, false, nop)
	if e, ok := errors.AsType[*Error](err); !ok || e.Status != http.StatusBadRequest {
		t.Fatalf("a filter the daemon cannot parse: %v", err)
	}
	var got []trace.Event
	stop := errors.New("enough")
	err = c.Trace(ctx, []string{"tape0"}, trace.Filter{Op: "write", MinLatency: time.Millisecond}, true, func(lines []byte) error {
		if !bytes.HasSuffix(lines, []byte("\n")) {
			t.Errorf("%q: not whole lines", lines)
		}
		for line := range bytes.Lines(lines) {
			var e trace.Event
			if err := json.Unmarshal(line, &e); err != nil {
				t.Errorf("line %q: %v", line, err)
			}
			got = append(got, e)
		}
		if len(got) >= 5 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("trace ended with %v, want the reader's error", err)
	}
	if got[0].Type != trace.TypeStart || got[1].Seq != 1 || got[2].Type != trace.TypeLost || got[2].Lost != 3 || got[3].Seq != 3 {
		t.Errorf("events %+v", got)
	}
	if !slices.Contains(f.calls, "trace [tape0] op=write min=1ms text=true") {
		t.Errorf("calls %q: the filter and format did not reach the service", f.calls)
	}
	ctx, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	defer cancel()
	if err := c.Trace(ctx, nil, trace.Filter{}, false, nop); err != nil {
		t.Errorf("trace ended by its context: %v, want nil", err)
	}
}

// TestClientTracePieces: lines split across the daemon's writes, one of
// them longer than the client's buffer, reach the reader whole; a stream
// that ends inside a line is an error.
func TestClientTracePieces(t *testing.T) {
	c := NewClient(start(t, &fakeService{}))
	defer c.Close()
	var got []string
	err := c.Trace(context.Background(), []string{"pieces"}, trace.Filter{}, false, func(lines []byte) error {
		for line := range bytes.Lines(lines) {
			if !bytes.HasSuffix(line, []byte("\n")) {
				t.Errorf("a piece ends inside a line: %.40q", line)
			}
			got = append(got, string(line))
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != 2 || len(got[0]) != len(`{"type":"command","cdb":""}`+"\n")+100<<10 || got[1] != `{"type":"lost","lost":2}`+"\n" {
		t.Errorf("%d lines, the first %d bytes, the second %.40q", len(got), len(got[0]), got[len(got)-1])
	}
	err = c.Trace(context.Background(), []string{"cut"}, trace.Filter{}, false, func([]byte) error { return nil })
	if !errors.Is(err, io.ErrUnexpectedEOF) {
		t.Errorf("a stream cut inside a line: %v, want io.ErrUnexpectedEOF", err)
	}
}

func TestClientRecord(t *testing.T) {
	f := &fakeService{}
	c := NewClient(start(t, f))
	defer c.Close()
	err := c.Record(context.Background(), []string{"x"}, true, func([]byte) error { return nil })
	if e, ok := errors.AsType[*Error](err); !ok || e.Errno != "ENODEV" {
		t.Fatalf("record of a missing device: %v", err)
	}
	var lines []string
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	err = c.Record(ctx, []string{"tape0"}, false, func(l []byte) error {
		lines = append(lines, string(l))
		if len(lines) == 2 {
			cancel()
		}
		return nil
	})
	if err != nil || len(lines) != 2 || !strings.Contains(lines[0], `"format":"vscsid-recording"`) || !strings.Contains(lines[1], `"cdb":"000000000000"`) {
		t.Fatalf("record: %v, lines %q", err, lines)
	}
	if !slices.Contains(f.calls, "record [tape0] payloads=false") {
		t.Errorf("calls %q", f.calls)
	}
}

func TestClientWithoutDaemon(t *testing.T) {
	c := NewClient(filepath.Join(t.TempDir(), "none.sock"))
	_, err := c.Devices(context.Background())
	if err == nil || !strings.Contains(err.Error(), "vscsid is not running") {
		t.Errorf("no daemon: %v", err)
	}
}

func TestListenReplacesStaleSocket(t *testing.T) {
	dir, err := os.MkdirTemp("", "vsc")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = os.RemoveAll(dir) }()
	path := filepath.Join(dir, "s")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	l.(*net.UnixListener).SetUnlinkOnClose(false)
	if err := l.Close(); err != nil { // a daemon that died leaves its socket file
		t.Fatal(err)
	}
	l2, err := Listen(path)
	if err != nil {
		t.Fatalf("stale socket: %v", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	if err := Serve(ctx, l2, &fakeService{}); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, nil, 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Listen(path); err == nil || !strings.Contains(err.Error(), "not a socket") {
		t.Errorf("regular file at the socket path: %v", err)
	}
}
