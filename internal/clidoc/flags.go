package clidoc

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"strconv"
	"strings"
)

// Flag is one flag as the documentation shows it.
type Flag struct {
	Name    string // without dashes
	Arg     string // the value's name ("FILE"), "" for a boolean flag
	Usage   string
	Default string // "" when the zero value is the default
}

// Flags lists fs's flags in name order, with the value name the usage
// text marks with back quotes (flag.UnquoteUsage) in upper case.
func Flags(fs *flag.FlagSet) []Flag {
	var fl []Flag
	fs.VisitAll(func(f *flag.Flag) {
		arg, usage := flag.UnquoteUsage(f)
		d := ""
		if !isZeroValue(f) {
			d = f.DefValue
			if fmt.Sprintf("%T", f.Value) == "*flag.stringValue" {
				d = strconv.Quote(d)
			}
		}
		fl = append(fl, Flag{Name: f.Name, Arg: strings.ToUpper(arg), Usage: usage, Default: d})
	})
	return fl
}

// isZeroValue reports whether the flag's default is its type's zero value,
// which the list does not print, as flag.PrintDefaults decides it.
func isZeroValue(f *flag.Flag) (zero bool) {
	t := reflect.TypeOf(f.Value)
	var z reflect.Value
	if t.Kind() == reflect.Pointer {
		z = reflect.New(t.Elem())
	} else {
		z = reflect.Zero(t)
	}
	v, ok := z.Interface().(flag.Value)
	if !ok {
		return false
	}
	defer func() {
		if recover() != nil {
			zero = false // a Value whose String needs more than its zero value
		}
	}()
	return f.DefValue == v.String()
}

// Spelling is the flag as typed: --name ARG.
func (f Flag) Spelling() string {
	if f.Arg == "" {
		return "--" + f.Name
	}
	return "--" + f.Name + " " + f.Arg
}

// Text is the usage with its default.
func (f Flag) Text() string {
	if f.Default == "" {
		return f.Usage
	}
	return fmt.Sprintf("%s (default %s)", f.Usage, f.Default)
}

// PrintFlags writes fs's flags as --help lists them: the spelling, then
// the usage indented on the next line.
func PrintFlags(w io.Writer, fs *flag.FlagSet) {
	for _, f := range Flags(fs) {
		_, _ = fmt.Fprintf(w, "  %s\n    \t%s\n", f.Spelling(), f.Text())
	}
}

// Options is fs's flags as the items of a man page's OPTIONS section.
func Options(fs *flag.FlagSet) []Item {
	var it []Item
	for _, f := range Flags(fs) {
		it = append(it, Item{Tag: f.Spelling(), Text: f.Text()})
	}
	return it
}
