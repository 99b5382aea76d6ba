package cfgstring

import (
	"fmt"
	"math"
	"reflect"
	"slices"
	"strings"
	"testing"
)

// TestGrammar lists every accepted and refused spelling of the shared
// grammar: what a value means here, it means in every cfgstring.
func TestGrammar(t *testing.T) {
	sizes := []struct {
		in   string
		want uint64
		err  string // "" = accepted
	}{
		{in: "0", want: 0},
		{in: "4096", want: 4096},
		{in: "0100", want: 100}, // decimal, never octal
		{in: "3B", want: 3},
		{in: "1K", want: 1 << 10}, {in: "1k", want: 1 << 10}, {in: "1KiB", want: 1 << 10}, {in: "1kib", want: 1 << 10},
		{in: "64M", want: 64 << 20}, {in: "64m", want: 64 << 20}, {in: "64MiB", want: 64 << 20}, {in: "64MIB", want: 64 << 20},
		{in: "2G", want: 2 << 30}, {in: "2GiB", want: 2 << 30}, {in: "2gib", want: 2 << 30},
		{in: "32T", want: 32 << 40}, {in: "32TiB", want: 32 << 40},
		{in: "10KB", want: 10e3}, {in: "500MB", want: 500e6}, {in: "500mb", want: 500e6}, {in: "1GB", want: 1e9}, {in: "2TB", want: 2e12},
		{in: "1.5K", want: 1536}, {in: "1.5M", want: 3 << 19}, {in: "3.5MB", want: 3_500_000}, {in: "6.6MB", want: 6_600_000},
		{in: "16 MiB", want: 16 << 20}, {in: " 16MiB ", want: 16 << 20},
		{in: "18446744073709551615", want: math.MaxUint64},
		{in: "", err: "not a size"},
		{in: "M", err: "not a size"},
		{in: "-1", err: "not a size"},
		{in: "+1", err: "not a size"},
		{in: "0x10", err: "not a size"},
		{in: "1_000", err: "not a size"},
		{in: "1e3", err: "not a size"},
		{in: "1.", err: "not a size"},
		{in: ".5K", err: "not a size"},
		{in: "1X", err: "not a size"},
		{in: "1Mb/s", err: "not a size"},
		{in: "0.5B", err: "not a whole number of bytes"},
		{in: "1.0001K", err: "not a whole number of bytes"},
		{in: "18446744073709551616", err: "out of range"},
		{in: "16777216T", err: "out of range"},
		{in: "1.0000000000000000001", err: "more than 18 decimals"},
	}
	for _, tt := range sizes {
		got, err := Size(tt.in)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("Size(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Size(%q) = %d, %v; want an error containing %q", tt.in, got, err, tt.err)
		}
		if err != nil && strings.Contains(err.Error(), "not a size") && !strings.Contains(err.Error(), "KiB") {
			t.Errorf("Size(%q): %v: the message should name the accepted spellings", tt.in, err)
		}
	}

	uints := []struct {
		in     string
		lo, hi uint64
		want   uint64
		err    string
	}{
		{in: "0", hi: 10, want: 0},
		{in: "10", hi: 10, want: 10},
		{in: "0100", hi: 1000, want: 100}, // decimal, never octal: was 64 in vdisk
		{in: "010", hi: 100, want: 10},
		{in: "0x10", hi: 100, want: 16},
		{in: "0X1f", hi: 100, want: 31},
		{in: "0xffffffffffffffff", hi: math.MaxUint64, want: math.MaxUint64},
		{in: "11", lo: 12, hi: 20, err: "out of range 12..20"},
		{in: "21", lo: 12, hi: 20, err: "out of range 12..20"},
		{in: "18446744073709551616", hi: math.MaxUint64, err: "out of range"},
		{in: "", hi: 10, err: "not a number"},
		{in: "0x", hi: 10, err: "not a number"},
		{in: "0b11", hi: 10, err: "not a number"},
		{in: "0o7", hi: 10, err: "not a number"},
		{in: "1_000", hi: 10000, err: "not a number"},
		{in: "-1", hi: 10, err: "not a number"},
		{in: "+1", hi: 10, err: "not a number"},
		{in: "4k", hi: 10000, err: "not a number"},
		{in: "0xg", hi: 10, err: "not a number"},
		{in: "1.0", hi: 10, err: "not a number"},
	}
	for _, tt := range uints {
		got, err := Uint(tt.in, tt.lo, tt.hi)
		switch {
		case tt.err == "" && (err != nil || got != tt.want):
			t.Errorf("Uint(%q) = %d, %v; want %d", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Uint(%q, %d, %d) = %d, %v; want an error containing %q", tt.in, tt.lo, tt.hi, got, err, tt.err)
		}
	}

	for in, want := range map[string]bool{
		"1": true, "true": true, "TRUE": true, "True": true, "yes": true, "Yes": true, "on": true, "ON": true,
		"0": false, "false": false, "FALSE": false, "no": false, "NO": false, "off": false, "Off": false,
	} {
		if got, err := Bool(in); err != nil || got != want {
			t.Errorf("Bool(%q) = %v, %v; want %v", in, got, err, want)
		}
	}
	for _, in := range []string{"", "2", "01", "y", "n", "t", "f", "enable", "-1"} {
		if _, err := Bool(in); err == nil || !strings.Contains(err.Error(), "yes or no") {
			t.Errorf("Bool(%q): %v, want an error naming the spellings", in, err)
		}
	}

	for _, ok := range []string{"A", "Z9", "TAPE01L9", "00000001", "DDS001"} {
		if err := Barcode(ok); err != nil {
			t.Errorf("Barcode(%q): %v", ok, err)
		}
	}
	for _, bad := range []string{"", "ABCDEFGHI", "abc123", "tape01", "backup-2024.01", "A.B", "A_B", "A-B", "AB/C",
		"..", ".A", "A B", "../ETC", "ÄBC", "AB\x00"} {
		if err := Barcode(bad); err == nil || !strings.Contains(err.Error(), "1 to 8 characters A-Z 0-9") {
			t.Errorf("Barcode(%q): %v, want refused with the rule", bad, err)
		}
	}

	splits := []struct {
		in   string
		want []Pair
		err  string
	}{
		{in: "", want: nil},
		{in: "a=1;b=2", want: []Pair{{"a", "1", true}, {"b", "2", true}}},
		{in: " a = 1 ; b=2 ", want: []Pair{{"a", "1", true}, {"b", "2", true}}},
		{in: "a=1;", want: []Pair{{"a", "1", true}}},
		{in: "a=1;;b=2", want: []Pair{{"a", "1", true}, {"b", "2", true}}},
		{in: ";a=1; ;", want: []Pair{{"a", "1", true}}},
		{in: "a=;busy", want: []Pair{{"a", "", true}, {"busy", "", false}}},
		{in: "a=b=c", want: []Pair{{"a", "b=c", true}}},
		{in: "a=1;a=2", err: "a: given twice"},
		{in: "a=1; a =2", err: "a: given twice"},
		{in: "=1", err: "empty key"},
		{in: "a=1,b=2", err: "','"},
		{in: "a=x:y", err: "':'"},
	}
	for _, tt := range splits {
		got, err := Split(tt.in)
		switch {
		case tt.err == "" && (err != nil || !reflect.DeepEqual(got, tt.want)):
			t.Errorf("Split(%q) = %v, %v; want %v", tt.in, got, err, tt.want)
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("Split(%q) = %v, %v; want an error containing %q", tt.in, got, err, tt.err)
		}
	}
}

func TestFormatSize(t *testing.T) {
	for n, want := range map[uint64]string{
		0: "0", 1: "1", 1000: "1KB", 1024: "1KiB", 1536: "1.5KiB", 64 << 20: "64MiB", 1 << 30: "1GiB",
		32 << 40: "32TiB", 1e6: "1MB", 1500000000: "1.5GB", 3 << 19: "1.5MiB", 1000000001: "1000000001",
	} {
		if got := FormatSize(n); got != want {
			t.Errorf("FormatSize(%d) = %q, want %q", n, got, want)
		}
		if back, err := Size(FormatSize(n)); err != nil || back != n {
			t.Errorf("Size(FormatSize(%d)) = %d, %v", n, back, err)
		}
	}
	for n, want := range map[uint64]string{160e6: "160MB", 3_500_000: "3.5MB", 1 << 30: "1GiB", 1<<30 + 1: "1073741825", 4096: "4.096KB"} {
		if got := FormatSizeSI(n); got != want {
			t.Errorf("FormatSizeSI(%d) = %q, want %q", n, got, want)
		}
	}
}

func TestBuilder(t *testing.T) {
	var b Builder
	if b.String() != "" {
		t.Fatal("zero Builder not empty")
	}
	b.Add("personality", "lto9")
	b.Bool("memory", true)
	b.Size("capacity", 64<<20)
	b.Uint("max_block", 65536)
	b.Key("busy")
	const want = "personality=lto9;memory=1;capacity=64MiB;max_block=65536;busy"
	if got := b.String(); got != want {
		t.Errorf("Builder = %q, want %q", got, want)
	}
	if _, err := Split(want); err != nil {
		t.Errorf("Split(Builder output): %v", err)
	}
}

func TestBarcodeSeries(t *testing.T) {
	for _, tc := range []struct {
		first string
		n     int
		want  []string
		err   string
	}{
		{"A00001L8", 3, []string{"A00001L8", "A00002L8", "A00003L8"}, ""},
		{"VSC009L9", 2, []string{"VSC009L9", "VSC010L9"}, ""},
		{"CLN001LU", 1, []string{"CLN001LU"}, ""},
		{"TAPE09", 2, []string{"TAPE09", "TAPE10"}, ""},
		{"T1X", 2, []string{"T1X", "T2X"}, ""},             // digits before a trailing letter
		{"ABC123L", 2, []string{"ABC123L", "ABC124L"}, ""}, // seven characters: no media id
		{"A99", 2, nil, "run past 2 digits"},
		{"A99L8", 2, []string{"A99L8", "A99L9"}, ""}, // five characters: no media id, the 8 counts
		{"A00098L8", 2, []string{"A00098L8", "A00099L8"}, ""},
		{"A99999L8", 2, nil, "run past 5 digits"},
		{"ABCDEFL8", 1, nil, "no digits"},
		{"abc1", 1, nil, "want 1 to 8 characters"},
		{"A1", 0, nil, "count 0"},
		{"A1", MaxSeries + 1, nil, "count"},
	} {
		got, err := BarcodeSeries(tc.first, tc.n)
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s×%d: %v, want an error containing %q", tc.first, tc.n, err, tc.err)
			}
			continue
		}
		if err != nil || !slices.Equal(got, tc.want) {
			t.Errorf("%s×%d = %v, %v; want %v", tc.first, tc.n, got, err, tc.want)
		}
	}
}

func TestNames(t *testing.T) {
	long := strings.Repeat("a", 64)
	for _, tc := range []struct {
		s               string
		device, subtype bool
	}{
		{"disk0", true, true},
		{"tape_0", true, true},
		{"lib-0.a", true, false},
		{"0disk", true, false}, // a leading digit: a device name, not a D-Bus element
		{"_x", true, true},
		{long, true, true},
		{long + "a", false, false},
		{"", false, false},
		{".x", false, false},
		{"-x", false, false},
		{"a/b", false, false},
		{"a b", false, false},
		{"a,b", false, false},
		{"é", false, false},
	} {
		if err := DeviceName(tc.s); (err == nil) != tc.device {
			t.Errorf("DeviceName(%q) = %v, want ok %v", tc.s, err, tc.device)
		}
		if err := Subtype(tc.s); (err == nil) != tc.subtype {
			t.Errorf("Subtype(%q) = %v, want ok %v", tc.s, err, tc.subtype)
		}
	}
	for s, ok := range map[string]bool{"size=1G;lbs=4096": true, "": true, "a=1,b=2": false, "a:b": false, "a\nb": false, "a\x00": false} {
		if err := CheckChars(s); (err == nil) != ok {
			t.Errorf("CheckChars(%q) = %v, want ok %v", s, err, ok)
		}
	}
}

// BenchmarkSplitManyPairs is the hostile cfgstring of many distinct keys
// (`--check-config` took 19 s for 60,000 pairs while the duplicate check
// scanned every earlier pair): the cost per pair must stay flat.
func BenchmarkSplitManyPairs(b *testing.B) {
	var sb strings.Builder
	for i := range 60000 {
		fmt.Fprintf(&sb, "k%d=1;", i)
	}
	s := sb.String()
	for b.Loop() {
		if _, err := Split(s); err != nil {
			b.Fatal(err)
		}
	}
}
