package target

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/netlink"
)

// A RECONFIG event for a live device goes to the handler's
// scsi.Reconfigurer, scsi.Resizer or scsi.WriteCacher, found with scsi.As
// behind any decorator. The call comes from the event loop, concurrently
// with HandleCommand: the handler synchronises. Without the interface, a
// change is refused with EOPNOTSUPP, and so is an error wrapping
// errors.ErrUnsupported; any other error is EINVAL. The configfs write
// then fails and the kernel keeps the old value, for devices whose events
// the kernel waits for (made by another tool: the config file's have
// nl_reply_supported=-1, and the kernel stores their new value whatever
// the handler says). Writing the value in force is always accepted.

// eventConn is what Run needs of a *netlink.Conn.
type eventConn interface {
	Receive(ctx context.Context) (netlink.Event, error)
	Reply(ev netlink.Event, status int32) error
	SetFeatures(cmdReply bool) error
	Close() error
}

func dialNetlink() (eventConn, error) {
	c, err := netlink.Dial()
	if err != nil {
		return nil, err
	}
	return c, nil
}

// Run serves devices other tools create until ctx is done, then Closes the
// Target. In order:
//
//  1. it dials the kernel's TCM-USER generic netlink family and declares
//     that it replies to events (SET_FEATURES); without netlink (an old
//     kernel, no CAP_NET_ADMIN) it warns and carries on: only step 2 then
//     finds targetcli's devices;
//  2. it attaches every TCMU device of a subtype it serves that is not
//     served yet (Scan): made by targetcli, or left by an earlier daemon;
//  3. it answers events, one at a time: ADDED for a subtype it serves →
//     Attach and reply 0 or -errno (the Factory's verdict: targetcli's
//     enable fails with it); REMOVED → stop serving (configfs is the
//     remover's) and reply 0; RECONFIG → see reconfig. Events for other
//     subtypes belong to tcmu-runner and get no reply.
//
// Our own devices (Create) have nl_reply_supported=-1: the kernel does not
// wait for us, and their events find them already served.
func (t *Target) Run(ctx context.Context) error {
	c, err := t.dialEvents()
	var replier eventConn // c, if the kernel takes replies
	if err != nil {
		t.log.Warn("no TCM-USER netlink: devices created later with targetcli will not be served until restart", zap.Error(err))
	} else if err := c.SetFeatures(true); err != nil {
		t.log.Warn("kernel does not take TCM-USER command replies: targetcli's enable does not wait for vscsid's verdict", zap.Error(err))
	} else {
		replier = c
	}
	if _, err := t.scan(ctx, replier); err != nil {
		t.log.Error("some existing TCMU devices could not be attached", zap.Error(err))
	}
	if t.opts.Keeper != nil {
		// Every device there was to take over is now: what the previous
		// daemon kept for another (one the config no longer lists, or
		// lists changed) only holds memory.
		if names := t.opts.Keeper.Release(); len(names) > 0 {
			t.log.Info("dropped what the previous daemon kept for devices no longer served as they were", zap.Strings("kept", names))
		}
	}
	if c != nil {
		t.listen(ctx, c)
		if replier != nil {
			// The kernel's reply flag is module-global and sticky: left on
			// with no daemon listening, the next enable of any user
			// backstore waits forever for a reply. Turn it off on the way
			// out; a tcmu-runner that is running keeps working (its
			// devices simply stop waiting for its verdict).
			if err := c.SetFeatures(false); err != nil {
				t.log.Warn("could not switch TCM-USER command replies off", zap.Error(err))
			}
		}
		if err := c.Close(); err != nil {
			t.log.Warn("close TCM-USER netlink", zap.Error(err))
		}
	}
	<-ctx.Done()
	return t.Close()
}

func (t *Target) dialEvents() (eventConn, error) {
	if t.opts.dial != nil {
		return t.opts.dial()
	}
	return dialNetlink()
}

// Scan attaches every TCMU device listed in /sys/class/uio whose subtype
// has a Factory and that is not served yet, with the take-over sequence of
// Attach (its ring may hold commands of a daemon that died). It returns how
// many it attached and the errors of the others.
func (t *Target) Scan(ctx context.Context) (int, error) { return t.scan(ctx, nil) }

// scan does Scan. With c, it also answers the ADDED event each attached
// device may have sent while no daemon listened: the kernel's enable then
// still waits for a reply, without a timeout (a targetcli create hangs
// until a daemon answers): its enable attribute reads 0 although its uio
// device exists. The reply is matched on the device index,
// statistics/scsi_dev/indx.
func (t *Target) scan(ctx context.Context, c eventConn) (int, error) {
	dir := filepath.Join(t.paths.SysFS, "class", "uio")
	names, err := t.fs.ReadDir(dir)
	if err != nil {
		return 0, fmt.Errorf("list %s: %w", dir, err)
	}
	n := 0
	var errs []error
	for _, uioN := range names {
		v, err := t.fs.ReadAttr(filepath.Join(dir, uioN, "name"))
		if err != nil || !strings.HasPrefix(v, "tcm-user/") {
			continue
		}
		hba, name, subtype, _, err := netlink.ParseDeviceName(strings.TrimSpace(v))
		if err != nil {
			continue
		}
		if _, ok := t.factories[subtype]; !ok || t.find(hba, name) != nil {
			continue
		}
		info, err := t.attach(ctx, v, uioN, true)
		if err != nil {
			errs = append(errs, err)
			continue
		}
		n++
		if c != nil {
			t.answerLost(c, info, strings.TrimSpace(v))
		}
	}
	return n, errors.Join(errs...)
}

// answerLost replies 0 to an ADDED event of info that may have gone
// unanswered: its enable write is still blocked in the kernel.
func (t *Target) answerLost(c eventConn, info DeviceInfo, uioName string) {
	obj := filepath.Join(t.paths.core(), "user_"+strconv.Itoa(info.HBA), info.Name)
	// enable reads 1 once the device is configured, that is once the
	// enable write has returned; 0 with a uio device means it still waits.
	if v, err := t.fs.ReadAttr(filepath.Join(obj, "enable")); err != nil || strings.TrimSpace(v) != "0" {
		return
	}
	p := filepath.Join(obj, "statistics", "scsi_dev", "indx")
	v, err := t.fs.ReadAttr(p)
	if err != nil {
		return
	}
	id, err := strconv.ParseUint(strings.TrimSpace(v), 10, 32)
	if err != nil {
		return
	}
	minor, _ := strconv.ParseUint(strings.TrimPrefix(info.UIO, "uio"), 10, 32)
	ev := netlink.Added{Device: netlink.Device{DeviceName: uioName, Minor: uint32(minor), DeviceID: uint32(id), Version: 2}}
	t.reply(c, ev, 0)
}

// listen handles events until ctx is done or the connection fails.
func (t *Target) listen(ctx context.Context, c eventConn) {
	for {
		ev, err := c.Receive(ctx)
		if err != nil {
			if ctx.Err() != nil {
				return
			}
			var de *netlink.DecodeError
			switch {
			case errors.As(err, &de):
				t.log.Warn("malformed TCM-USER event", zap.Error(err))
				if de.Event != nil && t.ours(de.Event) {
					t.reply(c, de.Event, -int32(unix.EINVAL))
				}
				continue
			case errors.Is(err, netlink.ErrEventsLost):
				t.log.Warn("TCM-USER events lost (socket buffer overflow): rescanning", zap.Error(err))
				if _, err := t.scan(ctx, c); err != nil {
					t.log.Error("some existing TCMU devices could not be attached", zap.Error(err))
				}
				continue
			case errors.Is(err, netlink.ErrFamilyRemoved):
				t.log.Warn("target_core_user unloaded: no more TCM-USER events until vscsid restarts", zap.Error(err))
			default:
				t.log.Error("TCM-USER netlink failed: devices created from now on are not served until restart", zap.Error(err))
			}
			return
		}
		t.handle(ctx, c, ev)
	}
}

// ours reports that ev is about a subtype we serve.
func (t *Target) ours(ev netlink.Event) bool {
	_, _, subtype, _, err := netlink.ParseDeviceName(ev.Dev().DeviceName)
	_, ok := t.factories[subtype]
	return err == nil && ok
}

// handle answers one event about a device of ours; it ignores the others.
func (t *Target) handle(ctx context.Context, c eventConn, ev netlink.Event) {
	d := ev.Dev()
	hba, name, subtype, _, err := netlink.ParseDeviceName(d.DeviceName)
	if err != nil {
		t.log.Warn("TCM-USER event with a device name that is not ours to answer", zap.Error(err))
		return
	}
	if _, ok := t.factories[subtype]; !ok {
		if ce := t.log.Check(zap.DebugLevel, "TCM-USER event for another daemon's subtype"); ce != nil {
			ce.Write(zap.String("uio_name", d.DeviceName))
		}
		return
	}
	log := t.log.With(zap.String("device", name), zap.Int("hba", hba), zap.String("uio", d.UIO()))
	var status int32
	noReply := false
	switch e := ev.(type) {
	case netlink.Added:
		t.mu.Lock()
		delete(t.removing, removingKey(hba, name)) // a new device of that name
		t.mu.Unlock()
		if _, err := t.attach(ctx, d.DeviceName, d.UIO(), false); err != nil {
			status = t.errnoOf(err)
			log.Error("refusing device created by another tool", zap.Error(err), zap.Int32("status", status))
		} else {
			noReply = t.unawaited(hba, name, false)
		}
	case netlink.Removed:
		noReply = t.unawaited(hba, name, true)
		if _, err := t.Detach(hba, name); err != nil {
			log.Warn("detach of a removed device", zap.Error(err))
		}
	case netlink.Reconfig:
		noReply = t.unawaited(hba, name, false)
		status = t.reconfig(hba, name, e, log)
		if noReply && status != 0 {
			log.Warn("the kernel does not wait for our answer to this device's RECONFIG (nl_reply_supported <= 0): the attribute changed although the change was refused",
				zap.Int32("status", status))
		}
	}
	if noReply {
		// The kernel is not waiting: a reply would only make it log
		// "completion could not find device" at KERN_ERR.
		return
	}
	t.reply(c, ev, status)
}

// unawaited reports that the kernel does not wait for replies about the
// served device hba/name, or (removed true: a REMOVED event, which
// consumes the mark) the one Remove took away.
func (t *Target) unawaited(hba int, name string, removed bool) bool {
	if m := t.find(hba, name); m != nil {
		return m.noReply
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	k := removingKey(hba, name)
	r := t.removing[k]
	if removed {
		delete(t.removing, k)
	}
	return r
}

func (t *Target) reply(c eventConn, ev netlink.Event, status int32) {
	err := c.Reply(ev, status)
	switch {
	case err == nil:
	case errors.Is(err, netlink.ErrNotPending):
		// Our own devices (nl_reply_supported=-1), or another daemon
		// answered first.
		if ce := t.log.Check(zap.DebugLevel, "TCM-USER reply not awaited"); ce != nil {
			ce.Write(zap.Error(err))
		}
	default:
		t.log.Warn("TCM-USER reply failed", zap.Error(err), zap.Int32("status", status))
	}
}

// reconfig answers a RECONFIG event: 0 when the value does not change (so
// that targetctl restore, which writes every attribute, never fails), the
// handler's verdict when it implements the matching optional interface,
// else -EOPNOTSUPP. The kernel stores the new value only after a 0.
func (t *Target) reconfig(hba int, name string, e netlink.Reconfig, log *zap.Logger) int32 {
	t.createMu.Lock() // against Close and Detach
	defer t.createMu.Unlock()
	m := t.find(hba, name)
	if m == nil {
		log.Warn("RECONFIG of a device that is not served (it failed to attach)")
		return -int32(unix.ENODEV)
	}
	t.mu.Lock()
	cur, origin := m.info.DeviceConfig, m.info.Origin
	t.mu.Unlock()
	refuse := func(what string, err error) int32 {
		if err == nil || errors.Is(err, errors.ErrUnsupported) {
			log.Warn("RECONFIG refused: the handler cannot change "+what+" of a live device", zap.String("subtype", cur.Subtype))
			return -int32(unix.EOPNOTSUPP)
		}
		log.Warn("RECONFIG refused", zap.String("attribute", what), zap.Error(err))
		return -int32(unix.EINVAL)
	}
	switch {
	case e.DevConfig != nil:
		v := strings.TrimRight(*e.DevConfig, "\n")
		if v == cur.Subtype+"/"+cur.Config {
			return 0
		}
		sub, cfg, _ := strings.Cut(v, "/")
		if sub != cur.Subtype {
			return refuse("dev_config", fmt.Errorf("subtype %q cannot become %q", cur.Subtype, sub))
		}
		r, ok := scsi.As[scsi.Reconfigurer](m.h)
		if !ok {
			return refuse("dev_config", nil)
		}
		if err := r.Reconfigure(cfg); err != nil {
			return refuse("dev_config", err)
		}
		t.mu.Lock()
		m.info.Config = cfg
		t.mu.Unlock()
		log.Info("device reconfigured", zap.String("config", cfg))
	case e.DevSize != nil:
		if *e.DevSize == cur.Size {
			return 0
		}
		r, ok := scsi.As[scsi.Resizer](m.h)
		if !ok {
			return refuse("dev_size", nil)
		}
		if err := r.Resize(*e.DevSize); err != nil {
			return refuse("dev_size", err)
		}
		t.mu.Lock()
		m.info.Size = *e.DevSize
		t.mu.Unlock()
		log.Info("device resized", zap.Uint64("size", *e.DevSize))
	case e.WriteCache != nil:
		// The value in force is the kernel's attribute, which it stores
		// only after our reply when it waits for one. For the config
		// file's devices it does not wait and may have stored the new
		// value already: their handler decides (setting the value it has
		// is a no-op). The handler's WCE may differ from the attribute
		// (cfgstring wce=, MODE SELECT): a targetctl restore writing the
		// attribute back leaves it alone.
		p := filepath.Join(m.obj, "attrib", "emulate_write_cache")
		if v, err := t.fs.ReadAttr(p); err == nil && origin == OriginAttached {
			if n, err := strconv.Atoi(strings.TrimSpace(v)); err == nil && (n != 0) == *e.WriteCache {
				return 0
			}
		}
		r, ok := scsi.As[scsi.WriteCacher](m.h)
		if !ok {
			return refuse("emulate_write_cache", nil)
		}
		if err := r.SetWriteCache(*e.WriteCache); err != nil {
			return refuse("emulate_write_cache", err)
		}
		log.Info("device write cache set", zap.Bool("write_cache", *e.WriteCache))
	}
	return 0
}
