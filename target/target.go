package target

import (
	"context"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"maps"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/tcmu"
)

// Errors of Target.
var (
	// ErrAlreadyRunning means another process holds the lock file.
	ErrAlreadyRunning = errors.New("another vscsid is running")
	// ErrKernelSupport means configfs, target_core_user or tcm_loop is
	// missing; the message says which modprobe or mount to run.
	ErrKernelSupport = errors.New("kernel support for TCMU is missing")
	// ErrClosed is returned by Create after Close.
	ErrClosed = errors.New("target closed")
)

// Options configure a Target.
type Options struct {
	// Factories maps a handler subtype (the first element of dev_config)
	// to the Factory that builds its Handler.
	Factories map[string]Factory
	// Log receives lifecycle messages and device faults. nil discards.
	Log *zap.Logger
	// Paths locates configfs, sysfs, /dev and the lock file.
	Paths Paths
	// AttachTimeout bounds how long Create waits for sd or st to bind to
	// the new SCSI device (they probe asynchronously). Default 10 s.
	AttachTimeout time.Duration
	// Errno is the daemon's errno policy (the one the control socket
	// and D-Bus use): the errno of an attach or reconfigure error, which
	// the kernel hands to the configfs write waiting for the reply. It
	// returns 0 for an error it does not know. nil, and for 0: the errno
	// the error wraps, else EINVAL.
	Errno func(error) unix.Errno
	// Keeper keeps the state handlers hold only in memory (a RAM store
	// disk's data) across a planned hand-over (HandOverCarrier). nil:
	// such a device starts from power-on after a restart, as after a
	// crash.
	Keeper StateKeeper
	// RingPoll returns the poll window (tcmu.Device.SetPoll) of the
	// device named name, whoever made it; nil: no device polls.
	// SetRingPoll replaces it.
	RingPoll func(name string) time.Duration

	dial func() (eventConn, error)                     // default netlink.Dial
	fs   fsys                                          // default osFS
	open func(path string, size int) (tcmu.UIO, error) // default tcmu.OpenUIO
}

// DeviceInfo describes a device the Target created.
type DeviceInfo struct {
	DeviceConfig
	Origin Origin        // who created it: our config (Create) or another tool (Attach)
	WWN    string        // the tcm_loop target port, naa.5001405...
	Nexus  string        // the tcm_loop initiator port
	SCSI   SCSIDevice    // what the kernel attached
	Ring   tcmu.RingInfo // the TCMU limits in force
}

// DeviceStatus is a device's description and counters at one instant.
type DeviceStatus struct {
	Info  DeviceInfo
	Stats tcmu.DeviceStats
	Err   error // why the device stopped serving, when Stats.Failed
	// Poll is the device's ring poll window (Options.RingPoll).
	Poll time.Duration
	// Exports are the LUNs that export the device, by fabric: its own
	// tcm_loop LUN, and any that targetcli or another tool added (iSCSI).
	Exports []FabricLUNs
	// Handler serves the device, as its Factory built it (As reaches the
	// emulation behind decorators).
	Handler Handler
}

// Target creates TCMU devices, exports them through tcm_loop and serves
// them; it removes what it created when closed.
//
// Concurrency: Create, Devices and Close may be called from any goroutine;
// creations are serialised. Each device is served by its own goroutine,
// started by Create and stopped by Close.
type Target struct {
	opts      Options
	log       *zap.Logger
	paths     Paths
	fs        fsys
	open      func(string, int) (tcmu.UIO, error)
	factories map[string]Factory
	lock      io.Closer
	ctx       context.Context
	cancel    context.CancelFunc

	createMu sync.Mutex // serialises Create and Close
	mu       sync.Mutex // guards the fields below
	devs     []*managed
	// removing: devices Remove is taking away whose REMOVED event the
	// kernel does not wait for (noReply), by hba/name.
	removing map[string]bool
	closed   bool
	// ending: the devices Close or HandOver is letting go of, in the
	// order they go. Handler still finds them, so that a command a
	// device finishes on its way out reaches the devices it uses (a
	// library's move unloads its drive) rather than none.
	ending   []*managed
	loopback bool // we created target/loopback
	ringPoll func(name string) time.Duration
	// handedOver: the devices the previous daemon handed over (HandOver),
	// until each is taken over; guarded by createMu.
	handedOver map[string]handOverDevice
}

type managed struct {
	info DeviceInfo // guarded by Target.mu once registered
	dev  *tcmu.Device
	h    Handler
	obj  string // the storage object's configfs directory
	undo undo
	// noReply: the kernel does not wait for netlink replies about this
	// device (its nl_reply_supported is -1 or 0), so none is sent.
	noReply bool
	// scsiBound: the kernel's sd or st driver is bound to the attached
	// device's LUN (Devices probes an attached device until it is);
	// guarded by Target.mu.
	scsiBound bool
	// served is where the serving steps begin in undo (adopt).
	served int
	// stop stops serving and waits for the loop (set by serve); rd is the
	// open uio device. Together they let go of a device without touching
	// configfs (a REMOVED event of one of ours).
	stop func()
	rd   tcmu.UIO
	done chan struct{}
	mu   sync.Mutex
	err  error
}

// serving reports whether m's ring is still served: its loop (or the
// failFast loop of a failed device) runs. A device is registered before
// it serves; one not yet serving counts as serving.
func (m *managed) serving() bool {
	if m.stop == nil {
		return true
	}
	select {
	case <-m.done:
		return false
	default:
		return true
	}
}

func (m *managed) setErr(err error) {
	m.mu.Lock()
	m.err = err
	m.mu.Unlock()
}

func (m *managed) getErr() error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.err
}

// New checks that the kernel can host TCMU devices through tcm_loop and
// takes the lock file, so that a second daemon refuses to start.
func New(opts Options) (*Target, error) {
	t := &Target{
		opts:      opts,
		log:       opts.Log,
		paths:     opts.Paths.withDefaults(),
		fs:        opts.fs,
		open:      opts.open,
		factories: maps.Clone(opts.Factories),
		ringPoll:  opts.RingPoll,
	}
	if t.log == nil {
		t.log = zap.NewNop()
	}
	if t.fs == nil {
		t.fs = osFS{}
	}
	if t.open == nil {
		t.open = tcmu.OpenUIO
	}
	if t.opts.AttachTimeout <= 0 {
		t.opts.AttachTimeout = 10 * time.Second
	}
	lock, err := lockFile(t.paths.Lock)
	if err != nil {
		return nil, err
	}
	if err := preflight(t.fs, t.paths); err != nil {
		_ = lock.Close()
		return nil, err
	}
	t.lock = lock
	t.handedOver = t.takeHandOver()
	t.preparePR()
	t.ctx, t.cancel = context.WithCancel(context.Background())
	return t, nil
}

// preflight explains a missing kernel piece before anything is created.
func preflight(f fsys, p Paths) error {
	if !f.Exists(p.core()) {
		if !f.Exists(p.ConfigFS) {
			return fmt.Errorf("%w: %s does not exist: is configfs mounted? (try: modprobe target_core_user; mount -t configfs none %s)", ErrKernelSupport, p.ConfigFS, p.ConfigFS)
		}
		return fmt.Errorf("%w: %s does not exist: configfs is not mounted at %s or target_core_mod is not loaded (try: modprobe target_core_user; mount -t configfs none %s)", ErrKernelSupport, p.core(), p.ConfigFS, p.ConfigFS)
	}
	// target_core_user has module parameters, so /sys/module/target_core_user
	// exists whether it is a module or built in. Without it, mkdir
	// core/user_N fails with EINVAL: the kernel's request_module is not
	// something to rely on (initramfs and containers lack modprobe).
	if !f.Exists(filepath.Join(p.SysFS, "module", "target_core_user")) {
		return fmt.Errorf("%w: target_core_user is not loaded (try: modprobe target_core_user)", ErrKernelSupport)
	}
	if !f.Exists(filepath.Join(p.SysFS, "module", "tcm_loop")) && !f.Exists(p.loopback()) {
		return fmt.Errorf("%w: tcm_loop is not loaded (try: modprobe tcm_loop)", ErrKernelSupport)
	}
	return nil
}

// Create creates the device spec describes and returns once the kernel has
// attached it (or AttachTimeout passed: then the SCSI names may be empty).
// Leftovers of the same device from a daemon that died without Close are
// removed first (see reclaim.go). In order (each step undone, in reverse,
// if a later one fails):
//
//  1. core/user_N (N the lowest index no backstore HBA uses) and
//     core/user_N/<name>; control: dev_config, dev_size, hw_block_size,
//     hw_max_sectors, max_data_area_mb, nl_reply_supported=-1 (so enable
//     never waits for a netlink reply); enable=1; attrib/cmd_time_out
//     (it cannot change once exported); attrib/tmr_notification=1.
//  2. the uio device named tcm-user/N/<name>/<dev_config>: open, mmap, build
//     the Handler with the Factory, start serving.
//  3. loopback/naa.<wwn>/tpgt_1 with its own nexus, lun/lun_0, and the
//     symlink that exports the LUN (the kernel scans it right then).
func (t *Target) Create(ctx context.Context, spec DeviceSpec) (info DeviceInfo, err error) {
	if err := spec.Validate(); err != nil {
		return info, err
	}
	factory, ok := t.factories[spec.Subtype]
	if spec.Factory != nil {
		factory, ok = spec.Factory, true
	}
	if !ok {
		return info, fmt.Errorf("device %s: no handler for subtype %q (have: %s)", spec.Name, spec.Subtype, strings.Join(slices.Sorted(maps.Keys(t.factories)), ", "))
	}
	t.createMu.Lock()
	defer t.createMu.Unlock()
	t.mu.Lock()
	closed := t.closed
	dup := slices.ContainsFunc(t.devs, func(m *managed) bool { return m.info.Name == spec.Name })
	t.mu.Unlock()
	switch {
	case closed:
		return info, ErrClosed
	case dup:
		return info, fmt.Errorf("device %s: already created", spec.Name)
	}
	core := t.paths.core()
	switch info, ok, err := t.adopt(spec, factory); {
	case ok:
		return info, nil
	case err != nil:
		t.log.Warn("cannot re-attach the leftover of this device in place; removing and creating it anew",
			zap.String("device", spec.Name), zap.Error(err))
	}
	if err := t.reclaim(spec); err != nil {
		return info, fmt.Errorf("device %s: %w", spec.Name, err)
	}

	m := &managed{done: make(chan struct{}), noReply: true} // nl_reply_supported=-1
	defer func() {
		if err != nil {
			if uerr := m.undo.run(); uerr != nil {
				err = errors.Join(err, fmt.Errorf("roll back: %w", uerr))
			}
		}
	}()
	f := t.fs
	hba, err := freeHBA(f, core)
	if err != nil {
		return info, fmt.Errorf("device %s: %w", spec.Name, configfsError("list", core, err, "target_core_user"))
	}
	hbaDir := filepath.Join(core, "user_"+strconv.Itoa(hba))
	if err := f.Mkdir(hbaDir); err != nil {
		return info, fmt.Errorf("device %s: %w", spec.Name, configfsError("create HBA", hbaDir, err, "target_core_user"))
	}
	m.undo.push("remove "+hbaDir, func() error { return f.Rmdir(hbaDir) })
	obj := filepath.Join(hbaDir, spec.Name)
	if err := f.Mkdir(obj); err != nil {
		return info, fmt.Errorf("device %s: create storage object %s: %w", spec.Name, obj, err)
	}
	m.undo.push("remove "+obj, func() error { return f.Rmdir(obj) })

	tokens := []string{"dev_config=" + spec.devConfig(), "dev_size=" + strconv.FormatUint(spec.Size, 10)}
	if spec.BlockSize > 0 {
		tokens = append(tokens, "hw_block_size="+strconv.FormatUint(uint64(spec.BlockSize), 10))
	}
	if spec.MaxSectors > 0 {
		tokens = append(tokens, "hw_max_sectors="+strconv.FormatUint(uint64(spec.MaxSectors), 10))
	}
	if spec.MaxDataAreaMB > 0 {
		tokens = append(tokens, "max_data_area_mb="+strconv.Itoa(spec.MaxDataAreaMB))
	}
	tokens = append(tokens, "nl_reply_supported=-1")
	for _, tok := range tokens {
		if err := f.WriteAttr(filepath.Join(obj, "control"), tok); err != nil {
			return info, fmt.Errorf("device %s: write %q to %s/control: %w", spec.Name, tok, obj, err)
		}
	}
	if err := f.WriteAttr(filepath.Join(obj, "enable"), "1"); err != nil {
		return info, fmt.Errorf("device %s: enable %s: %w", spec.Name, obj, err)
	}
	if spec.CmdTimeOut != 0 {
		secs := max(int64(spec.CmdTimeOut/time.Second), 0)
		p := filepath.Join(obj, "attrib", "cmd_time_out")
		if err := f.WriteAttr(p, strconv.FormatInt(secs, 10)); err != nil {
			return info, fmt.Errorf("device %s: write %d to %s: %w", spec.Name, secs, p, err)
		}
	}
	if !spec.NoTMRNotification {
		p := filepath.Join(obj, "attrib", "tmr_notification")
		if err := f.WriteAttr(p, "1"); err != nil {
			if !errors.Is(err, fs.ErrNotExist) {
				return info, fmt.Errorf("device %s: write 1 to %s: %w", spec.Name, p, err)
			}
			t.log.Warn("kernel has no tmr_notification (older than 5.9): aborts will not be seen in the ring",
				zap.String("device", spec.Name))
		}
	}

	uioN, err := findUIO(f, t.paths.SysFS, uioName(hba, spec.Name, spec.devConfig()))
	if err != nil {
		return info, fmt.Errorf("device %s: %w", spec.Name, err)
	}
	dc := DeviceConfig{
		Name: spec.Name, HBA: hba, Subtype: spec.Subtype, Config: spec.Config,
		Size: spec.Size, BlockSize: spec.BlockSize, UIO: uioN,
	}
	if dc.BlockSize == 0 {
		dc.BlockSize = 512
	}
	m.obj = obj
	dlog, err := t.bringUp(m, dc, factory, false, false)
	if err != nil {
		return info, fmt.Errorf("device %s: %w", spec.Name, err)
	}
	t.setUnitSerial(obj, m.h, dlog)
	t.preparePR() // targetcli may have moved target/dbroot since New
	var naa, nexus, addr string
	var scsi SCSIDevice
	if !spec.NoLoopback {
		naa, nexus, addr, err = t.export(ctx, m, spec.Name, obj)
		if err != nil {
			return info, fmt.Errorf("device %s: %w", spec.Name, err)
		}
		var complete bool
		scsi, complete = waitSCSI(ctx, f, t.paths.SysFS, addr, t.opts.AttachTimeout)
		if !complete {
			t.log.Warn("no sd, st or ch device bound to the LUN (is sd_mod, st or ch loaded?)", zap.String("device", spec.Name),
				zap.String("address", addr), zap.Int("type", scsi.Type), zap.String("generic", scsi.Generic))
		}
	}
	if spec.ISCSI != nil {
		if err := t.exportISCSI(m, spec.Name, obj, spec.ISCSI); err != nil {
			return info, fmt.Errorf("device %s: iSCSI export: %w", spec.Name, err)
		}
		dlog.Info("device exported over iSCSI", zap.String("iqn", spec.ISCSI.IQN), zap.Strings("portals", spec.ISCSI.Portals), zap.Int("acls", len(spec.ISCSI.ACLs)))
	}
	m.info = DeviceInfo{DeviceConfig: dc, WWN: naa, Nexus: nexus, SCSI: scsi, Ring: m.info.Ring}
	t.register(m)
	dlog.Info("device attached", zap.String("node", scsi.String()), zap.String("address", addr),
		zap.String("block", scsi.Block), zap.String("tape", scsi.Tape), zap.String("changer", scsi.Changer), zap.String("generic", scsi.Generic),
		zap.String("wwn", naa), zap.Uint32("cmdr_size", m.info.Ring.CmdrSize),
		zap.Uint64("data_area_bytes", m.info.Ring.DataSize), zap.Uint16("mailbox_flags", m.info.Ring.Flags),
		zap.Int("workers", m.info.Ring.Workers))
	return m.info, nil
}

// end marks the Target closed and takes its devices, and whether it
// created target/loopback; ok is false if it was closed already. The
// caller holds createMu.
func (t *Target) end() (devs []*managed, loopback, ok bool) {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.closed {
		return nil, false, false
	}
	t.closed = true
	devs, t.devs = ordered(t.devs), nil
	t.ending = devs
	return devs, t.loopback, true
}

// A PeerUser is a handler that acts on other devices: a library moves
// cartridges into and out of its drives. Close and HandOver let go of
// such devices before the others, so that the commands they finish on
// the way out find the devices they use still serving.
type PeerUser interface {
	UsesPeers() bool
}

// ordered returns devs in the order Close and HandOver let go of them
// when iterated from the end: newest first, devices that use peers
// before all others.
func ordered(devs []*managed) []*managed {
	out := make([]*managed, 0, len(devs))
	usesPeers := func(m *managed) bool {
		p, ok := scsi.As[PeerUser](m.h)
		return ok && p.UsesPeers()
	}
	for _, m := range devs {
		if !usesPeers(m) {
			out = append(out, m)
		}
	}
	for _, m := range devs {
		if usesPeers(m) {
			out = append(out, m)
		}
	}
	return out
}

// ended forgets the devices end handed out, once they are let go of.
func (t *Target) ended() {
	t.mu.Lock()
	t.ending = nil
	t.mu.Unlock()
}

// serve starts m's device loop in its own goroutine and pushes the step
// that stops it. A device that fails answers HARDWARE ERROR from then on
// (failFast), unless its configfs object is gone: then it was removed,
// and the loop ends quietly.
func (t *Target) serve(m *managed, rd tcmu.UIO, dlog *zap.Logger) {
	d, obj := m.dev, m.obj
	dctx, stop := context.WithCancel(t.ctx)
	go func() {
		defer close(m.done)
		err := d.Run(dctx)
		if err == nil || dctx.Err() != nil {
			return
		}
		if errors.Is(err, unix.EIO) {
			// The kernel unregistered the uio device: the storage object
			// is being removed (the rmdir is still running, its REMOVED
			// event on the way). Give it a moment to finish before
			// calling this a fault; Detach (the event) ends the wait.
			deadline := time.Now().Add(removalGrace)
			for t.fs.Exists(obj) && dctx.Err() == nil && time.Now().Before(deadline) {
				time.Sleep(10 * time.Millisecond)
			}
			if dctx.Err() != nil {
				dlog.Info("device removed by the kernel or another tool: its ring is gone", zap.Error(err))
				return
			}
		}
		if !t.fs.Exists(obj) {
			// Someone removed the storage object (targetcli clearconfig,
			// rmdir). For devices whose REMOVED event the kernel does not
			// wait for (ours: nl_reply_supported=-1) it unregisters the
			// uio device right after sending the event, so the loop's
			// read fails (EIO) before the event reaches us: not a fault.
			// The event then lets go of the device.
			dlog.Info("device removed by the kernel or another tool: its ring is gone", zap.Error(err))
			return
		}
		m.setErr(err)
		fields := []zap.Field{zap.Error(err)}
		var pe *tcmu.PanicError
		if errors.As(err, &pe) {
			fields = append(fields, zap.ByteString("stack", pe.Stack))
		}
		dlog.Error("device failed; every command now fails with HARDWARE ERROR 44/00", fields...)
		if err := t.failFast(dctx, obj, rd, dlog); err != nil {
			dlog.Warn("cannot fail commands of the failed device; they time out after cmd_time_out", zap.Error(err))
		}
	}()
	m.stop = sync.OnceFunc(func() { stop(); <-m.done })
	m.rd = rd
	m.undo.push("stop serving "+m.info.Name, func() error { m.stop(); return nil })
}

// removalGrace is how long a device whose uio device vanished waits for
// its storage object's removal to show before it counts as failed.
const removalGrace = 2 * time.Second

// internalFailure is the handler of a failed device.
func internalFailure(context.Context, *scsi.Command) scsi.Response {
	return scsi.ResponseFor(scsi.ErrInternal)
}

// failFast keeps a failed device's LUN answering, so that initiators see a
// HARDWARE ERROR / INTERNAL TARGET FAILURE at once instead of waiting
// cmd_time_out for every command (st retries an open for up to 120 of
// them). reset_ring=2 completes what is left in the ring with CHECK
// CONDITION and empties it (it is what a ring fault leaves unusable); a
// new Device then answers every command. It returns when ctx is done or
// that fails too.
func (t *Target) failFast(ctx context.Context, obj string, rd tcmu.UIO, log *zap.Logger) error {
	p := filepath.Join(obj, "action", "reset_ring")
	if err := t.fs.WriteAttr(p, "2"); err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("write 2 to %s: %w", p, err)
	}
	d, err := tcmu.NewDevice(rd.Memory(), rd, scsi.HandlerFunc(internalFailure), log)
	if err != nil {
		return err
	}
	return d.Run(ctx)
}

// export creates the tcm_loop target for the storage object obj and links
// the LUN. It returns the target and initiator WWNs and the SCSI address.
func (t *Target) export(_ context.Context, m *managed, name, obj string) (naa, nexus, addr string, err error) {
	f := t.fs
	lb := t.paths.loopback()
	if !f.Exists(lb) {
		if err := f.Mkdir(lb); err != nil && !errors.Is(err, fs.ErrExist) {
			return "", "", "", configfsError("create", lb, err, "tcm_loop")
		}
		t.mu.Lock()
		t.loopback = true
		t.mu.Unlock()
	}
	naa, nexus = wwn("target", name), wwn("initiator", name)
	naaDir := filepath.Join(lb, naa)
	if err := f.Mkdir(naaDir); err != nil {
		return "", "", "", fmt.Errorf("create loopback target %s: %w", naaDir, err)
	}
	m.undo.push("remove "+naaDir, func() error { return f.Rmdir(naaDir) })
	tpg := filepath.Join(naaDir, "tpgt_1")
	if err := f.Mkdir(tpg); err != nil {
		return "", "", "", fmt.Errorf("create %s: %w", tpg, err)
	}
	m.undo.push("remove "+tpg, func() error { return f.Rmdir(tpg) })
	if err := f.WriteAttr(filepath.Join(tpg, "nexus"), nexus); err != nil {
		return "", "", "", fmt.Errorf("write %s to %s/nexus: %w", nexus, tpg, err)
	}
	lun := filepath.Join(tpg, "lun", "lun_0")
	if err := f.Mkdir(lun); err != nil {
		return "", "", "", fmt.Errorf("create %s: %w", lun, err)
	}
	m.undo.push("remove "+lun, func() error { return f.Rmdir(lun) })
	link := filepath.Join(lun, name)
	if err := f.Symlink(obj, link); err != nil {
		return "", "", "", fmt.Errorf("link %s to %s: %w", link, obj, err)
	}
	m.undo.push("unlink "+link, func() error { return f.Unlink(link) })
	v, err := f.ReadAttr(filepath.Join(tpg, "address"))
	if err != nil {
		return "", "", "", fmt.Errorf("read %s/address: %w", tpg, err)
	}
	addr, err = tpgAddress(v, 0)
	return naa, nexus, addr, err
}

// Failed returns the names of the devices whose loop failed, cheaply:
// unlike Devices it reads no configfs or sysfs (the daemon's main loop
// asks every second; walking every fabric's LUNs for the export counts
// cost dozens of stat calls per device each time).
func (t *Target) Failed() []string {
	t.mu.Lock()
	defer t.mu.Unlock()
	var out []string
	for _, m := range t.devs {
		if m.dev.Failed() {
			out = append(out, m.info.Name)
		}
	}
	return out
}

// Devices returns every device's description and counters.
func (t *Target) Devices() []DeviceStatus {
	t.mu.Lock()
	devs := slices.Clone(t.devs)
	infos := make([]DeviceInfo, len(devs))
	done := make([]bool, len(devs))
	for i, m := range devs {
		infos[i], done[i] = m.info, m.scsiBound
	}
	t.mu.Unlock()
	for i, m := range devs {
		if infos[i].Origin == OriginAttached && !done[i] {
			// targetcli links the LUN after enabling the device, and sd or
			// st bind to it after that: look until both have appeared.
			addr := infos[i].SCSI.Address
			if addr == "" {
				addr, _ = t.findLUN(m.obj)
			}
			if addr != "" {
				sd, complete := probeSCSI(t.fs, t.paths.SysFS, addr)
				infos[i].SCSI = sd
				t.mu.Lock()
				m.info.SCSI, m.scsiBound = sd, complete
				t.mu.Unlock()
			}
		}
	}
	exports := t.exportsByObject()
	out := make([]DeviceStatus, 0, len(devs))
	for i, m := range devs {
		var ex []FabricLUNs
		if obj, err := filepath.EvalSymlinks(m.obj); err == nil {
			ex = exports[obj]
		}
		out = append(out, DeviceStatus{Info: infos[i], Stats: m.dev.Stats(), Err: m.getErr(), Poll: m.dev.Poll(), Handler: m.h, Exports: ex})
	}
	return out
}

// ErrAmbiguous means two devices of that name are served (another tool made
// them on different core/user_N HBAs); a name does not say which.
var ErrAmbiguous = errors.New("more than one device of that name")

// Handler returns the handler serving the device named name, as its
// Factory built it. The Target is the one registry of devices: callers
// that act on a device by name (the control socket, targetcli's
// changemedium) ask it each time and keep no map of their own, so a
// removed device is never reached. It fails with ErrNoDevice, or with
// ErrAmbiguous when devices of that name exist on several HBAs.
func (t *Target) Handler(name string) (Handler, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	m, err := t.findLocked(name)
	if err != nil {
		return nil, err
	}
	return m.h, nil
}

// Trace attaches r to the device named name (tcmu.Device.Trace): every
// command it completes from now on is copied into r until detach is
// called or the device goes away. It fails as Handler does.
func (t *Target) Trace(name string, r *tcmu.TraceRing) (detach func(), err error) {
	t.mu.Lock()
	m, err := t.findLocked(name)
	var dev *tcmu.Device
	if err == nil {
		dev = m.dev
	}
	t.mu.Unlock()
	switch {
	case err != nil:
		return nil, err
	case dev == nil:
		return nil, fmt.Errorf("device %s: %w (still being brought up)", name, ErrNoDevice)
	}
	return dev.Trace(r)
}

// register adds m, brought up and serving, to the devices Handler,
// Devices and Remove find, and sets its poll window.
func (t *Target) register(m *managed) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.devs = append(t.devs, m)
	m.dev.SetPoll(t.pollOfLocked(m.info.Name))
}

// SetRingPoll replaces Options.RingPoll and sets every served device's
// poll window by it at once (a config reload). nil stops all polling.
func (t *Target) SetRingPoll(pollOf func(name string) time.Duration) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.ringPoll = pollOf
	for _, m := range t.devs {
		if m.dev != nil {
			m.dev.SetPoll(t.pollOfLocked(m.info.Name))
		}
	}
}

// pollOfLocked is the poll window of the device named name; t.mu is
// held.
func (t *Target) pollOfLocked(name string) time.Duration {
	if t.ringPoll == nil {
		return 0
	}
	return t.ringPoll(name)
}

// findLocked returns the one device named name; t.mu is held.
func (t *Target) findLocked(name string) (*managed, error) {
	var found *managed
	var hbas []string
	devs := t.devs
	if t.closed {
		devs = t.ending
	}
	for _, m := range devs {
		if m.info.Name != name {
			continue
		}
		hbas = append(hbas, "user_"+strconv.Itoa(m.info.HBA))
		found = m
	}
	switch {
	case found == nil:
		return nil, fmt.Errorf("device %s: %w", name, ErrNoDevice)
	case len(hbas) > 1:
		return nil, fmt.Errorf("device %s: %w (%s)", name, ErrAmbiguous, strings.Join(hbas, ", "))
	}
	return found, nil
}

// Close removes every device, newest first: unlink the LUN and remove the
// loopback target while the device is still served (the kernel may send
// commands while detaching), then stop serving, close the uio device and
// remove the storage object and its HBA. It removes target/loopback if it
// created it and it is empty, and releases the lock.
func (t *Target) Close() error {
	t.createMu.Lock()
	defer t.createMu.Unlock()
	devs, loopback, ok := t.end()
	if !ok {
		return nil
	}

	var errs []error
	for i := len(devs) - 1; i >= 0; i-- {
		m := devs[i]
		if m.info.Origin == OriginAttached {
			// Not ours to remove: let go of it, leaving nothing in flight.
			if err := t.release(m, true); err != nil {
				errs = append(errs, fmt.Errorf("release device %s: %w", m.info.Name, err))
			}
			continue
		}
		if err := m.undo.run(); err != nil {
			errs = append(errs, fmt.Errorf("remove device %s: %w", m.info.Name, err))
			continue
		}
		t.log.Info("device removed", zap.String("device", m.info.Name))
	}
	t.ended()
	t.cancel()
	if loopback {
		if err := t.fs.Rmdir(t.paths.loopback()); err != nil && !isBusy(err) {
			errs = append(errs, fmt.Errorf("remove %s: %w", t.paths.loopback(), err))
		}
	}
	errs = append(errs, t.lock.Close())
	return errors.Join(errs...)
}
