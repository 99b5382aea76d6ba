// Package systemd is what the daemon asks of and tells systemd: the
// notify protocol (sd_notify(3)) and service watchdog
// (sd_watchdog_enabled(3)), and the job systemd runs on the unit (job.go).
//
// Notify and the watchdog build on github.com/coreos/go-systemd/v22/daemon,
// which sends the datagrams to $NOTIFY_SOCKET (a path or, with a leading
// '@', an abstract socket) and reads WATCHDOG_USEC/WATCHDOG_PID. What this
// package adds: states are checked before they are sent, an address
// go-systemd cannot dial is named as such, and a Watchdog that pings only
// while the main loop beats (go-systemd leaves the pinging to the caller).
//
// Outside systemd (no NOTIFY_SOCKET), every notification is a no-op that
// returns nil, so the daemon needs no special case when run by hand.
package systemd

import (
	"context"
	"fmt"
	"os"
	"strings"
	"sync/atomic"
	"time"

	"github.com/coreos/go-systemd/v22/daemon"
)

// Ready tells systemd that start-up is finished: a Type=notify unit leaves
// "activating", units ordered after it start, and the watchdog timer
// starts. To send a status along: Notify("READY=1", "STATUS=...").
func Ready() error { return Notify(daemon.SdNotifyReady) }

// Stopping tells systemd that the daemon is shutting down.
func Stopping() error { return Notify(daemon.SdNotifyStopping) }

// Status sets the one-line status systemctl status shows.
func Status(s string) error { return Notify("STATUS=" + s) }

// Notify sends the given NAME=value assignments, newline-separated, in one
// datagram. A value must not contain a newline. With no NOTIFY_SOCKET it
// does nothing and returns nil.
func Notify(states ...string) error {
	addr := os.Getenv("NOTIFY_SOCKET")
	if addr == "" {
		return nil
	}
	for _, s := range states {
		if strings.ContainsRune(s, '\n') || !strings.Contains(s, "=") {
			return fmt.Errorf("sd_notify: malformed state %q", s)
		}
	}
	if !strings.HasPrefix(addr, "/") && !strings.HasPrefix(addr, "@") {
		// systemd ≥ 254 also offers vsock: addresses, for VMs; go-systemd
		// dials only unix sockets.
		return fmt.Errorf("sd_notify: unsupported NOTIFY_SOCKET %q", addr)
	}
	if _, err := daemon.SdNotify(false, strings.Join(states, "\n")); err != nil {
		return fmt.Errorf("sd_notify: %w", err)
	}
	return nil
}

// WatchdogInterval returns the watchdog timeout systemd expects pings
// within (WatchdogSec=, passed as WATCHDOG_USEC), or 0 if the watchdog is
// off for this process: unset, or WATCHDOG_PID names another process (the
// variables were inherited). A malformed value is an error.
func WatchdogInterval() (time.Duration, error) {
	d, err := daemon.SdWatchdogEnabled(false)
	if err != nil {
		return 0, fmt.Errorf("sd_watchdog: %w", err)
	}
	return d, nil
}

// A Watchdog pings systemd's service watchdog only while the daemon's main
// loop shows it is alive. The loop calls Beat on every iteration (at least
// once per interval/2); Run sends WATCHDOG=1 every interval/2, but only if
// Beat was called since the previous ping. A loop that hangs stops the
// pings, and systemd kills and restarts the service after WatchdogSec.
//
// Concurrency: Beat may be called from any goroutine, concurrently with
// Run; it is one atomic store. Run is called once, by an owner that can
// cancel its context.
type Watchdog struct {
	interval time.Duration
	onError  func(error)
	beat     atomic.Bool
}

// NewWatchdog returns a Watchdog for the given timeout (from
// WatchdogInterval); 0 makes Run return at once. onError, if not nil, is
// called from Run's goroutine when a ping fails, once per run of failures.
func NewWatchdog(interval time.Duration, onError func(error)) *Watchdog {
	return &Watchdog{interval: interval, onError: onError}
}

// Beat records that the main loop is alive.
func (w *Watchdog) Beat() { w.beat.Store(true) }

// Interval returns the watchdog timeout the Watchdog was made with.
func (w *Watchdog) Interval() time.Duration { return w.interval }

// Run pings until ctx is done, then returns nil; with a 0 interval it
// returns nil at once. A failed ping is reported to onError and Run goes
// on: the next one may succeed, and a daemon serving LUNs must not stop
// over its watchdog (if pings keep failing, systemd acts on it).
func (w *Watchdog) Run(ctx context.Context) error {
	if w.interval <= 0 {
		return nil
	}
	t := time.NewTicker(w.interval / 2)
	defer t.Stop()
	failing := false
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if !w.beat.Swap(false) {
			continue // the loop has not run since the last ping: let systemd notice
		}
		err := Notify(daemon.SdNotifyWatchdog)
		if err != nil && !failing && w.onError != nil {
			w.onError(err)
		}
		failing = err != nil
	}
}
