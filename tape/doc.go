// Package tape emulates an SSC tape drive ("vtape") for the Linux st
// driver, mt-st, tar, dd, backup software and LTFS, behind the kernel's
// TCMU userspace passthrough.
//
// A Drive is one logical unit. It decodes the SSC command set (ssc.go),
// implements its semantics over a Medium — a cartridge with a position —
// (drive*.go), and hands the shared SPC commands (INQUIRY, MODE SENSE and
// SELECT framing, REQUEST SENSE, unit attentions, REPORT SUPPORTED
// OPERATION CODES) to scsi.SPC. Cartridges come from a Library: image files
// in a media directory (package tape/cartridge) or RAM (MemoryLibrary,
// memory=1).
//
// What st sees is what the data-transfer conditions of SSC-5 4.2 call for
// and errors.go builds: fixed and variable block modes, incorrect-length
// reads with signed residues (the transport reports the short Data-In with
// TCMU READ_LEN), filemarks, end of data, beginning of partition, early
// warning and volume overflow, write protection and WORM, unit attentions
// after load (28/00) and reset or power-on (29/00). Up to four partitions
// are made with MODE SELECT of the medium partition page and FORMAT
// MEDIUM, and LTFS's READ POSITION long/extended, LOCATE(16), MAM
// attributes, volume statistics and READ BUFFER are there.
//
// The drive handles one command at a time, in ring order, and every
// command completes before HandleCommand returns (no background work, so
// nothing outlives TCMU's cmd_time_out). READ(6) and WRITE(6) do not
// allocate.
//
// Configuration is the cfgstring after "vtape/": see ConfigDesc.
package tape
