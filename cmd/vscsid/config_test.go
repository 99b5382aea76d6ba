package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDefaultConfigIsValid(t *testing.T) {
	c, err := loadConfig("")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, d := range c.Devices {
		types = append(types, d.Type)
	}
	if got := strings.Join(types, ","); got != "vdisk,vtape" {
		t.Errorf("default devices = %s, want a vdisk and a vtape", got)
	}
}

func TestDeployExampleIsValid(t *testing.T) {
	p := filepath.Join("..", "..", "deploy", "vscsid.yaml")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("example config missing: %v", err)
	}
	if _, err := loadConfig(p); err != nil {
		t.Fatal(err)
	}
}

func TestConfigMapForm(t *testing.T) {
	c, err := parseConfig([]byte(`
devices:
  - name: d0
    type: vdisk
    config:
      size: 64MiB
      lbs: 4096
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Devices[0].Config; got != "size=64MiB;lbs=4096" {
		t.Errorf("config = %q", got)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown top key", "devcies: []", "field devcies not found"},
		{"unknown device key", "devices: [{name: a, type: vdisk, config: size=1M, colour: red}]", "field colour not found"},
		{"bad type", "devices: [{name: a, type: vcd, config: x=1}]", `type "vcd": want one of vdisk, vtape`},
		{"bad name", "devices: [{name: 'a/b', type: vdisk, config: size=1M}]", `name "a/b"`},
		{"dup name", "devices: [{name: a, type: vdisk, config: size=1M}, {name: a, type: vdisk, config: size=1M}]", "used twice"},
		{"comma", "devices: [{name: a, type: vdisk, config: 'size=1M,lbs=512'}]", "commas"},
		{"disk without size", "devices: [{name: a, type: vdisk, config: lbs=512}]", "size= (or blocks=) is required"},
		{"bad disk key", "devices: [{name: a, type: vdisk, config: 'size=1M;lbz=512'}]", "lbz"},
		{"bad tape key", "devices: [{name: t, type: vtape, config: 'memory=1;personality=lto99'}]", "lto99"},
		{"negative timeout", "cmd_time_out: -1", "cmd_time_out"},
		{"empty", "", "empty config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := parseConfig([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

func TestHelpListsDeviceTypes(t *testing.T) {
	var out bytes.Buffer
	err := run(t.Context(), []string{"--help"}, &out, &out)
	if err == nil {
		t.Fatal("--help returned nil error")
	}
	for _, want := range []string{"--config", "--web.listen-address", "vdisk", "vtape", "personality"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("--help does not mention %q", want)
		}
	}
}

func TestCheckConfig(t *testing.T) {
	dir := t.TempDir()
	p := filepath.Join(dir, "c.yaml")
	os.WriteFile(p, []byte("devices: [{name: d, type: vdisk, config: size=1M}]\n"), 0o644)
	var out bytes.Buffer
	if err := run(t.Context(), []string{"--config", p, "--check-config"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "config ok: 1 devices") {
		t.Errorf("output %q", out.String())
	}
}
