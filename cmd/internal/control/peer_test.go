package control

import (
	"context"
	"encoding/json"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"runtime"
	"testing"
)

// The kernel's SO_PEERCRED of a real unix socket connection names this
// process.
func TestPeerCred(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("SO_PEERCRED is Linux's")
	}
	path := filepath.Join(t.TempDir(), "s")
	l, err := net.Listen("unix", path)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = l.Close() }()
	go func() {
		if c, err := net.Dial("unix", path); err == nil {
			defer func() { _ = c.Close() }()
			_, _ = c.Read(make([]byte, 1))
		}
	}()
	c, err := l.Accept()
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = c.Close() }()
	p, _ := withPeer(context.Background(), c).Value(peerKey{}).(peer)
	if !p.known || p.uid != uint32(os.Geteuid()) || p.pid != int32(os.Getpid()) {
		t.Errorf("peer %+v, want uid %d pid %d", p, os.Geteuid(), os.Getpid())
	}
}

// Only root and the daemon's user are answered; a peer the platform
// cannot identify is left to the socket's mode.
func TestAllowPeers(t *testing.T) {
	const daemon = 999
	h := allowPeers(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusNoContent) }), daemon)
	for _, tt := range []struct {
		p    peer
		want int
	}{
		{peer{uid: 0, known: true}, http.StatusNoContent},
		{peer{uid: daemon, known: true}, http.StatusNoContent},
		{peer{uid: 1000, pid: 42, known: true}, http.StatusForbidden},
		{peer{uid: 1000}, http.StatusNoContent}, // unknown
	} {
		r := httptest.NewRequest("GET", "/v1/devices", nil)
		r = r.WithContext(context.WithValue(r.Context(), peerKey{}, tt.p))
		w := httptest.NewRecorder()
		h.ServeHTTP(w, r)
		if w.Code != tt.want {
			t.Errorf("peer %+v: status %d, want %d", tt.p, w.Code, tt.want)
		}
		if tt.want == http.StatusForbidden {
			var e Error
			if err := json.Unmarshal(w.Body.Bytes(), &e); err != nil || e.Errno != "EPERM" {
				t.Errorf("refusal %q: errno %q, %v", w.Body.String(), e.Errno, err)
			}
		}
	}
}
