package target

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"

	"go.uber.org/zap/zaptest"
)

// Remove takes away one created device, exactly as Close would, and leaves
// the others and the devices of other tools served.
func TestRemove(t *testing.T) {
	f := newFixture(t)
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	ctx := context.Background()
	for _, n := range []string{"d0", "d1"} {
		if _, err := tg.Create(ctx, DeviceSpec{Name: n, Subtype: "vdisk", Config: "size=1G", Size: 1 << 30, BlockSize: 512}); err != nil {
			t.Fatal(err)
		}
	}
	name := f.foreign("7", "tc0", "vtape/media=/m;barcode=A1")
	f.exportForeign("naa.5001405000000001", "7", "tc0")
	if _, err := tg.Attach(ctx, name); err != nil {
		t.Fatal(err)
	}

	n := len(f.Ops())
	if err := tg.Remove("d0"); err != nil {
		t.Fatal(err)
	}
	naa := "config/target/loopback/" + wwn("target", "d0")
	want := []string{
		"unlink " + naa + "/tpgt_1/lun/lun_0/d0",
		"rmdir " + naa + "/tpgt_1/lun/lun_0",
		"rmdir " + naa + "/tpgt_1",
		"rmdir " + naa,
		"close dev/uio0",
		"rmdir config/target/core/user_2/d0",
		"rmdir config/target/core/user_2",
	}
	if got := f.Ops()[n:]; !slices.Equal(got, want) {
		t.Errorf("remove ops:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	var names []string
	for _, d := range tg.Devices() {
		names = append(names, d.Info.Name)
	}
	if !slices.Equal(names, []string{"d1", "tc0"}) {
		t.Errorf("after Remove(d0) serving %v", names)
	}

	n = len(f.Ops())
	if err := tg.Remove("d0"); !errors.Is(err, ErrNoDevice) {
		t.Errorf("second Remove(d0): %v", err)
	}
	if err := tg.Remove("tc0"); !errors.Is(err, ErrNotOwned) {
		t.Errorf("Remove of targetcli's device: %v", err)
	}
	if got := f.Ops()[n:]; len(got) != 0 {
		t.Errorf("refused removals touched configfs: %v", got)
	}
	// The name is free again.
	if _, err := tg.Create(ctx, DeviceSpec{Name: "d0", Subtype: "vdisk", Config: "size=1G", Size: 1 << 30, BlockSize: 512}); err != nil {
		t.Errorf("re-create d0: %v", err)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	if err := tg.Remove("d1"); !errors.Is(err, ErrClosed) {
		t.Errorf("Remove after Close: %v", err)
	}
}
