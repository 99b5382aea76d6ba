package main

import (
	"strings"
	"testing"
	"time"

	"github.com/vscsid/vscsid/cmd/internal/config"
)

// Reload applies a new config to the running daemon: the removed device
// goes (closed), the new one is made, a changed timing model is set in
// place on a device that keeps serving; a refused file changes nothing.
func TestReload(t *testing.T) {
	const base = `devices:
  - name: d0
    type: vdisk
    config: "size=1M;mode=fake_rw"
  - name: gone
    type: vdisk
    config: "size=1M;mode=fake_rw"
`
	old, err := config.Parse([]byte(base))
	if err != nil {
		t.Fatal(err)
	}
	r := &testRegistry{}
	d := r.daemon(t)
	d.cfg = old
	for _, dev := range old.Devices {
		k, _ := config.KindOf(dev.Type)
		p, _ := k.Check(dev.Config)
		if _, err := d.tgt.Create(t.Context(), deviceSpec(old, d.env, dev, p)); err != nil {
			t.Fatal(err)
		}
	}
	d0, _ := d.tgt.Handler("d0")

	const nextFile = `ring_poll: 50us
devices:
  - name: d0
    type: vdisk
    config: "size=1M;mode=fake_rw"
    ring_poll: off
    fault:
      timing: "latency=1ms"
  - name: t0
    type: vtape
    config: "personality=lto8;memory=1"
`
	next, err := config.Parse([]byte(nextFile))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Reload(t.Context(), next); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, s := range r.Devices() {
		names = append(names, s.Info.Name)
	}
	if strings.Join(names, " ") != "d0 t0" {
		t.Errorf("devices after the reload: %v, want d0 t0", names)
	}
	if h, _ := d.tgt.Handler("d0"); h != d0 {
		t.Error("d0 was made anew: a fault change must be applied in place")
	}
	polls := map[string]time.Duration{}
	for _, s := range r.Devices() {
		polls[s.Info.Name] = s.Poll
	}
	if polls["d0"] != 0 || polls["t0"] != 50*time.Microsecond {
		t.Errorf("ring poll windows after the reload: %v; want d0 0 (its own), t0 50µs (the config's)", polls)
	}
	f, err := d.Faults("d0")
	if err != nil || f.Timing != "latency=1ms" {
		t.Errorf("d0's timing after the reload: %q, %v", f.Timing, err)
	}

	// A refused file: the running set and the config stay.
	bad, err := config.Parse([]byte(strings.Replace(nextFile, "lto8", "lto9", 1)))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := d.Reload(t.Context(), bad); err == nil || !strings.Contains(err.Error(), "device t0: config changed") {
		t.Errorf("a changed cfgstring: %v", err)
	}
	if d.cfg != next || len(r.Devices()) != 2 {
		t.Errorf("a refused reload changed the daemon: %d devices", len(r.Devices()))
	}
}
