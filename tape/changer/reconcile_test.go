package changer

import (
	"reflect"
	"testing"
)

func TestReconcile(t *testing.T) {
	st := func(bs ...string) []Slot {
		out := make([]Slot, len(bs))
		for i, b := range bs {
			out[i].Barcode = b
		}
		return out
	}
	from := func(b string, l Loc) Slot { return Slot{Barcode: b, Source: &l} }
	lay := Layout{Storage: 3, Mail: 1, Drives: 1}
	tests := []struct {
		name   string
		saved  Inventory
		lay    Layout
		images []string
		loaded []string
		want   Inventory
		rep    Report
	}{
		{
			name: "no inventory: images fill storage, then mail, the rest stays out", lay: lay,
			images: []string{"A1", "A2", "A3", "A4", "A5"},
			want:   Inventory{Storage: st("A1", "A2", "A3"), Mail: st("A4"), Drives: st("")},
			rep:    Report{Placed: []string{"A1", "A2", "A3", "A4"}, Unplaced: []string{"A5"}},
		},
		{
			name: "saved places are kept, new images go to free slots", lay: lay,
			saved:  Inventory{Storage: st("", "A2", ""), Mail: []Slot{{Barcode: "A1", ImpExp: true}}, Drives: []Slot{from("A3", Loc{Storage, 0})}},
			images: []string{"A1", "A2", "A3", "B1"},
			want:   Inventory{Storage: st("B1", "A2", ""), Mail: []Slot{{Barcode: "A1", ImpExp: true}}, Drives: []Slot{from("A3", Loc{Storage, 0})}},
			rep:    Report{Placed: []string{"B1"}},
		},
		{
			name: "an entry whose image is gone is reported and its element emptied", lay: lay,
			saved:  Inventory{Storage: st("A1", "GONE", ""), Mail: st(""), Drives: st("GONE2")},
			images: []string{"A1"},
			want:   Inventory{Storage: st("A1", "", ""), Mail: st(""), Drives: st("")},
			rep:    Report{Missing: []string{"GONE", "GONE2"}},
		},
		{
			name: "a duplicate stays in the first element, drives first", lay: lay,
			saved:  Inventory{Storage: st("A1", "A2", "A1"), Mail: st("A2"), Drives: st("A2")},
			images: []string{"A1", "A2"},
			want:   Inventory{Storage: st("A1", "", ""), Mail: st(""), Drives: st("A2")},
			rep:    Report{Duplicates: []string{"A1", "A2", "A2"}},
		},
		{
			name: "elements the layout no longer has give their cartridges to free slots", lay: Layout{Storage: 2, Mail: 0, Drives: 0},
			saved:  Inventory{Storage: st("", "A2", "A3"), Mail: st("A4"), Drives: st("A5")},
			images: []string{"A2", "A3", "A4", "A5"},
			want:   Inventory{Storage: st("A5", "A2"), Mail: st(), Drives: st()},
			rep:    Report{Placed: []string{"A5"}, Unplaced: []string{"A3", "A4"}},
		},
		{
			name: "a drive that reports a cartridge loaded holds it; what the inventory had there is placed anew", lay: lay,
			saved:  Inventory{Storage: st("A1", "A2", ""), Mail: st(""), Drives: st("A3")},
			images: []string{"A1", "A2", "A3"}, loaded: []string{"A2"},
			want: Inventory{Storage: st("A1", "A3", ""), Mail: st(""), Drives: []Slot{from("A2", Loc{Storage, 1})}},
			rep:  Report{FromDrive: []string{"A2"}, Placed: []string{"A3"}},
		},
		{
			name: "an empty drive keeps its cartridge (unloaded, waiting for the transport)", lay: lay,
			saved:  Inventory{Storage: st("", "", ""), Mail: st(""), Drives: st("A1")},
			images: []string{"A1"}, loaded: []string{""},
			want: Inventory{Storage: st("", "", ""), Mail: st(""), Drives: st("A1")},
		},
		{
			name: "exported cartridges stay outside while their image exists", lay: lay,
			saved:  Inventory{Outside: []string{"X1", "X2"}},
			images: []string{"X1"},
			want:   Inventory{Storage: st("", "", ""), Mail: st(""), Drives: st(""), Outside: []string{"X1"}},
		},
		{
			name: "a source beyond the layout is forgotten, invalid barcodes are missing", lay: lay,
			saved:  Inventory{Storage: []Slot{from("A1", Loc{Storage, 7}), {Barcode: "bad/x"}}},
			images: []string{"A1"},
			want:   Inventory{Storage: st("A1", "", ""), Mail: st(""), Drives: st("")},
			rep:    Report{Missing: []string{"bad/x"}},
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, rep := Reconcile(tt.saved, tt.lay, tt.images, tt.loaded)
			tt.want.Version = inventoryVersion
			if !reflect.DeepEqual(got, tt.want) {
				t.Errorf("inventory\n got %+v\nwant %+v", got, tt.want)
			}
			if !reflect.DeepEqual(rep, tt.rep) {
				t.Errorf("report\n got %+v\nwant %+v", rep, tt.rep)
			}
			// Every image is in at most one element, every element's
			// cartridge exists.
			seen := map[string]bool{}
			for _, b := range got.Barcodes() {
				if seen[b] {
					t.Errorf("%s in two elements", b)
				}
				seen[b] = true
			}
			if again, _ := Reconcile(got, tt.lay, tt.images, tt.loaded); !reflect.DeepEqual(again, got) {
				t.Errorf("not idempotent: %+v", again)
			}
		})
	}
}
