package main

import (
	"os"

	"github.com/vscsid/vscsid/cmd/internal/systemd"
)

// What a stop does to the devices (--on-stop): remove them, or hand them
// over to the next daemon in place (target.Target.HandOver), so that a
// restart is a pause to the initiator. auto hands over when systemd is
// restarting the unit (systemctl restart, try-restart, a package
// upgrade's restart) and removes otherwise (systemctl stop, a removal, a
// signal from outside systemd).
const (
	onStopAuto   = "auto"
	onStopRemove = "remove"
	onStopKeep   = "keep"
)

var onStopModes = []string{onStopAuto, onStopRemove, onStopKeep}

// handOverOnStop decides, as the daemon stops, whether it hands its
// devices over, and says why.
func handOverOnStop(mode string) (bool, string) {
	switch mode {
	case onStopKeep:
		return true, "--on-stop=keep"
	case onStopRemove:
		return false, "--on-stop=remove"
	}
	job, err := systemd.Job(os.Getpid())
	switch {
	case err != nil:
		return false, "not a systemd restart (" + err.Error() + ")"
	case job == "":
		return false, "systemd runs no job on the unit"
	case systemd.IsRestartJob(job):
		return true, "systemd is restarting the unit (job " + job + ")"
	}
	return false, "systemd job " + job
}
