package netlink

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/mdlayher/genetlink"
	nl "github.com/mdlayher/netlink"
	"golang.org/x/sys/unix"
)

var (
	// ErrFeaturesUnsupported is returned by SetFeatures when the kernel
	// predates TCMU_CMD_SET_FEATURES (EOPNOTSUPP) or rejects it (EINVAL).
	// The kernel then never waits for replies: log it at Warn and go on,
	// as tcmu-runner does.
	ErrFeaturesUnsupported = errors.New("kernel does not support tcm-user SET_FEATURES")

	// ErrNotPending is returned by Reply when the kernel was not waiting
	// for that reply: replies are off (SetFeatures not sent, or the
	// device's nl_reply_supported is 0 or -1), another daemon (tcmu-runner)
	// answered first, or the device is gone. tcmu_genl_cmd_done answers
	// ENODEV ("completion could not find device") or, when the device has
	// no pending command of that kind, EINVAL ("Mismatched commands");
	// which one depends on the kernel version. Harmless: log it at Debug.
	ErrNotPending = errors.New("kernel was not waiting for this tcm-user reply")

	// ErrEventsLost is returned by Receive when the socket's receive
	// buffer overflowed (ENOBUFS): events were dropped. The Conn keeps
	// working, but the caller must reconcile its devices from sysfs and
	// configfs. A dropped ADDED_DEVICE with replies on leaves the enable
	// write blocked until something replies or reset_netlink is used.
	ErrEventsLost = errors.New("tcm-user netlink events lost")

	// ErrFamilyRemoved is returned by Receive when the TCM-USER family was
	// unregistered (target_core_user unloaded): no event will ever arrive
	// on this Conn. Close it and Dial again once the module is back.
	ErrFamilyRemoved = errors.New("tcm-user netlink family removed (target_core_user unloaded)")
)

// Conn is a connection to the kernel's TCM-USER generic netlink family.
//
// It holds two sockets: one joined to the "config" multicast group (and to
// nlctrl's "notify" group), read only by Receive, and one for requests
// (SET_FEATURES and the *_DONE replies), each sent with NLM_F_ACK so that
// the kernel's verdict is returned to the caller. With one socket, a reply
// would have to wait for a blocked Receive, and its acknowledgement would
// arrive interleaved with events.
//
// Receive may be called from one goroutine at a time (calls are
// serialised); SetFeatures, Reply and Close may be called concurrently with
// Receive and with each other. Close unblocks a blocked Receive.
type Conn struct {
	events *nl.Conn
	cmds   *genetlink.Conn
	family genetlink.Family

	recvMu  sync.Mutex // serialises Receive; guards pending
	pending []nl.Message

	closed atomic.Bool
}

// NewConn builds a Conn over two generic netlink connections: events is
// joined to the multicast groups and read by Receive, commands carries the
// family lookups and the requests. The Conn owns both from then on (Close
// closes them), but NewConn does not close them when it fails.
//
// NewConn is for tests (nltest and genltest fakes); use Dial.
func NewConn(events *nl.Conn, commands *genetlink.Conn) (*Conn, error) {
	f, err := commands.GetFamily(familyName)
	if err != nil {
		return nil, fmt.Errorf("resolve generic netlink family %s (is target_core_user loaded?): %w", familyName, err)
	}
	grp, ok := findGroup(f, groupName)
	if !ok {
		return nil, fmt.Errorf("generic netlink family %s has no multicast group %q", familyName, groupName)
	}
	ctrl, err := commands.GetFamily(ctrlFamilyName)
	if err != nil {
		return nil, fmt.Errorf("resolve generic netlink family %s: %w", ctrlFamilyName, err)
	}
	notify, ok := findGroup(ctrl, ctrlGroupName)
	if !ok {
		return nil, fmt.Errorf("generic netlink family %s has no multicast group %q", ctrlFamilyName, ctrlGroupName)
	}
	if err := events.JoinGroup(grp.ID); err != nil {
		return nil, fmt.Errorf("join %s multicast group %q: %w", familyName, groupName, err)
	}
	if err := events.JoinGroup(notify.ID); err != nil {
		return nil, fmt.Errorf("join %s multicast group %q: %w", ctrlFamilyName, ctrlGroupName, err)
	}
	return &Conn{events: events, cmds: commands, family: f}, nil
}

func findGroup(f genetlink.Family, name string) (genetlink.MulticastGroup, bool) {
	for _, g := range f.Groups {
		if g.Name == name {
			return g, true
		}
	}
	return genetlink.MulticastGroup{}, false
}

// Close closes both sockets and unblocks a blocked Receive, which then
// returns an error matching net.ErrClosed.
func (c *Conn) Close() error {
	if c.closed.Swap(true) {
		return nil
	}
	return errors.Join(c.events.Close(), c.cmds.Close())
}

// SetFeatures tells the kernel whether this daemon answers events with
// *_DONE replies (TCMU_CMD_SET_FEATURES, TCMU_ATTR_SUPP_KERN_CMD_REPLY).
//
// The setting is module-global and sticky: it outlives the daemon. While it
// is on, the kernel waits, uninterruptibly and without timeout, for a reply
// to every event of a device whose nl_reply_supported is positive (the
// default once enabled): enable, removal and attribute writes block until
// someone replies. Devices created with nl_reply_supported=-1 never wait.
//
// Kernels that predate the command answer EOPNOTSUPP or EINVAL; the
// returned error then matches ErrFeaturesUnsupported.
func (c *Conn) SetFeatures(cmdReply bool) error {
	var v uint8
	if cmdReply {
		v = 1
	}
	ae := nl.NewAttributeEncoder()
	ae.Uint8(attrSuppKernCmdReply, v)
	b, err := ae.Encode()
	if err != nil {
		return fmt.Errorf("encode tcm-user SET_FEATURES: %w", err)
	}
	err = c.execute(genetlink.Message{
		Header: genetlink.Header{Command: cmdSetFeatures, Version: genlVersion},
		Data:   b,
	})
	if errors.Is(err, unix.EOPNOTSUPP) || errors.Is(err, unix.EINVAL) {
		return fmt.Errorf("%w: %w", ErrFeaturesUnsupported, err)
	}
	if err != nil {
		return fmt.Errorf("tcm-user SET_FEATURES: %w", err)
	}
	return nil
}

// Reply answers ev with status, 0 for success or a negative errno (for
// example -int32(unix.ENOENT) for a subtype nobody serves): an
// ADDED_DEVICE_DONE, REMOVED_DEVICE_DONE or RECONFIG_DEVICE_DONE carrying
// TCMU_ATTR_CMD_STATUS and TCMU_ATTR_DEVICE_ID. The kernel hands status to
// the configfs write that is waiting: enable, rmdir or an attribute write.
//
// The kernel takes the first reply for a device and refuses later ones:
// see ErrNotPending. Reply sends nothing for a version 1 event (a kernel
// without replies).
func (c *Conn) Reply(ev Event, status int32) error {
	if ev == nil {
		return errors.New("tcm-user reply: nil event")
	}
	var cmd uint8
	switch ev.(type) {
	case Added:
		cmd = cmdAddedDeviceDone
	case Removed:
		cmd = cmdRemovedDeviceDone
	case Reconfig:
		cmd = cmdReconfigDeviceDone
	default:
		return fmt.Errorf("tcm-user reply: unknown event type %T", ev)
	}
	d := ev.Dev()
	if d.Version < 2 {
		return nil
	}
	ae := nl.NewAttributeEncoder()
	ae.Int32(attrCmdStatus, status)
	ae.Uint32(attrDeviceID, d.DeviceID)
	b, err := ae.Encode()
	if err != nil {
		return fmt.Errorf("encode tcm-user reply: %w", err)
	}
	err = c.execute(genetlink.Message{
		Header: genetlink.Header{Command: cmd, Version: genlVersion},
		Data:   b,
	})
	if errors.Is(err, unix.ENODEV) || errors.Is(err, unix.EINVAL) {
		err = fmt.Errorf("%w: %w", ErrNotPending, err)
	}
	if err != nil {
		return fmt.Errorf("tcm-user reply to %s (device id %d, %s): %w", cmdName(cmdOf(ev)), d.DeviceID, d.DeviceName, err)
	}
	return nil
}

func cmdOf(ev Event) uint8 {
	switch ev.(type) {
	case Added:
		return cmdAddedDevice
	case Removed:
		return cmdRemovedDevice
	}
	return cmdReconfigDevice
}

// execute sends m with NLM_F_ACK and waits for the kernel's answer.
func (c *Conn) execute(m genetlink.Message) error {
	if c.closed.Load() {
		return net.ErrClosed
	}
	_, err := c.cmds.Execute(m, c.family.ID, nl.Request|nl.Acknowledge)
	return err
}

// Receive returns the next TCM-USER event. It blocks until one arrives, ctx
// is done (it then returns ctx.Err()) or the Conn is closed (an error
// matching net.ErrClosed).
//
// Messages that are not events are skipped. A malformed event is returned
// as a *DecodeError, which may still carry an answerable Event; the next
// call goes on with the next message. ErrEventsLost and ErrFamilyRemoved
// are returned as such (wrapped).
func (c *Conn) Receive(ctx context.Context) (Event, error) {
	c.recvMu.Lock()
	defer c.recvMu.Unlock()
	for {
		for len(c.pending) > 0 {
			m := c.pending[0]
			c.pending[0] = nl.Message{}
			c.pending = c.pending[1:]
			switch m.Header.Type {
			case nl.HeaderType(c.family.ID):
				ev, err := decodeEvent(m.Data)
				if err != nil {
					return nil, err
				}
				if ev != nil {
					return ev, nil
				}
			case ctrlID:
				if isFamilyRemoval(m.Data, c.family.ID) {
					return nil, ErrFamilyRemoved
				}
			}
		}
		if c.closed.Load() {
			return nil, fmt.Errorf("receive tcm-user event: %w", net.ErrClosed)
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		msgs, err := c.receive(ctx)
		if err != nil {
			return nil, err
		}
		c.pending = msgs
	}
}

// receive reads one batch of messages. A ctx that is done sets a read
// deadline in the past, which unblocks the read (netlink's sockets are
// registered with the runtime poller); the deadline is cleared again before
// returning.
func (c *Conn) receive(ctx context.Context) ([]nl.Message, error) {
	done := make(chan struct{})
	stop := context.AfterFunc(ctx, func() {
		defer close(done)
		_ = c.events.SetReadDeadline(time.Unix(1, 0))
	})
	msgs, err := c.events.Receive()
	if !stop() {
		<-done
		_ = c.events.SetReadDeadline(time.Time{})
		if err != nil && errors.Is(err, os.ErrDeadlineExceeded) {
			return nil, ctx.Err()
		}
	}
	switch {
	case err == nil:
		return msgs, nil
	case c.closed.Load():
		return nil, fmt.Errorf("receive tcm-user event: %w", net.ErrClosed)
	case errors.Is(err, unix.ENOBUFS):
		return nil, fmt.Errorf("%w: %w", ErrEventsLost, err)
	}
	return nil, fmt.Errorf("receive tcm-user event: %w", err)
}
