package target

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/scsi"
)

// named is a handler the tests can tell apart.
type named struct {
	scsi.HandlerFunc
	name string
}

// wrapper decorates a handler as the fault injector does.
type wrapper struct{ inner Handler }

func (w wrapper) HandleCommand(ctx context.Context, c *scsi.Command) scsi.Response {
	return w.inner.HandleCommand(ctx, c)
}
func (w wrapper) Unwrap() Handler { return w.inner }

// The Target is the registry: Handler finds what a device's Factory
// built (a spec's own Factory first), and nothing once it is removed.
func TestHandlerRegistry(t *testing.T) {
	f := newFixture(t)
	opts := f.options(zaptest.NewLogger(t))
	opts.Factories["vdisk"] = func(dc DeviceConfig, _ *zap.Logger) (Handler, error) {
		return wrapper{&named{name: "subtype:" + dc.Name}}, nil
	}
	tg, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	ctx := context.Background()
	own := func(dc DeviceConfig, _ *zap.Logger) (Handler, error) {
		return wrapper{wrapper{&named{name: "spec:" + dc.Name}}}, nil
	}
	specs := []DeviceSpec{
		{Name: "d0", Subtype: "vdisk", Config: "size=1G", Size: 1 << 30, BlockSize: 512},
		{Name: "d1", Subtype: "vdisk", Config: "size=1G", Size: 1 << 30, BlockSize: 512, Factory: own},
	}
	for _, s := range specs {
		if _, err := tg.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	for name, want := range map[string]string{"d0": "subtype:d0", "d1": "spec:d1"} {
		h, err := tg.Handler(name)
		if err != nil {
			t.Fatalf("Handler(%s): %v", name, err)
		}
		n, ok := scsi.As[*named](h)
		if !ok || n.name != want {
			t.Errorf("scsi.As[*named](Handler(%s)) = %v, %v; want %s", name, n, ok, want)
		}
	}
	for _, d := range tg.Devices() {
		if _, ok := scsi.As[*named](d.Handler); !ok {
			t.Errorf("Devices: %s has no handler", d.Info.Name)
		}
	}
	if err := tg.Remove("d1"); err != nil {
		t.Fatal(err)
	}
	if h, err := tg.Handler("d1"); !errors.Is(err, ErrNoDevice) {
		t.Errorf("Handler of a removed device = %v, %v; want ErrNoDevice", h, err)
	}

	// Two tools' objects of one name on different HBAs: a name does not
	// say which.
	for _, hba := range []string{"7", "8"} {
		name := f.foreign(hba, "tc0", "vdisk/size=1G")
		if _, err := tg.Attach(ctx, name); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := tg.Handler("tc0"); !errors.Is(err, ErrAmbiguous) {
		t.Errorf("Handler(tc0) on two HBAs: %v; want ErrAmbiguous", err)
	}
}

func TestAsPlainAndNil(t *testing.T) {
	h := &named{name: "x"}
	if n, ok := scsi.As[*named](h); !ok || n != h {
		t.Errorf("As on the handler itself = %v, %v", n, ok)
	}
	if _, ok := scsi.As[*wrapper](h); ok {
		t.Error("As found a type that is not in the chain")
	}
	if _, ok := scsi.As[*named](nil); ok {
		t.Error("As(nil) found something")
	}
	if _, ok := scsi.As[*named](wrapper{nil}); ok {
		t.Error("As through a wrapper of nil found something")
	}
}

// serialed is a handler with a unit serial number.
type serialed struct {
	scsi.HandlerFunc
	serial string
}

func (s serialed) UnitSerial() string { return s.serial }

// The backstore gets its handler's unit serial (through decorators)
// before the LUN is exported, so LIO's APTPL state is per device.
func TestUnitSerialBeforeExport(t *testing.T) {
	f := newFixture(t)
	opts := f.options(zaptest.NewLogger(t))
	opts.Factories["vtape"] = func(DeviceConfig, *zap.Logger) (Handler, error) {
		return wrapper{serialed{serial: "VSC0001234"}}, nil
	}
	tg, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	if _, err := tg.Create(context.Background(), DeviceSpec{Name: "t0", Subtype: "vtape", Config: "memory=1", Size: 1 << 30, BlockSize: 512}); err != nil {
		t.Fatal(err)
	}
	ops := f.Ops()
	w := slices.Index(ops, "write config/target/core/user_2/t0/wwn/vpd_unit_serial VSC0001234")
	l := slices.IndexFunc(ops, func(s string) bool { return strings.HasPrefix(s, "symlink ") })
	if w < 0 || l < 0 || w > l {
		t.Errorf("unit serial written at op %d, LUN linked at op %d:\n%s", w, l, strings.Join(ops, "\n"))
	}
}

// New creates LIO's <dbroot>/pr when it is missing, and leaves an
// existing one alone.
func TestPreparePR(t *testing.T) {
	f := newFixture(t)
	dbroot := filepath.Join(f.root, "etc", "target")
	if err := os.Mkdir(filepath.Dir(dbroot), 0o755); err != nil {
		t.Fatal(err)
	}
	f.touch(filepath.Join(f.paths.ConfigFS, "target", "dbroot"), dbroot+"\n")
	for range 2 {
		tg, err := New(f.options(zaptest.NewLogger(t)))
		if err != nil {
			t.Fatal(err)
		}
		if st, err := os.Stat(filepath.Join(dbroot, "pr")); err != nil || !st.IsDir() {
			t.Fatalf("<dbroot>/pr: %v", err)
		}
		if err := tg.Close(); err != nil {
			t.Fatal(err)
		}
	}
}
