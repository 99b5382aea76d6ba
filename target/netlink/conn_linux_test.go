//go:build linux

package netlink

import (
	"context"
	"errors"
	"net"
	"os"
	"testing"
	"time"

	"github.com/mdlayher/genetlink"
	nl "github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

// TestRealSocketCancel checks, on a real generic netlink socket of this
// kernel, what the fakes only model: a Receive blocked in recvmsg returns
// when its context is cancelled (read deadline through the runtime
// poller), the socket keeps working afterwards, and Close unblocks it. The
// socket joins nlctrl's notify group, which every kernel has, so the test
// does not need target_core_user.
func TestRealSocketCancel(t *testing.T) {
	events, err := nl.Dial(unix.NETLINK_GENERIC, nil)
	if err != nil {
		t.Skipf("no generic netlink socket: %v", err)
	}
	cmds, err := genetlink.Dial(nil)
	if err != nil {
		_ = events.Close()
		t.Skipf("no generic netlink socket: %v", err)
	}
	ctrl, err := cmds.GetFamily(ctrlFamilyName)
	if err != nil {
		t.Fatalf("resolve nlctrl: %v", err)
	}
	notify, ok := findGroup(ctrl, ctrlGroupName)
	if !ok {
		t.Fatal("nlctrl has no notify group")
	}
	if err := events.JoinGroup(notify.ID); err != nil {
		t.Fatalf("join nlctrl notify: %v", err)
	}
	// A family id no message will carry: nothing decodes as an event.
	c := &Conn{events: events, cmds: cmds, family: genetlink.Family{ID: 0xfffe, Name: familyName}}
	defer func() { _ = c.Close() }()

	for i := range 2 { // twice: the deadline must not stick
		ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
		start := time.Now()
		_, err := c.Receive(ctx)
		cancel()
		if !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Receive #%d = %v, want context.DeadlineExceeded", i, err)
		}
		if d := time.Since(start); d > 5*time.Second {
			t.Fatalf("Receive #%d took %v to notice its context", i, d)
		}
	}

	errc := make(chan error, 1)
	go func() {
		_, err := c.Receive(context.Background())
		errc <- err
	}()
	time.Sleep(50 * time.Millisecond)
	_ = c.Close()
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Receive after Close = %v, want net.ErrClosed", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("Close did not unblock Receive")
	}
}

// TestDialWithoutModule: where target_core_user is not loaded (as on
// build machines), Dial must say so, matching os.ErrNotExist.
func TestDialWithoutModule(t *testing.T) {
	if _, err := os.Stat("/sys/module/target_core_user"); err == nil {
		t.Skip("target_core_user is loaded here")
	}
	c, err := Dial()
	if err == nil {
		_ = c.Close()
		t.Fatal("Dial succeeded without target_core_user")
	}
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("Dial = %v, want os.ErrNotExist", err)
	}
}
