package main

import (
	"context"
	"fmt"
	"os"
	"time"

	godbus "github.com/godbus/dbus/v5"
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
	job, err := systemdJob(os.Getpid())
	switch {
	case err != nil:
		return false, "not a systemd restart (" + err.Error() + ")"
	case job == "":
		return false, "systemd runs no job on the unit"
	case isRestartJob(job):
		return true, "systemd is restarting the unit (job " + job + ")"
	}
	return false, "systemd job " + job
}

// isRestartJob: the systemd job types that start the unit again after
// stopping it. While the stop half runs, a restart job keeps its type.
func isRestartJob(t string) bool {
	switch t {
	case "restart", "try-restart", "reload-or-restart", "reload-or-try-restart":
		return true
	}
	return false
}

// systemdAskTimeout bounds the question to systemd. Generous: the answer
// decides whether the devices survive the stop, a loaded machine (guests
// under I/O) can take seconds to answer, and the unit's TimeoutStopSec
// (45 s) leaves room for it and the drains.
const systemdAskTimeout = 10 * time.Second

// systemdJob is the type of the job systemd runs on the unit of process
// pid ("" if none), asked over the system bus: the unit by PID, its Job
// property, the job's JobType.
func systemdJob(pid int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), systemdAskTimeout)
	defer cancel()
	conn, err := godbus.ConnectSystemBus(godbus.WithContext(ctx))
	if err != nil {
		return "", fmt.Errorf("no system bus: %w", err)
	}
	defer func() { _ = conn.Close() }() // a private connection, closed after one question
	var unit godbus.ObjectPath
	mgr := conn.Object("org.freedesktop.systemd1", "/org/freedesktop/systemd1")
	if err := mgr.CallWithContext(ctx, "org.freedesktop.systemd1.Manager.GetUnitByPID", 0, uint32(pid)).Store(&unit); err != nil {
		return "", fmt.Errorf("no systemd unit: %w", err)
	}
	v, err := conn.Object("org.freedesktop.systemd1", unit).GetProperty("org.freedesktop.systemd1.Unit.Job")
	if err != nil {
		return "", fmt.Errorf("unit %s: %w", unit, err)
	}
	// Job is (uo): the job's id, 0 for none, and its object path.
	job, ok := v.Value().([]any)
	if !ok || len(job) != 2 {
		return "", fmt.Errorf("unit %s: Job is %v", unit, v)
	}
	id, ok1 := job[0].(uint32)
	path, ok2 := job[1].(godbus.ObjectPath)
	if !ok1 || !ok2 {
		return "", fmt.Errorf("unit %s: Job is %v", unit, v)
	}
	if id == 0 {
		return "", nil
	}
	t, err := conn.Object("org.freedesktop.systemd1", path).GetProperty("org.freedesktop.systemd1.Job.JobType")
	if err != nil {
		return "", fmt.Errorf("job %s: %w", path, err)
	}
	s, ok := t.Value().(string)
	if !ok {
		return "", fmt.Errorf("job %s: JobType is %v", path, t)
	}
	return s, nil
}
