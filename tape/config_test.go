package tape

import (
	"bytes"
	"os"
	"strings"
	"testing"
	"time"
)

func TestParseConfig(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want Config
		str  string
	}{
		{
			in:   "media=/var/lib/vscsid/tapes",
			want: Config{Personality: "generic", Media: "/var/lib/vscsid/tapes", Capacity: DefaultMemoryCapacity, EarlyWarning: DefaultMemoryEarlyWarning, MaxBlock: DefaultMaxBlock, MinBlock: 1},
			str:  "personality=generic;media=/var/lib/vscsid/tapes",
		},
		{
			in: "personality=lto9;media=/srv/t;barcode=TAPE01L9;serial=X1;dsense=1;max_block=524288;min_block=4;blksize=0",
			want: Config{Personality: "lto9", Media: "/srv/t", Barcode: "TAPE01L9", Serial: "X1", DSense: true,
				Capacity: DefaultMemoryCapacity, EarlyWarning: DefaultMemoryEarlyWarning, MaxBlock: 524288, MinBlock: 4, BlockSizeSet: true},
			str: "personality=lto9;media=/srv/t;barcode=TAPE01L9;max_block=524288;min_block=4;blksize=0;serial=X1;dsense=1",
		},
		{
			in: "personality=dat72;memory=1;capacity=256M;early_warning=4M;wp=1;worm=1;barcode=DDS001;",
			want: Config{Personality: "dat72", Memory: true, Barcode: "DDS001", Capacity: 256 << 20, EarlyWarning: 4 << 20,
				WriteProtect: true, WORM: true, MaxBlock: DefaultMaxBlock, MinBlock: 1},
			str: "personality=dat72;memory=1;barcode=DDS001;capacity=256MiB;early_warning=4MiB;wp=1;worm=1",
		},
		{
			// The shared grammar (internal/cfgstring): IEC and SI units
			// (capacity=64MiB was refused), yes/no booleans (only 0/1
			// before), 0x numbers, spaces and empty pairs.
			in: " memory = yes ;; capacity=64MiB;early_warning=1.5MB;max_block=0x10000;dsense=on;",
			want: Config{Personality: "generic", Memory: true, Capacity: 64 << 20, EarlyWarning: 1_500_000,
				MaxBlock: 0x10000, MinBlock: 1, DSense: true},
			str: "personality=generic;memory=1;early_warning=1.5MB;max_block=65536;dsense=1",
		},
		{
			in:   "memory=1;capacity=1500000000",
			want: Config{Personality: "generic", Memory: true, Capacity: 1500000000, EarlyWarning: DefaultMemoryEarlyWarning, MaxBlock: DefaultMaxBlock, MinBlock: 1},
			str:  "personality=generic;memory=1;capacity=1.5GB",
		},
		{
			in: "memory=1;cleantime=500ms;cleaninglife=2;cleanafter=3",
			want: Config{Personality: "generic", Memory: true, Capacity: DefaultMemoryCapacity, EarlyWarning: DefaultMemoryEarlyWarning,
				MaxBlock: DefaultMaxBlock, MinBlock: 1, CleanAfter: 3, CleaningLife: 2, CleanTime: 500 * time.Millisecond},
			str: "personality=generic;memory=1;cleanafter=3;cleaninglife=2;cleantime=500ms",
		},
		{
			in: "memory=1;compression=off",
			want: Config{Personality: "generic", Memory: true, Capacity: DefaultMemoryCapacity, EarlyWarning: DefaultMemoryEarlyWarning,
				MaxBlock: DefaultMaxBlock, MinBlock: 1},
			str: "personality=generic;memory=1;compression=0",
		},
	} {
		got, err := ParseConfig(tt.in)
		if err != nil {
			t.Fatalf("ParseConfig(%q): %v", tt.in, err)
		}
		// Cases that leave the cleaning keys out get their defaults.
		if tt.want.CleaningLife == 0 {
			tt.want.CleaningLife = DefaultCleaningLife
		}
		if tt.want.CleanTime == 0 {
			tt.want.CleanTime = DefaultCleanTime
		}
		// and compression on unless they turn it off.
		tt.want.Compression = !strings.Contains(tt.in, "compression=")
		if got != tt.want {
			t.Fatalf("ParseConfig(%q) =\n%+v, want\n%+v", tt.in, got, tt.want)
		}
		if s := got.String(); s != tt.str {
			t.Fatalf("String() = %q, want %q", s, tt.str)
		}
		again, err := ParseConfig(got.String())
		if err != nil || again != got {
			t.Fatalf("round trip of %q: %+v, %v", got.String(), again, err)
		}
	}
}

func TestParseConfigErrors(t *testing.T) {
	for _, tt := range []struct {
		in, want string
	}{
		{"", "media: required"},
		{"memory=1;media=/x", "media: not used with memory=1"},
		{"media=/x,y", "',' and ':' are not allowed"},
		{"media=/x:y", "',' and ':' are not allowed"},
		{"memory=1;max_block=1_024", "max_block=\"1_024\": \"1_024\" is not a number"},
		{"media=/x;color=red", `unknown key "color"`},
		{"memory=1;cleantime=5", `cleantime="5": want a duration`},
		{"memory=1;cleantime=-1s", `cleantime="-1s": negative`},
		{"memory=1;cleantime=11m", `cleantime="11m": more than 10m`},
		{"memory=1;cleaninglife=0", `cleaninglife="0": "0" is out of range 1..1048576`},
		{"memory=1;cleanafter=-1", `cleanafter="-1"`},
		{"media=/x;media=/y", "media: given twice"},
		{"media=/x;personality=lto4", "personality=\"lto4\": unknown drive model"},
		{"memory=1;max_block=16777216", "max_block=\"16777216\": exceeds 16777215"},
		{"memory=1;personality=lto9;max_block=16777215", "max_block: 16777215 exceeds the lto9 maximum block size 8388608"},
		{"memory=1;max_block=0", "max_block=\"0\": must be at least 1"},
		{"memory=1;min_block=2048;max_block=1024", "min_block: 2048 exceeds max_block 1024"},
		{"memory=1;min_block=65536", "min_block: 65536 exceeds 65535"},
		{"memory=1;blksize=4;min_block=512", "blksize: 4 outside the block limits"},
		{"memory=1;personality=dat72;max_block=512", "the dat72 default block size 1024"},
		{"memory=1;capacity=10K", "capacity=\"10K\": less than 1MiB"},
		{"memory=1;capacity=0x100000", "capacity=\"0x100000\": \"0x100000\" is not a size"},
		{"memory=1;capacity=8EiB", "is not a size"},
		{"memory=1;capacity=8388608T", "out of range"},
		{"memory=1;capacity=lots", "capacity=\"lots\": \"lots\" is not a size (want a byte count with an optional unit: K, M, G, T or KiB"},
		{"memory=1;capacity=2M;early_warning=2M", "early_warning: 2097152 must be less than capacity"},
		{"media=/x;capacity=2M", "capacity: only with memory=1"},
		{"media=/x;wp=1", "wp: only with memory=1"},
		{"memory=1;barcode=../etc", "barcode=\"../etc\": want 1 to 8 characters A-Z 0-9"},
		{"memory=1;barcode=A/B", "barcode=\"A/B\": want 1 to 8 characters A-Z 0-9"},
		{"memory=1;barcode=backup-2024.01", "barcode=\"backup-2024.01\": want 1 to 8 characters A-Z 0-9"},
		{"memory=1;barcode=" + strings.Repeat("A", 9), "want 1 to 8 characters"},
		{"memory=1;serial=", "serial=\"\": want 1 to 32 characters"},
		{"memory=1;dsense=2", "dsense=\"2\": \"2\" is not a boolean (want 0 or 1, true or false, yes or no, on or off)"},
		{"memory", `"memory": want key=value`},
	} {
		_, err := ParseConfig(tt.in)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseConfig(%q) = %v, want an error containing %q", tt.in, err, tt.want)
		}
	}
}

func TestConfigDescMentionsEveryKey(t *testing.T) {
	for _, k := range []string{"personality", "media", "barcode", "memory", "capacity", "early_warning", "wp", "worm",
		"max_block", "min_block", "blksize", "serial", "dsense"} {
		if !strings.Contains(ConfigDesc, k) {
			t.Errorf("ConfigDesc does not document %s", k)
		}
	}
	for _, n := range PersonalityNames() {
		if !strings.Contains(ConfigDesc, n) && !strings.Contains(ConfigDesc, strings.TrimRight(n, "56789")) {
			t.Errorf("ConfigDesc does not mention personality %s", n)
		}
	}
	// The examples parse.
	n := 0
	for _, line := range strings.Split(ConfigDesc, "\n") {
		if ex, ok := strings.CutPrefix(line, "  personality="); ok {
			n++
			if _, err := ParseConfig("personality=" + ex); err != nil {
				t.Errorf("example %q: %v", line, err)
			}
		}
	}
	if n != 2 {
		t.Errorf("%d examples found", n)
	}
}

func TestPersonalities(t *testing.T) {
	for _, n := range PersonalityNames() {
		p, ok := LookupPersonality(n)
		if !ok {
			t.Fatalf("%s not found", n)
		}
		if len(p.Vendor) > 8 || len(p.Product) > 16 || len(p.Revision) != 4 || len(p.Densities) == 0 {
			t.Errorf("%s: identity %q %q %q", n, p.Vendor, p.Product, p.Revision)
		}
		if p.MaxPartitions < 1 || p.MaxPartitions > 4 || p.MaxBlockSize > maxBlock24 {
			t.Errorf("%s: partitions %d max block %d", n, p.MaxPartitions, p.MaxBlockSize)
		}
		if !p.DefaultDensity().Writable {
			t.Errorf("%s: the default density is not writable", n)
		}
		for _, d := range p.Densities {
			if len(d.Name) > 8 || len(d.Description) > 20 || len(d.Organization) > 8 || len(d.MediumName) > 8 {
				t.Errorf("%s: density %#x strings too long", n, d.Code)
			}
		}
	}
	want := map[string]uint8{"lto5": 0x58, "lto6": 0x5a, "lto7": 0x5c, "lto8": 0x5e, "lto9": 0x60, "hp-lto9": 0x60, "dat72": 0x47}
	caps := map[string]uint32{"lto5": 1500000, "lto6": 2500000, "lto7": 6000000, "lto8": 12000000, "lto9": 18000000, "dat72": 36000}
	for n, code := range want {
		p, _ := LookupPersonality(n)
		if p.DefaultDensity().Code != code {
			t.Errorf("%s: density %#x, want %#x", n, p.DefaultDensity().Code, code)
		}
		if c, ok := caps[n]; ok && p.DefaultDensity().CapacityMB != c {
			t.Errorf("%s: capacity %d MB, want %d", n, p.DefaultDensity().CapacityMB, c)
		}
	}
	p, _ := LookupPersonality("dat72")
	if p.DefaultBlockSize != 1024 || !p.Setmarks {
		t.Error("dat72: not fixed 1024 with setmarks")
	}
	p, _ = LookupPersonality("lto9")
	if p.Setmarks || p.DefaultBlockSize != 0 || p.Product != "ULT3580-TD9" {
		t.Error("lto9 profile")
	}
}

// The supported-drive tables LTFS's sg backend matches INQUIRY against
// (vendor and product as prefixes, space padded) and the minimum
// revisions its IBM backend requires, as LTFS's IBM backend expects.
var ltfsDrives = []struct{ vendor, product, minRev string }{
	{"IBM", "ULT3580-TD5", "B170"}, {"IBM", "ULT3580-TD6", ""}, {"IBM", "ULT3580-TD7", ""},
	{"IBM", "ULT3580-TD8", "HB81"}, {"IBM", "ULT3580-TD9", ""}, {"IBM", "ULT3580-TDA", ""},
	{"HP", "Ultrium 5-SCSI", ""}, {"HP", "Ultrium 6-SCSI", ""}, {"HP", "Ultrium 7-SCSI", ""},
	{"HPE", "Ultrium 8-SCSI", ""}, {"HPE", "Ultrium 9-SCSI", ""},
}

func TestLTOPersonalitiesMatchLTFSTables(t *testing.T) {
	pad := func(s string, n int) string { return s + strings.Repeat(" ", n-len(s)) }
	for _, p := range personalities {
		if !strings.Contains(p.Name, "lto") {
			continue
		}
		vendor, product := pad(p.Vendor, 8), pad(p.Product, 16)
		found := false
		for _, d := range ltfsDrives {
			if !strings.HasPrefix(vendor, d.vendor) || !strings.HasPrefix(product, d.product) {
				continue
			}
			// The vendor also selects LTFS's table: "HP" is a prefix of
			// "HPE", but the HP table is only searched by exact vendor.
			if strings.TrimRight(vendor, " ") != d.vendor {
				continue
			}
			found = true
			if d.minRev != "" && p.Revision < d.minRev {
				t.Errorf("%s: revision %q below LTFS's gate %q", p.Name, p.Revision, d.minRev)
			}
		}
		if !found {
			t.Errorf("%s: %q %q is not in LTFS's supported-drive tables", p.Name, p.Vendor, p.Product)
		}
	}
}

func TestHelpAndReadmeListEveryIdentity(t *testing.T) {
	readme, err := os.ReadFile("../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range personalities {
		line := ""
		for _, l := range strings.Split(ConfigDesc, "\n") {
			if f := strings.Fields(l); len(f) > 0 && f[0] == p.Name {
				line = l
			}
		}
		for _, s := range []string{p.Vendor, p.Product, p.Revision} {
			if !strings.Contains(line, s) {
				t.Errorf("ConfigDesc line of %s %q lacks %q", p.Name, line, s)
			}
			if !bytes.Contains(readme, []byte(s)) {
				t.Errorf("docs/configuration.md does not mention %q of %s", s, p.Name)
			}
		}
	}
	if !bytes.Contains(readme, []byte("`hp-lto8`, `hp-lto9` HPE /")) {
		t.Error("docs/configuration.md does not give the HPE vendor of hp-lto8 and hp-lto9")
	}
}
