package prom

import (
	"strings"
	"testing"
)

const exposition = `# HELP h Bytes.
# TYPE h histogram
h_bucket{d="a",le="512"} 1
h_bucket{d="a",le="1.048576e+06"} 3
h_bucket{d="a",le="+Inf"} 4
h_sum{d="a"} 2.5e+06
h_count{d="a"} 4
# TYPE s summary
s{quantile="0.5"} 7
s_sum 10
s_count 2
# TYPE c_total counter
c_total{d="a",p="x \"y\" \\ z"} 5
c_total{d="b"} 6
# TYPE g gauge
g 1.5
u{d="a"} 9 1700000000000
`

func TestParseFlattensFamilies(t *testing.T) {
	s, err := Parse(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name string
		want map[string]string
		v    float64
	}{
		{"h_bucket", map[string]string{"le": "+Inf"}, 4},
		{"h_bucket", map[string]string{"le": "1048576"}, 3}, // le compares as a number
		{"h_bucket", nil, 8},
		{"h_sum", map[string]string{"d": "a"}, 2.5e6},
		{"h_count", nil, 4},
		{"s", map[string]string{"quantile": "0.50"}, 7},
		{"s_sum", nil, 10},
		{"s_count", nil, 2},
		{"c_total", nil, 11},
		{"c_total", map[string]string{"p": `x "y" \ z`}, 5},
		{"c_total", map[string]string{"d": "c"}, 0},
		{"g", nil, 1.5},
		{"u", map[string]string{"d": "a"}, 9},
	} {
		if v := s.Sum(tc.name, tc.want); v != tc.v {
			t.Errorf("Sum(%s, %v) = %v, want %v", tc.name, tc.want, v, tc.v)
		}
	}
	if by := s.By("c_total", nil, "d"); by["a"] != 5 || by["b"] != 6 || len(by) != 2 {
		t.Errorf("By: %v", by)
	}
}

func TestSelect(t *testing.T) {
	s, err := Parse(strings.NewReader(exposition))
	if err != nil {
		t.Fatal(err)
	}
	for sel, want := range map[string]float64{
		`c_total{d="a"}`:              5,
		`c_total`:                     11,
		`c_total{ d="b" }`:            6,
		`h_bucket{d="a", le="512"}`:   1,
		`c_total{d="zzz"}`:            0, // a series of the metric, none matching
		`c_total{p="x \"y\" \\ z"}`:   5,
		`h_bucket{le="1.048576e+06"}`: 3,
	} {
		x, err := ParseSelector(sel)
		if err != nil {
			t.Errorf("%s: %v", sel, err)
			continue
		}
		if v, err := s.Select(x); err != nil || v != want {
			t.Errorf("%s: %v, %v; want %v", sel, v, err, want)
		}
	}
	x, err := ParseSelector(`c_totl{d="a"}`)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := s.Select(x); err == nil || !strings.Contains(err.Error(), "no metric c_totl") {
		t.Errorf("a misspelt metric: %v", err)
	}
}

func TestBadInput(t *testing.T) {
	for _, sel := range []string{"", `c{d=~"a"}`, `c{d="a"} x`, `c{d="a"`, "a\nb", "# c", `c{d="a",d="b"}`} {
		if _, err := ParseSelector(sel); err == nil {
			t.Errorf("selector %q: no error", sel)
		}
	}
	for _, text := range []string{"x{a=\"1\" 3", "x{a=1} 3", "x 1e", "novalue", "# TYPE h histogram\nh_bucket{le=\"x\"} 1\n"} {
		if _, err := Parse(strings.NewReader(text)); err == nil {
			t.Errorf("exposition %q: no error", text)
		}
	}
}
