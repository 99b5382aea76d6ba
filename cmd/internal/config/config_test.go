package config

import (
	"bytes"
	"context"
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/sys/unix"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

func TestDefaultConfigIsValid(t *testing.T) {
	c, err := Load(context.Background(), "")
	if err != nil {
		t.Fatal(err)
	}
	var types []string
	for _, d := range c.Devices {
		types = append(types, d.Type)
	}
	if got := strings.Join(types, ","); got != "vdisk,vtape,vtape,vtape,vlibrary" {
		t.Errorf("default devices = %s, want a vdisk, a vtape and a library of two vtapes", got)
	}
}

func TestDeployExampleIsValid(t *testing.T) {
	p := filepath.Join("..", "..", "..", "deploy", "vscsid.yaml")
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("example config missing: %v", err)
	}
	if _, err := Load(context.Background(), p); err != nil {
		t.Fatal(err)
	}
}

func TestConfigMapForm(t *testing.T) {
	c, err := Parse([]byte(`
devices:
  - name: d0
    type: vdisk
    config:
      size: 64MiB
      lbs: 4096
`))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Devices[0].Config; got != "size=64MiB;lbs=4096" {
		t.Errorf("config = %q", got)
	}
}

func TestConfigErrors(t *testing.T) {
	for _, tc := range []struct{ name, yaml, want string }{
		{"unknown top key", "devcies: []", `line 1: unknown key "devcies" in the config (did you mean "devices"?); its keys: cmd_time_out, max_data_area_mb, tmr_notification, ring_poll, iscsi, devices`},
		{"top key typo", "cmd_timeout: 3", `unknown key "cmd_timeout" in the config (did you mean "cmd_time_out"?)`},
		{"unknown device key", "devices: [{name: a, type: vdisk, config: size=1M, colour: red}]", `unknown key "colour" in a device; its keys: name, type, config, hw_max_sectors`},
		{"library drive is a disk", "devices: [{name: d, type: vdisk, config: size=1M}, {name: l, type: vlibrary, config: 'media=/m;drives=d'}]", "devices[1] l: drives=: d (devices[0]) is a vdisk, want a vtape"},
		{"drive in two libraries", "devices: [{name: t, type: vtape, config: media=/m}, {name: l, type: vlibrary, config: 'media=/m;drives=t'}, {name: l2, type: vlibrary, config: 'media=/n;drives=t'}]", "devices[2] l2: drives=: t is already in the drives= of l (devices[1])"},
		{"library drive in memory", "devices: [{name: t, type: vtape, config: memory=1}, {name: l, type: vlibrary, config: 'media=/m;drives=t'}]", "devices[1] l: drives=: t (devices[0]) keeps its cartridges in memory (memory=1), not in this device's media=/m: give it media=/m"},
		{"library drive in another media directory", "devices: [{name: t, type: vtape, config: media=/n}, {name: l, type: vlibrary, config: 'media=/m;drives=t'}]", "keeps its cartridges in /n, not in this device's media=/m"},
		{"two drives on one cartridge", "devices: [{name: a, type: vtape, config: 'media=/m;barcode=A00001L8'}, {name: b, type: vtape, config: 'media=/m/;barcode=A00001L8'}]", "devices[1] b: cartridge /m/A00001L8 is also a's (devices[0]): two devices cannot share it"},
		{"two libraries on one media directory", "devices: [{name: l, type: vlibrary, config: 'media=/m'}, {name: l2, type: vlibrary, config: 'media=/m/.'}]", "devices[1] l2: library media directory /m is also l's (devices[0])"},
		{"one serial on a disk and a drive", "devices: [{name: d, type: vdisk, config: 'size=1M;serial=S1'}, {name: t, type: vtape, config: 'memory=1;serial=S1'}]", "devices[1] t: serial number S1 is also d's (devices[0])"},
		{"dev_config over the kernel's 255 bytes", "devices: [{name: d, type: vdisk, config: 'size=1M;vendor=" + strings.Repeat("v", 8) + ";product=" + strings.Repeat("p", 16) + ";serial=" + strings.Repeat("s", 64) + ";rev=r1;lbs=512;opt_blks=0;max_blks=0;opt_gran=1;wce=1;rotation=1;dsense=0;max_ws_blks=0;form_factor=none;mode=store;store_size=1048576;wp=0;naa=0x5001405000000001'}]", "the kernel takes at most 255"},
		{"bad type", "devices: [{name: a, type: vcd, config: x=1}]", `type "vcd": want one of vdisk, vlibrary, vtape`},
		{"bad name", "devices: [{name: 'a/b', type: vdisk, config: size=1M}]", `name: "a/b" is not a device name`},
		{"dup name", "devices: [{name: a, type: vdisk, config: size=1M}, {name: a, type: vdisk, config: size=1M}]", "used twice"},
		{"comma", "devices: [{name: a, type: vdisk, config: 'size=1M,lbs=512'}]", "',' and ':' are not allowed"},
		{"disk without size", "devices: [{name: a, type: vdisk, config: lbs=512}]", "size= (or blocks=) is required"},
		{"bad disk key", "devices: [{name: a, type: vdisk, config: 'size=1M;lbz=512'}]", "lbz"},
		{"bad tape key", "devices: [{name: t, type: vtape, config: 'memory=1;personality=lto99'}]", "lto99"},
		{"library without media", "devices: [{name: l, type: vlibrary, config: slots=4}]", "media: required"},
		{"library lba rule", "devices: [{name: l, type: vlibrary, config: media=/m, fault: {rules: ['lba=1;busy']}}]", "this is a changer (filter with op=)"},
		{"library read rule", "devices: [{name: l, type: vlibrary, config: media=/m, fault: {rules: ['op=read;busy']}}]", "a changer has no read, write or verify"},
		{"library unknown op", "devices: [{name: l, type: vlibrary, config: media=/m, fault: {rules: ['op=move_medum;busy']}}]", "op=move_medum: the changer has no command of that name"},
		{"mapping value smuggles a key", "devices: [{name: a, type: vdisk, config: {size: '1M;wp=1'}}]", `line 1: config key "size": value "1M;wp=1" has ';' or '='`},
		{"mapping key smuggles a key", "devices: [{name: a, type: vdisk, config: {'wp=1;size': 1M}}]", `config key "wp=1;size": ';' and '=' separate keys and values`},
		{"negative timeout", "cmd_time_out: -1", "cmd_time_out"},
		{"empty", "", "empty config"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
}

// A library drive the config does not make may come from targetcli: a
// warning naming it, not an error.
func TestLibraryDriveNotInConfigWarns(t *testing.T) {
	c, err := Parse([]byte("devices: [{name: t, type: vtape, config: media=/m}, {name: l, type: vlibrary, config: 'media=/m;drives=t+tc0'}]"))
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Warnings) != 1 || !strings.Contains(c.Warnings[0], "devices[1] l: drives=: tc0 is not a device of this config; it must be made (with targetcli, type user:vtape)") {
		t.Errorf("warnings %q", c.Warnings)
	}
}

// TestLibraryFaultsCheckedWithoutMedia: a library's fault block binds to
// its command names without opening (or creating) its media directory.
func TestLibraryFaultsCheckedWithoutMedia(t *testing.T) {
	media := t.TempDir() + "/none"
	y := "devices: [{name: l, type: vlibrary, config: 'media=" + media + "', fault: {rules: ['op=move_medium;count=1;sense=hardware_error/0x3b/0x0d', 'op=read_element_status;delay=5ms']}}]"
	if _, err := Parse([]byte(y)); err != nil {
		t.Fatal(err)
	}
	if _, err := os.Stat(media); !errors.Is(err, fs.ErrNotExist) {
		t.Errorf("checking the config touched the media directory: %v", err)
	}
}

// TestConfigFileRefuses covers the YAML cases the hostile-input run found
// accepted, and the fault blocks that passed --check-config but failed at
// attach (the check now binds the rules as attach does).
func TestConfigFileRefuses(t *testing.T) {
	const disk0 = "devices:\n  - name: d\n    type: vdisk\n    config: size=1M\n"
	const tape0 = "devices:\n  - name: t\n    type: vtape\n    config: memory=1\n"
	for _, tc := range []struct{ name, yaml, want string }{
		{"second document", disk0 + "---\ncmd_time_out: 5\n", "more than one YAML document"},
		{"fractional seed", disk0 + "    fault: {seed: 1.5}\n", `fault seed: "1.5" is not a number`},
		{"seed past 2^64", disk0 + "    fault: {seed: 18446744073709551616}\n", "fault seed: \"18446744073709551616\" is out of range 0..18446744073709551615"},
		{"exponent seed", disk0 + "    fault: {seed: 1e3}\n", "fault seed"},
		{"cmd_time_out too long", "cmd_time_out: 86401\n" + disk0, "cmd_time_out 86401: want 0..86400"},
		{"max_data_area_mb too big", "max_data_area_mb: 2049\n" + disk0, "max_data_area_mb 2049: want 0..2048"},
		{"hw_max_sectors too big", disk0 + "    hw_max_sectors: 4194305\n", "hw_max_sectors 4194305: want 0..4194304"},
		{"device data area too big", disk0 + "    max_data_area_mb: 2049\n", "max_data_area_mb 2049: want 0..2048 (0 = the config's"},
		{"command past the data area", "max_data_area_mb: 4\n" + disk0 + "    hw_max_sectors: 16384\n", "hw_max_sectors 16384 (8192 KiB per command) does not fit the 4 MiB data area: raise max_data_area_mb (in the device or at the top) to at least 8"},
		{"command past the device's data area", disk0 + "    hw_max_sectors: 16385\n    max_data_area_mb: 8\n", "does not fit the 8 MiB data area: raise max_data_area_mb (in the device or at the top) to at least 9"},
		{"misspelt command", disk0 + "    fault: {rules: ['op=reed;busy']}\n", "op=reed: the disk has no command of that name"},
		{"tape position on a disk", disk0 + "    fault: {rules: ['block=5;sense=medium_error']}\n", "block=, file= and partition= are tape positions"},
		{"tape action on a disk", disk0 + "    fault: {rules: ['early_warning_after=1M']}\n", "early_warning_after= is a tape action"},
		{"tape model on a disk", disk0 + "    fault: {timing: model=dds}\n", "a tape drive model on a disk"},
		{"disk range on a tape", tape0 + "    fault: {rules: ['lba=5;busy']}\n", "lba= is a disk range"},
		{"disk command on a tape", tape0 + "    fault: {rules: ['op=read_capacity_16;busy']}\n", "op=read_capacity_16: the tape has no command"},
		{"bad barcode", "devices: [{name: t, type: vtape, config: 'memory=1;barcode=backup-2024.01'}]", "want 1 to 8 characters A-Z 0-9"},
		{"ring_poll not a duration", "ring_poll: 50\n" + disk0, `line 1: ring_poll "50": want a duration such as 500us, 2ms or 1.5s; want a duration from 0 to 1s such as 50us (0 or off: no polling)`},
		{"ring_poll too long", disk0 + "    ring_poll: 2s\n", `line 5: ring_poll "2s": more than 1s, which would only burn a CPU`},
		{"ring_poll negative", disk0 + "    ring_poll: -1us\n", `ring_poll "-1us": negative`},
		{"ring_poll a list", "ring_poll: [1ms]\n" + disk0, "line 1: ring_poll: want a duration such as 50us"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, err := Parse([]byte(tc.yaml))
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("err = %v, want it to mention %q", err, tc.want)
			}
		})
	}
	// What the daemon accepts at attach passes too.
	for _, ok := range []string{
		disk0 + "    fault: {seed: 0x10, rules: ['op=read;lba=0x1234+10;sense=medium_error', 'op=read_capacity_16;busy']}\n",
		disk0 + "    fault: {seed: 18446744073709551615, timing: 'rate=100MiB/s'}\n",
		tape0 + "    fault: {rules: ['op=read;block=500+20;sense=medium_error', 'early_warning_after=1M'], timing: model=dds}\n",
		"cmd_time_out: 86400\nmax_data_area_mb: 2048\n" + disk0 + "    hw_max_sectors: 4194304\n",
		"ring_poll: 1s\n" + disk0 + "    ring_poll: 0\n",
	} {
		if _, err := Parse([]byte(ok)); err != nil {
			t.Errorf("%s: %v", ok, err)
		}
	}
	// A device's own data area wins over the config's.
	c, err := Parse([]byte("max_data_area_mb: 4\n" + disk0 + "    hw_max_sectors: 16384\n    max_data_area_mb: 8\n"))
	if err != nil {
		t.Fatal(err)
	}
	if got := c.Devices[0].DataAreaMB(c); got != 8 {
		t.Errorf("device max_data_area_mb 8 under a config's 4: %d", got)
	}
	c, err = Parse([]byte(disk0 + "    fault: {seed: 010}\n"))
	if err != nil || c.Devices[0].Fault.Seed != 10 {
		t.Errorf("seed 010: %+v, %v; want 10 (decimal, never octal)", c, err)
	}
}

// TestCapacityAndSizeAgree: a vtape's capacity= and a vdisk's size= read
// every spelling the same way (capacity=64MiB used to be refused).
func TestCapacityAndSizeAgree(t *testing.T) {
	for _, s := range []string{"64MiB", "64M", "64m", "65536K", "67108864", "64mib", "0.0625GiB", "64MB", "1.5G", "2GB"} {
		dc, derr := disk.ParseConfig("size=" + s)
		tc, terr := tape.ParseConfig("memory=1;capacity=" + s)
		if derr != nil || terr != nil || dc.Size != uint64(tc.Capacity) {
			t.Errorf("%s: vdisk size %d (%v), vtape capacity %d (%v)", s, dc.Size, derr, tc.Capacity, terr)
		}
	}
	for _, s := range []string{"64XB", "0x4000000", "64 M B", "-64M"} {
		_, derr := disk.ParseConfig("size=" + s)
		_, terr := tape.ParseConfig("memory=1;capacity=" + s)
		if derr == nil || terr == nil {
			t.Errorf("%s: vdisk %v, vtape %v: want both refused", s, derr, terr)
		}
	}
}

// TestCheckConfigBarcodeAgreesWithLibrary: the config check refuses
// exactly the barcodes the cartridge library refuses at start.
func TestCheckConfigBarcodeAgreesWithLibrary(t *testing.T) {
	for _, b := range []string{"TAPE01L9", "DDS001", "A", "00000001", "backup-2024.01", "tape01", "ABCDEFGHI", "A.B", "A_B", "..", "A B"} {
		_, cfgErr := Parse([]byte("devices: [{name: t, type: vtape, config: 'memory=1;barcode=" + b + "'}]"))
		libErr := cartridge.ValidateBarcode(b)
		if (cfgErr == nil) != (libErr == nil) {
			t.Errorf("barcode %q: config check %v, cartridge library %v", b, cfgErr, libErr)
		}
	}
}

// A config file is read up to 1 MiB: /dev/zero and other endless or huge
// files are refused with a message, not read until memory runs out.
func TestConfigSizeLimit(t *testing.T) {
	if _, err := Load(context.Background(), "/dev/zero"); err == nil || !strings.Contains(err.Error(), "larger than 1048576 bytes") {
		t.Errorf("/dev/zero: %v", err)
	}
	p := filepath.Join(t.TempDir(), "big.yaml")
	if err := os.WriteFile(p, append([]byte("devices: []\n#"), bytes.Repeat([]byte("x"), maxConfigSize)...), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(context.Background(), p); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("a config of over 1 MiB: %v", err)
	}
}

// A config path that blocks (a FIFO nobody opens for writing) does not
// make vscsid deaf to SIGTERM: the done context ends the wait.
func TestConfigFromABlockedFIFOStopsOnSignal(t *testing.T) {
	p := filepath.Join(t.TempDir(), "fifo")
	if err := unix.Mkfifo(p, 0o600); err != nil {
		t.Skip("no FIFOs here:", err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { _, err := Load(ctx, p); done <- err }()
	select {
	case err := <-done:
		t.Fatalf("loadConfig returned before anyone wrote the FIFO: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	cancel()
	select {
	case err := <-done:
		if !errors.Is(err, context.Canceled) {
			t.Fatalf("loadConfig: %v, want context.Canceled", err)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("cancelling did not end the blocked read")
	}
}

func TestISCSIExportConfig(t *testing.T) {
	const top = `iscsi:
  portals: ["0.0.0.0:3260"]
  acls:
    - initiator: iqn.1993-08.org.debian:01:host1
      chap_user: vscsi
      chap_password: secret-12345
devices:
`
	c, err := Parse([]byte(top + `  - name: Disk_0
    type: vdisk
    config: "size=1GiB"
    export: [loopback, iscsi]
  - name: t0
    type: vtape
    config: "memory=1"
    export: [iscsi]
    iscsi:
      iqn: iqn.2026-12.com.example:drive
      portals: ["127.0.0.1:3261"]
  - name: d1
    type: vdisk
    config: "size=1GiB"
`))
	if err != nil {
		t.Fatal(err)
	}
	lb, e, err := c.Devices[0].Exports(c)
	if err != nil || !lb || e == nil || e.IQN != DefaultIQNPrefix+":disk-0" || !slices.Equal(e.Portals, []string{"0.0.0.0:3260"}) ||
		len(e.ACLs) != 1 || e.ACLs[0].UserID != "vscsi" || e.ACLs[0].Password != "secret-12345" {
		t.Errorf("Disk_0: loopback %v, %+v, %v", lb, e, err)
	}
	lb, e, err = c.Devices[1].Exports(c)
	if err != nil || lb || e == nil || e.IQN != "iqn.2026-12.com.example:drive" || !slices.Equal(e.Portals, []string{"127.0.0.1:3261"}) || len(e.ACLs) != 1 {
		t.Errorf("t0: loopback %v, %+v, %v", lb, e, err)
	}
	if lb, e, err := c.Devices[2].Exports(c); err != nil || !lb || e != nil {
		t.Errorf("d1: loopback %v, %+v, %v", lb, e, err)
	}
	for _, tc := range []struct{ cfg, want string }{
		{"devices:\n  - {name: d, type: vdisk, config: size=1M, export: [iscsi]}\n", "no ACL"},
		{"devices:\n  - {name: d, type: vdisk, config: size=1M, export: [fc]}\n", `export "fc": want a list of loopback`},
		{"devices:\n  - {name: d, type: vdisk, config: size=1M, export: [iscsi, iscsi]}\n", "lists iscsi twice"},
		{"devices:\n  - {name: d, type: vdisk, config: size=1M, iscsi: {iqn: iqn.2026-12.x:y}}\n", "export does not list iscsi"},
		{top + "  - {name: d, type: vdisk, config: size=1M}\n", "no device lists iscsi"},
		{top + "  - {name: a_b, type: vdisk, config: size=1M, export: [iscsi]}\n  - {name: a-b, type: vdisk, config: size=1M, export: [iscsi]}\n", "is also a_b's"},
		{"iscsi: {iqn: iqn.2026-12.x:y}\n" + "devices:\n  - {name: d, type: vdisk, config: size=1M, export: [iscsi]}\n", "iqn at the top"},
		{strings.Replace(top, "chap_password: secret-12345", "chap_password: ''", 1) + "  - {name: d, type: vdisk, config: size=1M, export: [iscsi]}\n", "a user name and a secret"},
		{strings.Replace(top, "0.0.0.0:3260", "myhost:3260", 1) + "  - {name: d, type: vdisk, config: size=1M, export: [iscsi]}\n", "not an IP address"},
		{strings.Replace(top, "  acls:", "  acl:", 1) + "  - {name: d, type: vdisk, config: size=1M, export: [iscsi]}\n", `unknown key "acl" in iscsi (did you mean "acls"?)`},
	} {
		if _, err := Parse([]byte(tc.cfg)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%q: %v, want %q", tc.cfg, err, tc.want)
		}
	}
}

// CHAP secrets need CAP_SYS_ADMIN in the kernel: a config with them is
// refused without it, naming the drop-in that adds it; one without CHAP,
// or a process that has it, or one whose set is unknown, goes ahead.
func TestCHAPNeedsCapability(t *testing.T) {
	const acl = "iscsi:\n  acls:\n    - initiator: iqn.1993-08.org.debian:01:h1\n"
	dev := "devices:\n  - {name: d0, type: vdisk, config: size=1M}\n  - {name: d1, type: vdisk, config: size=1M, export: [iscsi]}\n"
	chap, err := Parse([]byte(acl + "      chap_user: u\n      chap_password: secret-12345\n" + dev))
	if err != nil {
		t.Fatal(err)
	}
	plain, err := Parse([]byte(acl + dev))
	if err != nil {
		t.Fatal(err)
	}
	const netAdmin, sysAdmin = 1 << 12, 1 << 21
	err = CHAPNeedsCapability(chap, netAdmin, true)
	if err == nil || !strings.Contains(err.Error(), "device d1:") || !strings.Contains(err.Error(), "CAP_SYS_ADMIN") ||
		!strings.Contains(err.Error(), "deploy/systemd/iscsi-chap.conf") {
		t.Errorf("CHAP without CAP_SYS_ADMIN: %v", err)
	}
	for _, tc := range []struct {
		name string
		c    *Config
		caps uint64
		ok   bool
	}{{"CHAP with CAP_SYS_ADMIN", chap, netAdmin | sysAdmin, true}, {"no CHAP", plain, netAdmin, true}, {"unknown set", chap, 0, false}} {
		if err := CHAPNeedsCapability(tc.c, tc.caps, tc.ok); err != nil {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
}

// The iSCSI documentation's example is a config vscsid takes.
func TestReadmeISCSIExampleParses(t *testing.T) {
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "docs", "iscsi.md"))
	if err != nil {
		t.Fatal(err)
	}
	var block string
	for _, b := range strings.Split(string(raw), "```yaml\n")[1:] {
		b, _, _ = strings.Cut(b, "```")
		if strings.Contains(b, "export: [loopback, iscsi]") {
			block = b
		}
	}
	if block == "" {
		t.Fatal("docs/iscsi.md has no YAML example with export: [loopback, iscsi]")
	}
	c, err := Parse([]byte(block))
	if err != nil {
		t.Fatalf("docs/iscsi.md example: %v\n%s", err, block)
	}
	if _, e, err := c.Devices[0].Exports(c); err != nil || e == nil || e.IQN != DefaultIQNPrefix+":lto8" {
		t.Errorf("docs/iscsi.md example exports %+v, %v", e, err)
	}
}

// fault depth: parsed for a disk, refused (by --check-config, not only at
// attach) on a tape drive, and the example file's devices all parse.
func TestFaultDepthConfig(t *testing.T) {
	c, err := Parse([]byte("devices:\n  - {name: d, type: vdisk, config: size=1M, fault: {timing: latency=1ms, depth: 32}}\n"))
	if err != nil || c.Devices[0].Fault.Depth != 32 {
		t.Fatalf("disk with depth: %v", err)
	}
	if _, err := Parse([]byte("devices:\n  - {name: t, type: vtape, config: memory=1, fault: {depth: 4}}\n")); err == nil || !strings.Contains(err.Error(), "only a disk") {
		t.Errorf("tape with depth: %v", err)
	}
	if _, err := Parse([]byte("devices:\n  - {name: d, type: vdisk, config: size=1M, fault: {depth: 1000}}\n")); err == nil || !strings.Contains(err.Error(), "depth 1000") {
		t.Errorf("depth 1000: %v", err)
	}
	raw, err := os.ReadFile(filepath.Join("..", "..", "..", "deploy", "fault-rules.example.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	c, err = Parse(raw)
	if err != nil {
		t.Fatalf("fault-rules.example.yaml: %v", err)
	}
	if !slices.ContainsFunc(c.Devices, func(d Device) bool { return d.Fault != nil && d.Fault.Depth == 32 }) {
		t.Error("the example file shows no depth")
	}
}

// A device's ring_poll wins over the config's, off included; devices
// the config does not list (made with targetcli) get the config's.
func TestPollOf(t *testing.T) {
	c, err := Parse([]byte(`ring_poll: 200us
devices:
  - {name: own, type: vdisk, config: size=1M, ring_poll: 20us}
  - {name: off, type: vdisk, config: size=1M, ring_poll: off}
  - {name: plain, type: vdisk, config: size=1M}
`))
	if err != nil {
		t.Fatal(err)
	}
	for name, want := range map[string]time.Duration{"own": 20 * time.Microsecond, "off": 0, "plain": 200 * time.Microsecond, "targetcli-made": 200 * time.Microsecond} {
		if got := c.PollOf(name); got != want {
			t.Errorf("PollOf(%s) = %v, want %v", name, got, want)
		}
	}
}
