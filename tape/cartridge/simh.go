package cartridge

import (
	"bufio"
	"context"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/vscsid/vscsid/tape"
)

// SIMH magtape images (.tap), as described in "SIMH Magtape Representation
// and Handling" (Supnik, rev. 2022) and open-simh sim_tape.h/sim_tape.c:
//
//   - a file is a sequence of 32-bit little-endian metadata words and
//     records; end of file is end of medium;
//   - 00000000h is a tape mark; FFFFFFFFh end of medium; FFFFFFFEh an erase
//     gap (skipped); FFFEFFFFh a forward half gap (skip 2 bytes);
//   - any other word is a record: its high nibble is the class, the low 28
//     bits the length n; n data bytes follow, then the same word again.
//     Class 0 is a good record, class 8 a bad one (bit 31 is the "error"
//     flag of the older standard format); 1-6 are private records and 14
//     tape description records (both skipped by SIMH, and here); 7 is a
//     private marker (one word, skipped); 9-13 are reserved records (SIMH
//     skips them; so does this importer); class 15 values other than the
//     gap and EOM words are reserved markers (an error);
//   - SIMH standard format pads odd-length records with one byte (so the
//     next word is 2-byte aligned); the E11 format, which SIMH also reads
//     and writes, does not pad. Both exist in the wild.

// SIMHFormat selects how odd-length records are laid out.
type SIMHFormat int

const (
	// SIMHAuto means: on import, detect from the first odd-length record (a
	// padded trailer wins a tie); on export, SIMHPadded.
	SIMHAuto SIMHFormat = iota
	// SIMHPadded is the SIMH standard format: odd records padded to even.
	SIMHPadded
	// SIMHUnpadded is the E11 format: no padding.
	SIMHUnpadded
)

func (f SIMHFormat) String() string {
	switch f {
	case SIMHPadded:
		return "simh"
	case SIMHUnpadded:
		return "e11"
	}
	return "auto"
}

// ParseSIMHFormat parses "auto", "simh" (or "padded") and "e11" (or
// "unpadded").
func ParseSIMHFormat(s string) (SIMHFormat, error) {
	switch s {
	case "auto", "":
		return SIMHAuto, nil
	case "simh", "padded":
		return SIMHPadded, nil
	case "e11", "unpadded":
		return SIMHUnpadded, nil
	}
	return 0, fmt.Errorf("unknown SIMH format %q (want auto, simh or e11)", s)
}

// SIMHStats counts what an import or export moved.
type SIMHStats struct {
	Blocks    uint64 `json:"blocks"`
	Filemarks uint64 `json:"filemarks"`
	Bytes     uint64 `json:"bytes"`
	// BadRecords counts class 8 ("error") records; their data was imported.
	BadRecords uint64 `json:"bad_records"`
	// Skipped counts objects left out: private, description and reserved
	// records and private markers on import; setmarks on export.
	Skipped uint64 `json:"skipped"`
	Gaps    uint64 `json:"gaps"`
	// EOM is set when an end-of-medium marker ended the import (anything
	// after it is ignored) or was written by the export.
	EOM    bool       `json:"eom"`
	Format SIMHFormat `json:"-"`
}

const (
	simhTapeMark = 0x00000000
	simhEOM      = 0xFFFFFFFF
	simhGap      = 0xFFFFFFFE
	simhHalfGap  = 0xFFFEFFFF
	simhLenMask  = 0x0FFFFFFF
)

// ImportSIMH reads a SIMH .tap image from r and writes its records and tape
// marks to m at its current position. Errors name the byte offset in r.
// It stops with ctx's error once ctx is done (checked before every
// object: an endless stream of tape marks or gaps stops too).
func ImportSIMH(ctx context.Context, m *Image, r io.Reader, format SIMHFormat) (SIMHStats, error) {
	st := SIMHStats{Format: format}
	br := bufio.NewReaderSize(r, 1<<20)
	var off int64
	lr := &io.LimitedReader{R: br}
	done := ctx.Done()
	for {
		select {
		case <-done:
			return st, fmt.Errorf("simh: offset %d: %w", off, context.Cause(ctx))
		default:
		}
		b, err := br.Peek(4)
		if len(b) == 0 && errors.Is(err, io.EOF) {
			return st, nil
		}
		if len(b) < 4 {
			if err == nil || errors.Is(err, io.EOF) {
				return st, fmt.Errorf("simh: offset %d: file ends inside a metadata word", off)
			}
			return st, err
		}
		w := binary.LittleEndian.Uint32(b)
		class, n := w>>28, int64(w&simhLenMask)
		switch {
		case w == simhTapeMark:
			if err := m.WriteMark(tape.KindFilemark); err != nil {
				return st, fmt.Errorf("simh: offset %d: tape mark: %w", off, err)
			}
			st.Filemarks++
			off += skip(br, 4)
			continue
		case w == simhEOM:
			st.EOM = true
			return st, nil
		case w == simhGap:
			st.Gaps++
			off += skip(br, 4)
			continue
		case w == simhHalfGap:
			st.Gaps++
			off += skip(br, 2)
			continue
		case class == 15:
			return st, fmt.Errorf("simh: offset %d: reserved marker %#08x", off, w)
		case class == 7:
			st.Skipped++
			off += skip(br, 4)
			continue
		}
		start := off
		off += skip(br, 4)
		// A record of class 0 (good) or 8 (bad) is imported; the others
		// are skipped, as SIMH does.
		keep := (class == 0 || class == 8) && n > 0
		switch {
		case keep && n > MaxBlockLen:
			return st, fmt.Errorf("simh: offset %d: record of %d bytes exceeds the largest block (%d)", start, n, MaxBlockLen)
		case keep:
			lr.N = n
			if _, err := m.WriteBlock(lr, int(n), tape.Encoding{}); err != nil {
				if errors.Is(err, io.ErrUnexpectedEOF) {
					return st, fmt.Errorf("simh: offset %d: file ends inside a record of %d bytes", start, n)
				}
				return st, fmt.Errorf("simh: offset %d: record of %d bytes: %w", start, n, err)
			}
			st.Blocks++
			st.Bytes += uint64(n)
			if class == 8 {
				st.BadRecords++
			}
		default:
			if d, _ := br.Discard(int(n)); int64(d) < n {
				return st, fmt.Errorf("simh: offset %d: file ends inside a record of %d bytes", start, n)
			}
			if class == 8 {
				st.BadRecords++
			} else {
				st.Skipped++
			}
		}
		off += n
		// Trailer, after the pad byte if there is one.
		pad := int64(0)
		if n%2 == 1 {
			if st.Format == SIMHAuto {
				t, _ := br.Peek(5)
				switch {
				case len(t) == 5 && binary.LittleEndian.Uint32(t[1:]) == w:
					st.Format = SIMHPadded
				case len(t) >= 4 && binary.LittleEndian.Uint32(t) == w:
					st.Format = SIMHUnpadded
				default:
					return st, fmt.Errorf("simh: offset %d: no trailing length after the record at %d (neither padded nor unpadded)", off, start)
				}
			}
			if st.Format == SIMHPadded {
				pad = 1
			}
		}
		t, _ := br.Peek(int(pad) + 4)
		if len(t) < int(pad)+4 {
			return st, fmt.Errorf("simh: offset %d: file ends before the trailing length of the record at %d", off, start)
		}
		if tw := binary.LittleEndian.Uint32(t[pad:]); tw != w {
			return st, fmt.Errorf("simh: offset %d: trailing length %#08x does not match %#08x of the record at %d", off+pad, tw, w, start)
		}
		off += skip(br, int(pad)+4)
	}
}

// skip discards n bytes already peeked and returns n.
func skip(br *bufio.Reader, n int) int64 {
	_, _ = br.Discard(n)
	return int64(n)
}

// SIMHExportOptions control ExportSIMH.
type SIMHExportOptions struct {
	// Format: SIMHPadded (also for SIMHAuto) or SIMHUnpadded.
	Format SIMHFormat
	// SkipSetmarks drops setmarks, which SIMH cannot represent; without
	// it a setmark fails the export.
	SkipSetmarks bool
	// EOM ends the file with an end-of-medium marker (otherwise the end of
	// the file is the end of medium, as usual).
	EOM bool
}

// ExportSIMH writes partition part of m to w as a SIMH .tap image, from BOP
// to end of data. Block data is verified against its checksum on the way.
// It leaves m positioned at the end of data of part (or where it failed).
func ExportSIMH(m *Image, part int, w io.Writer, opts SIMHExportOptions) (SIMHStats, error) {
	st := SIMHStats{Format: opts.Format}
	if st.Format == SIMHAuto {
		st.Format = SIMHPadded
	}
	bw := bufio.NewWriterSize(w, 1<<20)
	var word [4]byte
	putWord := func(v uint32) error {
		binary.LittleEndian.PutUint32(word[:], v)
		_, err := bw.Write(word[:])
		return err
	}
	r := m.Records(part)
	for {
		rec, err := r.Next()
		if errors.Is(err, io.EOF) {
			if opts.EOM {
				if err := putWord(simhEOM); err != nil {
					return st, err
				}
				st.EOM = true
			}
			return st, bw.Flush()
		}
		if err != nil {
			return st, err
		}
		switch rec.Kind {
		case tape.KindFilemark:
			if err := putWord(simhTapeMark); err != nil {
				return st, err
			}
			st.Filemarks++
		case tape.KindSetmark:
			if !opts.SkipSetmarks {
				return st, fmt.Errorf("simh: partition %d object %d is a setmark, which SIMH images cannot hold", part, rec.Object)
			}
			st.Skipped++
		case tape.KindBlock:
			n := rec.Len
			if err := putWord(uint32(n)); err != nil {
				return st, err
			}
			if _, err := io.Copy(bw, r); err != nil {
				return st, fmt.Errorf("simh: partition %d object %d: %w", part, rec.Object, err)
			}
			if n%2 == 1 && st.Format == SIMHPadded {
				if err := bw.WriteByte(0); err != nil {
					return st, err
				}
			}
			if err := putWord(uint32(n)); err != nil {
				return st, err
			}
			st.Blocks++
			st.Bytes += uint64(n)
		}
	}
}
