package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const before = `# HELP vscsi_scsi_commands_total SCSI commands.
# TYPE vscsi_scsi_commands_total counter
vscsi_scsi_commands_total{command="read_10",device="d0"} 7
vscsi_scsi_commands_total{command="inquiry",device="d0"} 3
vscsi_scsi_commands_total{command="read_10",device="d0x"} 100
# HELP vscsi_scsi_transfer_bytes Bytes per command.
# TYPE vscsi_scsi_transfer_bytes histogram
vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="32768"} 2
vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="65536"} 5
vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="+Inf"} 5
vscsi_scsi_transfer_bytes_sum{device="d0",direction="read"} 1.5e+06
vscsi_scsi_transfer_bytes_count{device="d0",direction="read"} 5
odd{path="a\"b\\c,d}"} 1
`

const after = `# TYPE vscsi_scsi_commands_total counter
vscsi_scsi_commands_total{command="read_10",device="d0"} 107
vscsi_scsi_commands_total{command="inquiry",device="d0"} 3
vscsi_scsi_commands_total{command="read_10",device="d0x"} 100
vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="65536"} 105
vscsi_scsi_transfer_bytes_sum{device="d0",direction="read"} 0.5 1700000000000
`

func files(t *testing.T) (string, string) {
	d := t.TempDir()
	b, a := filepath.Join(d, "before.prom"), filepath.Join(d, "after.prom")
	if err := os.WriteFile(b, []byte(before), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(a, []byte(after), 0o644); err != nil {
		t.Fatal(err)
	}
	return b, a
}

// runCase is a guestcheck command line and what it must print.
type runCase struct {
	args []string
	want string
}

// expectRuns runs each case with stdin in and wants its output, one
// trailing newline aside (what a shell's $(...) takes); then every command
// line of bad must fail.
func expectRuns(t *testing.T, in string, cases []runCase, bad [][]string) {
	t.Helper()
	for _, tc := range cases {
		var b strings.Builder
		if err := runIn(tc.args, strings.NewReader(in), &b); err != nil {
			t.Errorf("%v: %v", tc.args, err)
		} else if got := strings.TrimSuffix(b.String(), "\n"); got != strings.TrimSuffix(tc.want, "\n") {
			t.Errorf("%v = %q, want %q", tc.args, b.String(), tc.want)
		}
	}
	for _, args := range bad {
		var b strings.Builder
		if err := runIn(args, strings.NewReader(in), &b); err == nil {
			t.Errorf("%v: no error, printed %q", args, b.String())
		}
	}
}

func TestRun(t *testing.T) {
	b, a := files(t)
	expectRuns(t, "", []runCase{
		{[]string{"prom-value", b, `vscsi_scsi_commands_total{device="d0"}`}, "10"},
		{[]string{"prom-value", b, `vscsi_scsi_commands_total{device="d0",command="read_10"}`}, "7"},
		{[]string{"prom-value", b, `vscsi_scsi_commands_total`}, "110"},
		{[]string{"prom-value", b, `vscsi_scsi_transfer_bytes_bucket{device="d0", le="+Inf"}`}, "5"},
		{[]string{"prom-value", b, `vscsi_scsi_transfer_bytes_sum{device="d0"}`}, "1500000"},
		{[]string{"prom-value", b, `odd{path="a\"b\\c,d}"}`}, "1"},
		// A metric with a series, none of them matching, is 0, not an error.
		{[]string{"prom-value", b, `vscsi_scsi_commands_total{device="d9"}`}, "0"},
		// le compares as a number.
		{[]string{"prom-value", b, `vscsi_scsi_transfer_bytes_bucket{le="3.2768e+04"}`}, "2"},
		{[]string{"prom-delta", b, a, `vscsi_scsi_commands_total{device="d0",command="read_10"}`}, "100"},
		{[]string{"prom-delta", b, a, `vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="32768"}`}, "-2"},
		{[]string{"prom-delta", b, a, `vscsi_scsi_transfer_bytes_sum{device="d0"}`}, "-1.4999995e+06"},
		// Several selectors: one line, in their order.
		{[]string{"prom-value", b, `vscsi_scsi_transfer_bytes_bucket{device="d0",le="32768"}`, `vscsi_scsi_transfer_bytes_bucket{device="d0",le="65536"}`, `odd`}, "2 5 1"},
		// By a label: sorted, the sums of each value.
		{[]string{"prom-by", b, `vscsi_scsi_commands_total`, "command"}, "inquiry 3\nread_10 107"},
		{[]string{"prom-by", b, `vscsi_scsi_commands_total{device="d0"}`, "command"}, "inquiry 3\nread_10 7"},
	}, nil)
}

// TestStdin: "-" reads the scrape from stdin (scrape | guestcheck ...), and
// zero sums are left out of prom-by.
func TestStdin(t *testing.T) {
	in := `# TYPE vscsi_scsi_sense_codes_total counter
vscsi_scsi_sense_codes_total{asc="not_ready",device="t0"} 2
vscsi_scsi_sense_codes_total{asc="power_on_reset",device="t0"} 0
vscsi_scsi_sense_codes_total{asc="not_ready",device="t1"} 5
`
	expectRuns(t, in, []runCase{
		{[]string{"prom-by", "-", `vscsi_scsi_sense_codes_total{device="t0"}`, "asc"}, "not_ready 2"},
		{[]string{"prom-value", "-", `vscsi_scsi_sense_codes_total{asc="not_ready"}`}, "7"},
	}, nil)
}

func TestErrors(t *testing.T) {
	b, _ := files(t)
	bad := filepath.Join(t.TempDir(), "bad.prom")
	if err := os.WriteFile(bad, []byte("x{a=\"1\" 2\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	expectRuns(t, "", nil, [][]string{
		{"prom-value", b, `vscsi_scsi_comands_total{device="d0"}`}, // misspelt
		{"prom-value", b, `vscsi_scsi_commands_total{device=~"d.*"}`},
		{"prom-value", b, `vscsi_scsi_commands_total{device="d0"} x`},
		{"prom-value", bad, `x`},
		{"prom-value", filepath.Join(t.TempDir(), "missing"), `x`},
		{"prom-delta", b, `x`},
		{"prom-value", b, `vscsi_scsi_commands_total`, `nope`}, // every selector's metric must exist
		{"prom-by", b, `nope{device="d0"}`, "command"},
		{"prom-by", b, `vscsi_scsi_commands_total`},
		{},
	})
}
