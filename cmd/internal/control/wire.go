// Package control is vscsid's control socket, both ends: the wire types,
// the routes, the server (Handler, Listen, Serve) that the daemon runs over
// its Service, and the Client that vscsictl uses, so the two can never
// drift apart.
//
// The protocol, version 1, is HTTP/1.1 over a root-only unix socket (mode
// 0600) with JSON bodies:
//
//	GET    /v1/devices                     → [Device]
//	POST   /v1/devices                     CreateDevice → 201 Device
//	DELETE /v1/devices/{name}              → 204 (devices vscsid created only)
//	GET    /v1/devices/{name}/stats        → Stats
//	POST   /v1/devices/{name}/load         Load → 204
//	POST   /v1/devices/{name}/unload       → 204
//	GET    /v1/devices/{name}/faults       → Faults
//	POST   /v1/devices/{name}/faults       AddFault → FaultAdded
//	DELETE /v1/devices/{name}/faults       → 204 (every rule)
//	DELETE /v1/devices/{name}/faults/{id}  → 204
//	PUT    /v1/devices/{name}/faults/timing SetTiming → 204
//	GET    /v1/libraries/{name}            → Library
//	POST   /v1/libraries/{name}/move       Move → 204
//	POST   /v1/libraries/{name}/import     Import → Element (the mail slot)
//	POST   /v1/libraries/{name}/export     Export → Element (as it was)
//	GET    /v1/trace?device=NAME&...       → a stream of trace.Event, one JSON object (format=text: text line) per line
//	GET    /v1/record?device=NAME&payloads=true|false → a stream: record.Header, then record.Command lines
//
// The trace stream's query parameters are device (repeated; none: every
// device) and the filters of trace.Filter (op, status, sense, lba,
// min_latency) and format (json or text). The answer's status line and headers come once the
// devices are traced; the stream then runs until the client goes away.
//
// Errors are an Error body with a 4xx/5xx status; its errno names the
// unix errno the daemon's error wrapped (ENODEV, ENOENT, EBUSY, ...).
package control

// Device is one served device (GET /v1/devices).
type Device struct {
	Name    string `json:"name"`
	Type    string `json:"type"`    // disk | tape | changer
	Subtype string `json:"subtype"` // vdisk | vtape | vlibrary
	Origin  string `json:"origin"`  // config | attached
	HBA     int    `json:"hba"`
	UIO     string `json:"uio"`
	Address string `json:"scsi_address,omitempty"`
	Node    string `json:"node,omitempty"`
	Generic string `json:"generic,omitempty"`
	Barcode string `json:"barcode,omitempty"` // tape drives: the loaded cartridge
	// RingPoll is the device's ring poll window (ring_poll) as a Go
	// duration ("50µs"); absent when it does not poll.
	RingPoll string `json:"ring_poll,omitempty"`
	Failed   bool   `json:"failed"`
	Error    string `json:"error,omitempty"`
}

// Command is one opcode's statistics in Stats.
type Command struct {
	OpCode          uint8   `json:"opcode"`
	Name            string  `json:"name"`
	Count           uint64  `json:"count"`
	CheckConditions uint64  `json:"check_conditions"`
	MeanSeconds     float64 `json:"mean_seconds"`
	// P50Seconds and P99Seconds are upper bounds: the bucket boundary the
	// quantile falls under (-1: above the last bucket).
	P50Seconds float64 `json:"p50_seconds"`
	P99Seconds float64 `json:"p99_seconds"`
}

// Stats is a device's live statistics (GET /v1/devices/{name}/stats).
type Stats struct {
	Name            string            `json:"name"`
	Commands        []Command         `json:"commands"`
	ReadBytes       uint64            `json:"read_bytes"`  // Data-In
	WriteBytes      uint64            `json:"write_bytes"` // Data-Out
	CheckConditions map[string]uint64 `json:"check_conditions"`
	InFlight        int64             `json:"in_flight"`
	Aborted         uint64            `json:"aborted"`
	Failed          bool              `json:"failed"`
}

// Error is the body of every 4xx/5xx answer. The Client returns it as an
// error, with the HTTP status.
type Error struct {
	Message string `json:"error"`
	Errno   string `json:"errno,omitempty"` // "ENODEV", ...; "" if none
	Status  int    `json:"-"`               // the HTTP status (client side)
}

func (e *Error) Error() string { return e.Message }

// Load is the body of POST /v1/devices/{name}/load.
type Load struct {
	Barcode string `json:"barcode"`
}

// AddFault is the body of POST /v1/devices/{name}/faults.
type AddFault struct {
	Rule string `json:"rule"`
}

// FaultAdded answers AddFault.
type FaultAdded struct {
	ID uint64 `json:"id"`
}

// SetTiming is the body of PUT /v1/devices/{name}/faults/timing.
type SetTiming struct {
	Timing string `json:"timing"`
}

// FaultRule is one installed fault-injection rule with its counters.
type FaultRule struct {
	ID       uint64 `json:"id"`
	Rule     string `json:"rule"`
	Action   string `json:"action"`
	Matched  uint64 `json:"matched"`
	Injected uint64 `json:"injected"`
	Spent    bool   `json:"spent"`
}

// Faults is a device's fault injection (GET /v1/devices/{name}/faults).
type Faults struct {
	Name        string      `json:"name"`
	Timing      string      `json:"timing"`
	Rules       []FaultRule `json:"rules"`
	Delayed     uint64      `json:"delayed"`
	Clamped     uint64      `json:"clamped"`
	Held        uint64      `json:"held"`
	Interrupted uint64      `json:"interrupted"`
}

// CreateDevice asks vscsid to create a device as if its config file had it
// (POST /v1/devices). Config is the handler's cfgstring, checked as
// strictly as the config file's.
type CreateDevice struct {
	Name         string `json:"name"`
	Type         string `json:"type"` // vdisk | vtape | vlibrary
	Config       string `json:"config"`
	HWMaxSectors int    `json:"hw_max_sectors,omitempty"`
}

// ElementRef names a library element by type (storage, mail, drive) and
// index within its type, 0-based.
type ElementRef struct {
	Type  string `json:"type"`
	Index int    `json:"index"`
}

// Element is one element of a library and what it holds.
type Element struct {
	ElementRef
	Address uint16 `json:"address"` // the SCSI element address
	Barcode string `json:"barcode,omitempty"`
	// Source is where the transport took the cartridge from (SValid).
	Source *ElementRef `json:"source,omitempty"`
	// ImpExp: the operator put the cartridge in this mail slot.
	ImpExp bool `json:"impexp,omitempty"`
	// Device is a drive element's vtape device.
	Device string `json:"device,omitempty"`
}

// Library is a vlibrary's elements (GET /v1/libraries/{name}).
type Library struct {
	Name        string    `json:"name"`
	Personality string    `json:"personality"`
	Serial      string    `json:"serial"`
	Elements    []Element `json:"elements"`
	// Outside are the exported cartridges: their images are in the media
	// directory, they are not in the library.
	Outside []string `json:"outside"`
}

// Move is the body of POST /v1/libraries/{name}/move.
type Move struct {
	From ElementRef `json:"from"`
	To   ElementRef `json:"to"`
}

// Import is the body of POST /v1/libraries/{name}/import.
type Import struct {
	Barcode string `json:"barcode"`
}

// Export is the body of POST /v1/libraries/{name}/export: a mail slot.
type Export struct {
	Index int `json:"index"`
}
