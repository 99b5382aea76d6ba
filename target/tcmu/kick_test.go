package tcmu

import (
	"testing"
	"time"
)

// The mid-batch kick rule: by count, by data-area bytes and by the age of
// the oldest unreaped completion; never with nothing to reap.
func TestKickDue(t *testing.T) {
	ms := int64(time.Millisecond)
	for _, tc := range []struct {
		name     string
		unkicked int
		bytes    uint64
		first    int64
		now      int64
		want     bool
	}{
		{"nothing to reap", 0, 0, 0, 10 * ms, false},
		{"a few fast completions", kickEvery - 1, 4096, 5 * ms, 5*ms + ms/2, false},
		{"kickEvery completions", kickEvery, 4096, 5 * ms, 5 * ms, true},
		{"a quarter of the data area", 1, 1 << 20, 5 * ms, 5 * ms, true},
		{"just under a quarter", 1, 1<<20 - 1, 5 * ms, 5 * ms, false},
		{"the oldest waited kickInterval", 1, 512, 5 * ms, 6 * ms, true},
		{"a command that did not run counts by number only", 1, 512, 5 * ms, 0, false},
	} {
		d := &Device{kickBytes: 1 << 20, unkicked: tc.unkicked, unkickedBytes: tc.bytes, firstUnkicked: tc.first}
		if got := d.kickDue(tc.now); got != tc.want {
			t.Errorf("%s: kickDue = %v, want %v", tc.name, got, tc.want)
		}
	}
}
