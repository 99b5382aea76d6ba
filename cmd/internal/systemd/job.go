package systemd

import (
	"context"
	"fmt"
	"time"

	godbus "github.com/godbus/dbus/v5"
)

// AskTimeout bounds a question to systemd over D-Bus. Generous: the
// daemon asks as it stops, the answer decides whether its devices survive
// the stop, and a loaded machine (guests under I/O) can take seconds to
// answer; the unit's TimeoutStopSec (45 s) leaves room for it and the
// drains.
const AskTimeout = 10 * time.Second

// Job is the type of the job systemd runs on the unit of process pid (""
// if none), asked over the system bus: the unit by PID, its Job property,
// the job's JobType ("restart", "stop", ...).
func Job(pid int) (string, error) {
	ctx, cancel := context.WithTimeout(context.Background(), AskTimeout)
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

// IsRestartJob reports whether t is a job type that starts the unit again
// after stopping it. While the stop half runs, a restart job keeps its
// type.
func IsRestartJob(t string) bool {
	switch t {
	case "restart", "try-restart", "reload-or-restart", "reload-or-try-restart":
		return true
	}
	return false
}
