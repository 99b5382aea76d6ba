//go:build linux

package netlink_test

import (
	"bytes"
	"context"
	"errors"
	"net"
	"os"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/mdlayher/genetlink"
	nl "github.com/mdlayher/netlink"
	"go.uber.org/goleak"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/target/netlink"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// UAPI numbers (include/uapi/linux/target_core_user.h), spelled out here so
// that the tests do not share the package's constants; named after the
// header's TCMU_CMD_* and TCMU_ATTR_*.
const (
	tADDED, tREMOVED, tRECONFIG                 = 1, 2, 3
	tADDED_DONE, tREMOVED_DONE, tRECONFIG_DONE  = 4, 5, 6       //nolint:revive // the header's spelling
	tSET_FEATURES                               = 7             //nolint:revive // the header's spelling
	aDEVICE, aMINOR, aPAD, aDEV_CFG, aDEV_SIZE  = 1, 2, 3, 4, 5 //nolint:revive // the header's spelling
	aWRITECACHE, aCMD_STATUS, aDEVICE_ID, aSUPP = 6, 7, 8, 9    //nolint:revive // the header's spelling
	diskName                                    = "tcm-user/3/disk0/vdisk/size=1G;lbs=4096"
	receiveWait                                 = 5 * time.Second
)

func receive(t *testing.T, c *netlink.Conn) netlink.Event {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), receiveWait)
	defer cancel()
	ev, err := c.Receive(ctx)
	if err != nil {
		t.Fatalf("Receive: %v", err)
	}
	return ev
}

func TestNewConnJoinsGroups(t *testing.T) {
	k := newFakeKernel(t)
	k.dial(t)
	want := map[uint32]bool{tcmuGroupID: true, ctrlNotifyID: true}
	if got := k.events.joined(); !reflect.DeepEqual(got, want) {
		t.Errorf("joined groups %v, want %v (TCM-USER config and nlctrl notify)", got, want)
	}
	if r := k.sent(); len(r) != 0 {
		t.Errorf("NewConn sent requests to the family: %v", r)
	}
}

func TestNewConnErrors(t *testing.T) {
	t.Run("module not loaded", func(t *testing.T) {
		k := newFakeKernel(t)
		noFamily := tcmuFamily
		noFamily.Name = "SOMETHING-ELSE" // the fake answers ENOENT for TCM-USER
		ev, cmds := k.eventConn(), k.commandConn(noFamily)
		defer func() { _ = ev.Close() }()
		defer func() { _ = cmds.Close() }()
		_, err := netlink.NewConn(ev, cmds)
		if !errors.Is(err, os.ErrNotExist) {
			t.Fatalf("err = %v, want os.ErrNotExist", err)
		}
		if !strings.Contains(err.Error(), "target_core_user") {
			t.Errorf("error %q does not name the module to load", err)
		}
	})
	t.Run("no config group", func(t *testing.T) {
		k := newFakeKernel(t)
		f := tcmuFamily
		f.Groups = []genetlink.MulticastGroup{{ID: 3, Name: "other"}}
		ev, cmds := k.eventConn(), k.commandConn(f)
		defer func() { _ = ev.Close() }()
		defer func() { _ = cmds.Close() }()
		if _, err := netlink.NewConn(ev, cmds); err == nil || !strings.Contains(err.Error(), `"config"`) {
			t.Fatalf("err = %v, want one about the missing config group", err)
		}
	})
}

func ptr[T any](v T) *T { return &v }

func TestReceiveEvents(t *testing.T) {
	dev := netlink.Device{DeviceName: diskName, Minor: 4, DeviceID: 17, Version: 2}
	common := []nl.Attribute{aString(aDEVICE, diskName), aU32(aMINOR, 4), aU32(aDEVICE_ID, 17)}
	tests := []struct {
		name  string
		cmd   uint8
		extra []nl.Attribute
		want  netlink.Event
	}{
		{"added", tADDED, nil, netlink.Added{Device: dev}},
		{"removed", tREMOVED, nil, netlink.Removed{Device: dev}},
		{"reconfig dev_config", tRECONFIG, []nl.Attribute{aString(aDEV_CFG, "vdisk/size=2G\n")},
			netlink.Reconfig{Device: dev, DevConfig: ptr("vdisk/size=2G\n")}},
		// nla_put_u64_64bit puts a PAD attribute first where 64-bit
		// alignment needs it; it must be ignored.
		{"reconfig dev_size", tRECONFIG, []nl.Attribute{{Type: aPAD}, aU64(aDEV_SIZE, 2<<30)},
			netlink.Reconfig{Device: dev, DevSize: ptr(uint64(2 << 30))}},
		{"reconfig writecache on", tRECONFIG, []nl.Attribute{aU8(aWRITECACHE, 1)},
			netlink.Reconfig{Device: dev, WriteCache: ptr(true)}},
		{"reconfig writecache off", tRECONFIG, []nl.Attribute{aU8(aWRITECACHE, 0)},
			netlink.Reconfig{Device: dev, WriteCache: ptr(false)}},
		{"unknown attribute ignored", tADDED, []nl.Attribute{aU32(200, 1)}, netlink.Added{Device: dev}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			k := newFakeKernel(t)
			c := k.dial(t)
			k.multicast(tt.cmd, 2, append(append([]nl.Attribute{}, common...), tt.extra...)...)
			got := receive(t, c)
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("event = %#v\nwant    %#v", got, tt.want)
			}
			if got.Dev().UIO() != "uio4" {
				t.Errorf("UIO() = %q, want uio4", got.Dev().UIO())
			}
		})
	}
}

func TestReceiveVersion1Event(t *testing.T) {
	// Kernels before command replies sent DEVICE and MINOR only.
	k := newFakeKernel(t)
	c := k.dial(t)
	k.multicast(tADDED, 1, aString(aDEVICE, diskName), aU32(aMINOR, 0))
	got := receive(t, c)
	want := netlink.Added{Device: netlink.Device{DeviceName: diskName, Version: 1}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("event = %#v, want %#v", got, want)
	}
	// Nobody waits for a reply to it: Reply must not send one.
	if err := c.Reply(got, 0); err != nil {
		t.Fatalf("Reply: %v", err)
	}
	if r := k.sent(); len(r) != 0 {
		t.Errorf("Reply to a version 1 event sent %v", r)
	}
}

func TestReceiveSkipsWhatIsNotAnEvent(t *testing.T) {
	k := newFakeKernel(t)
	c := k.dial(t)
	// A command that is not an event, an nlctrl notification about another
	// family, and a stray message of another family type.
	k.multicast(tSET_FEATURES, 2, aU8(aSUPP, 1))
	k.deliver(ctrlNotifyID, unix.GENL_ID_CTRL, unix.CTRL_CMD_NEWFAMILY, 2, aString(unix.CTRL_ATTR_FAMILY_NAME, "devlink"))
	k.deliver(ctrlNotifyID, unix.GENL_ID_CTRL, unix.CTRL_CMD_DELFAMILY, 2,
		nl.Attribute{Type: unix.CTRL_ATTR_FAMILY_ID, Data: []byte{0x22, 0}}, aString(unix.CTRL_ATTR_FAMILY_NAME, "devlink"))
	k.deliver(tcmuGroupID, 0x55, tADDED, 2, aString(aDEVICE, "x"), aU32(aMINOR, 9), aU32(aDEVICE_ID, 9))
	k.multicast(tREMOVED, 2, aString(aDEVICE, diskName), aU32(aMINOR, 4), aU32(aDEVICE_ID, 17))
	got := receive(t, c)
	if _, ok := got.(netlink.Removed); !ok || got.Dev().DeviceID != 17 {
		t.Fatalf("event = %#v, want the REMOVED of device 17", got)
	}
}

func TestReceiveFamilyRemoved(t *testing.T) {
	k := newFakeKernel(t)
	c := k.dial(t)
	k.deliver(ctrlNotifyID, unix.GENL_ID_CTRL, unix.CTRL_CMD_DELFAMILY, 2,
		nl.Attribute{Type: unix.CTRL_ATTR_FAMILY_ID, Data: []byte{tcmuFamilyID, 0}}, aString(unix.CTRL_ATTR_FAMILY_NAME, "TCM-USER"))
	ctx, cancel := context.WithTimeout(context.Background(), receiveWait)
	defer cancel()
	if _, err := c.Receive(ctx); !errors.Is(err, netlink.ErrFamilyRemoved) {
		t.Fatalf("Receive = %v, want ErrFamilyRemoved", err)
	}
}

func TestReceiveMalformed(t *testing.T) {
	k := newFakeKernel(t)
	c := k.dial(t)
	// RECONFIG with two new values at once, and a MINOR of the wrong size.
	k.multicast(tRECONFIG, 2, aString(aDEVICE, diskName), aU32(aMINOR, 4), aU32(aDEVICE_ID, 17),
		aU8(aWRITECACHE, 1), aU64(aDEV_SIZE, 1))
	k.multicast(tADDED, 2, aString(aDEVICE, diskName), aU8(aMINOR, 4), aU32(aDEVICE_ID, 18))
	k.multicast(tADDED, 2, aString(aDEVICE, diskName), aU32(aMINOR, 4))
	k.multicast(tADDED, 2, aString(aDEVICE, diskName), aU32(aMINOR, 5), aU32(aDEVICE_ID, 19))

	ctx, cancel := context.WithTimeout(context.Background(), receiveWait)
	defer cancel()
	var de *netlink.DecodeError
	_, err := c.Receive(ctx)
	if !errors.As(err, &de) || de.Command != tRECONFIG || de.Event == nil || de.Event.Dev().DeviceID != 17 {
		t.Fatalf("first Receive = %v, want a DecodeError with the answerable RECONFIG of device 17", err)
	}
	if _, ok := de.Event.(netlink.Reconfig); !ok {
		t.Errorf("DecodeError.Event is %T, want netlink.Reconfig", de.Event)
	}
	// The kernel waits for an answer: the caller can give it one.
	if err := c.Reply(de.Event, -int32(unix.EINVAL)); err != nil {
		t.Fatalf("Reply: %v", err)
	}
	if r := k.sent(); len(r) != 1 || r[0].Command != tRECONFIG_DONE {
		t.Fatalf("sent %v, want one RECONFIG_DEVICE_DONE", r)
	}

	_, err = c.Receive(ctx)
	if !errors.As(err, &de) || de.Event == nil || de.Event.Dev().DeviceID != 18 || !strings.Contains(err.Error(), "MINOR") {
		t.Fatalf("second Receive = %v, want a DecodeError about MINOR for device 18", err)
	}
	_, err = c.Receive(ctx)
	if !errors.As(err, &de) || de.Event != nil {
		t.Fatalf("third Receive = %v, want a DecodeError without an answerable event (no DEVICE_ID)", err)
	}
	if ev := receive(t, c); ev.Dev().DeviceID != 19 {
		t.Fatalf("fourth Receive = %#v, want the ADDED of device 19", ev)
	}
}

func TestReceiveCancel(t *testing.T) {
	k := newFakeKernel(t)
	c := k.dial(t)
	ctx, cancel := context.WithCancel(context.Background())
	errc := make(chan error, 1)
	go func() {
		_, err := c.Receive(ctx)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond) // let it block
	cancel()
	select {
	case err := <-errc:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("Receive = %v, want context.Canceled", err)
		}
	case <-time.After(receiveWait):
		t.Fatal("Receive did not return after cancel")
	}
	// The deadline used to unblock it must not stick.
	k.multicast(tADDED, 2, aString(aDEVICE, diskName), aU32(aMINOR, 4), aU32(aDEVICE_ID, 17))
	if ev := receive(t, c); ev.Dev().DeviceID != 17 {
		t.Fatalf("event after cancel = %#v", ev)
	}

	// A context that is already done returns at once, without reading.
	done, cancel2 := context.WithCancel(context.Background())
	cancel2()
	k.multicast(tREMOVED, 2, aString(aDEVICE, diskName), aU32(aMINOR, 4), aU32(aDEVICE_ID, 17))
	if _, err := c.Receive(done); !errors.Is(err, context.Canceled) {
		t.Fatalf("Receive(done ctx) = %v, want context.Canceled", err)
	}
	if ev := receive(t, c); reflect.TypeOf(ev) != reflect.TypeOf(netlink.Removed{}) {
		t.Fatalf("event = %#v, want the REMOVED that waited", ev)
	}
}

func TestReceiveClose(t *testing.T) {
	k := newFakeKernel(t)
	c := k.dial(t)
	errc := make(chan error, 1)
	go func() {
		_, err := c.Receive(context.Background())
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	if err := c.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	select {
	case err := <-errc:
		if !errors.Is(err, net.ErrClosed) {
			t.Fatalf("Receive = %v, want net.ErrClosed", err)
		}
	case <-time.After(receiveWait):
		t.Fatal("Receive did not return after Close")
	}
	if _, err := c.Receive(context.Background()); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Receive after Close = %v, want net.ErrClosed", err)
	}
	if err := c.Reply(netlink.Added{Device: netlink.Device{DeviceID: 1, Version: 2}}, 0); !errors.Is(err, net.ErrClosed) {
		t.Errorf("Reply after Close = %v, want net.ErrClosed", err)
	}
	if err := c.Close(); err != nil {
		t.Errorf("second Close: %v", err)
	}
}

func TestReceiveOverrun(t *testing.T) {
	k := newFakeKernel(t)
	c := k.dial(t)
	k.events.failReceive(os.NewSyscallError("recvmsg", unix.ENOBUFS))
	ctx, cancel := context.WithTimeout(context.Background(), receiveWait)
	defer cancel()
	_, err := c.Receive(ctx)
	if !errors.Is(err, netlink.ErrEventsLost) || !errors.Is(err, unix.ENOBUFS) {
		t.Fatalf("Receive = %v, want ErrEventsLost wrapping ENOBUFS", err)
	}
	k.multicast(tADDED, 2, aString(aDEVICE, diskName), aU32(aMINOR, 4), aU32(aDEVICE_ID, 17))
	if ev := receive(t, c); ev.Dev().DeviceID != 17 {
		t.Fatalf("event after overrun = %#v", ev)
	}
}

func TestSetFeatures(t *testing.T) {
	for _, on := range []bool{true, false} {
		k := newFakeKernel(t)
		c := k.dial(t)
		if err := c.SetFeatures(on); err != nil {
			t.Fatalf("SetFeatures(%v): %v", on, err)
		}
		var v byte
		if on {
			v = 1
		}
		// struct nlattr {len=5, type=9} + u8 + 3 bytes of padding.
		want := request{Type: tcmuFamilyID, Flags: nl.Request | nl.Acknowledge, Command: tSET_FEATURES, Version: 2,
			Data: []byte{5, 0, aSUPP, 0, v, 0, 0, 0}}
		if got := k.sent(); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("SetFeatures(%v) sent %v\nwant %v", on, got, []request{want})
		}
	}
}

func TestSetFeaturesErrors(t *testing.T) {
	tests := []struct {
		errno       unix.Errno
		unsupported bool
	}{
		{unix.EOPNOTSUPP, true}, // kernel without TCMU_CMD_SET_FEATURES
		{unix.EINVAL, true},
		{unix.EPERM, false}, // no CAP_NET_ADMIN: a real failure
	}
	for _, tt := range tests {
		k := newFakeKernel(t)
		c := k.dial(t)
		k.failNext(tt.errno)
		err := c.SetFeatures(true)
		if !errors.Is(err, tt.errno) {
			t.Errorf("%v: SetFeatures = %v, want it to wrap the errno", tt.errno, err)
		}
		if got := errors.Is(err, netlink.ErrFeaturesUnsupported); got != tt.unsupported {
			t.Errorf("%v: errors.Is(err, ErrFeaturesUnsupported) = %v, want %v", tt.errno, got, tt.unsupported)
		}
	}
}

func TestReply(t *testing.T) {
	dev := netlink.Device{DeviceName: diskName, Minor: 4, DeviceID: 0x01020304, Version: 2}
	tests := []struct {
		ev     netlink.Event
		status int32
		cmd    uint8
	}{
		{netlink.Added{Device: dev}, 0, tADDED_DONE},
		{netlink.Removed{Device: dev}, 0, tREMOVED_DONE},
		{netlink.Reconfig{Device: dev, DevSize: ptr(uint64(1))}, -int32(unix.EOPNOTSUPP), tRECONFIG_DONE},
		{netlink.Added{Device: dev}, -int32(unix.ENOENT), tADDED_DONE},
	}
	for _, tt := range tests {
		k := newFakeKernel(t)
		c := k.dial(t)
		if err := c.Reply(tt.ev, tt.status); err != nil {
			t.Fatalf("Reply(%T, %d): %v", tt.ev, tt.status, err)
		}
		// CMD_STATUS (s32) then DEVICE_ID (u32), native endian.
		data := bytes.Join([][]byte{
			{8, 0, aCMD_STATUS, 0}, le32(uint32(tt.status)),
			{8, 0, aDEVICE_ID, 0}, le32(0x01020304),
		}, nil)
		want := request{Type: tcmuFamilyID, Flags: nl.Request | nl.Acknowledge, Command: tt.cmd, Version: 2, Data: data}
		if got := k.sent(); len(got) != 1 || !reflect.DeepEqual(got[0], want) {
			t.Errorf("Reply(%T, %d) sent %v\nwant %v", tt.ev, tt.status, got, want)
		}
	}
}

func le32(v uint32) []byte { return []byte{byte(v), byte(v >> 8), byte(v >> 16), byte(v >> 24)} }

func TestReplyNotPending(t *testing.T) {
	for _, errno := range []unix.Errno{unix.ENODEV, unix.EINVAL} {
		k := newFakeKernel(t)
		c := k.dial(t)
		k.failNext(errno)
		err := c.Reply(netlink.Added{Device: netlink.Device{DeviceID: 5, Version: 2}}, 0)
		if !errors.Is(err, netlink.ErrNotPending) || !errors.Is(err, errno) {
			t.Errorf("%v: Reply = %v, want ErrNotPending wrapping the errno", errno, err)
		}
	}
	k := newFakeKernel(t)
	c := k.dial(t)
	k.failNext(unix.EPERM)
	if err := c.Reply(netlink.Added{Device: netlink.Device{DeviceID: 5, Version: 2}}, 0); err == nil || errors.Is(err, netlink.ErrNotPending) {
		t.Errorf("EPERM: Reply = %v, want a plain error", err)
	}
	if err := c.Reply(nil, 0); err == nil {
		t.Error("Reply(nil) succeeded")
	}
}

// Replies go out on their own socket: a Receive blocked on the event
// socket must not hold them up, as it would with a single netlink.Conn.
func TestReplyWhileReceiveBlocks(t *testing.T) {
	k := newFakeKernel(t)
	c := k.dial(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	errc := make(chan error, 1)
	go func() {
		_, err := c.Receive(ctx)
		errc <- err
	}()
	time.Sleep(20 * time.Millisecond)
	replied := make(chan error, 1)
	go func() { replied <- c.Reply(netlink.Added{Device: netlink.Device{DeviceID: 1, Version: 2}}, 0) }()
	select {
	case err := <-replied:
		if err != nil {
			t.Fatalf("Reply: %v", err)
		}
	case <-time.After(receiveWait):
		t.Fatal("Reply blocked behind Receive")
	}
	cancel()
	if err := <-errc; !errors.Is(err, context.Canceled) {
		t.Errorf("Receive after cancel: %v, want context.Canceled", err)
	}
}
