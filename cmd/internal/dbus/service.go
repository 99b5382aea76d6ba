package dbus

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	godbus "github.com/godbus/dbus/v5"
	"go.uber.org/zap"
	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/internal/cfgstring"
)

// Names of the service targetcli talks to (tcmu-runner's tcmu-handler.xml,
// main.c, libtcmu-register.c).
const (
	// ServiceName is the well-known bus name targetcli calls.
	ServiceName = "org.kernel.TCMUService1"
	// Interface is the interface of each handler object.
	Interface = "org.kernel.TCMUService1"
	// RootPath holds the org.freedesktop.DBus.ObjectManager that lists the
	// handler objects, RootPath/<subtype>.
	RootPath godbus.ObjectPath = "/org/kernel/TCMUService1"

	// HandlerManagerInterface is tcmu-runner's registration interface,
	// exported by the owner of ServiceName at HandlerManagerPath.
	HandlerManagerInterface = "org.kernel.TCMUService1.HandlerManager1"
	// HandlerManagerPath is where tcmu-runner exports
	// HandlerManagerInterface; a registered handler exports its object at
	// HandlerManagerPath/<subtype> and owns HandlerManagerNamePrefix +
	// subtype.
	HandlerManagerPath godbus.ObjectPath = "/org/kernel/TCMUService1/HandlerManager1"
	// HandlerManagerNamePrefix prefixes the bus name of a registered
	// handler.
	HandlerManagerNamePrefix = "org.kernel.TCMUService1.HandlerManager1."
)

const (
	ifaceProperties    = "org.freedesktop.DBus.Properties"
	ifaceIntrospect    = "org.freedesktop.DBus.Introspectable"
	ifacePeer          = "org.freedesktop.DBus.Peer"
	ifaceObjectManager = "org.freedesktop.DBus.ObjectManager"
	propConfigDesc     = "ConfigDesc"
)

// Handler describes one backstore subtype: what targetcli lists as
// user:<Subtype>.
type Handler struct {
	// Subtype names the handler: "vtape", "vdisk". It becomes an object
	// path element and a bus name element, so it must match
	// [A-Za-z_][A-Za-z0-9_]*.
	Subtype string
	// ConfigDesc documents the cfgstring grammar; targetcli prints it
	// under "help create".
	ConfigDesc string
	// CheckConfig validates a cfgstring (the part after "<subtype>/")
	// strictly and says what is wrong. Required.
	CheckConfig func(cfgstring string) error
	// ChangeMedium loads the medium cfgstring describes into the device
	// named name (the storage object name) of size bytes; targetcli's
	// "changemedium". Optional: nil answers -EOPNOTSUPP. An error that
	// wraps a unix.Errno is reported as that errno, any other as EINVAL.
	ChangeMedium func(name string, size uint64, cfgstring string) error
}

// Mode says how a Service reaches targetcli.
type Mode int

const (
	// Primary means the Service owns ServiceName and serves targetcli
	// directly.
	Primary Mode = iota + 1
	// Registered means another process (tcmu-runner) owns ServiceName; the
	// Service registered its handlers through HandlerManagerInterface, and
	// tcmu-runner lists them and forwards CheckConfig to them.
	Registered
)

func (m Mode) String() string {
	switch m {
	case Primary:
		return "primary"
	case Registered:
		return "registered"
	}
	return fmt.Sprintf("Mode(%d)", int(m))
}

// Service exports handler objects for targetcli on a bus connection. Its
// methods are safe for concurrent use. The handler callbacks are called
// from godbus's dispatch goroutines, possibly concurrently.
type Service struct {
	conn     *godbus.Conn
	log      *zap.Logger
	handlers []*handlerObject

	mu      sync.Mutex // guards mode, names, exports, closed
	mode    Mode       // set once, but read by method calls meanwhile
	names   []string   // bus names to release on Close
	exports []export   // objects to unexport on Close
	closed  bool

	signals chan *godbus.Signal
	cancel  context.CancelFunc
	wg      sync.WaitGroup
}

type export struct {
	path  godbus.ObjectPath
	iface string
}

func validate(handlers []Handler) error {
	if len(handlers) == 0 {
		return errors.New("no handlers")
	}
	seen := map[string]bool{}
	for _, h := range handlers {
		switch {
		case cfgstring.Subtype(h.Subtype) != nil:
			return fmt.Errorf("handler subtype: %w", cfgstring.Subtype(h.Subtype))
		case h.Subtype == "HandlerManager1":
			return fmt.Errorf("handler subtype %q: reserved (it is tcmu-runner's %s)", h.Subtype, HandlerManagerPath)
		case seen[h.Subtype]:
			return fmt.Errorf("handler subtype %q: given twice", h.Subtype)
		case h.CheckConfig == nil:
			return fmt.Errorf("handler %s: no CheckConfig", h.Subtype)
		case !utf8.ValidString(h.ConfigDesc) || strings.IndexByte(h.ConfigDesc, 0) >= 0:
			return fmt.Errorf("handler %s: ConfigDesc is not a valid D-Bus string (UTF-8 without NUL)", h.Subtype)
		}
		seen[h.Subtype] = true
	}
	return nil
}

// New exports handlers for targetcli on conn (the system bus in
// production; the caller keeps ownership of conn and closes it after
// Close).
//
// If ServiceName is free, New takes it (Primary). If another process owns
// it, which is tcmu-runner when it runs, New registers each handler with
// it through HandlerManagerInterface (Registered), as tcmu-runner's
// libtcmu does for out-of-process handlers: it owns
// HandlerManagerNamePrefix+subtype, exports the handler object at
// HandlerManagerPath/<subtype> and calls RegisterHandler. It then follows
// the owner of ServiceName and registers again whenever a new owner
// appears (tcmu-runner restarted). ctx bounds the registration calls.
func New(ctx context.Context, conn *godbus.Conn, handlers []Handler, log *zap.Logger) (*Service, error) {
	if conn == nil {
		return nil, errors.New("dbus: nil connection")
	}
	if err := validate(handlers); err != nil {
		return nil, fmt.Errorf("dbus: %w", err)
	}
	if log == nil {
		log = zap.NewNop()
	}
	s := &Service{conn: conn, log: log}
	for _, h := range handlers {
		s.handlers = append(s.handlers, &handlerObject{Handler: h, log: log, uidOf: s.callerUID})
	}
	if err := s.exportPrimary(); err != nil {
		_ = s.teardown()
		return nil, err
	}
	reply, err := conn.RequestName(ServiceName, godbus.NameFlagDoNotQueue)
	if err != nil {
		_ = s.teardown()
		return nil, fmt.Errorf("dbus: request name %s: %w", ServiceName, err)
	}
	switch reply {
	case godbus.RequestNameReplyPrimaryOwner, godbus.RequestNameReplyAlreadyOwner:
		s.setMode(Primary)
		s.addName(ServiceName)
		log.Info("serving targetcli on D-Bus", zap.String("name", ServiceName), zap.Strings("subtypes", s.subtypes()))
		return s, nil
	case godbus.RequestNameReplyExists:
		s.setMode(Registered)
		if err := s.startRegistered(ctx); err != nil {
			_ = s.teardown()
			return nil, err
		}
		log.Info("another process owns the D-Bus name: registered the handlers with its HandlerManager1 (tcmu-runner)",
			zap.String("name", ServiceName), zap.Strings("subtypes", s.subtypes()))
		return s, nil
	}
	_ = s.teardown()
	return nil, fmt.Errorf("dbus: request name %s: unexpected reply %d", ServiceName, reply)
}

// Mode reports how the Service reaches targetcli.
func (s *Service) Mode() Mode {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.mode
}

func (s *Service) setMode(m Mode) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.mode = m
}

// Close releases the bus names, stops following the owner of ServiceName
// and unexports every object. It does not close the connection.
func (s *Service) Close() error {
	s.mu.Lock()
	if s.closed {
		s.mu.Unlock()
		return nil
	}
	s.closed = true
	s.mu.Unlock()
	return s.teardown()
}

func (s *Service) teardown() error {
	if s.cancel != nil {
		s.cancel()
	}
	if s.signals != nil {
		s.conn.RemoveSignal(s.signals)
	}
	s.wg.Wait()
	var errs []error
	if s.signals != nil && s.conn.Connected() {
		if err := s.conn.RemoveMatchSignal(ownerChangedMatch()...); err != nil {
			errs = append(errs, fmt.Errorf("remove NameOwnerChanged match: %w", err))
		}
	}
	s.mu.Lock()
	names, exports := s.names, s.exports
	s.names, s.exports = nil, nil
	s.mu.Unlock()
	for _, n := range names {
		if !s.conn.Connected() {
			break
		}
		if _, err := s.conn.ReleaseName(n); err != nil {
			errs = append(errs, fmt.Errorf("release name %s: %w", n, err))
		}
	}
	for _, e := range exports {
		_ = s.conn.Export(nil, e.path, e.iface)
	}
	if len(errs) > 0 {
		return fmt.Errorf("dbus: close: %w", errors.Join(errs...))
	}
	return nil
}

func (s *Service) subtypes() []string {
	var n []string
	for _, h := range s.handlers {
		n = append(n, h.Subtype)
	}
	return n
}

func (s *Service) addName(n string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.names = append(s.names, n)
}

func (s *Service) exportTable(path godbus.ObjectPath, iface string, methods map[string]any) error {
	if err := s.conn.ExportMethodTable(methods, path, iface); err != nil {
		return fmt.Errorf("dbus: export %s on %s: %w", iface, path, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.exports = append(s.exports, export{path, iface})
	return nil
}

// exportPrimary exports the ObjectManager at RootPath and every handler at
// RootPath/<subtype>: what targetcli reads.
func (s *Service) exportPrimary() error {
	err := s.exportTable(RootPath, ifaceObjectManager, map[string]any{
		"GetManagedObjects": s.getManagedObjects,
	})
	if err == nil {
		err = s.exportTable(RootPath, ifaceIntrospect, map[string]any{
			"Introspect": func() (string, *godbus.Error) { return s.rootIntrospection(), nil },
		})
	}
	for _, h := range s.handlers {
		if err != nil {
			break
		}
		err = s.exportHandler(RootPath+"/"+godbus.ObjectPath(h.Subtype), h)
	}
	return err
}

func (s *Service) exportHandler(path godbus.ObjectPath, h *handlerObject) error {
	if err := s.exportTable(path, Interface, map[string]any{
		"CheckConfig":  h.checkConfig,
		"ChangeMedium": h.changeMedium,
	}); err != nil {
		return err
	}
	if err := s.exportTable(path, ifaceProperties, map[string]any{
		"Get":    h.get,
		"GetAll": h.getAll,
		"Set":    h.set,
	}); err != nil {
		return err
	}
	return s.exportTable(path, ifaceIntrospect, map[string]any{
		"Introspect": func() (string, *godbus.Error) { return handlerIntrospection, nil },
	})
}

// getManagedObjects is org.freedesktop.DBus.ObjectManager.GetManagedObjects:
// a{oa{sa{sv}}}, one entry per handler with its one interface and its
// properties (as tcmu-runner's GDBusObjectManagerServer answers). targetcli
// names the backstore after the last path element and reads ConfigDesc
// from here.
func (s *Service) getManagedObjects() (map[godbus.ObjectPath]map[string]map[string]godbus.Variant, *godbus.Error) {
	out := make(map[godbus.ObjectPath]map[string]map[string]godbus.Variant, len(s.handlers))
	for _, h := range s.handlers {
		out[RootPath+"/"+godbus.ObjectPath(h.Subtype)] = map[string]map[string]godbus.Variant{
			Interface: h.properties(),
		}
	}
	return out, nil
}

// Registered mode.

func ownerChangedMatch() []godbus.MatchOption {
	return []godbus.MatchOption{
		godbus.WithMatchSender("org.freedesktop.DBus"),
		godbus.WithMatchInterface("org.freedesktop.DBus"),
		godbus.WithMatchMember("NameOwnerChanged"),
		godbus.WithMatchArg(0, ServiceName),
	}
}

func (s *Service) startRegistered(ctx context.Context) error {
	// Follow the owner first, so that no change between the registration
	// and the subscription goes unseen.
	if err := s.conn.AddMatchSignalContext(ctx, ownerChangedMatch()...); err != nil {
		return fmt.Errorf("dbus: watch the owner of %s: %w", ServiceName, err)
	}
	s.signals = make(chan *godbus.Signal, 16)
	s.conn.Signal(s.signals)

	for _, h := range s.handlers {
		if err := s.exportHandler(HandlerManagerPath+"/"+godbus.ObjectPath(h.Subtype), h); err != nil {
			return err
		}
		name := HandlerManagerNamePrefix + h.Subtype
		reply, err := s.conn.RequestName(name, godbus.NameFlagDoNotQueue)
		if err != nil {
			return fmt.Errorf("dbus: request name %s: %w", name, err)
		}
		switch reply {
		case godbus.RequestNameReplyPrimaryOwner, godbus.RequestNameReplyAlreadyOwner:
			s.addName(name)
		default:
			return fmt.Errorf("dbus: name %s is owned by another process (is another vscsid running?)", name)
		}
	}
	if err := s.register(ctx); err != nil {
		return err
	}
	wctx, cancel := context.WithCancel(context.Background())
	s.cancel = cancel
	s.wg.Add(1)
	go s.follow(wctx)
	return nil
}

// register calls RegisterHandler for every handler. tcmu-runner answers
// once it sees the handler's bus name, which is already owned.
func (s *Service) register(ctx context.Context) error {
	obj := s.conn.Object(ServiceName, HandlerManagerPath)
	for _, h := range s.handlers {
		var ok bool
		var msg string
		err := obj.CallWithContext(ctx, HandlerManagerInterface+".RegisterHandler", 0, h.Subtype, h.ConfigDesc).Store(&ok, &msg)
		if err != nil {
			return fmt.Errorf("dbus: register handler %s with %s: %w", h.Subtype, ServiceName, err)
		}
		if !ok {
			return fmt.Errorf("dbus: register handler %s with %s: refused: %s", h.Subtype, ServiceName, msg)
		}
	}
	return nil
}

// registerTimeout bounds a re-registration after the owner of
// ServiceName changed (the D-Bus default method call timeout).
const registerTimeout = 25 * time.Second

// follow re-registers the handlers when a new process takes ServiceName.
// It does not take the name itself when the owner goes away: tcmu-runner
// asks for it without queueing flags, so a tcmu-runner restarted after
// vscsid took the name would wait in the queue behind vscsid forever and
// serve none of its own handlers.
func (s *Service) follow(ctx context.Context) {
	defer s.wg.Done()
	for {
		select {
		case <-ctx.Done():
			return
		case sig, ok := <-s.signals:
			if !ok {
				return
			}
			owner, ok := newOwner(sig)
			if !ok {
				continue
			}
			if owner == "" {
				s.log.Warn("the owner of the D-Bus name left: targetcli does not list the handlers until it comes back",
					zap.String("name", ServiceName), zap.Strings("subtypes", s.subtypes()))
				continue
			}
			rctx, cancel := context.WithTimeout(ctx, registerTimeout)
			err := s.register(rctx)
			cancel()
			if err != nil {
				if ctx.Err() == nil {
					s.log.Error("re-register handlers with the new owner of the D-Bus name", zap.String("name", ServiceName), zap.Error(err))
				}
				continue
			}
			s.log.Info("re-registered handlers with the new owner of the D-Bus name",
				zap.String("name", ServiceName), zap.String("owner", owner), zap.Strings("subtypes", s.subtypes()))
		}
	}
}

// newOwner decodes NameOwnerChanged(ServiceName, old, new) from the bus.
func newOwner(sig *godbus.Signal) (string, bool) {
	if sig == nil || sig.Name != "org.freedesktop.DBus.NameOwnerChanged" || sig.Sender != "org.freedesktop.DBus" || len(sig.Body) != 3 {
		return "", false
	}
	name, ok1 := sig.Body[0].(string)
	owner, ok2 := sig.Body[2].(string)
	if !ok1 || !ok2 || name != ServiceName {
		return "", false
	}
	return owner, true
}

// handlerObject implements org.kernel.TCMUService1 and
// org.freedesktop.DBus.Properties for one Handler.
type handlerObject struct {
	Handler
	log   *zap.Logger
	uidOf func(godbus.Sender) (uint32, error)
}

// callerUID asks the bus for the Unix user of the connection that sent a
// call.
func (s *Service) callerUID(sender godbus.Sender) (uint32, error) {
	var uid uint32
	err := s.conn.BusObject().Call("org.freedesktop.DBus.GetConnectionUnixUser", 0, string(sender)).Store(&uid)
	return uid, err
}

// rootOnly refuses a call whose sender is not root. The bus policy
// (deploy/dbus) already says so, but the bus merges every policy file it
// has and the last one read wins: tcmu-runner's package lets every user
// send to this service, and installed beside vscsid it would open
// ChangeMedium, which swaps a live drive's medium, to anyone. So vscsid
// checks the caller itself. A bus that cannot say who sent the call gets
// a refusal too.
func (h *handlerObject) rootOnly(sender godbus.Sender, method string) *godbus.Error {
	var msg string
	switch uid, err := h.uidOf(sender); {
	case err != nil:
		msg = fmt.Sprintf("vscsid: %s: cannot tell the caller's user (%v); only root may call it", method, err)
	case uid != 0:
		msg = fmt.Sprintf("vscsid: only root may call %s (the caller is uid %d)", method, uid)
	default:
		return nil
	}
	return godbus.NewError("org.freedesktop.DBus.Error.AccessDenied", []any{msg})
}

func (h *handlerObject) properties() map[string]godbus.Variant {
	return map[string]godbus.Variant{propConfigDesc: godbus.MakeVariant(h.ConfigDesc)}
}

// cfgstring strips the "<subtype>/" targetcli puts in front (it passes the
// whole dev_config).
func (h *handlerObject) cfgstring(config string) (string, error) {
	rest, ok := strings.CutPrefix(config, h.Subtype+"/")
	if !ok {
		return "", fmt.Errorf("config %q is not for user:%s: want %s/<cfgstring>", config, h.Subtype, h.Subtype)
	}
	return rest, nil
}

// checkConfig is CheckConfig(s configstr) → (b is_valid, s message).
func (h *handlerObject) checkConfig(sender godbus.Sender, config string) (bool, string, *godbus.Error) {
	if derr := h.rootOnly(sender, "CheckConfig"); derr != nil {
		return false, "", derr
	}
	cfg, err := h.cfgstring(config)
	if err == nil {
		err = h.CheckConfig(cfg)
	}
	if ce := h.log.Check(zap.DebugLevel, "CheckConfig"); ce != nil {
		ce.Write(zap.String("subtype", h.Subtype), zap.String("sender", string(sender)), zap.String("config", config), zap.Error(err))
	}
	if err != nil {
		return false, dbusString(err.Error()), nil
	}
	return true, "success", nil
}

// changeMedium is ChangeMedium(s name, t size, s configstr) → (i ret, s
// message): ret 0 on success, else a negative errno.
func (h *handlerObject) changeMedium(sender godbus.Sender, name string, size uint64, config string) (int32, string, *godbus.Error) {
	if derr := h.rootOnly(sender, "ChangeMedium"); derr != nil {
		return -int32(unix.EPERM), "", derr
	}
	rc, err := int32(0), error(nil)
	switch cfg, cerr := h.cfgstring(config); {
	case h.ChangeMedium == nil:
		rc, err = -int32(unix.EOPNOTSUPP), fmt.Errorf("user:%s does not support changing the medium", h.Subtype)
	case cerr != nil:
		rc, err = -int32(unix.EINVAL), cerr
	default:
		if err = h.ChangeMedium(name, size, cfg); err != nil {
			rc = -int32(unix.EINVAL)
			if errno, ok := errors.AsType[unix.Errno](err); ok && errno != 0 {
				rc = -int32(errno)
			}
		}
	}
	if ce := h.log.Check(zap.DebugLevel, "ChangeMedium"); ce != nil {
		ce.Write(zap.String("subtype", h.Subtype), zap.String("sender", string(sender)), zap.String("device", name),
			zap.Uint64("bytes", size), zap.String("config", config), zap.Int32("status", rc), zap.Error(err))
	}
	if err != nil {
		return rc, dbusString(err.Error()), nil
	}
	return 0, "success", nil
}

// Properties: ConfigDesc is the only property, read-only and constant.

func (h *handlerObject) get(iface, prop string) (godbus.Variant, *godbus.Error) {
	if iface != Interface && iface != "" {
		return godbus.Variant{}, unknownInterface(iface)
	}
	if prop != propConfigDesc {
		return godbus.Variant{}, unknownProperty(iface, prop)
	}
	return godbus.MakeVariant(h.ConfigDesc), nil
}

func (h *handlerObject) getAll(iface string) (map[string]godbus.Variant, *godbus.Error) {
	switch iface {
	case Interface, "":
		return h.properties(), nil
	case ifaceProperties, ifaceIntrospect, ifacePeer:
		return map[string]godbus.Variant{}, nil
	}
	return nil, unknownInterface(iface)
}

func (h *handlerObject) set(iface, prop string, _ godbus.Variant) *godbus.Error {
	if iface != Interface && iface != "" {
		return unknownInterface(iface)
	}
	if prop != propConfigDesc {
		return unknownProperty(iface, prop)
	}
	return &godbus.Error{Name: "org.freedesktop.DBus.Error.PropertyReadOnly", Body: []any{"property " + propConfigDesc + " is read-only"}}
}

func unknownInterface(iface string) *godbus.Error {
	return &godbus.Error{Name: "org.freedesktop.DBus.Error.UnknownInterface", Body: []any{dbusString(fmt.Sprintf("no interface %q on this object", iface))}}
}

func unknownProperty(iface, prop string) *godbus.Error {
	return &godbus.Error{Name: "org.freedesktop.DBus.Error.UnknownProperty", Body: []any{dbusString(fmt.Sprintf("no property %q in interface %q", prop, iface))}}
}

// dbusString makes s a valid D-Bus string: UTF-8 without NUL. A message
// that is not would make the reply unsendable and leave the caller to time
// out.
func dbusString(s string) string {
	s = strings.ToValidUTF8(s, "\uFFFD")
	return strings.ReplaceAll(s, "\x00", `\x00`)
}

func (s *Service) hasHandlerManagerObjects() bool {
	return s.Mode() == Registered
}

func sortedSubtypes(hs []*handlerObject) []string {
	n := make([]string, 0, len(hs))
	for _, h := range hs {
		n = append(n, h.Subtype)
	}
	slices.Sort(n)
	return n
}
