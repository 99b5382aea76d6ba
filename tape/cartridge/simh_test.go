package cartridge

import (
	"bytes"
	"context"
	"encoding/binary"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/vscsid/vscsid/tape"
)

// tap builds a SIMH image from words (uint32) and byte strings.
func tap(parts ...any) []byte {
	var b []byte
	for _, p := range parts {
		switch v := p.(type) {
		case uint32:
			b = binary.LittleEndian.AppendUint32(b, v)
		case int:
			b = binary.LittleEndian.AppendUint32(b, uint32(v))
		case string:
			b = append(b, v...)
		case []byte:
			b = append(b, v...)
		}
	}
	return b
}

func TestSIMHRoundTrip(t *testing.T) {
	for _, f := range []SIMHFormat{SIMHPadded, SIMHUnpadded} {
		t.Run(f.String(), func(t *testing.T) {
			src, _ := newCart(t, Options{Capacity: 64 << 20})
			g := newGen(20, 200<<10)
			var want []obj
			for range 120 {
				o := g.any()
				if o.kind == tape.KindSetmark {
					continue
				}
				want = append(want, o)
			}
			mustPut(t, src, want...)
			var out bytes.Buffer
			st, err := ExportSIMH(src, 0, &out, SIMHExportOptions{Format: f})
			if err != nil {
				t.Fatal(err)
			}
			if st.Blocks+st.Filemarks != uint64(len(want)) {
				t.Errorf("exported %+v, want %d objects", st, len(want))
			}
			dst, _ := newCart(t, Options{Capacity: 64 << 20})
			ist, err := ImportSIMH(context.Background(), dst, bytes.NewReader(out.Bytes()), SIMHAuto)
			if err != nil {
				t.Fatal(err)
			}
			if ist.Blocks != st.Blocks || ist.Filemarks != st.Filemarks || ist.Bytes != st.Bytes || ist.Format != f {
				t.Errorf("imported %+v, exported %+v", ist, st)
			}
			if got := readAll(t, dst, 0); !equalObjs(got, want) {
				t.Fatalf("round trip: got %v\nwant %v", got, want)
			}
			var again bytes.Buffer
			if _, err := ExportSIMH(dst, 0, &again, SIMHExportOptions{Format: f}); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(again.Bytes(), out.Bytes()) {
				t.Error("export of the imported image differs from the original export")
			}
		})
	}
}

func TestSIMHExportBytes(t *testing.T) {
	m, _ := newCart(t, Options{})
	if _, err := m.WriteBlock(strings.NewReader("abc"), 3, tape.Encoding{}); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteMark(tape.KindFilemark); err != nil {
		t.Fatal(err)
	}
	if _, err := m.WriteBlock(strings.NewReader("wxyz"), 4, tape.Encoding{}); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteMark(tape.KindFilemark); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteMark(tape.KindFilemark); err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		opts SIMHExportOptions
		want []byte
	}{
		{SIMHExportOptions{}, tap(3, "abc\x00", 3, 0, 4, "wxyz", 4, 0, 0)},
		{SIMHExportOptions{Format: SIMHUnpadded}, tap(3, "abc", 3, 0, 4, "wxyz", 4, 0, 0)},
		{SIMHExportOptions{EOM: true}, tap(3, "abc\x00", 3, 0, 4, "wxyz", 4, 0, 0, uint32(0xFFFFFFFF))},
	} {
		var out bytes.Buffer
		if _, err := ExportSIMH(m, 0, &out, tc.opts); err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(out.Bytes(), tc.want) {
			t.Errorf("%+v:\n got % x\nwant % x", tc.opts, out.Bytes(), tc.want)
		}
	}
	if err := m.WriteMark(tape.KindSetmark); err != nil {
		t.Fatal(err)
	}
	if _, err := ExportSIMH(m, 0, &bytes.Buffer{}, SIMHExportOptions{}); err == nil || !strings.Contains(err.Error(), "setmark") {
		t.Errorf("export of a setmark: %v", err)
	}
	st, err := ExportSIMH(m, 0, &bytes.Buffer{}, SIMHExportOptions{SkipSetmarks: true})
	if err != nil || st.Skipped != 1 {
		t.Errorf("export skipping setmarks: %+v %v", st, err)
	}
}

func TestSIMHImport(t *testing.T) {
	type want struct {
		objs  []string // "FM" or block content
		stats SIMHStats
	}
	for _, tc := range []struct {
		name   string
		in     []byte
		format SIMHFormat
		want   want
	}{
		{"empty", nil, SIMHAuto, want{nil, SIMHStats{}}},
		{"padded odd record", tap(3, "abc\x00", 3, 0), SIMHAuto,
			want{[]string{"abc", "FM"}, SIMHStats{Blocks: 1, Filemarks: 1, Bytes: 3, Format: SIMHPadded}}},
		{"unpadded odd record", tap(3, "abc", 3, 0, 1, "z", 1), SIMHAuto,
			want{[]string{"abc", "FM", "z"}, SIMHStats{Blocks: 2, Filemarks: 1, Bytes: 4, Format: SIMHUnpadded}}},
		{"unpadded at end of file", tap(3, "abc", 3), SIMHAuto,
			want{[]string{"abc"}, SIMHStats{Blocks: 1, Bytes: 3, Format: SIMHUnpadded}}},
		{"forced e11", tap(3, "abc", 3), SIMHUnpadded,
			want{[]string{"abc"}, SIMHStats{Blocks: 1, Bytes: 3, Format: SIMHUnpadded}}},
		{"gaps and half gap", tap(uint32(0xFFFFFFFE), "\xff\xff", uint32(0xFFFFFFFE), 2, "hi", 2), SIMHAuto,
			want{[]string{"hi"}, SIMHStats{Blocks: 1, Bytes: 2, Gaps: 3}}},
		{"bad record kept", tap(uint32(0x80000002), "xy", uint32(0x80000002)), SIMHAuto,
			want{[]string{"xy"}, SIMHStats{Blocks: 1, Bytes: 2, BadRecords: 1}}},
		{"empty bad record", tap(uint32(0x80000000), uint32(0x80000000), 0), SIMHAuto,
			want{[]string{"FM"}, SIMHStats{Filemarks: 1, BadRecords: 1}}},
		{"private record and marker skipped", tap(uint32(0x10000004), "priv", uint32(0x10000004), uint32(0x70000123), 1, "a\x00", 1), SIMHAuto,
			want{[]string{"a"}, SIMHStats{Blocks: 1, Bytes: 1, Skipped: 2, Format: SIMHPadded}}},
		{"description record skipped", tap(uint32(0xE0000002), "dd", uint32(0xE0000002), 0), SIMHAuto,
			want{[]string{"FM"}, SIMHStats{Filemarks: 1, Skipped: 1}}},
		{"end of medium", tap(2, "ok", 2, uint32(0xFFFFFFFF), "junk after EOM"), SIMHAuto,
			want{[]string{"ok"}, SIMHStats{Blocks: 1, Bytes: 2, EOM: true}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newCart(t, Options{})
			st, err := ImportSIMH(context.Background(), m, bytes.NewReader(tc.in), tc.format)
			if err != nil {
				t.Fatal(err)
			}
			if st != tc.want.stats {
				t.Errorf("stats %+v, want %+v", st, tc.want.stats)
			}
			if err := m.Locate(0, 0); err != nil && !errors.Is(err, tape.ErrEndOfData) {
				t.Fatal(err)
			}
			var got []string
			for {
				o, err := m.Peek()
				if err != nil {
					t.Fatal(err)
				}
				if o.Kind == tape.KindEOD {
					break
				}
				if o.Kind == tape.KindFilemark {
					got = append(got, "FM")
				} else {
					b, _ := readBlock(m, o.Len)
					got = append(got, string(b))
				}
				if err := m.Next(); err != nil {
					t.Fatal(err)
				}
			}
			if strings.Join(got, "|") != strings.Join(tc.want.objs, "|") {
				t.Errorf("objects %q, want %q", got, tc.want.objs)
			}
		})
	}
}

func TestSIMHImportErrors(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"reserved marker", tap(0, uint32(0xF0000000)), "offset 4: reserved marker"},
		{"truncated word", []byte{1, 0}, "offset 0: file ends inside a metadata word"},
		{"truncated record", tap(10, "abc"), "offset 0: file ends inside a record of 10 bytes"},
		{"truncated skipped record", tap(uint32(0x10000010), "abc"), "offset 0: file ends inside a record"},
		{"missing trailer", tap(2, "ab"), "offset 6: file ends before the trailing length"},
		{"trailer mismatch", tap(2, "ab", 3), "trailing length 0x00000003 does not match 0x00000002"},
		{"odd record without trailer", tap(3, "abcxxxxx"), "neither padded nor unpadded"},
		{"padding forced but absent", tap(3, "abc", 3, 0), "does not match"},
		{"too long", tap(1 << 24), "exceeds the largest block"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m, _ := newCart(t, Options{})
			format := SIMHAuto
			if tc.name == "padding forced but absent" {
				format = SIMHPadded
			}
			_, err := ImportSIMH(context.Background(), m, bytes.NewReader(tc.in), format)
			if err == nil || !strings.Contains(err.Error(), tc.want) {
				t.Errorf("error %v, want %q", err, tc.want)
			}
		})
	}
	// A cartridge too small for the image fails with end of medium.
	m, _ := newCart(t, Options{Capacity: 1 << 20})
	big := tap(600_000, make([]byte, 600_000), 600_000, 600_000, make([]byte, 600_000), 600_000)
	if _, err := ImportSIMH(context.Background(), m, bytes.NewReader(big), SIMHAuto); !errors.Is(err, tape.ErrEndOfMedium) {
		t.Errorf("import into a small cartridge: %v", err)
	}
}

func TestParseSIMHFormat(t *testing.T) {
	for in, want := range map[string]SIMHFormat{"": SIMHAuto, "auto": SIMHAuto, "simh": SIMHPadded, "padded": SIMHPadded, "e11": SIMHUnpadded, "unpadded": SIMHUnpadded} {
		if got, err := ParseSIMHFormat(in); got != want || err != nil {
			t.Errorf("%q: %v %v", in, got, err)
		}
	}
	if _, err := ParseSIMHFormat("tpc"); err == nil {
		t.Error("tpc accepted")
	}
}

// endless is an endless SIMH stream of one word repeated: erase gaps,
// say, which write nothing and so never reach end of medium.
type endless uint32

func (e endless) Read(p []byte) (int, error) {
	n := len(p) &^ 3
	for i := 0; i < n; i += 4 {
		binary.LittleEndian.PutUint32(p[i:], uint32(e))
	}
	return n, nil
}

// An import of an endless stream stops when its context is done (a
// signal to vscsictl), for gaps that write nothing and for tape marks
// that fill the cartridge slowly.
func TestImportSIMHStopsWhenCancelled(t *testing.T) {
	for _, w := range []endless{simhGap, simhTapeMark} {
		m, _ := newCart(t, Options{})
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { _, err := ImportSIMH(ctx, m, w, SIMHAuto); done <- err }()
		time.Sleep(20 * time.Millisecond)
		cancel()
		select {
		case err := <-done:
			if !errors.Is(err, context.Canceled) {
				t.Errorf("word %#x: %v, want context.Canceled", uint32(w), err)
			}
		case <-time.After(10 * time.Second):
			t.Fatalf("word %#x: the import did not stop", uint32(w))
		}
	}
}
