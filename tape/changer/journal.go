package changer

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"hash/crc32"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"

	"github.com/vscsid/vscsid/tape/cartridge"
)

// The inventory journal. A move changes two or three elements of a
// library of up to 61,440; writing the whole inventory for each (the
// snapshot, store.save) made a move's cost grow with the library (9.6 ms
// at 61,440 slots). A move instead appends one record to
// <media>/.library-<name>.journal and syncs it; after compactAfter
// records, the next move writes a snapshot, which empties the journal.
//
// A record is one line: the CRC-32C of the JSON as 8 hex digits, a space,
// the JSON ({"set":[{"at":LOC,"slot":SLOT},...]}), a newline. Each entry
// is the whole new content of an element, so applying a record twice
// gives what applying it once does: a snapshot written after the records
// and a journal not yet emptied (a crash between the two) read back as
// the snapshot. Loading applies the records in order over the snapshot;
// a record cut short or failing its CRC at the end of the file is a write
// a crash cut (the move was not reported done) and is dropped; a bad
// record before a good one is corruption, and the load fails.

// compactAfter is the number of journal records after which a move writes
// a snapshot instead.
const compactAfter = 1024

// journalRecord is one line of the journal.
type journalRecord struct {
	Set []journalEntry `json:"set"`
}

type journalEntry struct {
	At   Loc  `json:"at"`
	Slot Slot `json:"slot"`
}

func (s *store) journalPath() string {
	return filepath.Join(s.dir, ".library-"+s.name+".journal")
}

// journal appends the new contents of the elements at locs (slots[i] in
// locs[i]) as one record and syncs it.
func (s *store) journal(locs []Loc, slots []Slot) error {
	rec := journalRecord{Set: make([]journalEntry, len(locs))}
	for i := range locs {
		rec.Set[i] = journalEntry{At: locs[i], Slot: slots[i]}
	}
	body, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	line := make([]byte, 0, len(body)+10)
	line = fmt.Appendf(line, "%08x ", crc32.Checksum(body, castagnoli))
	line = append(append(line, body...), '\n')
	if s.jf == nil {
		f, err := os.OpenFile(s.journalPath(), os.O_WRONLY|os.O_CREATE|os.O_APPEND, 0o600)
		if err != nil {
			return fmt.Errorf("changer: inventory journal: %w", err)
		}
		// The file's name must survive a crash as its records do.
		if err := cartridge.SyncDir(s.dir); err != nil {
			_ = f.Close()
			return err
		}
		s.jf = f
	}
	cut := func(step saveStep) bool { return s.crash != nil && s.crash(step) }
	if cut(stepJournalWrite) {
		_, _ = s.jf.Write(line[:len(line)/2]) // a torn record, as a crash leaves it
		return errCrashed
	}
	if _, err := s.jf.Write(line); err != nil {
		return fmt.Errorf("changer: inventory journal: %w", err)
	}
	if cut(stepJournalSync) {
		return errCrashed
	}
	if err := s.jf.Sync(); err != nil {
		return fmt.Errorf("changer: inventory journal: %w", err)
	}
	s.records++
	return nil
}

// emptyJournal empties the journal after a snapshot was saved.
func (s *store) emptyJournal() error {
	if s.jf != nil {
		_ = s.jf.Close() // reopened on the next record
		s.jf = nil
	}
	s.records = 0
	f, err := os.OpenFile(s.journalPath(), os.O_WRONLY|os.O_TRUNC, 0)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("changer: inventory journal: %w", err)
	}
	err = f.Sync()
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	return err
}

// maxJournalFile bounds the journal: it is compacted every 1024 records
// of about 100 bytes.
const maxJournalFile = 16 << 20

// replay applies the journal's records to inv (loaded from the snapshot)
// and cuts a torn last record off the file.
func (s *store) replay(inv *Inventory) error {
	b, err := cartridge.ReadStateFile(s.journalPath(), maxJournalFile)
	if errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("changer: inventory journal: %w", err)
	}
	good, n := 0, 0
	for off := 0; off < len(b); {
		end := bytes.IndexByte(b[off:], '\n')
		rec, ok := parseRecord(b[off:], end)
		if !ok {
			if end >= 0 && off+end+1 < len(b) {
				return fmt.Errorf("changer: inventory journal %s: record %d is corrupt", s.journalPath(), n+1)
			}
			break // the torn last record of a cut write
		}
		for _, e := range rec.Set {
			sl := inv.slots(e.At.Type)
			if e.At.Index < 0 || e.At.Index >= len(sl) {
				return fmt.Errorf("changer: inventory journal %s: record %d names %v %d, which the inventory lacks", s.journalPath(), n+1, e.At.Type, e.At.Index)
			}
			sl[e.At.Index] = e.Slot
		}
		off += end + 1
		good, n = off, n+1
	}
	if good < len(b) {
		if err := os.Truncate(s.journalPath(), int64(good)); err != nil {
			return fmt.Errorf("changer: inventory journal: %w", err)
		}
	}
	s.records = n
	return nil
}

// parseRecord decodes the line b[:end] (end < 0: no newline, a torn
// record).
func parseRecord(b []byte, end int) (journalRecord, bool) {
	var rec journalRecord
	if end < 10 || b[8] != ' ' {
		return rec, false
	}
	sum, err := strconv.ParseUint(string(b[:8]), 16, 32)
	body := b[9:end]
	if err != nil || uint32(sum) != crc32.Checksum(body, castagnoli) {
		return rec, false
	}
	return rec, json.Unmarshal(body, &rec) == nil
}

var castagnoli = crc32.MakeTable(crc32.Castagnoli)
