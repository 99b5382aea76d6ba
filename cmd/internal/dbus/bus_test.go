package dbus_test

import (
	"bufio"
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	godbus "github.com/godbus/dbus/v5"
	"go.uber.org/goleak"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// dbusDaemon finds dbus-daemon. Without it the bus tests skip, except in
// CI (CI=true), where a missing daemon is a broken runner.
func dbusDaemon(t *testing.T) string {
	t.Helper()
	p, err := exec.LookPath("dbus-daemon")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("dbus-daemon not found (apt-get install -y dbus): %v", err)
		}
		t.Skipf("dbus-daemon not found (apt-get install -y dbus): %v", err)
	}
	return p
}

// openPolicy lets every connection own any name and call anything: for
// the plumbing tests.
const openPolicy = `
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*" eavesdrop="true"/>
    <allow receive_sender="*"/>
  </policy>`

// bus is a private dbus-daemon, stopped at the end of the test.
type bus struct {
	addr string
	dir  string
}

// startBus runs dbus-daemon with a configuration made of body (policies,
// includes) plus a unix socket listener in a fresh directory that other
// users can reach.
func startBus(t *testing.T, body string) *bus {
	t.Helper()
	daemon := dbusDaemon(t)
	dir, err := os.MkdirTemp("", "vscsid-dbus-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	if err := os.Chmod(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	cfg := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(cfg, []byte(busConfig(dir, body)), 0o644); err != nil {
		t.Fatal(err)
	}
	addr, stop, err := runDaemon(daemon, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(stop)
	return &bus{addr: addr, dir: dir}
}

func busConfig(dir, body string) string {
	return `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path=` + filepath.Join(dir, "bus.sock") + `</listen>
  <auth>EXTERNAL</auth>
` + body + `
</busconfig>
`
}

// runDaemon starts dbus-daemon on cfg and returns its address once it
// listens, or its complaint if it refuses the configuration.
func runDaemon(daemon, cfg string) (addr string, stop func(), err error) {
	cmd := exec.Command(daemon, "--config-file="+cfg, "--nofork", "--nopidfile", "--nosyslog", "--print-address")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		return "", nil, err
	}
	if err := cmd.Start(); err != nil {
		return "", nil, fmt.Errorf("start dbus-daemon: %w", err)
	}
	var once sync.Once
	stop = func() {
		once.Do(func() {
			_ = cmd.Process.Kill()
			_ = cmd.Wait()
		})
	}
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case addr = <-line:
	case <-time.After(10 * time.Second):
	}
	if addr == "" {
		stop()
		return "", nil, fmt.Errorf("dbus-daemon did not start: %s", strings.TrimSpace(stderr.String()))
	}
	return addr, stop, nil
}

// connect opens a client connection, closed at the end of the test.
func (b *bus) connect(t *testing.T) *godbus.Conn {
	t.Helper()
	c, err := godbus.Connect(b.addr)
	if err != nil {
		t.Fatalf("connect to %s: %v", b.addr, err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func hasOwner(t *testing.T, c *godbus.Conn, name string) bool {
	t.Helper()
	var has bool
	if err := c.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, name).Store(&has); err != nil {
		t.Fatalf("NameHasOwner(%s): %v", name, err)
	}
	return has
}
