package fault

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"
)

// Value syntax shared by the rule and timing grammars. Numbers are decimal
// or 0x-prefixed hexadecimal (never octal: "010" is ten). Sizes take the
// suffixes of the vtape cfgstring (K, M, G, T: powers of 1024), the IEC
// ones (KiB, MiB, GiB, TiB) and the SI ones (KB, MB, GB, TB: powers of
// 1000), with an optional decimal fraction ("3.5MB"); a rate is a size
// followed by "/s".

// parseUint parses a decimal or 0x-hex unsigned number.
func parseUint(s string) (uint64, error) {
	if len(s) > 2 && (s[:2] == "0x" || s[:2] == "0X") {
		return strconv.ParseUint(s[2:], 16, 64)
	}
	if s == "" || s[0] < '0' || s[0] > '9' {
		return 0, errors.New("not a number")
	}
	return strconv.ParseUint(s, 10, 64)
}

// parseHexByte parses an ASC or ASCQ: hexadecimal as T10 writes them, with
// or without 0x ("11" is 0x11).
func parseHexByte(s string) (uint8, error) {
	h := strings.TrimPrefix(strings.TrimPrefix(s, "0x"), "0X")
	if h == "" || len(h) > 2 {
		return 0, errors.New("want one hexadecimal byte, 00..ff")
	}
	v, err := strconv.ParseUint(h, 16, 8)
	if err != nil {
		return 0, errors.New("want one hexadecimal byte, 00..ff")
	}
	return uint8(v), nil
}

// parseDuration parses a Go duration ("2ms", "1.5s", "250us") that is not
// negative.
func parseDuration(s string) (time.Duration, error) {
	d, err := time.ParseDuration(s)
	if err != nil {
		return 0, errors.New("want a duration such as 500us, 2ms or 1.5s")
	}
	if d < 0 {
		return 0, errors.New("negative")
	}
	return d, nil
}

var sizeUnits = []struct {
	suffix string
	mult   uint64
}{
	// Longest suffixes first so "MiB" is not read as "M" + "iB".
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12},
	{"K", 1 << 10}, {"M", 1 << 20}, {"G", 1 << 30}, {"T", 1 << 40},
	{"B", 1},
}

// parseSize parses a byte count with an optional unit and fraction. The
// result must be a whole number of bytes.
func parseSize(s string) (uint64, error) {
	num, mult := s, uint64(1)
	for _, u := range sizeUnits {
		if strings.HasSuffix(s, u.suffix) {
			num, mult = s[:len(s)-len(u.suffix)], u.mult
			break
		}
	}
	whole, frac, hasFrac := strings.Cut(num, ".")
	if whole == "" || (hasFrac && frac == "") {
		return 0, errors.New("want a size such as 4096, 64KiB, 16M or 3.5MB")
	}
	for _, c := range whole + frac {
		if c < '0' || c > '9' {
			return 0, errors.New("want a size such as 4096, 64KiB, 16M or 3.5MB")
		}
	}
	w, err := strconv.ParseUint(whole, 10, 64)
	if err != nil {
		return 0, errors.New("too large")
	}
	hi, v := bits.Mul64(w, mult)
	if hi != 0 {
		return 0, errors.New("too large")
	}
	if hasFrac {
		if len(frac) > 18 {
			return 0, errors.New("too many decimals")
		}
		f, _ := strconv.ParseUint(frac, 10, 64) // digits only, at most 18
		den := uint64(1)
		for range len(frac) {
			den *= 10
		}
		fhi, flo := bits.Mul64(f, mult)
		if fhi >= den {
			return 0, errors.New("too large")
		}
		q, r := bits.Div64(fhi, flo, den)
		if r != 0 {
			return 0, errors.New("not a whole number of bytes")
		}
		var carry uint64
		v, carry = bits.Add64(v, q, 0)
		if carry != 0 {
			return 0, errors.New("too large")
		}
	}
	return v, nil
}

// parseRate parses bytes per second: a size followed by "/s".
func parseRate(s string) (uint64, error) {
	n, ok := strings.CutSuffix(s, "/s")
	if !ok {
		return 0, errors.New("want a rate such as 160MB/s or 3.5MB/s")
	}
	return parseSize(n)
}

// formatSize writes n with the largest unit that divides it exactly,
// IEC units first (sizes of buffers are powers of two), then SI.
func formatSize(n uint64) string {
	return formatUnits(n, iecFirst)
}

// formatRate writes a rate, SI units first (drive rates are quoted in
// MB/s).
func formatRate(n uint64) string {
	return formatUnits(n, siFirst) + "/s"
}

var (
	iecFirst = []struct {
		suffix string
		mult   uint64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}, {"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}}
	siFirst = []struct {
		suffix string
		mult   uint64
	}{{"TB", 1e12}, {"GB", 1e9}, {"MB", 1e6}, {"KB", 1e3}, {"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}}
)

func formatUnits(n uint64, units []struct {
	suffix string
	mult   uint64
}) string {
	if n == 0 {
		return "0"
	}
	for _, u := range units {
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

// parseProb parses a probability in (0, 1].
func parseProb(s string) (float64, error) {
	p, err := strconv.ParseFloat(s, 64)
	if err != nil || math.IsNaN(p) {
		return 0, errors.New("want a probability such as 0.01")
	}
	if p <= 0 || p > 1 {
		return 0, errors.New("must be in (0, 1]")
	}
	return p, nil
}

// satAdd adds two non-negative durations, saturating at the maximum.
func satAdd(a, b time.Duration) time.Duration {
	if b > 0 && a > math.MaxInt64-b {
		return math.MaxInt64
	}
	return a + b
}

// xferDur is how long n bytes take at rate bytes/s (0 for rate 0),
// saturating at the maximum duration.
func xferDur(n, rate uint64) time.Duration {
	if rate == 0 || n == 0 {
		return 0
	}
	hi, lo := bits.Mul64(n, uint64(time.Second))
	if hi >= rate {
		return math.MaxInt64
	}
	q, _ := bits.Div64(hi, lo, rate)
	if q > math.MaxInt64 {
		return math.MaxInt64
	}
	return time.Duration(q)
}
