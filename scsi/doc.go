// Package scsi is the SCSI vocabulary vscsid's handlers share: typed
// operation codes, status codes, sense keys and additional sense codes
// pinned to T10's lists; CDB decoding (ParseCDB) that never panics on
// initiator bytes; fixed and descriptor sense data (Sense.AppendFixed,
// Sense.AppendDescriptor, ParseSense); the Command/Response/Buffer contract
// between the TCMU transport and a handler; and SPC, the SPC-5 emulation
// (INQUIRY with VPD pages, REQUEST SENSE, MODE SENSE/SELECT over a page
// registry, REPORT SUPPORTED OPERATION CODES, SEND DIAGNOSTIC, unit
// attentions) that the disk and tape handlers embed.
//
// The package does no I/O and imports only the standard library. Values of
// the per-command path (Sense, Response, CDB helpers) are plain values that
// do not allocate.
package scsi
