// Package cfgstring is the one grammar of vscsid's key=value strings: the
// vdisk and vtape cfgstrings, the fault rules and timing models, and the
// sizes, numbers, booleans and barcodes in them and in vscsictl's flags.
//
// Split rule: pairs are separated by ';'; spaces around a pair, its key
// and its value are ignored; empty pairs (";;", a leading or trailing
// ';') are skipped, as saved targetcli configs may carry them; a key given
// twice is an error; ',', ':', newline and NUL are refused anywhere
// (CheckChars: the kernel splits dev_config on ',' and rtslib forbids
// ':').
//
// Values:
//   - an unsigned integer (Uint) is decimal or 0x-prefixed hexadecimal; a
//     leading zero is still decimal ("0100" is one hundred), and '_',
//     signs, 0b and 0o are refused;
//   - a size (Size) is a decimal number with an optional fraction and an
//     optional unit, case-insensitive: B; K, KiB, M, MiB, G, GiB, T, TiB
//     (powers of 1024); KB, MB, GB, TB (powers of 1000, as drive rates
//     are quoted: 160MB/s). The result must be a whole number of bytes
//     ("1.5K" is 1536, "0.5B" is refused). No hexadecimal;
//   - a boolean (Bool) is 0/1, true/false, yes/no or on/off,
//     case-insensitive;
//   - a duration (Duration) is Go's (500us, 2ms, 1.5s), not negative;
//   - a barcode (Barcode) is 1 to 8 characters of A-Z 0-9 (LTO volume
//     serial and media id), which is also a plain file name.
//
// The names a device goes by have one rule each here too: DeviceName (the
// configfs storage object name) and Subtype (the TCMU handler subtype).
//
// The package depends on the standard library only.
package cfgstring

import (
	"errors"
	"fmt"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Pair is one key=value of a cfgstring.
type Pair struct {
	Key, Value string
	// HasValue reports an '=' (the fault grammar has keys without one,
	// such as busy).
	HasValue bool
}

// Split splits s into its pairs by the split rule (see the package
// documentation). It does not know the keys: callers check them and the
// values.
func Split(s string) ([]Pair, error) {
	if err := CheckChars(s); err != nil {
		return nil, err
	}
	var pairs []Pair
	seen := map[string]bool{} // a scan of pairs would be quadratic in a hostile string
	for p := range strings.SplitSeq(s, ";") {
		p = strings.TrimSpace(p)
		if p == "" {
			continue
		}
		k, v, hasEq := strings.Cut(p, "=")
		k, v = strings.TrimSpace(k), strings.TrimSpace(v)
		if k == "" {
			return nil, fmt.Errorf("%q: empty key", p)
		}
		if seen[k] {
			return nil, fmt.Errorf("%s: given twice", k)
		}
		seen[k] = true
		pairs = append(pairs, Pair{Key: k, Value: v, HasValue: hasEq})
	}
	return pairs, nil
}

// Builder writes a canonical cfgstring: pairs in the order added,
// separated by ';'. The zero value is empty and ready to use.
type Builder struct{ b strings.Builder }

// Add appends key=value.
func (b *Builder) Add(key, value string) {
	b.Key(key)
	b.b.WriteByte('=')
	b.b.WriteString(value)
}

// Key appends a key without a value (the fault grammar's busy).
func (b *Builder) Key(key string) {
	if b.b.Len() > 0 {
		b.b.WriteByte(';')
	}
	b.b.WriteString(key)
}

// Uint appends key=n in decimal.
func (b *Builder) Uint(key string, n uint64) { b.Add(key, strconv.FormatUint(n, 10)) }

// Bool appends key=1 or key=0.
func (b *Builder) Bool(key string, v bool) { b.Add(key, FormatBool(v)) }

// Size appends key=FormatSize(n).
func (b *Builder) Size(key string, n uint64) { b.Add(key, FormatSize(n)) }

// String returns the cfgstring built so far.
func (b *Builder) String() string { return b.b.String() }

// Uint parses an unsigned integer in lo..hi: decimal, or hexadecimal with
// 0x (or 0X). The error names the range.
func Uint(s string, lo, hi uint64) (uint64, error) {
	digits, base := s, 10
	if len(s) > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X') {
		digits, base = s[2:], 16
	}
	if digits == "" {
		return 0, fmt.Errorf("%q is not a number (want decimal digits, or hexadecimal after 0x)", s)
	}
	for i := 0; i < len(digits); i++ {
		c := digits[i] | 0x20 // lower case for letters
		if (digits[i] < '0' || digits[i] > '9') && (base != 16 || c < 'a' || c > 'f') {
			return 0, fmt.Errorf("%q is not a number (want decimal digits, or hexadecimal after 0x)", s)
		}
	}
	n, err := strconv.ParseUint(digits, base, 64)
	if err != nil || n < lo || n > hi {
		return 0, fmt.Errorf("%q is out of range %d..%d", s, lo, hi)
	}
	return n, nil
}

// Bool parses a boolean: 0/1, true/false, yes/no, on/off, any case.
func Bool(s string) (bool, error) {
	switch strings.ToLower(s) {
	case "1", "true", "yes", "on":
		return true, nil
	case "0", "false", "no", "off":
		return false, nil
	}
	return false, fmt.Errorf("%q is not a boolean (want 0 or 1, true or false, yes or no, on or off)", s)
}

// Duration parses a Go duration ("2ms", "1.5s", "250us") that is not
// negative.
func Duration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("want a duration such as 500us, 2ms or 1.5s")
	}
	if d < 0 {
		return 0, errors.New("negative")
	}
	return d, nil
}

// FormatBool is the canonical spelling of a boolean: "1" or "0".
func FormatBool(v bool) string {
	if v {
		return "1"
	}
	return "0"
}

type unit struct {
	suffix string
	mult   uint64
}

// units are the size suffixes, canonical spelling first for each
// multiplier (FormatSize writes the first).
var units = []unit{
	{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10},
	{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3},
	{"T", 1 << 40}, {"G", 1 << 30}, {"M", 1 << 20}, {"K", 1 << 10},
	{"B", 1},
}

// SizeSpellings lists the accepted size spellings, for messages and help
// texts.
const SizeSpellings = "a byte count with an optional unit: K, M, G, T or KiB, MiB, GiB, TiB (1024-based), KB, MB, GB, TB (1000-based), e.g. 4096, 64MiB, 1.5G, 160MB"

// Size parses a byte count (see the package documentation).
func Size(s string) (uint64, error) {
	s = strings.TrimSpace(s)
	num, mult := s, uint64(1)
	for _, u := range units {
		if len(s) > len(u.suffix) && strings.EqualFold(s[len(s)-len(u.suffix):], u.suffix) {
			num, mult = strings.TrimRight(s[:len(s)-len(u.suffix)], " "), u.mult
			break
		}
	}
	bad := func() (uint64, error) {
		return 0, fmt.Errorf("%q is not a size (want %s)", s, SizeSpellings)
	}
	whole, frac, hasFrac := strings.Cut(num, ".")
	if whole == "" || hasFrac && frac == "" {
		return bad()
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return bad()
		}
	}
	tooLarge := fmt.Errorf("%q is out of range (at most %d bytes)", s, uint64(math.MaxUint64))
	w, err := strconv.ParseUint(whole, 10, 64)
	if err != nil {
		return 0, tooLarge
	}
	hi, v := bits.Mul64(w, mult)
	if hi != 0 {
		return 0, tooLarge
	}
	if !hasFrac {
		return v, nil
	}
	if len(frac) > 18 {
		return 0, fmt.Errorf("%q has more than 18 decimals", s)
	}
	f, _ := strconv.ParseUint(frac, 10, 64) // at most 18 digits
	den := uint64(1)
	for range len(frac) {
		den *= 10
	}
	fhi, flo := bits.Mul64(f, mult)
	q, r := bits.Div64(fhi, flo, den) // fhi < den: f < den
	if r != 0 {
		return 0, fmt.Errorf("%q is not a whole number of bytes", s)
	}
	v, carry := bits.Add64(v, q, 0)
	if carry != 0 {
		return 0, tooLarge
	}
	return v, nil
}

// SizeIn is Size bounded to lo..hi bytes; the error names the range.
func SizeIn(s string, lo, hi uint64) (uint64, error) {
	n, err := Size(s)
	if err == nil && (n < lo || n > hi) {
		err = fmt.Errorf("%q is out of range %s..%s", s, FormatSize(lo), FormatSize(hi))
	}
	return n, err
}

// FormatSize is the inverse of Size: n with the largest 1024-based unit
// that divides it (64MiB), else the largest 1000-based one (1500MB), else
// with up to three decimals (1.5KiB), else plain bytes.
func FormatSize(n uint64) string { return formatUnits(n, units[:8]) }

// FormatSizeSI is FormatSize preferring the 1000-based units, the way
// rates are quoted (160MB/s, not 156250KiB/s).
func FormatSizeSI(n uint64) string { return formatUnits(n, siFirst) }

var siFirst = append(append([]unit{}, units[4:8]...), units[:4]...)

func formatUnits(n uint64, us []unit) string {
	if n == 0 {
		return "0"
	}
	for _, u := range us {
		if n%u.mult == 0 {
			return strconv.FormatUint(n/u.mult, 10) + u.suffix
		}
		// Up to three decimals in a unit the value is at least one of and
		// less than a thousand of ("3.5MB", "1.5KiB").
		hi, m := bits.Mul64(n, 1000)
		if hi != 0 || n < u.mult || n/u.mult >= 1000 || m%u.mult != 0 {
			continue
		}
		q := m / u.mult
		frac := strconv.FormatUint(1000+q%1000, 10)[1:]
		return strconv.FormatUint(q/1000, 10) + "." + strings.TrimRight(frac, "0") + u.suffix
	}
	return strconv.FormatUint(n, 10)
}

// MaxBarcode is the longest barcode.
const MaxBarcode = 8

// errBarcode is the error of every refused barcode; callers name the
// barcode.
var errBarcode = errors.New("want 1 to 8 characters A-Z 0-9")

// Barcode checks a cartridge barcode: 1 to 8 characters of A-Z and 0-9
// (an LTO volume serial and media id, such as TAPE01L9). Lower case,
// dots and slashes are refused, so a barcode is always a plain file name.
func Barcode(s string) error {
	if len(s) == 0 || len(s) > MaxBarcode {
		return errBarcode
	}
	for i := 0; i < len(s); i++ {
		if c := s[i]; (c < 'A' || c > 'Z') && (c < '0' || c > '9') {
			return errBarcode
		}
	}
	return nil
}

// MaxSeries bounds BarcodeSeries: more cartridges than a large library
// has slots is a typo.
const MaxSeries = 10000

// BarcodeSeries returns n barcodes counting up from first, as a library's
// labels run: the last run of digits of the volume serial is incremented
// with its width kept (A00001L8, A00002L8, ...). The volume serial is the
// whole barcode except an LTO media id, two characters 'L' and a
// generation (L1-L9, LT-LZ for WORM) after six, which stays. It fails
// when first is not a barcode, has no digits to count in, or the count
// runs out of digits (A99L8 + 1).
func BarcodeSeries(first string, n int) ([]string, error) {
	if err := Barcode(first); err != nil {
		return nil, fmt.Errorf("barcode %q: %w", first, err)
	}
	if n < 1 || n > MaxSeries {
		return nil, fmt.Errorf("count %d: want 1..%d", n, MaxSeries)
	}
	serial, media := first, ""
	if len(first) == 8 && first[6] == 'L' {
		serial, media = first[:6], first[6:]
	}
	end := len(serial)
	for end > 0 && (serial[end-1] < '0' || serial[end-1] > '9') {
		end--
	}
	start := end
	for start > 0 && serial[start-1] >= '0' && serial[start-1] <= '9' {
		start--
	}
	if start == end {
		return nil, fmt.Errorf("barcode %q: no digits to count in", first)
	}
	width := end - start
	v, _ := strconv.ParseUint(serial[start:end], 10, 64) // at most 8 digits
	if last := v + uint64(n) - 1; len(strconv.FormatUint(last, 10)) > width {
		return nil, fmt.Errorf("barcode %q: %d cartridges run past %d digits", first, n, width)
	}
	out := make([]string, n)
	for i := range out {
		out[i] = fmt.Sprintf("%s%0*d%s%s", serial[:start], width, v+uint64(i), serial[end:], media)
	}
	return out, nil
}
