package tape_test

import (
	"math/rand/v2"
	"testing"

	"go.uber.org/zap"

	"github.com/vscsid/vscsid/scsi"
	"github.com/vscsid/vscsid/tape"
	"github.com/vscsid/vscsid/tape/cartridge"
	"github.com/vscsid/vscsid/target/targettest"
)

// streamBlock is the record size of the streaming benchmarks: 256 KiB, a
// common backup block size (LTFS uses 512 KiB, tar 10 KiB).
const streamBlock = 256 << 10

var (
	write256K = []byte{0x0a, 0, 0x04, 0, 0, 0} // WRITE(6) variable, 256 KiB
	read256K  = []byte{0x08, 0, 0x04, 0, 0, 0} // READ(6) variable, 256 KiB
	rewind    = []byte{0x01, 0, 0, 0, 0, 0}
	tur       = []byte{0x00, 0, 0, 0, 0, 0}
)

// streamDrive is an LTO-9 drive over a real cartridge image in a temp dir,
// served through the fake TCMU ring: the whole daemon path except the uio
// syscalls, with the image's writes going to the page cache.
func streamDrive(b *testing.B, extra string) *targettest.Kernel {
	dir := b.TempDir()
	if err := cartridge.Create(dir, "BENCH1", cartridge.Options{Capacity: 64 << 30}); err != nil {
		b.Fatal(err)
	}
	lib, err := cartridge.NewLibrary(dir)
	if err != nil {
		b.Fatal(err)
	}
	cfg, err := tape.ParseConfig("personality=lto9;media=" + dir + ";barcode=BENCH1" + extra)
	if err != nil {
		b.Fatal(err)
	}
	d, err := tape.New("bench", cfg, lib, zap.NewNop())
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = d.Close() })
	k := targettest.NewKernel(b, targettest.Config{DataSize: 4 << 20})
	k.ServeLogger(d, zap.NewNop())
	for i := 0; i < 4; i++ { // power-on and load unit attentions
		if c := k.Submit(tur, targettest.Data{}); c.Status == scsi.StatusGood {
			return k
		}
	}
	b.Fatal("drive never became ready")
	return nil
}

func submitGood(b *testing.B, k *targettest.Kernel, cdb []byte) {
	if c := k.Submit(cdb, targettest.Data{}); c.Status != scsi.StatusGood {
		b.Fatalf("% x: status %v sense % x", cdb, c.Status, c.Sense)
	}
}

// chunk bounds the data on the image: the benchmark rewinds every chunk
// blocks (a write at BOT truncates the rest), so -benchtime decides the
// time spent, not the disk space used.
const chunk = 2048 // 512 MiB

// streamData are the blocks the streaming benchmarks write: with
// compression off; with it on, data that compresses about 2.5:1 (8-byte
// tokens drawn from 256, as text and databases do), and random data that
// does not compress (stored as written after the attempt).
func streamData() []struct {
	name, cfg string
	block     []byte
	encrypt   bool
} {
	r := rand.NewChaCha8([32]byte{9})
	var dict [256][8]byte
	for i := range dict {
		_, _ = r.Read(dict[i][:])
	}
	text := make([]byte, streamBlock)
	for i := 0; i < len(text); i += 8 {
		copy(text[i:], dict[r.Uint64()%256][:])
	}
	random := make([]byte, streamBlock)
	_, _ = r.Read(random)
	return []struct {
		name, cfg string
		block     []byte
		encrypt   bool
	}{
		{"dce-off", ";compression=0", random, false},
		{"compressible", "", text, false},
		{"random", "", random, false},
		{"compressible-encrypted", "", text, true},
		{"random-encrypted", "", random, true},
	}
}

// encrypt sets an AES-256 key on the drive (SECURITY PROTOCOL OUT, Set
// Data Encryption: encrypt, decrypt), as stenc does.
func encrypt(b *testing.B, k *targettest.Kernel) {
	page := []byte{0x00, 0x10, 0x00, 0x30, 0x40, 0x00, 0x02, 0x02, 0x01, 0x00, 0, 0, 0, 0, 0, 0, 0, 0, 0x00, 0x20}
	page = append(page, make([]byte, 32)...)
	spout := []byte{0xb5, 0x20, 0x00, 0x10, 0, 0, 0, 0, 0, byte(len(page)), 0, 0}
	if c := k.Submit(spout, targettest.DataOut(page)); c.Status != scsi.StatusGood {
		b.Fatalf("set data encryption: status %v sense % x", c.Status, c.Sense)
	}
}

func BenchmarkStreamWrite256K(b *testing.B) {
	for _, sd := range streamData() {
		b.Run(sd.name, func(b *testing.B) {
			k := streamDrive(b, sd.cfg)
			if sd.encrypt {
				encrypt(b, k)
			}
			pumpChunks(b, k, write256K, targettest.DataOut(sd.block))
		})
	}
}

func BenchmarkStreamRead256K(b *testing.B) {
	for _, sd := range streamData() {
		b.Run(sd.name, func(b *testing.B) {
			k := streamDrive(b, sd.cfg)
			if sd.encrypt {
				encrypt(b, k)
			}
			if bad, err := k.Pump(write256K, targettest.DataOut(sd.block), chunk); bad != 0 || err != nil {
				b.Fatalf("%d bad writes, %v", bad, err)
			}
			submitGood(b, k, rewind)
			pumpChunks(b, k, read256K, targettest.DataIn(streamBlock))
		})
	}
}

// pumpChunks is the timed loop: b.N commands cdb with data through the
// ring, a rewind (not timed) every chunk of them.
func pumpChunks(b *testing.B, k *targettest.Kernel, cdb []byte, data targettest.Data) {
	b.SetBytes(streamBlock)
	b.ReportAllocs()
	b.ResetTimer()
	for done := 0; done < b.N; {
		n := min(chunk, b.N-done)
		if bad, err := k.Pump(cdb, data, n); bad != 0 || err != nil {
			b.Fatalf("% x: %d bad commands, %v", cdb, bad, err)
		}
		done += n
		b.StopTimer()
		submitGood(b, k, rewind)
		b.StartTimer()
	}
}
