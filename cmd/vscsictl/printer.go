package main

import (
	"fmt"
	"io"
)

// printer writes formatted text to w and keeps the first write error,
// dropping the writes after it: a report of many lines checks its writes
// once, at the end (done), instead of at every line.
type printer struct {
	w   io.Writer
	err error
}

func (p *printer) printf(format string, a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintf(p.w, format, a...)
	}
}

func (p *printer) println(a ...any) {
	if p.err == nil {
		_, p.err = fmt.Fprintln(p.w, a...)
	}
}

// done returns the first write error, else the error of flush (which
// writes out what w buffered; nil if w buffers nothing).
func (p *printer) done(flush func() error) error {
	if p.err != nil || flush == nil {
		return p.err
	}
	return flush()
}
