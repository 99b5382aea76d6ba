package chart

import (
	"strings"
	"testing"
)

func TestShort(t *testing.T) {
	for v, want := range map[float64]string{0: "0", 0.5: "0.5", 131: "131", 9999: "9999", 16440: "16.4k", 2.5e6: "2.5M", 3e9: "3G"} {
		if got := Short(v); got != want {
			t.Errorf("Short(%g) = %q, want %q", v, got, want)
		}
	}
}

// TestLogScaleKeepsSmallBarsReadable: on a log axis 131 beside 16,440 is
// a bar of a visible fraction of the plot, not a sliver, and every decade
// has a tick.
func TestLogScaleKeepsSmallBarsReadable(t *testing.T) {
	svg := Bars("t", "commands", []Row{{Label: "a", Median: 131, Min: 120, Max: 140}, {Label: "b", Median: 16440}}, true)
	for _, tick := range []string{">100<", ">1000<", ">10k<", ">100k<"} {
		if !strings.Contains(svg, tick) {
			t.Errorf("no tick %s in\n%s", tick, svg)
		}
	}
	// Decades 2..5 over 420 px: a at log10(131) = 2.12, b at 4.22.
	if !strings.Contains(svg, `width="16.4"`) || !strings.Contains(svg, `width="310.2"`) {
		t.Errorf("bar widths are not the log positions:\n%s", svg)
	}
}

func TestRowWithoutValue(t *testing.T) {
	svg := Bars("t", "IOPS", []Row{{Label: "scsi_debug"}, {Label: "x", Median: 5}}, false)
	if !strings.Contains(svg, ">n/a<") {
		t.Errorf("a row without a median is not marked n/a:\n%s", svg)
	}
}

// TestSharesReadableAcrossCounts: a row of 131 commands and one of 16,440
// both fill the plot (shares, not counts), every bin has a legend entry,
// empty ones too, and the totals are in the notes.
func TestSharesReadableAcrossCounts(t *testing.T) {
	svg := Shares("Read transfer size", []string{"≤ 512 B", "≤ 1 KiB", "≤ 4 KiB", "≤ 128 KiB"}, []ShareRow{
		{Label: "whole disk", Counts: []float64{0, 0, 0, 131}, Note: "131 commands"},
		{Label: "partition 1 (odd size)", Counts: []float64{16000, 0, 440, 0}, Note: "16.4k commands"},
		{Label: "nothing", Counts: []float64{0, 0, 0, 0}},
	})
	for _, want := range []string{
		`width="420.0"`, // 131 of 131: the whole plot
		`width="408.8"`, // 16000 of 16440
		">100%<", ">97%<",
		">≤ 1 KiB<", // a bin no row used still has its legend entry
		">131 commands<", ">16.4k commands<",
		">partition 1 (odd size)<",
		">no commands<",
	} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %s:\n%s", want, svg)
		}
	}
	// 440 of 16440 is 2.7 %: drawn, not labelled.
	if strings.Contains(svg, ">3%<") {
		t.Errorf("a share under 8 %% is labelled:\n%s", svg)
	}
}

// A percentage is written in the ink that reads on its bin's colour, also
// when there is one bin only (which is purple: it had black ink).
func TestSharesInkReadsOnItsBin(t *testing.T) {
	one := Shares("Data segments", []string{"≤ 1"}, []ShareRow{{Label: "read", Counts: []float64{5}, Note: "5 commands"}})
	if !strings.Contains(one, `fill="#440154"`) || !strings.Contains(one, `fill="white">100%<`) {
		t.Errorf("a lone bin is not purple with white ink:\n%s", one)
	}
	two := Shares("Sizes", []string{"≤ 512 B", "≤ 1 MiB"}, []ShareRow{{Label: "read", Counts: []float64{1, 1}}})
	if !strings.Contains(two, `fill="black">50%<`) || !strings.Contains(two, `fill="white">50%<`) {
		t.Errorf("the yellow bin wants black ink and the purple one white:\n%s", two)
	}
}
