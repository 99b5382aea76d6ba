package fio

import (
	"path/filepath"
	"testing"
)

func TestParse(t *testing.T) {
	// Trimmed from fio 3.33's --output-format=json, behind a notice.
	raw := `fio: this platform does not support process shared mutexes, forcing use of threads.
{
  "fio version" : "fio-3.33",
  "jobs" : [
    {"jobname" : "d00", "groupid" : 0,
     "read" : {"bw_bytes" : 4096000, "iops" : 1000.5, "total_ios" : 16387,
               "clat_ns" : {"percentile" : {"50.000000" : 395264, "99.000000" : 1236992}}},
     "write" : {"bw_bytes" : 0, "iops" : 0.0, "total_ios" : 16400}},
    {"jobname" : "d01", "read" : {"total_ios" : 7}, "write" : {"total_ios" : 0}},
    {"jobname" : "d00", "read" : {"total_ios" : 1}, "write" : {"total_ios" : 2}}
  ]
}
`
	o, err := Parse([]byte(raw))
	if err != nil {
		t.Fatal(err)
	}
	j := o.Jobs[0]
	if j.Name != "d00" || j.Read.IOPS != 1000.5 || j.Read.BW != 4096000 || j.Read.Clat.Percentile["99.000000"] != 1236992 {
		t.Errorf("job 0: %+v", j)
	}
	for name, want := range map[string]float64{"d00": 16387 + 16400 + 3, "d01": 7} {
		if n, ok := o.IOs(name); !ok || n != want {
			t.Errorf("IOs(%s) = %v, %v; want %v", name, n, ok, want)
		}
	}
	if _, ok := o.IOs("d02"); ok {
		t.Error("IOs of a job fio did not run")
	}
	for _, bad := range []string{"", "{", `{"jobs": []}`, "fio: error opening /dev/sdx\n"} {
		if _, err := Parse([]byte(bad)); err == nil {
			t.Errorf("Parse(%q): no error", bad)
		}
	}
	if _, err := ReadFile(filepath.Join(t.TempDir(), "none.json")); err == nil {
		t.Error("ReadFile of no file: no error")
	}
}
