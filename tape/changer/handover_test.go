package changer

import (
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// A library that takes over from a planned restart answers its first
// command without the power-on unit attention, with its saved inventory.
func TestResumeHandOver(t *testing.T) {
	l := newLab(t, "slots=4;drives=d0", "A00001L8")
	if err := l.c.Close(); err != nil {
		t.Fatal(err)
	}
	c, err := Open("lib0", l.cfg, l.resolve, logger(t))
	if err != nil {
		t.Fatal(err)
	}
	l.c = c
	c.ResumeHandOver()
	if r, _ := l.do(cdb(0x00, 0, 0, 0, 0, 0), 0); r.Status != scsi.StatusGood {
		t.Errorf("first TEST UNIT READY after a hand-over: %+v, want GOOD", r)
	}
}
