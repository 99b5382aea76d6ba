// Command promcheck holds the Prometheus checks of the deploy files that
// need more than promtool: the Grafana dashboard's expressions as
// Prometheus evaluates them.
//
//	promcheck dashboard-rules DASHBOARD INSTANCE
//
// dashboard-rules writes the dashboard's expressions, Grafana variables
// substituted (dashboard.go, the one home of that substitution) with
// INSTANCE as the scrape target, as a rule file of recording rules for
// promtool check rules (deploy/prometheus/check.sh).
package main

import (
	"fmt"
	"io"
	"os"
)

const usage = "usage: promcheck dashboard-rules DASHBOARD INSTANCE"

func main() {
	os.Exit(run(os.Args[1:]))
}

func run(args []string) int {
	if len(args) == 3 && args[0] == "dashboard-rules" {
		if err := writeDashboardRules(os.Stdout, args[1], args[2]); err != nil {
			fmt.Fprintln(os.Stderr, "promcheck:", err)
			return 1
		}
		return 0
	}
	fmt.Fprintln(os.Stderr, usage)
	return 2
}

func writeDashboardRules(w io.Writer, path, instance string) error {
	f, err := os.Open(path)
	if err != nil {
		return err
	}
	defer func() { _ = f.Close() }() // read-only
	exprs, err := dashboardExprs(f)
	if err != nil {
		return fmt.Errorf("%s: %w", path, err)
	}
	return dashboardRules(w, exprs, instance)
}
