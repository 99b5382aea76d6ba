package cartridge

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"sync"
	"testing"

	"github.com/vscsid/vscsid/tape"
)

// The crash tests drive an image through random writes, syncs, mid-tape
// writes and erases, then build the file a crash could leave behind and
// check what opening it recovers:
//
//   - it always opens;
//   - every object durable at the last fdatasync (as the superblock on disk
//     says) reads back bit-exact;
//   - whatever else is recovered is a prefix of a state the tape really
//     had since the last Sync: no garbage, no record that an erase or
//     overwrite followed by a Sync had discarded, no mix of old and new;
//   - writing after the recovery works and survives a reopen.
//
// The crash file is either the final file cut at a random point after the
// durable end (inside a header, inside data, at a boundary) or a page-wise
// mix of the snapshot taken at the last fdatasync and the final file (the
// page cache wrote back an arbitrary subset), with random bytes flipped in
// the non-durable tail in both cases.

type crashRun struct {
	t        *testing.T
	r        *rand.Rand
	m        *Image
	part     int
	model    []obj   // the partition as the drive sees it now
	history  [][]obj // every state since the last Sync, current last
	snapshot []byte  // the file at the last fdatasync
}

func newCrashRun(t *testing.T, seed uint64) *crashRun {
	r := rand.New(rand.NewPCG(seed, 42))
	var parts []int64
	part := 0
	switch r.IntN(3) {
	case 1: // two partitions, the one under test is the last region
		parts, part = []int64{1 << 20, 0}, 1
	case 2: // two partitions, the one under test is followed by another region
		parts, part = []int64{8 << 20, 0}, 0
	}
	return newCrashRunWith(t, r, parts, part)
}

func newCrashRunWith(t *testing.T, r *rand.Rand, parts []int64, part int) *crashRun {
	m := openTemplate(t, Options{Capacity: 64 << 20, Partitions: parts})
	c := &crashRun{t: t, r: r, m: m, part: part}
	m.noSync = true // power loss is simulated with snapshots
	m.afterSync = func() {
		b, err := os.ReadFile(m.path)
		if err != nil {
			t.Fatal(err)
		}
		c.snapshot = b
	}
	if err := m.Locate(part, 0); err != nil && !errors.Is(err, tape.ErrEndOfData) {
		t.Fatal(err)
	}
	c.snapshot, _ = os.ReadFile(m.path)
	c.history = [][]obj{nil}
	return c
}

func (c *crashRun) run(ops int, g *gen) {
	t, m := c.t, c.m
	for range ops {
		switch x := c.r.IntN(100); {
		case x < 10:
			if err := m.Sync(); err != nil {
				t.Fatal(err)
			}
			c.history = [][]obj{slices.Clone(c.model)}
			continue
		case x < 15 && len(c.model) > 0: // write in the middle
			at := c.r.IntN(len(c.model))
			if err := m.Locate(c.part, uint64(at)); err != nil {
				t.Fatal(err)
			}
			o := g.any()
			mustPut(t, m, o)
			c.model = append(c.model[:at:at], o)
		case x < 18 && len(c.model) > 0: // erase in the middle
			at := c.r.IntN(len(c.model))
			if err := m.Locate(c.part, uint64(at)); err != nil {
				t.Fatal(err)
			}
			if err := m.Erase(); err != nil {
				t.Fatal(err)
			}
			c.model = c.model[:at:at]
		default:
			if err := m.Locate(c.part, uint64(len(c.model))); !errors.Is(err, tape.ErrEndOfData) {
				t.Fatal(err)
			}
			o := g.any()
			mustPut(t, m, o)
			c.model = append(c.model, o)
		}
		c.history = append(c.history, slices.Clone(c.model))
	}
	// Often end on an erase (possibly synced): nothing overwrites the
	// discarded records then, the hardest case for stale data.
	if c.r.IntN(3) == 0 && len(c.model) > 0 {
		at := c.r.IntN(len(c.model))
		if err := m.Locate(c.part, uint64(at)); err != nil {
			t.Fatal(err)
		}
		if err := m.Erase(); err != nil {
			t.Fatal(err)
		}
		c.model = c.model[:at:at]
		c.history = append(c.history, slices.Clone(c.model))
		if c.r.IntN(2) == 0 {
			if err := m.Sync(); err != nil {
				t.Fatal(err)
			}
			c.history = [][]obj{slices.Clone(c.model)}
		}
	}
}

// openTemplate opens a copy of a fresh cartridge made once per option set
// (Create fsyncs, which makes hundreds of runs slow on real disks).
func openTemplate(t *testing.T, opts Options) *Image {
	key := fmt.Sprint(opts)
	templatesMu.Lock()
	defer templatesMu.Unlock()
	b, ok := templates[key]
	if !ok {
		dir := t.TempDir()
		if err := Create(dir, "TMPL", opts); err != nil {
			t.Fatal(err)
		}
		var err error
		if b, err = os.ReadFile(Path(dir, "TMPL")); err != nil {
			t.Fatal(err)
		}
		templates[key] = b
	}
	return openBytes(t, b)
}

// templates are fresh images by options, made once (the crash seeds run
// in parallel).
var (
	templatesMu sync.Mutex
	templates   = map[string][]byte{}
)

// durable returns the object count and the end offset (absolute) of the
// test partition that the newest valid superblock of b vouches for.
func durable(t *testing.T, b []byte, part int) (uint64, int64) {
	var best *superblock
	for i := range 2 {
		if len(b) < (i+1)*slotSize {
			continue
		}
		sb, err := unmarshalSuperblock(b[i*slotSize : (i+1)*slotSize])
		if err == nil && (best == nil || sb.seq > best.seq) {
			best = sb
		}
	}
	if best == nil {
		t.Fatal("snapshot has no valid superblock")
	}
	e := best.parts[part]
	return e.objects, e.start + e.end
}

// check opens crash file b and verifies the recovery invariants.
func (c *crashRun) check(b []byte, what string) {
	t := c.t
	t.Helper()
	d, _ := durable(t, c.snapshot, c.part)
	img := openBytes(t, b)
	got := readAll(t, img, c.part)
	if uint64(len(got)) < d {
		t.Fatalf("%s: recovered %d objects, %d were durable\n got %v\nwant %v", what, len(got), d, got, c.model)
	}
	ok := false
	for _, h := range c.history {
		if len(got) <= len(h) && equalObjs(got, h[:len(got)]) {
			ok = true
			break
		}
	}
	if !ok {
		t.Fatalf("%s: recovered state %v\nis no prefix of a state since the last sync; now %v", what, got, c.model)
	}
	// Writing after recovery discards the tail and survives a reopen.
	g := newGen(c.r.Uint64()>>8, 5000)
	more := []obj{g.block(100), {kind: tape.KindFilemark}, g.block(3000)}
	if err := img.Locate(c.part, uint64(len(got))); !errors.Is(err, tape.ErrEndOfData) {
		t.Fatal(err)
	}
	mustPut(t, img, more...)
	img = reopen(t, img)
	if after := readAll(t, img, c.part); !equalObjs(after, append(got, more...)) {
		t.Fatalf("%s: after writing on the recovered image: %v\nwant %v", what, after, append(got, more...))
	}
	if err := img.Close(); err != nil {
		t.Fatal(err)
	}
}

func (c *crashRun) flipTail(b []byte, from int64) {
	if from >= int64(len(b)) {
		return
	}
	for range c.r.IntN(4) {
		i := from + c.r.Int64N(int64(len(b))-from)
		b[i] ^= byte(1 + c.r.IntN(255))
	}
}

// crashSeeds is how many seeds each crash test runs: 300, or 50 with
// -short. Under -race, 30: the detector checks what the parallel seeds
// share (the image templates) with a few, and each seed alone is one
// goroutine, in which it finds nothing, at ten times the CPU. make unit and
// make test's crash part run the 300 without it.
func crashSeeds(_ *testing.T) int {
	switch {
	case testing.Short():
		return 50
	case raceDetector:
		return 30
	}
	return 300
}

func TestCrashCut(t *testing.T) {
	for seed := range uint64(crashSeeds(t)) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel() // each seed has its own image
			c := newCrashRun(t, seed)
			g := newGen(seed+1000, 16<<10)
			c.run(40+c.r.IntN(40), g)
			final, _ := os.ReadFile(c.m.path)
			_, end := durable(t, c.snapshot, c.part)
			if end > int64(len(final)) {
				t.Fatalf("durable end %d beyond the file (%d bytes): durable data was cut", end, len(final))
			}
			// Offsets of the records of the current state after the
			// durable end: cut inside their header or data.
			start := c.m.parts[c.part].start
			var bounds []int64
			off := start
			for _, o := range c.model {
				if off >= end {
					bounds = append(bounds, off)
				}
				off += recHeaderSize + int64(o.n)
			}
			bounds = append(bounds, off)
			for k := range 6 {
				cut := int64(len(final))
				b := bounds[c.r.IntN(len(bounds))]
				switch k % 3 {
				case 0: // inside a header
					cut = b + c.r.Int64N(recHeaderSize)
				case 1: // inside the data (or the next header)
					cut = b + recHeaderSize + c.r.Int64N(16<<10)
				case 2: // at a record boundary
					cut = b
				}
				cut = max(end, min(cut, int64(len(final))))
				crash := append([]byte(nil), final[:cut]...)
				if k >= 3 {
					c.flipTail(crash, end)
				}
				c.check(crash, fmt.Sprintf("cut at %d (durable end %d)", cut, end))
			}
		})
	}
}

func TestCrashPageLoss(t *testing.T) {
	const page = 4096
	for seed := range uint64(crashSeeds(t)) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			t.Parallel() // each seed has its own image
			c := newCrashRun(t, seed+50_000)
			g := newGen(seed+2000, 16<<10)
			c.run(40+c.r.IntN(40), g)
			final, _ := os.ReadFile(c.m.path)
			_, end := durable(t, c.snapshot, c.part)
			for range 4 {
				s, f := c.snapshot, final
				lo, hi := min(len(s), len(f)), max(len(s), len(f))
				size := lo + c.r.IntN(hi-lo+1)
				crash := make([]byte, size)
				pNew := c.r.Float64()
				for p := 0; p < size; p += page {
					src := s
					if c.r.Float64() < pNew {
						src = f
					}
					if p < len(src) {
						copy(crash[p:min(p+page, size)], src[p:min(p+page, len(src))])
					}
				}
				c.flipTail(crash, end)
				c.check(crash, fmt.Sprintf("page mix (new %.2f, size %d, durable end %d)", pNew, size, end))
			}
		})
	}
}

// TestCrashLargeBlocks cuts images inside blocks larger than the write
// buffer, which go out as several pwrites (data first, header last).
func TestCrashLargeBlocks(t *testing.T) {
	c := newCrashRunWith(t, rand.New(rand.NewPCG(7, 7)), nil, 0)
	g := newGen(77, 1)
	for i := range 4 {
		o := g.block(wbufSize + 1000 + i*777_777)
		mustPut(t, c.m, o)
		c.model = append(c.model, o)
		c.history = append(c.history, slices.Clone(c.model))
		if i == 0 {
			if err := c.m.Sync(); err != nil {
				t.Fatal(err)
			}
			c.history = [][]obj{slices.Clone(c.model)}
		}
	}
	final, _ := os.ReadFile(c.m.path)
	_, end := durable(t, c.snapshot, 0)
	for k := range 12 {
		cut := end + c.r.Int64N(int64(len(final))-end+1)
		crash := append([]byte(nil), final[:cut]...)
		if k%2 == 1 {
			c.flipTail(crash, end)
		}
		c.check(crash, fmt.Sprintf("cut at %d (durable end %d)", cut, end))
	}
}
