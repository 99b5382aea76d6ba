package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"time"

	"go.uber.org/zap"
	"golang.org/x/sys/unix"
	"gopkg.in/yaml.v3"

	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/fault"
)

// Wire types of the control socket's fault endpoints (cmd/internal/control).
type (
	faultRuleJSON = control.FaultRule
	faultsJSON    = control.Faults
)

// FaultConfig is a device's `fault:` block: fault injection and timing
// (package target/fault; deploy/fault-rules.example.yaml).
type FaultConfig struct {
	// Seed seeds prob= draws and timing jitter.
	Seed uint64 `yaml:"seed"`
	// Timing is one timing model (fault.TimingDesc); "" for none.
	Timing string `yaml:"timing"`
	// Rules are tried in order (fault.RuleDesc).
	Rules []string `yaml:"rules"`
}

// parse checks the block's grammar; binding to the device (command names,
// disk or tape filters) is checked when the device is created.
func (c FaultConfig) parse() (fault.Timing, []fault.Rule, error) {
	tm, err := fault.ParseTiming(c.Timing)
	if err != nil {
		return tm, nil, fmt.Errorf("fault timing: %w", err)
	}
	if len(c.Rules) > fault.MaxRules {
		return tm, nil, fmt.Errorf("fault rules: %d, at most %d", len(c.Rules), fault.MaxRules)
	}
	rules := make([]fault.Rule, 0, len(c.Rules))
	for i, s := range c.Rules {
		r, err := fault.ParseRule(s)
		if err != nil {
			return tm, nil, fmt.Errorf("fault rules[%d] %q: %w", i, s, err)
		}
		rules = append(rules, r)
	}
	return tm, rules, nil
}

// Every device is served through a fault.Device, so that faults can be
// added at runtime (vscsictl fault) to any of them; without rules or
// timing it costs one atomic load per command.
type faults struct {
	cfg        map[string]FaultConfig // of the config file's devices
	cmdTimeOut time.Duration          // the config file's cmd_time_out in force

	mu  sync.Mutex
	m   map[string]*fault.Device
	own map[string]bool // devices vscsid creates (config file, vscsictl): cmdTimeOut applies
}

// kernelCmdTimeOut is TCMU's default attrib/cmd_time_out.
const kernelCmdTimeOut = 30 * time.Second

func newFaults(cfg *Config) *faults {
	fs := &faults{cfg: map[string]FaultConfig{}, m: map[string]*fault.Device{}, own: map[string]bool{}, cmdTimeOut: kernelCmdTimeOut}
	if cfg.CmdTimeOut > 0 {
		fs.cmdTimeOut = time.Duration(cfg.CmdTimeOut) * time.Second
	}
	for _, d := range cfg.Devices {
		fs.own[d.Name] = true
		if d.Fault != nil {
			fs.cfg[d.Name] = *d.Fault
		}
	}
	return fs
}

// declare says that vscsid creates the device name (vscsictl create), so
// its cmd_time_out is the config file's.
func (fs *faults) declare(name string) {
	fs.mu.Lock()
	fs.own[name] = true
	fs.mu.Unlock()
}

func (fs *faults) isOwn(name string) bool {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	return fs.own[name]
}

// transportAborts lets held commands end on ABORT TASK (fault.Options.Aborts).
type transportAborts struct{}

func (transportAborts) CanReportAborts(ctx context.Context) bool { return target.CanReportAborts(ctx) }
func (transportAborts) Aborted(ctx context.Context) bool         { return target.Aborted(ctx) }

// positionedDrive lets tape position rules (block=, file=, partition=) and
// the tape timing models ask the drive where it is.
type positionedDrive struct{ *tape.Drive }

func (p positionedDrive) Position() (partition int, object, file uint64) {
	s := p.Stats()
	return s.Partition, s.Object, s.File
}

// faultedTape is the fault wrapper of a tape drive: the transport still
// tells the drive about LUN resets (fault.Device does not forward
// target.Resetter).
type faultedTape struct {
	*fault.Device
	drive *tape.Drive
}

func (f faultedTape) Reset() { f.drive.Reset() }

var _ target.Resetter = faultedTape{}

// wrap puts the handlers f builds behind a fault.Device with the config
// file's rules and timing for that device (none for devices made with
// targetcli). The fault.Device forwards target's optional RECONFIG
// interfaces (Resizer, WriteCacher, Reconfigurer) to the disk; for a tape
// drive they report errors.ErrUnsupported, which target answers with
// EOPNOTSUPP.
func (fs *faults) wrap(f target.Factory) target.Factory {
	return func(dc target.DeviceConfig, log *zap.Logger) (target.Handler, error) {
		h, err := f(dc, log)
		if err != nil {
			return nil, err
		}
		opts := fault.Options{Kind: fault.Disk, CmdTimeout: kernelCmdTimeOut, Aborts: transportAborts{}}
		fc := fs.cfg[dc.Name]
		if fs.isOwn(dc.Name) {
			opts.CmdTimeout = fs.cmdTimeOut
		}
		if opts.Timing, opts.Rules, err = fc.parse(); err != nil {
			return nil, errors.Join(err, closeHandler(h))
		}
		opts.Seed = fc.Seed
		var inner fault.Handler = h
		drive, isTape := h.(*tape.Drive)
		if isTape {
			opts.Kind, inner = fault.Tape, positionedDrive{drive}
		}
		fd, err := fault.New(inner, opts)
		if err != nil {
			return nil, errors.Join(fmt.Errorf("fault: %w", err), closeHandler(h))
		}
		if len(opts.Rules) > 0 || !opts.Timing.IsZero() {
			log.Info("fault injection on", zap.Int("rules", len(opts.Rules)), zap.Stringer("timing", opts.Timing), zap.Uint64("seed", opts.Seed))
		}
		fs.mu.Lock()
		fs.m[dc.Name] = fd
		fs.mu.Unlock()
		if isTape {
			return faultedTape{fd, drive}, nil
		}
		return fd, nil
	}
}

func closeHandler(h target.Handler) error {
	if c, ok := h.(io.Closer); ok {
		return c.Close()
	}
	return nil
}

// get returns the fault wrapper of a device.
func (fs *faults) get(name string) (*fault.Device, error) {
	fs.mu.Lock()
	defer fs.mu.Unlock()
	if d, ok := fs.m[name]; ok {
		return d, nil
	}
	return nil, fmt.Errorf("%w: no device %q", unix.ENODEV, name)
}

// Wire types of the control socket's fault endpoints.
func (fs *faults) list(name string) (faultsJSON, error) {
	d, err := fs.get(name)
	if err != nil {
		return faultsJSON{}, err
	}
	st := d.Stats()
	out := faultsJSON{Name: name, Timing: d.Timing().String(), Rules: []faultRuleJSON{},
		Delayed: st.Delays.Count, Clamped: st.Clamped, Held: st.Held, Interrupted: st.Interrupted}
	for _, r := range d.Injected() {
		out.Rules = append(out.Rules, faultRuleJSON{ID: r.ID, Rule: r.Rule.String(), Action: r.Action,
			Matched: r.Matched, Injected: r.Injected, Spent: r.Spent})
	}
	return out, nil
}

func (fs *faults) add(name, rule string) (uint64, error) {
	d, err := fs.get(name)
	if err != nil {
		return 0, err
	}
	r, err := fault.ParseRule(rule)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	id, err := d.AddRule(r)
	if err != nil {
		return 0, fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	return id, nil
}

func (fs *faults) remove(name string, id uint64) error {
	d, err := fs.get(name)
	if err != nil {
		return err
	}
	if err := d.RemoveRule(id); err != nil {
		return fmt.Errorf("%w: %w", unix.ENOENT, err)
	}
	return nil
}

func (fs *faults) clear(name string) error {
	d, err := fs.get(name)
	if err != nil {
		return err
	}
	d.Clear()
	return nil
}

func (fs *faults) setTiming(name, timing string) error {
	d, err := fs.get(name)
	if err != nil {
		return err
	}
	tm, err := fault.ParseTiming(timing)
	if err != nil {
		return fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	if err := d.SetTiming(tm); err != nil {
		return fmt.Errorf("%w: %w", unix.EINVAL, err)
	}
	return nil
}

// UnmarshalYAML decodes a fault block strictly: an unknown key is an
// error, as everywhere else in the config file.
func (c *FaultConfig) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: fault must be a mapping (seed, timing, rules)", n.Line)
	}
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i]; k.Value {
		case "seed", "timing", "rules":
		default:
			return fmt.Errorf("line %d: field %s not found in fault (want seed, timing, rules)", k.Line, k.Value)
		}
	}
	type plain FaultConfig
	return n.Decode((*plain)(c))
}
