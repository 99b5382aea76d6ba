package fault

import (
	"errors"
	"math"
	"math/bits"
	"strconv"
	"strings"
	"time"

	"github.com/vscsid/vscsid/internal/cfgstring"
)

// Value syntax: numbers, sizes and the key=value split rule are the
// shared grammar of internal/cfgstring (numbers decimal or 0x hex, never
// octal: "010" is ten; sizes with K..TiB 1024-based and KB..TB 1000-based
// units and an optional fraction, "3.5MB"). A rate is a size followed by
// "/s"; durations are Go durations.

// parseUint parses a decimal or 0x-hex unsigned number.
func parseUint(s string) (uint64, error) { return cfgstring.Uint(s, 0, math.MaxUint64) }

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

// parseRate parses bytes per second: a size followed by "/s".
func parseRate(s string) (uint64, error) {
	n, ok := strings.CutSuffix(s, "/s")
	if !ok {
		return 0, errors.New("want a rate such as 160MB/s or 3.5MB/s")
	}
	return cfgstring.Size(n)
}

// formatRate writes a rate, 1000-based units first (drive rates are
// quoted in MB/s).
func formatRate(n uint64) string { return cfgstring.FormatSizeSI(n) + "/s" }

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
