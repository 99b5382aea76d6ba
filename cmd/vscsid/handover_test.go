package main

import "testing"

// --on-stop: keep and remove decide alone; auto hands over only when
// systemd runs a restart job on the unit, which a test process is not in.
func TestHandOverOnStop(t *testing.T) {
	if keep, why := handOverOnStop(onStopKeep); !keep || why == "" {
		t.Errorf("keep: %v %q", keep, why)
	}
	if keep, why := handOverOnStop(onStopRemove); keep || why == "" {
		t.Errorf("remove: %v %q", keep, why)
	}
	if keep, why := handOverOnStop(onStopAuto); keep || why == "" {
		t.Errorf("auto outside a systemd restart: %v %q", keep, why)
	}
}
