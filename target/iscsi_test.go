package target

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/target/targettest"
)

const (
	testIQN  = "iqn.2026-12.io.github.vscsid:disk0"
	testIni1 = "iqn.1993-08.org.debian:01:host1"
	testIni2 = "iqn.1993-08.org.debian:01:host2"
)

func iscsiSpec() DeviceSpec {
	return DeviceSpec{
		Name: "disk0", Subtype: "vdisk", Config: "size=1G", Size: 1 << 30,
		ISCSI: &ISCSIExport{
			IQN:     testIQN,
			Portals: []string{"127.0.0.1:3260", "[::1]:3261"},
			ACLs: []ISCSIACL{
				{Initiator: testIni1, UserID: "u1", Password: "secret-one-1"},
				{Initiator: testIni2, UserID: "u2", Password: "secret-two-2", MutualUserID: "tgt", MutualPassword: "secret-tgt-3"},
			},
		},
	}
}

// A device exported over iSCSI gets its own target, made after the
// tcm_loop LUN, and Close removes exactly it (tpg disabled first), then
// the rest: nothing is left, and the storage object's rmdir is not held
// by an iSCSI LUN.
func TestISCSIExportMadeAndRemovedExactly(t *testing.T) {
	f := newFixture(t)
	before := f.tree()
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	info, err := tg.Create(context.Background(), iscsiSpec())
	if err != nil {
		t.Fatal(err)
	}
	if info.SCSI.Block == "" {
		t.Errorf("no tcm_loop disk beside the iSCSI export: %+v", info.SCSI)
	}
	tpg := "config/target/iscsi/" + testIQN + "/tpgt_1"
	obj := "config/target/core/user_2/disk0"
	want := []string{
		"mkdir config/target/iscsi",
		"mkdir config/target/iscsi/" + testIQN,
		"mkdir " + tpg,
		"mkdir " + tpg + "/lun/lun_0",
		"symlink " + tpg + "/lun/lun_0/disk0 -> " + obj,
		"mkdir " + tpg + "/np/127.0.0.1:3260",
		"mkdir " + tpg + "/np/[::1]:3261",
		"mkdir " + tpg + "/acls/" + testIni1,
		"mkdir " + tpg + "/acls/" + testIni1 + "/lun_0",
		"symlink " + tpg + "/acls/" + testIni1 + "/lun_0/disk0 -> " + tpg + "/lun/lun_0",
		"write " + tpg + "/acls/" + testIni1 + "/auth/userid u1",
		"write " + tpg + "/acls/" + testIni1 + "/auth/password secret-one-1",
		"mkdir " + tpg + "/acls/" + testIni2,
		"mkdir " + tpg + "/acls/" + testIni2 + "/lun_0",
		"symlink " + tpg + "/acls/" + testIni2 + "/lun_0/disk0 -> " + tpg + "/lun/lun_0",
		"write " + tpg + "/acls/" + testIni2 + "/auth/userid u2",
		"write " + tpg + "/acls/" + testIni2 + "/auth/password secret-two-2",
		"write " + tpg + "/acls/" + testIni2 + "/auth/userid_mutual tgt",
		"write " + tpg + "/acls/" + testIni2 + "/auth/password_mutual secret-tgt-3",
		"write " + tpg + "/attrib/authentication 1",
		"write " + tpg + "/enable 1",
	}
	ops := f.Ops()
	i := slices.Index(ops, want[0])
	if i < 0 || !slices.Equal(ops[i:], want) {
		t.Errorf("ops:\n%s\nwant at the end:\n%s", strings.Join(ops, "\n"), strings.Join(want, "\n"))
	}
	if i >= 0 && !slices.ContainsFunc(ops[:i], func(s string) bool { return strings.HasPrefix(s, "symlink config/target/loopback/") }) {
		t.Error("the iSCSI target was made before the tcm_loop LUN")
	}
	if ex := tg.Devices()[0].Exports; !slices.Contains(ex, FabricLUNs{Fabric: "iscsi", LUNs: 1}) || !slices.Contains(ex, FabricLUNs{Fabric: "loopback", LUNs: 1}) {
		t.Errorf("exports %+v: want one LUN on each fabric", ex)
	}

	n := len(f.Ops())
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	closeOps := f.Ops()[n:]
	wantFirst := []string{
		"write " + tpg + "/enable 0",
		"unlink " + tpg + "/acls/" + testIni2 + "/lun_0/disk0",
		"rmdir " + tpg + "/acls/" + testIni2 + "/lun_0",
		"rmdir " + tpg + "/acls/" + testIni2,
	}
	if !slices.Equal(closeOps[:len(wantFirst)], wantFirst) {
		t.Errorf("close ops:\n%s\nwant first:\n%s", strings.Join(closeOps, "\n"), strings.Join(wantFirst, "\n"))
	}
	iscsiDone := slices.Index(closeOps, "rmdir config/target/iscsi/"+testIQN)
	loopStart := slices.IndexFunc(closeOps, func(s string) bool { return strings.HasPrefix(s, "unlink config/target/loopback/") })
	if iscsiDone < 0 || loopStart < iscsiDone {
		t.Errorf("the iSCSI target is not removed before the tcm_loop LUN:\n%s", strings.Join(closeOps, "\n"))
	}
	// The iSCSI fabric directory stays, as targetcli leaves it.
	before = append(before, "config/target/iscsi")
	slices.Sort(before)
	if after := f.tree(); !slices.Equal(before, after) {
		t.Errorf("left behind:\nbefore %v\nafter  %v", before, after)
	}
}

// iSCSI only: no tcm_loop target, and so no SCSI device on this host.
func TestISCSIOnly(t *testing.T) {
	f := newFixture(t)
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	spec := iscsiSpec()
	spec.NoLoopback = true
	info, err := tg.Create(context.Background(), spec)
	if err != nil {
		t.Fatal(err)
	}
	if info.WWN != "" || info.SCSI != (SCSIDevice{}) {
		t.Errorf("an iSCSI-only device has a tcm_loop side: %+v", info)
	}
	if slices.ContainsFunc(f.Ops(), func(s string) bool { return strings.Contains(s, "loopback") }) {
		t.Errorf("tcm_loop touched:\n%s", strings.Join(f.Ops(), "\n"))
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
	if f.Exists(filepath.Join(f.paths.iscsi(), testIQN)) {
		t.Error("the iSCSI target outlived Close")
	}
}

// The iSCSI target a previous daemon left (a hand-over or a crash) is
// taken over in place with its device when it is exactly what the config
// asks for: no configfs operation touches it, so its sessions stay logged
// in. When its export changed (here, an initiator less), it is removed and
// made anew once the ring is served again; when the device's config
// changed, the whole leftover is (reclaim).
func TestISCSILeftover(t *testing.T) {
	for _, tc := range []struct {
		name                           string
		iscsiOnly, changeACLs, changed bool
		kept                           bool
	}{
		{name: "kept", kept: true},
		{name: "kept-iscsi-only", iscsiOnly: true, kept: true},
		{name: "acls-changed", changeACLs: true},
		{name: "acls-changed-iscsi-only", iscsiOnly: true, changeACLs: true},
		{name: "config-changed", changed: true},
		{name: "config-changed-iscsi-only", iscsiOnly: true, changed: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			f := newFixture(t)
			spec := iscsiSpec()
			spec.NoLoopback = tc.iscsiOnly
			tg, first := restarted(t, f, spec)
			if tc.changed {
				spec.Config = "size=2G"
			}
			if tc.changeACLs {
				spec.ISCSI.ACLs = spec.ISCSI.ACLs[:1]
			}
			n := len(f.Ops())
			info, err := tg.Create(context.Background(), spec)
			if err != nil {
				t.Fatal(err)
			}
			ops := f.Ops()[n:]
			tpg := "config/target/iscsi/" + testIQN + "/tpgt_1"
			touched := slices.ContainsFunc(ops, func(s string) bool { return strings.Contains(s, "config/target/iscsi/") })
			if tc.kept {
				if touched {
					t.Errorf("the kept iSCSI target was touched:\n%s", strings.Join(ops, "\n"))
				}
				if info.SCSI != first.SCSI || info.WWN != first.WWN {
					t.Errorf("taken over as %+v, %s; was %+v, %s", info.SCSI, info.WWN, first.SCSI, first.WWN)
				}
			} else {
				// The leftover ring is served again (opened) before the
				// TPG is disabled: the kernel's disable waits for the
				// commands its sessions have in flight, which only a
				// served ring completes. Then the target is removed,
				// before the tcm_loop LUN (reclaim), and made anew.
				open := slices.IndexFunc(ops, func(s string) bool { return strings.HasPrefix(s, "open dev/uio") })
				disable := slices.Index(ops, "write "+tpg+"/enable 0")
				removed := slices.Index(ops, "rmdir config/target/iscsi/"+testIQN)
				unlinkLoop := slices.IndexFunc(ops, func(s string) bool { return strings.HasPrefix(s, "unlink config/target/loopback/") })
				enable := slices.Index(ops, "write "+tpg+"/enable 1")
				if open < 0 || disable < open || removed < disable || enable < removed || (tc.changed && !tc.iscsiOnly && unlinkLoop < removed) {
					t.Errorf("ops:\n%s", strings.Join(ops, "\n"))
				}
			}
			if ex := tg.Devices()[0].Exports; !slices.Contains(ex, FabricLUNs{Fabric: "iscsi", LUNs: 1}) {
				t.Errorf("exports %+v", ex)
			}
			// Close removes the kept target as it removes one it made.
			before := f.tree()
			if err := tg.Close(); err != nil {
				t.Fatal(err)
			}
			if slices.ContainsFunc(f.tree(), func(p string) bool { return strings.HasPrefix(p, "config/target/iscsi/"+testIQN) }) {
				t.Errorf("Close left the iSCSI target: %v (before %d entries)", f.tree(), len(before))
			}
		})
	}
}

// While an iSCSI-only leftover is removed, its initiator's session is
// still up and sends commands (those reset_ring completed with BUSY come
// back at once). The placeholder answers them with a sense sd retries,
// NOT READY 04/01, not one it fails the I/O with (04/12 OFFLINE gave dd an
// I/O error under kill -9 in the two-host VM test).
func TestISCSILeftoverAnswersRetryable(t *testing.T) {
	f := newFixture(t)
	spec := iscsiSpec()
	spec.NoLoopback = true
	tg, _ := restarted(t, f, spec)
	spec.Config = "size=2G" // not taken over in place: removed, then made anew
	disable := "write config/target/iscsi/" + testIQN + "/tpgt_1/enable 0"
	var status byte
	var sense []byte
	var once sync.Once
	hook := func(op string) {
		if op != disable {
			return
		}
		once.Do(func() {
			f.mu.Lock()
			r := f.rings["uio0"]
			f.mu.Unlock()
			n := targettest.PutTestUnitReady(r.mem, 0, 7)
			targettest.SetHead(r.mem, n)
			r.events <- struct{}{}
			for deadline := time.Now().Add(5 * time.Second); targettest.Tail(r.mem) != n && time.Now().Before(deadline); {
				time.Sleep(time.Millisecond)
			}
			status, sense = targettest.Response(r.mem, 0)
			sense = slices.Clone(sense[:18])
		})
	}
	f.beforeOp.Store(&hook)
	if _, err := tg.Create(context.Background(), spec); err != nil {
		t.Fatal(err)
	}
	f.beforeOp.Store(nil)
	if sense == nil {
		t.Fatalf("the TPG was not disabled while the leftover was served: %v", f.Ops())
	}
	if status != 0x02 || sense[2] != 0x02 || sense[12] != 0x04 || sense[13] != 0x01 {
		t.Errorf("command to a leftover being removed: status %#x sense % x, want CHECK CONDITION NOT READY 04/01", status, sense)
	}
	if err := tg.Close(); err != nil {
		t.Fatal(err)
	}
}

// An iSCSI target another tool made for the leftover storage object is
// not removed: the device is refused with what to do.
func TestISCSIForeignExportRefused(t *testing.T) {
	f := newFixture(t)
	spec := iscsiSpec()
	tg, _ := restarted(t, f, spec)
	defer func() { _ = tg.Close() }()
	spec.Config = "size=2G" // not adoptable
	spec.ISCSI = nil        // and the config no longer makes that target
	if _, err := tg.Create(context.Background(), spec); err == nil || !strings.Contains(err.Error(), "exported by iSCSI target "+testIQN) ||
		!strings.Contains(err.Error(), "targetcli /iscsi delete") {
		t.Fatalf("Create: %v", err)
	}
	if _, err := os.Stat(filepath.Join(f.paths.iscsi(), testIQN)); err != nil {
		t.Errorf("the foreign target was touched: %v", err)
	}
}

func TestISCSIValidation(t *testing.T) {
	for _, tc := range []struct {
		name string
		edit func(*ISCSIExport)
		want string
	}{
		{"upper-case IQN", func(e *ISCSIExport) { e.IQN = "iqn.2026-12.IO.x:d" }, "want iqn.YYYY-MM"},
		{"no date", func(e *ISCSIExport) { e.IQN = "iqn.io.github:d" }, "want iqn.YYYY-MM"},
		{"bad initiator", func(e *ISCSIExport) { e.ACLs[0].Initiator = "host1" }, "ACL initiator iSCSI name \"host1\""},
		{"host name portal", func(e *ISCSIExport) { e.Portals = []string{"localhost:3260"} }, "not an IP address"},
		{"no port", func(e *ISCSIExport) { e.Portals = []string{"127.0.0.1"} }, "want IP:port"},
		{"port 0", func(e *ISCSIExport) { e.Portals = []string{"127.0.0.1:0"} }, "is not 1-65535"},
		{"same portal twice", func(e *ISCSIExport) { e.Portals = []string{"127.0.0.1:3260", "127.0.0.1:3260"} }, "listed twice"},
		{"no ACL", func(e *ISCSIExport) { e.ACLs = nil }, "no ACL"},
		{"same initiator twice", func(e *ISCSIExport) { e.ACLs[1].Initiator = testIni1 }, "listed twice"},
		{"CHAP on one ACL only", func(e *ISCSIExport) { e.ACLs[1].UserID, e.ACLs[1].Password, e.ACLs[1].MutualUserID = "", "", "" }, "every ACL of a target or on none"},
		{"secret with a space", func(e *ISCSIExport) { e.ACLs[0].Password = "two words" }, "without spaces"},
		{"user without secret", func(e *ISCSIExport) { e.ACLs[0].Password = "" }, "a user name and a secret"},
	} {
		spec := iscsiSpec()
		tc.edit(spec.ISCSI)
		if err := spec.Validate(); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	spec := iscsiSpec()
	if err := spec.Validate(); err != nil {
		t.Errorf("good spec: %v", err)
	}
	spec.ISCSI, spec.NoLoopback = nil, true
	if err := spec.Validate(); err == nil || !strings.Contains(err.Error(), "no fabric") {
		t.Errorf("no fabric: %v", err)
	}
	if p, err := ISCSIPortal("[::ffff:127.0.0.1]:3260"); err != nil || p != "127.0.0.1:3260" {
		t.Errorf("mapped IPv4 portal: %q %v", p, err)
	}
}

// Failed names the failed devices without touching configfs or sysfs.
func TestFailedReadsNoFiles(t *testing.T) {
	f := newFixture(t)
	tg, err := New(f.options(zaptest.NewLogger(t)))
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = tg.Close() }()
	if _, err := tg.Create(context.Background(), DeviceSpec{Name: "disk0", Subtype: "vdisk", Config: "size=1G", Size: 1 << 30}); err != nil {
		t.Fatal(err)
	}
	n := len(f.Ops())
	if got := tg.Failed(); len(got) != 0 {
		t.Errorf("Failed() = %v on a healthy device", got)
	}
	if ops := f.Ops()[n:]; len(ops) != 0 {
		t.Errorf("Failed touched files: %v", ops)
	}
}
