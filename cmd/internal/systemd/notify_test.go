package systemd_test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/vscsid/vscsid/cmd/internal/systemd"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// listen plays systemd: a datagram socket at addr, set as NOTIFY_SOCKET.
func listen(t *testing.T, addr string) *net.UnixConn {
	t.Helper()
	c, err := net.ListenUnixgram("unixgram", &net.UnixAddr{Name: addr, Net: "unixgram"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	t.Setenv("NOTIFY_SOCKET", addr)
	return c
}

func recv(t *testing.T, c *net.UnixConn, timeout time.Duration) (string, bool) {
	t.Helper()
	buf := make([]byte, 4096)
	_ = c.SetReadDeadline(time.Now().Add(timeout))
	n, err := c.Read(buf)
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return "", false
	}
	if err != nil {
		t.Fatal(err)
	}
	return string(buf[:n]), true
}

func TestNotify(t *testing.T) {
	for _, tc := range []struct {
		name string
		addr func(t *testing.T) string
	}{
		{"path", func(t *testing.T) string { return filepath.Join(t.TempDir(), "notify") }},
		{"abstract", func(*testing.T) string { return fmt.Sprintf("@vscsid-sdnotify-test-%d", os.Getpid()) }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			c := listen(t, tc.addr(t))
			for _, step := range []struct {
				send func() error
				want string
			}{
				{systemd.Ready, "READY=1"},
				{func() error { return systemd.Status("serving 2 devices") }, "STATUS=serving 2 devices"},
				{systemd.Stopping, "STOPPING=1"},
				{func() error { return systemd.Notify("READY=1", "STATUS=up") }, "READY=1\nSTATUS=up"},
			} {
				if err := step.send(); err != nil {
					t.Fatal(err)
				}
				got, ok := recv(t, c, 2*time.Second)
				if !ok || got != step.want {
					t.Errorf("received %q (ok %v), want %q", got, ok, step.want)
				}
			}
		})
	}
}

func TestNotifyOutsideSystemd(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", "")
	if err := systemd.Ready(); err != nil {
		t.Errorf("Ready without NOTIFY_SOCKET = %v, want nil", err)
	}
}

func TestNotifyErrors(t *testing.T) {
	listen(t, filepath.Join(t.TempDir(), "notify"))
	if err := systemd.Notify("STATUS=two\nlines"); err == nil {
		t.Error("state with a newline accepted")
	}
	if err := systemd.Notify("READY"); err == nil {
		t.Error("state without '=' accepted")
	}
	t.Setenv("NOTIFY_SOCKET", "vsock:2:1234")
	if err := systemd.Ready(); err == nil || !strings.Contains(err.Error(), "unsupported") {
		t.Errorf("vsock address: %v, want unsupported", err)
	}
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "gone"))
	if err := systemd.Ready(); err == nil {
		t.Error("sending to a missing socket succeeded")
	}
}

func TestWatchdogInterval(t *testing.T) {
	me := strconv.Itoa(os.Getpid())
	for _, tc := range []struct {
		usec, pid string
		want      time.Duration
		err       bool
	}{
		{"", "", 0, false},
		{"30000000", "", 30 * time.Second, false},
		{"30000000", me, 30 * time.Second, false},
		{"30000000", "1", 0, false}, // inherited from a parent: not ours
		{"30000000", "x", 0, true},
		{"0", "", 0, true},
		{"-5", "", 0, true},
		{"30s", "", 0, true},
	} {
		t.Setenv("WATCHDOG_USEC", tc.usec)
		t.Setenv("WATCHDOG_PID", tc.pid)
		got, err := systemd.WatchdogInterval()
		if got != tc.want || (err != nil) != tc.err {
			t.Errorf("WATCHDOG_USEC=%q WATCHDOG_PID=%q: %v, %v; want %v, error %v", tc.usec, tc.pid, got, err, tc.want, tc.err)
		}
	}
}

// Pings arrive while the loop beats, stop when it stops, and resume with it.
func TestWatchdogFollowsBeats(t *testing.T) {
	c := listen(t, filepath.Join(t.TempDir(), "notify"))
	const interval = 100 * time.Millisecond // pings every 50ms
	w := systemd.NewWatchdog(interval, func(err error) { t.Errorf("ping failed: %v", err) })
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	wg.Go(func() {
		if err := w.Run(ctx); err != nil {
			t.Errorf("Run = %v", err)
		}
	})
	defer func() { cancel(); wg.Wait() }()

	var beating atomic.Bool
	beating.Store(true)
	wg.Go(func() { // the main loop
		tick := time.NewTicker(5 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
				if beating.Load() {
					w.Beat()
				}
			}
		}
	})

	countPings := func(d time.Duration) int {
		n := 0
		for end := time.Now().Add(d); time.Until(end) > 0; {
			msg, ok := recv(t, c, time.Until(end))
			if !ok {
				break
			}
			if msg != "WATCHDOG=1" {
				t.Fatalf("received %q, want WATCHDOG=1", msg)
			}
			n++
		}
		return n
	}
	if n := countPings(500 * time.Millisecond); n < 4 {
		t.Fatalf("%d pings in 500ms while beating every 5ms, want about 10", n)
	}
	beating.Store(false)              // the loop hangs
	countPings(60 * time.Millisecond) // at most one ping for a beat just before
	if n := countPings(300 * time.Millisecond); n != 0 {
		t.Fatalf("%d pings in 300ms after the loop stopped beating, want 0", n)
	}
	beating.Store(true)
	if n := countPings(300 * time.Millisecond); n < 2 {
		t.Fatalf("%d pings in 300ms after beats resumed, want about 6", n)
	}
}

func TestWatchdogDisabled(t *testing.T) {
	done := make(chan error, 1)
	go func() { done <- systemd.NewWatchdog(0, nil).Run(context.Background()) }()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(time.Second):
		t.Fatal("Run with a 0 interval did not return")
	}
}

// A failing ping is reported once per run of failures and does not stop
// Run.
func TestWatchdogPingFails(t *testing.T) {
	t.Setenv("NOTIFY_SOCKET", filepath.Join(t.TempDir(), "gone"))
	var errs atomic.Int32
	w := systemd.NewWatchdog(20*time.Millisecond, func(error) { errs.Add(1) })
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	stop := make(chan struct{})
	go func() {
		for {
			select {
			case <-stop:
				return
			default:
				w.Beat()
				time.Sleep(time.Millisecond)
			}
		}
	}()
	err := w.Run(ctx)
	close(stop)
	if err != nil {
		t.Fatalf("Run = %v, want nil after ctx is done", err)
	}
	if n := errs.Load(); n != 1 {
		t.Errorf("onError called %d times for one run of failures, want 1", n)
	}
}
