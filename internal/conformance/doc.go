// Package conformance holds tests that send the same commands to every
// kind of logical unit vscsid emulates (disk, tape drive, medium changer)
// and require the same answer: the steps every command takes (closed
// unit, unit attention, unsupported opcode or service action, CDB length,
// the CONTROL byte, readiness) are one code path, scsi.Table.Serve, and
// these tests prove that each kind is wired to it. It has no code of its
// own.
package conformance
