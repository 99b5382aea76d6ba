package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Scrapes around a soak-like load: d00 under fio with a BUSY rule (its
// rule added after the first scrape), d01 under fio, d16 under dd, t00
// under tar, the library's moves.
const countsBefore = `# TYPE vscsi_scsi_commands_total counter
vscsi_scsi_commands_total{command="inquiry",device="d00"} 9
vscsi_scsi_commands_total{command="read_10",device="d00"} 100
vscsi_scsi_commands_total{command="read_10",device="d01"} 10
vscsi_scsi_commands_total{command="read_10",device="d16"} 5
vscsi_scsi_commands_total{command="write_6",device="t00"} 0
vscsi_scsi_commands_total{command="move_medium",device="slib"} 2
`

const countsAfter = `# TYPE vscsi_fault_injected_total counter
vscsi_fault_injected_total{action="busy",device="d00"} 334
vscsi_fault_injected_total{action="delay",device="d16"} 40
# TYPE vscsi_scsi_commands_total counter
vscsi_scsi_commands_total{command="inquiry",device="d00"} 12
vscsi_scsi_commands_total{command="read_10",device="d00"} 16821
vscsi_scsi_commands_total{command="write_10",device="d00"} 16400
vscsi_scsi_commands_total{command="read_10",device="d01"} 9540
vscsi_scsi_commands_total{command="write_10",device="d01"} 9547
vscsi_scsi_commands_total{command="read_10",device="d16"} 2565
vscsi_scsi_commands_total{command="write_6",device="t00"} 1070
vscsi_scsi_commands_total{command="move_medium",device="slib"} 42
`

func TestCommandCounts(t *testing.T) {
	d := t.TempDir()
	before, after := filepath.Join(d, "m0"), filepath.Join(d, "m1")
	if err := os.WriteFile(before, []byte(countsBefore), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(after, []byte(countsAfter), 0o644); err != nil {
		t.Fatal(err)
	}
	// testdata/fio-randrw.json: a perf run's fio JSON (fio 3.33) made
	// into three randrw jobs named after their devices, behind a notice:
	// d00 16387 reads and 16400 writes, d01 9530 and 9547.
	const fioJSON = "testdata/fio-randrw.json"
	const rw = "read_10,read_16,write_10,write_16"
	spec := "d00 fio " + rw + "\n" +
		"d01 fio " + rw + "\n" +
		"\n# dd: 10 passes of 256 reads\n" +
		"d16 2560 read_10,read_16\n" +
		"t00 1070 write_6\n" +
		"slib 40 move_medium\n"
	var b strings.Builder
	if err := runIn([]string{"command-counts", before, after, fioJSON}, strings.NewReader(spec), &b); err != nil {
		t.Fatal(err)
	}
	want := `d00 want 32787 scsi 33121 busy 334
d01 want 19077 scsi 19077 busy 0
d16 want 2560 scsi 2560 busy 0
t00 want 1070 scsi 1070 busy 0
slib want 40 scsi 40 busy 0
checked 55868 total 55871
`
	if b.String() != want {
		t.Errorf("got\n%swant\n%s", b.String(), want)
	}

	// Counts that differ: every such device named, the lines printed.
	b.Reset()
	err := runIn([]string{"command-counts", before, after, fioJSON}, strings.NewReader("d16 2561 read_10\nt00 1070 write_6\nslib 41 move_medium\n"), &b)
	if err == nil || !strings.Contains(err.Error(), "d16 (want 2561, read_10 2560 - busy 0); slib (want 41, move_medium 40 - busy 0)") {
		t.Errorf("error %v", err)
	}
	if !strings.Contains(b.String(), "checked 3670 total 55871") {
		t.Errorf("output %q", b.String())
	}

	for _, tc := range []struct {
		args []string
		spec string
	}{
		{[]string{before, after}, "d00 fio read_10\n"},          // fio without its JSON
		{[]string{before, after, fioJSON}, "d02 fio read_10\n"}, // no such job
		{[]string{before, after}, "d00 many read_10\n"},
		{[]string{before, after}, "d00 1\n"},
		{[]string{before, before}, "d00 0 read_10\n"},                   // fine: 0
		{[]string{before, after}, "d00 0 vscsi_other\n"},                // a command without series counts 0: differs
		{[]string{before, filepath.Join(d, "none")}, "d00 0 read_10\n"}, // no scrape
		{[]string{before, fioJSON}, "d00 0 read_10\n"},                  // not a scrape
	} {
		err := runIn(append([]string{"command-counts"}, tc.args...), strings.NewReader(tc.spec), &strings.Builder{})
		if (err == nil) != (tc.args[1] == before) {
			t.Errorf("%v <%q: error %v", tc.args, tc.spec, err)
		}
	}
}
