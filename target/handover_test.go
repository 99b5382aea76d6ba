package target

import (
	"context"
	"errors"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/scsi"
)

// resumer is a handler that counts ResumeHandOver calls.
type resumer struct {
	scsi.HandlerFunc
	resumed *atomic.Int32
}

func (r resumer) ResumeHandOver() bool { r.resumed.Add(1); return true }

// resumerSpec is spec whose handler counts its hand-over resumptions.
func resumerSpec(spec DeviceSpec, resumed *atomic.Int32) DeviceSpec {
	spec.Factory = func(DeviceConfig, *zap.Logger) (Handler, error) {
		return resumer{HandlerFunc: func(context.Context, *scsi.Command) scsi.Response { return scsi.Good }, resumed: resumed}, nil
	}
	return spec
}

// TestHandOver: a planned restart leaves every configfs object, LUN and
// node in place; the next daemon takes the device over in place and
// tells its handler it continues the one handed over; the record is
// read once.
func TestHandOver(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var resumed atomic.Int32
	spec := resumerSpec(DeviceSpec{Name: "tape0", Subtype: "vtape", Config: "media=/m", Size: 1 << 30}, &resumed)
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	first, err := tg.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	tree := f.tree()
	n := len(f.Ops())
	if err := tg.HandOver(); err != nil {
		t.Fatal(err)
	}
	obj := "config/target/core/user_2/tape0"
	want := []string{
		"write " + obj + "/action/block_dev 1",
		"close dev/uio0",
		"write " + obj + "/action/block_dev 0", // commands sent meanwhile wait in the ring
	}
	if got := f.Ops()[n:]; !slices.Equal(got, want) {
		t.Errorf("hand-over ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if after := f.tree(); !slices.Equal(tree, after) {
		t.Errorf("the hand-over changed configfs:\nbefore %v\nafter  %v", tree, after)
	}
	if err := tg.Close(); err != nil || len(f.Ops()) != n+len(want) {
		t.Errorf("Close after HandOver: %v, ops %v", err, f.Ops()[n+len(want):])
	}

	tg, err = New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(f.paths.handOver()); !os.IsNotExist(err) {
		t.Errorf("the record outlived its reading: %v", err)
	}
	info, err := tg.Create(ctx, spec)
	if err != nil {
		t.Fatal(err)
	}
	if info.SCSI != first.SCSI || resumed.Load() != 1 {
		t.Errorf("taken over as %+v (resumed %d times), want %+v resumed once", info.SCSI, resumed.Load(), first.SCSI)
	}
	// A later restart by crash: no record, no resumption.
	crash(tg)
	if tg, err = New(f.options(zaptest.NewLogger(t))); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	if _, err := tg.Create(ctx, spec); err != nil || resumed.Load() != 1 {
		t.Errorf("after a crash: %v, resumed %d times, want once in all", err, resumed.Load())
	}
}

// TestHandOverChangedConfig: a device whose cfgstring changed across the
// restart is made anew (reclaim), and the record does not apply to it.
func TestHandOverChangedConfig(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var resumed atomic.Int32
	spec := resumerSpec(DeviceSpec{Name: "disk0", Subtype: "vdisk", Config: "size=1G", Size: 1 << 30}, &resumed)
	handedOver(t, f.options(zaptest.NewLogger(t)), spec)
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	spec.Config, spec.Size = "size=2G", 2<<30
	n := len(f.Ops())
	if _, err := tg.Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(f.Ops()[n:], "rmdir config/target/core/user_2/disk0") || resumed.Load() != 0 {
		t.Errorf("changed config: ops %v, resumed %d times", f.Ops()[n:], resumed.Load())
	}
}

// TestHandOverRecordUnusable: a record that does not parse, is of another
// version or is not a regular file is removed where it can be and
// ignored: the devices start from power-on.
func TestHandOverRecordUnusable(t *testing.T) {
	for name, write := range map[string]func(path string) error{
		"garbage": func(p string) error { return os.WriteFile(p, []byte("{"), 0o600) },
		"other version": func(p string) error {
			return os.WriteFile(p, []byte(`{"version":99,"devices":[{"name":"disk0"}]}`), 0o600)
		},
		"symlink": func(p string) error { return os.Symlink("/dev/zero", p) },
	} {
		t.Run(name, func(t *testing.T) {
			f := newFixture(t)
			if err := os.MkdirAll(strings.TrimSuffix(f.paths.handOver(), "/handover.json"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := write(f.paths.handOver()); err != nil {
				t.Fatal(err)
			}
			tg, err := New(f.options(zaptest.NewLogger(t)))
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = tg.Close() }()
			if len(tg.handedOver) != 0 {
				t.Errorf("took %v from an unusable record", tg.handedOver)
			}
			if _, err := os.Lstat(f.paths.handOver()); !os.IsNotExist(err) {
				t.Errorf("the unusable record stays: %v", err)
			}
		})
	}
}

// TestHandOverRemoveStale: a device of the old daemon's config that the
// new one no longer lists is removed after the hand-over; one another
// tool made is left to Run.
func TestHandOverRemoveStale(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	keep := DeviceSpec{Name: "disk0", Subtype: "vdisk", Config: "size=1G", Size: 1 << 30}
	gone := DeviceSpec{Name: "tape0", Subtype: "vtape", Config: "media=/m", Size: 1 << 30}
	for _, s := range []DeviceSpec{keep, gone} {
		if _, err := tg.Create(ctx, s); err != nil {
			t.Fatal(err)
		}
	}
	foreign := f.foreign("7", "tc0", "vdisk/size=1G")
	if _, err := tg.Attach(ctx, foreign); err != nil {
		t.Fatal(err)
	}
	if err := tg.HandOver(); err != nil {
		t.Fatal(err)
	}
	if tg, err = New(f.options(zaptest.NewLogger(t))); err != nil {
		t.Fatal(err)
	}
	if _, err := tg.Create(ctx, keep); err != nil {
		t.Fatal(err)
	}
	if err := tg.RemoveStale(); err != nil {
		t.Fatal(err)
	}
	tree := strings.Join(f.tree(), "\n")
	for _, p := range []string{"/tape0", wwn("target", "tape0")} {
		if strings.Contains(tree, p) {
			t.Errorf("%s stays after RemoveStale", p)
		}
	}
	for _, p := range []string{"/disk0", "user_7/tc0"} {
		if !strings.Contains(tree, p) {
			t.Errorf("RemoveStale removed %s", p)
		}
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
}

// TestHandOverISCSIOnly: a device exported over iSCSI only is handed over
// like any other: its iSCSI target stays, sessions logged in, and the next
// daemon finds the device by the target's LUN and takes it over in place,
// touching nothing of the target.
func TestHandOverISCSIOnly(t *testing.T) {
	f := newFixture(t)
	ctx := context.Background()
	var resumed atomic.Int32
	spec := iscsiSpec()
	spec.NoLoopback = true
	spec = resumerSpec(spec, &resumed)
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tg.Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	tree := f.tree()
	if err := tg.HandOver(); err != nil {
		t.Fatal(err)
	}
	if after := f.tree(); !slices.Equal(tree, after) {
		t.Errorf("the hand-over changed configfs:\nbefore %v\nafter  %v", tree, after)
	}
	if tg, err = New(f.options(zaptest.NewLogger(t))); err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	n := len(f.Ops())
	if _, err := tg.Create(ctx, spec); err != nil {
		t.Fatal(err)
	}
	ops := f.Ops()[n:]
	if slices.ContainsFunc(ops, func(op string) bool {
		return !strings.Contains(op, "/user_2/disk0/action/") && !strings.HasPrefix(op, "open dev/uio")
	}) ||
		resumed.Load() != 1 {
		t.Errorf("take-over ops %v, resumed %d times; want only the ring's take-over, resumed once", ops, resumed.Load())
	}
}

// handedOver makes spec on a new Target of opts and hands it over, as a
// daemon that stops for a planned restart.
func handedOver(t *testing.T, opts Options, spec DeviceSpec) {
	t.Helper()
	tg, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := tg.Create(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	if err := tg.HandOver(); err != nil {
		t.Fatal(err)
	}
}

// carrier is a handler with in-memory state to carry: it saves state and
// records what it loads.
type carrier struct {
	resumer
	state  string
	loaded *string
}

func (c carrier) SaveHandOver(w io.Writer) error { _, err := io.WriteString(w, c.state); return err }

func (c carrier) LoadHandOver(r io.Reader) error {
	b, err := io.ReadAll(r)
	*c.loaded = string(b)
	return err
}

// mapKeeper keeps state in a map, as systemd's store keeps memory files.
type mapKeeper struct {
	kept map[string]string
	err  error // Keep fails with it
}

func (k *mapKeeper) Keep(name string, save func(io.Writer) error) error {
	if k.err != nil {
		return k.err
	}
	var b strings.Builder
	if err := save(&b); err != nil {
		return err
	}
	k.kept[name] = b.String()
	return nil
}

func (k *mapKeeper) Release() []string {
	names := slices.Collect(maps.Keys(k.kept))
	clear(k.kept)
	return names
}

func (k *mapKeeper) Take(name string) io.ReadCloser {
	s, ok := k.kept[name]
	delete(k.kept, name)
	if !ok {
		return nil
	}
	return io.NopCloser(strings.NewReader(s))
}

// TestHandOverCarries: a handler's in-memory state is kept at the
// hand-over under the device's name and loaded by the next daemon's
// handler before it resumes; when the keeper fails, nothing is loaded.
func TestHandOverCarries(t *testing.T) {
	for _, keepErr := range []error{nil, errors.New("no fd store")} {
		f := newFixture(t)
		ctx := context.Background()
		var resumed atomic.Int32
		var loaded string
		keeper := &mapKeeper{kept: map[string]string{}, err: keepErr}
		spec := DeviceSpec{Name: "disk0", Subtype: "vdisk", Config: "size=1G;mode=store", Size: 1 << 30,
			Factory: func(DeviceConfig, *zap.Logger) (Handler, error) {
				return carrier{resumer: resumer{HandlerFunc: func(context.Context, *scsi.Command) scsi.Response { return scsi.Good }, resumed: &resumed},
					state: "written blocks", loaded: &loaded}, nil
			}}
		opts := f.options(zaptest.NewLogger(t))
		opts.Keeper = keeper
		handedOver(t, opts, spec)
		wantKept := map[string]string{"handover.disk0": "written blocks"}
		if keepErr != nil {
			wantKept = map[string]string{}
		}
		if !maps.Equal(keeper.kept, wantKept) {
			t.Errorf("keeper error %v: kept %q, want %q", keepErr, keeper.kept, wantKept)
		}
		keeper.err = nil
		tg, err := New(opts)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tg.Create(ctx, spec); err != nil {
			t.Fatal(err)
		}
		if want := wantKept["handover.disk0"]; loaded != want || resumed.Load() != 1 || len(keeper.kept) != 0 {
			t.Errorf("keeper error %v: loaded %q (want %q), resumed %d times, left %q", keepErr, loaded, want, resumed.Load(), keeper.kept)
		}
		_ = tg.Close()
	}
}

// peerUnit is a handler that records, when it closes, what a library
// finishing a move on its way out would find of its drive: whether
// Handler still resolves it, and whether the drive is already closed.
type peerUnit struct {
	scsi.HandlerFunc
	peers  bool
	closed *atomic.Bool
	onStop func()
}

func (u peerUnit) UsesPeers() bool { return u.peers }

func (u peerUnit) Close() error {
	if u.onStop != nil {
		u.onStop()
	}
	u.closed.Store(true)
	return nil
}

// TestLettingGoKeepsPeersReachable: Close and HandOver let go of a device
// that uses peers (a library) before the devices it uses, whatever the
// order they were made in, and while it lets go Handler still finds
// them, serving: a move the library finishes in its drain unloads the
// drive instead of finding no drive and moving the cartridge in the
// inventory alone (the drive then kept it: found in the VM suite, a
// restart under mtx loads and unloads).
func TestLettingGoKeepsPeersReachable(t *testing.T) {
	for _, how := range []string{"close", "hand over"} {
		f := newFixture(t)
		tg, err := New(f.options(zaptest.NewLogger(t)))
		if err != nil {
			t.Fatal(err)
		}
		good := scsi.HandlerFunc(func(context.Context, *scsi.Command) scsi.Response { return scsi.Good })
		var driveClosed, libClosed atomic.Bool
		var lookupErr error
		sawDriveClosed := false
		lib := DeviceSpec{Name: "lib0", Subtype: "vlibrary", Config: "media=/m;drives=tape0", Size: 1 << 20,
			Factory: func(DeviceConfig, *zap.Logger) (Handler, error) {
				return peerUnit{HandlerFunc: good, peers: true, closed: &libClosed, onStop: func() {
					_, lookupErr = tg.Handler("tape0")
					sawDriveClosed = driveClosed.Load()
				}}, nil
			}}
		drive := DeviceSpec{Name: "tape0", Subtype: "vtape", Config: "media=/m", Size: 1 << 30,
			Factory: func(DeviceConfig, *zap.Logger) (Handler, error) {
				return peerUnit{HandlerFunc: good, closed: &driveClosed}, nil
			}}
		for _, s := range []DeviceSpec{lib, drive} { // the library first: newest-first alone would stop the drive first
			if _, err := tg.Create(context.Background(), s); err != nil {
				t.Fatal(err)
			}
		}
		if how == "close" {
			err = tg.Close()
		} else {
			err = tg.HandOver()
		}
		if err != nil {
			t.Fatal(err)
		}
		if !libClosed.Load() || lookupErr != nil || sawDriveClosed {
			t.Errorf("%s: the library let go of with its drive unreachable (%v) or closed (%v)", how, lookupErr, sawDriveClosed)
		}
		if _, err := tg.Handler("tape0"); !errors.Is(err, ErrNoDevice) {
			t.Errorf("%s: Handler still finds a device once every one is let go of: %v", how, err)
		}
	}
}
