package config

import (
	"fmt"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/target/tcmu"
)

// Poll is a ring poll window (ring_poll): how long a device's loop keeps
// looking at an empty command ring after serving before it blocks
// (tcmu.Device.SetPoll). A duration such as 50us; 0 or off: block at
// once, the default.
type Poll time.Duration

// UnmarshalYAML accepts a duration up to tcmu.MaxPollWindow, 0 or off.
func (p *Poll) UnmarshalYAML(n *yaml.Node) error {
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: ring_poll: want a duration such as 50us (0 or off: no polling)", n.Line)
	}
	if n.Value == "off" { // "0" is a duration
		*p = 0
		return nil
	}
	d, err := cfgstring.Duration(n.Value)
	if err == nil && d > tcmu.MaxPollWindow {
		err = fmt.Errorf("more than %v, which would only burn a CPU", tcmu.MaxPollWindow)
	}
	if err != nil {
		return fmt.Errorf("line %d: ring_poll %q: %w; want a duration from 0 to %v such as 50us (0 or off: no polling)", n.Line, n.Value, err, tcmu.MaxPollWindow)
	}
	*p = Poll(d)
	return nil
}

// PollOf is the poll window of the device named name: its own
// ring_poll, else the config's, which devices other tools make get too.
func (c *Config) PollOf(name string) time.Duration {
	for _, d := range c.Devices {
		if d.Name == name && d.RingPoll != nil {
			return time.Duration(*d.RingPoll)
		}
	}
	return time.Duration(c.RingPoll)
}
