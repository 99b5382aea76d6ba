package config

import (
	"errors"
	"fmt"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"go.yaml.in/yaml/v3"
)

// The config file's mappings, by the name the YAML decoder gives their Go
// type in its errors, and the name a message gives them.
var mappings = map[string]struct {
	t    reflect.Type
	name string
}{
	"config.Config":   {reflect.TypeFor[Config](), "the config"},
	"config.Device":   {reflect.TypeFor[Device](), "a device"},
	"config.Fault":    {reflect.TypeFor[Fault](), "fault"},
	"config.ISCSI":    {reflect.TypeFor[ISCSI](), "iscsi"},
	"config.ISCSIACL": {reflect.TypeFor[ISCSIACL](), "an iscsi acl"},
}

// keysOf lists the YAML keys of a config struct type, in field order: a
// field's yaml tag, or its key tag when it is decoded by hand (yaml:"-").
func keysOf(t reflect.Type) []string {
	var keys []string
	for f := range t.Fields() {
		k, _, _ := strings.Cut(f.Tag.Get("yaml"), ",")
		if k == "-" {
			k = f.Tag.Get("key")
		}
		if k != "" {
			keys = append(keys, k)
		}
	}
	return keys
}

// unknownKey is the error for key, which the mapping of Go type typ (a
// key of mappings) does not have, at line: the keys it has, and the
// nearest of them when the key looks like a typo of one.
func unknownKey(line int, key, typ string) error {
	m := mappings[typ]
	keys := keysOf(m.t)
	msg := fmt.Sprintf("line %d: unknown key %q in %s", line, key, m.name)
	if near := nearest(key, keys); near != "" {
		msg += fmt.Sprintf(" (did you mean %q?)", near)
	}
	return errors.New(msg + "; its keys: " + strings.Join(keys, ", "))
}

// fieldNotFound is the YAML decoder's message for an unknown key under
// KnownFields.
var fieldNotFound = regexp.MustCompile(`^line (\d+): field (\S+) not found in type (\S+)$`)

// explainYAML rewrites the decoder's unknown-key errors (which name Go
// types) with unknownKey; other errors are returned as they are.
func explainYAML(err error) error {
	te, ok := errors.AsType[*yaml.TypeError](err)
	if !ok {
		return err
	}
	msgs := make([]string, len(te.Errors))
	for i, e := range te.Errors {
		msgs[i] = e
		if m := fieldNotFound.FindStringSubmatch(e); m != nil {
			if _, known := mappings[m[3]]; known {
				line, _ := strconv.Atoi(m[1])
				msgs[i] = unknownKey(line, m[2], m[3]).Error()
			}
		}
	}
	return errors.New(strings.Join(msgs, "; "))
}

// nearest is the candidate closest to s by edit distance, if it is close
// enough to be a typo (at most a third of the longer, at least 1), else "".
func nearest(s string, candidates []string) string {
	best, bestD := "", 0
	for _, c := range candidates {
		d := editDistance(s, c)
		if limit := max(len(s), len(c)) / 3; d > max(limit, 1) {
			continue
		}
		if best == "" || d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
