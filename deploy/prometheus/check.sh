#!/usr/bin/env bash
# Validates the Prometheus and Grafana deploy files with promtool:
#   - scrape.yml           promtool check config (also checks rules.yml)
#   - rules.yml            promtool check rules, and promtool test rules rules.test.yml
#   - web-config.example.yml   promtool check web-config
#   - ../grafana/vscsid.json   every PromQL expression of the dashboard, with the
#     Grafana variables replaced by concrete values, as recording rules in a
#     temporary file for promtool check rules
# Exits non-zero on any problem. Needs promtool (Debian: prometheus), jq and
# Go (the dashboard's expressions come from deploy/vm/promcheck).
#
# Whether the metric names used here exist is checked by the Go tests of
# package metrics (TestDeployFilesUseExportedMetrics).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
dashboard="$here/../grafana/vscsid.json"

for tool in promtool jq go; do
	command -v "$tool" >/dev/null || {
		echo "check.sh: $tool not found (apt-get install -y prometheus jq; Go from go.dev)" >&2
		exit 1
	}
done

tmp="$(mktemp -d)"
trap 'rm -rf "$tmp"' EXIT
fail=0
run() {
	local out
	if ! out="$("$@" 2>&1)"; then
		echo "check.sh: FAILED: $*" >&2
		echo "$out" >&2
		fail=1
	fi
}

cd "$here"
run promtool check config scrape.yml
run promtool check rules rules.yml
run promtool test rules rules.test.yml
run promtool check web-config web-config.example.yml

# Grafana: the dashboard must be valid JSON with unique panel ids.
if ! jq -e . "$dashboard" >/dev/null 2>&1; then
	echo "check.sh: $dashboard is not valid JSON" >&2
	exit 1
fi
dups="$(jq -r '[.. | objects | select(has("gridPos")) | .id] | group_by(.) | map(select(length > 1) | .[0]) | .[]' "$dashboard")"
if [[ -n "$dups" ]]; then
	echo "check.sh: duplicate panel ids in the dashboard: $dups" >&2
	fail=1
fi

# Every "expr", with Grafana's variables replaced: $__rate_interval etc. by
# durations, the dashboard's own template variables by sample values (the
# substitution's one home is deploy/vm/promcheck/dashboard.go, which
# metrics-test uses against a live Prometheus too). A "$" left over is an
# unknown variable, which fails the check.
go -C "$here/../.." run ./deploy/vm/promcheck dashboard-rules "$dashboard" 127.0.0.1:9544 >"$tmp/dashboard-rules.json" || {
	echo "check.sh: promcheck dashboard-rules failed" >&2
	exit 1
}

n="$(jq '.groups[0].rules | length' "$tmp/dashboard-rules.json")"
if ((n == 0)); then
	echo "check.sh: no PromQL expressions found in $dashboard" >&2
	fail=1
fi
left="$(jq -r '.groups[0].rules[] | select(.expr | contains("$")) | .expr' "$tmp/dashboard-rules.json")"
if [[ -n "$left" ]]; then
	echo "check.sh: dashboard expressions use unknown Grafana variables:" >&2
	echo "$left" >&2
	fail=1
fi
# promtool reads YAML, and JSON is YAML.
cp "$tmp/dashboard-rules.json" "$tmp/dashboard-rules.yml"
run promtool check rules "$tmp/dashboard-rules.yml"

if ((fail)); then
	echo "check.sh: FAIL" >&2
	exit 1
fi
echo "check.sh: scrape config, rules and rule tests, web config and $n dashboard expressions OK"
