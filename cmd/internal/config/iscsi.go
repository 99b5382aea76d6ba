package config

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vscsid/vscsid/target"
)

// ISCSI is the iSCSI export of config-file devices: at the top of
// the config the defaults of every device whose export lists iscsi, in a
// device what differs for it.
type ISCSI struct {
	// IQNPrefix names the targets: a device's target is
	// <prefix>:<device name>, lower case, '_' as '-' (top level only).
	IQNPrefix string `yaml:"iqn_prefix"`
	// IQN is one device's whole target name instead (device level only).
	IQN string `yaml:"iqn"`
	// Portals: "IP:port"; none means 0.0.0.0:3260.
	Portals []string `yaml:"portals"`
	// ACLs: the initiators that may log in, with their CHAP secrets.
	ACLs []ISCSIACL `yaml:"acls"`
}

// ISCSIACL is one initiator of an ISCSI.
type ISCSIACL struct {
	Initiator      string `yaml:"initiator"`
	CHAPUser       string `yaml:"chap_user"`
	CHAPPassword   string `yaml:"chap_password"`
	MutualUser     string `yaml:"mutual_chap_user"`
	MutualPassword string `yaml:"mutual_chap_password"`
}

// DefaultIQNPrefix names the targets of a config without iqn_prefix.
const DefaultIQNPrefix = "iqn.2026-12.io.github.vscsid"

// Fabrics a device's export may list.
const (
	fabricLoopback = "loopback"
	fabricISCSI    = "iscsi"
)

// Exports resolves d's export list and iSCSI settings against the
// config's: whether it is on tcm_loop, and its iSCSI target if any.
func (d Device) Exports(c *Config) (loopback bool, e *target.ISCSIExport, err error) {
	fabrics := d.Export
	if len(fabrics) == 0 {
		fabrics = []string{fabricLoopback}
	}
	for i, f := range fabrics {
		if f != fabricLoopback && f != fabricISCSI {
			return false, nil, fmt.Errorf("export %q: want a list of loopback (this host, tcm_loop) and iscsi (other hosts, LIO iSCSI)", f)
		}
		if slices.Contains(fabrics[:i], f) {
			return false, nil, fmt.Errorf("export lists %s twice", f)
		}
	}
	loopback = slices.Contains(fabrics, fabricLoopback)
	if !slices.Contains(fabrics, fabricISCSI) {
		if d.ISCSI != nil {
			return false, nil, fmt.Errorf("iscsi settings on a device whose export does not list iscsi (export: %s)", strings.Join(fabrics, ", "))
		}
		return loopback, nil, nil
	}
	var top ISCSI
	if c != nil && c.ISCSI != nil {
		top = *c.ISCSI
	}
	own := ISCSI{}
	if d.ISCSI != nil {
		own = *d.ISCSI
		if own.IQNPrefix != "" {
			return false, nil, fmt.Errorf("iscsi: iqn_prefix belongs at the top of the config; a device sets its whole name with iqn")
		}
	}
	if top.IQN != "" {
		return false, nil, fmt.Errorf("iscsi: iqn at the top of the config would name every device's target alike: set iqn_prefix there, or iqn in a device")
	}
	e = &target.ISCSIExport{IQN: own.IQN, Portals: top.Portals}
	if e.IQN == "" {
		prefix := top.IQNPrefix
		if prefix == "" {
			prefix = DefaultIQNPrefix
		}
		e.IQN = prefix + ":" + strings.ToLower(strings.ReplaceAll(d.Name, "_", "-"))
	}
	if len(own.Portals) > 0 {
		e.Portals = own.Portals
	}
	acls := top.ACLs
	if len(own.ACLs) > 0 {
		acls = own.ACLs
	}
	for _, a := range acls {
		e.ACLs = append(e.ACLs, target.ISCSIACL{
			Initiator: a.Initiator, UserID: a.CHAPUser, Password: a.CHAPPassword,
			MutualUserID: a.MutualUser, MutualPassword: a.MutualPassword,
		})
	}
	if err := e.Validate(); err != nil {
		return false, nil, err
	}
	return loopback, e, nil
}

// capSysAdmin is CAP_SYS_ADMIN's bit in /proc's capability masks.
const capSysAdmin = 21

// CHAPNeedsCapability refuses a config whose iSCSI ACLs carry CHAP
// secrets when the process cannot set them: the kernel's iSCSI target
// writes an ACL's auth/userid and auth/password only for a caller with
// CAP_SYS_ADMIN, and the systemd unit bounds vscsid to CAP_NET_ADMIN.
// Refusing before any device is made says so once, instead of a device
// half-exported with EPERM. capEff is the effective set; ok false means
// it is unknown (no /proc), and nothing is refused.
func CHAPNeedsCapability(c *Config, capEff uint64, ok bool) error {
	if !ok || capEff&(1<<capSysAdmin) != 0 {
		return nil
	}
	for _, d := range c.Devices {
		_, e, err := d.Exports(c)
		if err != nil || e == nil || len(e.ACLs) == 0 || e.ACLs[0].UserID == "" {
			continue
		}
		return fmt.Errorf("device %s: its iSCSI ACLs use CHAP, and the kernel sets CHAP secrets only for a process with CAP_SYS_ADMIN, which this vscsid lacks "+
			"(the systemd unit bounds it to CAP_NET_ADMIN): add deploy/systemd/iscsi-chap.conf as a drop-in "+
			"(/etc/systemd/system/vscsid.service.d/iscsi-chap.conf, then systemctl daemon-reload), or list the ACLs without chap_user", d.Name)
	}
	return nil
}
