package main

import (
	"bytes"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/internal/device"
)

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
	if err := os.WriteFile(p, []byte("devices: [{name: d, type: vdisk, config: size=1M}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := run(t.Context(), []string{"--config", p, "--check-config"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(out.String(), "config ok: 1 devices") {
		t.Errorf("output %q", out.String())
	}

	// The file as the argument after the flags; warnings on stderr.
	if err := os.WriteFile(p, []byte("devices: [{name: l, type: vlibrary, config: 'media=/m;drives=t0'}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var stdout, stderr bytes.Buffer
	if err := run(t.Context(), []string{"--check-config", p}, &stdout, &stderr); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(stdout.String(), "config ok: 1 devices") || !strings.Contains(stderr.String(), "warning: devices[0] l: drives=: t0 is not a device of this config") {
		t.Errorf("stdout %q, stderr %q", &stdout, &stderr)
	}

	// A config that does not pass: exit status 2, the key named.
	if err := os.WriteFile(p, []byte("devices: [{name: d, type: vdisk, config: size=1M}, {name: l, type: vlibrary, config: 'media=/m;drives=d'}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	err := run(t.Context(), []string{"--check-config", p}, &stdout, &stderr)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "drives=: d (devices[0]) is a vdisk, want a vtape") {
		t.Errorf("library with a disk drive: exit %d, %v", exitCode(err), err)
	}
	if err := run(t.Context(), []string{"--check-config", p, "extra"}, &stdout, &stderr); exitCode(err) != 2 {
		t.Errorf("two arguments: exit %d, %v", exitCode(err), err)
	}

	// The web config file is checked as serving reads it: a missing one
	// and one with a bad user hash are refused, a good one passes.
	if err := os.WriteFile(p, []byte("devices: [{name: d, type: vdisk, config: size=1M}]\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	web := filepath.Join(dir, "web.yml")
	err = run(t.Context(), []string{"--web.config.file", web, "--check-config", p}, &stdout, &stderr)
	if exitCode(err) != 2 || !strings.Contains(err.Error(), "--web.config.file "+web) {
		t.Errorf("missing web config: exit %d, %v", exitCode(err), err)
	}
	if err := os.WriteFile(web, []byte("basic_auth_users:\n  u: not-a-bcrypt-hash\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), []string{"--web.config.file", web, "--check-config", p}, &stdout, &stderr); exitCode(err) != 2 {
		t.Errorf("bad web config: exit %d, %v", exitCode(err), err)
	}
	if err := os.WriteFile(web, []byte("basic_auth_users:\n  u: $2y$10$QOauhQNbBCuQDKes6eFzPeMqBSjb7Mr5DUmpZ/VcEd00UAV/LDeSi\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := run(t.Context(), []string{"--web.config.file", web, "--check-config", p}, &stdout, &stderr); err != nil {
		t.Errorf("good web config: %v", err)
	}
}

// A device's own data area reaches the backstore.
func TestDeviceDataAreaReachesSpec(t *testing.T) {
	c, err := config.Parse([]byte("max_data_area_mb: 4\ndevices: [{name: d, type: vdisk, config: size=1M, hw_max_sectors: 16384, max_data_area_mb: 8}]\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := deviceSpec(c, &handlerEnv{}, c.Devices[0], device.Params{}).MaxDataAreaMB; got != 8 {
		t.Errorf("device max_data_area_mb 8 under a config's 4: spec has %d", got)
	}
}

func TestEffectiveCaps(t *testing.T) {
	if _, ok := effectiveCaps(); runtime.GOOS == "linux" && !ok {
		t.Error("effectiveCaps found no CapEff line in /proc/self/status")
	}
}
