package cartridge

import (
	"errors"
	"io"

	"github.com/vscsid/vscsid/tape"
)

// A Record is one object of a partition as a RecordReader finds it: a
// block, a filemark or a setmark. Its Position is the position before it.
type Record struct {
	tape.Position
	Kind tape.Kind // tape.KindBlock, tape.KindFilemark or tape.KindSetmark
	Len  int       // data bytes of a block (as written by the host); 0 for a mark
	// Stored is the data bytes the block takes in the image: Len, or less
	// when it is Compressed, a little more when it is only Encrypted.
	Stored     int
	Compressed bool
	Encrypted  bool
	// Offset is the file offset of the record's header in the image.
	Offset int64
}

// A RecordReader walks the records of one partition in order, from BOP to
// end of data, as archive/tar's Reader walks the entries of an archive:
// Next moves to the next record and Read reads its data.
//
//	r := m.Records(part)
//	for {
//		rec, err := r.Next()
//		if err == io.EOF {
//			break // end of data
//		}
//		if err != nil {
//			return err
//		}
//		// rec.Kind, rec.Len, rec.Object...; io.Copy(w, r) copies a block's data
//	}
//
// It only reads, one record header at a time and block data in pieces, so
// its memory does not grow with the data on the cartridge. It walks with
// the image's own position (after Next, the image is positioned before the
// record returned; after the end, at end of data): do not move the image
// while using it.
type RecordReader struct {
	m       *Image
	part    int
	started bool
	rec     *Record // the current record; nil before the first and after the last
	off     int     // data bytes of rec read so far
	err     error   // what ended the walk: io.EOF or the error, for every later Next
	readErr error   // what failed reading rec's data, for every later Read
	buf     []byte  // for WriteTo
}

// Records returns a reader of the records of partition part, from its
// beginning.
func (m *Image) Records(part int) *RecordReader {
	return &RecordReader{m: m, part: part}
}

// Next advances to the next record of the partition and returns it,
// skipping whatever data of the previous one was not read. At end of data
// it returns io.EOF.
//
// The walk ends at end of data, or at the first record whose header cannot
// be read (it is damaged, does not link to the one before, or the file ends
// early): Next then returns an error matching tape.ErrCorrupt. Opening an
// image already cut its end of data before records written after the last
// sync point that were torn or garbled (see Image.Recovery), so on such an
// image the walk ends with io.EOF after the last complete record. Either
// way, every later call returns the same error. A block whose data does not
// match its checksum does not end the walk: Read reports it, and Next moves
// on.
func (r *RecordReader) Next() (*Record, error) {
	if r.err != nil {
		return nil, r.err
	}
	if err := r.advance(); err != nil {
		r.rec, r.err = nil, err
		return nil, err
	}
	return r.rec, nil
}

func (r *RecordReader) advance() error {
	m := r.m
	if !r.started {
		r.started = true
		if err := m.Locate(r.part, 0); err != nil && !errors.Is(err, tape.ErrEndOfData) {
			return err
		}
	} else if err := m.Next(); err != nil {
		return err
	}
	o, err := m.Peek()
	if err != nil {
		return err
	}
	if o.Kind == tape.KindEOD {
		return io.EOF
	}
	r.rec = &Record{
		Position: m.Pos(), Kind: o.Kind, Len: o.Len, Stored: o.Stored,
		Compressed: o.Encoding&tape.EncCompressed != 0, Encrypted: o.Encoding&tape.EncEncrypted != 0,
		Offset: m.parts[m.part].start + m.cur.off,
	}
	r.off, r.readErr = 0, nil
	return nil
}

// Read reads the data of the current record: a block's bytes in order,
// then io.EOF; a mark has none. The data is checked against its checksum
// as Image.ReadAt checks it: a block of up to 1 MiB before any of it is
// returned, a larger one by the Read that reaches its end. A mismatch, or
// a file that ends inside the block, is an error matching tape.ErrCorrupt,
// returned again by every later Read of the record.
func (r *RecordReader) Read(b []byte) (int, error) {
	switch {
	case r.rec == nil && r.err != nil:
		return 0, r.err
	case r.rec == nil:
		return 0, io.EOF
	case r.readErr != nil:
		return 0, r.readErr
	case r.off >= r.rec.Len:
		return 0, io.EOF
	case len(b) == 0:
		return 0, nil
	}
	n, err := r.m.ReadAt(b, int64(r.off))
	r.off += n
	if errors.Is(err, io.EOF) {
		return n, io.EOF // the block's last byte was read
	}
	if err != nil {
		r.readErr = err
	}
	return n, err
}

// Verify checks the current record's stored data against its checksum
// without decoding it: it needs no key for an encrypted block. A mismatch
// is an error matching tape.ErrCorrupt.
func (r *RecordReader) Verify() error {
	if r.rec == nil || r.rec.Kind != tape.KindBlock {
		return nil
	}
	m := r.m
	h, err := m.header()
	if err != nil {
		return err
	}
	if r.buf == nil {
		r.buf = make([]byte, 256<<10)
	}
	ok, err := m.checkData(m.parts[m.part].start+m.cur.off+recHeaderSize, h, r.buf)
	if err != nil {
		return err
	}
	if !ok {
		return m.dataCorrupt()
	}
	return nil
}

// KAD returns the key-associated data stored with the current record
// when it is encrypted (nil otherwise): what the host gave with the key,
// never the key or the data.
func (r *RecordReader) KAD() (akad, ukad []byte, err error) {
	if r.rec == nil || !r.rec.Encrypted {
		return nil, nil, nil
	}
	return r.m.KAD()
}

// WriteTo writes the rest of the current record's data to w, reading it in
// pieces of 256 KiB; io.Copy uses it. Data that fails its checksum is not
// written.
func (r *RecordReader) WriteTo(w io.Writer) (int64, error) {
	if r.buf == nil {
		r.buf = make([]byte, 256<<10)
	}
	var total int64
	for {
		n, err := r.Read(r.buf)
		if err != nil && !errors.Is(err, io.EOF) {
			return total, err
		}
		if n > 0 {
			k, werr := w.Write(r.buf[:n])
			total += int64(k)
			if werr != nil {
				return total, werr
			}
		}
		if err != nil {
			return total, nil
		}
	}
}
