package main

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/tape/cartridge"
)

func mediaCreate(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var cf commonFlags
	var kf createFlags
	fs := newFlagSet("media", mediaSub("create"), stderr)
	cf.register(fs, true)
	kf.register(fs)
	count := fs.Int("count", 1, "create `N` cartridges, labelled from --barcode up (A00001L8, A00002L8, ...: the last run of digits counts, an LTO media id L8 stays)")
	if err := parseNoArgs(fs, &cf, args); err != nil {
		return err
	}
	opts, err := kf.options()
	if err != nil {
		return err
	}
	labels, err := cfgstring.BarcodeSeries(cf.barcode, *count)
	if err != nil {
		return usagef("--barcode %s --count %d: %v", cf.barcode, *count, err)
	}
	// None may exist: a library's worth is created whole or not started.
	for _, b := range labels {
		if _, err := os.Lstat(cartridge.Path(cf.dir, b)); err == nil {
			return fmt.Errorf("%s: %w (nothing created)", b, cartridge.ErrExists)
		}
	}
	for _, b := range labels {
		if err := cartridge.Create(cf.dir, b, opts); err != nil {
			return err
		}
		if _, err := fmt.Fprintf(stdout, "created %s\n", cartridge.Path(cf.dir, b)); err != nil {
			return err
		}
	}
	return nil
}

type listEntry struct {
	Barcode    string   `json:"barcode"`
	State      string   `json:"state"` // "ok", "in use", or an error
	Capacity   int64    `json:"capacity_bytes,omitempty"`
	Used       int64    `json:"used_bytes,omitempty"`
	Partitions int      `json:"partitions,omitempty"`
	Density    uint8    `json:"density,omitempty"`
	Flags      []string `json:"flags,omitempty"`
}

func mediaList(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var cf commonFlags
	fs := newFlagSet("media", mediaSub("list"), stderr)
	cf.register(fs, false)
	asJSON := fs.Bool("json", false, "JSON output")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(pos); err != nil {
		return err
	}
	if err := cf.checkDir(); err != nil {
		return err
	}
	barcodes, err := cartridge.List(cf.dir)
	if err != nil {
		return err
	}
	entries := []listEntry{}
	for _, b := range barcodes {
		e := listEntry{Barcode: b, State: "ok"}
		m, err := cartridge.OpenReadOnly(cf.dir, b)
		switch {
		case errors.Is(err, cartridge.ErrInUse):
			e.State = "in use"
		case err != nil:
			e.State = "error: " + err.Error()
		default:
			info := m.Info()
			for i := range info.Partitions {
				e.Capacity += info.Capacity[i]
				e.Used += m.Used(i)
			}
			e.Partitions, e.Density, e.Flags = info.Partitions, info.Density, flagNames(m.Stat())
			_ = m.Close() // read-only
		}
		entries = append(entries, e)
	}
	if *asJSON {
		return writeJSON(stdout, entries)
	}
	w := bufio.NewWriter(stdout)
	p := &printer{w: w}
	p.printf("%-8s  %10s  %10s  %5s  %-7s  %s\n", "BARCODE", "CAPACITY", "USED", "PARTS", "DENSITY", "FLAGS")
	for _, e := range entries {
		if e.State != "ok" {
			p.printf("%-8s  %s\n", e.Barcode, e.State)
			continue
		}
		p.printf("%-8s  %10s  %10s  %5d  %-7s  %s\n", e.Barcode, formatSize(e.Capacity), formatSize(e.Used),
			e.Partitions, fmt.Sprintf("%#02x", e.Density), strings.Join(e.Flags, ","))
	}
	return p.done(w.Flush)
}

func mediaSet(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var cf commonFlags
	fs := newFlagSet("media", mediaSub("set"), stderr)
	cf.register(fs, true)
	var wp optBool
	fs.Var(&wp, "write-protect", "set (true, yes, on, 1) or clear (false, no, off, 0) the write-protect tab")
	if err := parseNoArgs(fs, &cf, args); err != nil {
		return err
	}
	if !wp.set {
		return usagef("nothing to set (--write-protect=true|false)")
	}
	m, err := openNamed(cf, cartridge.Open)
	if err != nil {
		return err
	}
	defer func() { _ = m.Close() }() // for the error returns; the Close below is checked
	if err := m.SetWriteProtected(bool(wp.v)); err != nil {
		return err
	}
	if err := m.Close(); err != nil {
		return err
	}
	_, err = fmt.Fprintf(stdout, "%s: write-protect %v\n", cf.barcode, bool(wp.v))
	return err
}
