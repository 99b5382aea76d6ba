package main

import (
	"context"
	"errors"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/vscsid/vscsid/tape/cartridge"
)

// fakeDaemon serves the control protocol of cmd/vscsid/control.go with the
// same JSON its tests pin.
type fakeDaemon struct {
	socket string
	mu     sync.Mutex
	calls  []string
}

func startFakeDaemon(t *testing.T) *fakeDaemon {
	t.Helper()
	dir, err := os.MkdirTemp("", "vsc")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	d := &fakeDaemon{socket: filepath.Join(dir, "vscsid.sock")}
	l, err := net.Listen("unix", d.socket)
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("GET /v1/devices", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `[{"name":"tape0","type":"tape","subtype":"vtape","origin":"config","hba":2,"uio":"uio1","scsi_address":"3:0:1:0","node":"/dev/nst0","generic":"sg2","barcode":"A1","failed":false},`+
			`{"name":"tc0","type":"disk","subtype":"vdisk","origin":"attached","hba":5,"uio":"uio2","failed":true,"error":"ring corrupt"}]`+"\n")
	})
	mux.HandleFunc("GET /v1/devices/{name}/stats", func(w http.ResponseWriter, r *http.Request) {
		if r.PathValue("name") != "tape0" {
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"error":"no such device: no device \"`+r.PathValue("name")+`\"","errno":"ENODEV"}`)
			return
		}
		_, _ = io.WriteString(w, `{"name":"tape0","commands":[{"opcode":8,"name":"READ(6)","count":3,"check_conditions":1,"mean_seconds":0.000012,"p50_seconds":0.000016,"p99_seconds":0.000064},`+
			`{"opcode":10,"name":"WRITE(6)","count":5,"check_conditions":0,"mean_seconds":0.002,"p50_seconds":0.004096,"p99_seconds":-1}],`+
			`"read_bytes":1048576,"write_bytes":2097152,"check_conditions":{"medium_error":1},"in_flight":0,"aborted":0,"failed":false}`)
	})
	mux.HandleFunc("GET /v1/trace", func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.calls = append(d.calls, "trace "+r.URL.RawQuery)
		d.mu.Unlock()
		if r.URL.Query().Get("format") == "text" {
			_, _ = io.WriteString(w, traceText)
			return
		}
		_, _ = io.WriteString(w, traceLines)
	})
	mux.HandleFunc("GET /v1/record", func(w http.ResponseWriter, r *http.Request) {
		d.mu.Lock()
		d.calls = append(d.calls, "record "+r.URL.RawQuery)
		d.mu.Unlock()
		_, _ = io.WriteString(w, recordLines)
	})
	mux.HandleFunc("GET /v1/devices/{name}/faults", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"name":"d0","timing":"latency=1ms","rules":[{"id":1,"rule":"every=100;timeout","action":"timeout","matched":250,"injected":2,"spent":false},`+
			`{"id":3,"rule":"op=read;count=1;sense=medium_error","action":"sense","matched":1,"injected":1,"spent":true}],"delayed":10,"clamped":0,"held":2,"interrupted":0}`)
	})
	faultCall := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		d.mu.Lock()
		d.calls = append(d.calls, r.Method+" "+r.URL.Path+" "+string(b))
		d.mu.Unlock()
		if r.Method == "POST" {
			_, _ = io.WriteString(w, `{"id":4}`)
			return
		}
		w.WriteHeader(204)
	}
	mux.HandleFunc("POST /v1/devices/{name}/faults", faultCall)
	mux.HandleFunc("DELETE /v1/devices/{name}/faults", faultCall)
	mux.HandleFunc("DELETE /v1/devices/{name}/faults/{id}", faultCall)
	mux.HandleFunc("PUT /v1/devices/{name}/faults/timing", faultCall)
	mux.HandleFunc("POST /v1/devices/{name}/{action}", func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		d.mu.Lock()
		d.calls = append(d.calls, r.PathValue("action")+" "+r.PathValue("name")+" "+string(b))
		d.mu.Unlock()
		if strings.Contains(string(b), "NOPE") {
			w.WriteHeader(404)
			_, _ = io.WriteString(w, `{"error":"no such file or directory: cartridge NOPE: file does not exist","errno":"ENOENT"}`)
			return
		}
		w.WriteHeader(204)
	})
	devCall := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		d.mu.Lock()
		d.calls = append(d.calls, r.Method+" "+r.URL.Path+" "+string(b))
		d.mu.Unlock()
		switch {
		case strings.Contains(string(b), `"lbs=3"`):
			w.WriteHeader(400)
			_, _ = io.WriteString(w, `{"error":"invalid argument: lbs: 3: want 512, 1024, 2048 or 4096","errno":"EINVAL"}`)
		case r.Method == "POST":
			w.WriteHeader(201)
			_, _ = io.WriteString(w, `{"name":"d9","type":"disk","subtype":"vdisk","origin":"config","hba":5,"uio":"uio4","scsi_address":"7:0:1:0","node":"/dev/sdc","generic":"sg4","failed":false}`)
		case r.PathValue("name") == "tc0":
			w.WriteHeader(403)
			_, _ = io.WriteString(w, `{"error":"operation not permitted: device tc0: device created by another tool: remove it with that tool (targetcli)","errno":"EPERM"}`)
		default:
			w.WriteHeader(204)
		}
	}
	mux.HandleFunc("GET /v1/libraries/{name}", func(w http.ResponseWriter, _ *http.Request) {
		_, _ = io.WriteString(w, `{"name":"lib0","personality":"generic","serial":"LIB0S","outside":["X00001L8"],"elements":[`+
			`{"type":"drive","index":0,"address":1,"barcode":"A00002L8","source":{"type":"storage","index":1},"device":"tape0"},`+
			`{"type":"storage","index":0,"address":4096,"barcode":"A00001L8"},{"type":"storage","index":1,"address":4097},`+
			`{"type":"mail","index":0,"address":16,"barcode":"A00003L8","impexp":true}]}`)
	})
	libCall := func(w http.ResponseWriter, r *http.Request) {
		b, _ := io.ReadAll(r.Body)
		d.mu.Lock()
		d.calls = append(d.calls, r.Method+" "+r.URL.Path+" "+string(b))
		d.mu.Unlock()
		switch {
		case strings.Contains(string(b), `"drive"`) && strings.HasSuffix(r.URL.Path, "/move"):
			w.WriteHeader(409)
			_, _ = io.WriteString(w, `{"error":"device or resource busy: vlibrary lib0: move storage 0 to drive 0: scsi: illegal_request 0x3b/0x0d (MEDIUM DESTINATION ELEMENT FULL)","errno":"EBUSY"}`)
		case strings.HasSuffix(r.URL.Path, "/move"):
			w.WriteHeader(204)
		default:
			_, _ = io.WriteString(w, `{"type":"mail","index":1,"address":17,"barcode":"B00001L8"}`)
		}
	}
	mux.HandleFunc("POST /v1/libraries/{name}/{action}", libCall)
	mux.HandleFunc("POST /v1/devices", devCall)
	mux.HandleFunc("DELETE /v1/devices/{name}", devCall)
	srv := &http.Server{Handler: mux}
	go func() { _ = srv.Serve(l) }() // ErrServerClosed at the cleanup
	t.Cleanup(func() { _ = srv.Close() })
	return d
}

func TestDaemonCommands(t *testing.T) {
	d := startFakeDaemon(t)
	s := "--socket=" + d.socket
	out := mustRun(t, "devices", s)
	want := `NAME   TYPE  SUBTYPE  ORIGIN    ADDRESS  NODE       SG   UIO   MEDIUM  STATE
tape0  tape  vtape    config    3:0:1:0  /dev/nst0  sg2  uio1  A1      ok
tc0    disk  vdisk    attached  -        -          -    uio2  -       FAILED: ring corrupt
`
	if out != want {
		t.Errorf("devices:\n%s\nwant:\n%s", out, want)
	}
	out = mustRun(t, "devices", "--json", s)
	if !strings.Contains(out, `"origin": "attached"`) || !strings.Contains(out, `"scsi_address": "3:0:1:0"`) {
		t.Errorf("devices --json:\n%s", out)
	}
	out = mustRun(t, "stats", "tape0", s)
	want = `tape0: 1 MiB read, 2 MiB written, 0 in flight, 0 aborted

 COMMAND  OPCODE  COUNT  CHECK  MEAN     P50      P99
 READ(6)    0x08      3      1  12µs   <=16µs   <=64µs
WRITE(6)    0x0a      5      0   2ms  <=4.096ms   >max

check conditions by sense key: medium_error 1
`
	if strings.Join(strings.Fields(out), " ") != strings.Join(strings.Fields(want), " ") {
		t.Errorf("stats:\n%s\nwant:\n%s", out, want)
	}
	if out := mustRun(t, "stats", s, "--json", "tape0"); !strings.HasPrefix(out, `{"name":"tape0"`) {
		t.Errorf("stats --json: %s", out)
	}
	if out := mustRun(t, "load", "tape0", "B2", s); out != "tape0: loaded B2\n" {
		t.Errorf("load: %q", out)
	}
	mustRun(t, "unload", "tape0", s)
	mustRun(t, "eject", s, "tape0")
	want2 := []string{`load tape0 {"barcode":"B2"}`, "unload tape0 ", "unload tape0 "}
	d.mu.Lock()
	if strings.Join(d.calls, "|") != strings.Join(want2, "|") {
		t.Errorf("daemon saw %q, want %q", d.calls, want2)
	}
	d.mu.Unlock()

	// Errors: the daemon's message, usage mistakes.
	if _, _, err := vsctl(t, "load", "tape0", "NOPE", s); err == nil || err.Error() != "load: no such file or directory: cartridge NOPE: file does not exist" {
		t.Errorf("load NOPE: %v", err)
	}
	if _, _, err := vsctl(t, "stats", "zz", s); err == nil || !strings.Contains(err.Error(), `no device "zz"`) {
		t.Errorf("stats zz: %v", err)
	}
	for _, args := range [][]string{{"load", "tape0"}, {"stats"}, {"unload", "a", "b"}, {"devices", "x"}, {"stats", "tape0", "--watch", "1ms"}} {
		if _, _, err := vsctl(t, append(args, s)...); !isUsage(err) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func TestStatsWatchStopsOnCancel(t *testing.T) {
	d := startFakeDaemon(t)
	ctx, cancel := context.WithCancel(context.Background())
	var out strings.Builder
	pr, pw := io.Pipe()
	done := make(chan error, 1)
	go func() {
		done <- run(ctx, []string{"stats", "tape0", "--watch", "100ms", "--socket", d.socket}, pw, io.Discard)
		_ = pw.Close() // always nil
	}()
	buf := make([]byte, 4096)
	for strings.Count(out.String(), "--- ") < 2 {
		n, err := pr.Read(buf)
		if err != nil {
			t.Fatal(err)
		}
		out.Write(buf[:n])
	}
	cancel()
	go func() { _, _ = io.Copy(io.Discard, pr) }()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// traceLines is a trace stream as the daemon sends it: the start, a
// WRITE(6), a READ(6) that met a filemark, a LOST line.
const traceLines = `{"type":"start","time":"2026-12-06T10:00:00.000100Z","devices":["tape0"],"tag":0,"opcode":0,"direction":"","length":0,"bytes":0,"residual":0,"segments":0,"seg0_offset":0,"seg0_length":0,"unaligned":0,"status":"","queue_ns":0,"service_ns":0}
{"type":"command","time":"2026-12-06T10:00:00.000100Z","device":"tape0","seq":7,"tag":3,"command":"write_6","opcode":10,"cdb":"0a0000800000","cdb_length":6,"extent":{"count":32768},"direction":"write","length":32768,"bytes":32768,"residual":0,"segments":8,"seg0_offset":4096,"seg0_length":4096,"unaligned":0,"status":"good","queue_ns":3000,"service_ns":120500}
{"type":"command","time":"2026-12-06T10:00:00.002100Z","device":"tape0","seq":8,"tag":4,"command":"read_6","opcode":8,"cdb":"080000800000","cdb_length":6,"extent":{"count":32768},"direction":"none","length":32768,"bytes":0,"residual":32768,"segments":8,"seg0_offset":0,"seg0_length":4096,"unaligned":1,"status":"check_condition","sense":{"key":"no_sense","asc":0,"ascq":1,"name":"FILEMARK DETECTED","info":32768,"filemark":true},"queue_ns":0,"service_ns":15000000,"fault":true}
{"type":"lost","time":"2026-12-06T10:00:00.003Z","device":"tape0","lost":5,"tag":0,"opcode":0,"direction":"","length":0,"bytes":0,"residual":0,"segments":0,"seg0_offset":0,"seg0_length":0,"unaligned":0,"status":"","queue_ns":0,"service_ns":0}
`

// traceText is the stream of traceLines in text (trace.Event.AppendText).
const traceText = `0.000000 tracing tape0
0.000000 tape0 #7 W write_6 count=32768 32768/32768B 8seg@4096+4096 good q=3.0us s=120.5us
0.002000 tape0 #8 - read_6 count=32768 0/32768B 8seg@0+4096 unaligned=1 check_condition no_sense 00/01 "FILEMARK DETECTED" FM info=32768 q=0.0us s=15.0ms [fault]
0.002900 tape0 LOST 5 records (the reader fell behind)
`

func TestTraceCommand(t *testing.T) {
	d := startFakeDaemon(t)
	s := "--socket=" + d.socket
	out, stderr, err := vsctl(t, "trace", "tape0", "--op", "write|read_6", "--min-latency", "1ms", s)
	if err != nil {
		t.Fatal(err)
	}
	want := `0.000000 tape0 #7 W write_6 count=32768 32768/32768B 8seg@4096+4096 good q=3.0us s=120.5us
0.002000 tape0 #8 - read_6 count=32768 0/32768B 8seg@0+4096 unaligned=1 check_condition no_sense 00/01 "FILEMARK DETECTED" FM info=32768 q=0.0us s=15.0ms [fault]
0.002900 tape0 LOST 5 records (the reader fell behind)
`
	if out != want {
		t.Errorf("trace:\n%s\nwant:\n%s", out, want)
	}
	if stderr != "vscsictl trace: tracing tape0\nvscsictl trace: tape0: 5 records lost (the trace could not keep up)\n" {
		t.Errorf("stderr %q", stderr)
	}
	d.mu.Lock()
	if got := d.calls[len(d.calls)-1]; got != "trace device=tape0&format=text&min_latency=1ms&op=write%7Cread_6" {
		t.Errorf("query %q", got)
	}
	d.mu.Unlock()
	out, stderr, err = vsctl(t, "trace", "--json", s)
	if err != nil || out != traceLines {
		t.Errorf("trace --json changed the lines (%v):\n%s", err, out)
	}
	if stderr != "vscsictl trace: tracing tape0\nvscsictl trace: tape0: 5 records lost (the trace could not keep up)\n" {
		t.Errorf("trace --json stderr %q", stderr)
	}
	for _, args := range [][]string{{"--op", "read|"}, {"--sense", "nonsense"}, {"--status", "fine"}, {"--lba", "x"}, {"--min-latency", "-1s"}} {
		if _, _, err := vsctl(t, append([]string{"trace", s}, args...)...); !isUsage(err) {
			t.Errorf("trace %v: %v, want a usage error", args, err)
		}
	}
}

// recordLines is a recording stream of a new LTO-6 drive: TEST UNIT READY,
// a 700-byte WRITE(6), and a READ POSITION after a lost command.
const recordLines = `{"format":"vscsid-recording","version":1,"vscsid":"test","started":"2026-12-06T10:00:00Z","payloads":true,"devices":[{"name":"t0","subtype":"vtape","config":"personality=lto6;memory=1;barcode=REC001L6"}]}
{"seq":1,"dev":0,"t_ns":1000,"cdb":"000000000000","cdb_length":6,"length":0,"status":"good","written":0,"consumed":0}
{"seq":2,"dev":0,"t_ns":2000,"cdb":"0a000002bc00","cdb_length":6,"length":700,"out":"` + "dnNjc2lk" + `","status":"good","written":0,"consumed":700}
{"seq":4,"dev":0,"t_ns":3000,"cdb":"000000000000","cdb_length":6,"length":0,"status":"check_condition","sense":{"key":"not_ready","asc":4,"ascq":0},"written":0,"consumed":0}
`

func TestRecordAndReplayCommands(t *testing.T) {
	d := startFakeDaemon(t)
	file := filepath.Join(t.TempDir(), "t0.vrec")
	out := mustRun(t, "record", "t0", "-o", file, "--socket", d.socket)
	if out != "recorded 3 commands of t0 to "+file+" (1 lost: the recording could not keep up; it will not replay)\n" {
		t.Errorf("record: %q", out)
	}
	if st, err := os.Stat(file); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("recording mode %v, %v: want 0600 (it holds the initiator's data)", st.Mode(), err)
	}
	d.mu.Lock()
	if got := d.calls[len(d.calls)-1]; got != "record device=t0&payloads=true" {
		t.Errorf("query %q", got)
	}
	d.mu.Unlock()
	out, _, err := vsctl(t, "replay", file)
	want := `t0 #4 cdb 000000000000: lost: recorded seq 3, replayed seq 4: the recording lost commands
t0 #4 cdb 000000000000: status: recorded check_condition, replayed good
t0 #4 cdb 000000000000: sense: recorded not_ready 04/00, replayed none
replayed 3 commands of t0 (0 not run when recorded): 3 differences
`
	if out != want || err == nil {
		t.Errorf("replay: %v\n%s\nwant:\n%s", err, out, want)
	}
	if _, _, err := vsctl(t, "replay", "--max", "1", file); err == nil {
		t.Error("replay with differences exited 0")
	}
	for _, args := range [][]string{{"record", "-o", file}, {"record", "t0"}, {"replay"}, {"replay", "a", "b"}} {
		if _, _, err := vsctl(t, append(args, "--socket", d.socket)...); !isUsage(err) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if _, _, err := vsctl(t, "replay", filepath.Join(t.TempDir(), "none")); err == nil {
		t.Error("replay of a missing file")
	}
	bad := filepath.Join(t.TempDir(), "bad")
	_ = os.WriteFile(bad, []byte("plain text"), 0o644)
	if _, _, err := vsctl(t, "replay", bad); err == nil || !strings.Contains(err.Error(), "not a vscsid recording") {
		t.Errorf("replay of a text file: %v", err)
	}
}

func TestDaemonNotRunning(t *testing.T) {
	sock := filepath.Join(t.TempDir(), "none.sock")
	_, _, err := vsctl(t, "devices", "--socket", sock)
	want := "devices: vscsid is not running (no socket at " + sock + "): start it with systemctl start vscsid"
	if err == nil || err.Error() != want {
		t.Errorf("err = %v\nwant %s", err, want)
	}
}

func TestFaultCommands(t *testing.T) {
	d := startFakeDaemon(t)
	s := "--socket=" + d.socket
	out := mustRun(t, "fault", "list", "d0", s)
	want := `d0: timing latency=1ms; 10 commands delayed (0 clamped to cmd_time_out), 2 held
ID  ACTION         MATCHED  INJECTED  RULE
1   timeout        250      2         every=100;timeout
3   sense (spent)  1        1         op=read;count=1;sense=medium_error
`
	if out != want {
		t.Errorf("fault list:\n%s\nwant:\n%s", out, want)
	}
	if out := mustRun(t, "fault", "add", "d0", "every=10;busy", s); out != "d0: rule 4 added\n" {
		t.Errorf("fault add: %q", out)
	}
	mustRun(t, "fault", "del", "d0", "4", s)
	mustRun(t, "fault", "clear", "d0", s)
	mustRun(t, "fault", "timing", "d0", "", s)
	wantCalls := []string{
		`POST /v1/devices/d0/faults {"rule":"every=10;busy"}`,
		`DELETE /v1/devices/d0/faults/4 `,
		`DELETE /v1/devices/d0/faults `,
		`PUT /v1/devices/d0/faults/timing {"timing":""}`,
	}
	d.mu.Lock()
	if strings.Join(d.calls, "|") != strings.Join(wantCalls, "|") {
		t.Errorf("daemon saw\n%q\nwant\n%q", d.calls, wantCalls)
	}
	d.mu.Unlock()
	if out := mustRun(t, "fault", "help"); !strings.Contains(out, "fault rule:") || !strings.Contains(out, "fault timing:") {
		t.Errorf("fault help: %s", out)
	}
	for _, args := range [][]string{{"fault", "del", "d0", "x", s}, {"fault", "add", "d0", s}, {"fault", "list", s}} {
		if _, _, err := vsctl(t, args...); !isUsage(err) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
	if _, _, err := vsctl(t, "fault", "del", "d0", "x", s); err == nil || err.Error() != `fault del: rule ID "x": want the number 'vscsictl fault list' shows` {
		t.Errorf("message: %v", err)
	}
}

func TestCreateDeleteCommands(t *testing.T) {
	d := startFakeDaemon(t)
	s := "--socket=" + d.socket
	if out := mustRun(t, "create", "d9", "vdisk", "size=64M", "--hw-max-sectors", "256", s); out != "d9: created vdisk at 7:0:1:0 (/dev/sdc, sg4)\n" {
		t.Errorf("create: %q", out)
	}
	if out := mustRun(t, "create", "d9", "vdisk", "size=64M", "--json", s); !strings.Contains(out, `"node": "/dev/sdc"`) {
		t.Errorf("create --json: %s", out)
	}
	if out := mustRun(t, "delete", "d9", s); out != "d9: removed\n" {
		t.Errorf("delete: %q", out)
	}
	if _, _, err := vsctl(t, "create", "d9", "vdisk", "lbs=3", s); err == nil || err.Error() != "create: invalid argument: lbs: 3: want 512, 1024, 2048 or 4096" {
		t.Errorf("create with a bad cfgstring: %v", err)
	}
	if _, _, err := vsctl(t, "delete", "tc0", s); err == nil || !strings.Contains(err.Error(), "remove it with that tool (targetcli)") {
		t.Errorf("delete of targetcli's device: %v", err)
	}
	want := []string{
		`POST /v1/devices {"name":"d9","type":"vdisk","config":"size=64M","hw_max_sectors":256}`,
		`POST /v1/devices {"name":"d9","type":"vdisk","config":"size=64M"}`,
		`DELETE /v1/devices/d9 `,
		`POST /v1/devices {"name":"d9","type":"vdisk","config":"lbs=3"}`,
		`DELETE /v1/devices/tc0 `,
	}
	d.mu.Lock()
	if strings.Join(d.calls, "|") != strings.Join(want, "|") {
		t.Errorf("daemon saw\n%q\nwant\n%q", d.calls, want)
	}
	d.mu.Unlock()
	for _, args := range [][]string{{"create", "d9", "vdisk"}, {"delete"}, {"create", "a", "vdisk", "size=1G", "--hw-max-sectors", "-1"}} {
		if _, _, err := vsctl(t, append(args, s)...); !isUsage(err) {
			t.Errorf("%v: %v, want a usage error", args, err)
		}
	}
}

func TestLibraryCommands(t *testing.T) {
	d := startFakeDaemon(t)
	s := "--socket=" + d.socket
	out := mustRun(t, "library", "status", "lib0", s)
	want := `lib0: generic, serial LIBS0; 1 drives, 2 slots, 1 mail slots
ELEMENT  ADDRESS  BARCODE              FROM   DEVICE
drive0   0x0001   A00002L8             slot2  tape0
slot1    0x1000   A00001L8                    
slot2    0x1001   -                           
mail1    0x0010   A00003L8 (imported)         
outside the library (exported): X00001L8
`
	want = strings.Replace(want, "LIBS0", "LIB0S", 1)
	if out != want {
		t.Errorf("library status:\n%s\nwant:\n%s", out, want)
	}
	if out := mustRun(t, "library", "status", "lib0", "--json", s); !strings.Contains(out, `"device": "tape0"`) {
		t.Errorf("library status --json: %s", out)
	}
	if out := mustRun(t, "library", "move", "lib0", "slot3", "mail2", s); out != "lib0: moved slot3 to mail2\n" {
		t.Errorf("move said %q", out)
	}
	if _, _, err := vsctl(t, "library", "move", "lib0", "slot1", "drive0", s); err == nil || !strings.Contains(err.Error(), "MEDIUM DESTINATION ELEMENT FULL") {
		t.Errorf("move into a full drive: %v", err)
	}
	if out := mustRun(t, "library", "import", "lib0", "B00001L8", s); out != "lib0: B00001L8 imported into mail2\n" {
		t.Errorf("import said %q", out)
	}
	if out := mustRun(t, "library", "export", "lib0", "mail2", s); out != "lib0: B00001L8 exported from mail2\n" {
		t.Errorf("export said %q", out)
	}
	for _, args := range [][]string{
		{"library", "move", "lib0", "slot0", "mail1"},
		{"library", "move", "lib0", "slot1", "drive"},
		{"library", "move", "lib0", "slot01", "mail1"},
		{"library", "move", "lib0", "tray1", "mail1"},
		{"library", "export", "lib0", "slot1"},
		{"library", "status"},
	} {
		if _, _, err := vsctl(t, append(args, s)...); !isUsage(err) {
			t.Errorf("%q: %v, want a usage error", args, err)
		}
	}
	want2 := []string{
		`POST /v1/libraries/lib0/move {"from":{"type":"storage","index":2},"to":{"type":"mail","index":1}}`,
		`POST /v1/libraries/lib0/move {"from":{"type":"storage","index":0},"to":{"type":"drive","index":0}}`,
		`POST /v1/libraries/lib0/import {"barcode":"B00001L8"}`,
		`POST /v1/libraries/lib0/export {"index":1}`,
	}
	d.mu.Lock()
	defer d.mu.Unlock()
	if strings.Join(d.calls, "\n") != strings.Join(want2, "\n") {
		t.Errorf("calls:\n%s\nwant:\n%s", strings.Join(d.calls, "\n"), strings.Join(want2, "\n"))
	}
}

func TestMediaCreateCount(t *testing.T) {
	dir := t.TempDir()
	out := mustRun(t, "media", "create", "--dir", dir, "--barcode", "A00009L8", "--count", "3", "--capacity", "8MiB")
	if out != "created "+filepath.Join(dir, "A00009L8.vtape")+"\ncreated "+filepath.Join(dir, "A00010L8.vtape")+"\ncreated "+filepath.Join(dir, "A00011L8.vtape")+"\n" {
		t.Errorf("create --count said %q", out)
	}
	if _, _, err := vsctl(t, "media", "create", "--dir", dir, "--barcode", "A00005L8", "--count", "5"); !errors.Is(err, cartridge.ErrExists) || !strings.Contains(err.Error(), "A00009L8") {
		t.Errorf("overlapping --count: %v", err)
	}
	if _, err := os.Stat(filepath.Join(dir, "A00005L8.vtape")); err == nil {
		t.Error("a refused --count created cartridges")
	}
	if _, _, err := vsctl(t, "media", "create", "--dir", dir, "--barcode", "A99", "--count", "2"); !isUsage(err) {
		t.Errorf("--count past the digits: %v", err)
	}
}

// Bad cartridge options are refused with a usage error before anything is
// written: an empty --dir (it would be the current directory), --capacity
// 0 (it silently meant the default), an early warning over a quarter of
// the capacity (it was stored while the partition used a quarter).
func TestMediaCreateRefuses(t *testing.T) {
	t.Chdir(t.TempDir())
	dir := t.TempDir()
	for _, tt := range []struct {
		args  []string
		usage bool
		want  string
	}{
		{[]string{"--dir", "", "--barcode", "D1"}, true, "--dir is empty"},
		{[]string{"--dir", dir, "--barcode", "D1", "--capacity", "0"}, true, "--capacity 0"},
		{[]string{"--dir", dir, "--barcode", "D1", "--capacity", "2GiB", "--early-warning", "513MiB"}, false, "more than a quarter"},
	} {
		_, _, err := vsctl(t, append([]string{"media", "create"}, tt.args...)...)
		if err == nil || isUsage(err) != tt.usage || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("media create %v: %v, want %q (usage error %v)", tt.args, err, tt.want, tt.usage)
		}
	}
	for _, d := range []string{".", dir} {
		if ents, _ := os.ReadDir(d); len(ents) != 0 {
			t.Errorf("refused creates left %v in %s", ents, d)
		}
	}
}
