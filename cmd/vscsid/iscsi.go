package main

import (
	"fmt"
	"slices"
	"strings"

	"github.com/vscsid/vscsid/target"
)

// ISCSIConfig is the iSCSI export of config-file devices: at the top of
// the config the defaults of every device whose export lists iscsi, in a
// device what differs for it.
type ISCSIConfig struct {
	// IQNPrefix names the targets: a device's target is
	// <prefix>:<device name>, lower case, '_' as '-' (top level only).
	IQNPrefix string `yaml:"iqn_prefix"`
	// IQN is one device's whole target name instead (device level only).
	IQN string `yaml:"iqn"`
	// Portals: "IP:port"; none means 0.0.0.0:3260.
	Portals []string `yaml:"portals"`
	// ACLs: the initiators that may log in, with their CHAP secrets.
	ACLs []ISCSIACLConfig `yaml:"acls"`
}

// ISCSIACLConfig is one initiator of an ISCSIConfig.
type ISCSIACLConfig struct {
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

// exports resolves d's export list and iSCSI settings against the
// config's: whether it is on tcm_loop, and its iSCSI target if any.
func (d DeviceConfig) exports(c *Config) (loopback bool, e *target.ISCSIExport, err error) {
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
	var top ISCSIConfig
	if c != nil && c.ISCSI != nil {
		top = *c.ISCSI
	}
	own := ISCSIConfig{}
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
