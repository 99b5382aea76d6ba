package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap"
	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/scsi"
)

// foreign makes a user backstore the way targetcli does (core/user_<hba>/
// <name>, dev_config, enable) and returns its uio device name.
func (f *fixture) foreign(hba, name, devConfig string) string {
	f.t.Helper()
	dir := filepath.Join(f.paths.ConfigFS, "target", "core", "user_"+hba)
	if !f.Exists(dir) {
		if err := f.Mkdir(dir); err != nil {
			f.t.Fatal(err)
		}
	}
	obj := filepath.Join(dir, name)
	for _, step := range []func() error{
		func() error { return f.Mkdir(obj) },
		func() error { return f.WriteAttr(filepath.Join(obj, "control"), "dev_config="+devConfig) },
		func() error { return f.WriteAttr(filepath.Join(obj, "enable"), "1") },
	} {
		if err := step(); err != nil {
			f.t.Fatal(err)
		}
	}
	return "tcm-user/" + hba + "/" + name + "/" + devConfig
}

// export links obj as LUN 0 of a loopback target, as targetcli does.
func (f *fixture) exportForeign(naa, hba, name string) {
	f.t.Helper()
	lb := filepath.Join(f.paths.ConfigFS, "target", "loopback")
	tpg := filepath.Join(lb, naa, "tpgt_1")
	for _, d := range []string{lb, filepath.Join(lb, naa), tpg, filepath.Join(tpg, "lun", "lun_0")} {
		if !f.Exists(d) {
			if err := f.Mkdir(d); err != nil {
				f.t.Fatal(err)
			}
		}
	}
	obj := filepath.Join(f.paths.ConfigFS, "target", "core", "user_"+hba, name)
	if err := f.Symlink(obj, filepath.Join(tpg, "lun", "lun_0", "lnk")); err != nil {
		f.t.Fatal(err)
	}
}

func TestAttachAndRelease(t *testing.T) {
	f := newFixture(t)
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	name := f.foreign("7", "tc0", "vtape/media=/m;barcode=A1")
	f.exportForeign("naa.5001405000000001", "7", "tc0")
	n := len(f.Ops())
	info, err := tg.Attach(context.Background(), name+"\n")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"write config/target/core/user_7/tc0/action/block_dev 1",
		"write config/target/core/user_7/tc0/action/reset_ring 1",
		"write config/target/core/user_7/tc0/action/block_dev 0", // before serving (takeOverRing)
		"open dev/uio0 0x110000",
	}
	if got := f.Ops()[n:]; !slices.Equal(got, want) {
		t.Errorf("attach ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	wantDC := DeviceConfig{Name: "tc0", HBA: 7, Subtype: "vtape", Config: "media=/m;barcode=A1", BlockSize: 512, UIO: "uio0"}
	if info.DeviceConfig != wantDC || info.Origin != OriginAttached || info.Origin.String() != "attached" {
		t.Errorf("info %+v\nwant %+v, attached", info, wantDC)
	}
	if info.SCSI.Address != "3:0:1:0" || info.SCSI.Tape != "st0" {
		t.Errorf("SCSI %+v, want the LUN targetcli exported (3:0:1:0, st0)", info.SCSI)
	}
	// Attaching again (a netlink ADDED racing the start-up scan) is a no-op.
	n = len(f.Ops())
	if again, err := tg.Attach(context.Background(), name); err != nil || again.UIO != "uio0" || len(f.Ops()) != n {
		t.Errorf("second Attach: %+v %v, ops %v", again, err, f.Ops()[n:])
	}
	ds := tg.Devices()
	if len(ds) != 1 || ds[0].Info.Origin != OriginAttached || ds[0].Info.Name != "tc0" {
		t.Fatalf("Devices: %+v", ds)
	}
	if want := []FabricLUNs{{"loopback", 1}}; !slices.Equal(ds[0].Exports, want) {
		t.Errorf("Exports %+v, want %+v", ds[0].Exports, want)
	}
	// targetcli exports it over iSCSI too, on two LUNs of one target.
	is := filepath.Join(f.paths.ConfigFS, "target", "iscsi")
	tpg := filepath.Join(is, "iqn.2026-12.io.example:tc0", "tpgt_1")
	obj := filepath.Join(f.paths.ConfigFS, "target", "core", "user_7", "tc0")
	for _, d := range []string{is, filepath.Dir(tpg), tpg, filepath.Join(tpg, "lun", "lun_0"), filepath.Join(tpg, "lun", "lun_3")} { // the tpg's lun/ comes with it
		if err := f.Mkdir(d); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range []string{"lun_0", "lun_3"} {
		if err := f.Symlink(obj, filepath.Join(tpg, "lun", l, "x")); err != nil {
			t.Fatal(err)
		}
	}
	if want := []FabricLUNs{{"iscsi", 2}, {"loopback", 1}}; !slices.Equal(tg.Devices()[0].Exports, want) {
		t.Errorf("Exports %+v, want %+v", tg.Devices()[0].Exports, want)
	}
	for _, l := range []string{"lun_0", "lun_3"} {
		if err := f.Unlink(filepath.Join(tpg, "lun", l, "x")); err != nil {
			t.Fatal(err)
		}
	}

	// Close lets go of it and leaves it in configfs: block, drain, close,
	// unblock.
	n = len(f.Ops())
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	want = []string{
		"write config/target/core/user_7/tc0/action/block_dev 1",
		"close dev/uio0",
		"write config/target/core/user_7/tc0/action/block_dev 0",
	}
	if got := f.Ops()[n:]; !slices.Equal(got, want) {
		t.Errorf("close ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	if !f.Exists(filepath.Join(f.paths.ConfigFS, "target", "core", "user_7", "tc0")) {
		t.Error("Close removed a device it did not create")
	}
}

func TestAttachErrors(t *testing.T) {
	f := newFixture(t)
	opts := f.options(zaptest.NewLogger(t))
	closed := 0
	opts.Factories["vdisk"] = func(dc DeviceConfig, _ *zap.Logger) (Handler, error) {
		if strings.Contains(dc.Config, "bad") {
			return nil, errors.New("vdisk config: size: bad value")
		}
		return closer{scsi.HandlerFunc(func(context.Context, *scsi.Command) scsi.Response { return scsi.Good }), &closed}, nil
	}
	tg, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	ctx := context.Background()
	other := f.foreign("1", "rbd0", "rbd/pool/img")
	if _, err := tg.Attach(ctx, other); !errors.Is(err, ErrNotOurs) {
		t.Errorf("Attach of tcmu-runner's rbd device: %v, want ErrNotOurs", err)
	}
	bad := f.foreign("1", "d0", "vdisk/size=bad")
	n := len(f.Ops())
	if _, err := tg.Attach(ctx, bad); err == nil || !strings.Contains(err.Error(), "size: bad value") || tg.errnoOf(err) != -22 {
		t.Errorf("Attach with a bad cfgstring: %v (errno %d), want the factory's error and -EINVAL", err, tg.errnoOf(err))
	}
	// The factory runs before anything is touched; nothing is left open.
	for _, op := range f.Ops()[n:] {
		if strings.HasPrefix(op, "open") {
			t.Errorf("bad device opened: %v", f.Ops()[n:])
		}
	}
	if _, err := tg.Attach(ctx, "tcm-user/1/ghost/vdisk/size=1M"); err == nil || !strings.Contains(err.Error(), "no uio device") {
		t.Errorf("Attach of a device with no uio: %v", err)
	}
	if _, err := tg.Attach(ctx, "bogus"); err == nil {
		t.Error("Attach of a malformed name succeeded")
	}
	good := f.foreign("2", "d1", "vdisk/size=1M")
	if _, err := tg.Attach(ctx, good); err != nil {
		t.Fatal(err)
	}
	// targetcli links the LUN after enable: Devices finds it then.
	if ds := tg.Devices(); len(ds) != 1 || ds[0].Info.SCSI.Address != "" {
		t.Fatalf("Devices before the LUN exists: %+v", ds)
	}
	f.exportForeign("naa.5001405000000002", "2", "d1")
	if ds := tg.Devices(); len(ds) != 1 || ds[0].Info.SCSI.Address != "3:0:1:0" || ds[0].Info.SCSI.Block != "sda" {
		t.Errorf("Devices after targetcli linked the LUN: %+v", ds[0].Info.SCSI)
	}
	if ok, err := tg.Detach(2, "d1"); !ok || err != nil {
		t.Fatalf("Detach: %v %v", ok, err)
	}
	if closed != 1 || len(tg.Devices()) != 0 {
		t.Errorf("after Detach: handler closed %d times, devices %+v", closed, tg.Devices())
	}
	if ok, _ := tg.Detach(2, "d1"); ok {
		t.Error("second Detach found the device")
	}
}

type closer struct {
	Handler
	n *int
}

func (c closer) Close() error { *c.n++; return nil }

var _ io.Closer = closer{}

// Devices counts each device's own LUNs when many devices are exported
// (one configfs walk serves them all): three attached devices, on one,
// two and no loopback targets.
func TestDevicesExportsOfManyDevices(t *testing.T) {
	f := newFixture(t)
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	for i, name := range []string{"tc0", "tc1", "tc2"} {
		cfgstr := f.foreign("7", name, "vtape/memory=1")
		for j := range i {
			f.exportForeign(fmt.Sprintf("naa.50014050000000%d%d", i, j), "7", name)
		}
		if _, err := tg.Attach(context.Background(), cfgstr); err != nil {
			t.Fatal(err)
		}
	}
	got := map[string][]FabricLUNs{}
	for _, d := range tg.Devices() {
		got[d.Info.Name] = d.Exports
	}
	want := map[string][]FabricLUNs{"tc0": nil, "tc1": {{"loopback", 1}}, "tc2": {{"loopback", 2}}}
	for name, w := range want {
		if !slices.Equal(got[name], w) {
			t.Errorf("%s: Exports %+v, want %+v", name, got[name], w)
		}
	}
}
