//go:build linux

package main

import (
	"fmt"
	"io"

	"github.com/vscsid/vscsid/deploy/vm/internal/vmhost"
)

// The shell builders' questions (lib/host.sh), answered from vmhost, the
// one home of each answer.

func checkSuiteCmd(args []string, _ io.Writer) error {
	if len(args) != 1 {
		return usagef("check-suite SUITE")
	}
	if err := vmhost.CheckSuite(args[0]); err != nil {
		return usagef("%v", err)
	}
	return nil
}

func ensureHostToolsCmd(args []string, _ io.Writer) error {
	if len(args) != 0 {
		return usagef("ensure-host-tools takes no arguments")
	}
	return vmhost.EnsureCommands(vmhost.HostTools...)
}

func debianMirrorCmd(args []string, stdout io.Writer) error {
	security := len(args) == 1 && args[0] == "security"
	if len(args) > 1 || len(args) == 1 && !security {
		return usagef("debian-mirror [security]")
	}
	m, err := vmhost.DebianMirror(security)
	if err != nil {
		return err
	}
	if m != "" {
		_, _ = fmt.Fprintln(stdout, m)
	}
	return nil
}
