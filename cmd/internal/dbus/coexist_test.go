package dbus_test

import (
	"context"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	godbus "github.com/godbus/dbus/v5"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"go.uber.org/zap/zaptest/observer"

	"github.com/vscsid/vscsid/cmd/internal/dbus"
)

// fakeRunner plays tcmu-runner's side of the HandlerManager1 protocol
// (main.c on_register_handler, on_handler_appeared): it owns
// org.kernel.TCMUService1, exports RegisterHandler at
// /org/kernel/TCMUService1/HandlerManager1, and accepts a registration only
// when the handler's bus name org.kernel.TCMUService1.HandlerManager1.<subtype>
// has an owner.
type fakeRunner struct {
	conn *godbus.Conn

	mu         sync.Mutex
	registered []string // "subtype|desc"
	refuse     string
}

func startRunner(t *testing.T, b *bus) *fakeRunner {
	t.Helper()
	r := &fakeRunner{conn: b.connect(t)}
	if err := r.conn.ExportMethodTable(map[string]any{"RegisterHandler": r.register}, dbus.HandlerManagerPath, dbus.HandlerManagerInterface); err != nil {
		t.Fatal(err)
	}
	reply, err := r.conn.RequestName(dbus.ServiceName, godbus.NameFlagDoNotQueue)
	if err != nil || reply != godbus.RequestNameReplyPrimaryOwner {
		t.Fatalf("fake tcmu-runner: RequestName = %v, %v", reply, err)
	}
	return r
}

func (r *fakeRunner) register(subtype, desc string) (bool, string, *godbus.Error) {
	r.mu.Lock()
	refuse := r.refuse
	r.mu.Unlock()
	if refuse != "" {
		return false, refuse, nil
	}
	var has bool
	if err := r.conn.BusObject().Call("org.freedesktop.DBus.NameHasOwner", 0, dbus.HandlerManagerNamePrefix+subtype).Store(&has); err != nil {
		return false, err.Error(), nil
	}
	if !has {
		return false, "Cannot find handler bus name: " + dbus.HandlerManagerNamePrefix + subtype, nil
	}
	r.mu.Lock()
	r.registered = append(r.registered, subtype+"|"+desc)
	r.mu.Unlock()
	return true, "succeeded", nil
}

func (r *fakeRunner) registrations() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return slices.Sorted(slices.Values(r.registered))
}

var bothRegistered = []string{"vdisk|" + diskDesc, "vtape|" + tapeDesc}

func TestRegisteredWithTCMURunner(t *testing.T) {
	b := startBus(t, openPolicy)
	runner := startRunner(t, b)
	tape, disk := &recorder{}, &recorder{}
	conn := b.connect(t)
	s := newService(t, conn, handlers(tape, disk), zaptest.NewLogger(t))
	if s.Mode() != dbus.Registered {
		t.Fatalf("Mode = %v, want registered", s.Mode())
	}
	if got := runner.registrations(); !reflect.DeepEqual(got, bothRegistered) {
		t.Fatalf("tcmu-runner got registrations %q, want %q", got, bothRegistered)
	}

	// tcmu-runner's on_dbus_check_config forwards targetcli's CheckConfig
	// to the handler's bus name and path, with the full config string.
	cli := b.connect(t)
	for _, c := range []struct {
		subtype, config, msg string
		ok                   bool
	}{
		{"vtape", "vtape/size=1G", "success", true},
		{"vdisk", "vdisk/size=2T", `size: "2T" is not a size (want e.g. 64M, 1G)`, false},
	} {
		var ok bool
		var msg string
		call(t, cli, dbus.HandlerManagerNamePrefix+c.subtype, dbus.HandlerManagerPath+"/"+godbus.ObjectPath(c.subtype),
			"org.kernel.TCMUService1.CheckConfig", []any{c.config}, &ok, &msg)
		if ok != c.ok || msg != c.msg {
			t.Errorf("forwarded CheckConfig(%q) = %v, %q; want %v, %q", c.config, ok, msg, c.ok, c.msg)
		}
	}
	var v godbus.Variant
	call(t, cli, dbus.HandlerManagerNamePrefix+"vtape", dbus.HandlerManagerPath+"/vtape",
		"org.freedesktop.DBus.Properties.Get", []any{"org.kernel.TCMUService1", "ConfigDesc"}, &v)
	if v.Value() != tapeDesc {
		t.Errorf("ConfigDesc via the handler name = %v", v)
	}
	// Our connection's root lists the HandlerManager1 subtree too.
	var x string
	call(t, cli, conn.Names()[0], dbus.RootPath, "org.freedesktop.DBus.Introspectable.Introspect", nil, &x)
	if got := children(parseNode(t, x)); !reflect.DeepEqual(got, []string{"HandlerManager1", "vdisk", "vtape"}) {
		t.Errorf("root children %q", got)
	}

	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	for _, n := range []string{dbus.HandlerManagerNamePrefix + "vtape", dbus.HandlerManagerNamePrefix + "vdisk"} {
		if hasOwner(t, cli, n) {
			t.Errorf("%s still owned after Close", n)
		}
	}
	if !hasOwner(t, cli, dbus.ServiceName) {
		t.Error("Close released tcmu-runner's name")
	}
}

// When tcmu-runner restarts, its new instance knows nothing of us: the
// Service must register again, and must not grab the name in between.
func TestReRegisterWhenTCMURunnerRestarts(t *testing.T) {
	b := startBus(t, openPolicy)
	runner := startRunner(t, b)
	core, logs := observer.New(zap.InfoLevel)
	newService(t, b.connect(t), handlers(&recorder{}, &recorder{}), zap.New(core))
	if got := runner.registrations(); !reflect.DeepEqual(got, bothRegistered) {
		t.Fatalf("first registrations %q", got)
	}

	_ = runner.conn.Close() // tcmu-runner exits
	waitFor(t, "the Warn about the vanished owner", func() bool {
		return logs.FilterLevelExact(zap.WarnLevel).FilterMessageSnippet("left").Len() == 1
	})
	cli := b.connect(t)
	if hasOwner(t, cli, dbus.ServiceName) {
		t.Fatal("someone took org.kernel.TCMUService1 while tcmu-runner was away")
	}

	runner2 := startRunner(t, b) // tcmu-runner is back
	waitFor(t, "re-registration with the new tcmu-runner", func() bool {
		return reflect.DeepEqual(runner2.registrations(), bothRegistered)
	})
	waitFor(t, "the Info about the re-registration", func() bool {
		return logs.FilterMessageSnippet("re-registered").Len() == 1
	})
	if n := logs.FilterLevelExact(zap.ErrorLevel).Len(); n != 0 {
		t.Errorf("%d errors logged: %v", n, logs.FilterLevelExact(zap.ErrorLevel).All())
	}
}

func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(10 * time.Millisecond)
	}
}

func TestRegistrationRefused(t *testing.T) {
	b := startBus(t, openPolicy)
	runner := startRunner(t, b)
	runner.mu.Lock()
	runner.refuse = "Handler vtape has already been registered"
	runner.mu.Unlock()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := dbus.New(ctx, b.connect(t), handlers(&recorder{}, &recorder{}), zaptest.NewLogger(t))
	if err == nil || !strings.Contains(err.Error(), "refused: Handler vtape has already been registered") {
		t.Fatalf("New = %v, want the refusal", err)
	}
	cli := b.connect(t)
	for _, n := range []string{dbus.HandlerManagerNamePrefix + "vtape", dbus.HandlerManagerNamePrefix + "vdisk"} {
		if hasOwner(t, cli, n) {
			t.Errorf("%s still owned after the failed New", n)
		}
	}
}

func TestHandlerNameTaken(t *testing.T) {
	b := startBus(t, openPolicy)
	startRunner(t, b)
	other := b.connect(t)
	if reply, err := other.RequestName(dbus.HandlerManagerNamePrefix+"vdisk", godbus.NameFlagDoNotQueue); err != nil || reply != godbus.RequestNameReplyPrimaryOwner {
		t.Fatal(reply, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := dbus.New(ctx, b.connect(t), handlers(&recorder{}, &recorder{}), zaptest.NewLogger(t))
	if err == nil || !strings.Contains(err.Error(), "another vscsid") {
		t.Fatalf("New = %v, want an error about the taken handler name", err)
	}
}
