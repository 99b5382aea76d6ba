package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// testdata/proc/4242 is a multi-threaded process's stat, status and io
// as Linux 6 wrote them (pid, name and thread count made the fixture's),
// with three of its threads' status under task/.
func TestProcStat(t *testing.T) {
	defer func(r string) { procRoot = r }(procRoot)
	procRoot = "testdata/proc"
	expectRuns(t, "", []runCase{
		{[]string{"procstat", "4242"}, `ticks=22671
sys_ticks=1005
syscr=79346
syscw=147262
vcsw=211612
nvcsw=81320
rss_kb=2459816
rss_anon_kb=2134984
rss_file_kb=324832
rss_shmem_kb=0
threads=3
`},
		// The soak's RSS sample: values in the order asked.
		{[]string{"procstat", "4242", "rss_kb", "rss_anon_kb", "rss_file_kb", "rss_shmem_kb", "threads"}, "2459816 2134984 324832 0 3\n"},
		{[]string{"procstat", "4242", "ticks"}, "22671\n"},
	}, [][]string{
		{"procstat", "4242", "rss"},  // no such key
		{"procstat", "0"},            // systemctl's MainPID of a stopped unit
		{"procstat", "4243"},         // no such process
		{"procstat", "../proc/4242"}, // not a PID
		{"procstat"},                 // usage
	})
}

// A command name may hold spaces and parentheses: stat's fields count
// from its last ")".
func TestProcStatCommandName(t *testing.T) {
	root := t.TempDir()
	fixture, err := filepath.Abs("testdata/proc/4242")
	if err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(root, "7")
	if err := os.CopyFS(dir, os.DirFS(fixture)); err != nil {
		t.Fatal(err)
	}
	stat := "7 (a) b (c) S 1 7 7 0 -1 4194560 100 0 0 0 30 12 0 0 20 0 1 0 500 1000 10\n"
	if err := os.WriteFile(filepath.Join(dir, "stat"), []byte(stat), 0o644); err != nil {
		t.Fatal(err)
	}
	var b strings.Builder
	if err := procStat(root, "7", []string{"ticks", "sys_ticks"}, &b); err != nil {
		t.Fatal(err)
	}
	if b.String() != "42 12\n" {
		t.Errorf("got %q, want 42 12", b.String())
	}
}

func TestFDs(t *testing.T) {
	root := t.TempDir()
	fd := filepath.Join(root, "9", "fd")
	if err := os.MkdirAll(fd, 0o755); err != nil {
		t.Fatal(err)
	}
	// What /proc/PID/fd links to: files, sockets and pipes by inode,
	// anonymous inodes by kind.
	for i, target := range []string{"/dev/null", "socket:[1234]", "socket:[99]", "pipe:[7]",
		"anon_inode:[eventpoll]", "/var/lib/vscsid/slib/library.journal", "/dev/uio3", "/dev/uio4"} {
		if err := os.Symlink(target, filepath.Join(fd, string(rune('0'+i)))); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"9"}, `1 /dev/null
1 /dev/uio3
1 /dev/uio4
1 /var/lib/vscsid/slib/library.journal
1 anon_inode:[eventpoll]
1 pipe:[]
2 socket:[]
`},
		{[]string{"9", ".journal"}, "1\n"},
		{[]string{"9", "/dev/uio"}, "0\n"}, // a suffix, not a prefix
	} {
		var b strings.Builder
		if err := fds(root, tc.args[0], tc.args[1:], &b); err != nil {
			t.Errorf("%v: %v", tc.args, err)
		} else if b.String() != tc.want {
			t.Errorf("%v = %q, want %q", tc.args, b.String(), tc.want)
		}
	}
	if err := fds(root, "10", nil, &strings.Builder{}); err == nil {
		t.Error("fds of a missing process: no error")
	}
}
