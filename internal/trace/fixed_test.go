package trace

import (
	"strconv"
	"testing"
)

// appendSeconds and appendDuration format as strconv.FormatFloat does
// where the decimal is not an exact half (there they round half away from
// zero, not to even); appendUint and appendInt as strconv.
func TestAppendNumbers(t *testing.T) {
	for _, ns := range []int64{0, 1, 499, 501, 123456789012, -2_000_001_000, 999_999_600, 5_000_000_000_000_000_000} {
		got := string(appendSeconds(nil, ns))
		want := strconv.FormatFloat(float64(ns)/1e9, 'f', 6, 64)
		if got != want {
			t.Errorf("appendSeconds(%d) = %s, want %s", ns, got, want)
		}
	}
	for _, ns := range []int64{0, 7, 37_040, 9_999_960, 9_999_949, 10_000_000, 12_345_678, 3_600_000_000_000} {
		got := string(appendDuration(nil, ns))
		want := strconv.FormatFloat(float64(ns)/1e3, 'f', 1, 64) + "us"
		if ns >= 10_000_000 {
			want = strconv.FormatFloat(float64(ns)/1e6, 'f', 1, 64) + "ms"
		}
		if got != want {
			t.Errorf("appendDuration(%d) = %s, want %s", ns, got, want)
		}
	}
	if got := string(appendDuration(nil, 1250)); got != "1.3us" {
		t.Errorf("an exact half: %s, want 1.3us", got)
	}
	for _, v := range []int64{0, 9, 10, 99, 100, 12345, -1, -10, 1<<63 - 1, -1 << 63} {
		if got, want := string(appendInt([]byte("x"), v)), "x"+strconv.FormatInt(v, 10); got != want {
			t.Errorf("appendInt(%d) = %s, want %s", v, got, want)
		}
	}
	for p := uint64(1); ; p *= 10 {
		for _, v := range []uint64{p - 1, p, p + 1, p*7 + 3} {
			if got, want := string(appendUint(nil, v)), strconv.FormatUint(v, 10); got != want {
				t.Errorf("appendUint(%d) = %s", v, got)
			}
		}
		if p > (1<<64-1)/10 {
			break
		}
	}
	if got, want := string(appendUint(nil, 1<<64-1)), strconv.FormatUint(1<<64-1, 10); got != want {
		t.Errorf("appendUint(max) = %s, want %s", got, want)
	}
}
