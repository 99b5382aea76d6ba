package dbus_test

import (
	"context"
	"encoding/xml"
	"errors"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall" //nolint:depguard // os/exec.Cmd.SysProcAttr is a *syscall.SysProcAttr
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/cmd/internal/dbus"
)

const policyFile = "../../../deploy/dbus/org.kernel.TCMUService1.conf"

// systemPolicy is the default context of Debian's /usr/share/dbus-1/system.conf
// (dbus 1.14): nobody owns names or calls methods unless a service file
// punches a hole. The service policy under test is included after it, as
// system.d files are.
func systemPolicy(t *testing.T, include string) string {
	abs, err := filepath.Abs(include)
	if err != nil {
		t.Fatal(err)
	}
	return `
  <policy context="default">
    <allow user="*"/>
    <deny own="*"/>
    <deny send_type="method_call"/>
    <allow send_type="signal"/>
    <allow send_requested_reply="true" send_type="method_return"/>
    <allow send_requested_reply="true" send_type="error"/>
    <allow receive_type="method_call"/>
    <allow receive_type="method_return"/>
    <allow receive_type="error"/>
    <allow receive_type="signal"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus"/>
    <allow send_destination="org.freedesktop.DBus" send_interface="org.freedesktop.DBus.Introspectable"/>
  </policy>
  <include>` + abs + `</include>`
}

// TestPolicyWellFormed checks the policy without a bus: XML with the
// busconfig DOCTYPE, made only of the elements and attributes it uses.
func TestPolicyWellFormed(t *testing.T) {
	b, err := os.ReadFile(policyFile)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"`) {
		t.Error("no busconfig DOCTYPE")
	}
	d := xml.NewDecoder(strings.NewReader(string(b)))
	allowed := map[string][]string{
		"busconfig": nil,
		"policy":    {"user", "context"},
		"allow":     {"own", "own_prefix", "send_destination"},
		"deny":      {"own", "own_prefix", "send_destination"},
	}
	var root string
	for {
		tok, err := d.Token()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("not well-formed XML: %v", err)
		}
		se, ok := tok.(xml.StartElement)
		if !ok {
			continue
		}
		if root == "" {
			root = se.Name.Local
		}
		attrs, known := allowed[se.Name.Local]
		if !known {
			t.Errorf("unexpected element <%s>", se.Name.Local)
			continue
		}
		for _, a := range se.Attr {
			if !strings.Contains(" "+strings.Join(attrs, " ")+" ", " "+a.Name.Local+" ") {
				t.Errorf("unexpected attribute %s on <%s>", a.Name.Local, se.Name.Local)
			}
		}
	}
	if root != "busconfig" {
		t.Errorf("root element <%s>, want <busconfig>", root)
	}
}

// TestPolicyRejectedByDaemon shows the daemon check can fail: dbus-daemon
// refuses a policy with a misspelt attribute.
func TestPolicyRejectedByDaemon(t *testing.T) {
	daemon := dbusDaemon(t)
	dir := t.TempDir()
	cfg := filepath.Join(dir, "bus.conf")
	abs, _ := filepath.Abs("testdata/policy.bad.conf")
	if err := os.WriteFile(cfg, []byte(busConfig(dir, openPolicy+"\n  <include>"+abs+"</include>")), 0o644); err != nil {
		t.Fatal(err)
	}
	_, stop, err := runDaemon(daemon, cfg)
	if err == nil {
		stop()
		t.Fatal("dbus-daemon accepted testdata/policy.bad.conf")
	}
	if !strings.Contains(err.Error(), "send_destinaton") {
		t.Errorf("dbus-daemon refused it for another reason: %v", err)
	}
}

// TestPolicy loads deploy/dbus/org.kernel.TCMUService1.conf into a bus
// with the system bus defaults and checks who may do what: root owns and
// serves both the service and, next to tcmu-runner, the HandlerManager1
// names; any other user may neither own them nor call them.
func TestPolicy(t *testing.T) {
	b := startBus(t, systemPolicy(t, policyFile)) // fails if dbus-daemon rejects the file
	if os.Geteuid() != 0 {
		// Only the "others" half can be checked.
		c := b.connect(t)
		_, err := dbus.New(context.Background(), c, handlers(&recorder{}, &recorder{}), zaptest.NewLogger(t))
		if err == nil || !strings.Contains(err.Error(), "AccessDenied") && !strings.Contains(err.Error(), "not allowed") {
			t.Fatalf("New as uid %d = %v, want access denied", os.Geteuid(), err)
		}
		t.Skip("not root: the root half of the policy is not checked")
	}

	// Root serves targetcli directly.
	s := newService(t, b.connect(t), handlers(&recorder{}, &recorder{}), zaptest.NewLogger(t))
	if s.Mode() != dbus.Primary {
		t.Fatalf("Mode = %v", s.Mode())
	}
	var ok bool
	var msg string
	call(t, b.connect(t), dbus.ServiceName, dbus.RootPath+"/vdisk", "org.kernel.TCMUService1.CheckConfig", []any{"vdisk/size=1G"}, &ok, &msg)
	if !ok {
		t.Fatalf("root CheckConfig = %v, %q", ok, msg)
	}

	nobody := asNobody(t, b)
	// Control: the unprivileged client does reach the bus.
	if out, err := nobody("--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.GetId"); err != nil {
		t.Fatalf("nobody cannot use the bus at all: %v\n%s", err, out)
	}
	for _, c := range [][]string{
		{"--dest=org.kernel.TCMUService1", "/org/kernel/TCMUService1", "org.freedesktop.DBus.ObjectManager.GetManagedObjects"},
		{"--dest=org.kernel.TCMUService1", "/org/kernel/TCMUService1/vtape", "org.kernel.TCMUService1.ChangeMedium", "string:tape0", "uint64:0", "string:vtape/x"},
		{"--dest=org.kernel.TCMUService1", "/org/kernel/TCMUService1/vtape", "org.freedesktop.DBus.Introspectable.Introspect"},
		{"--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.RequestName", "string:org.kernel.TCMUService1.HandlerManager1.vtape", "uint32:4"},
	} {
		if out, err := nobody(c...); err == nil || !strings.Contains(out, "AccessDenied") {
			t.Errorf("nobody %s: %v\n%s\nwant AccessDenied", strings.Join(c[1:], " "), err, out)
		}
	}
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}
	if out, err := nobody("--dest=org.freedesktop.DBus", "/org/freedesktop/DBus", "org.freedesktop.DBus.RequestName", "string:org.kernel.TCMUService1", "uint32:4"); err == nil || !strings.Contains(out, "AccessDenied") {
		t.Errorf("nobody could ask for org.kernel.TCMUService1: %v\n%s", err, out)
	}

	// Next to tcmu-runner (root): the HandlerManager1 names, and
	// tcmu-runner forwarding CheckConfig to them.
	startRunner(t, b)
	rs := newService(t, b.connect(t), handlers(&recorder{}, &recorder{}), zaptest.NewLogger(t))
	if rs.Mode() != dbus.Registered {
		t.Fatalf("Mode = %v, want registered", rs.Mode())
	}
	call(t, b.connect(t), dbus.HandlerManagerNamePrefix+"vtape", dbus.HandlerManagerPath+"/vtape", "org.kernel.TCMUService1.CheckConfig", []any{"vtape/size=1G"}, &ok, &msg)
	if !ok {
		t.Fatalf("forwarded CheckConfig = %v, %q", ok, msg)
	}
	if out, err := nobody("--dest=org.kernel.TCMUService1.HandlerManager1.vtape", "/org/kernel/TCMUService1/HandlerManager1/vtape",
		"org.kernel.TCMUService1.CheckConfig", "string:vtape/size=1G"); err == nil || !strings.Contains(out, "AccessDenied") {
		t.Errorf("nobody called the registered handler: %v\n%s", err, out)
	}
}

// asNobody returns a function that runs dbus-send on b as uid/gid 65534.
func asNobody(t *testing.T, b *bus) func(args ...string) (string, error) {
	t.Helper()
	send, err := exec.LookPath("dbus-send")
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("dbus-send not found (apt-get install -y dbus-bin): %v", err)
		}
		t.Skipf("dbus-send not found: %v", err)
	}
	return func(args ...string) (string, error) {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		cmd := exec.CommandContext(ctx, send, append([]string{"--bus=" + b.addr, "--print-reply"}, args...)...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: 65534, Gid: 65534}}
		cmd.Dir = "/"
		cmd.Env = []string{"PATH=/usr/bin:/bin"}
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
}

// tcmuRunnerPolicy is the default-context part of the policy Debian's
// tcmu-runner package installs in /etc/dbus-1/system.d: every user may
// send to org.kernel.TCMUService1. The bus reads /etc's files after
// /usr/share's, so beside vscsid's policy this one wins.
const tcmuRunnerPolicy = `
  <policy context="default">
    <allow send_destination="org.kernel.TCMUService1"/>
    <allow own_prefix="org.kernel.TCMUService1.HandlerManager1"/>
    <allow send_interface="org.kernel.TCMUService1"/>
  </policy>`

// TestCallerMustBeRoot: with tcmu-runner's package installed too, the
// bus lets any user reach vscsid's methods; vscsid itself then refuses a
// caller that is not root, and the handler never sees the call.
func TestCallerMustBeRoot(t *testing.T) {
	if os.Geteuid() != 0 {
		t.Skip("needs root: the test runs a client as uid 65534")
	}
	b := startBus(t, systemPolicy(t, policyFile)+tcmuRunnerPolicy)
	tape, disk := &recorder{}, &recorder{}
	newService(t, b.connect(t), handlers(tape, disk), zaptest.NewLogger(t))
	nobody := asNobody(t, b)
	for _, c := range [][]string{
		{"/org/kernel/TCMUService1/vdisk", "org.kernel.TCMUService1.CheckConfig", "string:vdisk/size=1G"},
		{"/org/kernel/TCMUService1/vtape", "org.kernel.TCMUService1.ChangeMedium", "string:tape0", "uint64:0", "string:vtape/size=1G"},
	} {
		out, err := nobody(append([]string{"--dest=org.kernel.TCMUService1"}, c...)...)
		if err == nil || !strings.Contains(out, "AccessDenied") || !strings.Contains(out, "vscsid: only root may call") {
			t.Errorf("nobody %s: %v\n%s\nwant vscsid's own AccessDenied", c[1], err, out)
		}
	}
	for name, r := range map[string]*recorder{"vtape": tape, "vdisk": disk} {
		if checked, changed := r.calls(); len(checked)+len(changed) != 0 {
			t.Errorf("%s handler was called for nobody: checked %q, changed %q", name, checked, changed)
		}
	}
	// Root still is served.
	var ok bool
	var msg string
	call(t, b.connect(t), dbus.ServiceName, dbus.RootPath+"/vdisk", "org.kernel.TCMUService1.CheckConfig", []any{"vdisk/size=1G"}, &ok, &msg)
	if !ok {
		t.Fatalf("root CheckConfig = %v, %q", ok, msg)
	}
}
