package main

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
)

// The Grafana dashboard's expressions as Prometheus can evaluate them: the
// one home of the variable substitution, which deploy/prometheus/check.sh
// (promtool check rules, through "promcheck dashboard-rules") and
// metrics-test (queries against a live Prometheus) both use.

// grafanaVars are Grafana's built-in interval variables and the
// dashboard's own template variables, each with the value it gets here,
// replaced in this order; both spellings ($x and ${x}, and ${device:regex})
// are matched. A "$" left over is a variable missing from this list.
var grafanaVars = []struct {
	re    *regexp.Regexp
	value string // "" for the instance, which the caller gives
}{
	{regexp.MustCompile(`\$\{?__rate_interval\}?`), "5m"},
	{regexp.MustCompile(`\$\{?__interval\}?`), "1m"},
	{regexp.MustCompile(`\$\{?__range\}?`), "1h"},
	{regexp.MustCompile(`\$\{?job\}?`), "vscsid"},
	{regexp.MustCompile(`\$\{?instance\}?`), ""},
	{regexp.MustCompile(`\$\{?device(:regex)?\}?`), ".*"},
}

// substitute replaces the Grafana variables of expr by concrete values,
// instance being the scrape target's address (host:port).
func substitute(expr, instance string) string {
	for _, v := range grafanaVars {
		val := v.value
		if val == "" {
			val = instance
		}
		expr = v.re.ReplaceAllLiteralString(expr, val)
	}
	return expr
}

// dashboardExprs returns the "expr" of every JSON object of a dashboard
// that has one, in document order (an object before the objects inside
// it), as jq's `.. | objects | select(has("expr")) | .expr` lists them,
// so that the n-th expression keeps its number from run to run. An expr
// that is not a string is an error.
func dashboardExprs(r io.Reader) ([]string, error) {
	d := json.NewDecoder(r)
	d.UseNumber()
	var out []string
	if err := walkJSON(d, &out); err != nil {
		return nil, fmt.Errorf("dashboard: %w", err)
	}
	if _, err := d.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("dashboard: data after the top-level value")
	}
	return out, nil
}

// walkJSON reads one JSON value from d, appending the expr of each object
// that has one to out, the object's own before those nested in it.
func walkJSON(d *json.Decoder, out *[]string) error {
	tok, err := d.Token()
	if err != nil {
		return err
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil // a scalar
	}
	switch delim {
	case '[':
		for d.More() {
			if err := walkJSON(d, out); err != nil {
				return err
			}
		}
	case '{':
		// The object's own expr comes first: nested ones are collected
		// apart and appended after it.
		var own *string
		var nested []string
		for d.More() {
			key, err := d.Token()
			if err != nil {
				return err
			}
			if key == "expr" {
				var raw json.RawMessage
				if err := d.Decode(&raw); err != nil {
					return err
				}
				var s string
				if err := json.Unmarshal(raw, &s); err != nil {
					return fmt.Errorf("an expr that is not a string: %s", raw)
				}
				own = &s
				continue
			}
			if err := walkJSON(d, &nested); err != nil {
				return err
			}
		}
		if own != nil {
			*out = append(*out, *own)
		}
		*out = append(*out, nested...)
	}
	_, err = d.Token() // the closing delimiter
	return err
}

// dashboardRules writes the dashboard's expressions, substituted, as a
// Prometheus rule file (JSON, which is YAML) of recording rules
// dashboard:expr_0, dashboard:expr_1, ...: the file check.sh gives to
// promtool check rules.
func dashboardRules(w io.Writer, exprs []string, instance string) error {
	type rule struct {
		Record string `json:"record"`
		Expr   string `json:"expr"`
	}
	type group struct {
		Name  string `json:"name"`
		Rules []rule `json:"rules"`
	}
	g := group{Name: "grafana-dashboard", Rules: []rule{}}
	for i, e := range exprs {
		g.Rules = append(g.Rules, rule{fmt.Sprintf("dashboard:expr_%d", i), substitute(e, instance)})
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	return enc.Encode(struct {
		Groups []group `json:"groups"`
	}{[]group{g}})
}
