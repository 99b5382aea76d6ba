package main

import (
	"bufio"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/vscsid/vscsid/deploy/vm/internal/fio"
	"github.com/vscsid/vscsid/deploy/vm/internal/prom"
)

// commandCounts checks a workload's accounting: that every command the
// tools issued to a device is in vscsid's vscsi_scsi_commands_total,
// between the scrapes before and after. spec has a line per device,
//
//	DEVICE WANT COMMAND[,COMMAND...]
//
// WANT being the commands the tools issued, or "fio": the I/Os, reads and
// writes, of the job named DEVICE in fioPath (fio's JSON output). The
// device's count is the increase of the COMMANDs' series; the BUSY
// answers a fault rule injected (vscsi_fault_injected_total{action=
// "busy"}) are taken off it, each being a command that sd retried and no
// tool issued. It prints "DEVICE want W scsi N busy B" per device, then
// "checked N total T": the counts summed, and every command's. A device
// whose count is not its WANT is an error naming each such device.
func commandCounts(beforePath, afterPath, fioPath string, spec io.Reader, w io.Writer) error {
	before, err := prom.ParseFile(beforePath)
	if err != nil {
		return err
	}
	after, err := prom.ParseFile(afterPath)
	if err != nil {
		return err
	}
	var jobs *fio.Output
	delta := func(name string, labels map[string]string) (float64, error) {
		sel := prom.Selector{Name: name, Labels: labels}
		b, err := before.Select(sel)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", beforePath, err)
		}
		a, err := after.Select(sel)
		if err != nil {
			return 0, fmt.Errorf("%s: %w", afterPath, err)
		}
		return a - b, nil
	}
	const cmds, faults = "vscsi_scsi_commands_total", "vscsi_fault_injected_total"
	var checked float64
	var bad []string
	sc := bufio.NewScanner(spec)
	for sc.Scan() {
		f := strings.Fields(sc.Text())
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		if len(f) != 3 {
			return usageError("command-counts: want DEVICE WANT COMMAND[,COMMAND...], not " + sc.Text())
		}
		dev := f[0]
		var want float64
		if f[1] == "fio" {
			if jobs == nil {
				if fioPath == "" {
					return usageError("command-counts: WANT fio without fio's JSON output")
				}
				o, err := fio.ReadFile(fioPath)
				if err != nil {
					return err
				}
				jobs = &o
			}
			var ok bool
			if want, ok = jobs.IOs(dev); !ok {
				return fmt.Errorf("%s: no fio job %s", fioPath, dev)
			}
		} else if want, err = strconv.ParseFloat(f[1], 64); err != nil {
			return usageError("command-counts: WANT is a number or fio, not " + f[1])
		}
		var got float64
		for c := range strings.SplitSeq(f[2], ",") {
			d, err := delta(cmds, map[string]string{"device": dev, "command": c})
			if err != nil {
				return err
			}
			got += d
		}
		// A scrape without any fault rule has no series of faults.
		busy := after.Sum(faults, map[string]string{"device": dev, "action": "busy"}) -
			before.Sum(faults, map[string]string{"device": dev, "action": "busy"})
		if _, err := fmt.Fprintf(w, "%s want %s scsi %s busy %s\n", dev, formatValue(want), formatValue(got), formatValue(busy)); err != nil {
			return err
		}
		if got-busy != want {
			bad = append(bad, fmt.Sprintf("%s (want %s, %s %s - busy %s)", dev, formatValue(want), f[2], formatValue(got), formatValue(busy)))
		}
		checked += got
	}
	if err := sc.Err(); err != nil {
		return err
	}
	total, err := delta(cmds, nil)
	if err != nil {
		return err
	}
	if _, err := fmt.Fprintf(w, "checked %s total %s\n", formatValue(checked), formatValue(total)); err != nil {
		return err
	}
	if len(bad) > 0 {
		return fmt.Errorf("counts differ: %s", strings.Join(bad, "; "))
	}
	return nil
}
