package tcmu_test

import (
	"bytes"
	"hash/crc32"
	"testing"
	"time"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/target/targettest"
	"github.com/vscsid/vscsid/target/tcmu"
)

// attach attaches a ring of n records to k's device.
func attach(t *testing.T, k *targettest.Kernel, n int) (*tcmu.TraceRing, func()) {
	t.Helper()
	r := tcmu.NewTraceRing(n)
	detach, err := k.Device().Trace(r)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(detach)
	return r, detach
}

func readAll(r *tcmu.TraceRing) []tcmu.TraceRecord {
	var out []tcmu.TraceRecord
	buf := make([]tcmu.TraceRecord, 4)
	for {
		n := r.Read(buf)
		if n == 0 {
			return out
		}
		out = append(out, buf[:n]...)
	}
}

func TestTraceRecordsCommands(t *testing.T) {
	disk := &memDisk{data: make([]byte, 1<<20)}
	k := targettest.Serve(t, disk)
	r, _ := attach(t, k, 16)
	k.Submit(write10(8, 24), targettest.DataOut(pattern(24*512, 3)).Segments(3))
	k.Submit(read10(1<<20, 1), targettest.DataIn(512)) // past the end: CHECK CONDITION
	recs := readAll(r)
	if len(recs) != 2 {
		t.Fatalf("%d records, want 2: %+v", len(recs), recs)
	}
	w, rd := recs[0], recs[1]
	if w.Seq != 1 || rd.Seq != 2 {
		t.Errorf("sequence %d, %d: want 1, 2", w.Seq, rd.Seq)
	}
	if w.ID != scsi.CommandID(scsi.Write10) || w.CDBLen != 10 || [10]byte(w.CDB[:10]) != [10]byte(write10(8, 24)) {
		t.Errorf("WRITE(10) record: id %#x CDB % x (%d bytes)", w.ID, w.CDB[:w.CDBLen], w.CDBLen)
	}
	if w.Length != 24*512 || w.Consumed != 24*512 || w.Written != 0 || w.Segments != 3 {
		t.Errorf("WRITE(10) record: length %d consumed %d written %d segments %d", w.Length, w.Consumed, w.Written, w.Segments)
	}
	if w.Seg0Length == 0 || w.Seg0Length >= w.Length || w.Status != scsi.StatusGood || w.Flags != 0 {
		t.Errorf("WRITE(10) record: first segment %d bytes at %d, status %v flags %#x", w.Seg0Length, w.Seg0Offset, w.Status, w.Flags)
	}
	if w.End < w.Start || w.Start < w.Seen {
		t.Errorf("WRITE(10) times seen %d start %d end %d: not in order", w.Seen, w.Start, w.End)
	}
	if at := r.Epoch().Add(time.Duration(w.End)); time.Since(at) < 0 || time.Since(at) > time.Minute {
		t.Errorf("WRITE(10) ended at %v: not on the wall clock", at)
	}
	if rd.Status != scsi.StatusCheckCondition || rd.Sense.Key != scsi.IllegalRequest || rd.Sense.ASC != scsi.LBAOutOfRange {
		t.Errorf("READ(10) past the end: status %v sense %+v", rd.Status, rd.Sense)
	}
	if rd.Unaligned != 1 { // 512 bytes: shorter than a page
		t.Errorf("READ(10) of 512 bytes: %d unaligned segments, want 1", rd.Unaligned)
	}
}

// TestTraceQueueTime: a command that waited in the ring while another ran
// was seen before it started, by about the time the first one took.
func TestTraceQueueTime(t *testing.T) {
	k := targettest.NewKernel(t, targettest.Config{})
	b := &blocker{release: make(chan struct{}), started: make(chan struct{})}
	k.Serve(b)
	r, _ := attach(t, k, 16)
	k.Submit(read10(0, 1), targettest.DataIn(512)) // tracing starts with the first completion
	p1, _ := k.Queue(read10(1, 1), targettest.DataIn(512))
	p2, _ := k.Queue(read10(2, 1), targettest.DataIn(512))
	k.Notify()
	<-b.started
	const hold = 30 * time.Millisecond
	time.Sleep(hold)
	close(b.release)
	p1.Wait()
	p2.Wait()
	recs := readAll(r)
	if len(recs) != 3 {
		t.Fatalf("%d records, want 3", len(recs))
	}
	second := recs[2]
	if q := time.Duration(second.Start - second.Seen); q < hold {
		t.Errorf("LBA 2 waited %v behind LBA 1 (held %v), traced queue time %v", hold, hold, q)
	}
	if s := time.Duration(recs[1].End - recs[1].Start); s < hold {
		t.Errorf("LBA 1 ran %v or more, traced service time %v", hold, s)
	}
}

// TestTraceSlowReaderLoses: a full ring drops what does not fit, counts it,
// and never holds the device up.
func TestTraceSlowReaderLoses(t *testing.T) {
	k := targettest.Serve(t, fill{w: 512})
	r, detach := attach(t, k, 2)
	for range 10 {
		if c := k.Submit(read10(0, 1), targettest.DataIn(512)); c.Status != scsi.StatusGood {
			t.Fatalf("status %v with a full trace ring", c.Status)
		}
	}
	recs := readAll(r)
	if len(recs) != 2 || recs[0].Seq != 1 || recs[1].Seq != 2 {
		t.Fatalf("records %d (first seq %v): want the two that fit", len(recs), recs)
	}
	if r.Lost() != 8 || k.Device().Stats().TraceLost != 8 {
		t.Errorf("lost %d, device counts %d: want 8", r.Lost(), k.Device().Stats().TraceLost)
	}
	k.Submit(read10(0, 1), targettest.DataIn(512))
	if recs := readAll(r); len(recs) != 1 || recs[0].Seq != 11 {
		t.Errorf("after reading: %d records (%+v), want seq 11: gaps in Seq are the lost ones", len(recs), recs)
	}
	detach()
	detach()
	k.Submit(read10(0, 1), targettest.DataIn(512))
	if recs := readAll(r); len(recs) != 0 {
		t.Errorf("%d records after detach", len(recs))
	}
	if _, err := k.Device().Trace(r); err == nil {
		t.Error("a ring attached once was attached again")
	}
}

func TestTraceAborted(t *testing.T) {
	k := targettest.NewKernel(t, targettest.Config{})
	b := &blocker{release: make(chan struct{}), started: make(chan struct{})}
	k.Serve(b)
	r, _ := attach(t, k, 16)
	p1, _ := k.Queue(read10(1, 1), targettest.DataIn(512))
	p2, _ := k.Queue(read10(2, 1), targettest.DataIn(512))
	k.Notify()
	<-b.started
	if err := k.Abort(p2); err != nil {
		t.Fatal(err)
	}
	close(b.release)
	p1.Wait()
	p2.Wait()
	recs := readAll(r)
	if len(recs) != 2 || recs[1].Flags&tcmu.TraceAborted == 0 || recs[1].Status != scsi.StatusTaskAborted {
		t.Fatalf("records %+v: want the second aborted", recs)
	}
	if recs[1].Start != recs[1].End {
		t.Errorf("aborted command: start %d end %d, it never ran", recs[1].Start, recs[1].End)
	}
}

// TestCaptureRing: a capture ring keeps each WRITE's payload and the
// digests of what went each way, across the wrap of its byte ring, and
// loses a command whose payload does not fit.
func TestCaptureRing(t *testing.T) {
	disk := &memDisk{data: make([]byte, 1<<20)}
	k := targettest.Serve(t, disk)
	r := tcmu.NewCaptureRing(16, 8192, -1)
	detach, err := k.Device().Trace(r)
	if err != nil {
		t.Fatal(err)
	}
	defer detach()
	plain := tcmu.NewTraceRing(16)
	detachPlain, _ := k.Device().Trace(plain)
	defer detachPlain()
	tab := crc32.MakeTable(crc32.Castagnoli)
	recs := make([]tcmu.TraceRecord, 16)
	var buf []byte
	for i := range 5 { // 3 KiB each: the 8 KiB byte ring wraps
		data := pattern(3072, byte(i))
		k.Submit(write10(uint32(i*6), 6), targettest.DataOut(data).Segments(2))
		k.Submit(read10(uint32(i*6), 6), targettest.DataIn(3072))
		var n int
		n, buf = r.ReadCapture(recs, buf)
		if n != 2 {
			t.Fatalf("round %d: %d records", i, n)
		}
		w, rd := recs[0], recs[1]
		if w.Flags&tcmu.TraceCaptured == 0 || w.DataLen != 3072 || !bytes.Equal(buf[w.DataOff:w.DataOff+uint64(w.DataLen)], data) {
			t.Fatalf("round %d: WRITE payload %d bytes at %d, flags %#x: not what was written", i, w.DataLen, w.DataOff, w.Flags)
		}
		if want := crc32.Checksum(data, tab); w.OutCRC != want || rd.InCRC != want || rd.DataLen != 0 || w.InCRC != 0 {
			t.Errorf("round %d: out crc %08x, read's in crc %08x, want %08x both", i, w.OutCRC, rd.InCRC, want)
		}
	}
	k.Submit(write10(0, 20), targettest.DataOut(pattern(10240, 9))) // larger than the byte ring
	if n, _ := r.ReadCapture(recs, buf); n != 0 || r.Lost() != 1 {
		t.Errorf("a payload larger than the ring: %d records, %d lost", n, r.Lost())
	}
	if n := plain.Read(recs); n != 11 || recs[0].Flags&tcmu.TraceCaptured != 0 || recs[10].DataLen != 0 {
		t.Errorf("plain ring beside it: %d records, flags %#x", n, recs[0].Flags)
	}
}

// TestCaptureRingPayloadMax: a capture ring with a payload limit keeps the
// Data-Out of the commands up to it and only the digest of larger ones.
func TestCaptureRingPayloadMax(t *testing.T) {
	k := targettest.Serve(t, &memDisk{data: make([]byte, 1<<20)})
	r := tcmu.NewCaptureRing(16, 8192, 1024)
	detach, err := k.Device().Trace(r)
	if err != nil {
		t.Fatal(err)
	}
	defer detach()
	small, large := pattern(512, 1), pattern(4096, 2)
	k.Submit(write10(0, 1), targettest.DataOut(small))
	k.Submit(write10(8, 8), targettest.DataOut(large))
	recs := make([]tcmu.TraceRecord, 4)
	n, buf := r.ReadCapture(recs, nil)
	if n != 2 {
		t.Fatalf("%d records", n)
	}
	if s := recs[0]; s.DataLen != 512 || !bytes.Equal(buf[s.DataOff:s.DataOff+512], small) {
		t.Errorf("the 512-byte Data-Out: %d bytes kept", s.DataLen)
	}
	tab := crc32.MakeTable(crc32.Castagnoli)
	if l := recs[1]; l.DataLen != 0 || l.OutCRC != crc32.Checksum(large, tab) {
		t.Errorf("the 4 KiB Data-Out: %d bytes kept, digest %08x", l.DataLen, l.OutCRC)
	}
}
