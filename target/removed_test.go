package target

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/target/tcmu"
	"go.uber.org/zap/zapcore"
	"go.uber.org/zap/zaptest/observer"
	"golang.org/x/sys/unix"
)

// goneRing is a uio device the kernel unregistered: Wait fails with EIO
// once gone is closed, as uio_read does after uio_unregister_device.
type goneRing struct {
	tcmu.UIO
	gone chan struct{}
}

func (r goneRing) Wait(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-r.gone:
		return fmt.Errorf("read uio event: %w", unix.EIO)
	}
}

// goneOpener opens the fixture's rings as goneRings, handing each one's
// close-to-unregister channel to keep.
func (f *fixture) goneOpener(keep func(path string, gone chan struct{})) func(string, int) (tcmu.UIO, error) {
	return func(path string, size int) (tcmu.UIO, error) {
		rd, err := f.open(path, size)
		if err != nil {
			return nil, err
		}
		ch := make(chan struct{})
		keep(path, ch)
		return goneRing{rd, ch}, nil
	}
}

// TestRemovedByAnotherToolEndsQuietly: targetcli clearconfig removes one
// of the config file's devices; the kernel does not wait for our reply to
// REMOVED (nl_reply_supported=-1) and unregisters the uio device at once,
// so the loop fails before the event arrives. With the configfs object
// gone that is a removal (Info), not a device fault (Error, failFast).
func TestRemovedByAnotherToolEndsQuietly(t *testing.T) {
	f := newFixture(t)
	core, logs := observer.New(zapcore.InfoLevel)
	opts := f.options(zap.New(core))
	gone := map[string]chan struct{}{}
	opts.open = f.goneOpener(func(path string, ch chan struct{}) { gone[filepath.Base(path)] = ch })
	tg, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	ctx := context.Background()
	infos := map[string]DeviceInfo{}
	for _, n := range []string{"removed", "faulty"} {
		info, err := tg.Create(ctx, DeviceSpec{Name: n, Subtype: "vdisk", Config: "size=1G"})
		if err != nil {
			t.Fatal(err)
		}
		infos[n] = info
	}
	// "removed": LUN and storage object gone (configfs rmdir), then its
	// ring. "faulty": its ring fails with the object still there.
	obj := filepath.Join(f.paths.ConfigFS, "target", "core", "user_"+strconv.Itoa(infos["removed"].HBA), "removed")
	if err := os.RemoveAll(obj); err != nil {
		t.Fatal(err)
	}
	close(gone[infos["removed"].UIO])
	close(gone[infos["faulty"].UIO])
	deadline := time.Now().Add(5 * time.Second)
	for logs.FilterMessageSnippet("removed by the kernel or another tool").Len() == 0 ||
		logs.FilterLevelExact(zapcore.ErrorLevel).Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("logs: %v", logs.All())
		}
		time.Sleep(time.Millisecond)
	}
	// The removed device's loop has ended: whatever it logs, it has.
	<-tg.devs[slices.IndexFunc(tg.devs, func(m *managed) bool { return m.info.Name == "removed" })].done
	for _, e := range logs.FilterLevelExact(zapcore.ErrorLevel).All() {
		if e.ContextMap()["device"] != "faulty" {
			t.Errorf("Error logged for %v: %s", e.ContextMap()["device"], e.Message)
		}
	}
	if n := logs.FilterMessageSnippet("removed by the kernel or another tool").FilterField(zap.String("device", "removed")).Len(); n != 1 {
		t.Errorf("%d Info lines for the removed device, want 1", n)
	}
	for _, ds := range tg.Devices() {
		if failed := ds.Err != nil; failed != (ds.Info.Name == "faulty") {
			t.Errorf("%s: Err %v", ds.Info.Name, ds.Err)
		}
	}
}

// TestRemovedRingFailsBeforeObjectGoes: the rmdir unregisters the uio
// device first and drops the configfs directory a moment later; the loop
// fails in between (seen in the VM). Still a removal, not a fault.
func TestRemovedRingFailsBeforeObjectGoes(t *testing.T) {
	f := newFixture(t)
	core, logs := observer.New(zapcore.InfoLevel)
	opts := f.options(zap.New(core))
	var gone chan struct{}
	opts.open = f.goneOpener(func(_ string, ch chan struct{}) { gone = ch })
	tg, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	info, err := tg.Create(context.Background(), DeviceSpec{Name: "late", Subtype: "vdisk", Config: "size=1G"})
	if err != nil {
		t.Fatal(err)
	}
	// The loop's ring fails; the directory goes only once the loop has
	// seen it still there.
	obj := filepath.Join(f.paths.ConfigFS, "target", "core", "user_"+strconv.Itoa(info.HBA), "late")
	seen := make(chan struct{})
	var once sync.Once
	saw := func(p string) {
		if p == obj {
			once.Do(func() { close(seen) })
		}
	}
	f.sawObject.Store(&saw)
	close(gone)
	<-seen
	if err := os.RemoveAll(obj); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for logs.FilterMessageSnippet("removed by the kernel or another tool").Len() == 0 {
		if time.Now().After(deadline) {
			t.Fatalf("logs: %v", logs.All())
		}
		time.Sleep(time.Millisecond)
	}
	if n := logs.FilterLevelExact(zapcore.ErrorLevel).Len(); n != 0 {
		t.Errorf("%d Error lines for a removal", n)
	}
}
