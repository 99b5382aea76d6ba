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
