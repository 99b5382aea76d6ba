package changer

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strings"

	"github.com/vscsid/vscsid/internal/cfgstring"
)

// ConfigDesc documents the vlibrary cfgstring (shown by `targetcli help
// create` and `vscsid --help`). Keep it in step with ParseConfig; the
// personality list is generated from the personality table.
var ConfigDesc = configDescHead + personalityHelp("    ") + configDescTail

const configDescHead = `vlibrary: an SMC medium changer (ch, mtx, Bacula/Bareos mtx-changer).
cfgstring: semicolon-separated key=value pairs, no commas or colons (spaces
around keys and values and empty pairs are ignored), e.g.
  media=/var/lib/vscsid/tapes;slots=20;mailslots=4;drives=tape0+tape1
  personality=ibm-ts3100;media=/var/lib/vscsid/tapes;drives=lto0;autounload=0
keys:
  personality  library model (default generic), with its INQUIRY identity,
               element addresses, default counts and DVCID style:
`

const configDescTail = `  media        directory of cartridge images, shared with the drives
               (required); the inventory is <media>/.library-<name>.json
               and .library-<name>.journal
  slots        storage elements, 1 to the model's most, default the
               model's
  mailslots    import/export elements, 0 to the model's most, default the
               model's
  drives       device names of the vtape drives of this daemon, in data
               transfer element order, separated by '+' (the kernel
               splits cfgstrings on ',' and rtslib forbids ':'), e.g.
               tape0+tape1; empty or absent = no drives (mtx refuses
               such a library; vscsictl serves it); at most the model's
  autounload   1 (default) = MOVE MEDIUM out of a drive that still has the
               cartridge loaded unloads it; 0 = refused (05/53/02) until
               the drive is unloaded (mt offline)
  cartridges   labelled cartridges to create on the library's first start
               (no inventory yet), 0-10000, default 0; they fill the
               storage slots in order, images that exist are kept;
               barcodes starting CLN are cleaning cartridges
  first        the first of their barcodes, default A00001L9; the last
               run of digits counts up, an LTO media id (L9) stays
  capacity     their native capacity, a size as vdisk size= (1024-based
               K/M/G/T), at least 1M, default the cartridge default (2G)
  serial       unit serial number (VPD 80h), [A-Za-z0-9._-], 1-32
               characters; default derived from the device name
  dsense       1 = descriptor-format sense data (default 0 = fixed)
Booleans (autounload, dsense) are 0|1, true|false, yes|no, on|off.`

// Defaults.
const (
	DefaultFirst = "A00001L9"
	maxSerialLen = 32
	// DriveSeparator separates the device names of drives=.
	DriveSeparator = "+"
)

// Config is a parsed vlibrary cfgstring. Use ParseConfig, or fill every
// field as it would (Slots and MailSlots from the personality's defaults
// when not configured) and call Validate.
type Config struct {
	Personality string   // personality name, default "generic"
	Media       string   // media directory (required)
	Slots       int      // storage elements
	MailSlots   int      // import/export elements
	Drives      []string // device names of the data transfer elements, in order
	AutoUnload  bool     // MOVE MEDIUM out of a loaded drive unloads it
	Serial      string   // "" = derived from the device name
	DSense      bool
	// Cartridges labelled from First are created on the first start.
	Cartridges int
	First      string
	Capacity   int64 // bytes; 0 = the cartridge default
}

var (
	serialRE = regexp.MustCompile(`^[A-Za-z0-9_-][A-Za-z0-9._-]{0,31}$`)
)

// ParseConfig parses a cfgstring strictly: an unknown or repeated key, a
// malformed or out-of-range value, or a missing media= is an error that
// names the key.
func ParseConfig(s string) (Config, error) {
	c := Config{Personality: "generic", Slots: -1, MailSlots: -1, AutoUnload: true, First: DefaultFirst}
	pairs, err := cfgstring.Split(s)
	if err != nil {
		return Config{}, fmt.Errorf("vlibrary config: %w", err)
	}
	for _, p := range pairs {
		k, v := p.Key, p.Value
		if !p.HasValue {
			return Config{}, fmt.Errorf("vlibrary config: %q: want key=value", k)
		}
		var err error
		var n uint64
		switch k {
		case "personality":
			c.Personality = v
		case "media":
			c.Media = v
		case "slots":
			n, err = cfgstring.Uint(v, 1, 1<<16)
			c.Slots = int(n)
		case "mailslots":
			n, err = cfgstring.Uint(v, 0, 1<<16)
			c.MailSlots = int(n)
		case "drives":
			c.Drives = nil
			if v != "" {
				c.Drives = strings.Split(v, DriveSeparator)
			}
		case "autounload":
			c.AutoUnload, err = cfgstring.Bool(v)
		case "serial":
			c.Serial = v
		case "dsense":
			c.DSense, err = cfgstring.Bool(v)
		case "cartridges":
			n, err = cfgstring.Uint(v, 0, cfgstring.MaxSeries)
			c.Cartridges = int(n)
		case "first":
			c.First = v
		case "capacity":
			n, err = cfgstring.Size(v)
			if err == nil && (n < 1<<20 || n > math.MaxInt64) {
				err = errors.New("want at least 1M")
			}
			c.Capacity = int64(n)
		default:
			return Config{}, fmt.Errorf("vlibrary config: unknown key %q", k)
		}
		if err != nil {
			return Config{}, fmt.Errorf("vlibrary config: %s=%q: %w", k, v, err)
		}
	}
	if p, ok := LookupPersonality(c.Personality); ok {
		if c.Slots < 0 {
			c.Slots = p.Slots
		}
		if c.MailSlots < 0 {
			c.MailSlots = p.MailSlots
		}
	}
	if err := c.Validate(); err != nil {
		return Config{}, fmt.Errorf("vlibrary config: %w", err)
	}
	return c, nil
}

// Validate checks a Config the way ParseConfig checks a parsed one.
func (c Config) Validate() error {
	p, ok := LookupPersonality(c.Personality)
	if !ok {
		return fmt.Errorf("personality: unknown library model %q (want one of: %s)", c.Personality, personalityList())
	}
	if c.Media == "" {
		return errors.New("media: required (the cartridge directory the drives use)")
	}
	if c.Slots < 1 || c.Slots > p.MaxStorage {
		return fmt.Errorf("slots: %d outside 1..%d", c.Slots, p.MaxStorage)
	}
	if c.MailSlots < 0 || c.MailSlots > p.MaxMail {
		return fmt.Errorf("mailslots: %d outside 0..%d", c.MailSlots, p.MaxMail)
	}
	if len(c.Drives) > p.MaxDrives {
		return fmt.Errorf("drives: %d drives, the %s has room for %d", len(c.Drives), p.Name, p.MaxDrives)
	}
	for i, d := range c.Drives {
		if err := cfgstring.DeviceName(d); err != nil {
			return fmt.Errorf("drives: %w (names are separated by %q)", err, DriveSeparator)
		}
		for _, e := range c.Drives[:i] {
			if e == d {
				return fmt.Errorf("drives: %s given twice", d)
			}
		}
	}
	if c.Cartridges > 0 {
		if _, err := cfgstring.BarcodeSeries(c.First, c.Cartridges); err != nil {
			return fmt.Errorf("cartridges=%d first=%s: %w", c.Cartridges, c.First, err)
		}
		if c.Cartridges > c.Slots+c.MailSlots {
			return fmt.Errorf("cartridges: %d do not fit %d slots and %d mail slots", c.Cartridges, c.Slots, c.MailSlots)
		}
	} else if c.First != DefaultFirst && c.First != "" {
		if err := cfgstring.Barcode(c.First); err != nil {
			return fmt.Errorf("first: %q: %w", c.First, err)
		}
	}
	if c.Capacity != 0 && c.Capacity < 1<<20 {
		return fmt.Errorf("capacity: %d is less than 1M", c.Capacity)
	}
	if c.Serial != "" && !serialRE.MatchString(c.Serial) {
		return fmt.Errorf("serial: %q: want 1 to %d characters of A-Z a-z 0-9 . _ -, not starting with '.'", c.Serial, maxSerialLen)
	}
	return nil
}

// String returns the canonical cfgstring: personality and media first,
// then the keys that differ from their defaults, in a fixed order.
// ParseConfig accepts it and returns an equal Config.
func (c Config) String() string {
	var b cfgstring.Builder
	b.Add("personality", c.Personality)
	b.Add("media", c.Media)
	var p Personality
	if q, ok := LookupPersonality(c.Personality); ok {
		p = *q
	}
	if c.Slots != p.Slots {
		b.Uint("slots", uint64(c.Slots))
	}
	if c.MailSlots != p.MailSlots {
		b.Uint("mailslots", uint64(c.MailSlots))
	}
	if len(c.Drives) > 0 {
		b.Add("drives", strings.Join(c.Drives, DriveSeparator))
	}
	if !c.AutoUnload {
		b.Bool("autounload", false)
	}
	if c.Serial != "" {
		b.Add("serial", c.Serial)
	}
	if c.DSense {
		b.Bool("dsense", true)
	}
	if c.Cartridges > 0 {
		b.Uint("cartridges", uint64(c.Cartridges))
	}
	if c.First != DefaultFirst && c.First != "" {
		b.Add("first", c.First)
	}
	if c.Capacity != 0 {
		b.Size("capacity", uint64(c.Capacity))
	}
	return b.String()
}
