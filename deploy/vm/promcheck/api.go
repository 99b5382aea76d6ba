package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// api is a client of Prometheus's HTTP API (/api/v1): the few calls
// metrics-test makes, with encoding/json (client_golang is the metrics
// package's alone; see .golangci.yml).
type api struct {
	base   string // http://127.0.0.1:PORT
	client *http.Client
}

func newAPI(base string) *api {
	return &api{base: base, client: &http.Client{Timeout: 10 * time.Second}}
}

// answer is the API's reply to a query: its status, error and result, and
// the reply as it came (for FAIL lines).
type answer struct {
	Status string `json:"status"`
	Error  string `json:"error"`
	Data   struct {
		ResultType string          `json:"resultType"`
		Result     json.RawMessage `json:"result"`
	} `json:"data"`
	body string
}

// why is the reason a query failed, for a FAIL line: the API's error,
// else its whole reply (at most 300 bytes), else err (no reply).
func (a answer) why(err error) string {
	s := a.Error
	if s == "" {
		s = strings.TrimSpace(a.body)
	}
	if len(s) > 300 {
		s = s[:300]
	}
	if s == "" && err != nil {
		s = err.Error()
	}
	return s
}

// results is the number of results: the length of a vector or matrix, 1
// for a scalar or a string.
func (a answer) results() int {
	var list []json.RawMessage
	if err := json.Unmarshal(a.Data.Result, &list); err != nil {
		return 1
	}
	if a.Data.ResultType == "scalar" || a.Data.ResultType == "string" {
		return 1
	}
	return len(list)
}

// single is the value of an instant vector's one sample as the API spells
// it ("100"); false when the result is not exactly one sample.
func (a answer) single() (string, bool) {
	if a.Data.ResultType != "vector" {
		return "", false
	}
	var v []struct {
		Value [2]json.RawMessage `json:"value"`
	}
	if err := json.Unmarshal(a.Data.Result, &v); err != nil || len(v) != 1 {
		return "", false
	}
	var s string
	if err := json.Unmarshal(v[0].Value[1], &s); err != nil {
		return "", false
	}
	return s, true
}

// query evaluates expr now (POST /api/v1/query). A reply that is not
// status "success" is an error, with the answer filled in as far as the
// reply could be read (answer.why says why).
func (p *api) query(ctx context.Context, expr string) (answer, error) {
	var a answer
	_, body, err := p.do(ctx, http.MethodPost, "/api/v1/query", url.Values{"query": {expr}})
	a.body = string(body)
	if err != nil {
		return a, err
	}
	if err := json.Unmarshal(body, &a); err != nil {
		return a, fmt.Errorf("query reply: %w", err)
	}
	if a.Status != "success" {
		return a, fmt.Errorf("query status %q", a.Status)
	}
	return a, nil
}

// value is the single sample's value of expr ("" when the result is not
// exactly one sample).
func (p *api) value(ctx context.Context, expr string) (string, answer, error) {
	a, err := p.query(ctx, expr)
	if err != nil {
		return "", a, err
	}
	v, _ := a.single()
	return v, a, nil
}

// rule is one rule of GET /api/v1/rules.
type rule struct {
	Type      string `json:"type"` // "recording" or "alerting"
	Name      string `json:"name"`
	Health    string `json:"health"`
	LastError string `json:"lastError"`
	Query     string `json:"query"`
}

// rules lists the rules Prometheus loaded, group by group.
func (p *api) rules(ctx context.Context) ([]rule, error) {
	_, body, err := p.do(ctx, http.MethodGet, "/api/v1/rules", nil)
	if err != nil {
		return nil, err
	}
	var r struct {
		Status string `json:"status"`
		Data   struct {
			Groups []struct {
				Rules []rule `json:"rules"`
			} `json:"groups"`
		} `json:"data"`
	}
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("rules: %w", err)
	}
	if r.Status != "success" {
		return nil, fmt.Errorf("rules: status %q: %s", r.Status, body)
	}
	var out []rule
	for _, g := range r.Data.Groups {
		out = append(out, g.Rules...)
	}
	return out, nil
}

// ready reports whether GET /-/ready answers 200.
func (p *api) ready(ctx context.Context) bool {
	code, _, err := p.do(ctx, http.MethodGet, "/-/ready", nil)
	return err == nil && code == http.StatusOK
}

// do sends a request and returns the reply's status code and body,
// whatever the code: the API's error replies (400, 422, 503) carry JSON
// with status "error", which the callers read.
func (p *api) do(ctx context.Context, method, path string, form url.Values) (int, []byte, error) {
	var body io.Reader
	if form != nil {
		body = strings.NewReader(form.Encode())
	}
	req, err := http.NewRequestWithContext(ctx, method, p.base+path, body)
	if err != nil {
		return 0, nil, err
	}
	if form != nil {
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	}
	resp, err := p.client.Do(req)
	if err != nil {
		return 0, nil, err
	}
	defer func() { _ = resp.Body.Close() }() // read whole below
	b, err := io.ReadAll(resp.Body)
	return resp.StatusCode, b, err
}
