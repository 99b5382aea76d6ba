# shellcheck shell=sh
# vmtest: the check library of both test guests (POSIX sh: busybox ash in
# the minimal guest, bash in the full one). Sourced by run-scenario before a
# scenario, and by the full guest's vmtest; see deploy/vm/README.md for the
# contract.
#
# Result lines go to the console (stdout) and, when the guest opened it, to
# the results channel (fd 7, ttyS1), in the one format the host parses
# (deploy/vm/internal/vmhost, ParseResults):
#   PASS <group>/<name>[ (<detail>)]
#   FAIL <group>/<name>: <reason>
#   <group>: N passed, N failed           (summary, at the group's end)
#   N passed, N failed                    (verdict: the closing line, then
#   VMTEST-VERDICT: PASS|FAIL              the guest's verdict)
# The group is $VMTEST_SCENARIO: the scenario's name, or "full".
#
# Every command a check runs is wrapped in `timeout` (CMD_TIMEOUT seconds,
# default 60) and has stdin from /dev/null; its output is kept in $OUT, and
# the full transcript in the scenario's artefacts (transcript.log).
#
# Settings (set before sourcing):
#   VMTEST_DIR        where the harness is in the guest (/vmtest; the full
#                     guest: /usr/local/lib/vmtest): this file, run-scenario,
#                     run-scenarios and scenarios/NAME.sh
#   VMTEST_LIB        where this file is ($VMTEST_DIR/lib.sh)
#   VMTEST_SH         the shell of check_sh/capture_sh code and of functions
#                     run as a check's command (sh; the full guest: bash)
#   VMTEST_HELPERS    files that shell sources after the library (the
#                     guest's own helper functions), space-separated
#   VMTEST_TRANSCRIPT where the transcript goes ($ART/transcript.log; "-"
#                     for stdout, the console)

VMTEST_SCENARIO=${VMTEST_SCENARIO:-adhoc}
VMTEST_LIB=${VMTEST_LIB:-${VMTEST_DIR:-/vmtest}/lib.sh}
VMTEST_SH=${VMTEST_SH:-sh}
VMTEST_HELPERS=${VMTEST_HELPERS:-}
W=/tmp/vmtest/work/$VMTEST_SCENARIO
ART=/tmp/vmtest/artefacts/$VMTEST_SCENARIO
VMTEST_TRANSCRIPT=${VMTEST_TRANSCRIPT:-$ART/transcript.log}
CMD_TIMEOUT=${CMD_TIMEOUT:-60}
# The real tools by full path: for a bare name busybox ash (and busybox's
# timeout) runs its own applet. busybox dd silently drops O_DIRECT when a
# direct read fails with EINVAL, so it cannot test direct I/O.
DD=/usr/bin/dd        # GNU dd (coreutils)
MT=/usr/bin/mt-st     # mt-st, not busybox mt
TAR=/usr/bin/tar      # GNU tar (busybox tar cannot block records)
CONFIGFS=/sys/kernel/config/target
# Assertions over structured data (Prometheus scrapes): deploy/vm/guestcheck.
# shellcheck disable=SC2034 # used by the scenarios
GUESTCHECK=/vmtest/guestcheck
METRICS_ADDR=${METRICS_ADDR:-127.0.0.1:9544}
# /init sources the library for emit and verdict only (VMTEST_NO_DIRS=1).
[ -n "${VMTEST_NO_DIRS:-}" ] || mkdir -p "$W" "$ART" /run/vmtest

_vt_pass=0
_vt_fail=0
OUT=
RC=0

# ---------------------------------------------------------------- results

# emit LINE: a result line, to the console and the results channel.
emit() {
	echo "$*"
	if [ -n "${VMTEST_RESULT_FD:-}" ]; then echo "$*" >&7; fi
}

_vt_counts() {
	echo "$_vt_pass $_vt_fail" >"/run/vmtest/$VMTEST_SCENARIO.counts"
}

# pass NAME [DETAIL]
pass() {
	_vt_pass=$((_vt_pass + 1))
	_vt_counts
	if [ -n "${2:-}" ]; then
		emit "PASS $VMTEST_SCENARIO/$1 ($(printf "%s" "$2" | tr '\n' ' ' | cut -c1-200))"
	else
		emit "PASS $VMTEST_SCENARIO/$1"
	fi
	return 0
}

# fail NAME REASON
fail() {
	_vt_fail=$((_vt_fail + 1))
	_vt_counts
	emit "FAIL $VMTEST_SCENARIO/$1: $(printf "%s" "${2:-}" | tr '\n' ' ' | cut -c1-300)"
	return 1
}

# summary: the group's summary line, "GROUP: N passed, N failed".
summary() {
	emit "$VMTEST_SCENARIO: $_vt_pass passed, $_vt_fail failed"
}

# verdict PASSED FAILED: the closing line and the guest's verdict (PASS only
# when nothing failed and something passed).
verdict() {
	emit "$1 passed, $2 failed"
	if [ "$2" -eq 0 ] && [ "$1" -gt 0 ]; then
		emit "VMTEST-VERDICT: PASS"
	else
		emit "VMTEST-VERDICT: FAIL"
	fi
}

# note TEXT: console only.
note() { echo "  # $*"; }

# abort REASON: end the scenario now (the runner prints the summary).
abort() {
	fail "scenario-aborted" "$1"
	exit 1
}

# require CHECK...: run a check; abort the scenario if it fails, for checks
# that everything after them depends on (a device that did not attach).
require() {
	"$@" || abort "required check '$2' failed"
}

# ------------------------------------------------------------- run helpers

# _vt_prelude: the start of the code a child shell runs: the library and
# the helpers sourced.
_vt_prelude() {
	printf '. %s;' "$VMTEST_LIB"
	for _vt_h in $VMTEST_HELPERS; do printf ' . %s;' "$_vt_h"; done
}

# _vt_is_func NAME: NAME is a shell function (of the library or the
# helpers), which timeout cannot exec: it runs in a child $VMTEST_SH.
_vt_is_func() {
	case $(type "$1" 2>/dev/null | head -n1) in
	"$1 is a function"* | "$1 is a shell function"*) return 0 ;;
	esac
	return 1
}

# _vt_tr: append stdin to the transcript.
_vt_tr() {
	if [ "$VMTEST_TRANSCRIPT" = - ]; then cat; else cat >>"$VMTEST_TRANSCRIPT"; fi
}

# _vt_run SECS CMD...: run CMD under timeout, output in $OUT, status in $RC,
# elapsed seconds in $_vt_el. CMD may be a function of the library or of
# $VMTEST_HELPERS.
_vt_run() {
	_vt_t=$1
	shift
	echo "  \$ $*" | _vt_tr
	_vt_s=$(date +%s)
	if _vt_is_func "$1"; then
		timeout -s TERM -k 5 "$_vt_t" "$VMTEST_SH" -c "$(_vt_prelude) \"\$@\"" vmtest "$@" >"$W/out.$$" 2>&1 </dev/null
	else
		timeout -s TERM -k 5 "$_vt_t" "$@" >"$W/out.$$" 2>&1 </dev/null
	fi
	RC=$?
	_vt_el=$(($(date +%s) - _vt_s))
	OUT=$(cat "$W/out.$$")
	[ -z "$OUT" ] || sed 's/^/    /' "$W/out.$$" | _vt_tr
	echo "    [exit $RC, ${_vt_el}s]" | _vt_tr
}

_vt_timed_out() {
	[ "$_vt_el" -ge "$_vt_t" ] && { [ "$RC" -eq 143 ] || [ "$RC" -eq 137 ]; }
}

_vt_lastline() {
	printf '%s\n' "$OUT" | sed '/^[[:space:]]*$/d' | tail -n1 | cut -c1-200
}

# _vt_why: reason text for a failed command.
_vt_why() {
	if _vt_timed_out; then
		echo "timed out after ${_vt_t}s"
	else
		echo "exit $RC: $(_vt_lastline)"
	fi
}

_vt_show() {
	echo "  \$ $*"
	[ -z "$OUT" ] || printf '%s\n' "$OUT" | tail -n 15 | sed 's/^/  | /'
}

# capture CMD...: run CMD (under timeout), set OUT and RC, report nothing.
capture() {
	_vt_run "$CMD_TIMEOUT" "$@"
	return $RC
}

# capture_sh 'CODE': the same for shell code (sh -c, with this library).
capture_sh() {
	_vt_run "$CMD_TIMEOUT" "$VMTEST_SH" -c "$(_vt_prelude) set -e -o pipefail; $1"
	return $RC
}

# check NAME CMD...: pass when CMD exits 0. CMD may be a function of the
# library or of $VMTEST_HELPERS.
check() {
	_vt_n=$1
	shift
	_vt_run "$CMD_TIMEOUT" "$@"
	if [ "$RC" -eq 0 ]; then
		pass "$_vt_n"
	else
		_vt_show "$@"
		fail "$_vt_n" "$(_vt_why)"
	fi
}

# check_sh NAME 'CODE': pass when the shell code exits 0. The code runs in
# `$VMTEST_SH -c` with set -e -o pipefail, this library and the helpers
# sourced; variables it needs must be exported (or expanded into CODE).
check_sh() {
	check "$1" "$VMTEST_SH" -c "$(_vt_prelude) set -e -o pipefail; $2"
}

# expect_fail NAME CMD...: pass when CMD exits non-zero (a timeout is not the
# expected failure: it fails the check).
expect_fail() {
	_vt_n=$1
	shift
	_vt_run "$CMD_TIMEOUT" "$@"
	if _vt_timed_out; then
		_vt_show "$@"
		fail "$_vt_n" "timed out after ${_vt_t}s (expected a failure, not a hang)"
	elif [ "$RC" -ne 0 ]; then
		pass "$_vt_n"
	else
		_vt_show "$@"
		fail "$_vt_n" "succeeded, expected a failure: $(_vt_lastline)"
	fi
}

# strerror ERRNO-NAME: glibc's message for it (what dd, tar and mt print).
strerror() {
	case $1 in
	EPERM) echo "Operation not permitted" ;;
	ENOENT) echo "No such file or directory" ;;
	EIO) echo "Input/output error" ;;
	ENXIO) echo "No such device or address" ;;
	EAGAIN) echo "Resource temporarily unavailable" ;;
	ENOMEM) echo "Cannot allocate memory" ;;
	EACCES) echo "Permission denied" ;;
	EBUSY) echo "Device or resource busy" ;;
	ENODEV) echo "No such device" ;;
	EINVAL) echo "Invalid argument" ;;
	EFBIG) echo "File too large" ;;
	ENOSPC) echo "No space left on device" ;;
	EROFS) echo "Read-only file system" ;;
	EOVERFLOW) echo "Value too large for defined data type" ;;
	ENOMEDIUM) echo "No medium found" ;;
	EMEDIUMTYPE) echo "Wrong medium type" ;;
	*) echo "unknown errno name $1" ;;
	esac
}

# expect_errno NAME ERRNO CMD...: pass when CMD fails and its output carries
# strerror(ERRNO). ERRNO may be "EROFS|EACCES" (either).
expect_errno() {
	_vt_n=$1
	_vt_e=$2
	shift 2
	_vt_run "$CMD_TIMEOUT" "$@"
	_vt_msgs=
	for _vt_x in $(echo "$_vt_e" | tr '|' ' '); do
		_vt_m=$(strerror "$_vt_x")
		_vt_msgs="${_vt_msgs:+$_vt_msgs or }$_vt_x ($_vt_m)"
		if [ "$RC" -ne 0 ] && ! _vt_timed_out && printf '%s\n' "$OUT" | grep -qF "$_vt_m"; then
			pass "$_vt_n"
			return 0
		fi
	done
	_vt_show "$@"
	if _vt_timed_out; then
		fail "$_vt_n" "timed out after ${_vt_t}s, expected $_vt_msgs"
	elif [ "$RC" -eq 0 ]; then
		fail "$_vt_n" "succeeded, expected $_vt_msgs"
	else
		fail "$_vt_n" "expected $_vt_msgs, got exit $RC: $(_vt_lastline)"
	fi
}

# expect_output NAME ERE CMD...: pass when CMD exits 0 and its output has a
# line matching the extended regular expression.
expect_output() {
	_vt_n=$1
	_vt_re=$2
	shift 2
	_vt_run "$CMD_TIMEOUT" "$@"
	if [ "$RC" -ne 0 ]; then
		_vt_show "$@"
		fail "$_vt_n" "$(_vt_why)"
	elif printf '%s\n' "$OUT" | grep -qE -- "$_vt_re"; then
		pass "$_vt_n"
	else
		_vt_show "$@"
		fail "$_vt_n" "output has no line matching /$_vt_re/"
	fi
}

# expect_eq NAME WANT GOT
expect_eq() {
	if [ "$2" = "$3" ]; then
		pass "$1"
	else
		fail "$1" "want '$2', got '$3'"
	fi
}

# expect_match NAME ERE STRING
expect_match() {
	if printf '%s\n' "$3" | grep -qE -- "$2"; then
		pass "$1"
	else
		fail "$1" "'$(printf '%s' "$3" | head -c 200)' does not match /$2/"
	fi
}

# wait_until SECS 'CONDITION': poll the shell condition every 0.2 s; 0 when
# it became true in time.
wait_until() {
	_vt_end=$(($(date +%s) + $1))
	while :; do
		eval "$2" >/dev/null 2>&1 && return 0
		[ "$(date +%s)" -lt "$_vt_end" ] || return 1
		sleep 0.2
	done
}

# wait_for NAME SECS 'CONDITION': wait_until as a check.
wait_for() {
	if wait_until "$2" "$3"; then
		pass "$1"
	else
		fail "$1" "not true within $2s: $3"
	fi
}

# trace_on FILE DEVICE [FLAG...]: vscsictl trace --json of DEVICE into
# FILE, its stderr into FILE.err, in the background. It is attached once
# FILE.err says "tracing" (the JSON's start line comes at the same
# moment, so a non-empty FILE says nothing about the commands).
# trace_off stops every trace started and fails if any did not exit 0.
trace_on() {
	_vt_tf=$1
	shift
	"${CTL:-vscsictl}" trace "$@" --json >"$_vt_tf" 2>"$_vt_tf.err" &
	_vt_traces="${_vt_traces:-} $!"
}
trace_off() {
	sleep 0.5 # the daemon writes lines within 200 ms, vscsictl flushes every 100 ms
	# shellcheck disable=SC2086 # the list of pids, split on purpose
	kill -INT $_vt_traces
	_vt_rc=0
	for _vt_p in $_vt_traces; do wait "$_vt_p" || _vt_rc=1; done
	_vt_traces=
	return $_vt_rc
}

# artefact FILE [NAME]: keep a copy of FILE in the run's artefacts.
artefact() {
	cp "$1" "$ART/${2:-$(basename "$1")}" 2>/dev/null || true
}

# field KEY TEXT: the value after "KEY" up to the end of the line, trimmed
# (for "Key: value" / "Key=value" style tool output).
field() {
	printf '%s\n' "$2" | sed -n "s/^[[:space:]]*$1[[:space:]]*[:=][[:space:]]*//p" | head -n1 | sed 's/[[:space:]]*$//'
}

# md5 FILE: just the digest.
md5() { md5sum "$1" | cut -d' ' -f1; }

# ------------------------------------------------------------------ kernel

# dmesg_mark [NAME]: remember where the kernel log is now; dmesg_since
# [NAME] prints what came after that mark (the runner sets the unnamed mark
# at the start of the scenario).
# kernel_before MAJOR MINOR: the running kernel is older than MAJOR.MINOR.
kernel_before() {
	_kv=$(uname -r)
	_kmaj=${_kv%%.*}
	_kmin=$(echo "$_kv" | cut -d. -f2)
	[ "$_kmaj" -lt "$1" ] || { [ "$_kmaj" -eq "$1" ] && [ "$_kmin" -lt "$2" ]; }
}

dmesg_mark() { dmesg | wc -l >"$W/dmesg.mark${1:+.$1}"; }
dmesg_since() {
	_vt_m=$(cat "$W/dmesg.mark${1:+.$1}" 2>/dev/null || echo 0)
	dmesg | tail -n +"$((_vt_m + 1))"
}

# kernel_clean NAME: no WARNING, BUG, Oops, hung task or lockdep report in
# the kernel log since the scenario started.
kernel_clean() {
	_vt_bad=$(dmesg_since | grep -E 'WARNING:|BUG:|Oops|Call Trace|blocked for more than|general protection|possible circular locking' | head -n3)
	if [ -z "$_vt_bad" ]; then
		pass "$1"
	else
		fail "$1" "kernel log: $_vt_bad"
	fi
}

# --------------------------------------------------------- device mapping

# The one way the tests find a device's nodes: dev_hctl finds the SCSI
# device tcm_loop made for a backstore (by configfs, not by asking vscsid,
# whose own report the tests check against it), scsi_node reads its node
# from sysfs; the full guest's iSCSI checks give scsi_node the device
# behind a session.

# dev_hctl NAME [WWN]: H:C:T:L of the SCSI LU whose backstore is
# core/*/NAME, found through the tcm_loop LUN symlinks and the TPG's
# address attribute; with WWN, on that tcm_loop target only (a backstore
# exported on several targets is one LU on each).
dev_hctl() {
	for _vt_l in "$CONFIGFS"/loopback/${2:-naa.*}/tpgt_*/lun/lun_*/*; do
		[ -L "$_vt_l" ] || continue
		_vt_t=$(readlink "$_vt_l")
		[ "${_vt_t##*/}" = "$1" ] || continue
		_vt_tpg=${_vt_l%/lun/*}
		_vt_lun=${_vt_l%/*}
		_vt_lun=${_vt_lun##*/lun_}
		_vt_a=$(cat "$_vt_tpg/address" 2>/dev/null) || return 1
		echo "$_vt_a:$_vt_lun"
		return 0
	done
	return 1
}

# scsi_node DIR KIND: the node the SCSI device whose sysfs directory is DIR
# has for KIND: block (sdX), tape (stN, rewinding), ntape (nstN, its
# non-rewinding twin), changer (schN), sg (sgN).
scsi_node() {
	case $2 in
	block) _vt_c=block ;;
	tape | ntape) _vt_c=scsi_tape ;;
	changer) _vt_c=scsi_changer ;;
	sg) _vt_c=scsi_generic ;;
	*) return 2 ;;
	esac
	for _vt_d in "$1/$_vt_c"/*; do
		[ -e "$_vt_d" ] || continue
		_vt_d=${_vt_d##*/}
		case $2:$_vt_d in
		tape:st[0-9]* | ntape:nst[0-9]*) case ${_vt_d#*st} in *[!0-9]*) continue ;; esac ;;
		tape:* | ntape:*) continue ;;
		esac
		echo "$_vt_d"
		return 0
	done
	return 1
}

# dev_node KIND NAME [WWN]: the node (KIND as scsi_node's) of the LU of
# backstore NAME (on tcm_loop target WWN), once it exists in /dev.
dev_node() {
	_vt_h=$(dev_hctl "$2" "${3:-}") || return 1
	_vt_x=$(scsi_node "/sys/class/scsi_device/$_vt_h/device" "$1") || return 1
	[ -e "/dev/$_vt_x" ] || return 1
	echo "$_vt_x"
}
# dev_path KIND NAME [WWN]: the same as a path, /dev/NODE.
dev_path() { _vt_x=$(dev_node "$@") && echo "/dev/$_vt_x"; }
# dev_block, dev_tape, dev_changer, dev_sg NAME [WWN]: dev_node of a kind.
dev_block() { dev_node block "$@"; }
dev_tape() { dev_node tape "$@"; }
dev_changer() { dev_node changer "$@"; }
dev_sg() { dev_node sg "$@"; }

# ------------------------------------------------------------ tape, by sg

# tape_ready SG: TEST UNIT READY until it passes (the first after a
# restart or power cut meets UNIT ATTENTION 29/00); 2 s at most.
tape_ready() {
	for _vt_i in 1 2 3 4 5 6 7 8 9 10; do
		sg_turs "/dev/$1" >/dev/null 2>&1 && return 0
		sleep 0.2
	done
	return 1
}
# tape_at_bot SG: READ POSITION (short form) says BOP and block 0 (sg_raw
# dumps the data in hex: its first line, after the offset, is bytes 0-15).
tape_at_bot() {
	_vt_p=$(sg_raw -r 20 "/dev/$1" 34 00 00 00 00 00 00 00 00 00 2>&1 | sed -n 's/^ *00  *//p' | head -n1)
	# shellcheck disable=SC2086 # split into the bytes
	set -- $_vt_p
	case $1 in 8?) ;; *) echo "READ POSITION: $_vt_p"; return 1 ;; esac
	[ "$5$6$7$8" = 00000000 ] || { echo "READ POSITION: $_vt_p"; return 1; }
}
# tape_read_rec SG LEN OUT: READ(6) of one variable block of up to LEN
# bytes into OUT; prints ok, filemark, eod or error: ...
tape_read_rec() {
	# shellcheck disable=SC2046 # the three bytes of the length
	_vt_o=$(sg_raw -r "$2" -o "$3" "/dev/$1" 08 00 $(printf '%02x %02x %02x' $(($2 >> 16)) $((($2 >> 8) & 255)) $(($2 & 255))) 00 2>&1 | tr 'A-Z' 'a-z')
	case $_vt_o in
	*"filemark detected"*) echo filemark ;;
	*"blank check"* | *"end-of-data detected"*) echo eod ;;
	*"scsi status: good"*"writing $2 bytes"*) echo ok ;;
	*) echo "error: $(printf '%s' "$_vt_o" | tr '\n' ' ' | cut -c1-160)" ;;
	esac
}

# ----------------------------------------------------------------- daemon

VSCSID=/usr/sbin/vscsid
VSCSID_PID=

# vscsid_start LOGNAME [ARGS...]: start vscsid in the background with
# --log.level $VSCSID_LOG_LEVEL (info; debug logs every command) and the metrics listener on $METRICS_ADDR; ARGS usually
# include --config FILE. Pass check when the process is still alive after
# the metrics endpoint answered (or 10 s without it).
vscsid_start() {
	_vt_name=$1
	shift
	if [ ! -x "$VSCSID" ]; then
		fail "vscsid-start-$_vt_name" "$VSCSID is not in this guest (built with --no-daemon, or cmd/vscsid missing)"
		return 1
	fi
	_vt_log=$ART/vscsid-$_vt_name.log
	echo "  \$ vscsid $* (log: vscsid-$_vt_name.log)"
	"$VSCSID" --log.level "${VSCSID_LOG_LEVEL:-info}" --web.listen-address "${METRICS_LISTEN:-$METRICS_ADDR}" "$@" >"$_vt_log" 2>&1 </dev/null &
	VSCSID_PID=$!
	echo "$VSCSID_PID" >"$W/vscsid.pid"
	if wait_until 10 "! kill -0 $VSCSID_PID || wget -q -O /dev/null http://$METRICS_ADDR/metrics"; then :; fi
	if kill -0 "$VSCSID_PID" 2>/dev/null; then
		pass "vscsid-start-$_vt_name"
	else
		wait "$VSCSID_PID"
		_vt_rc=$?
		VSCSID_PID=
		tail -n 15 "$_vt_log" | sed 's/^/  | /'
		fail "vscsid-start-$_vt_name" "vscsid exited with status $_vt_rc: $(sed '/^[[:space:]]*$/d' "$_vt_log" | tail -n1 | cut -c1-200)"
	fi
}

# vscsid_stop NAME [SECS]: SIGTERM, then check it exits 0 within SECS
# (default 20) and its log has no Go panic.
vscsid_stop() {
	if [ -z "$VSCSID_PID" ]; then
		fail "$1" "vscsid is not running"
		return 1
	fi
	kill -TERM "$VSCSID_PID" 2>/dev/null
	if wait_until "${2:-20}" "! kill -0 $VSCSID_PID"; then
		wait "$VSCSID_PID"
		_vt_rc=$?
		VSCSID_PID=
		if [ "$_vt_rc" -ne 0 ]; then
			fail "$1" "vscsid exited with status $_vt_rc after SIGTERM"
		elif grep -qE '^panic:|^fatal error:|^goroutine [0-9]+ \[' "$_vt_log"; then
			fail "$1" "vscsid log has a Go panic"
		else
			pass "$1"
		fi
	else
		kill -KILL "$VSCSID_PID" 2>/dev/null
		VSCSID_PID=
		fail "$1" "vscsid still running ${2:-20}s after SIGTERM (killed)"
	fi
}

# configfs_residue: print what a stopped daemon left behind in configfs.
configfs_residue() {
	ls -d "$CONFIGFS"/core/user_* "$CONFIGFS"/loopback/naa.* 2>/dev/null
}

# scrape_metrics FILE: the daemon's /metrics into FILE (and artefacts).
scrape_metrics() {
	timeout 10 wget -q -O "$1" "http://$METRICS_ADDR/metrics" && artefact "$1"
}

# _vt_cleanup: run on scenario exit: stop a daemon the scenario left running.
_vt_cleanup() {
	if [ -n "$VSCSID_PID" ] && kill -0 "$VSCSID_PID" 2>/dev/null; then
		echo "  # cleanup: stopping vscsid $VSCSID_PID"
		kill -TERM "$VSCSID_PID" 2>/dev/null
		wait_until 15 "! kill -0 $VSCSID_PID" || kill -KILL "$VSCSID_PID" 2>/dev/null
	fi
}
