package main

import (
	"bufio"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	godbus "github.com/godbus/dbus/v5"
	"go.uber.org/zap/zaptest"
)

// privateBus runs a dbus-daemon that lets anyone own and call anything and
// points DBUS_SYSTEM_BUS_ADDRESS at it.
func privateBus(t *testing.T) string {
	t.Helper()
	daemon, err := exec.LookPath("dbus-daemon")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("dbus-daemon not found (apt-get install -y dbus): %v", err)
		}
		t.Skipf("dbus-daemon not found (apt-get install -y dbus): %v", err)
	}
	dir, err := os.MkdirTemp("", "vsc-bus")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(dir) })
	conf := `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <type>custom</type>
  <listen>unix:dir=` + dir + `</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>`
	cfg := filepath.Join(dir, "bus.conf")
	if err := os.WriteFile(cfg, []byte(conf), 0o600); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(daemon, "--config-file="+cfg, "--nofork", "--print-address=1")
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() }) // Wait reports the kill
	line := make(chan string, 1)
	go func() {
		s, _ := bufio.NewReader(out).ReadString('\n')
		line <- strings.TrimSpace(s)
	}()
	select {
	case addr := <-line:
		t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", addr)
		return addr
	case <-time.After(10 * time.Second):
		t.Fatal("dbus-daemon printed no address")
	}
	return ""
}

func TestDBusForTargetcli(t *testing.T) {
	addr := privateBus(t)
	reg, _ := newTestDrive(t)
	log := zaptest.NewLogger(t)
	stop, err := startDBus(context.Background(), "on", reg.daemon(t), log)
	if err != nil {
		t.Fatal(err)
	}
	defer stop()
	conn, err := godbus.Connect(addr)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = conn.Close() }()
	// What targetcli does: list the handlers, check a cfgstring, change
	// the medium.
	var objs map[godbus.ObjectPath]map[string]map[string]godbus.Variant
	if err := conn.Object("org.kernel.TCMUService1", "/org/kernel/TCMUService1").
		Call("org.freedesktop.DBus.ObjectManager.GetManagedObjects", 0).Store(&objs); err != nil {
		t.Fatal(err)
	}
	if _, ok := objs["/org/kernel/TCMUService1/vlibrary"]; !ok || len(objs) != 3 {
		t.Fatalf("managed objects %v", objs)
	}
	vt := conn.Object("org.kernel.TCMUService1", "/org/kernel/TCMUService1/vtape")
	var ok bool
	var msg string
	if err := vt.Call("org.kernel.TCMUService1.CheckConfig", 0, "vtape/media=/x;colour=red").Store(&ok, &msg); err != nil || ok || !strings.Contains(msg, "colour") {
		t.Errorf("CheckConfig of a bad cfgstring: %v %q %v", ok, msg, err)
	}
	var rc int32
	if err := vt.Call("org.kernel.TCMUService1.ChangeMedium", 0, "tape0", uint64(0), "vtape/barcode=B2").Store(&rc, &msg); err != nil || rc != 0 {
		t.Fatalf("ChangeMedium: %d %q %v", rc, msg, err)
	}
	if d, _ := reg.daemon(t).drive("tape0"); d.Stats().Barcode != "B2" {
		t.Errorf("drive holds %q after ChangeMedium", d.Stats().Barcode)
	}
	if err := vt.Call("org.kernel.TCMUService1.ChangeMedium", 0, "tape9", uint64(0), "vtape/barcode=B2").Store(&rc, &msg); err != nil || rc != -19 {
		t.Errorf("ChangeMedium of a missing device: %d %q %v, want -ENODEV", rc, msg, err)
	}
}

func TestDBusModes(t *testing.T) {
	t.Setenv("DBUS_SYSTEM_BUS_ADDRESS", "unix:path=/nonexistent/bus")
	log := zaptest.NewLogger(t)
	reg := &testRegistry{}
	if stop, err := startDBus(context.Background(), "auto", reg.daemon(t), log); err != nil {
		t.Errorf("auto without a bus: %v", err)
	} else {
		stop()
	}
	if _, err := startDBus(context.Background(), "on", reg.daemon(t), log); err == nil || !strings.Contains(err.Error(), "--dbus=on") {
		t.Errorf("on without a bus: %v", err)
	}
	if stop, err := startDBus(context.Background(), "off", reg.daemon(t), log); err != nil {
		t.Errorf("off: %v", err)
	} else {
		stop()
	}
}
