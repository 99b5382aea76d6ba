package scsi_test

import (
	"bytes"
	"testing"

	"github.com/vscsid/vscsid/scsi"
)

// ResetPrefix views the first n bytes of another buffer's segments, across
// segment boundaries, without copying them.
func TestResetPrefix(t *testing.T) {
	a, b, c := []byte("0123"), []byte("4567"), []byte("89")
	src := scsi.NewBuffer(a, b, c)
	var p scsi.Buffer
	for _, tt := range []struct {
		n    int
		want string
	}{{0, ""}, {3, "012"}, {4, "0123"}, {6, "012345"}, {10, "0123456789"}, {99, "0123456789"}} {
		p.ResetPrefix(src, tt.n)
		if p.Len() != len(tt.want) {
			t.Fatalf("n=%d: Len %d, want %d", tt.n, p.Len(), len(tt.want))
		}
		got := make([]byte, 16)
		k, _ := p.Read(got)
		if string(got[:k]) != tt.want || p.Consumed() != k {
			t.Fatalf("n=%d: read %q (consumed %d), want %q", tt.n, got[:k], p.Consumed(), tt.want)
		}
	}
	// Data-In through the prefix lands in the source's memory.
	p.ResetPrefix(src, 5)
	if _, err := p.Write([]byte("abcde")); err != nil {
		t.Fatal(err)
	}
	if got := bytes.Join([][]byte{a, b, c}, nil); string(got) != "abcde56789" {
		t.Fatalf("source holds %q", got)
	}
	if allocs := testing.AllocsPerRun(100, func() { p.ResetPrefix(src, 7) }); allocs != 0 {
		t.Fatalf("ResetPrefix allocates %v times", allocs)
	}
}
