package main

import (
	"bufio"
	"context"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
)

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
	// StoredBytes is what the blocks take in the image (BlockBytes as
	// written, less where they were compressed).
	StoredBytes uint64 `json:"stored_bytes"`
	Compressed  uint64 `json:"compressed_blocks"`
	Encrypted   uint64 `json:"encrypted_blocks"`
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
	m, err := parseAndOpenRO(fs, &cf, args)
	if err != nil {
		return err
	}
	defer func() { _ = m.Close() }() // read-only
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
		if err := writeJSON(stdout, out); err != nil {
			return err
		}
		return walkErrors(out)
	}
	w := bufio.NewWriter(stdout)
	if err := printInspect(w, out, *maxFiles); err != nil {
		return err
	}
	if err := w.Flush(); err != nil {
		return err
	}
	return walkErrors(out)
}

// walkErrors is the first partition whose records could not be walked to
// the end (a damaged cartridge): inspect reports what it could read, then
// fails, as dump does.
func walkErrors(out inspectOutput) error {
	for _, p := range out.Partitions {
		if p.WalkError != "" {
			return fmt.Errorf("%s: partition %d: %s", printable(out.Path), p.Index, p.WalkError)
		}
	}
	return nil
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
			ip.StoredBytes += uint64(rec.Stored)
			if rec.Compressed {
				ip.Compressed++
			}
			if rec.Encrypted {
				ip.Encrypted++
			}
		case tape.KindSetmark:
			cur.Setmarks++
		case tape.KindFilemark:
			cur.Closed = true
			ip.Files = append(ip.Files, cur)
			cur = fileEntry{File: rec.File + 1, First: rec.Object + 1}
		}
	}
}

// printable returns s, or s quoted with its control and non-printing
// characters escaped: a cartridge header is input, and a crafted barcode
// must not reach the terminal as escape sequences.
func printable(s string) string {
	for _, r := range s {
		if !unicode.IsPrint(r) {
			return strconv.Quote(s)
		}
	}
	return s
}

func printInspect(w io.Writer, out inspectOutput, maxFiles int) error {
	pr := &printer{w: w}
	st := out.Stat
	pr.printf("cartridge   %s  (%s)\n", printable(st.Barcode), printable(st.Path))
	pr.printf("serial      %s\n", st.Serial)
	pr.printf("created     %s\n", st.Created.UTC().Format(time.RFC3339))
	pr.printf("density     %#02x\n", st.Density)
	flags := flagNames(st)
	if len(flags) == 0 {
		flags = append(flags, "none")
	}
	pr.printf("flags       %s\n", strings.Join(flags, " "))
	pr.printf("capacity    %s (%d bytes), early warning %s\n", formatSize(st.Capacity), st.Capacity, formatSize(st.EarlyWarning))
	pr.printf("loads       %d, formats %d, volume change reference %d\n", st.LoadCount, st.FormatCount, st.VolumeChangeReference)
	pr.printf("header      format version %d, slot %s, sequence %d\n", st.Version, st.HeaderSlot, st.HeaderSequence)
	pr.printf("partitions  %d\n", len(out.Partitions))
	for _, p := range out.Partitions {
		pct := 0.0
		if p.Capacity > 0 {
			pct = 100 * float64(p.Used) / float64(p.Capacity)
		}
		pr.printf("\npartition %d\n", p.Index)
		pr.printf("  capacity  %s, early warning %s, region at offset %d\n", formatSize(p.Capacity), formatSize(p.EarlyWarning), p.Start)
		pr.printf("  used      %s (%d bytes, %.1f%%)\n", formatSize(p.Used), p.Used, pct)
		pr.printf("  objects   %d: %d blocks (%s of data), %d filemarks, %d setmarks\n",
			p.Objects, p.Blocks, formatSize(int64(p.BlockBytes)), p.Filemarks, p.Setmarks)
		if p.Encrypted > 0 {
			pr.printf("  encrypted %d of %d blocks (their data is ciphertext; the key is not on the cartridge)\n", p.Encrypted, p.Blocks)
		}
		if p.Compressed > 0 {
			pr.printf("  stored    %s of data in %s (%d of %d blocks compressed, ratio %.2f:1)\n",
				formatSize(int64(p.BlockBytes)), formatSize(int64(p.StoredBytes)), p.Compressed, p.Blocks,
				float64(p.BlockBytes)/float64(max(p.StoredBytes, 1)))
		}
		pr.printf("  recovery  %s\n", describeRecovery(p.Recovery))
		if p.WalkError != "" {
			pr.printf("  ERROR     walking the records: %s\n", p.WalkError)
		}
		if maxFiles == 0 {
			continue
		}
		pr.printf("  files     %d\n", len(p.Files))
		for i, f := range p.Files {
			if i == maxFiles {
				pr.printf("    ... %d more (--max-files)\n", len(p.Files)-maxFiles)
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
			pr.printf("    file %-5d object %-8d %s, %s%s (%s)\n", f.File, f.First, plural(f.Blocks, "block"), formatSize(int64(f.Bytes)), sm, end)
		}
	}
	if len(st.Attributes) > 0 {
		pr.printf("\nattributes (host)\n")
		for _, a := range st.Attributes {
			pr.printf("  %04Xh  partition %d  %s\n", a.ID, a.Partition, attrText(a.Value))
		}
	}
	return pr.err
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
	Stored    int    `json:"stored"`             // data bytes in the image
	Encoding  string `json:"encoding,omitempty"` // "compressed", "encrypted", "compressed+encrypted", or empty: stored as written
	AKAD      string `json:"akad,omitempty"`     // an encrypted block's authenticated key-associated data, hex
	UKAD      string `json:"ukad,omitempty"`     // its unauthenticated key-associated data, hex
	Offset    int64  `json:"offset"`
	CRC       string `json:"crc,omitempty"` // "ok" or the error, blocks only
}

func mediaDump(_ context.Context, args []string, stdout, stderr io.Writer) error {
	var cf commonFlags
	fs := newFlagSet("media", mediaSub("dump"), stderr)
	cf.register(fs, true)
	part := fs.Int("partition", -1, "only this partition (default: all)")
	asJSON := fs.Bool("json", false, "JSON lines output")
	m, err := parseAndOpenRO(fs, &cf, args)
	if err != nil {
		return err
	}
	defer func() { _ = m.Close() }() // read-only
	parts := []int{*part}
	if *part < 0 {
		parts = parts[:0]
		for i := range m.Info().Partitions {
			parts = append(parts, i)
		}
	} else if err := checkPartition(*part, m); err != nil {
		return err
	}
	w := bufio.NewWriter(stdout)
	defer func() { _ = w.Flush() }() // for the error returns: the records before the error; the Flush below is checked
	enc := json.NewEncoder(w)
	pr := &printer{w: w}
	if !*asJSON {
		pr.printf("%4s %10s %8s %6s %-8s %9s %9s %-10s %14s %s\n", "PART", "OBJECT", "FILE", "SET", "KIND", "LENGTH", "STORED", "ENCODING", "OFFSET", "CRC [KAD]")
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
			l := dumpLine{
				Partition: p, Object: rec.Object, File: rec.File, Set: rec.Set, Kind: kindName(rec.Kind),
				Length: rec.Len, Stored: rec.Stored, Offset: rec.Offset,
			}
			l.Encoding = encodingName(rec)
			if rec.Encrypted {
				akad, ukad, err := r.KAD()
				if err != nil {
					return fmt.Errorf("partition %d object %d: %w", p, rec.Object, err)
				}
				l.AKAD, l.UKAD = hex.EncodeToString(akad), hex.EncodeToString(ukad)
			}
			if rec.Kind == tape.KindBlock {
				// The stored bytes against their CRC: no key needed.
				l.CRC = "ok"
				if err := r.Verify(); err != nil {
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
				encoding := l.Encoding
				if encoding == "" {
					encoding = "-"
				}
				if l.AKAD != "" || l.UKAD != "" {
					crc += fmt.Sprintf(" [a-kad %s u-kad %s]", orDash(l.AKAD), orDash(l.UKAD))
				}
				pr.printf("%4d %10d %8d %6d %-8s %9d %9d %-10s %14d %s\n", l.Partition, l.Object, l.File, l.Set, l.Kind, l.Length, l.Stored, encoding, l.Offset, crc)
			}
		}
	}
	if err := pr.done(w.Flush); err != nil {
		return err
	}
	if bad > 0 {
		return fmt.Errorf("%d blocks do not match their checksum", bad)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}

// encodingName names how a block is stored ("" when as written).
func encodingName(rec *cartridge.Record) string {
	switch {
	case rec.Compressed && rec.Encrypted:
		return "compressed+encrypted"
	case rec.Compressed:
		return "compressed"
	case rec.Encrypted:
		return "encrypted"
	}
	return ""
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
