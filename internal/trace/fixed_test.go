package trace

import (
	"strconv"
	"testing"
)

// appendFixed formats as strconv.AppendFloat does where the decimal is
// not an exact half (there it rounds half away from zero, not to even).
func TestAppendFixed(t *testing.T) {
	for _, tc := range []struct {
		v, unit  int64
		decimals int
	}{
		{0, 1e9, 6}, {1, 1e9, 6}, {499, 1e9, 6}, {501, 1e9, 6}, {123456789012, 1e9, 6}, {-2_000_001_000, 1e9, 6},
		{999_999_600, 1e9, 6}, {37_040, 1e3, 1}, {9_999_960, 1e3, 1}, {12_345_678, 1e6, 1}, {7, 1e3, 1},
	} {
		got := string(appendFixed(nil, tc.v, tc.unit, tc.decimals))
		want := strconv.FormatFloat(float64(tc.v)/float64(tc.unit), 'f', tc.decimals, 64)
		if got != want {
			t.Errorf("appendFixed(%d, %d, %d) = %s, want %s", tc.v, tc.unit, tc.decimals, got, want)
		}
	}
	if got := string(appendFixed(nil, 1250, 1e3, 1)); got != "1.3" {
		t.Errorf("an exact half: %s, want 1.3", got)
	}
}
