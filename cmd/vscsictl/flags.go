package main

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/tape"
)

// sizeFlag is a byte count in the shared size grammar of the cfgstrings
// (internal/cfgstring): K, KiB, M, MiB, G, GiB, T, TiB are 1024-based,
// KB, MB, GB, TB 1000-based, e.g. 2GiB, 1.5G, 500MB, 4096.
type sizeFlag int64

func (s *sizeFlag) String() string { return cfgstring.FormatSize(uint64(*s)) }

func (s *sizeFlag) Set(v string) error {
	n, err := parseSize(v)
	if err != nil {
		return err
	}
	*s = sizeFlag(n)
	return nil
}

// boolFlag is a boolean flag in the cfgstrings' grammar: 0 or 1, true or
// false, yes or no, on or off (strconv.ParseBool knows no yes/no/on/off).
// Given alone (--write-protect) it is true.
type boolFlag bool

func (b *boolFlag) String() string { return cfgstring.FormatBool(bool(*b)) }

func (b *boolFlag) Set(v string) error {
	x, err := cfgstring.Bool(v)
	if err != nil {
		return err
	}
	*b = boolFlag(x)
	return nil
}

// IsBoolFlag lets the flag be given without a value.
func (b *boolFlag) IsBoolFlag() bool { return true }

// optBool is a boolFlag that knows whether it was given.
type optBool struct {
	v   boolFlag
	set bool
}

func (b *optBool) String() string { return b.v.String() }

func (b *optBool) Set(s string) error {
	b.set = true
	return b.v.Set(s)
}

// IsBoolFlag lets the flag be given without a value.
func (b *optBool) IsBoolFlag() bool { return true }

// maxSizeFlag bounds a size flag (cartridge capacities and offsets are
// int64).
const maxSizeFlag = 1 << 60

func parseSize(s string) (int64, error) {
	n, err := cfgstring.SizeIn(s, 0, maxSizeFlag)
	if err != nil {
		return 0, fmt.Errorf("bad size: %w", err)
	}
	return int64(n), nil
}

// formatSize prints n bytes for people, rounded to one decimal of a
// binary unit: 2 GiB, 1.5 MiB, 512 B. It is for listings, not a flag
// value: cfgstring.FormatSize writes sizes exactly.
func formatSize(n int64) string {
	units := []string{"B", "KiB", "MiB", "GiB", "TiB", "PiB"}
	f := float64(n)
	i := 0
	for f >= 1024 && i < len(units)-1 {
		f /= 1024
		i++
	}
	if i == 0 {
		return fmt.Sprintf("%d B", n)
	}
	s := strconv.FormatFloat(f, 'f', 1, 64)
	s = strings.TrimSuffix(s, ".0")
	return s + " " + units[i]
}

// partitionsFlag is a comma-separated list of partition sizes; the last
// may be 0 ("the rest").
type partitionsFlag []int64

func (p *partitionsFlag) String() string {
	var parts []string
	for _, s := range *p {
		parts = append(parts, cfgstring.FormatSize(uint64(s)))
	}
	return strings.Join(parts, ",")
}

func (p *partitionsFlag) Set(v string) error {
	var sizes []int64
	for _, f := range strings.Split(v, ",") {
		n, err := parseSize(f)
		if err != nil {
			return err
		}
		sizes = append(sizes, n)
	}
	if len(sizes) < 1 || len(sizes) > 4 {
		return fmt.Errorf("%d partitions (want 1 to 4)", len(sizes))
	}
	*p = sizes
	return nil
}

// densityFlag is a density code: a number or a format's name
// (tape.DensityNames).
type densityFlag uint8

func (d *densityFlag) String() string { return fmt.Sprintf("%#02x", uint8(*d)) }

func (d *densityFlag) Set(v string) error {
	if c, ok := tape.DensityCode(v); ok {
		*d = densityFlag(c)
		return nil
	}
	n, err := cfgstring.Uint(v, 0, 0xff)
	if err != nil {
		return fmt.Errorf("bad density %q (want a code such as 0x5a, or one of %s)", v, strings.Join(tape.DensityNames(), " "))
	}
	*d = densityFlag(n)
	return nil
}
