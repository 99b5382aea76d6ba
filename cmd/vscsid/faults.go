package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"math"
	"time"

	"go.uber.org/zap"
	"gopkg.in/yaml.v3"

	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target"
	"github.com/vscsid/vscsid/target/tcmu"
)

// FaultConfig is a device's `fault:` block: fault injection and timing
// (package fault; deploy/fault-rules.example.yaml).
type FaultConfig struct {
	// Seed seeds prob= draws and timing jitter.
	Seed uint64 `yaml:"seed"`
	// Timing is one timing model (fault.TimingDesc); "" for none.
	Timing string `yaml:"timing"`
	// Rules are tried in order (fault.RuleDesc).
	Rules []string `yaml:"rules"`
	// Depth is how many commands a disk serves at once, their delays
	// overlapping (fault.Options.Depth); 0 and 1: one at a time.
	Depth int `yaml:"depth"`
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

// kernelCmdTimeOut is TCMU's default attrib/cmd_time_out.
const kernelCmdTimeOut = 30 * time.Second

// transportAborts lets held commands end on ABORT TASK (fault.Options.Aborts).
type transportAborts struct{}

func (transportAborts) CanReportAborts(ctx context.Context) bool { return tcmu.CanReportAborts(ctx) }
func (transportAborts) Aborted(ctx context.Context) bool         { return tcmu.Aborted(ctx) }

// withFaults puts the handlers of kind k behind a fault.Device with fc's
// rules and timing (wrapFaults), so that faults can be added at runtime
// (vscsictl fault) to any device; without rules or timing it costs one
// atomic load per command. The fault.Device forwards the transport's
// optional interfaces (LUN reset, RECONFIG) and exposes the handler with
// Unwrap (scsi.As finds the disk or drive behind it).
func withFaults(k device.Kind, env *handlerEnv, fc FaultConfig, cmdTimeOut time.Duration) target.Factory {
	return func(dc target.DeviceConfig, log *zap.Logger) (target.Handler, error) {
		h, err := k.New(device.Config{Name: dc.Name, Config: dc.Config, Size: dc.Size}, env, log)
		if err != nil {
			return nil, err
		}
		fd, err := wrapFaults(h, k.Commands, fc, cmdTimeOut)
		if err != nil {
			return nil, errors.Join(err, closeHandler(h))
		}
		if t := fd.Timing(); len(fc.Rules) > 0 || !t.IsZero() {
			log.Info("fault injection on", zap.Int("rules", len(fc.Rules)), zap.Stringer("timing", t), zap.Uint64("seed", fc.Seed))
		}
		return fd, nil
	}
}

// wrapFaults binds fc to h, a handler with the command table cmds whose
// device has attrib/cmd_time_out cmdTimeOut (delays are capped below it).
func wrapFaults(h target.Handler, cmds scsi.CommandTable, fc FaultConfig, cmdTimeOut time.Duration) (*fault.Device, error) {
	opts, err := fc.options(cmds, cmdTimeOut)
	if err != nil {
		return nil, err
	}
	fd, err := fault.New(h, opts)
	if err != nil {
		return nil, fmt.Errorf("fault: %w", err)
	}
	return fd, nil
}

// options are c's fault options for a device with the command table
// cmds and attrib/cmd_time_out cmdTimeOut: the one reading of a fault
// block, at attach (wrapFaults) and by --check-config (fault.Check).
func (c FaultConfig) options(cmds scsi.CommandTable, cmdTimeOut time.Duration) (fault.Options, error) {
	opts := fault.Options{Commands: cmds, CmdTimeout: cmdTimeOut, Aborts: transportAborts{}, Seed: c.Seed, Depth: c.Depth}
	var err error
	opts.Timing, opts.Rules, err = c.parse()
	return opts, err
}

func closeHandler(h target.Handler) error {
	if c, ok := scsi.As[io.Closer](h); ok {
		return c.Close()
	}
	return nil
}

// UnmarshalYAML decodes a fault block strictly: an unknown key is an
// error, as everywhere else in the config file, and the seed is the shared
// number grammar (decimal or 0x hex, 0..2^64-1), which YAML's own integers
// are not (it reads "seed: 1.5" as 1).
func (c *FaultConfig) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.MappingNode {
		return fmt.Errorf("line %d: fault must be a mapping (seed, timing, rules, depth)", n.Line)
	}
	rest := *n
	rest.Content = nil
	var seed *yaml.Node
	for i := 0; i+1 < len(n.Content); i += 2 {
		switch k := n.Content[i]; k.Value {
		case "seed":
			seed = n.Content[i+1]
			continue
		case "timing", "rules", "depth":
		default:
			return fmt.Errorf("line %d: field %s not found in fault (want seed, timing, rules, depth)", k.Line, k.Value)
		}
		rest.Content = append(rest.Content, n.Content[i], n.Content[i+1])
	}
	type plain FaultConfig
	if err := rest.Decode((*plain)(c)); err != nil {
		return err
	}
	if seed != nil {
		v, err := cfgstring.Uint(seed.Value, 0, math.MaxUint64)
		if err != nil {
			return fmt.Errorf("line %d: fault seed: %w", seed.Line, err)
		}
		c.Seed = v
	}
	return nil
}
