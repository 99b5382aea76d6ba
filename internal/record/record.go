// Package record is vscsid's recording format and its replay: a device's
// commands as `vscsictl record` captured them (CDB, Data-Out payload or
// its digest, status, sense, bytes moved, a digest of the Data-In), to be
// run again against the current code (`vscsictl replay`, and the fixtures
// of real clients' runs that `go test` replays).
//
// A recording is a gzip stream of JSON lines: one Header, then one
// Command per completed command, in completion order. docs/trace.md
// documents the fields; Version changes when a field changes meaning,
// and readers refuse versions they do not know.
package record

import (
	"bufio"
	"compress/gzip"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"time"

	"github.com/vscsid/vscsid/internal/trace"
)

// Format and Version name the format in every Header.
const (
	Format  = "vscsid-recording"
	Version = 1
)

// ParameterListMax is the PayloadMax of a recording without payloads
// (vscsictl record --digests): every parameter list the commands of
// vscsid's devices take is shorter, and a data block rarely is.
const ParameterListMax = 1024

// Header is a recording's first line: what was recorded, and how to
// rebuild the devices.
type Header struct {
	Format   string    `json:"format"`
	Version  int       `json:"version"`
	VSCSID   string    `json:"vscsid"` // the version that recorded
	Started  time.Time `json:"started"`
	Payloads bool      `json:"payloads"` // every Data-Out payload is kept (else digests, and PayloadMax)
	// PayloadMax: without Payloads, the Data-Out of commands whose data
	// is at most this many bytes is kept all the same (parameter lists:
	// MODE SELECT, LOG SELECT, PERSISTENT RESERVE OUT, SECURITY PROTOCOL
	// OUT), so that they replay; larger ones (the data written) are
	// replayed as zeros.
	PayloadMax int      `json:"payload_max,omitempty"`
	Devices    []Device `json:"devices"`
}

// Device is one recorded device as its config file would create it.
type Device struct {
	Name      string `json:"name"`
	Subtype   string `json:"subtype"` // vdisk, vtape, vlibrary
	Config    string `json:"config"`  // the cfgstring
	Size      uint64 `json:"size,omitempty"`
	BlockSize uint32 `json:"block_size,omitempty"`
	Fault     *Fault `json:"fault,omitempty"`
}

// Fault is a device's fault injection when the recording began.
type Fault struct {
	Rules  []string `json:"rules,omitempty"`
	Timing string   `json:"timing,omitempty"`
	Seed   uint64   `json:"seed"`
}

// Command is one completed command.
type Command struct {
	Seq uint64 `json:"seq"` // the device's trace sequence number: a gap is a lost command
	Dev int    `json:"dev"` // index in Header.Devices
	T   int64  `json:"t_ns"`
	CDB string `json:"cdb"` // hex; the first 32 bytes when CDBLength is more
	// CDBLength is the CDB's length.
	CDBLength int          `json:"cdb_length"`
	Length    uint32       `json:"length"`        // the data buffer
	Out       []byte       `json:"out,omitempty"` // the Data-Out buffer (payload recordings), base64
	OutCRC    uint32       `json:"out_crc,omitempty"`
	Status    string       `json:"status"`
	Sense     *trace.Sense `json:"sense,omitempty"`
	Written   uint32       `json:"written"`  // Data-In bytes produced
	Consumed  uint32       `json:"consumed"` // Data-Out bytes read
	InCRC     uint32       `json:"in_crc,omitempty"`
	Aborted   bool         `json:"aborted,omitempty"` // a TMR aborted it before it ran: replay skips it
}

// Writer writes a recording.
type Writer struct {
	zw  *gzip.Writer
	enc *json.Encoder
}

// NewWriter writes h to w and returns the Writer of the commands; Close
// ends the gzip stream (not w).
func NewWriter(w io.Writer, h Header) (*Writer, error) {
	h.Format, h.Version = Format, Version
	zw := gzip.NewWriter(w)
	rw := &Writer{zw: zw, enc: json.NewEncoder(zw)}
	if err := rw.enc.Encode(&h); err != nil {
		return nil, err
	}
	return rw, nil
}

// Write appends c.
func (w *Writer) Write(c *Command) error { return w.enc.Encode(c) }

// WriteLine appends a Command already encoded as one JSON line (as the
// daemon streams them), after checking it is one.
func (w *Writer) WriteLine(line []byte) error {
	var c Command
	if err := json.Unmarshal(line, &c); err != nil {
		return fmt.Errorf("not a recorded command: %w", err)
	}
	return w.Write(&c)
}

// Close flushes and ends the gzip stream.
func (w *Writer) Close() error { return w.zw.Close() }

// Reader reads a recording.
type Reader struct {
	Header Header
	sc     *bufio.Scanner
	line   int
}

// maxLine bounds one line: a command with a 16 MiB payload in base64.
const maxLine = 24 << 20

// NewReader reads the header of the recording in r.
func NewReader(r io.Reader) (*Reader, error) {
	zr, err := gzip.NewReader(r)
	if err != nil {
		return nil, fmt.Errorf("not a vscsid recording (not gzip): %w", err)
	}
	sc := bufio.NewScanner(zr)
	sc.Buffer(make([]byte, 64<<10), maxLine)
	rd := &Reader{sc: sc}
	if !sc.Scan() {
		return nil, fmt.Errorf("not a vscsid recording: no header: %w", errors.Join(sc.Err(), io.ErrUnexpectedEOF))
	}
	rd.line = 1
	if err := json.Unmarshal(sc.Bytes(), &rd.Header); err != nil || rd.Header.Format != Format {
		return nil, fmt.Errorf("not a vscsid recording (header %.60q)", sc.Text())
	}
	if rd.Header.Version != Version {
		return nil, fmt.Errorf("recording format version %d; this vscsictl reads version %d", rd.Header.Version, Version)
	}
	if len(rd.Header.Devices) == 0 {
		return nil, errors.New("recording names no device")
	}
	return rd, nil
}

// Next returns the next command, io.EOF after the last.
func (r *Reader) Next() (*Command, error) {
	if !r.sc.Scan() {
		if err := r.sc.Err(); err != nil {
			return nil, fmt.Errorf("recording line %d: %w", r.line+1, err)
		}
		return nil, io.EOF
	}
	r.line++
	var c Command
	if err := json.Unmarshal(r.sc.Bytes(), &c); err != nil {
		return nil, fmt.Errorf("recording line %d: %w", r.line, err)
	}
	if c.Dev < 0 || c.Dev >= len(r.Header.Devices) {
		return nil, fmt.Errorf("recording line %d: device %d of %d", r.line, c.Dev, len(r.Header.Devices))
	}
	return &c, nil
}
