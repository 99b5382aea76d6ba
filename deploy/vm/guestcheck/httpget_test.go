package main

import (
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

func TestHTTPGet(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/metrics":
			_, _ = w.Write([]byte("go_goroutines 86\n"))
		case "/debug/pprof/heap":
			_, _ = w.Write([]byte("heap " + r.URL.Query().Get("debug")))
		case "/conn":
			// Whether the client asked for Connection: close.
			_, _ = w.Write([]byte(strconv.FormatBool(r.Close)))
		case "/slow":
			time.Sleep(200 * time.Millisecond)
		default:
			http.NotFound(w, r)
		}
	}))
	defer srv.Close()

	var b strings.Builder
	if err := runIn([]string{"http-get", srv.URL + "/metrics"}, nil, &b); err != nil {
		t.Fatal(err)
	}
	if b.String() != "go_goroutines 86\n" {
		t.Errorf("body %q", b.String())
	}
	// Every fetch closes its connection: none lingers in the daemon.
	b.Reset()
	if err := runIn([]string{"http-get", srv.URL + "/conn"}, nil, &b); err != nil || b.String() != "true" {
		t.Errorf("Connection: close sent: %q, %v", b.String(), err)
	}

	// Two files of one moment: both in place, no temporary left.
	d := t.TempDir()
	pb, txt := filepath.Join(d, "peak.pb.gz"), filepath.Join(d, "peak.txt")
	if err := runIn([]string{"http-get", srv.URL + "/debug/pprof/heap", pb, srv.URL + "/debug/pprof/heap?debug=1", txt}, nil, &b); err != nil {
		t.Fatal(err)
	}
	for f, want := range map[string]string{pb: "heap ", txt: "heap 1"} {
		if got, err := os.ReadFile(f); err != nil || string(got) != want {
			t.Errorf("%s: %q, %v; want %q", f, got, err, want)
		}
	}

	// One fetch failing: neither file replaced, no temporary left.
	if err := runIn([]string{"http-get", srv.URL + "/debug/pprof/heap?debug=2", pb, srv.URL + "/nothing", txt}, nil, &b); err == nil || !strings.Contains(err.Error(), "404") {
		t.Errorf("a 404: error %v", err)
	}
	if got, _ := os.ReadFile(pb); string(got) != "heap " {
		t.Errorf("%s replaced after a failed fetch: %q", pb, got)
	}
	if m, _ := filepath.Glob(filepath.Join(d, "*.tmp")); len(m) > 0 {
		t.Errorf("temporaries left: %v", m)
	}

	if err := runIn([]string{"http-get", "-timeout", "50ms", srv.URL + "/slow"}, nil, &b); err == nil {
		t.Error("a fetch past its timeout: no error")
	}
	for _, args := range [][]string{{"http-get"}, {"http-get", srv.URL, pb, srv.URL}, {"http-get", "-timeout", "x", srv.URL}} {
		if err := runIn(args, nil, &b); err == nil {
			t.Errorf("%v: no error", args)
		}
	}
}
