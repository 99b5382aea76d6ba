package target

import (
	"context"
	"encoding/binary"
	"path/filepath"
	"sync"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/target/netlink"
)

// TestReconfigDisk sends RECONFIG events for a vdisk made by another tool
// and served, as vscsid serves it, behind a fault.Device: the changes go
// through the wrapper to the disk, READ CAPACITY and MODE SENSE follow,
// the registry follows, and the refusals carry the documented errno.
func TestReconfigDisk(t *testing.T) {
	f := newFixture(t)
	opts := f.options(zaptest.NewLogger(t))
	c := newFakeConn()
	opts.dial = func() (eventConn, error) { return c, nil }
	var mu sync.Mutex
	hs := map[string]Handler{}
	wrapped := func(cmds scsi.CommandTable, build func(DeviceConfig) (fault.Handler, error)) Factory {
		return func(dc DeviceConfig, _ *zap.Logger) (Handler, error) {
			h, err := build(dc)
			if err != nil {
				return nil, err
			}
			fd, err := fault.New(h, fault.Options{Commands: cmds})
			if err != nil {
				return nil, err
			}
			mu.Lock()
			hs[dc.Name] = fd
			mu.Unlock()
			return fd, nil
		}
	}
	opts.Factories = map[string]Factory{
		"vdisk": wrapped(disk.Commands(), func(dc DeviceConfig) (fault.Handler, error) {
			cfg, err := disk.ParseConfig(dc.Config)
			if err != nil {
				return nil, err
			}
			return disk.New(dc.Name, cfg.WithDefaultSize(dc.Size), nil)
		}),
		// A handler without the optional interfaces (a tape drive).
		"vtape": wrapped(tape.Commands(), func(DeviceConfig) (fault.Handler, error) {
			return scsi.HandlerFunc(func(context.Context, *scsi.Command) scsi.Response { return scsi.Good }), nil
		}),
	}
	tg, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- tg.Run(ctx) }()
	defer func() {
		cancel()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()

	// targetcli: create tc1 64M "lbs=4096;mode=store;store_size=8M".
	name := f.foreign("5", "tc1", "vdisk/lbs=4096;mode=store;store_size=8M")
	attrib := filepath.Join(f.paths.ConfigFS, "target", "core", "user_5", "tc1", "attrib")
	f.touch(filepath.Join(attrib, "dev_size"), "67108864\n")
	f.touch(filepath.Join(attrib, "emulate_write_cache"), "0\n")
	d := dev(name, 0, 10)
	c.events <- netlink.Added{Device: d}
	if r := c.next(t); r.status != 0 {
		t.Fatalf("ADDED: %d", r.status)
	}
	tape := f.foreign("6", "tp0", "vtape/media=/m")
	c.events <- netlink.Added{Device: dev(tape, 1, 11)}
	if r := c.next(t); r.status != 0 {
		t.Fatalf("ADDED tape: %d", r.status)
	}
	mu.Lock()
	h := hs["tc1"]
	mu.Unlock()
	run := func(cdb []byte, n int) (scsi.Response, []byte) {
		p := make([]byte, n)
		buf := scsi.NewBuffer(p)
		r := h.HandleCommand(context.Background(), &scsi.Command{CDB: cdb, Data: buf})
		return r, p[:buf.Written()]
	}
	capacity := func() (uint64, uint64) {
		t.Helper()
		r, b10 := run([]byte{0x25, 0, 0, 0, 0, 0, 0, 0, 0, 0}, 8)
		if r.Status != scsi.StatusGood {
			t.Fatalf("READ CAPACITY(10): %+v", r)
		}
		r, b16 := run([]byte{0x9e, 0x10, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 32, 0, 0}, 32)
		if r.Status != scsi.StatusGood {
			t.Fatalf("READ CAPACITY(16): %+v", r)
		}
		return uint64(binary.BigEndian.Uint32(b10)) + 1, binary.BigEndian.Uint64(b16) + 1
	}
	tur := func() scsi.Response { r, _ := run(make([]byte, 6), 0); return r }
	wantUA := func(asc scsi.ASC) {
		t.Helper()
		if r := tur(); r.Status != scsi.StatusCheckCondition || r.Sense.Key != scsi.UnitAttention || r.Sense.ASC != asc {
			t.Fatalf("TEST UNIT READY: %+v, want UNIT ATTENTION %v", r, asc)
		}
		if r := tur(); r.Status != scsi.StatusGood {
			t.Fatalf("second TEST UNIT READY: %+v, want GOOD (the UA once)", r)
		}
	}
	wantUA(scsi.PowerOnResetOrBusDeviceReset)
	if c10, c16 := capacity(); c10 != 16384 || c16 != 16384 {
		t.Fatalf("capacity at attach: %d/%d blocks of 4096", c10, c16)
	}
	registered := func() DeviceConfig {
		for _, ds := range tg.Devices() {
			if ds.Info.Name == "tc1" {
				return ds.Info.DeviceConfig
			}
		}
		t.Fatal("tc1 not registered")
		return DeviceConfig{}
	}
	send := func(ev netlink.Reconfig, want int32) {
		t.Helper()
		c.events <- ev
		if r := c.next(t); r.status != want {
			t.Fatalf("RECONFIG %+v: status %d, want %d", ev, r.status, want)
		}
	}

	// dev_size grows: READ CAPACITY follows after one 2A/09.
	send(netlink.Reconfig{Device: d, DevSize: ptr(uint64(128 << 20))}, 0)
	if got := registered().Size; got != 128<<20 {
		t.Errorf("registry dev_size %d after the resize", got)
	}
	wantUA(scsi.CapacityDataHasChanged)
	if c10, c16 := capacity(); c10 != 32768 || c16 != 32768 {
		t.Fatalf("capacity after dev_size=128M: %d/%d", c10, c16)
	}
	// Refused: not a multiple of the block (EINVAL), nothing changes.
	send(netlink.Reconfig{Device: d, DevSize: ptr(uint64(128<<20 + 512))}, -int32(unix.EINVAL))
	if got := registered().Size; got != 128<<20 {
		t.Errorf("registry dev_size %d after a refused resize", got)
	}
	if r := tur(); r.Status != scsi.StatusGood {
		t.Fatalf("a refused resize raised %+v", r)
	}

	// emulate_write_cache: MODE SENSE page 08h WCE follows.
	wce := func() bool {
		t.Helper()
		r, b := run([]byte{0x1a, 0x08, 0x08, 0, 0xff, 0}, 255)
		if r.Status != scsi.StatusGood || len(b) < 7 {
			t.Fatalf("MODE SENSE(6) page 08h: %+v", r)
		}
		return b[6]&0x04 != 0
	}
	send(netlink.Reconfig{Device: d, WriteCache: ptr(true)}, 0)
	wantUA(scsi.ModeParametersChanged)
	if !wce() {
		t.Fatal("WCE clear after emulate_write_cache=1")
	}
	f.touch(filepath.Join(attrib, "emulate_write_cache"), "1\n") // the kernel stores it after our 0
	send(netlink.Reconfig{Device: d, WriteCache: ptr(false)}, 0)
	wantUA(scsi.ModeParametersChanged)
	if wce() {
		t.Fatal("WCE set after emulate_write_cache=0")
	}

	// dev_config: a new size= resizes; another key is refused (EINVAL).
	send(netlink.Reconfig{Device: d, DevConfig: ptr("vdisk/size=256M;lbs=4096;mode=store;store_size=8M\n")}, 0)
	if got := registered().Config; got != "size=256M;lbs=4096;mode=store;store_size=8M" {
		t.Errorf("registry config %q", got)
	}
	wantUA(scsi.CapacityDataHasChanged)
	if c10, c16 := capacity(); c10 != 65536 || c16 != 65536 {
		t.Fatalf("capacity after size=256M: %d/%d", c10, c16)
	}
	send(netlink.Reconfig{Device: d, DevConfig: ptr("vdisk/size=256M;lbs=512;mode=store;store_size=8M")}, -int32(unix.EINVAL))
	// Now the cfgstring sets the capacity: dev_size is refused (EINVAL).
	send(netlink.Reconfig{Device: d, DevSize: ptr(uint64(512 << 20))}, -int32(unix.EINVAL))
	if c10, _ := capacity(); c10 != 65536 {
		t.Fatalf("capacity after refused changes: %d", c10)
	}

	// A handler without the interfaces, behind the same wrapper: EOPNOTSUPP.
	td := dev(tape, 1, 11)
	send(netlink.Reconfig{Device: td, DevSize: ptr(uint64(1 << 20))}, -int32(unix.EOPNOTSUPP))
	send(netlink.Reconfig{Device: td, WriteCache: ptr(true)}, -int32(unix.EOPNOTSUPP))
	send(netlink.Reconfig{Device: td, DevConfig: ptr("vtape/media=/other")}, -int32(unix.EOPNOTSUPP))
}
