// Package cartridge stores emulated tape cartridges as image files and
// implements tape.Medium and tape.Library over them.
//
// A cartridge with barcode B is the file <dir>/B.vtape (Path) in a media
// directory (Library; Create, Open, OpenReadOnly and List work on a
// directory directly). The byte-exact format is in FORMAT.md; in short:
//
//   - two superblock slots (written alternately, CRC-protected, the newest
//     valid one wins) hold the partition table, the write-protect and WORM
//     flags, the density, the MAM attributes, and for each partition the
//     end of data as of the last sync point;
//   - each partition is a region of the (sparse) file holding records:
//     a 64-byte header (type, length, object/file/set numbers, a random
//     record id, the id and size of the previous record, CRC-32C of the data
//     and of the header) followed by the block data.
//
// Durability. Sync (called by the drive at WRITE FILEMARKS with IMMED=0,
// rewind and unload) fdatasyncs the records, then writes the superblock
// with the new ends of data and fdatasyncs again. Opening trusts the
// superblock's ends of data and walks only the records written after it,
// checking each header, its link to the previous record and its data CRC;
// the first record that fails ends the data. Opening never writes; the
// next write discards what lies after the end of data.
//
// Truncation. A write or erase in the middle discards what follows. If the
// superblock vouches for records after that point, it is rewritten and
// synced first. Records left behind (in the page cache, or after a crash)
// can never be taken for data: every record names the random id of its
// predecessor, and the record written at the truncation point (or the
// end-of-data marker written there) has a fresh id.
//
// Memory does not grow with the data on the cartridge: besides fixed
// buffers (1 MiB for writes, 1 MiB for reads) an Image keeps a bounded
// sparse index per partition (checkpoints and filemark positions, at most
// 192 KiB), built as the drive moves; Locate and SpaceFilemarks walk record
// headers from the nearest known position.
//
// Tools read a partition record by record with Image.Records, a
// RecordReader that walks blocks, filemarks and setmarks up to end of data
// as archive/tar's Reader walks an archive. SIMH .tap images can be
// imported and exported (ImportSIMH, ExportSIMH).
package cartridge
