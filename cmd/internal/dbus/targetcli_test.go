package dbus_test

import (
	"context"
	"encoding/json"
	"os/exec"
	"reflect"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"
)

// python returns a Python 3 with the dbus (dbus-python) and gi (PyGObject)
// modules targetcli uses, or skips: they are not part of the build
// requirements (Debian: python3-dbus python3-gi).
func python(t *testing.T) string {
	t.Helper()
	for _, p := range []string{"/usr/bin/python3", "python3"} {
		if exec.Command(p, "-c", "import dbus, gi; gi.require_version('Gio', '2.0')").Run() == nil {
			return p
		}
	}
	t.Skip("no python3 with the dbus and gi modules (apt-get install -y python3-dbus python3-gi)")
	return ""
}

// TestTargetcliClients drives the Service with targetcli's own client
// libraries, in the way ui_backstore.py uses them: the end-to-end check
// that targetcli lists user:vtape and user:vdisk, prints their ConfigDesc,
// and gets CheckConfig and ChangeMedium answers it can unpack.
func TestTargetcliClients(t *testing.T) {
	py := python(t)
	b := startBus(t, openPolicy)
	newService(t, b.connect(t), handlers(&recorder{}, &recorder{}), zaptest.NewLogger(t))

	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	out, err := exec.CommandContext(ctx, py, "testdata/targetcli_client.py", b.addr).CombinedOutput()
	if err != nil {
		t.Fatalf("targetcli_client.py: %v\n%s", err, out)
	}
	var got map[string]map[string]map[string]any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatalf("targetcli_client.py output: %v\n%s", err, out)
	}
	tape := map[string]any{
		"desc":   tapeDesc,
		"check":  []any{true, "success"},
		"change": []any{float64(0), "success"},
	}
	disk := map[string]any{
		"desc":   diskDesc,
		"check":  []any{false, `size: "huge" is not a size (want e.g. 64M, 1G)`},
		"change": []any{float64(-95), "user:vdisk does not support changing the medium"},
	}
	want := map[string]map[string]map[string]any{
		"dbus-python": {"vtape": tape, "vdisk": disk},
		"gio":         {"vtape": with(tape, "cached_desc", tapeDesc), "vdisk": with(disk, "cached_desc", diskDesc)},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("targetcli clients saw\n%v\nwant\n%v", got, want)
	}
}

func with(m map[string]any, k string, v any) map[string]any {
	c := map[string]any{k: v}
	for kk, vv := range m {
		c[kk] = vv
	}
	return c
}
