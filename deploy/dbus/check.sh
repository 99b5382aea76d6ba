#!/usr/bin/env bash
# Validates org.kernel.TCMUService1.conf the way the system bus reads it:
# starts a private dbus-daemon whose configuration includes the file.
# dbus-daemon refuses to start on malformed XML and on any element or
# attribute it does not know, and prints why. Exits non-zero on a problem.
# Needs dbus-daemon (Debian: dbus-daemon, from the dbus package).
#
# Who may own and call the names is checked by the Go tests of package
# cmd/internal/dbus (TestPolicy), which also run this file through dbus-daemon.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
command -v dbus-daemon >/dev/null || {
	echo "check.sh: dbus-daemon not found (apt-get install -y dbus)" >&2
	exit 1
}
tmp="$(mktemp -d)"
pid=
cleanup() {
	[ -n "$pid" ] && kill "$pid" 2>/dev/null || true
	rm -rf "$tmp"
}
trap cleanup EXIT
cat >"$tmp/bus.conf" <<CONF
<busconfig>
  <listen>unix:path=$tmp/bus.sock</listen>
  <auth>EXTERNAL</auth>
  <policy context="default"><allow user="*"/></policy>
  <include>$here/org.kernel.TCMUService1.conf</include>
</busconfig>
CONF
dbus-daemon --config-file="$tmp/bus.conf" --nofork --nopidfile --nosyslog --print-address=3 \
	3>"$tmp/address" 2>"$tmp/err" &
pid=$!
for _ in $(seq 50); do
	if [ -s "$tmp/address" ]; then
		echo "check.sh: org.kernel.TCMUService1.conf: OK"
		exit 0
	fi
	if ! kill -0 "$pid" 2>/dev/null; then
		break
	fi
	sleep 0.1
done
echo "check.sh: FAILED: dbus-daemon does not accept org.kernel.TCMUService1.conf:" >&2
cat "$tmp/err" >&2
exit 1
