package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	iofs "io/fs"
	"os"
	"path/filepath"

	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

func mediaImport(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	var cf commonFlags
	var kf createFlags
	fs := newFlagSet("media", mediaSub("import"), stderr)
	cf.register(fs, true)
	kf.register(fs)
	format := fs.String("format", "auto", "odd-length records: auto, simh (padded) or e11 (unpadded)")
	part := fs.Int("partition", 0, "partition to fill")
	asJSON := fs.Bool("json", false, "JSON output")
	file, sf, err := parseTapArgs(fs, &cf, args, format)
	if err != nil {
		return err
	}
	in := io.Reader(os.Stdin)
	if file != "-" {
		f, err := os.Open(file)
		if err != nil {
			return err
		}
		defer func() { _ = f.Close() }() // read-only
		in = f
	}
	opts, err := kf.options()
	if err != nil {
		return err
	}
	opts.WriteProtected = false // set after the import
	st, err := importCartridge(ctx, cf, opts, in, sf, *part, bool(kf.writeProtect))
	if err != nil {
		return err
	}
	if *asJSON {
		return writeJSON(stdout, struct {
			Barcode string `json:"barcode"`
			Format  string `json:"format"`
			cartridge.SIMHStats
		}{cf.barcode, st.Format.String(), st})
	}
	p := &printer{w: stdout}
	p.printf("imported %s into %s: %d blocks (%s), %d filemarks, format %s",
		file, cf.barcode, st.Blocks, formatSize(int64(st.Bytes)), st.Filemarks, st.Format)
	if st.BadRecords > 0 {
		p.printf(", %d bad records", st.BadRecords)
	}
	if st.Skipped > 0 {
		p.printf(", %d private/reserved objects skipped", st.Skipped)
	}
	if st.EOM {
		p.printf(", stopped at end-of-medium marker")
	}
	p.println()
	return p.err
}

// importCartridge makes the cartridge cf.barcode in cf.dir from the SIMH
// image in. The cartridge is built in a hidden staging directory inside
// cf.dir and appears under its name only when complete (link(2), which
// never replaces a cartridge made meanwhile): a failed or interrupted
// import (a signal ends it through ctx) removes what it made, and one
// killed outright leaves only the hidden directory .import-*, which no
// listing shows as a cartridge.
func importCartridge(ctx context.Context, cf commonFlags, opts cartridge.Options, in io.Reader, sf cartridge.SIMHFormat, part int, wp bool) (cartridge.SIMHStats, error) {
	final := cartridge.Path(cf.dir, cf.barcode)
	if _, err := os.Lstat(final); err == nil {
		return cartridge.SIMHStats{}, fmt.Errorf("%w: %s", cartridge.ErrExists, final)
	}
	stage, err := os.MkdirTemp(cf.dir, ".import-")
	if err != nil {
		return cartridge.SIMHStats{}, err
	}
	defer func() { _ = os.RemoveAll(stage) }() // only the staging copy: the cartridge is linked out of it
	if err := cartridge.Create(stage, cf.barcode, opts); err != nil {
		return cartridge.SIMHStats{}, err
	}
	sc := cf
	sc.dir = stage
	st, err := importInto(ctx, sc, in, sf, part, wp)
	if err != nil {
		return st, fmt.Errorf("%w (nothing was made: cartridge %s does not exist)", err, cf.barcode)
	}
	if err := os.Link(cartridge.Path(stage, cf.barcode), final); err != nil {
		if errors.Is(err, iofs.ErrExist) {
			return st, fmt.Errorf("%w: %s (made while importing; the import was discarded)", cartridge.ErrExists, final)
		}
		return st, err
	}
	return st, cartridge.SyncDir(cf.dir)
}

func importInto(ctx context.Context, cf commonFlags, in io.Reader, sf cartridge.SIMHFormat, part int, wp bool) (cartridge.SIMHStats, error) {
	m, err := cartridge.Open(cf.dir, cf.barcode)
	if err != nil {
		return cartridge.SIMHStats{}, err
	}
	defer func() { _ = m.Close() }() // for the error returns; the Close at the end is checked
	if err := m.Locate(part, 0); err != nil && !errors.Is(err, tape.ErrEndOfData) {
		return cartridge.SIMHStats{}, fmt.Errorf("partition %d: %w", part, err)
	}
	st, err := cartridge.ImportSIMH(ctx, m, in, sf)
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
	file, sf, err := parseTapArgs(fs, &cf, args, format)
	if err != nil {
		return err
	}
	m, err := openRO(cf)
	if err != nil {
		return err
	}
	defer func() { _ = m.Close() }() // read-only
	if err := checkPartition(*part, m); err != nil {
		return err
	}
	opts := cartridge.SIMHExportOptions{Format: sf, SkipSetmarks: *skipSM, EOM: *eom}
	if file == "-" {
		_, err := cartridge.ExportSIMH(m, *part, stdout, opts)
		return err
	}
	// Write a new file next to the target and rename it into place, so a
	// failed export leaves no partial file under the name. The temporary
	// file is created exclusively (CreateTemp: O_EXCL, a fresh name), so
	// nothing that exists there, a file or a symlink, is written through;
	// and only a regular file is ever replaced: --force does not turn a
	// device node, FIFO, socket, directory or symlink into a file.
	switch fi, err := os.Lstat(file); {
	case err == nil && !fi.Mode().IsRegular():
		return fmt.Errorf("%s exists and is not a regular file (%s): not replaced", file, cartridge.FileKind(fi.Mode()))
	case err == nil && !*force:
		return fmt.Errorf("%s exists (use --force to replace it)", file)
	case err != nil && !errors.Is(err, iofs.ErrNotExist):
		return err
	}
	f, err := os.CreateTemp(filepath.Dir(file), "."+filepath.Base(file)+".*.tmp")
	if err != nil {
		return fmt.Errorf("export to %s: %w", file, cartridge.StripPath(err))
	}
	tmp := f.Name()
	st, err := cartridge.ExportSIMH(m, *part, f, opts)
	if err == nil {
		err = f.Chmod(0o644)
	}
	if err == nil {
		err = f.Sync()
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(tmp, file)
	}
	if err == nil { // the rename is durable once the directory is
		err = cartridge.SyncDir(filepath.Dir(file))
	}
	if err != nil {
		_ = os.Remove(tmp) // best effort: err says what failed
		if pe := (*iofs.PathError)(nil); errors.As(err, &pe) && pe.Path == tmp {
			err = cartridge.StripPath(err) // the message names file, not tmp
		}
		return fmt.Errorf("export to %s: %w", file, err)
	}
	p := &printer{w: stdout}
	p.printf("exported %s partition %d to %s: %d blocks (%s), %d filemarks, format %s",
		cf.barcode, *part, file, st.Blocks, formatSize(int64(st.Bytes)), st.Filemarks, st.Format)
	if st.Skipped > 0 {
		p.printf(", %d setmarks left out", st.Skipped)
	}
	p.println()
	return p.err
}

// parseTapArgs parses the flags and the one FILE.tap argument of import
// and export, checks the common flags and parses the --format value.
func parseTapArgs(fs *flag.FlagSet, cf *commonFlags, args []string, format *string) (string, cartridge.SIMHFormat, error) {
	pos, err := parseInterleaved(fs, args)
	if err != nil {
		return "", 0, err
	}
	if len(pos) != 1 {
		return "", 0, usagef("want one FILE.tap argument, got %d", len(pos))
	}
	if err := cf.check(); err != nil {
		return "", 0, err
	}
	sf, err := cartridge.ParseSIMHFormat(*format)
	if err != nil {
		return "", 0, usagef("--format: %v", err)
	}
	return pos[0], sf, nil
}
