package target

import (
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/netip"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"go.uber.org/zap"
)

// LIO's iSCSI fabric (drivers/target/iscsi, iscsi_target_mod) shows a LUN
// to initiators on other hosts, or on this one over the loopback address.
// A device with an ISCSIExport gets a target of its own, made the way
// targetcli makes one:
//
//	target/iscsi/<iqn>/tpgt_1/lun/lun_0/<name>          → core/user_N/<name>
//	target/iscsi/<iqn>/tpgt_1/np/<ip>:<port>            a network portal
//	target/iscsi/<iqn>/tpgt_1/acls/<initiator>/lun_0/<name> → ../../../lun/lun_0
//	target/iscsi/<iqn>/tpgt_1/acls/<initiator>/auth/{userid,password}
//	target/iscsi/<iqn>/tpgt_1/attrib/authentication     1 with CHAP, else 0
//	target/iscsi/<iqn>/tpgt_1/enable                    1
//
// Only the listed initiators may log in (no demo mode: generate_node_acls
// stays 0). Close removes exactly this, after the tcm_loop LUN and before
// the storage object; a leftover of a daemon that died is removed before
// the device is made again (reclaim, adopt). Unit attentions and
// reservations are LIO core's, per I_T nexus, as on tcm_loop.

// ISCSIExport is the iSCSI target of one device.
type ISCSIExport struct {
	// IQN is the target's name: iqn.YYYY-MM.reversed.domain[:anything],
	// eui.<16 hex digits> or naa.<16 or 32 hex digits>, lower case.
	IQN string
	// Portals are the network portals, "IP:port" ("[IPv6]:port"); none
	// means 0.0.0.0:3260, targetcli's default. LIO shares a portal
	// between the targets that list it.
	Portals []string
	// ACLs are the initiators allowed to log in; at least one.
	ACLs []ISCSIACL
}

// ISCSIACL is one initiator allowed to log in, with its CHAP secrets.
// CHAP is all or nothing per target: every ACL has a UserID and Password,
// or none has.
type ISCSIACL struct {
	Initiator string // the initiator's IQN (/etc/iscsi/initiatorname.iscsi)
	// UserID and Password: one-way CHAP, the initiator proves itself.
	UserID, Password string
	// MutualUserID and MutualPassword: the target proves itself too
	// (needs one-way CHAP).
	MutualUserID, MutualPassword string
}

// DefaultISCSIPortal is the portal of an ISCSIExport that names none.
const DefaultISCSIPortal = "0.0.0.0:3260"

var (
	iqnRE     = regexp.MustCompile(`^iqn\.[0-9]{4}-[0-9]{2}\.[a-z0-9]([a-z0-9.-]*[a-z0-9])?(:[a-z0-9.:-]*)?$`)
	euiRE     = regexp.MustCompile(`^eui\.[0-9a-f]{16}$`)
	naaNameRE = regexp.MustCompile(`^naa\.([0-9a-f]{16}|[0-9a-f]{32})$`)
)

// ISCSINameGrammar says what ValidISCSIName accepts, for error messages.
const ISCSINameGrammar = "iqn.YYYY-MM.reversed.domain[:name], eui.<16 hex digits> or naa.<16 or 32 hex digits>, in lower case, at most 223 bytes (RFC 3720)"

// ValidISCSIName checks an iSCSI name (a target's or an initiator's IQN).
func ValidISCSIName(s string) error {
	if ok := iqnRE.MatchString(s) || euiRE.MatchString(s) || naaNameRE.MatchString(s); !ok || len(s) > 223 {
		return fmt.Errorf("iSCSI name %q: want %s", s, ISCSINameGrammar)
	}
	return nil
}

// ISCSIPortal parses a portal "IP:port" ("[IPv6]:port", port 1-65535)
// into the name of its configfs directory.
func ISCSIPortal(s string) (string, error) {
	host, port, err := net.SplitHostPort(s)
	if err != nil {
		return "", fmt.Errorf("iSCSI portal %q: want IP:port, e.g. 0.0.0.0:3260 or [::]:3260", s)
	}
	a, err := netip.ParseAddr(host)
	if err != nil || a.Zone() != "" {
		return "", fmt.Errorf("iSCSI portal %q: %q is not an IP address (a host name is not accepted: LIO listens on addresses)", s, host)
	}
	p, err := strconv.ParseUint(port, 10, 16)
	if err != nil || p == 0 {
		return "", fmt.Errorf("iSCSI portal %q: port %q is not 1-65535", s, port)
	}
	return netip.AddrPortFrom(a.Unmap(), uint16(p)).String(), nil
}

// chapSecretRE: what configfs takes as a CHAP user name or secret (one
// line of printable ASCII, no spaces), within LIO's limits.
var chapSecretRE = regexp.MustCompile(`^[!-~]{1,255}$`)

// Validate checks the export: names, portals, ACLs and their CHAP secrets.
func (e *ISCSIExport) Validate() error {
	if err := ValidISCSIName(e.IQN); err != nil {
		return fmt.Errorf("iscsi: target %w", err)
	}
	seen := map[string]bool{}
	for _, p := range e.Portals {
		n, err := ISCSIPortal(p)
		if err != nil {
			return fmt.Errorf("iscsi: %w", err)
		}
		if seen[n] {
			return fmt.Errorf("iscsi: portal %s listed twice", n)
		}
		seen[n] = true
	}
	if len(e.ACLs) == 0 {
		return errors.New("iscsi: no ACL: list the initiators allowed to log in (their IQN, from /etc/iscsi/initiatorname.iscsi); vscsid does not open a target to every initiator")
	}
	chap := e.ACLs[0].UserID != ""
	inis := map[string]bool{}
	for _, a := range e.ACLs {
		if err := ValidISCSIName(a.Initiator); err != nil {
			return fmt.Errorf("iscsi: ACL initiator %w", err)
		}
		if inis[a.Initiator] {
			return fmt.Errorf("iscsi: initiator %s listed twice", a.Initiator)
		}
		inis[a.Initiator] = true
		if (a.UserID != "") != chap {
			return fmt.Errorf("iscsi: initiator %s: CHAP must be set on every ACL of a target or on none (authentication is per target)", a.Initiator)
		}
		for _, c := range []struct{ what, user, pass string }{{"CHAP", a.UserID, a.Password}, {"mutual CHAP", a.MutualUserID, a.MutualPassword}} {
			if c.user == "" && c.pass == "" {
				continue
			}
			if !chapSecretRE.MatchString(c.user) || !chapSecretRE.MatchString(c.pass) {
				return fmt.Errorf("iscsi: initiator %s: %s needs a user name and a secret of 1-255 printable ASCII characters without spaces", a.Initiator, c.what)
			}
		}
		if a.MutualUserID != "" && a.UserID == "" {
			return fmt.Errorf("iscsi: initiator %s: mutual CHAP needs one-way CHAP too", a.Initiator)
		}
	}
	return nil
}

func (p Paths) iscsi() string { return filepath.Join(p.ConfigFS, "target", "iscsi") }

// iscsiLUNLink is where a device's iSCSI target links its LUN to the
// device's storage object: the LUN by which an iSCSI-only device is found
// at a take-over.
func (p Paths) iscsiLUNLink(iqn, name string) string {
	return filepath.Join(p.iscsi(), iqn, "tpgt_1", "lun", "lun_0", name)
}

// iscsiObject is one configfs object of a device's iSCSI target: a
// directory, a symbolic link to dst, or an attribute written with v
// (shown in messages as shown: a secret is not).
type iscsiObject struct {
	kind      iscsiKind
	path, dst string
	v, shown  string
}

type iscsiKind uint8

const (
	iscsiDir iscsiKind = iota
	iscsiLink
	iscsiAttr
)

// iscsiLayout is the iSCSI target of the device name (storage object obj)
// as exportISCSI makes it, in the order it makes it; keepISCSI checks a
// leftover against the same list.
func (t *Target) iscsiLayout(name, obj string, e *ISCSIExport) ([]iscsiObject, error) {
	link := t.paths.iscsiLUNLink(e.IQN, name)
	lun := filepath.Dir(link)
	tpg := filepath.Dir(filepath.Dir(lun))
	tdir := filepath.Dir(tpg)
	out := []iscsiObject{
		{kind: iscsiDir, path: tdir}, {kind: iscsiDir, path: tpg}, {kind: iscsiDir, path: lun},
		{kind: iscsiLink, path: link, dst: obj},
	}
	portals := e.Portals
	if len(portals) == 0 {
		portals = []string{DefaultISCSIPortal}
	}
	for _, p := range portals {
		n, err := ISCSIPortal(p)
		if err != nil {
			return nil, err
		}
		out = append(out, iscsiObject{kind: iscsiDir, path: filepath.Join(tpg, "np", n)})
	}
	chap := false
	for _, a := range e.ACLs {
		acl := filepath.Join(tpg, "acls", a.Initiator)
		mapped := filepath.Join(acl, "lun_0")
		out = append(out, iscsiObject{kind: iscsiDir, path: acl}, iscsiObject{kind: iscsiDir, path: mapped},
			iscsiObject{kind: iscsiLink, path: filepath.Join(mapped, name), dst: lun})
		for _, kv := range []struct{ file, v string }{{"userid", a.UserID}, {"password", a.Password}, {"userid_mutual", a.MutualUserID}, {"password_mutual", a.MutualPassword}} {
			if kv.v == "" {
				continue
			}
			shown := kv.v
			if strings.HasPrefix(kv.file, "password") {
				shown = "the secret"
			}
			out = append(out, iscsiObject{kind: iscsiAttr, path: filepath.Join(acl, "auth", kv.file), v: kv.v, shown: shown})
		}
		chap = chap || a.UserID != ""
	}
	auth := "0"
	if chap {
		auth = "1"
	}
	return append(out, iscsiObject{kind: iscsiAttr, path: filepath.Join(tpg, "attrib", "authentication"), v: auth, shown: auth},
		iscsiObject{kind: iscsiAttr, path: filepath.Join(tpg, "enable"), v: "1", shown: "1"}), nil
}

// exportISCSI makes m's iSCSI target for the storage object obj and pushes
// the steps that remove it.
func (t *Target) exportISCSI(m *managed, name, obj string, e *ISCSIExport) error {
	f := t.fs
	root := t.paths.iscsi()
	if !f.Exists(root) {
		// The mkdir loads iscsi_target_mod (target_core_fabric_configfs
		// request_module); it stays, as targetcli leaves it.
		if err := f.Mkdir(root); err != nil && !errors.Is(err, fs.ErrExist) {
			return configfsError("create", root, err, "iscsi_target_mod")
		}
	}
	layout, err := t.iscsiLayout(name, obj, e)
	if err != nil {
		return err
	}
	for _, o := range layout {
		switch o.kind {
		case iscsiDir:
			if err := f.Mkdir(o.path); err != nil {
				return fmt.Errorf("create %s: %w", o.path, err)
			}
		case iscsiLink:
			if err := f.Symlink(o.dst, o.path); err != nil {
				return fmt.Errorf("link %s to %s: %w", o.path, o.dst, err)
			}
		case iscsiAttr:
			if err := f.WriteAttr(o.path, o.v); err != nil {
				return fmt.Errorf("write %s to %s: %w", o.shown, o.path, err)
			}
		}
		t.pushISCSIUndo(m, o)
	}
	return nil
}

// pushISCSIUndo pushes the step that takes o away again: a directory is
// removed, a link unlinked, and the TPG disabled (enable 0) before any of
// them; other attributes go with their directory.
func (t *Target) pushISCSIUndo(m *managed, o iscsiObject) {
	f := t.fs
	switch {
	case o.kind == iscsiDir:
		m.undo.push("remove "+o.path, func() error { return f.Rmdir(o.path) })
	case o.kind == iscsiLink:
		m.undo.push("unlink "+o.path, func() error { return f.Unlink(o.path) })
	case filepath.Base(o.path) == "enable":
		m.undo.push("disable "+filepath.Dir(o.path), func() error { return f.WriteAttr(o.path, "0") })
	}
}

// keepISCSI takes over in place the iSCSI target a previous daemon left
// for the device (a hand-over, or a crash) when it is exactly what
// exportISCSI would make now: the same IQN, one TPG with one LUN linked
// to obj, the same portals, the same initiators each with the LUN and the
// same CHAP secrets, the same authentication, enabled. Its sessions then
// stay logged in across the restart. It pushes the steps that remove it
// on Close and reports whether it kept it; otherwise the caller removes
// the leftover and makes the target anew, and the initiators log in
// again. It changes nothing in configfs.
func (t *Target) keepISCSI(m *managed, name, obj string, e *ISCSIExport) bool {
	f := t.fs
	layout, err := t.iscsiLayout(name, obj, e)
	if err != nil {
		return false
	}
	tdir := layout[0].path
	tpg := layout[1].path
	// Nothing more than the layout: no other TPG, LUN, portal, ACL or
	// mapped LUN. want lists each such directory's entries that count
	// (those with the prefix; the others are the kernel's own, such as
	// fabric_statistics).
	type listing struct {
		prefix string
		names  []string
	}
	want := map[string]*listing{tdir: {prefix: "tpgt_"}, filepath.Join(tpg, "lun"): {prefix: "lun_"},
		filepath.Join(tpg, "np"): {}, filepath.Join(tpg, "acls"): {}}
	for _, o := range layout[1:] {
		if o.kind != iscsiDir {
			continue
		}
		if filepath.Base(filepath.Dir(o.path)) == "acls" {
			want[o.path] = &listing{prefix: "lun_"} // an ACL: its mapped LUNs
		}
		if l, ok := want[filepath.Dir(o.path)]; ok {
			l.names = append(l.names, filepath.Base(o.path))
		}
	}
	for dir, l := range want {
		got, err := f.ReadDir(dir)
		if err != nil {
			return false
		}
		got = slices.DeleteFunc(got, func(n string) bool { return !strings.HasPrefix(n, l.prefix) })
		slices.Sort(got)
		slices.Sort(l.names)
		if !slices.Equal(got, l.names) {
			return false
		}
	}
	for _, o := range layout {
		switch o.kind {
		case iscsiDir:
			if !f.Exists(o.path) || f.IsLink(o.path) {
				return false
			}
		case iscsiLink:
			if !sameObject(o.path, o.dst) {
				return false
			}
		case iscsiAttr:
			if v, err := f.ReadAttr(o.path); err != nil || strings.TrimSpace(v) != o.v {
				return false
			}
		}
	}
	for _, o := range layout {
		t.pushISCSIUndo(m, o)
	}
	return true
}

// removeLeftoverISCSI removes the iSCSI target a daemon that died left
// for spec (its IQN), if there is one, saying so.
func (t *Target) removeLeftoverISCSI(spec DeviceSpec) error {
	if !t.fs.Exists(filepath.Join(t.paths.iscsi(), spec.ISCSI.IQN)) {
		return nil
	}
	t.log.Warn("removing the leftover iSCSI target of this device from a daemon that did not stop cleanly; it is made anew",
		zap.String("device", spec.Name), zap.String("iqn", spec.ISCSI.IQN))
	if err := t.removeISCSITarget(spec.ISCSI.IQN); err != nil {
		return fmt.Errorf("remove the leftover iSCSI target %s: %w", spec.ISCSI.IQN, err)
	}
	return nil
}

// removeISCSITarget removes the iSCSI target iqn and everything in it: a
// leftover of a daemon that died, which vscsid made for this device (the
// IQN is the device's). Missing parts are skipped.
func (t *Target) removeISCSITarget(iqn string) error {
	f := t.fs
	tdir := filepath.Join(t.paths.iscsi(), iqn)
	if !f.Exists(tdir) {
		return nil
	}
	var errs []error
	try := func(err error) {
		if err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	tpgs, _ := f.ReadDir(tdir)
	for _, tp := range tpgs {
		if !strings.HasPrefix(tp, "tpgt_") {
			continue
		}
		tpg := filepath.Join(tdir, tp)
		try(f.WriteAttr(filepath.Join(tpg, "enable"), "0"))
		acls, _ := f.ReadDir(filepath.Join(tpg, "acls"))
		for _, a := range acls {
			acl := filepath.Join(tpg, "acls", a)
			try(t.removeLUNDirs(acl))
			try(f.Rmdir(acl))
		}
		try(t.removeLUNDirs(filepath.Join(tpg, "lun")))
		nps, _ := f.ReadDir(filepath.Join(tpg, "np"))
		for _, n := range nps {
			try(f.Rmdir(filepath.Join(tpg, "np", n)))
		}
		try(f.Rmdir(tpg))
	}
	try(f.Rmdir(tdir))
	return errors.Join(errs...)
}

// removeLUNDirs unlinks and removes every lun_N directory in dir (a TPG's
// lun/ or an ACL's mapped LUNs).
func (t *Target) removeLUNDirs(dir string) error {
	f := t.fs
	var errs []error
	luns, _ := f.ReadDir(dir)
	for _, l := range luns {
		if !strings.HasPrefix(l, "lun_") {
			continue
		}
		ld := filepath.Join(dir, l)
		entries, _ := f.ReadDir(ld)
		for _, k := range entries {
			p := filepath.Join(ld, k)
			if !f.IsLink(p) {
				continue // the LUN's attributes and statistics: they go with it
			}
			if err := f.Unlink(p); err != nil && !errors.Is(err, fs.ErrNotExist) {
				errs = append(errs, err)
			}
		}
		if err := f.Rmdir(ld); err != nil && !errors.Is(err, fs.ErrNotExist) {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// iscsiTargets lists the iSCSI targets that export obj, for messages.
func (t *Target) iscsiTargets(obj string) []string {
	var out []string
	t.walkLUNs(t.paths.iscsi(), obj, func(tpgDir string, _ int) bool {
		out = append(out, filepath.Base(filepath.Dir(tpgDir)))
		return true
	})
	slices.Sort(out)
	return slices.Compact(out)
}
