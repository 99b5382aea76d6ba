package target

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/netlink"
)

// fakeConn is the kernel's side of TCM-USER netlink: tests send events,
// Run's replies come back on a channel.
type fakeConn struct {
	events   chan netlink.Event
	replies  chan reply
	features error
	mu       sync.Mutex
	setOn    bool
	closed   bool
}

type reply struct {
	ev     netlink.Event
	status int32
}

func newFakeConn() *fakeConn {
	return &fakeConn{events: make(chan netlink.Event, 16), replies: make(chan reply, 16)}
}

func (c *fakeConn) Receive(ctx context.Context) (netlink.Event, error) {
	select {
	case <-ctx.Done():
		return nil, ctx.Err()
	case ev := <-c.events:
		return ev, nil
	}
}

func (c *fakeConn) Reply(ev netlink.Event, status int32) error {
	c.replies <- reply{ev, status}
	return nil
}

func (c *fakeConn) SetFeatures(on bool) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.setOn = on
	return c.features
}

func (c *fakeConn) Close() error {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.closed = true
	return nil
}

func (c *fakeConn) next(t *testing.T) reply {
	t.Helper()
	select {
	case r := <-c.replies:
		return r
	case <-time.After(5 * time.Second):
		t.Fatal("no reply")
	}
	return reply{}
}

// reconfigurable is a handler that takes new cfgstrings starting with "ok".
type reconfigurable struct {
	scsi.HandlerFunc
	mu  sync.Mutex
	cfg string
}

func (r *reconfigurable) Reconfigure(cfg string) error {
	if !strings.HasPrefix(cfg, "ok") {
		return errors.New("bad cfgstring")
	}
	r.mu.Lock()
	r.cfg = cfg
	r.mu.Unlock()
	return nil
}

func ptr[T any](v T) *T { return &v }

func dev(name string, minor, id uint32) netlink.Device {
	return netlink.Device{DeviceName: name, Minor: minor, DeviceID: id, Version: 2}
}

func TestRunServesTargetcliDevices(t *testing.T) {
	f := newFixture(t)
	opts := f.options(zaptest.NewLogger(t))
	c := newFakeConn()
	opts.dial = func() (eventConn, error) { return c, nil }
	good := func(dc DeviceConfig, _ *zap.Logger) (Handler, error) {
		if strings.Contains(dc.Config, "bad") {
			return nil, fmt.Errorf("bad config %q", dc.Config)
		}
		return &reconfigurable{HandlerFunc: func(context.Context, *scsi.Command) scsi.Response { return scsi.Good }}, nil
	}
	opts.Factories = map[string]Factory{"vdisk": good, "vtape": opts.Factories["vtape"]}
	tg, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	// Left by targetcli before the daemon started: Run's scan takes it
	// over (block, reset, open, unblock).
	early := f.foreign("4", "early", "vtape/media=/m")
	// Its ADDED event was lost (no daemon listened) and its enable still
	// waits: the scan answers it, matched on the device index.
	f.touch(filepath.Join(f.paths.ConfigFS, "target", "core", "user_4", "early", "statistics", "scsi_dev", "indx"), "42\n")
	f.touch(filepath.Join(f.paths.ConfigFS, "target", "core", "user_4", "early", "enable"), "0\n") // still waiting
	// One whose enable returned long ago gets no reply (the kernel would
	// log that nothing waits).
	f.foreign("3", "done", "vtape/media=/m")
	f.touch(filepath.Join(f.paths.ConfigFS, "target", "core", "user_3", "done", "statistics", "scsi_dev", "indx"), "41\n")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tg.Run(ctx) }()
	want := netlink.Added{Device: netlink.Device{DeviceName: early, Minor: 0, DeviceID: 42, Version: 2}}
	// (the only reply: the scan attaches "done" silently)
	if r := c.next(t); r.ev != want || r.status != 0 {
		t.Fatalf("reply to the lost ADDED: %+v, want %+v status 0", r, want)
	}

	// ADDED for a device targetcli just enabled.
	name := f.foreign("5", "tc0", "vdisk/size=1M")
	f.touch(filepath.Join(f.paths.ConfigFS, "target", "core", "user_5", "tc0", "attrib", "emulate_write_cache"), "0\n")
	c.events <- netlink.Added{Device: dev(name, 2, 10)}
	if r := c.next(t); r.status != 0 || r.ev.Dev().DeviceID != 10 {
		t.Fatalf("ADDED reply %+v, want 0 for device 10", r)
	}
	if !slices.Contains(f.Ops(), "write config/target/core/user_4/early/action/reset_ring 1") {
		t.Errorf("the device left before start was not taken over: %v", f.Ops())
	}
	c.mu.Lock()
	if !c.setOn {
		t.Error("SET_FEATURES(cmd reply) not sent")
	}
	c.mu.Unlock()

	// Another daemon's subtype: no reply at all; the bad config: -EINVAL.
	rbd := f.foreign("6", "img", "rbd/pool/img")
	bad := f.foreign("7", "bad0", "vdisk/bad")
	c.events <- netlink.Added{Device: dev(rbd, 3, 11)}
	c.events <- netlink.Added{Device: dev(bad, 4, 12)}
	if r := c.next(t); r.ev.Dev().DeviceID != 12 || r.status != -int32(unix.EINVAL) {
		t.Errorf("reply %+v, want -EINVAL for device 12 only (none for tcmu-runner's 11)", r)
	}

	// RECONFIG: unchanged values are accepted, changes go to the handler.
	d := dev(name, 2, 10)
	for _, tc := range []struct {
		ev   netlink.Reconfig
		want int32
	}{
		{netlink.Reconfig{Device: d, DevConfig: ptr("vdisk/size=1M\n")}, 0},
		{netlink.Reconfig{Device: d, DevConfig: ptr("vdisk/ok=1")}, 0},
		{netlink.Reconfig{Device: d, DevConfig: ptr("vdisk/nope")}, -int32(unix.EINVAL)},
		{netlink.Reconfig{Device: d, DevConfig: ptr("vtape/ok")}, -int32(unix.EINVAL)},
		{netlink.Reconfig{Device: d, DevSize: ptr(uint64(0))}, 0}, // fixture has no dev_size: 0 in force
		{netlink.Reconfig{Device: d, DevSize: ptr(uint64(1 << 30))}, -int32(unix.EOPNOTSUPP)},
		{netlink.Reconfig{Device: d, WriteCache: ptr(false)}, 0},
		{netlink.Reconfig{Device: d, WriteCache: ptr(true)}, -int32(unix.EOPNOTSUPP)},
		{netlink.Reconfig{Device: dev(bad, 4, 12), DevSize: ptr(uint64(1))}, -int32(unix.ENODEV)},
	} {
		c.events <- tc.ev
		if r := c.next(t); r.status != tc.want {
			t.Errorf("RECONFIG %+v: status %d, want %d", tc.ev, r.status, tc.want)
		}
	}
	var got DeviceConfig
	for _, ds := range tg.Devices() {
		if ds.Info.Name == "tc0" {
			got = ds.Info.DeviceConfig
		}
	}
	if got.Config != "ok=1" {
		t.Errorf("after RECONFIG the registry says %+v", got)
	}

	// A targetcli device with nl_reply_supported=-1 (the recipe next to
	// tcmu-runner): served, but no reply, which the kernel would log at
	// KERN_ERR as not awaited. The next reply is the next event's.
	nr := f.foreign("8", "nr0", "vdisk/size=1M")
	f.touch(filepath.Join(f.paths.ConfigFS, "target", "core", "user_8", "nr0", "attrib", "nl_reply_supported"), "-1\n")
	c.events <- netlink.Added{Device: dev(nr, 5, 30)}
	c.events <- netlink.Reconfig{Device: dev(bad, 4, 31), DevSize: ptr(uint64(1))}
	if r := c.next(t); r.ev.Dev().DeviceID != 31 {
		t.Errorf("ADDED of a device with nl_reply_supported=-1 was answered: %+v", r)
	}
	if tg.find(8, "nr0") == nil {
		t.Error("nr0 not served")
	}

	// REMOVED: stop serving, reply 0, leave configfs to targetcli.
	n := len(f.Ops())
	c.events <- netlink.Removed{Device: d}
	if r := c.next(t); r.status != 0 {
		t.Errorf("REMOVED reply %d", r.status)
	}
	if got := f.Ops()[n:]; !slices.Equal(got, []string{"close dev/uio2"}) {
		t.Errorf("REMOVED ops %v, want only the uio closed", got)
	}
	if ds := tg.Devices(); len(ds) != 3 || slices.ContainsFunc(ds, func(d DeviceStatus) bool { return d.Info.Name == "tc0" }) {
		t.Errorf("Devices after REMOVED: %d, tc0 among them", len(ds))
	}

	// A device of our config file removed with targetcli: let go of it
	// without a configfs operation (the rmdir waits for this reply).
	own, err := tg.Create(ctx, DeviceSpec{Name: "own0", Subtype: "vdisk", Config: "size=1M", Size: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	n = len(f.Ops())
	c.events <- netlink.Removed{Device: dev("tcm-user/"+strconv.Itoa(own.HBA)+"/own0/vdisk/size=1M", 5, 20)}
	// Its nl_reply_supported is -1: the kernel waits for no reply, and
	// one would only be logged at KERN_ERR. The next reply is the next
	// event's.
	c.events <- netlink.Reconfig{Device: dev(bad, 4, 21), DevSize: ptr(uint64(1))}
	if r := c.next(t); r.status != -int32(unix.ENODEV) {
		t.Errorf("REMOVED of a config device was answered (%d): the kernel does not wait for it", r.status)
	}
	if got := f.Ops()[n:]; !slices.Equal(got, []string{"close dev/" + own.UIO}) {
		t.Errorf("REMOVED of a config device: ops %v, want only the uio closed", got)
	}
	for _, ds := range tg.Devices() {
		if ds.Info.Name == "own0" {
			t.Error("own0 still registered after REMOVED")
		}
	}
	// One we remove ourselves (vscsictl delete): its REMOVED event, read
	// after Remove returned, is not answered either.
	own1, err := tg.Create(ctx, DeviceSpec{Name: "own1", Subtype: "vdisk", Config: "size=1M", Size: 1 << 20})
	if err != nil {
		t.Fatal(err)
	}
	if err := tg.Remove("own1"); err != nil {
		t.Fatal(err)
	}
	c.events <- netlink.Removed{Device: dev("tcm-user/"+strconv.Itoa(own1.HBA)+"/own1/vdisk/size=1M", 7, 40)}
	c.events <- netlink.Reconfig{Device: dev(bad, 4, 41), DevSize: ptr(uint64(1))}
	if r := c.next(t); r.ev.Dev().DeviceID != 41 {
		t.Errorf("REMOVED of a device Remove took away was answered: %+v", r)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	if !c.closed {
		t.Error("netlink connection not closed")
	}
	if c.setOn {
		t.Error("command replies left on at exit: the next enable without a daemon would hang")
	}
	if !f.Exists(filepath.Join(f.paths.ConfigFS, "target", "core", "user_4", "early")) {
		t.Error("Run's Close removed a device it did not create")
	}
}

func TestRunWithoutNetlink(t *testing.T) {
	f := newFixture(t)
	opts := f.options(zaptest.NewLogger(t))
	opts.dial = func() (eventConn, error) { return nil, errors.New("no family") }
	tg, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	f.foreign("4", "early", "vtape/media=/m")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tg.Run(ctx) }()
	deadline := time.Now().Add(5 * time.Second)
	for len(tg.Devices()) == 0 && time.Now().Before(deadline) {
		time.Sleep(time.Millisecond)
	}
	if ds := tg.Devices(); len(ds) != 1 || ds[0].Info.Origin != OriginAttached {
		t.Errorf("scan without netlink: %+v", ds)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}
