package config

import (
	"slices"
	"strings"
	"testing"
)

func mustParse(t *testing.T, y string) *Config {
	t.Helper()
	c, err := Parse([]byte(y))
	if err != nil {
		t.Fatalf("Parse: %v\n%s", err, y)
	}
	return c
}

const reloadBase = `cmd_time_out: 10
devices:
  - name: d0
    type: vdisk
    config: "size=1G;mode=fake_rw"
  - name: t0
    type: vtape
    config: "personality=lto8;memory=1"
  - name: gone
    type: vdisk
    config: "size=1G"
`

// PlanReload: devices added and removed by name, fault changes applied in
// place, the rest untouched.
func TestPlanReload(t *testing.T) {
	old := mustParse(t, reloadBase)
	next := mustParse(t, `cmd_time_out: 10
devices:
  - name: d0
    type: vdisk
    config: "size=1G;mode=fake_rw"
    fault:
      timing: "latency=1ms"
  - name: t0
    type: vtape
    config: "personality=lto8;memory=1"
  - name: new
    type: vtape
    config: "personality=lto9;memory=1"
`)
	r, err := PlanReload(old, next)
	if err != nil {
		t.Fatal(err)
	}
	if len(r.Add) != 1 || r.Add[0].Name != "new" || !slices.Equal(r.Remove, []string{"gone"}) || len(r.Faults) != 1 || r.Faults[0].Name != "d0" {
		t.Errorf("plan %+v", r)
	}
	if r, err := PlanReload(old, mustParse(t, reloadBase)); err != nil || !r.IsZero() {
		t.Errorf("the same file: %+v, %v", r, err)
	}
}

// What a running device or daemon cannot take is refused, every change
// named, and nothing planned.
func TestPlanReloadRefuses(t *testing.T) {
	old := mustParse(t, reloadBase)
	next := mustParse(t, strings.NewReplacer(
		"cmd_time_out: 10", "cmd_time_out: 20",
		`"personality=lto8;memory=1"`, `"personality=lto9;memory=1"`,
		`config: "size=1G"`, "config: \"size=1G\"\n    hw_max_sectors: 128\n    fault:\n      seed: 7",
	).Replace(reloadBase))
	r, err := PlanReload(old, next)
	if err == nil || !r.IsZero() {
		t.Fatalf("refused nothing: %+v", r)
	}
	for _, want := range []string{"cmd_time_out changed", "device t0: config changed", "device gone: hw_max_sectors changed", "device gone: fault.seed changed", "running devices stay"} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("the refusal does not say %q:\n%v", want, err)
		}
	}
}
