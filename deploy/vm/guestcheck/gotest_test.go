package main

import (
	"strings"
	"testing"
)

func TestScanTestOutput(t *testing.T) {
	const out = `=== RUN   TestKernel
    conn_linux_integration_test.go:70: created nltest
--- PASS: TestKernel (0.31s)
=== RUN   TestOther
    x_test.go:12: want 1, got 2
=== RUN   TestOther/sub
    --- FAIL: TestOther/sub (0.00s)
--- FAIL: TestOther (0.01s)
=== RUN   TestNeedsRoot
    y_test.go:9: needs root
--- SKIP: TestNeedsRoot (0.00s)
FAIL
`
	var console, w strings.Builder
	n, failed := scanTestOutput(strings.NewReader(out), &console, &w)
	want := "PASS TestKernel (0.31s)\nFAIL TestOther: x_test.go:12: want 1, got 2\nSKIP TestNeedsRoot: y_test.go:9: needs root\n"
	if n != 3 || !failed || w.String() != want {
		t.Errorf("results %d, failed %v, lines:\n%s\nwant:\n%s", n, failed, w.String(), want)
	}
	if console.String() != out {
		t.Error("the console did not get the output verbatim")
	}
}
