package fault_test

import (
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"go.yaml.in/yaml/v3"

	"github.com/vscsid/vscsid/fault"
)

// TestExampleFile keeps deploy/fault-rules.example.yaml valid: every rule
// and timing of its devices installs on a device of the right kind, and
// every rule in its scsi_debug table parses.
func TestExampleFile(t *testing.T) {
	data, err := os.ReadFile("../deploy/fault-rules.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	var cfg struct {
		Devices []struct {
			Name  string
			Type  string
			Fault struct {
				Seed   uint64
				Timing string
				Rules  []string
			}
		}
	}
	if err := yaml.Unmarshal(data, &cfg); err != nil {
		t.Fatal(err)
	}
	if len(cfg.Devices) < 5 {
		t.Fatalf("%d devices", len(cfg.Devices))
	}
	for _, dev := range cfg.Devices {
		o := fault.Options{Commands: diskCmds, Seed: dev.Fault.Seed, CmdTimeout: 30 * time.Second}
		var h fault.Handler = &recorder{}
		if dev.Type == "vtape" {
			o.Commands, h = tapeCmds, &positioned{}
		}
		tm, err := fault.ParseTiming(dev.Fault.Timing)
		if err != nil {
			t.Errorf("%s: timing: %v", dev.Name, err)
		}
		o.Timing = tm
		for _, s := range dev.Fault.Rules {
			r, err := fault.ParseRule(s)
			if err != nil {
				t.Errorf("%s: rule %q: %v", dev.Name, s, err)
				continue
			}
			o.Rules = append(o.Rules, r)
		}
		if _, err := fault.New(h, o); err != nil {
			t.Errorf("%s: %v", dev.Name, err)
		}
	}
	// The right-hand column of the comment tables.
	row := regexp.MustCompile(`^#\s.{43}\s{2}(\S+)`)
	n := 0
	for _, line := range strings.Split(string(data), "\n") {
		m := row.FindStringSubmatch(line)
		if m == nil || !strings.Contains(m[1], "=") && m[1] != "busy" {
			continue
		}
		s, partial := strings.CutSuffix(m[1], ";...")
		if partial {
			s += ";busy"
		}
		_, rerr := fault.ParseRule(s)
		_, terr := fault.ParseTiming(s)
		if rerr != nil && terr != nil {
			t.Errorf("example %q is neither a rule (%v) nor a timing (%v)", s, rerr, terr)
		}
		n++
	}
	if n < 12 {
		t.Errorf("found %d examples in the scsi_debug tables", n)
	}
}
