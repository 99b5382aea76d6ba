package trace

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"strings"
)

// ReadFile reads a `vscsictl trace --json` capture. It is strict: every
// line must be one Event of a known type with no unknown key, so that a
// test reading a capture notices a format that moved.
func ReadFile(path string) ([]Event, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer func() { _ = f.Close() }() // read only
	var evs []Event
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for n := 1; sc.Scan(); n++ {
		var e Event
		dec := json.NewDecoder(strings.NewReader(sc.Text()))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&e); err != nil {
			return nil, fmt.Errorf("%s:%d: not a trace event: %w", path, n, err)
		}
		switch e.Type {
		case TypeStart, TypeCommand, TypeLost:
		default:
			return nil, fmt.Errorf("%s:%d: type %q", path, n, e.Type)
		}
		evs = append(evs, e)
	}
	return evs, sc.Err()
}
