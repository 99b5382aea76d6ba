package main

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

// defaultMediaDir is where vscsid keeps cartridges unless configured
// otherwise; $VSCSID_MEDIA_DIR overrides it.
const defaultMediaDir = "/var/lib/vscsid/media"

func mediaDir() string {
	if d := os.Getenv("VSCSID_MEDIA_DIR"); d != "" {
		return d
	}
	return defaultMediaDir
}

var mediaCommands []subcommand

func init() {
	mediaCommands = []subcommand{
		{"create", "--barcode B [flags]", "create an empty cartridge", `
Create an empty cartridge image <dir>/<B>.vtape. It is never overwritten:
creating an existing barcode fails. Barcodes are 1 to 8 characters A-Z 0-9.`, mediaCreate},
		{"list", "[--json]", "list the cartridges of a media directory", `
List the cartridges of the media directory with their capacity and use. A
cartridge loaded in a drive is shown as in use.`, mediaList},
		{"inspect", "--barcode B [--json]", "show a cartridge's header, partitions and files", `
Show a cartridge: header, flags, partitions (capacity, use, objects), what
opening recovered after the last sync point, the files on each partition and
the attributes (MAM). Reading the file list walks every record header.`, mediaInspect},
		{"dump", "--barcode B [--partition N] [--json]", "list every object with its checksum status", `
Print one line per logical object: partition, object number, file number,
set number, kind, length, file offset, and whether the block data matches
its CRC (every block is read).`, mediaDump},
		{"import", "--barcode B [create flags] [--format auto|simh|e11] FILE.tap", "create a cartridge from a SIMH .tap image", `
Create cartridge B and fill partition 0 (or --partition) from a SIMH magtape
image: records become blocks, tape marks filemarks. FILE "-" reads standard
input. Odd-length records are padded (SIMH) or not (E11); auto detects it.
If the import fails the new cartridge is removed.`, mediaImport},
		{"export", "--barcode B [--partition N] [--format simh|e11] FILE.tap", "write a partition as a SIMH .tap image", `
Write partition 0 (or --partition) of cartridge B as a SIMH magtape image.
FILE "-" writes standard output; an existing FILE is not replaced without
--force. SIMH has no setmarks: a setmark fails the export unless
--skip-setmarks.`, mediaExport},
		{"set", "--barcode B --write-protect=true|false", "change a cartridge's write-protect tab", `
Set or clear the write-protect tab of cartridge B (takes effect at the next
load).`, mediaSet},
	}
}

func runMedia(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	return dispatch(ctx, "media", mediaCommands, args, stdout, stderr)
}

func mediaSub(name string) subcommand {
	for _, s := range mediaCommands {
		if s.name == name {
			return s
		}
	}
	panic("no media subcommand " + name)
}

// commonFlags are --dir and --barcode.
type commonFlags struct {
	dir, barcode string
}

func (c *commonFlags) register(fs *flag.FlagSet, barcode bool) {
	fs.StringVar(&c.dir, "dir", mediaDir(), "media `directory` ($VSCSID_MEDIA_DIR sets the default)")
	if barcode {
		fs.StringVar(&c.barcode, "barcode", "", "cartridge `barcode` (1-8 characters A-Z 0-9)")
	}
}

func (c *commonFlags) check() error {
	if c.barcode == "" {
		return usagef("--barcode is required")
	}
	if err := cartridge.ValidateBarcode(c.barcode); err != nil {
		return usagef("--barcode: %v", err)
	}
	return nil
}

// createFlags are the cartridge options.
type createFlags struct {
	capacity, earlyWarning sizeFlag
	partitions             partitionsFlag
	density                densityFlag
	writeProtect, worm     bool
}

func (c *createFlags) register(fs *flag.FlagSet) {
	c.capacity = cartridge.DefaultCapacity
	c.earlyWarning = 0
	fs.Var(&c.capacity, "capacity", "native capacity `size`, e.g. 2GiB, 500MB, 1T (record headers count)")
	fs.Var(&c.earlyWarning, "early-warning", "early-warning zone `size` before the end of each partition (default 16MiB, at most a quarter of a partition)")
	fs.Var(&c.partitions, "partitions", "partition `sizes`, comma-separated, the last may be 0 for the rest, e.g. 1GiB,0 (default: one partition)")
	fs.Var(&c.density, "density", "density `code`: a number (0x5a) or lto1..lto9, ltom8 (default 0: the drive's default)")
	fs.BoolVar(&c.writeProtect, "write-protect", false, "set the write-protect tab")
	fs.BoolVar(&c.worm, "worm", false, "write-once medium: data can be appended, never overwritten")
}

func (c *createFlags) options() cartridge.CartridgeOptions {
	return cartridge.CartridgeOptions{
		Capacity: int64(c.capacity), EarlyWarning: int64(c.earlyWarning),
		Partitions: c.partitions, Density: uint8(c.density),
		WriteProtected: c.writeProtect, WORM: c.worm,
	}
}

func noArgs(pos []string) error {
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	return nil
}

// parseNoArgs parses the flags of a subcommand that takes no positional
// argument and checks the common ones.
func parseNoArgs(fs *flag.FlagSet, cf *commonFlags, args []string) error {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if err := noArgs(pos); err != nil {
		return err
	}
	return cf.check()
}

func mediaCreate(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var cf commonFlags
	var kf createFlags
	fs := newFlagSet("media", mediaSub("create"), stderr)
	cf.register(fs, true)
	kf.register(fs)
	if err := parseNoArgs(fs, &cf, args); err != nil {
		return err
	}
	if err := cartridge.CreateCartridge(cf.dir, cf.barcode, kf.options()); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "created %s\n", cartridge.CartridgePath(cf.dir, cf.barcode))
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
	barcodes, err := cartridge.ListCartridges(cf.dir)
	if err != nil {
		return err
	}
	entries := []listEntry{}
	for _, b := range barcodes {
		e := listEntry{Barcode: b, State: "ok"}
		m, err := cartridge.OpenCartridgeReadOnly(cf.dir, b)
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
			e.Partitions, e.Density, e.Flags = info.Partitions, info.Density, flagNames(m)
			m.Close()
		}
		entries = append(entries, e)
	}
	if *asJSON {
		return writeJSON(stdout, entries)
	}
	w := bufio.NewWriter(stdout)
	fmt.Fprintf(w, "%-8s  %10s  %10s  %5s  %-7s  %s\n", "BARCODE", "CAPACITY", "USED", "PARTS", "DENSITY", "FLAGS")
	for _, e := range entries {
		if e.State != "ok" {
			fmt.Fprintf(w, "%-8s  %s\n", e.Barcode, e.State)
			continue
		}
		fmt.Fprintf(w, "%-8s  %10s  %10s  %5d  %-7s  %s\n", e.Barcode, formatSize(e.Capacity), formatSize(e.Used),
			e.Partitions, fmt.Sprintf("%#02x", e.Density), strings.Join(e.Flags, ","))
	}
	return w.Flush()
}

func flagNames(m *cartridge.Image) []string {
	st := m.Stat()
	var f []string
	if st.WriteProtected {
		f = append(f, "write-protected")
	}
	if st.WORM {
		f = append(f, "worm")
	}
	return f
}

// openRO opens a cartridge for reading, with the error naming it.
func openRO(cf commonFlags) (*cartridge.Image, error) {
	m, err := cartridge.OpenCartridgeReadOnly(cf.dir, cf.barcode)
	if err != nil && !errors.Is(err, cartridge.ErrNotFound) {
		return nil, fmt.Errorf("cartridge %s in %s: %w", cf.barcode, cf.dir, err)
	}
	return m, err
}

type fileEntry struct {
	File     uint64 `json:"file"`
	First    uint64 `json:"first_object"`
	Blocks   uint64 `json:"blocks"`
	Bytes    uint64 `json:"bytes"`
	Setmarks uint64 `json:"setmarks,omitempty"`
	Closed   bool   `json:"closed"` // ends with a filemark
}

type inspectPartition struct {
	cartridge.PartitionStat
	Files      []fileEntry `json:"files"`
	WalkError  string      `json:"walk_error,omitempty"`
	Blocks     uint64      `json:"blocks"`
	BlockBytes uint64      `json:"block_bytes"`
}

type inspectOutput struct {
	cartridge.Stat
	Partitions []inspectPartition `json:"partitions"`
}

func mediaInspect(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var cf commonFlags
	fs := newFlagSet("media", mediaSub("inspect"), stderr)
	cf.register(fs, true)
	asJSON := fs.Bool("json", false, "JSON output")
	maxFiles := fs.Int("max-files", 50, "files to list per partition in text output (all in JSON; 0: none)")
	if err := parseNoArgs(fs, &cf, args); err != nil {
		return err
	}
	m, err := openRO(cf)
	if err != nil {
		return err
	}
	defer m.Close()
	st := m.Stat()
	out := inspectOutput{Stat: st}
	for _, ps := range st.Partitions {
		ip := inspectPartition{PartitionStat: ps, Files: []fileEntry{}}
		if err := walkFiles(m, &ip); err != nil {
			ip.WalkError = err.Error()
		}
		out.Partitions = append(out.Partitions, ip)
	}
	if *asJSON {
		return writeJSON(stdout, out)
	}
	w := bufio.NewWriter(stdout)
	printInspect(w, out, *maxFiles)
	return w.Flush()
}

// walkFiles walks the record headers of a partition and summarizes files.
func walkFiles(m *cartridge.Image, ip *inspectPartition) error {
	r := m.Records(ip.Index)
	cur := fileEntry{}
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			if cur.Blocks > 0 || cur.Setmarks > 0 {
				ip.Files = append(ip.Files, cur)
			}
			return nil
		}
		if err != nil {
			return err
		}
		switch rec.Kind {
		case tape.KindBlock:
			cur.Blocks++
			cur.Bytes += uint64(rec.Len)
			ip.Blocks++
			ip.BlockBytes += uint64(rec.Len)
		case tape.KindSetmark:
			cur.Setmarks++
		case tape.KindFilemark:
			cur.Closed = true
			ip.Files = append(ip.Files, cur)
			cur = fileEntry{File: rec.File + 1, First: rec.Object + 1}
		}
	}
}

func printInspect(w io.Writer, out inspectOutput, maxFiles int) {
	st := out.Stat
	fmt.Fprintf(w, "cartridge   %s  (%s)\n", st.Barcode, st.Path)
	fmt.Fprintf(w, "serial      %s\n", st.Serial)
	fmt.Fprintf(w, "created     %s\n", st.Created.UTC().Format(time.RFC3339))
	fmt.Fprintf(w, "density     %#02x\n", st.Density)
	flags := []string{}
	if st.WriteProtected {
		flags = append(flags, "write-protected")
	}
	if st.WORM {
		flags = append(flags, "worm")
	}
	if len(flags) == 0 {
		flags = append(flags, "none")
	}
	fmt.Fprintf(w, "flags       %s\n", strings.Join(flags, " "))
	fmt.Fprintf(w, "capacity    %s (%d bytes), early warning %s\n", formatSize(st.Capacity), st.Capacity, formatSize(st.EarlyWarning))
	fmt.Fprintf(w, "loads       %d, formats %d, volume change reference %d\n", st.LoadCount, st.FormatCount, st.VolumeChangeReference)
	fmt.Fprintf(w, "header      format version %d, slot %s, sequence %d\n", st.Version, st.HeaderSlot, st.HeaderSequence)
	fmt.Fprintf(w, "partitions  %d\n", len(out.Partitions))
	for _, p := range out.Partitions {
		pct := 0.0
		if p.Capacity > 0 {
			pct = 100 * float64(p.Used) / float64(p.Capacity)
		}
		fmt.Fprintf(w, "\npartition %d\n", p.Index)
		fmt.Fprintf(w, "  capacity  %s, early warning %s, region at offset %d\n", formatSize(p.Capacity), formatSize(p.EarlyWarning), p.Start)
		fmt.Fprintf(w, "  used      %s (%d bytes, %.1f%%)\n", formatSize(p.Used), p.Used, pct)
		fmt.Fprintf(w, "  objects   %d: %d blocks (%s of data), %d filemarks, %d setmarks\n",
			p.Objects, p.Blocks, formatSize(int64(p.BlockBytes)), p.Filemarks, p.Setmarks)
		fmt.Fprintf(w, "  recovery  %s\n", describeRecovery(p.Recovery))
		if p.WalkError != "" {
			fmt.Fprintf(w, "  ERROR     walking the records: %s\n", p.WalkError)
		}
		if maxFiles == 0 {
			continue
		}
		fmt.Fprintf(w, "  files     %d\n", len(p.Files))
		for i, f := range p.Files {
			if i == maxFiles {
				fmt.Fprintf(w, "    ... %d more (--max-files)\n", len(p.Files)-maxFiles)
				break
			}
			end := "filemark"
			if !f.Closed {
				end = "no filemark"
			}
			sm := ""
			if f.Setmarks > 0 {
				sm = fmt.Sprintf(", %d setmarks", f.Setmarks)
			}
			fmt.Fprintf(w, "    file %-5d object %-8d %s, %s%s (%s)\n", f.File, f.First, plural(f.Blocks, "block"), formatSize(int64(f.Bytes)), sm, end)
		}
	}
	if len(st.Attributes) > 0 {
		fmt.Fprintf(w, "\nattributes (host)\n")
		for _, a := range st.Attributes {
			fmt.Fprintf(w, "  %04Xh  partition %d  %s\n", a.ID, a.Partition, attrText(a.Value))
		}
	}
}

func plural(n uint64, what string) string {
	if n == 1 {
		return "1 " + what
	}
	return fmt.Sprintf("%d %ss", n, what)
}

func describeRecovery(r cartridge.Recovery) string {
	if r.Clean() {
		return "clean (ends where it was last synced)"
	}
	s := fmt.Sprintf("synced %d objects, recovered %d after the last sync point; stopped at %s", r.SyncedObjects, r.Objects-r.SyncedObjects, r.Stop)
	if r.TailBytes > 0 {
		s += fmt.Sprintf("; %d bytes after the end of data will be discarded by the next write", r.TailBytes)
	}
	return s
}

func attrText(v []byte) string {
	printable := true
	for _, c := range v {
		if c < 0x20 || c > 0x7e {
			printable = false
			break
		}
	}
	if printable {
		return strconv.Quote(string(v))
	}
	if len(v) > 32 {
		return fmt.Sprintf("%x... (%d bytes)", v[:32], len(v))
	}
	return fmt.Sprintf("%x", v)
}

type dumpLine struct {
	Partition int    `json:"partition"`
	Object    uint64 `json:"object"`
	File      uint64 `json:"file"`
	Set       uint64 `json:"set"`
	Kind      string `json:"kind"`
	Length    int    `json:"length"`
	Offset    int64  `json:"offset"`
	CRC       string `json:"crc,omitempty"` // "ok" or the error, blocks only
}

func mediaDump(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var cf commonFlags
	fs := newFlagSet("media", mediaSub("dump"), stderr)
	cf.register(fs, true)
	part := fs.Int("partition", -1, "only this partition (default: all)")
	asJSON := fs.Bool("json", false, "JSON lines output")
	if err := parseNoArgs(fs, &cf, args); err != nil {
		return err
	}
	m, err := openRO(cf)
	if err != nil {
		return err
	}
	defer m.Close()
	parts := []int{*part}
	if *part < 0 {
		parts = parts[:0]
		for i := range m.Info().Partitions {
			parts = append(parts, i)
		}
	} else if *part >= m.Info().Partitions {
		return usagef("--partition %d: the cartridge has %d", *part, m.Info().Partitions)
	}
	w := bufio.NewWriter(stdout)
	defer w.Flush()
	enc := json.NewEncoder(w)
	if !*asJSON {
		fmt.Fprintf(w, "%4s %10s %8s %6s %-8s %9s %14s %s\n", "PART", "OBJECT", "FILE", "SET", "KIND", "LENGTH", "OFFSET", "CRC")
	}
	bad := 0
	for _, p := range parts {
		r := m.Records(p)
		var next uint64 // the object Next reads
		for {
			rec, err := r.Next()
			if errors.Is(err, io.EOF) {
				break
			}
			if err != nil {
				return fmt.Errorf("partition %d object %d: %w", p, next, err)
			}
			next = rec.Object + 1
			l := dumpLine{Partition: p, Object: rec.Object, File: rec.File, Set: rec.Set, Kind: kindName(rec.Kind), Length: rec.Len, Offset: rec.Offset}
			if rec.Kind == tape.KindBlock {
				l.CRC = "ok"
				// Reading the whole block makes the image check its CRC.
				if _, err := io.Copy(io.Discard, r); err != nil {
					l.CRC = err.Error()
					bad++
				}
			}
			if *asJSON {
				if err := enc.Encode(l); err != nil {
					return err
				}
			} else {
				crc := l.CRC
				if crc == "" {
					crc = "-"
				}
				fmt.Fprintf(w, "%4d %10d %8d %6d %-8s %9d %14d %s\n", l.Partition, l.Object, l.File, l.Set, l.Kind, l.Length, l.Offset, crc)
			}
		}
	}
	if err := w.Flush(); err != nil {
		return err
	}
	if bad > 0 {
		return fmt.Errorf("%d blocks do not match their checksum", bad)
	}
	return nil
}

func kindName(k tape.Kind) string {
	switch k {
	case tape.KindBlock:
		return "block"
	case tape.KindFilemark:
		return "filemark"
	case tape.KindSetmark:
		return "setmark"
	}
	return "eod"
}

func mediaImport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var cf commonFlags
	var kf createFlags
	fs := newFlagSet("media", mediaSub("import"), stderr)
	cf.register(fs, true)
	kf.register(fs)
	format := fs.String("format", "auto", "odd-length records: auto, simh (padded) or e11 (unpadded)")
	part := fs.Int("partition", 0, "partition to fill")
	asJSON := fs.Bool("json", false, "JSON output")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one FILE.tap argument, got %d", len(pos))
	}
	if err := cf.check(); err != nil {
		return err
	}
	sf, err := cartridge.ParseSIMHFormat(*format)
	if err != nil {
		return usagef("--format: %v", err)
	}
	in := io.Reader(os.Stdin)
	if pos[0] != "-" {
		f, err := os.Open(pos[0])
		if err != nil {
			return err
		}
		defer f.Close()
		in = f
	}
	opts := kf.options()
	opts.WriteProtected = false // set after the import
	if err := cartridge.CreateCartridge(cf.dir, cf.barcode, opts); err != nil {
		return err
	}
	st, err := importInto(cf, in, sf, *part, kf.writeProtect)
	if err != nil {
		os.Remove(cartridge.CartridgePath(cf.dir, cf.barcode))
		return fmt.Errorf("%s (cartridge %s removed)", err, cf.barcode)
	}
	if *asJSON {
		return writeJSON(stdout, struct {
			Barcode string `json:"barcode"`
			Format  string `json:"format"`
			cartridge.SIMHStats
		}{cf.barcode, st.Format.String(), st})
	}
	fmt.Fprintf(stdout, "imported %s into %s: %d blocks (%s), %d filemarks, format %s",
		pos[0], cf.barcode, st.Blocks, formatSize(int64(st.Bytes)), st.Filemarks, st.Format)
	if st.BadRecords > 0 {
		fmt.Fprintf(stdout, ", %d bad records", st.BadRecords)
	}
	if st.Skipped > 0 {
		fmt.Fprintf(stdout, ", %d private/reserved objects skipped", st.Skipped)
	}
	if st.EOM {
		fmt.Fprint(stdout, ", stopped at end-of-medium marker")
	}
	fmt.Fprintln(stdout)
	return nil
}

func importInto(cf commonFlags, in io.Reader, sf cartridge.SIMHFormat, part int, wp bool) (cartridge.SIMHStats, error) {
	m, err := cartridge.OpenCartridge(cf.dir, cf.barcode)
	if err != nil {
		return cartridge.SIMHStats{}, err
	}
	defer m.Close()
	if err := m.Locate(part, 0); err != nil && !errors.Is(err, tape.ErrEndOfData) {
		return cartridge.SIMHStats{}, fmt.Errorf("partition %d: %w", part, err)
	}
	st, err := cartridge.ImportSIMH(m, in, sf)
	if err != nil {
		return st, err
	}
	if wp {
		if err := m.SetWriteProtected(true); err != nil {
			return st, err
		}
	}
	return st, m.Close()
}

func mediaExport(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var cf commonFlags
	fs := newFlagSet("media", mediaSub("export"), stderr)
	cf.register(fs, true)
	format := fs.String("format", "simh", "odd-length records: simh (padded) or e11 (unpadded)")
	part := fs.Int("partition", 0, "partition to export")
	skipSM := fs.Bool("skip-setmarks", false, "leave setmarks out instead of failing")
	eom := fs.Bool("eom", false, "end the image with an end-of-medium marker")
	force := fs.Bool("force", false, "replace an existing FILE")
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("want one FILE.tap argument, got %d", len(pos))
	}
	if err := cf.check(); err != nil {
		return err
	}
	sf, err := cartridge.ParseSIMHFormat(*format)
	if err != nil {
		return usagef("--format: %v", err)
	}
	m, err := openRO(cf)
	if err != nil {
		return err
	}
	defer m.Close()
	if *part < 0 || *part >= m.Info().Partitions {
		return usagef("--partition %d: the cartridge has %d", *part, m.Info().Partitions)
	}
	opts := cartridge.SIMHExportOptions{Format: sf, SkipSetmarks: *skipSM, EOM: *eom}
	if pos[0] == "-" {
		_, err := cartridge.ExportSIMH(m, *part, stdout, opts)
		return err
	}
	// Write next to the target and rename, so a failed export leaves no
	// partial file under the name.
	if _, err := os.Lstat(pos[0]); err == nil && !*force {
		return fmt.Errorf("%s exists (use --force to replace it)", pos[0])
	}
	tmp := pos[0] + ".tmp"
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	st, err := cartridge.ExportSIMH(m, *part, f, opts)
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, pos[0])
	}
	if err != nil {
		os.Remove(tmp)
		return err
	}
	fmt.Fprintf(stdout, "exported %s partition %d to %s: %d blocks (%s), %d filemarks, format %s",
		cf.barcode, *part, pos[0], st.Blocks, formatSize(int64(st.Bytes)), st.Filemarks, st.Format)
	if st.Skipped > 0 {
		fmt.Fprintf(stdout, ", %d setmarks left out", st.Skipped)
	}
	fmt.Fprintln(stdout)
	return nil
}

func mediaSet(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var cf commonFlags
	fs := newFlagSet("media", mediaSub("set"), stderr)
	cf.register(fs, true)
	var wp optBool
	fs.Var(&wp, "write-protect", "set (true) or clear (false) the write-protect tab")
	if err := parseNoArgs(fs, &cf, args); err != nil {
		return err
	}
	if !wp.set {
		return usagef("nothing to set (--write-protect=true|false)")
	}
	m, err := cartridge.OpenCartridge(cf.dir, cf.barcode)
	if err != nil {
		if errors.Is(err, cartridge.ErrNotFound) {
			return err
		}
		return fmt.Errorf("cartridge %s in %s: %w", cf.barcode, cf.dir, err)
	}
	defer m.Close()
	if err := m.SetWriteProtected(wp.v); err != nil {
		return err
	}
	if err := m.Close(); err != nil {
		return err
	}
	fmt.Fprintf(stdout, "%s: write-protect %v\n", cf.barcode, wp.v)
	return nil
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}

// optBool is a boolean flag that knows whether it was given.
type optBool struct{ v, set bool }

func (b *optBool) String() string { return strconv.FormatBool(b.v) }
func (b *optBool) Set(s string) error {
	v, err := strconv.ParseBool(s)
	if err != nil {
		return err
	}
	b.v, b.set = v, true
	return nil
}
func (b *optBool) IsBoolFlag() bool { return true }
