package tape

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
)

// ConfigDesc documents the vtape cfgstring (shown by `targetcli help
// create`). Keep it in step with ParseConfig.
const ConfigDesc = `vtape: an SSC tape drive (st, mt-st, tar, LTFS).
cfgstring: semicolon-separated key=value pairs, no commas or colons, e.g.
  personality=lto9;media=/var/lib/vscsid/tapes;barcode=TAPE01L9
  personality=dat72;memory=1;capacity=256M;barcode=DDS001
keys:
  personality  drive model: generic (default; VSCSI VTAPE, variable blocks),
               lto5..lto9 (IBM ULT3580-TDn), hp-lto5..hp-lto9 (HP Ultrium
               n-SCSI), dat72 (HP DAT72, DDS: setmarks, starts in fixed
               1024-byte block mode)
  media        directory of cartridge images (required unless memory=1)
  barcode      cartridge loaded at start, [A-Za-z0-9._-], 1-32 characters;
               empty or absent = empty drive
  memory       1 = cartridges live in RAM (lost on exit; for tests and
               experiments); 0 (default) = image files under media
  capacity     memory cartridges: native capacity, bytes with optional
               K/M/G/T suffix (powers of 1024), default 64M
  early_warning memory cartridges: early-warning zone before the end of
               each partition, default 1M, less than capacity
  wp           memory cartridges: 1 = write protected (default 0)
  worm         memory cartridges: 1 = WORM (default 0)
  max_block    READ BLOCK LIMITS maximum, bytes, default 1048576 (the most
               tcm_loop carries in one command); at most 16777215 (24-bit
               field) and at most the model's maximum
  min_block    READ BLOCK LIMITS minimum, bytes, default 1, at most 65535
  blksize      block size at start and after reset: 0 = variable, else
               fixed; default: the model's (dat72 1024, others 0)
  serial       unit serial number (VPD 80h), [A-Za-z0-9._-], 1-32
               characters; default derived from the device name
  dsense       1 = descriptor-format sense data (default 0 = fixed)`

// Defaults.
const (
	DefaultMaxBlock           = 1 << 20 // tcm_loop's largest command (256 × 4 KiB)
	DefaultMinBlock           = 1
	DefaultMemoryCapacity     = 64 << 20
	DefaultMemoryEarlyWarning = 1 << 20
	maxSerialLen              = 32
	maxBarcodeLen             = 32
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
	}
	if i := strings.IndexAny(s, ",:"); i >= 0 {
		return Config{}, fmt.Errorf("vtape config: %q at offset %d: commas and colons are not allowed (the kernel splits control tokens on ','; rtslib forbids ':')", s[i], i)
	}
	seen := map[string]bool{}
	memoryOnly := []string{}
	for _, kv := range strings.Split(s, ";") {
		if kv == "" {
			continue
		}
		k, v, ok := strings.Cut(kv, "=")
		if !ok {
			return Config{}, fmt.Errorf("vtape config: %q: want key=value", kv)
		}
		k = strings.TrimSpace(k)
		v = strings.TrimSpace(v)
		if seen[k] {
			return Config{}, fmt.Errorf("vtape config: %s: given twice", k)
		}
		seen[k] = true
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
				err = checkName(v, maxBarcodeLen)
			}
			c.Barcode = v
		case "memory":
			c.Memory, err = parseBool(v)
		case "capacity":
			c.Capacity, err = parseSize(v)
			if err == nil && c.Capacity < 1<<20 {
				err = errors.New("less than 1M")
			}
			memoryOnly = append(memoryOnly, k)
		case "early_warning":
			c.EarlyWarning, err = parseSize(v)
			memoryOnly = append(memoryOnly, k)
		case "wp":
			c.WriteProtect, err = parseBool(v)
			memoryOnly = append(memoryOnly, k)
		case "worm":
			c.WORM, err = parseBool(v)
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
			c.DSense, err = parseBool(v)
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
	case c.Barcode != "" && checkName(c.Barcode, maxBarcodeLen) != nil:
		return fmt.Errorf("barcode: %v", checkName(c.Barcode, maxBarcodeLen))
	case c.Serial != "" && checkName(c.Serial, maxSerialLen) != nil:
		return fmt.Errorf("serial: %v", checkName(c.Serial, maxSerialLen))
	}
	return nil
}

// String returns the canonical cfgstring: personality first, then the
// other keys that differ from their defaults, in a fixed order. ParseConfig
// accepts it and returns an equal Config.
func (c Config) String() string {
	var b strings.Builder
	add := func(k, v string) {
		if b.Len() > 0 {
			b.WriteByte(';')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(v)
	}
	add("personality", c.Personality)
	if c.Memory {
		add("memory", "1")
	}
	if c.Media != "" {
		add("media", c.Media)
	}
	if c.Barcode != "" {
		add("barcode", c.Barcode)
	}
	if c.Memory {
		if c.Capacity != DefaultMemoryCapacity {
			add("capacity", formatSize(c.Capacity))
		}
		if c.EarlyWarning != DefaultMemoryEarlyWarning {
			add("early_warning", formatSize(c.EarlyWarning))
		}
		if c.WriteProtect {
			add("wp", "1")
		}
		if c.WORM {
			add("worm", "1")
		}
	}
	if c.MaxBlock != DefaultMaxBlock {
		add("max_block", strconv.FormatUint(uint64(c.MaxBlock), 10))
	}
	if c.MinBlock != DefaultMinBlock {
		add("min_block", strconv.FormatUint(uint64(c.MinBlock), 10))
	}
	if c.BlockSizeSet {
		add("blksize", strconv.FormatUint(uint64(c.BlockSize), 10))
	}
	if c.Serial != "" {
		add("serial", c.Serial)
	}
	if c.DSense {
		add("dsense", "1")
	}
	return b.String()
}

func parseBool(v string) (bool, error) {
	switch v {
	case "0":
		return false, nil
	case "1":
		return true, nil
	}
	return false, errors.New("want 0 or 1")
}

func parseBlock(v string) (uint32, error) {
	n, err := strconv.ParseUint(v, 10, 32)
	if err != nil {
		return 0, errors.New("want a byte count")
	}
	if n > maxBlock24 {
		return 0, errors.New("exceeds 16777215, the largest value the 24-bit block length fields of READ BLOCK LIMITS, READ/WRITE(6) and the mode block descriptor hold")
	}
	return uint32(n), nil
}

var sizeSuffixes = []struct {
	s     string
	shift uint
}{{"T", 40}, {"G", 30}, {"M", 20}, {"K", 10}, {"k", 10}}

// parseSize parses a byte count with an optional K/M/G/T suffix (powers of
// 1024).
func parseSize(v string) (int64, error) {
	shift := uint(0)
	num := v
	for _, s := range sizeSuffixes {
		if strings.HasSuffix(v, s.s) {
			num, shift = strings.TrimSuffix(v, s.s), s.shift
			break
		}
	}
	n, err := strconv.ParseInt(num, 10, 64)
	if err != nil || n < 0 {
		return 0, errors.New("want a byte count with optional K/M/G/T suffix")
	}
	if n > (1<<62)>>shift {
		return 0, errors.New("too large")
	}
	return n << shift, nil
}

func formatSize(n int64) string {
	for _, s := range sizeSuffixes[:4] {
		if n != 0 && n%(1<<s.shift) == 0 {
			return strconv.FormatInt(n>>s.shift, 10) + s.s
		}
	}
	return strconv.FormatInt(n, 10)
}

// checkName validates a barcode or serial: 1..max characters from
// [A-Za-z0-9._-], not starting with '.' (barcodes name image files).
func checkName(v string, max int) error {
	if v == "" || len(v) > max {
		return fmt.Errorf("want 1 to %d characters", max)
	}
	if v[0] == '.' {
		return errors.New("must not start with '.'")
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		if !(c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '.' || c == '_' || c == '-') {
			return fmt.Errorf("character %q not allowed (want A-Z a-z 0-9 . _ -)", c)
		}
	}
	return nil
}
