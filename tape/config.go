package tape

import (
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/vscsid/vscsid/internal/cfgstring"
	"github.com/vscsid/vscsid/internal/device"
)

// ConfigDesc documents the vtape cfgstring (shown by `targetcli help
// create` and `vscsid --help`). Keep it in step with ParseConfig; the
// personality list is generated from the personality table.
var ConfigDesc = configDescHead + personalityHelp("               ") + configDescTail

const configDescHead = `vtape: an SSC tape drive (st, mt-st, tar, LTFS).
cfgstring: semicolon-separated key=value pairs, no commas or colons (spaces
around keys and values and empty pairs are ignored), e.g.
  personality=lto9;media=/var/lib/vscsid/tapes;barcode=TAPE01L9
  personality=dat72;memory=1;capacity=256M;barcode=DDS001
keys:
  personality  drive model (default generic), with the INQUIRY vendor,
               product and revision it reports:
`

const configDescTail = `  media        directory of cartridge images (required unless memory=1)
  barcode      cartridge loaded at start, 1-8 characters A-Z 0-9 (the
               cartridge library's rule); empty or absent = empty drive
  memory       1 = cartridges live in RAM (lost on exit; for tests and
               experiments); 0 (default) = image files under media
  capacity     memory cartridges: native capacity, a size as vdisk size=:
               bytes, optional fraction and unit K/M/G/T = KiB/MiB/GiB/TiB
               (1024-based) or KB/MB/GB/TB (1000-based); default 64MiB
  early_warning memory cartridges: early-warning zone before the end of
               each partition, a size, default 1MiB, less than capacity
  wp           memory cartridges: 1 = write protected (default 0)
  worm         memory cartridges: 1 = WORM (default 0)
  max_block    READ BLOCK LIMITS maximum, bytes (decimal or 0x hex, as
               min_block and blksize), default 1048576 (the most
               tcm_loop carries in one command); at most 16777215 (24-bit
               field) and at most the model's maximum
  min_block    READ BLOCK LIMITS minimum, bytes, default 1, at most 65535
  blksize      block size at start and after reset: 0 = variable, else
               fixed; default: the model's (dat72 1024, others 0)
  cleanafter   ask for cleaning (TapeAlert flag 20, Clean Now) after this
               many data cartridge loads since the last cleaning; 0
               (default) = never
  cleaninglife uses of a cleaning cartridge (barcode CLN...) before it
               is expired (TapeAlert flag 22), default 50; the cartridge's
               load count is its use count
  cleantime    how long a cleaning takes (NOT READY 30/03 meanwhile; the
               drive then unloads the cartridge), a duration such as 3s or
               500ms, default 3s
  serial       unit serial number (VPD 80h), [A-Za-z0-9._-], 1-32
               characters; default derived from the device name
  dsense       1 = descriptor-format sense data (default 0 = fixed)
  compression  data compression (DCE of mode page 0Fh) at start and after
               reset: 1 (default, as LTO drives power on) = records are
               compressed on the cartridge, so compressible data takes
               less capacity; 0 = every byte is stored as written (a
               host may still turn it on with MODE SELECT or mt compression)
Booleans (memory, wp, worm, dsense, compression) are 0|1, true|false,
yes|no, on|off.`

// Defaults.
const (
	DefaultMaxBlock           = 1 << 20 // tcm_loop's largest command (256 × 4 KiB)
	DefaultMinBlock           = 1
	DefaultMemoryCapacity     = 64 << 20
	DefaultMemoryEarlyWarning = 1 << 20
	// DefaultCleaningLife is the rated uses of an LTO Universal Cleaning
	// Cartridge.
	DefaultCleaningLife = 50
	// DefaultCleanTime is vscsid's choice: long enough for software to see
	// 30/03, short for tests (a real drive takes a minute or two).
	DefaultCleanTime = 3 * time.Second
	maxSerialLen     = 32
)

// Config is a parsed vtape cfgstring. The zero value is not valid; use
// ParseConfig (or fill every field as ParseConfig would).
type Config struct {
	Personality string // personality name, default "generic"
	Media       string // media directory for the Library
	Barcode     string // loaded at start; "" = empty drive
	Memory      bool   // in-RAM cartridges

	Capacity     int64 // memory cartridges
	EarlyWarning int64 // memory cartridges
	WriteProtect bool  // memory cartridges
	WORM         bool  // memory cartridges

	MaxBlock     uint32
	MinBlock     uint32
	BlockSize    uint32 // valid if BlockSizeSet
	BlockSizeSet bool

	Serial string // "" = derived from the device name
	DSense bool
	// Compression is DCE at power-on and after a reset (ParseConfig's
	// default: true).
	Compression bool

	CleanAfter   int           // data loads before Clean Now; 0 = never
	CleaningLife int           // uses of a cleaning cartridge; 0 = DefaultCleaningLife
	CleanTime    time.Duration // length of a cleaning; 0 = at once
}

// ParseConfig parses a cfgstring strictly: an unknown or repeated key, a
// malformed or out-of-range value, or a missing required key is an error
// that names the key.
func ParseConfig(s string) (Config, error) {
	c := Config{
		Personality:  "generic",
		Capacity:     DefaultMemoryCapacity,
		EarlyWarning: DefaultMemoryEarlyWarning,
		MaxBlock:     DefaultMaxBlock,
		MinBlock:     DefaultMinBlock,
		CleaningLife: DefaultCleaningLife,
		CleanTime:    DefaultCleanTime,
		Compression:  true,
	}
	pairs, err := cfgstring.Split(s)
	if err != nil {
		return Config{}, fmt.Errorf("vtape config: %w", err)
	}
	memoryOnly := []string{}
	for _, p := range pairs {
		k, v := p.Key, p.Value
		if !p.HasValue {
			return Config{}, fmt.Errorf("vtape config: %q: want key=value", k)
		}
		var err error
		switch k {
		case "personality":
			if _, ok := LookupPersonality(v); !ok {
				err = fmt.Errorf("unknown drive model %q (want one of: %s)", v, personalityList())
			}
			c.Personality = v
		case "media":
			if v == "" {
				err = errors.New("empty directory")
			}
			c.Media = v
		case "barcode":
			if v != "" {
				err = cfgstring.Barcode(v)
			}
			c.Barcode = v
		case "memory":
			c.Memory, err = cfgstring.Bool(v)
		case "capacity":
			c.Capacity, err = parseSize(v)
			if err == nil && c.Capacity < 1<<20 {
				err = errors.New("less than 1MiB")
			}
			memoryOnly = append(memoryOnly, k)
		case "early_warning":
			c.EarlyWarning, err = parseSize(v)
			memoryOnly = append(memoryOnly, k)
		case "wp":
			c.WriteProtect, err = cfgstring.Bool(v)
			memoryOnly = append(memoryOnly, k)
		case "worm":
			c.WORM, err = cfgstring.Bool(v)
			memoryOnly = append(memoryOnly, k)
		case "max_block":
			c.MaxBlock, err = parseBlock(v)
			if err == nil && c.MaxBlock == 0 {
				err = errors.New("must be at least 1")
			}
		case "min_block":
			c.MinBlock, err = parseBlock(v)
			if err == nil && c.MinBlock == 0 {
				err = errors.New("must be at least 1")
			}
		case "blksize":
			c.BlockSize, err = parseBlock(v)
			c.BlockSizeSet = true
		case "serial":
			err = checkName(v, maxSerialLen)
			c.Serial = v
		case "dsense":
			c.DSense, err = cfgstring.Bool(v)
		case "compression":
			c.Compression, err = cfgstring.Bool(v)
		case "cleanafter":
			var n uint64
			n, err = cfgstring.Uint(v, 0, 1<<20)
			c.CleanAfter = int(n)
		case "cleaninglife":
			var n uint64
			n, err = cfgstring.Uint(v, 1, 1<<20)
			c.CleaningLife = int(n)
		case "cleantime":
			c.CleanTime, err = cfgstring.Duration(v)
			if err == nil && c.CleanTime > 10*time.Minute {
				err = errors.New("more than 10m")
			}
		default:
			return Config{}, fmt.Errorf("vtape config: unknown key %q", k)
		}
		if err != nil {
			return Config{}, fmt.Errorf("vtape config: %s=%q: %w", k, v, err)
		}
	}
	if err := c.validate(memoryOnly); err != nil {
		return Config{}, fmt.Errorf("vtape config: %w", err)
	}
	return c, nil
}

// Validate checks a Config built by hand the way ParseConfig checks a
// parsed one.
func (c Config) Validate() error {
	var memoryOnly []string
	if !c.Memory {
		if c.WriteProtect {
			memoryOnly = append(memoryOnly, "wp")
		}
		if c.WORM {
			memoryOnly = append(memoryOnly, "worm")
		}
	}
	if _, ok := LookupPersonality(c.Personality); !ok {
		return fmt.Errorf("personality: unknown drive model %q", c.Personality)
	}
	return c.validate(memoryOnly)
}

func (c Config) validate(memoryOnly []string) error {
	p, _ := LookupPersonality(c.Personality)
	switch {
	case !c.Memory && c.Media == "":
		return errors.New("media: required (a cartridge directory), or memory=1 for RAM cartridges")
	case c.Memory && c.Media != "":
		return errors.New("media: not used with memory=1")
	case !c.Memory && len(memoryOnly) > 0:
		return fmt.Errorf("%s: only with memory=1 (image files carry their own properties)", memoryOnly[0])
	case c.MaxBlock > maxBlock24:
		return fmt.Errorf("max_block: %d exceeds 16777215, the largest value the 24-bit READ BLOCK LIMITS and READ/WRITE(6) length fields hold (tcm_loop carries at most 1048576 per command anyway)", c.MaxBlock)
	case c.MaxBlock > p.MaxBlockSize:
		return fmt.Errorf("max_block: %d exceeds the %s maximum block size %d", c.MaxBlock, p.Name, p.MaxBlockSize)
	case c.MinBlock > 0xffff:
		return fmt.Errorf("min_block: %d exceeds 65535, the 16-bit READ BLOCK LIMITS field", c.MinBlock)
	case c.MinBlock > c.MaxBlock:
		return fmt.Errorf("min_block: %d exceeds max_block %d", c.MinBlock, c.MaxBlock)
	case c.BlockSizeSet && c.BlockSize != 0 && (c.BlockSize < c.MinBlock || c.BlockSize > c.MaxBlock):
		return fmt.Errorf("blksize: %d outside the block limits %d..%d", c.BlockSize, c.MinBlock, c.MaxBlock)
	case !c.BlockSizeSet && p.DefaultBlockSize != 0 && (p.DefaultBlockSize < c.MinBlock || p.DefaultBlockSize > c.MaxBlock):
		return fmt.Errorf("max_block/min_block: the %s default block size %d is outside %d..%d (set blksize)", p.Name, p.DefaultBlockSize, c.MinBlock, c.MaxBlock)
	case c.Memory && c.Capacity < 1<<20:
		return fmt.Errorf("capacity: %d is less than 1M", c.Capacity)
	case c.Memory && (c.EarlyWarning < 0 || c.EarlyWarning >= c.Capacity):
		return fmt.Errorf("early_warning: %d must be less than capacity %d", c.EarlyWarning, c.Capacity)
	case c.Barcode != "" && cfgstring.Barcode(c.Barcode) != nil:
		return fmt.Errorf("barcode: %w", cfgstring.Barcode(c.Barcode))
	case c.Serial != "" && checkName(c.Serial, maxSerialLen) != nil:
		return fmt.Errorf("serial: %w", checkName(c.Serial, maxSerialLen))
	case c.CleanAfter < 0 || c.CleaningLife < 0 || c.CleanTime < 0 || c.CleanTime > 10*time.Minute:
		return fmt.Errorf("cleanafter, cleaninglife, cleantime: %d, %d, %s: want counts not negative and a time up to 10m", c.CleanAfter, c.CleaningLife, c.CleanTime)
	}
	return nil
}

// String returns the canonical cfgstring: personality first, then the
// other keys that differ from their defaults, in a fixed order. ParseConfig
// accepts it and returns an equal Config.
func (c Config) String() string {
	var b cfgstring.Builder
	b.Add("personality", c.Personality)
	if c.Memory {
		b.Bool("memory", true)
	}
	if c.Media != "" {
		b.Add("media", c.Media)
	}
	if c.Barcode != "" {
		b.Add("barcode", c.Barcode)
	}
	if c.Memory {
		if c.Capacity != DefaultMemoryCapacity {
			b.Size("capacity", uint64(c.Capacity))
		}
		if c.EarlyWarning != DefaultMemoryEarlyWarning {
			b.Size("early_warning", uint64(c.EarlyWarning))
		}
		if c.WriteProtect {
			b.Bool("wp", true)
		}
		if c.WORM {
			b.Bool("worm", true)
		}
	}
	if c.MaxBlock != DefaultMaxBlock {
		b.Uint("max_block", uint64(c.MaxBlock))
	}
	if c.MinBlock != DefaultMinBlock {
		b.Uint("min_block", uint64(c.MinBlock))
	}
	if c.BlockSizeSet {
		b.Uint("blksize", uint64(c.BlockSize))
	}
	if c.Serial != "" {
		b.Add("serial", c.Serial)
	}
	if c.CleanAfter != 0 {
		b.Uint("cleanafter", uint64(c.CleanAfter))
	}
	if c.CleaningLife != DefaultCleaningLife {
		b.Uint("cleaninglife", uint64(c.CleaningLife))
	}
	if c.CleanTime != DefaultCleanTime {
		b.Add("cleantime", c.CleanTime.String())
	}
	if c.DSense {
		b.Bool("dsense", true)
	}
	if !c.Compression {
		b.Bool("compression", false)
	}
	return b.String()
}

// parseBlock parses a block length (the shared number grammar), at most
// what the 24-bit length fields hold.
func parseBlock(v string) (uint32, error) {
	n, err := cfgstring.Uint(v, 0, math.MaxUint32)
	if err != nil {
		return 0, err
	}
	if n > maxBlock24 {
		return 0, errors.New("exceeds 16777215, the largest value the 24-bit block length fields of READ BLOCK LIMITS, READ/WRITE(6) and the mode block descriptor hold")
	}
	return uint32(n), nil
}

// maxSize bounds capacity and early_warning: they are int64 byte counts
// and positions inside a cartridge.
const maxSize = 1 << 62

// parseSize parses a size (the shared grammar) of at most maxSize bytes.
func parseSize(v string) (int64, error) {
	n, err := cfgstring.SizeIn(v, 0, maxSize)
	return int64(n), err
}

// checkName validates a serial: 1..max characters from [A-Za-z0-9._-],
// not starting with '.'. Barcodes follow cfgstring.Barcode.
func checkName(v string, maxLen int) error {
	if v == "" || len(v) > maxLen {
		return fmt.Errorf("want 1 to %d characters", maxLen)
	}
	if v[0] == '.' {
		return errors.New("must not start with '.'")
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if (c < 'A' || c > 'Z') && (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '.' && c != '_' && c != '-' {
			return fmt.Errorf("character %q not allowed (want A-Z a-z 0-9 . _ -)", c)
		}
	}
	return nil
}

// DevParams are the backstore attributes of a tape drive and of a
// library: a dev_size means nothing to the kernel for them (TCMU passes
// their commands through) but targetcli shows it, so it is a nominal
// 1 GiB.
var DevParams = device.Params{Size: 1 << 30, BlockSize: 512}
