package clidoc

import (
	"bytes"
	"flag"
	"strings"
	"testing"
	"time"
)

func TestPrintFlags(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("config", "", "config `FILE`")
	fs.String("socket", "/run/x.sock", "socket")
	fs.Bool("json", false, "JSON output")
	fs.Int("count", 1, "make `N` of them")
	fs.Int("zero", 0, "a number")
	fs.Duration("watch", 0, "repeat every `DURATION`")
	fs.Duration("every", time.Second, "tick")
	var b bytes.Buffer
	PrintFlags(&b, fs)
	want := `  --config FILE
    	config FILE
  --count N
    	make N of them (default 1)
  --every DURATION
    	tick (default 1s)
  --json
    	JSON output
  --socket STRING
    	socket (default "/run/x.sock")
  --watch DURATION
    	repeat every DURATION
  --zero INT
    	a number
`
	if b.String() != want {
		t.Errorf("flags:\n%s\nwant:\n%s", b.String(), want)
	}
	if it := Options(fs); len(it) != 7 || it[1].Tag != "--count N" || it[1].Text != "make N of them (default 1)" {
		t.Errorf("options %+v", it)
	}
}

func TestFlatCompletion(t *testing.T) {
	fs := flag.NewFlagSet("x", flag.ContinueOnError)
	fs.String("config", "", "config `FILE`")
	fs.Bool("log.json", false, "JSON")
	s, err := FlatCompletion("bash", "vscsid", fs)
	if err != nil || !strings.Contains(s, `compgen -W "--config --log.json --help"`) || !strings.Contains(s, "complete -o default -F _vscsid vscsid") {
		t.Errorf("bash: %v\n%s", err, s)
	}
	if s, err := FlatCompletion("zsh", "vscsid", fs); err != nil || !strings.HasPrefix(s, "#compdef vscsid\n") {
		t.Errorf("zsh: %v\n%s", err, s)
	}
	if _, err := FlatCompletion("fish", "vscsid", fs); err == nil {
		t.Error("fish accepted")
	}
}
