package target

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// TestAttachReplacesDeadDevice: targetcli's enable lost the netlink reply
// race to tcmu-runner, the kernel unregistered the uio device and sent no
// REMOVED, so vscsid still lists a device of that name whose ring is
// gone. Creating the backstore again (same HBA and name) must serve the
// new one, not answer "already served".
func TestAttachReplacesDeadDevice(t *testing.T) {
	f := newFixture(t)
	opts := f.options(zaptest.NewLogger(t))
	var gone []chan struct{}
	opts.open = f.goneOpener(func(_ string, ch chan struct{}) { gone = append(gone, ch) })
	tg, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	ctx := context.Background()
	name := f.foreign("7", "tc0", "vdisk/size=1G")
	if _, err := tg.Attach(ctx, name); err != nil {
		t.Fatal(err)
	}
	// A second ADDED while it serves is a no-op.
	n := len(f.Ops())
	if _, err := tg.Attach(ctx, name); err != nil || len(f.Ops()) != n {
		t.Fatalf("Attach of a serving device: %v, ops %v", err, f.Ops()[n:])
	}
	close(gone[0]) // the kernel unregistered its uio device
	deadline := time.Now().Add(5 * time.Second)
	for tg.find(7, "tc0").serving() {
		if time.Now().After(deadline) {
			t.Fatal("the loop of a device whose ring is gone never ended")
		}
		time.Sleep(time.Millisecond)
	}
	n = len(f.Ops())
	info, err := tg.Attach(ctx, name)
	if err != nil {
		t.Fatal(err)
	}
	opens := slices.DeleteFunc(slices.Clone(f.Ops()[n:]), func(s string) bool { return !strings.HasPrefix(s, "open ") })
	if len(opens) != 1 || len(gone) != 2 {
		t.Fatalf("re-attach ops %v (%d rings opened in all)", f.Ops()[n:], len(gone))
	}
	ds := tg.Devices()
	if len(ds) != 1 || ds[0].Info.Name != "tc0" || ds[0].Info.UIO != info.UIO || !tg.find(7, "tc0").serving() {
		t.Fatalf("devices after re-attach: %+v", ds)
	}
}
