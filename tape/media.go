package tape

import (
	"io"

	"github.com/vscsid/vscsid/scsi"
)

// This file is the contract between the drive (drive.go, ssc.go, state.go)
// and the cartridge store (image.go, simh.go). The drive consumes Medium; the
// image package provides *Image which implements it.

// Kind is the type of a logical object on tape (SSC-5 4.2.3).
type Kind uint8

// Object kinds. EOD is not an object on tape; Peek reports it at end of data.
const (
	KindBlock Kind = iota + 1
	KindFilemark
	KindSetmark
	KindEOD
)

// Object is one logical object as Peek/Prev report it.
type Object struct {
	Kind Kind
	Len  int // data bytes, for KindBlock: the logical block READ returns
	// Stored is the data bytes the block takes on the medium: Len for a
	// block stored as written, less for a compressed one.
	Stored int
	// Encoding is the block's encoding flags (EncCompressed,
	// EncEncrypted; 0 for a block stored as written).
	Encoding uint8
}

// Position is a logical position on a medium: the position *before* the
// object numbered Object in Partition (SSC-5 4.2.5). Object counts every
// logical object (blocks and marks) from BOP of the partition; File counts
// the filemarks before the position in the partition, Set the setmarks.
type Position struct {
	Partition int
	Object    uint64
	File      uint64
	Set       uint64
}

// MediumInfo describes a cartridge.
type MediumInfo struct {
	Barcode        string
	Density        uint8 // density code (from the personality's table)
	WriteProtected bool  // the cartridge's write-protect tab
	WORM           bool  // write once: no overwrite of existing data
	// Encrypted: encrypted blocks have been written to the cartridge
	// since it was formatted (SSC's VCELB: a host sees it and looks for
	// a key).
	Encrypted    bool
	Partitions   int     // 1..4
	Capacity     []int64 // per partition, bytes
	EarlyWarning []int64 // per partition: early warning starts this many bytes before Capacity
}

// Errors a Medium returns (as they are or wrapped). Each is a *scsi.Error
// carrying the sense data the drive reports for it, so scsi.ResponseFor
// converts them like any other SCSI outcome.
var (
	ErrEndOfData       error = mediumError("tape: end of data", eodSense(0, false))
	ErrBeginningOfPart error = mediumError("tape: beginning of partition", bopSense(0, false))
	ErrEndOfMedium     error = mediumError("tape: physical end of medium", scsi.Sense{Key: scsi.VolumeOverflow, ASC: scsi.EndOfPartitionMediumDetected, EOM: true})
	ErrWriteProtected  error = mediumError("tape: write protected", dataProtect(scsi.WriteProtected))
	ErrWORMOverwrite   error = mediumError("tape: worm medium overwrite attempted", dataProtect(scsi.WORMMediumOverwriteAttempted))
	// ErrCorrupt is also a device fault: the drive logs it.
	ErrCorrupt     error = mediumError("tape: image corrupt", scsi.Sense{Key: scsi.MediumError, ASC: scsi.MediumFormatCorrupted})
	ErrNoPartition error = mediumError("tape: no such partition", illegal(scsi.InvalidFieldInCDB))
	// ErrNoKey: an encrypted block and no key to decrypt it with.
	ErrNoKey error = mediumError("tape: encrypted block, no key", dataProtect(scsi.UnableToDecryptData))
	// ErrWrongKey: the block does not decrypt with the key in force.
	ErrWrongKey error = mediumError("tape: encrypted block, wrong key", dataProtect(scsi.IncorrectDataEncryptionKey))
)

func mediumError(msg string, s scsi.Sense) *scsi.Error { return &scsi.Error{Sense: s, Msg: msg} }

// Medium is a loaded cartridge with a current position. It is used by one
// drive goroutine at a time and is not safe for concurrent use.
//
// Memory use of an implementation must not grow with the amount of data on
// the cartridge beyond a small index.
type Medium interface {
	Info() MediumInfo
	// Used returns the bytes used in partition part (data plus per-object
	// overhead as the implementation accounts it; compared with Capacity and
	// EarlyWarning by the drive).
	Used(part int) int64

	// Pos returns the current position.
	Pos() Position
	// Peek reports the object at the current position without moving; at
	// end of data it returns Object{Kind: KindEOD} and a nil error.
	Peek() (Object, error)
	// ReadAt reads data of the block at the current position (valid when
	// Peek reports KindBlock); off is relative to the start of the block.
	ReadAt(p []byte, off int64) (int, error)
	// SetKey sets the key ReadAt decrypts encrypted blocks with (nil:
	// none; ReadAt then fails on them with ErrNoKey, and with
	// ErrWrongKey when they do not decrypt with the key).
	SetKey(k *Key)
	// KAD returns the key-associated data stored with the encrypted block
	// at the current position (nil for another object).
	KAD() (akad, ukad []byte, err error)
	// Next moves past the object at the current position. At end of data it
	// returns ErrEndOfData and does not move.
	Next() error
	// Prev moves back over the object before the current position and
	// returns it. At BOP it returns ErrBeginningOfPart and does not move.
	Prev() (Object, error)
	// Locate moves to the position before logical object obj of partition
	// part. If obj is at or past end of data it stops at end of data and
	// returns ErrEndOfData.
	Locate(part int, obj uint64) error

	// WriteBlock writes one block of n bytes read from r at the current
	// position, stored as enc asks, discarding everything after it (a
	// write in the middle truncates), and moves past it. It returns the
	// data bytes the block takes on the medium (Object.Stored). When the
	// block does not fit before the physical end it writes nothing and
	// returns ErrEndOfMedium.
	WriteBlock(r io.Reader, n int, enc Encoding) (stored int, err error)
	// WriteMark writes a filemark or setmark, like WriteBlock.
	WriteMark(kind Kind) error
	// Erase discards everything from the current position on (end of data
	// is at the current position afterwards).
	Erase() error
	// Format repartitions the medium, discarding all data. sizes gives the
	// capacity of each partition in bytes (len 1..4); 0 for the last one
	// means "the rest".
	Format(sizes []int64) error

	// Attribute returns a MAM attribute value (SPC-5 7.4), ok false if unset.
	Attribute(id uint16) (val []byte, ok bool)
	// SetAttribute stores a host-writable MAM attribute.
	SetAttribute(id uint16, val []byte) error

	// Sync makes every object written so far durable (fsync): after Sync
	// returns, a crash or power loss loses nothing written before it.
	Sync() error
	// Close syncs and releases the medium.
	Close() error
}

// MarkWriter is a Medium that writes many marks at once, as many
// WriteMark calls would (WRITE FILEMARKS with a large count). It returns
// how many it wrote: fewer with an error, ErrEndOfMedium when the next
// did not fit.
type MarkWriter interface {
	WriteMarks(kind Kind, count int) (int, error)
}

// FilemarkSpacer is a Medium that moves over many filemarks at once (SPACE
// filemarks), skipping the blocks between them when it knows where the
// filemarks are: forward to the end-of-medium side of the count-th,
// backward (count < 0) to the beginning-of-medium side of the |count|-th.
// Setmarks do not stop it. It returns how many it passed; ErrEndOfData or
// ErrBeginningOfPart when one came first (the position is then there).
type FilemarkSpacer interface {
	SpaceFilemarks(count int64) (int64, error)
}

// Library opens cartridges by barcode (for a file-backed store: the media
// directory). The drive opens a cartridge on load and closes it on unload.
type Library interface {
	// Open opens the cartridge with the given barcode for exclusive use.
	Open(barcode string) (Medium, error)
}
