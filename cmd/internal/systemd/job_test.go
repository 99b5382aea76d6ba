package systemd_test

import (
	"testing"

	"github.com/vscsid/vscsid/cmd/internal/systemd"
)

func TestIsRestartJob(t *testing.T) {
	for _, j := range []string{"restart", "try-restart", "reload-or-restart", "reload-or-try-restart"} {
		if !systemd.IsRestartJob(j) {
			t.Errorf("job %s is not taken for a restart", j)
		}
	}
	for _, j := range []string{"stop", "start", "reload", "verify-active", ""} {
		if systemd.IsRestartJob(j) {
			t.Errorf("job %q is taken for a restart", j)
		}
	}
}
