package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"

	"github.com/vscsid/vscsid/internal/cfgstring"
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
		{"create", "--barcode B [--count N] [flags]", "create empty cartridges", `
Create an empty cartridge image <dir>/<B>.vtape, or with --count N a
library's worth labelled from B up (--barcode A00001L8 --count 20: A00001L8
to A00020L8). A cartridge is never overwritten: creating an existing
barcode fails, and --count creates nothing if any of its barcodes exists.
Barcodes are 1 to 8 characters A-Z 0-9.`, mediaCreate},
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
The cartridge is built in a hidden .import-* directory beside the others and
appears under its name only when complete: an import that fails, or that
SIGINT or SIGTERM stops, leaves nothing behind (one killed outright leaves
only that hidden directory, which is not a cartridge: remove it).`, mediaImport},
		{"export", "--barcode B [--partition N] [--format simh|e11] FILE.tap", "write a partition as a SIMH .tap image", `
Write partition 0 (or --partition) of cartridge B as a SIMH magtape image.
FILE "-" writes standard output; an existing FILE is not replaced without
--force, and only a regular file ever is (never a device node, FIFO,
directory or symlink). The image is written to a new temporary file
beside FILE and renamed into place. SIMH has no setmarks: a setmark fails the export unless
--skip-setmarks.`, mediaExport},
		{"set", "--barcode B --write-protect=true|false", "change a cartridge's write-protect tab", `
Set or clear the write-protect tab of cartridge B (takes effect at the next
load).`, mediaSet},
	}
	for i := range commands {
		if commands[i].name == "media" {
			commands[i].subs = mediaCommands
		}
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

// checkDir refuses an empty --dir.
func (c *commonFlags) checkDir() error {
	if c.dir == "" {
		return usagef("--dir is empty (give the media directory; an empty one would be the current directory)")
	}
	return nil
}

// checkPartition refuses a --partition the cartridge m does not have.
func checkPartition(part int, m *cartridge.Image) error {
	if n := m.Info().Partitions; part < 0 || part >= n {
		return usagef("--partition %d: not a partition of this cartridge (it has %d, numbered 0 to %d)", part, n, n-1)
	}
	return nil
}

func (c *commonFlags) check() error {
	if err := c.checkDir(); err != nil {
		return err
	}
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
	writeProtect, worm     boolFlag
}

func (c *createFlags) register(fs *flag.FlagSet) {
	c.capacity = cartridge.DefaultCapacity
	c.earlyWarning = 0
	fs.Var(&c.capacity, "capacity", "native capacity `size`, e.g. 2GiB, 500MB, 1T (record headers count)")
	fs.Var(&c.earlyWarning, "early-warning", "early-warning zone `size` before the end of each partition (default 16MiB; at most a quarter of the capacity, and a partition uses at most a quarter of its own size)")
	fs.Var(&c.partitions, "partitions", "partition `sizes`, comma-separated, the last may be 0 for the rest, e.g. 1GiB,0 (default: one partition)")
	fs.Var(&c.density, "density", "density `code`: a number (0x5a) or a format ("+strings.Join(tape.DensityNames(), ", ")+"; lto10p is the 40 TB LTO-10 cartridge; default 0: the drive's default, or on an LTO drive the generation of the barcode's media id)")
	fs.Var(&c.writeProtect, "write-protect", "set the write-protect tab (true|false, yes|no, on|off, 1|0)")
	fs.Var(&c.worm, "worm", "write-once medium: data can be appended, never overwritten")
}

func (c *createFlags) options() (cartridge.Options, error) {
	if c.capacity == 0 {
		return cartridge.Options{}, usagef("--capacity 0: give a size of at least %s (the default is %s)",
			cfgstring.FormatSize(cartridge.MinPartitionSize), cfgstring.FormatSize(cartridge.DefaultCapacity))
	}
	return cartridge.Options{
		Capacity: int64(c.capacity), EarlyWarning: int64(c.earlyWarning),
		Partitions: c.partitions, Density: uint8(c.density),
		WriteProtected: bool(c.writeProtect), WORM: bool(c.worm),
	}, nil
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

// openRO opens a cartridge for reading, with the error naming it.
func openRO(cf commonFlags) (*cartridge.Image, error) {
	return openNamed(cf, cartridge.OpenReadOnly)
}

// parseAndOpenRO parses the flags of a subcommand that takes no
// positional argument (parseNoArgs) and opens the cartridge for reading.
func parseAndOpenRO(fs *flag.FlagSet, cf *commonFlags, args []string) (*cartridge.Image, error) {
	if err := parseNoArgs(fs, cf, args); err != nil {
		return nil, err
	}
	return openRO(*cf)
}

// openNamed opens the cartridge with open; an error that does not name
// the cartridge (all but ErrNotFound) gets its barcode and directory.
func openNamed(cf commonFlags, open func(dir, barcode string) (*cartridge.Image, error)) (*cartridge.Image, error) {
	m, err := open(cf.dir, cf.barcode)
	if err != nil && !errors.Is(err, cartridge.ErrNotFound) {
		return nil, fmt.Errorf("cartridge %s in %s: %w", cf.barcode, cf.dir, err)
	}
	return m, err
}

// flagNames names the cartridge flags that are set.
func flagNames(st cartridge.Stat) []string {
	var f []string
	if st.WriteProtected {
		f = append(f, "write-protected")
	}
	if st.WORM {
		f = append(f, "worm")
	}
	return f
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
