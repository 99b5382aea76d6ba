package main

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/cmd/internal/config"
	"github.com/vscsid/vscsid/internal/device"
	"github.com/vscsid/vscsid/internal/record"
	"github.com/vscsid/vscsid/internal/record/recordtest"
	"github.com/vscsid/vscsid/scsi"
)

// The recordings of real clients in testdata/recordings were made in the
// VM: by deploy/vm/scenarios/record.sh (tar and mt on a drive, mtx with a
// library and its drive), by the full guest's LTFS suite (mkltfs, mount,
// ltfsck) and by its btape suite (Bacula's btape test, digests only).
// They replay with no difference against this
// code: a change that would break those clients fails here in seconds.
// A change meant to alter what they see is recorded anew: docs/trace.md.
func TestReplayFixtures(t *testing.T) {
	files, err := filepath.Glob("testdata/recordings/*.vrec")
	if err != nil || len(files) == 0 {
		t.Fatalf("no recordings: %v", err)
	}
	for _, f := range files {
		t.Run(strings.TrimSuffix(filepath.Base(f), ".vrec"), func(t *testing.T) {
			res, _, err := replayFile(context.Background(), f, nil)
			if err != nil {
				t.Fatal(err)
			}
			if res.Commands < 40 {
				t.Errorf("only %d commands replayed", res.Commands)
			}
			for _, d := range res.Divergences {
				t.Error(d)
			}
		})
	}
}

// TestReplayFixturesCatchAChange: the tar session's fixture fails on a
// drive that gets the sign of INFORMATION wrong.
func TestReplayFixturesCatchAChange(t *testing.T) {
	f, err := os.Open("testdata/recordings/tar-mt.vrec")
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = f.Close() }()
	r, err := record.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	build := config.ReplayBuilder(t.TempDir())
	res, err := record.Replay(context.Background(), r, func(d record.Device, env device.Env) (scsi.Handler, error) {
		h, err := build(d, env)
		return recordtest.NegatedInfo(h), err
	})
	if err != nil {
		t.Fatal(err)
	}
	if len(res.Divergences) == 0 {
		t.Fatal("a drive with the wrong INFORMATION sign replays the tar session without a difference")
	}
	t.Logf("first difference: %v", res.Divergences[0])
}

// TestReplayNodes: --node is refused with a message saying what is
// wanted before any node is opened: a device the recording lacks, one
// left without a node, one named twice, a bare node for a recording of
// several devices.
func TestReplayNodes(t *testing.T) {
	const mtx, tarmt = "testdata/recordings/mtx.vrec", "testdata/recordings/tar-mt.vrec"
	for _, tc := range []struct {
		file  string
		nodes []string
		want  string
	}{
		{mtx, []string{"/dev/null"}, "the recording has 2 devices (rlib0, rtape0): say which, as DEVICE=/dev/null"},
		{mtx, []string{"nosuch=/dev/null"}, "the recording has no device nosuch (it has rlib0, rtape0)"},
		{mtx, []string{"rlib0=/dev/null"}, "no node for device rtape0 of the recording"},
		{tarmt, []string{"rec0=/dev/null", "/dev/null"}, "device rec0 named twice"},
		{tarmt, []string{"/nonexistent/sg9"}, "--node /nonexistent/sg9: no such file or directory"},
	} {
		var n nodesFlag
		for _, v := range tc.nodes {
			if err := n.Set(v); err != nil {
				t.Fatal(err)
			}
		}
		_, _, err := replayFile(context.Background(), tc.file, n)
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s --node %v: %v, want an error saying %q", tc.file, tc.nodes, err, tc.want)
		}
	}
	var n nodesFlag
	for _, bad := range []string{"", "rec0=", "=/dev/sg1"} {
		if err := n.Set(bad); err == nil {
			t.Errorf("--node %q accepted", bad)
		}
	}
}
