package changer

import (
	"fmt"
	"os"
	"reflect"
	"strings"
	"testing"
)

func TestParseConfig(t *testing.T) {
	good := []struct {
		in   string
		want Config
		str  string
	}{
		{"media=/m", Config{Personality: "generic", Media: "/m", Slots: 20, MailSlots: 4, AutoUnload: true, First: DefaultFirst},
			"personality=generic;media=/m"},
		{" media = /m ; slots=0x10;mailslots=0;drives=tape0+tape.1+t_2;autounload=off;serial=L1-x;dsense=yes;personality=ibm-ts3100",
			Config{Personality: "ibm-ts3100", Media: "/m", Slots: 16, Drives: []string{"tape0", "tape.1", "t_2"}, Serial: "L1-x", DSense: true, First: DefaultFirst},
			"personality=ibm-ts3100;media=/m;slots=16;mailslots=0;drives=tape0+tape.1+t_2;autounload=0;serial=L1-x;dsense=1"},
		{"media=/m;drives=", Config{Personality: "generic", Media: "/m", Slots: 20, MailSlots: 4, AutoUnload: true, First: DefaultFirst},
			"personality=generic;media=/m"},
		{"media=/m;cartridges=24;first=E01001L8;capacity=64M", Config{Personality: "generic", Media: "/m", Slots: 20, MailSlots: 4,
			AutoUnload: true, Cartridges: 24, First: "E01001L8", Capacity: 64 << 20},
			"personality=generic;media=/m;cartridges=24;first=E01001L8;capacity=64MiB"},
	}
	for _, tt := range good {
		c, err := ParseConfig(tt.in)
		if err != nil {
			t.Fatalf("ParseConfig(%q): %v", tt.in, err)
		}
		if !reflect.DeepEqual(c, tt.want) {
			t.Errorf("ParseConfig(%q) = %+v, want %+v", tt.in, c, tt.want)
		}
		if s := c.String(); s != tt.str {
			t.Errorf("String() = %q, want %q", s, tt.str)
		}
		if again, err := ParseConfig(c.String()); err != nil || !reflect.DeepEqual(again, c) {
			t.Errorf("ParseConfig(String()) = %+v, %v; want %+v", again, err, c)
		}
	}
	bad := []struct{ in, msg string }{
		{"", "media: required"},
		{"media=/m;slots=0", "slots"},
		{"media=/m;slots=61441", "slots"},
		{"media=/m;mailslots=241", "mailslots"},
		{"media=/m;drives=a+b+c+d+e+f+g+h+i+j+k+l+m+n+o+p", "room for 15"},
		{"media=/m;drives=tape0+tape0", "given twice"},
		{"media=/m;drives=tape0,tape1", "not allowed"},
		{"media=/m;drives=tape0:tape1", "not allowed"},
		{"media=/m;drives=tape0/tape1", "not a device name"},
		{"media=/m;drives=tape0++tape1", "not a device name"},
		{"media=/m;personality=stk", "unknown library model"},
		{"media=/m;autounload=2", "autounload"},
		{"media=/m;serial=.x", "serial"},
		{"media=/m;slots", "want key=value"},
		{"media=/m;colour=red", "unknown key"},
		{"media=/m;cartridges=25", "do not fit 20 slots and 4 mail slots"},
		{"media=/m;cartridges=2;first=A99", "run past 2 digits"},
		{"media=/m;cartridges=2;first=ABCDEF", "no digits"},
		{"media=/m;first=a1", "first"},
		{"media=/m;capacity=1K", "at least 1M"},
		{"media=/m;cartridges=-1", "cartridges"},
	}
	for _, tt := range bad {
		if _, err := ParseConfig(tt.in); err == nil || !strings.Contains(err.Error(), tt.msg) {
			t.Errorf("ParseConfig(%q) = %v, want an error containing %q", tt.in, err, tt.msg)
		}
	}
}

func TestConfigDescNamesEveryKey(t *testing.T) {
	for _, k := range []string{"personality", "media", "slots", "mailslots", "drives", "autounload", "serial", "dsense", "cartridges", "first", "capacity"} {
		if !strings.Contains(ConfigDesc, "  "+k+" ") {
			t.Errorf("ConfigDesc does not document %s", k)
		}
	}
}

// Every personality's element ranges, at their most elements, are
// disjoint and leave out the transport, its defaults fit its limits, its
// identity fits INQUIRY, and a cfgstring naming only it parses to its
// default counts and prints back without them.
func TestPersonalities(t *testing.T) {
	seen := map[string]bool{}
	for i := range personalities {
		p := &personalities[i]
		if seen[p.Name] {
			t.Errorf("%s listed twice", p.Name)
		}
		seen[p.Name] = true
		if len(p.Vendor) > 8 || len(p.Product) > 16 || len(p.Revision) > 4 || p.Vendor == "" || p.Product == "" {
			t.Errorf("%s: identity %q %q %q does not fit INQUIRY", p.Name, p.Vendor, p.Product, p.Revision)
		}
		ranges := []struct {
			name        string
			first, last int
		}{
			{"transport", int(p.Transport), int(p.Transport)},
			{"mail", int(p.Mail), int(p.Mail) + p.MaxMail - 1},
			{"drives", int(p.Drive), int(p.Drive) + p.MaxDrives - 1},
			{"storage", int(p.Storage), int(p.Storage) + p.MaxStorage - 1},
		}
		for a := range ranges {
			if ranges[a].last > 0xffff {
				t.Errorf("%s: %s range ends past FFFFh", p.Name, ranges[a].name)
			}
			for b := range a {
				if ranges[a].first <= ranges[b].last && ranges[b].first <= ranges[a].last {
					t.Errorf("%s: %s %X-%X overlaps %s %X-%X", p.Name, ranges[a].name, ranges[a].first, ranges[a].last,
						ranges[b].name, ranges[b].first, ranges[b].last)
				}
			}
		}
		if p.Slots < 1 || p.Slots > p.MaxStorage || p.MailSlots < 0 || p.MailSlots > p.MaxMail {
			t.Errorf("%s: default %d slots, %d mail slots outside its limits", p.Name, p.Slots, p.MailSlots)
		}
		c, err := ParseConfig("personality=" + p.Name + ";media=/m")
		if err != nil {
			t.Fatalf("%s: %v", p.Name, err)
		}
		if c.Slots != p.Slots || c.MailSlots != p.MailSlots {
			t.Errorf("%s: parsed %d slots, %d mail slots, want its defaults %d, %d", p.Name, c.Slots, c.MailSlots, p.Slots, p.MailSlots)
		}
		if s := c.String(); s != "personality="+p.Name+";media=/m" {
			t.Errorf("%s: String() = %q", p.Name, s)
		}
		// A count given before the personality still wins over its default.
		c, err = ParseConfig("slots=2;mailslots=0;media=/m;personality=" + p.Name)
		if err != nil || c.Slots != 2 || c.MailSlots != 0 {
			t.Errorf("%s: slots=2;mailslots=0 first gave %d, %d, %v", p.Name, c.Slots, c.MailSlots, err)
		}
		if !strings.Contains(ConfigDesc, p.Name+": "+p.Vendor+" ") {
			t.Errorf("ConfigDesc does not describe %s", p.Name)
		}
	}
	if _, err := ParseConfig("personality=hp-msl-g3;media=/m;slots=417"); err == nil || !strings.Contains(err.Error(), "outside 1..416") {
		t.Errorf("hp-msl-g3 with 417 slots: %v, want outside 1..416", err)
	}
}

// docs/configuration.md's table of library models has a row for every personality
// with its identity, addresses and default counts.
func TestReadmeListsEveryPersonality(t *testing.T) {
	readme, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for _, l := range strings.Split(string(readme), "\n") {
		if f := strings.Split(l, "|"); len(f) > 2 {
			rows[strings.Trim(strings.TrimSpace(f[1]), "`")] = l
		}
	}
	for i := range personalities {
		p := &personalities[i]
		row, ok := rows[p.Name]
		if !ok {
			t.Errorf("docs/configuration.md has no row for %s", p.Name)
			continue
		}
		want := []string{
			p.Vendor + " " + p.Product + " " + p.Revision,
			strings.Join([]string{elementAddr(p.Transport), elementAddr(p.Mail), elementAddr(p.Drive), elementAddr(p.Storage)}, ", "),
			fmt.Sprintf("%d + %d", p.Slots, p.MailSlots),
			fmt.Sprintf("| %d |", p.MaxDrives),
		}
		for _, w := range want {
			if !strings.Contains(row, w) {
				t.Errorf("docs/configuration.md row of %s lacks %q: %s", p.Name, w, row)
			}
		}
	}
}
