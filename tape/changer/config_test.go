package changer

import (
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
		{"media=/m;slots=4097", "slots"},
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
