# shellcheck shell=bash
# The full guest's own helpers (bash), sourced by run-scenario after the
# check library (/usr/local/lib/vmtest/lib.sh) and by the library's child shells,
# so that checks can run them as commands: check NAME disk_roundtrip DEV.

# TAR_TREE: a static tree of the guest for tar streams to archive and
# compare: rtslib's package (rtslib_fb in bookworm, rtslib in sid).
TAR_TREE=usr/lib/python3/dist-packages/rtslib_fb
[ -d "/$TAR_TREE" ] || TAR_TREE=usr/lib/python3/dist-packages/rtslib

tc() { # targetcli with its output on the console too
	local out rc
	# rtslib-fb warns about its dbroot on every run once a device exists.
	out=$(targetcli "$@" 2>&1; echo "rc=$?")
	rc=${out##*rc=}
	out=$(printf '%s\n' "${out%rc=*}" | grep -v -e 'Cannot set dbroot')
	printf '$ targetcli %s (rc %d)\n%s\n' "$*" $rc "$out" | sed 's/^/  | /' >&2
	printf '%s' "$out"
	return $rc
}
# tcb LINE...: targetcli commands in one targetcli process, each argument
# one command line (what tc's arguments make, joined by spaces): the
# interactive shell reads them from stdin. A targetcli start walks configfs
# and takes about 2.5 s under TCG, so setup and teardown that are not
# themselves under test go through one process. Its own TARGETCLI_HOME
# keeps the operator's preferences apart; the batch turns off
# auto_save_on_exit (argument mode never saves, the interactive shell
# would save the whole configuration at its end) and color_mode, so that a
# failing line shows as "Error: ...". The shell logs a failing line and
# goes on; tcb then fails.
tcb() {
	local out rc=0 home=/run/vmtest-targetcli
	mkdir -p $home
	out=$({ echo 'set global auto_save_on_exit=false color_mode=false'; printf '%s\n' "$@"; } |
		TARGETCLI_HOME=$home targetcli 2>&1 | grep -v -e 'Cannot set dbroot')
	grep -q 'Error: ' <<<"$out" && rc=1
	{
		printf '$ targetcli <<batch (rc %d)\n' $rc
		printf '%s\n' "$@" | sed 's/^/  | > /'
		printf '%s\n' "$out" | sed 's/^/  | /'
	} >&2
	return $rc
}
# scrape: vscsid's /metrics text (the guest has no wget or curl).
scrape() { guestcheck http-get http://127.0.0.1:9544/metrics; }
# mval FILE SELECTOR: the sum of the samples a PromQL selector (= matchers
# only) matches in the scrape FILE; the minimal guest's parser (guestcheck).
mval() { guestcheck prom-value "$1" "$2"; }
# metric [-h HOST] SELECTOR...: the sums the selectors match in a scrape of
# vscsid now (of HOST's over the network), on one line.
metric() {
	local url=http://127.0.0.1:9544/metrics
	[ "$1" = -h ] && url=http://$2:9544/metrics && shift 2
	guestcheck http-get "$url" | guestcheck prom-value - "$@"
}
sd_list() { ls /sys/block 2>/dev/null | grep '^sd' | sort; }
st_list() { ls /sys/class/scsi_tape 2>/dev/null | grep '^nst[0-9]*$' | sort; }
# wait_new LISTFN BEFORE: print the one entry that LISTFN has and BEFORE
# lacks, waiting up to 30 s for it.
wait_new() {
	local fn=$1 before=$2 i new
	for i in $(seq 60); do
		new=$(comm -13 <(printf '%s\n' "$before" | sed '/^$/d') <($fn))
		if [ -n "$new" ]; then
			udevadm settle -t 10 >/dev/null 2>&1
			printf '%s\n' "$new" | head -n1
			return 0
		fi
		sleep 0.5
	done
	return 1
}
# disk_roundtrip DEV BS: write 4 MiB of random data at offset 1 MiB, drop
# the page cache, read it back, compare.
disk_roundtrip() {
	local dev=$1
	head -c 4194304 /dev/urandom >/tmp/pat || return 1
	dd if=/tmp/pat of="$dev" bs=1M seek=1 oflag=direct conv=fsync status=none || return 1
	dd if="$dev" of=/tmp/back bs=1M skip=1 count=4 iflag=direct status=none || return 1
	cmp /tmp/pat /tmp/back
}
# tape_roundtrip DEV: two files of 64 KiB blocks, rewind, read the first back.
tape_roundtrip() {
	local dev=$1
	head -c 655360 /dev/urandom >/tmp/tpat || return 1
	mt -f "$dev" rewind || return 1
	dd if=/tmp/tpat of="$dev" bs=64k status=none || return 1
	mt -f "$dev" weof 1 || return 1
	mt -f "$dev" rewind || return 1
	dd if="$dev" of=/tmp/tback bs=64k status=none || return 1
	cmp /tmp/tpat /tmp/tback
}
# serial_out NAME CHECK: the directory /var/tmp/NAME as a tar out through
# the third serial port, raw (deploy/vm/full/run keeps it as perf.tar in
# the run directory and unpacks it there); CHECK passes when it went out.
serial_out() {
	# (GNU stty reports failure when a serial port does not take every
	# setting; raw and -echo are what matter, and they take.)
	stty -F /dev/ttyS2 raw -echo 2>/dev/null
	stty -F /dev/ttyS2 -a 2>&1 | grep -q -- '-opost' || note "ttyS2 is not raw: $(stty -F /dev/ttyS2 -a 2>&1 | tr '\n' ' ')"
	# -f names the port: GNU tar refuses to write an archive to a
	# terminal on its standard output.
	if tar -C /var/tmp -cf /dev/ttyS2 "$1"; then
		pass "$2" "$(ls "/var/tmp/$1" | wc -l) files"
	else
		fail "$2" "could not write /var/tmp/$1 to ttyS2"
	fi
}
# dbus_call OBJECT METHOD SIGNATURE ARGS...: a call to vscsid's D-Bus
# service on the system bus (OBJECT is vdisk or vtape), its reply or error
# on standard output; as root, or as DBUS_CALL_UID (uid and gid, no
# supplementary groups) when that is set.
dbus_call() {
	local as=()
	[ -n "${DBUS_CALL_UID:-}" ] && as=(setpriv --reuid="$DBUS_CALL_UID" --regid="$DBUS_CALL_UID" --clear-groups)
	"${as[@]}" busctl --system call org.kernel.TCMUService1 "/org/kernel/TCMUService1/$1" \
		org.kernel.TCMUService1 "${@:2}" 2>&1
}
# repeat STOP MIN COUNT ERR CMD...: in the background ($! is its pid), runs
# CMD again and again until the file STOP exists and CMD has run at least
# MIN times, then writes the number of runs to the file COUNT. CMD's
# standard error goes to the file ERR; a run that fails appends "run N of
# CMD failed" there and ends the loop. The streams that go on through
# restarts, reloads and upgrades: what they check is that ERR stays empty.
repeat() {
	local stop=$1 min=$2 count=$3 err=$4
	shift 4
	(
		n=0
		while [ ! -e "$stop" ] || [ "$n" -lt "$min" ]; do
			"$@" 2>>"$err" || { echo "run $n of $* failed" >>"$err"; break; }
			n=$((n + 1))
		done
		echo "$n" >"$count"
	) &
}
# restarts_under N STOP PID...: N restarts of vscsid a second apart, while
# the streams PID... (repeat's) run, and two seconds after the last; then
# the file STOP ends them and they are waited for. restarts_failed is the
# number of restarts that failed.
restarts_under() {
	local n=$1 stop=$2 i
	shift 2
	restarts_failed=0
	for i in $(seq "$n"); do
		sleep 1
		systemctl restart vscsid || restarts_failed=$((restarts_failed + 1))
	done
	sleep 2
	touch "$stop"
	wait "$@"
}
# paced CMD...: CMD, then a tenth of a second's pause. A stream that issues
# a command every fraction of a second still has commands in the ring
# through a restart, without starving the guest's one TCG CPU.
paced() { "$@" && sleep 0.1; }
# archives_equal TAPE N: from the start of TAPE, N tar archives of 256 KiB
# records, each one file, each equal to the files it was made of (tar -d),
# then end of data.
archives_equal() {
	local tape=$1 n=$2 i
	mt -f "$tape" rewind || return 1
	for i in $(seq "$n"); do
		dd if="$tape" of=/tmp/ae.tar bs=256k status=none && tar -df /tmp/ae.tar -C / || { echo "archive $i of $n on $tape differs"; return 1; }
	done
	if [ "$(dd if="$tape" bs=256k count=1 status=none 2>/dev/null | wc -c)" != 0 ]; then echo "data after archive $n on $tape"; return 1; fi
	echo "$n archives equal to the files on $tape"
}
