package record_test

import (
	"bytes"
	"compress/gzip"
	"errors"
	"io"
	"strings"
	"testing"

	"github.com/vscsid/vscsid/internal/record"
)

func gz(s string) []byte {
	var b bytes.Buffer
	zw := gzip.NewWriter(&b)
	_, _ = zw.Write([]byte(s))
	_ = zw.Close()
	return b.Bytes()
}

func TestWriterReader(t *testing.T) {
	var b bytes.Buffer
	w, err := record.NewWriter(&b, record.Header{VSCSID: "x", Devices: []record.Device{{Name: "d0", Subtype: "vdisk", Config: "size=1M"}}})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(&record.Command{Seq: 1, CDB: "00", CDBLength: 1, Status: "good", Out: []byte{1, 2, 3}}); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteLine([]byte(`{"seq":2,"dev":0,"cdb":"00","cdb_length":1,"status":"busy"}`)); err != nil {
		t.Fatal(err)
	}
	if err := w.WriteLine([]byte(`not json`)); err == nil {
		t.Error("WriteLine took a line that is no command")
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	r, err := record.NewReader(&b)
	if err != nil {
		t.Fatal(err)
	}
	if r.Header.Format != record.Format || r.Header.Version != record.Version || r.Header.Devices[0].Name != "d0" {
		t.Errorf("header %+v", r.Header)
	}
	c1, err1 := r.Next()
	c2, err2 := r.Next()
	_, err3 := r.Next()
	if err1 != nil || err2 != nil || !bytes.Equal(c1.Out, []byte{1, 2, 3}) || c2.Status != "busy" || !errors.Is(err3, io.EOF) {
		t.Errorf("commands %+v %+v, errors %v %v %v", c1, c2, err1, err2, err3)
	}
}

func TestReaderRefuses(t *testing.T) {
	for _, tc := range []struct {
		name string
		in   []byte
		want string
	}{
		{"not gzip", []byte("hello"), "not gzip"},
		{"empty", gz(""), "no header"},
		{"other json", gz(`{"format":"other"}` + "\n"), "not a vscsid recording"},
		{"newer", gz(`{"format":"vscsid-recording","version":2,"devices":[{"name":"a"}]}` + "\n"), "version 2"},
		{"no device", gz(`{"format":"vscsid-recording","version":1}` + "\n"), "no device"},
	} {
		_, err := record.NewReader(bytes.NewReader(tc.in))
		if err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: %v, want %q", tc.name, err, tc.want)
		}
	}
	r, err := record.NewReader(bytes.NewReader(gz(`{"format":"vscsid-recording","version":1,"devices":[{"name":"a"}]}` + "\n" + `{"seq":1,"dev":3}` + "\n")))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Next(); err == nil || !strings.Contains(err.Error(), "line 2: device 3 of 1") {
		t.Errorf("a command of no device: %v", err)
	}
}
