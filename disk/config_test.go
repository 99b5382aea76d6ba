package disk_test

import (
	"strings"
	"testing"

	"github.com/vscsid/vscsid/disk"
)

func TestParseConfigEmptyIsDefault(t *testing.T) {
	c, err := disk.ParseConfig("")
	if err != nil {
		t.Fatal(err)
	}
	if c != disk.DefaultConfig() {
		t.Fatalf("ParseConfig(\"\") = %+v, want DefaultConfig %+v", c, disk.DefaultConfig())
	}
	if c.HasSize() {
		t.Fatal("default config has a size")
	}
	if s := c.String(); s != "" {
		t.Fatalf("default String() = %q, want empty", s)
	}
}

func TestParseConfig(t *testing.T) {
	tests := []struct {
		in        string
		canonical string
		blocks    uint64
		check     func(t *testing.T, c disk.Config)
	}{
		{in: "size=1G", canonical: "size=1GiB", blocks: 2097152},
		{in: "size=1GiB", canonical: "size=1GiB", blocks: 2097152},
		{in: "size=1073741824", canonical: "size=1GiB", blocks: 2097152},
		{in: "size=1024m", canonical: "size=1GiB", blocks: 2097152},
		// Odd sizes: floor(size / lbs) blocks, like a disk sold as 1 GB (10^9 bytes).
		{in: "size=1000000000", canonical: "size=1GB", blocks: 1953125},
		{in: "size=1000000000;lbs=4096", canonical: "size=1GB;lbs=4096", blocks: 244140},
		{in: "size=1000", canonical: "size=1KB", blocks: 1},
		{in: "lbs=4096;blocks=8", canonical: "blocks=8;lbs=4096", blocks: 8},
		{in: "size=32T;mode=fake_rw", canonical: "size=32TiB", blocks: 32 << 40 / 512},
		{in: "size=1G;pbexp=3;lowest_aligned=1", canonical: "size=1GiB;pbexp=3;lowest_aligned=1", blocks: 2097152,
			check: func(t *testing.T, c disk.Config) {
				if c.OptGran != 8 || c.UnmapGran != 8 || c.PhysicalBlockSize() != 4096 {
					t.Errorf("pbexp=3: OptGran %d UnmapGran %d PBS %d, want 8 8 4096", c.OptGran, c.UnmapGran, c.PhysicalBlockSize())
				}
			}},
		{in: "size=1G;pbexp=3;opt_gran=1", canonical: "size=1GiB;pbexp=3;opt_gran=1", blocks: 2097152},
		{in: "size=4G;mode=store;store_size=16M", canonical: "size=4GiB;mode=store;store_size=16MiB", blocks: 8388608},
		{in: "size=4G;mode=store", canonical: "size=4GiB;mode=store", blocks: 8388608,
			check: func(t *testing.T, c disk.Config) {
				if c.StoreSize != 64<<20 {
					t.Errorf("StoreSize = %d, want 64 MiB", c.StoreSize)
				}
			}},
		{in: "size=1G;opt_blks=0;max_blks=0;max_ws_blks=0", canonical: "size=1GiB;opt_blks=0;max_ws_blks=0", blocks: 2097152},
		{in: "size=1G;opt_blks=256;max_blks=2048", canonical: "size=1GiB;opt_blks=256;max_blks=2048", blocks: 2097152},
		{in: "size=1G;wp=1;wce=true;dsense=on", canonical: "size=1GiB;wp=1;wce=1;dsense=1", blocks: 2097152},
		{in: "size=1G;atomic_wr=1", canonical: "size=1GiB;atomic_wr=1", blocks: 2097152,
			check: func(t *testing.T, c disk.Config) {
				if !c.AtomicWR || c.AtomicMax != 128 || c.AtomicAlign != 1 || c.AtomicGran != 1 {
					t.Errorf("atomic_wr=1: %v %d %d %d, want true 128 1 1", c.AtomicWR, c.AtomicMax, c.AtomicAlign, c.AtomicGran)
				}
			}},
		{in: "size=1G;pbexp=3;atomic_wr=yes;atomic_wr_max_length=64", canonical: "size=1GiB;pbexp=3;atomic_wr=1;atomic_wr_max_length=64", blocks: 2097152,
			check: func(t *testing.T, c disk.Config) {
				if c.AtomicAlign != 8 || c.AtomicGran != 8 {
					t.Errorf("pbexp=3: atomic alignment %d granularity %d, want 8 8", c.AtomicAlign, c.AtomicGran)
				}
			}},
		{in: "size=1G;atomic_wr=1;atomic_wr_align=0;atomic_wr_gran=4", canonical: "size=1GiB;atomic_wr=1;atomic_wr_align=0;atomic_wr_gran=4", blocks: 2097152},
		{in: "size=1G;lbpu=1;lbpws=1;lbpws10=1;lbprz=0;unmap_max_blocks=0x10000;unmap_max_desc=4095;unmap_gran=16",
			canonical: "size=1GiB;lbpu=1;lbpws=1;lbpws10=1;lbprz=0;unmap_max_blocks=65536;unmap_max_desc=4095;unmap_gran=16",
			blocks:    2097152},
		{in: "size=1G;vendor=ACME;product=Fast Disk 9000;rev=A1;serial=SN-0042",
			canonical: "size=1GiB;vendor=ACME;product=Fast Disk 9000;rev=A1;serial=SN-0042", blocks: 2097152},
		// The shared grammar (internal/cfgstring): empty pairs and spaces
		// are skipped, booleans take yes/no/on/off, numbers are decimal or
		// 0x hex and never octal (blocks=0100 was 64 blocks before), KB..TB
		// are 1000-based and fractions give whole bytes.
		{in: "size=1G;;lbs=512;", canonical: "size=1GiB", blocks: 2097152},
		{in: " size = 1G ; wp = yes ", canonical: "size=1GiB;wp=1", blocks: 2097152},
		{in: "blocks=0100;opt_blks=010", canonical: "blocks=100;opt_blks=10", blocks: 100},
		{in: "blocks=0x100", canonical: "blocks=256", blocks: 256},
		{in: "size=1GB", canonical: "size=1GB", blocks: 1953125},
		{in: "size=1.5G", canonical: "size=1.5GiB", blocks: 3 << 30 / 2 / 512},
		{in: "size=64MiB", canonical: "size=64MiB", blocks: 131072},
		{in: "size=1G;wp=off;wce=ON", canonical: "size=1GiB;wce=1", blocks: 2097152},
		{in: "size=1G;naa=0x5000c50012345678", canonical: "size=1GiB;naa=5000c50012345678", blocks: 2097152},
		{in: "size=1G;rotation=1;form_factor=2.5", canonical: "size=1GiB;form_factor=2.5", blocks: 2097152},
		{in: "size=1G;rotation=0", canonical: "size=1GiB;rotation=0", blocks: 2097152},
		{in: "size=1G;rotation=7200;form_factor=small", canonical: "size=1GiB;rotation=7200;form_factor=small", blocks: 2097152},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c, err := disk.ParseConfig(tt.in)
			if err != nil {
				t.Fatal(err)
			}
			if got := c.Capacity(); got != tt.blocks {
				t.Errorf("Capacity() = %d, want %d", got, tt.blocks)
			}
			if got := c.String(); got != tt.canonical {
				t.Errorf("String() = %q, want %q", got, tt.canonical)
			}
			again, err := disk.ParseConfig(c.String())
			if err != nil {
				t.Fatalf("canonical form does not parse: %v", err)
			}
			if again != c {
				t.Errorf("round trip:\n got %+v\nwant %+v", again, c)
			}
			if tt.check != nil {
				tt.check(t, c)
			}
		})
	}
}

func TestParseConfigErrors(t *testing.T) {
	tests := []struct {
		in   string
		want string // substring of the error; starts with the key at fault
	}{
		{"sise=1G", "sise: unknown key"},
		{"size=1G;size=2G", "size: given twice"},
		{"size=1G,lbs=4096", "','"},
		{"size=1G;vendor=a:b", "':'"},
		{"=1G", "empty key"},
		{"size", "\"size\" is not key=value"},
		{"size=", "size: empty value"},
		{"size=0", "size: must be at least one block"},
		{"size=100", "size: 100 bytes is less than one 512-byte block"},
		{"size=1X", "size: \"1X\" is not a size (want a byte count with an optional unit: K, M, G, T or KiB"},
		{"size=-1", "size: \"-1\" is not a size"},
		{"size=0x1000", "size: \"0x1000\" is not a size"},
		{"blocks=0b11", "blocks: \"0b11\" is not a number"},
		{"blocks=1_000", "blocks: \"1_000\" is not a number"},
		{"size=0.25K", "size: 256 bytes is less than one"},
		{"size=99999999999999999999", "size: \"99999999999999999999\" is out of range"},
		{"size=16777216T", "size: \"16777216T\" is out of range"},
		{"size=1G;blocks=10", "size and blocks"},
		{"blocks=0", "blocks: must be at least 1"},
		{"blocks=18446744073709551615", "blocks: 18446744073709551615 blocks of 512 bytes exceed 8 EiB"},
		{"size=1G;lbs=513", "lbs: 513 is not 512"},
		{"size=1G;lbs=8192", "lbs: 8192 is not 512"},
		{"size=1G;lbs=4k", "lbs: \"4k\" is not a number"},
		{"size=1G;pbexp=16", "pbexp: 16 is out of range 0..15"},
		{"size=1G;pbexp=256", "pbexp: \"256\" is out of range"},
		{"size=1G;pbexp=3;lowest_aligned=8", "lowest_aligned: 8 must be less than 2^pbexp = 8"},
		{"size=1G;lowest_aligned=1", "lowest_aligned: 1 must be less than 2^pbexp = 1"},
		{"size=1G;opt_blks=2048;max_blks=1024", "opt_blks: 2048 exceeds max_blks 1024"},
		{"size=1G;opt_gran=0", "opt_gran: must be at least 1"},
		{"size=1G;mode=raw", "mode: \"raw\" is not fake_rw or store"},
		{"size=1G;store_size=1M", "store_size: only meaningful with mode=store"},
		{"size=1G;mode=store;store_size=65G", "store_size: 69793218560 bytes exceeds the 64 GiB limit"},
		{"size=1G;mode=store;store_size=100", "store_size: 100 bytes is less than one 512-byte block"},
		{"size=1G;wp=2", "wp: \"2\" is not a boolean (want 0 or 1, true or false, yes or no, on or off)"},
		{"size=1G;lbprz=0", "lbprz: only meaningful with lbpu, lbpws or lbpws10"},
		{"size=1G;unmap_max_desc=8", "unmap_max_desc: only meaningful with lbpu"},
		{"size=1G;lbpu=1;unmap_max_desc=4096", "unmap_max_desc: 4096 exceeds 4095"},
		{"size=1G;lbpu=1;unmap_max_blocks=0", "unmap_max_blocks: must be at least 1"},
		{"size=1G;lbpws=1;unmap_gran=2147483648", "unmap_gran: 2147483648 exceeds 2^31-1"},
		{"size=1G;max_ws_blks=4294967296", "max_ws_blks: \"4294967296\" is out of range"},
		{"size=1G;vendor=TOOLONGVENDOR", "vendor: \"TOOLONGVENDOR\" is longer than 8"},
		{"size=1G;product=ABCDEFGHIJKLMNOPQ", "product: \"ABCDEFGHIJKLMNOPQ\" is longer than 16"},
		{"size=1G;rev=12345", "rev: \"12345\" is longer than 4"},
		{"size=1G;serial=caf\xc3\xa9", "serial: \"café\" has a non-printable or non-ASCII byte at 3"},
		{"size=1G;naa=6000c50012345678", "naa: \"6000c50012345678\" does not start with 5"},
		{"size=1G;naa=5000c500", "naa: \"5000c500\" is not 16 hex digits"},
		{"size=1G;naa=5000c5001234567g", "is not 16 hex digits"},
		{"size=1G;rotation=2", "rotation: 2 is not 0, 1 or 1025..65534"},
		{"size=1G;rotation=65535", "rotation: 65535 is not"},
		{"size=1G;form_factor=4", "form_factor: \"4\" is not one of none, 5.25, 3.5, 2.5, 1.8, small"},
		{"size=1G;atomic_wr_max_length=8", "atomic_wr_max_length: only meaningful with atomic_wr=1"},
		{"size=1G;atomic_wr=1;atomic_wr_max_length=0", "atomic_wr_max_length: must be at least 1"},
		{"size=1G;atomic_wr=1;atomic_wr_max_length=65536", "atomic_wr_max_length: \"65536\" is out of range"},
		{"size=1G;atomic_wr=1;max_blks=64;opt_blks=64", "atomic_wr_max_length: 128 exceeds max_blks 64"},
		{"size=1G;atomic_wr=1;atomic_wr_gran=256", "atomic_wr_gran: 256 exceeds atomic_wr_max_length 128"},
		{"size=1G;atomic_wr=1;atomic_wr_align=512", "atomic_wr_align: 512 exceeds atomic_wr_max_length 128"},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			c, err := disk.ParseConfig(tt.in)
			if err == nil {
				t.Fatalf("ParseConfig(%q) = %+v, want error containing %q", tt.in, c, tt.want)
			}
			if !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("ParseConfig(%q) error %q, want it to contain %q", tt.in, err, tt.want)
			}
		})
	}
}

func TestConfigDescMentionsEveryKey(t *testing.T) {
	for _, k := range []string{"size=", "blocks=", "lbs=", "pbexp=", "lowest_aligned=", "opt_blks=", "max_blks=",
		"opt_gran=", "mode=", "store_size=", "wp=", "wce=", "lbpu=", "lbpws=", "lbpws10=", "lbprz=",
		"unmap_max_blocks=", "unmap_max_desc=", "unmap_gran=", "max_ws_blks=", "vendor=", "product=", "rev=",
		"serial=", "naa=", "rotation=", "form_factor=", "dsense="} {
		if !strings.Contains(disk.ConfigDesc, k) {
			t.Errorf("ConfigDesc does not document %s", k)
		}
		// Every documented key must be accepted by the parser.
		if _, err := disk.ParseConfig(k + "x"); err != nil && strings.Contains(err.Error(), "unknown key") {
			t.Errorf("ConfigDesc documents %s but ParseConfig does not know it", k)
		}
	}
}

func TestValidateGoBuiltConfig(t *testing.T) {
	c := disk.DefaultConfig()
	c.Size = 1 << 30
	c.Vendor = "A;B"
	if err := c.Validate(); err == nil || !strings.Contains(err.Error(), "vendor") {
		t.Fatalf("Validate with ';' in vendor: %v, want vendor error", err)
	}
	var zero disk.Config
	zero.Blocks = 10
	if err := zero.Validate(); err == nil || !strings.Contains(err.Error(), "lbs: 0") {
		t.Fatalf("zero Config: %v, want lbs error (start from DefaultConfig)", err)
	}
}

func TestWithDefaultSize(t *testing.T) {
	c, err := disk.ParseConfig("lbs=4096")
	if err != nil {
		t.Fatal(err)
	}
	if got := c.WithDefaultSize(1 << 30).Capacity(); got != 262144 {
		t.Fatalf("dev_size fallback: %d blocks, want 262144", got)
	}
	c, _ = disk.ParseConfig("blocks=100")
	if got := c.WithDefaultSize(1 << 30).Capacity(); got != 100 {
		t.Fatalf("cfgstring capacity must win over dev_size: %d blocks", got)
	}
}
