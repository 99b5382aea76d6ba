//go:build linux

package netlink_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/target/netlink"
)

// TestKernel runs against the real target_core_user: it creates a user
// backstore through configfs and answers the kernel's events. It changes
// module-global state (SET_FEATURES, block_netlink), so it runs only when
// VSCSID_KERNEL_TESTS=1, as root, in a disposable VM (deploy/vm).
func TestKernel(t *testing.T) {
	if os.Getenv("VSCSID_KERNEL_TESTS") != "1" {
		t.Skip("set VSCSID_KERNEL_TESTS=1 to run against the kernel (disposable VM only)")
	}
	if os.Geteuid() != 0 {
		t.Skip("needs root")
	}
	const (
		core   = "/sys/kernel/config/target/core"
		params = "/sys/module/target_core_user/parameters"
	)
	if _, err := os.Stat(core); err != nil {
		t.Skipf("no configfs target core: %v", err)
	}
	c, err := netlink.Dial()
	if err != nil {
		t.Fatalf("Dial: %v", err)
	}
	defer func() { _ = c.Close() }()
	if err := c.SetFeatures(true); err != nil {
		t.Fatalf("SetFeatures: %v", err)
	}
	defer func() { _ = c.SetFeatures(false) }()

	hba := filepath.Join(core, "user_97")
	dev := filepath.Join(hba, "nltest")
	// Whatever happens, never leave a configfs write blocked on a reply:
	// fail pending commands (reset_netlink needs block_netlink).
	defer func() {
		_ = os.WriteFile(filepath.Join(params, "block_netlink"), []byte("1"), 0)
		_ = os.WriteFile(filepath.Join(params, "reset_netlink"), []byte("1"), 0)
		_ = os.WriteFile(filepath.Join(params, "block_netlink"), []byte("0"), 0)
		_ = os.Remove(dev)
		_ = os.Remove(hba)
	}()
	for _, d := range []string{hba, dev} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	for _, tok := range []string{"dev_config=vtest/x=1", "dev_size=1048576"} {
		if err := os.WriteFile(filepath.Join(dev, "control"), []byte(tok), 0); err != nil {
			t.Fatalf("control %s: %v", tok, err)
		}
	}

	// write performs a configfs write that waits for our reply.
	write := func(path, value string) <-chan error {
		ch := make(chan error, 1)
		go func() { ch <- os.WriteFile(path, []byte(value), 0) }()
		return ch
	}
	next := func() netlink.Event {
		t.Helper()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		ev, err := c.Receive(ctx)
		if err != nil {
			t.Fatalf("Receive: %v", err)
		}
		return ev
	}
	done := func(ch <-chan error) error {
		t.Helper()
		select {
		case err := <-ch:
			return err
		case <-time.After(10 * time.Second):
			t.Fatal("configfs write still blocked after the reply")
			return nil
		}
	}

	enabled := write(filepath.Join(dev, "enable"), "1")
	ev := next()
	added, ok := ev.(netlink.Added)
	if !ok {
		t.Fatalf("first event %#v, want Added", ev)
	}
	hbaN, name, subtype, cfg, err := netlink.ParseDeviceName(added.DeviceName)
	if err != nil || hbaN != 97 || name != "nltest" || subtype != "vtest" || cfg != "x=1" || added.DeviceID == 0 || added.Version < 2 {
		t.Fatalf("Added %+v parses as %d %q %q %q %v", added, hbaN, name, subtype, cfg, err)
	}
	if b, err := os.ReadFile("/sys/class/uio/" + added.UIO() + "/name"); err != nil || string(b) != added.DeviceName+"\n" {
		t.Errorf("/sys/class/uio/%s/name = %q, %v; want %q", added.UIO(), b, err, added.DeviceName)
	}
	if err := c.Reply(added, 0); err != nil {
		t.Fatalf("Reply(Added): %v", err)
	}
	if err := done(enabled); err != nil {
		t.Fatalf("enable: %v", err)
	}
	// A second reply finds nobody waiting.
	if err := c.Reply(added, 0); !errors.Is(err, netlink.ErrNotPending) {
		t.Errorf("second Reply = %v, want ErrNotPending", err)
	}

	// A refused reconfiguration fails the attribute write with our status.
	resized := write(filepath.Join(dev, "attrib", "dev_size"), "2097152")
	ev = next()
	rc, ok := ev.(netlink.Reconfig)
	if !ok || rc.DevSize == nil || *rc.DevSize != 2097152 || rc.DeviceID != added.DeviceID {
		t.Fatalf("event %#v, want Reconfig with DevSize 2097152", ev)
	}
	if err := c.Reply(rc, -int32(unix.EOPNOTSUPP)); err != nil {
		t.Fatalf("Reply(Reconfig): %v", err)
	}
	if err := done(resized); !errors.Is(err, unix.EOPNOTSUPP) {
		t.Errorf("dev_size write = %v, want EOPNOTSUPP", err)
	}

	removed := make(chan error, 1)
	go func() { removed <- os.Remove(dev) }()
	ev = next()
	if r, ok := ev.(netlink.Removed); !ok || r.DeviceID != added.DeviceID {
		t.Fatalf("event %#v, want Removed", ev)
	}
	if err := c.Reply(ev, 0); err != nil {
		t.Fatalf("Reply(Removed): %v", err)
	}
	if err := done(removed); err != nil {
		t.Fatalf("rmdir: %v", err)
	}
}
