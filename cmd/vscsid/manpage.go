package main

import (
	"io"
	"strings"

	"github.com/vscsid/vscsid/cmd/internal/control"
	"github.com/vscsid/vscsid/internal/buildinfo"
	"github.com/vscsid/vscsid/internal/clidoc"
)

// writeManPage writes vscsid(8) from the help's parts and the flag
// definitions (vscsid --help-man; the package installs it).
func writeManPage(w io.Writer) error {
	desc, modprobe, _ := strings.Cut(usageDescription, "\n  ")
	var types []clidoc.Item
	for _, k := range kindsByName() {
		types = append(types, clidoc.Item{Heading: k.Subtype, Text: k.Desc, Pre: true})
	}
	p := clidoc.Page{
		Name: "vscsid", Section: 8, Date: buildinfo.Date(), Source: "vscsid " + buildinfo.Version(), Manual: "vscsid manual",
		Summary:  "emulated SCSI tape drives, disks and tape libraries over TCMU",
		Synopsis: strings.Split(usageSynopsis, "\n"),
		Sections: []clidoc.Section{
			{Title: "DESCRIPTION", Items: []clidoc.Item{{Text: desc}, {Text: modprobe, Pre: true}}},
			{Title: "OPTIONS", Items: clidoc.Options(newFlagSet(&options{}))},
			{Title: "DEVICE TYPES", Items: types},
			{Title: "FILES", Items: []clidoc.Item{
				{Tag: "/etc/vscsid/vscsid.yaml", Text: "The config file the systemd unit passes with --config; vscsid --check-config checks it."},
				{Tag: "/var/lib/vscsid", Text: "State: cartridge images, library inventories, saved drive state, disk stores (the unit's StateDirectory)."},
				{Tag: control.DefaultSocket, Text: "The control socket vscsictl talks to (mode 0600)."},
				{Tag: "/run/vscsid/vscsid.lock", Text: "The lock that keeps a second vscsid from starting."},
				{Tag: "/sys/kernel/config/target", Text: "LIO's configfs tree, where vscsid makes its backstores, tcm_loop targets and iSCSI exports."},
			}},
			{Title: "SIGNALS", Items: []clidoc.Item{{Text: usageSignals}}},
			{Title: "EXIT STATUS", Items: []clidoc.Item{{Text: usageExit}}},
			{Title: "EXAMPLES", Items: []clidoc.Item{
				{Tag: "vscsid --check-config /etc/vscsid/vscsid.yaml", Text: "Check a config file without touching the kernel."},
				{Tag: "vscsid", Text: "Serve the built-in default: a disk, a tape drive and a library of two drives (see --print-default-config)."},
				{Tag: "vscsid --config /etc/vscsid/vscsid.yaml --log.level debug", Text: "Serve a config file and log every SCSI command."},
			}},
			{Title: "SEE ALSO", Items: []clidoc.Item{{Text: "vscsictl(1), targetcli(8), st(4), mt(1), mtx(1), lsscsi(8), sg_inq(8)"}}},
		},
	}
	return p.Write(w)
}
