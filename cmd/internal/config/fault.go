package config

import (
	"fmt"
	"math"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/vscsid/vscsid/fault"
	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/scsi"
)

// Fault is a device's `fault:` block: fault injection and timing
// (package fault; deploy/fault-rules.example.yaml).
type Fault struct {
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

// Parse checks the block's grammar and returns its timing model and
// rules; binding to the device (command names,
// disk or tape filters) is checked when the device is created.
func (c Fault) Parse() (fault.Timing, []fault.Rule, error) {
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

// KernelCmdTimeOut is TCMU's default attrib/cmd_time_out.
const KernelCmdTimeOut = 30 * time.Second

// Options are c's fault options for a device with the command table
// cmds and attrib/cmd_time_out cmdTimeOut: the one reading of a fault
// block, at attach (the daemon adds the transport's abort reports) and
// by the config check (fault.Check).
func (c Fault) Options(cmds scsi.CommandTable, cmdTimeOut time.Duration) (fault.Options, error) {
	opts := fault.Options{Commands: cmds, CmdTimeout: cmdTimeOut, Seed: c.Seed, Depth: c.Depth}
	var err error
	opts.Timing, opts.Rules, err = c.Parse()
	return opts, err
}

// UnmarshalYAML decodes a fault block strictly: an unknown key is an
// error, as everywhere else in the config file, and the seed is the shared
// number grammar (decimal or 0x hex, 0..2^64-1), which YAML's own integers
// are not (it reads "seed: 1.5" as 1).
func (c *Fault) UnmarshalYAML(n *yaml.Node) error {
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
			return unknownKey(k.Line, k.Value, "config.Fault")
		}
		rest.Content = append(rest.Content, n.Content[i], n.Content[i+1])
	}
	type plain Fault
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
