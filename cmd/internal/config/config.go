// Package config is vscsid's config file: its schema (Config, Device,
// Fault, ISCSI), the built-in default, every check --check-config makes
// (the devices' cfgstrings with their kinds' grammars, fault blocks bound
// to the kinds' command tables, iSCSI exports, TCMU limits), and the
// registry of device kinds the daemon serves (Kinds).
package config

import (
	"bytes"
	"context"
	_ "embed"
	"errors"
	"fmt"
	"io"
	"os"
	"reflect"
	"slices"
	"strings"

	"go.yaml.in/yaml/v3"

	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/target"
)

// Default is what `vscsid` serves with no --config: one fake_rw disk
// and one tape drive with a cartridge, so the daemon alone does something
// useful. deploy/vscsid.yaml is a different, fuller example (four devices,
// every setting commented) to install as /etc/vscsid/vscsid.yaml.
//
//go:embed default.yaml
var Default []byte

// Config is the daemon's YAML configuration.
type Config struct {
	// CmdTimeOut is TCMU's attrib/cmd_time_out in seconds, set on every
	// device before it is exported. A command the daemon does not complete
	// in time fails with NOT READY 08/00 and the initiator retries. 0 keeps
	// the kernel default (30 s).
	CmdTimeOut int `yaml:"cmd_time_out"`
	// MaxDataAreaMB is TCMU's per-device data area (max_data_area_mb); 0
	// keeps the kernel default (1024 MiB of address space, allocated lazily).
	MaxDataAreaMB int `yaml:"max_data_area_mb"`
	// TMRNotify asks the kernel to put task management requests (ABORT
	// TASK, LUN RESET) in the ring (attrib/tmr_notification), so aborts are
	// counted and a tape drive learns about resets.
	TMRNotify *bool `yaml:"tmr_notification"`
	// RingPoll is every device's ring poll window (poll.go), those other
	// tools make included, unless the device sets its own; a reload
	// changes it in place.
	RingPoll Poll `yaml:"ring_poll"`
	// ISCSI holds the iSCSI settings of the devices whose export lists
	// iscsi (iscsi.go).
	ISCSI *ISCSI `yaml:"iscsi"`
	// Devices are created at start and removed at stop.
	Devices []Device `yaml:"devices"`
	// Warnings are what the check found odd but not wrong (a library
	// drive the config does not make): --check-config prints them, the
	// daemon logs them at start.
	Warnings []string `yaml:"-"`
}

// Device is one device of the config file.
type Device struct {
	Name string `yaml:"name"`
	Type string `yaml:"type"` // vdisk | vtape | vlibrary
	// Config is the handler's cfgstring: "key=value;key=value", or in YAML
	// a mapping of the same keys. UnmarshalYAML decodes it (key: its
	// name in the file, for the list of keys in errors).
	Config       string `yaml:"-" key:"config"`
	HWMaxSectors int    `yaml:"hw_max_sectors"`
	// MaxDataAreaMB overrides the config's max_data_area_mb for this
	// device (0: the config's).
	MaxDataAreaMB int `yaml:"max_data_area_mb"`
	// RingPoll overrides the config's ring_poll for this device.
	RingPoll *Poll `yaml:"ring_poll"`
	// Fault is the device's fault injection and timing, if any.
	Fault *Fault `yaml:"fault"`
	// Export lists the fabrics the device is shown on: loopback (this
	// host, tcm_loop; the default) and iscsi (other hosts).
	Export []string `yaml:"export"`
	// ISCSI overrides the config's iscsi settings for this device.
	ISCSI *ISCSI `yaml:"iscsi"`
}

// UnmarshalYAML accepts config as a string or a mapping.
func (d *Device) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind == yaml.MappingNode {
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := n.Content[i]
			if !slices.Contains(keysOf(reflect.TypeFor[Device]()), k.Value) {
				return unknownKey(k.Line, k.Value, "config.Device")
			}
		}
	}
	type plain Device
	var raw struct {
		plain  `yaml:",inline"`
		Config yaml.Node `yaml:"config"`
	}
	if err := n.Decode(&raw); err != nil {
		return err
	}
	*d = Device(raw.plain)
	switch raw.Config.Kind {
	case 0:
	case yaml.ScalarNode:
		d.Config = raw.Config.Value
	case yaml.MappingNode:
		var parts []string
		for i := 0; i+1 < len(raw.Config.Content); i += 2 {
			k, v := raw.Config.Content[i], raw.Config.Content[i+1]
			if v.Kind != yaml.ScalarNode {
				return fmt.Errorf("line %d: config key %q: value must be a scalar", v.Line, k.Value)
			}
			// A ';' or '=' would smuggle another key into the
			// cfgstring ({size: '1M;wp=1'} would write-protect).
			if strings.ContainsAny(k.Value, ";=") {
				return fmt.Errorf("line %d: config key %q: ';' and '=' separate keys and values, they cannot be in a key", k.Line, k.Value)
			}
			if strings.ContainsAny(v.Value, ";=") {
				return fmt.Errorf("line %d: config key %q: value %q has ';' or '=', which separate keys and values; give one value per key", v.Line, k.Value, v.Value)
			}
			parts = append(parts, k.Value+"="+v.Value)
		}
		d.Config = strings.Join(parts, ";")
	default:
		return fmt.Errorf("line %d: config must be a string or a mapping", raw.Config.Line)
	}
	return nil
}

// maxConfigSize bounds the config file: a YAML list of devices is a few
// KiB; /dev/zero or a runaway generator is refused instead of exhausting
// memory.
const maxConfigSize = 1 << 20

// readConfigFile reads at most maxConfigSize bytes of path. A FIFO or a
// device can block in open or read for ever (--config on a named pipe
// nobody writes): then a done ctx (SIGINT, SIGTERM) ends the wait, and
// the blocked read is left to the exiting process.
func readConfigFile(ctx context.Context, path string) ([]byte, error) {
	type result struct {
		data []byte
		err  error
	}
	ch := make(chan result, 1)
	go func() {
		data, err := readConfigFileBlocking(path)
		ch <- result{data, err}
	}()
	select {
	case r := <-ch:
		return r.data, r.err
	case <-ctx.Done():
		return nil, fmt.Errorf("%s: not read: %w", path, context.Cause(ctx))
	}
}

func readConfigFileBlocking(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read-only
	data, err := io.ReadAll(io.LimitReader(f, maxConfigSize+1))
	if err != nil {
		return nil, err
	}
	if len(data) > maxConfigSize {
		return nil, fmt.Errorf("%s: larger than %d bytes, not a vscsid config file", path, maxConfigSize)
	}
	return data, nil
}

// Load reads and validates a config file; path "" means the embedded
// default.
func Load(ctx context.Context, path string) (*Config, error) {
	data := Default
	src := "default config"
	if path != "" {
		var err error
		data, err = readConfigFile(ctx, path)
		if err != nil {
			return nil, fmt.Errorf("read config: %w", err)
		}
		src = path
	}
	c, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", src, err)
	}
	return c, nil
}

// Upper bounds of the config file's TCMU attributes.
const (
	// maxCmdTimeOut bounds cmd_time_out (seconds). The kernel takes a
	// u32, but a day is past any initiator's timeout (sd 30 s, st's long
	// timeout 14000 s): a larger value is a typo.
	maxCmdTimeOut = 24 * 60 * 60
	// maxDataAreaMB bounds max_data_area_mb: TCMU clamps a larger value
	// to its global limit, global_max_data_area_mb, 2048 MiB by default
	// (TCMU_GLOBAL_MAX_PAGES_DEF, 512Ki pages of 4 KiB).
	maxDataAreaMB = 2048
	// maxHWMaxSectors bounds hw_max_sectors: a command of more 512-byte
	// sectors does not fit the largest data area (maxDataAreaMB).
	maxHWMaxSectors = maxDataAreaMB << 20 / 512
)

// Parse reads and validates a config file's bytes: every check of
// --check-config, the devices' cfgstrings and fault blocks included.
func Parse(data []byte) (*Config, error) {
	var c Config
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	if err := dec.Decode(&c); err != nil {
		if errors.Is(err, io.EOF) {
			return nil, errors.New("empty config")
		}
		return nil, explainYAML(err)
	}
	var more yaml.Node
	if err := dec.Decode(&more); !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("line %d: the config file has more than one YAML document (or is followed by one that does not parse)", more.Line)
	}
	if c.CmdTimeOut < 0 || c.CmdTimeOut > maxCmdTimeOut {
		return nil, fmt.Errorf("cmd_time_out %d: want 0..%d seconds (0 = the kernel default, 30 s)", c.CmdTimeOut, maxCmdTimeOut)
	}
	if c.MaxDataAreaMB < 0 || c.MaxDataAreaMB > maxDataAreaMB {
		return nil, fmt.Errorf("max_data_area_mb %d: want 0..%d (0 = the kernel default, 1024; TCMU clamps more to its global_max_data_area_mb, %d by default)", c.MaxDataAreaMB, maxDataAreaMB, maxDataAreaMB)
	}
	var names, iqns []string
	var iqnOwners []int
	params := make([]device.Params, len(c.Devices))
	for i, d := range c.Devices {
		if err := cfgstring.DeviceName(d.Name); err != nil {
			return nil, fmt.Errorf("devices[%d]: name: %w", i, err)
		}
		if slices.Contains(names, d.Name) {
			return nil, fmt.Errorf("devices[%d]: name %q is used twice", i, d.Name)
		}
		names = append(names, d.Name)
		p, err := d.Check()
		if err != nil {
			return nil, fmt.Errorf("devices[%d] %s: %w", i, d.Name, err)
		}
		params[i] = p
		if err := d.dataAreaFits(&c); err != nil {
			return nil, fmt.Errorf("devices[%d] %s: %w", i, d.Name, err)
		}
		loopback, e, err := d.Exports(&c)
		if err != nil {
			return nil, fmt.Errorf("devices[%d] %s: %w", i, d.Name, err)
		}
		// What Create checks before it touches configfs (the kernel's
		// dev_config limit of 255 bytes): one check, run by both.
		spec := target.DeviceSpec{Name: d.Name, Subtype: d.Type, Config: d.Config, ISCSI: e, NoLoopback: !loopback}
		if err := spec.Validate(); err != nil {
			return nil, fmt.Errorf("devices[%d]: %w", i, err)
		}
		if e != nil {
			if j := slices.Index(iqns, e.IQN); j >= 0 {
				return nil, fmt.Errorf("devices[%d] %s: iSCSI target %s is also %s's (names that differ only in case or in '_' and '-' map to one IQN: set iqn in one of them)", i, d.Name, e.IQN, names[iqnOwners[j]])
			}
			iqns, iqnOwners = append(iqns, e.IQN), append(iqnOwners, i)
		}
	}
	if c.ISCSI != nil && !slices.ContainsFunc(c.Devices, func(d Device) bool { return slices.Contains(d.Export, fabricISCSI) }) {
		return nil, errors.New("iscsi settings, but no device lists iscsi in its export")
	}
	if err := c.checkPeers(params); err != nil {
		return nil, err
	}
	return &c, nil
}

// checkPeers checks the devices a device's cfgstring names (a library's
// drives): one of this config is of the subtype named, and no device is
// named under one key by two (a drive in two libraries); and that no two
// devices claim one resource (device.Claim: a cartridge, a serial
// number, a library's media directory). A name the
// config does not make is a warning, not an error: the device may be
// made with targetcli, and the daemon finds it when it is first needed.
func (c *Config) checkPeers(params []device.Params) error {
	type use struct {
		key, name string
	}
	owner := map[use]int{}
	claimed := map[device.Claim]int{}
	for i, p := range params {
		d := c.Devices[i]
		for _, cl := range p.Claims {
			if j, ok := claimed[cl]; ok {
				return fmt.Errorf("devices[%d] %s: %s %s is also %s's (devices[%d]): two devices cannot share it", i, d.Name, cl.What, cl.Value, c.Devices[j].Name, j)
			}
			claimed[cl] = i
		}
		for _, pr := range p.Peers {
			if j, ok := owner[use{pr.Key, pr.Name}]; ok {
				return fmt.Errorf("devices[%d] %s: %s=: %s is already in the %s= of %s (devices[%d]); a device can be in one only", i, d.Name, pr.Key, pr.Name, pr.Key, c.Devices[j].Name, j)
			}
			owner[use{pr.Key, pr.Name}] = i
			j := slices.IndexFunc(c.Devices, func(o Device) bool { return o.Name == pr.Name })
			switch {
			case j < 0:
				c.Warnings = append(c.Warnings, fmt.Sprintf("devices[%d] %s: %s=: %s is not a device of this config; it must be made (with targetcli, type user:%s) before %s uses it", i, d.Name, pr.Key, pr.Name, pr.Subtype, d.Name))
			case c.Devices[j].Type != pr.Subtype:
				return fmt.Errorf("devices[%d] %s: %s=: %s (devices[%d]) is a %s, want a %s", i, d.Name, pr.Key, pr.Name, j, c.Devices[j].Type, pr.Subtype)
			case pr.SameMedia && params[j].Media != p.Media:
				where := "in memory (memory=1)"
				if params[j].Media != "" {
					where = "in " + params[j].Media
				}
				return fmt.Errorf("devices[%d] %s: %s=: %s (devices[%d]) keeps its cartridges %s, not in this device's media=%s: give it media=%s", i, d.Name, pr.Key, pr.Name, j, where, p.Media, p.Media)
			}
		}
	}
	return nil
}

// DataAreaMB is d's TCMU data area in MiB: its own, else the config's;
// 0 means the kernel default.
func (d Device) DataAreaMB(c *Config) int {
	if d.MaxDataAreaMB > 0 {
		return d.MaxDataAreaMB
	}
	return c.MaxDataAreaMB
}

// kernelDataAreaMB is TCMU's default data area (max_data_area_mb 0).
const kernelDataAreaMB = 1024

// dataAreaFits refuses a device whose largest command (hw_max_sectors)
// cannot fit its data area: TCMU fails a command larger than the whole
// data area with INVALID FIELD IN CDB, so the initiator would be told it
// may send what the device then refuses.
func (d Device) dataAreaFits(c *Config) error {
	mb := d.DataAreaMB(c)
	if mb == 0 {
		mb = kernelDataAreaMB
	}
	if d.HWMaxSectors*512 > mb<<20 {
		return fmt.Errorf("hw_max_sectors %d (%d KiB per command) does not fit the %d MiB data area: raise max_data_area_mb (in the device or at the top) to at least %d",
			d.HWMaxSectors, d.HWMaxSectors/2, mb, (d.HWMaxSectors*512+1<<20-1)>>20)
	}
	return nil
}

// Check validates one device, all but the uniqueness of its name, and
// returns what its cfgstring gives Target.Create.
func (d Device) Check() (device.Params, error) {
	if err := cfgstring.DeviceName(d.Name); err != nil {
		return device.Params{}, fmt.Errorf("name: %w", err)
	}
	k, ok := KindOf(d.Type)
	if !ok {
		return device.Params{}, fmt.Errorf("type %q: want one of %s", d.Type, strings.Join(TypeNames(), ", "))
	}
	if err := cfgstring.CheckChars(d.Config); err != nil {
		return device.Params{}, fmt.Errorf("config: %w", err)
	}
	if d.MaxDataAreaMB < 0 || d.MaxDataAreaMB > maxDataAreaMB {
		return device.Params{}, fmt.Errorf("max_data_area_mb %d: want 0..%d (0 = the config's max_data_area_mb)", d.MaxDataAreaMB, maxDataAreaMB)
	}
	if d.HWMaxSectors < 0 || d.HWMaxSectors > maxHWMaxSectors {
		return device.Params{}, fmt.Errorf("hw_max_sectors %d: want 0..%d (0 = the kernel default, 128; more 512-byte sectors do not fit the largest data area, %d MiB)", d.HWMaxSectors, maxHWMaxSectors, maxDataAreaMB)
	}
	p, err := k.Check(d.Config)
	if err != nil {
		return device.Params{}, err
	}
	if d.Fault != nil {
		if err := d.checkFaults(k); err != nil {
			return device.Params{}, err
		}
	}
	return p, nil
}

// checkFaults checks the device's fault block as the daemon binds it
// when it attaches the device (wrapFaults): with the kind's command table
// (op= names, what rules may address, the timing models it takes), so
// that op=reed, lba= on a tape or a tape timing model on a disk are
// refused by --check-config and not only at attach. No device is built.
func (d Device) checkFaults(k device.Kind) error {
	opts, err := d.Fault.Options(k.Commands, KernelCmdTimeOut)
	if err == nil {
		err = fault.Check(opts)
	}
	if err != nil {
		return fmt.Errorf("fault: %w", err)
	}
	return nil
}
