package disk_test

import (
	"context"
	"testing"

	"go.uber.org/zap/zaptest"

	"github.com/vscsid/vscsid/disk"
	"github.com/vscsid/vscsid/scsi"
)

// A disk that takes over from a planned restart raises no power-on unit
// attention when the initiator's view of it survived (fake_rw reads zeros
// before and after), and keeps it when it did not (a RAM store starts
// empty; a zoned disk's write pointers start at their zones' starts).
func TestResumeHandOver(t *testing.T) {
	for _, tc := range []struct {
		cfg    string
		silent bool
	}{
		{"size=1M;mode=fake_rw", true},
		{"size=1M;mode=store", false},
		{"size=64M;mode=fake_rw;zoned=host-managed", false},
	} {
		c, err := disk.ParseConfig(tc.cfg)
		if err != nil {
			t.Fatal(err)
		}
		d, err := disk.New("disk0", c, zaptest.NewLogger(t))
		if err != nil {
			t.Fatal(err)
		}
		d.ResumeHandOver()
		r := d.HandleCommand(context.Background(), &scsi.Command{CDB: tur(), Data: scsi.NewBuffer()})
		ua := r.Status == scsi.StatusCheckCondition && r.Sense.Key == scsi.UnitAttention && r.Sense.ASC == scsi.PowerOnResetOrBusDeviceReset
		if ua == tc.silent {
			t.Errorf("%s: first TEST UNIT READY after a hand-over: %+v (want a power-on unit attention: %v)", tc.cfg, r, !tc.silent)
		}
	}
}
