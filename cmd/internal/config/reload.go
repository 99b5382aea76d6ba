package config

import (
	"errors"
	"fmt"
	"reflect"
	"slices"
)

// Reload is what applying a new config file to a running daemon does
// (SIGHUP, systemctl reload): the devices it adds and removes, and those
// whose fault block changes in place. Every other device is untouched:
// its commands never notice.
type Reload struct {
	Add    []Device // in the new file's order
	Remove []string // names, in the old file's order
	// Faults are the devices whose fault rules or timing model changed;
	// they are set in place (the rules replaced as a whole).
	Faults []Device
	// Poll: a ring_poll changed (the config's or a kept device's); every
	// device's poll window is set again in place.
	Poll bool
}

// IsZero reports whether the reload changes nothing.
func (r Reload) IsZero() bool {
	return len(r.Add) == 0 && len(r.Remove) == 0 && len(r.Faults) == 0 && !r.Poll
}

// PlanReload compares the running config old with next, a config that
// passed Parse, and returns what applying it does. A change that cannot
// be made to a running device or daemon is refused, every one named with
// its device and key in one error: then nothing is applied, and the
// running set stays. Such changes are the top-level settings (the kernel
// takes cmd_time_out, max_data_area_mb and tmr_notification when it
// creates a device; the iSCSI settings are the existing targets') and a
// device's type, cfgstring, hw_max_sectors, max_data_area_mb, export,
// iscsi and the fault block's seed and depth. A restart applies them (a
// device whose cfgstring changed is then made anew); to change one device
// now, remove it in one reload and add it back in the next. ring_poll,
// the config's and each device's, changes in place.
func PlanReload(old, next *Config) (Reload, error) {
	var r Reload
	var refused []error
	refuse := func(format string, a ...any) { refused = append(refused, fmt.Errorf(format, a...)) }
	for _, key := range changed(
		keyChange{"cmd_time_out", old.CmdTimeOut, next.CmdTimeOut},
		keyChange{"max_data_area_mb", old.MaxDataAreaMB, next.MaxDataAreaMB},
		keyChange{"tmr_notification", old.TMRNotify, next.TMRNotify},
		keyChange{"iscsi", old.ISCSI, next.ISCSI},
	) {
		refuse("%s changed: it applies to devices as they are made, so it needs a restart", key)
	}
	byName := func(ds []Device, name string) (Device, bool) {
		i := slices.IndexFunc(ds, func(d Device) bool { return d.Name == name })
		if i < 0 {
			return Device{}, false
		}
		return ds[i], true
	}
	for _, d := range old.Devices {
		if _, ok := byName(next.Devices, d.Name); !ok {
			r.Remove = append(r.Remove, d.Name)
		}
	}
	r.Poll = old.RingPoll != next.RingPoll
	for _, n := range next.Devices {
		o, ok := byName(old.Devices, n.Name)
		if !ok {
			r.Add = append(r.Add, n)
			continue
		}
		for _, key := range changed(
			keyChange{"type", o.Type, n.Type},
			keyChange{"config", o.Config, n.Config},
			keyChange{"hw_max_sectors", o.HWMaxSectors, n.HWMaxSectors},
			keyChange{"max_data_area_mb", o.MaxDataAreaMB, n.MaxDataAreaMB},
			keyChange{"export", o.Export, n.Export},
			keyChange{"iscsi", o.ISCSI, n.ISCSI},
			keyChange{"fault.seed", faultOf(o).Seed, faultOf(n).Seed},
			keyChange{"fault.depth", faultOf(o).Depth, faultOf(n).Depth},
		) {
			refuse("device %s: %s changed: a running device keeps it (restart vscsid, or remove the device in one reload and add it in the next)", n.Name, key)
		}
		if old.PollOf(n.Name) != next.PollOf(n.Name) {
			r.Poll = true
		}
		if of, nf := faultOf(o), faultOf(n); of.Timing != nf.Timing || !slices.Equal(of.Rules, nf.Rules) {
			r.Faults = append(r.Faults, n)
		}
	}
	if len(refused) > 0 {
		return Reload{}, fmt.Errorf("the new config is refused as a whole, the running devices stay as they are: %w", errors.Join(refused...))
	}
	return r, nil
}

// keyChange is one key's value in the running config and the new one.
type keyChange struct {
	key        string
	was, isNow any
}

// changed returns the keys whose values differ.
func changed(ks ...keyChange) []string {
	var out []string
	for _, k := range ks {
		if !reflect.DeepEqual(k.was, k.isNow) {
			out = append(out, k.key)
		}
	}
	return out
}

// faultOf is d's fault block, or the zero one.
func faultOf(d Device) Fault {
	if d.Fault == nil {
		return Fault{}
	}
	return *d.Fault
}
