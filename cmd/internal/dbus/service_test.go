package dbus_test

import (
	"context"
	"encoding/xml"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"sync"
	"testing"
	"time"

	godbus "github.com/godbus/dbus/v5"
	"github.com/godbus/dbus/v5/introspect"
	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/cmd/internal/dbus"
)

// recorder is a pair of handler callbacks that validate like a handler
// package's ParseConfig and record what they were given.
type recorder struct {
	mu      sync.Mutex
	checked []string
	changed []string
	changeE error
}

func (r *recorder) check(cfg string) error {
	r.mu.Lock()
	r.checked = append(r.checked, cfg)
	r.mu.Unlock()
	for kv := range strings.SplitSeq(cfg, ";") {
		k, v, _ := strings.Cut(kv, "=")
		switch k {
		case "size":
			if v != "1G" && v != "64M" {
				return fmt.Errorf("size: %q is not a size (want e.g. 64M, 1G)", v)
			}
		default:
			return fmt.Errorf("unknown key %q", k)
		}
	}
	return nil
}

func (r *recorder) setChangeErr(err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changeE = err
}

func (r *recorder) calls() (checked, changed []string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.checked...), append([]string(nil), r.changed...)
}

func (r *recorder) change(name string, size uint64, cfg string) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.changed = append(r.changed, fmt.Sprintf("%s %d %s", name, size, cfg))
	return r.changeE
}

const (
	tapeDesc = "barcode=<label>[;dir=<path>]: the cartridge to load"
	diskDesc = "size=<bytes>[;lbs=512|4096]"
)

func handlers(tape, disk *recorder) []dbus.Handler {
	return []dbus.Handler{
		{Subtype: "vtape", ConfigDesc: tapeDesc, CheckConfig: tape.check, ChangeMedium: tape.change},
		{Subtype: "vdisk", ConfigDesc: diskDesc, CheckConfig: disk.check},
	}
}

func newService(t *testing.T, conn *godbus.Conn, hs []dbus.Handler, log *zap.Logger) *dbus.Service {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	s, err := dbus.New(ctx, conn, hs, log)
	if err != nil {
		t.Fatalf("New: %v", err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

// call calls dest's method on path and stores the reply in out.
func call(t *testing.T, c *godbus.Conn, dest string, path godbus.ObjectPath, method string, args []any, out ...any) {
	t.Helper()
	if err := c.Object(dest, path).Call(method, 0, args...).Store(out...); err != nil {
		t.Fatalf("%s %s: %v", path, method, err)
	}
}

func callErr(c *godbus.Conn, dest string, path godbus.ObjectPath, method string, args ...any) string {
	err := c.Object(dest, path).Call(method, 0, args...).Err
	var de godbus.Error
	if errors.As(err, &de) {
		return de.Name
	}
	if err != nil {
		return err.Error()
	}
	return ""
}

func TestPrimary(t *testing.T) {
	b := startBus(t, openPolicy)
	tape, disk := &recorder{}, &recorder{}
	s := newService(t, b.connect(t), handlers(tape, disk), zaptest.NewLogger(t))
	if s.Mode() != dbus.Primary {
		t.Fatalf("Mode = %v, want primary", s.Mode())
	}
	cli := b.connect(t)

	t.Run("GetManagedObjects", func(t *testing.T) {
		var got map[godbus.ObjectPath]map[string]map[string]godbus.Variant
		call(t, cli, dbus.ServiceName, dbus.RootPath, "org.freedesktop.DBus.ObjectManager.GetManagedObjects", nil, &got)
		want := map[godbus.ObjectPath]map[string]map[string]godbus.Variant{
			"/org/kernel/TCMUService1/vtape": {"org.kernel.TCMUService1": {"ConfigDesc": godbus.MakeVariant(tapeDesc)}},
			"/org/kernel/TCMUService1/vdisk": {"org.kernel.TCMUService1": {"ConfigDesc": godbus.MakeVariant(diskDesc)}},
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("GetManagedObjects = %v\nwant %v", got, want)
		}
	})

	t.Run("Properties", func(t *testing.T) {
		p := godbus.ObjectPath("/org/kernel/TCMUService1/vdisk")
		var v godbus.Variant
		call(t, cli, dbus.ServiceName, p, "org.freedesktop.DBus.Properties.Get", []any{"org.kernel.TCMUService1", "ConfigDesc"}, &v)
		if v.Value() != diskDesc {
			t.Errorf("Get ConfigDesc = %v", v)
		}
		var all map[string]godbus.Variant
		call(t, cli, dbus.ServiceName, p, "org.freedesktop.DBus.Properties.GetAll", []any{"org.kernel.TCMUService1"}, &all)
		if len(all) != 1 || all["ConfigDesc"].Value() != diskDesc {
			t.Errorf("GetAll = %v", all)
		}
		for _, c := range []struct {
			method string
			args   []any
			want   string
		}{
			{"Set", []any{"org.kernel.TCMUService1", "ConfigDesc", godbus.MakeVariant("x")}, "org.freedesktop.DBus.Error.PropertyReadOnly"},
			{"Get", []any{"org.kernel.TCMUService1", "Nope"}, "org.freedesktop.DBus.Error.UnknownProperty"},
			{"Get", []any{"org.example.Nope", "ConfigDesc"}, "org.freedesktop.DBus.Error.UnknownInterface"},
			{"GetAll", []any{"org.example.Nope"}, "org.freedesktop.DBus.Error.UnknownInterface"},
		} {
			if got := callErr(cli, dbus.ServiceName, p, "org.freedesktop.DBus.Properties."+c.method, c.args...); got != c.want {
				t.Errorf("%s%v: error %q, want %q", c.method, c.args, got, c.want)
			}
		}
	})

	t.Run("CheckConfig", func(t *testing.T) {
		for _, c := range []struct {
			path, config, msg string
			ok                bool
		}{
			{"vdisk", "vdisk/size=1G", "success", true},
			{"vdisk", "vdisk/size=huge", `size: "huge" is not a size (want e.g. 64M, 1G)`, false},
			{"vdisk", "vdisk/colour=blue", `unknown key "colour"`, false},
			{"vdisk", "vtape/size=1G", `config "vtape/size=1G" is not for user:vdisk: want vdisk/<cfgstring>`, false},
			{"vdisk", "size=1G", `config "size=1G" is not for user:vdisk: want vdisk/<cfgstring>`, false},
			{"vtape", "vtape/size=64M", "success", true},
		} {
			var ok bool
			var msg string
			call(t, cli, dbus.ServiceName, dbus.RootPath+"/"+godbus.ObjectPath(c.path), "org.kernel.TCMUService1.CheckConfig", []any{c.config}, &ok, &msg)
			if ok != c.ok || msg != c.msg {
				t.Errorf("%s CheckConfig(%q) = %v, %q; want %v, %q", c.path, c.config, ok, msg, c.ok, c.msg)
			}
		}
		// The callbacks see the cfgstring only, and only for their subtype.
		if got, _ := disk.calls(); !reflect.DeepEqual(got, []string{"size=1G", "size=huge", "colour=blue"}) {
			t.Errorf("vdisk CheckConfig callback got %q", got)
		}
		if got, _ := tape.calls(); !reflect.DeepEqual(got, []string{"size=64M"}) {
			t.Errorf("vtape CheckConfig callback got %q", got)
		}
	})

	t.Run("ChangeMedium", func(t *testing.T) {
		type res struct {
			rc  int32
			msg string
		}
		change := func(path, name string, size uint64, config string) res {
			var r res
			call(t, cli, dbus.ServiceName, dbus.RootPath+"/"+godbus.ObjectPath(path), "org.kernel.TCMUService1.ChangeMedium",
				[]any{name, size, config}, &r.rc, &r.msg)
			return r
		}
		if r := change("vtape", "tape0", 1<<30, "vtape/size=1G"); r.rc != 0 {
			t.Errorf("ChangeMedium = %+v, want rc 0", r)
		}
		tape.setChangeErr(fmt.Errorf("open cartridge A00002: %w", unix.ENOENT))
		if r := change("vtape", "tape0", 0, "vtape/size=64M"); r.rc != -int32(unix.ENOENT) || r.msg != "open cartridge A00002: no such file or directory" {
			t.Errorf("ChangeMedium with ENOENT = %+v", r)
		}
		tape.setChangeErr(errors.New("medium removal prevented"))
		if r := change("vtape", "tape0", 0, "vtape/size=64M"); r.rc != -int32(unix.EINVAL) || r.msg != "medium removal prevented" {
			t.Errorf("ChangeMedium with a plain error = %+v, want -EINVAL", r)
		}
		if r := change("vtape", "tape0", 0, "vdisk/size=64M"); r.rc != -int32(unix.EINVAL) || !strings.Contains(r.msg, "not for user:vtape") {
			t.Errorf("ChangeMedium for another subtype = %+v", r)
		}
		if r := change("vdisk", "disk0", 0, "vdisk/size=64M"); r.rc != -int32(unix.EOPNOTSUPP) || !strings.Contains(r.msg, "does not support") {
			t.Errorf("ChangeMedium without a callback = %+v, want -EOPNOTSUPP", r)
		}
		want := []string{"tape0 1073741824 size=1G", "tape0 0 size=64M", "tape0 0 size=64M"}
		if _, got := tape.calls(); !reflect.DeepEqual(got, want) {
			t.Errorf("ChangeMedium callback got %q, want %q", got, want)
		}
	})

	t.Run("Introspect", func(t *testing.T) {
		var x string
		call(t, cli, dbus.ServiceName, dbus.RootPath+"/vtape", "org.freedesktop.DBus.Introspectable.Introspect", nil, &x)
		n := parseNode(t, x)
		want := map[string]string{
			"org.freedesktop.DBus.Introspectable": "M Introspect(out s xml_data)",
			"org.freedesktop.DBus.Peer":           "M GetMachineId(out s machine_uuid) M Ping()",
			"org.freedesktop.DBus.Properties": "M Get(in s interface_name, in s property_name, out v value) " +
				"M GetAll(in s interface_name, out a{sv} properties) " +
				"M Set(in s interface_name, in s property_name, in v value) " +
				"S PropertiesChanged(s interface_name, a{sv} changed_properties, as invalidated_properties)",
			// tcmu-runner's tcmu-handler.xml, plus targetcli's ChangeMedium.
			"org.kernel.TCMUService1": "M ChangeMedium(in s name, in t size, in s configstr, out i ret, out s message) " +
				"M CheckConfig(in s configstr, out b is_valid, out s message) " +
				"P ConfigDesc s read [org.freedesktop.DBus.Property.EmitsChangedSignal=const]",
		}
		if got := summarize(n); !reflect.DeepEqual(got, want) {
			t.Errorf("handler introspection:\n%s\nsummary %q\nwant    %q", x, got, want)
		}
		if !strings.HasPrefix(x, "<!DOCTYPE node PUBLIC \"-//freedesktop//DTD D-BUS Object Introspection 1.0//EN\"") {
			t.Errorf("introspection lacks the DOCTYPE:\n%s", x)
		}

		call(t, cli, dbus.ServiceName, dbus.RootPath, "org.freedesktop.DBus.Introspectable.Introspect", nil, &x)
		n = parseNode(t, x)
		if got := summarize(n)["org.freedesktop.DBus.ObjectManager"]; got != "M GetManagedObjects(out a{oa{sa{sv}}} object_paths_interfaces_and_properties) "+
			"S InterfacesAdded(o object_path, a{sa{sv}} interfaces_and_properties) S InterfacesRemoved(o object_path, as interfaces)" {
			t.Errorf("root ObjectManager introspection: %q", got)
		}
		if got := children(n); !reflect.DeepEqual(got, []string{"vdisk", "vtape"}) {
			t.Errorf("root children %q, want [vdisk vtape]", got)
		}
		// Tree walkers (busctl tree, d-feet) start at "/".
		for p, want := range map[godbus.ObjectPath]string{"/": "org", "/org": "kernel", "/org/kernel": "TCMUService1"} {
			call(t, cli, dbus.ServiceName, p, "org.freedesktop.DBus.Introspectable.Introspect", nil, &x)
			if got := children(parseNode(t, x)); !reflect.DeepEqual(got, []string{want}) {
				t.Errorf("%s children %q, want [%s]", p, got, want)
			}
		}
	})

	t.Run("Peer", func(t *testing.T) {
		call(t, cli, dbus.ServiceName, dbus.RootPath+"/vtape", "org.freedesktop.DBus.Peer.Ping", nil)
	})
}

func parseNode(t *testing.T, x string) introspect.Node {
	t.Helper()
	var n introspect.Node
	if err := xml.Unmarshal([]byte(x), &n); err != nil {
		t.Fatalf("introspection is not XML: %v\n%s", err, x)
	}
	return n
}

// summarize renders each interface as sorted "M name(args)", "S ...",
// "P ..." items.
func summarize(n introspect.Node) map[string]string {
	out := map[string]string{}
	for _, i := range n.Interfaces {
		var items []string
		for _, m := range i.Methods {
			var a []string
			for _, arg := range m.Args {
				a = append(a, arg.Direction+" "+arg.Type+" "+arg.Name)
			}
			items = append(items, "M "+m.Name+"("+strings.Join(a, ", ")+")")
		}
		for _, s := range i.Signals {
			var a []string
			for _, arg := range s.Args {
				a = append(a, arg.Type+" "+arg.Name)
			}
			items = append(items, "S "+s.Name+"("+strings.Join(a, ", ")+")")
		}
		for _, p := range i.Properties {
			item := "P " + p.Name + " " + p.Type + " " + p.Access
			for _, an := range p.Annotations {
				item += " [" + an.Name + "=" + an.Value + "]"
			}
			items = append(items, item)
		}
		sortStrings(items)
		out[i.Name] = strings.Join(items, " ")
	}
	return out
}

func children(n introspect.Node) []string {
	var c []string
	for _, ch := range n.Children {
		c = append(c, ch.Name)
	}
	sortStrings(c)
	return c
}

func sortStrings(s []string) {
	for i := 1; i < len(s); i++ {
		for j := i; j > 0 && s[j] < s[j-1]; j-- {
			s[j], s[j-1] = s[j-1], s[j]
		}
	}
}

func TestClose(t *testing.T) {
	b := startBus(t, openPolicy)
	conn := b.connect(t)
	ctx := context.Background()
	s, err := dbus.New(ctx, conn, handlers(&recorder{}, &recorder{}), zaptest.NewLogger(t))
	if err != nil {
		t.Fatal(err)
	}
	cli := b.connect(t)
	if !hasOwner(t, cli, dbus.ServiceName) {
		t.Fatal("name not owned after New")
	}
	if err := s.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	if hasOwner(t, cli, dbus.ServiceName) {
		t.Error("name still owned after Close")
	}
	// The objects are gone from the connection too.
	if got := callErr(cli, conn.Names()[0], dbus.RootPath+"/vtape", "org.kernel.TCMUService1.CheckConfig", "vtape/size=1G"); got != "org.freedesktop.DBus.Error.UnknownInterface" {
		t.Errorf("CheckConfig after Close: %q, want UnknownInterface", got)
	}
	if err := s.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
	// A new Service can take over on the same connection.
	s2, err := dbus.New(ctx, conn, handlers(&recorder{}, &recorder{}), zaptest.NewLogger(t))
	if err != nil {
		t.Fatalf("New after Close: %v", err)
	}
	if err := s2.Close(); err != nil {
		t.Fatal(err)
	}
}

func TestNewRejectsBadHandlers(t *testing.T) {
	ok := func(string) error { return nil }
	for _, c := range []struct {
		name string
		hs   []dbus.Handler
		want string
	}{
		{"none", nil, "no handlers"},
		{"empty subtype", []dbus.Handler{{CheckConfig: ok}}, "not a handler subtype"},
		{"digit first", []dbus.Handler{{Subtype: "9tape", CheckConfig: ok}}, "not a handler subtype"},
		{"dash", []dbus.Handler{{Subtype: "v-tape", CheckConfig: ok}}, "not a handler subtype"},
		{"slash", []dbus.Handler{{Subtype: "v/tape", CheckConfig: ok}}, "not a handler subtype"},
		{"reserved", []dbus.Handler{{Subtype: "HandlerManager1", CheckConfig: ok}}, "reserved"},
		{"twice", []dbus.Handler{{Subtype: "vtape", CheckConfig: ok}, {Subtype: "vtape", CheckConfig: ok}}, "twice"},
		{"no CheckConfig", []dbus.Handler{{Subtype: "vtape"}}, "no CheckConfig"},
		{"bad ConfigDesc", []dbus.Handler{{Subtype: "vtape", CheckConfig: ok, ConfigDesc: "\xff"}}, "ConfigDesc"},
	} {
		// Validation happens before the connection is used: a nil-safe
		// check needs a connection, so give one that is never touched.
		_, err := dbus.New(context.Background(), &godbus.Conn{}, c.hs, nil)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%s: New = %v, want an error containing %q", c.name, err, c.want)
		}
	}
	if _, err := dbus.New(context.Background(), nil, []dbus.Handler{{Subtype: "vtape", CheckConfig: ok}}, nil); err == nil {
		t.Error("New with a nil connection succeeded")
	}
}

// A callback's message must reach targetcli even when it is not valid
// D-Bus string material (it may quote bytes from the cfgstring).
func TestMessagesAreValidStrings(t *testing.T) {
	b := startBus(t, openPolicy)
	bad := func(string) error { return errors.New("bad byte \xff and NUL \x00 here") }
	newService(t, b.connect(t), []dbus.Handler{{Subtype: "vtape", CheckConfig: bad}}, zaptest.NewLogger(t))
	var ok bool
	var msg string
	call(t, b.connect(t), dbus.ServiceName, dbus.RootPath+"/vtape", "org.kernel.TCMUService1.CheckConfig", []any{"vtape/x"}, &ok, &msg)
	if ok || msg != "bad byte \uFFFD and NUL \\x00 here" {
		t.Errorf("CheckConfig = %v, %q", ok, msg)
	}
}

// A second vscsid on the same bus finds the name taken by something that
// is not tcmu-runner: it must fail, say why, and leave nothing behind.
func TestSecondInstanceFailsCleanly(t *testing.T) {
	b := startBus(t, openPolicy)
	newService(t, b.connect(t), handlers(&recorder{}, &recorder{}), zaptest.NewLogger(t))
	second := b.connect(t)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := dbus.New(ctx, second, handlers(&recorder{}, &recorder{}), zaptest.NewLogger(t))
	if err == nil || !strings.Contains(err.Error(), "register handler") {
		t.Fatalf("second New = %v, want a registration error", err)
	}
	cli := b.connect(t)
	for _, n := range []string{dbus.HandlerManagerNamePrefix + "vtape", dbus.HandlerManagerNamePrefix + "vdisk"} {
		if hasOwner(t, cli, n) {
			t.Errorf("%s still owned after the failed New", n)
		}
	}
}
