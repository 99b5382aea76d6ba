package tape

import (
	"testing"
)

func TestPositionFollowsTheMedium(t *testing.T) {
	cfg, err := ParseConfig("memory=1;barcode=POS001")
	if err != nil {
		t.Fatal(err)
	}
	d, err := New("pos", cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer func() { _ = d.Close() }()
	if p, o, f := d.Position(); p != 0 || o != 0 || f != 0 {
		t.Fatalf("at BOT: %d/%d/%d", p, o, f)
	}
	m := d.med
	if _, err := m.WriteBlock(zeroReader{}, 512, Encoding{}); err != nil {
		t.Fatal(err)
	}
	if err := m.WriteMark(KindFilemark); err != nil {
		t.Fatal(err)
	}
	if p, o, f := d.Position(); p != 0 || o != 2 || f != 1 {
		t.Fatalf("after block+filemark: %d/%d/%d, want 0/2/1", p, o, f)
	}
	if err := d.Unload(); err != nil {
		t.Fatal(err)
	}
	if p, o, f := d.Position(); p != 0 || o != 0 || f != 0 {
		t.Fatalf("unloaded: %d/%d/%d", p, o, f)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }
