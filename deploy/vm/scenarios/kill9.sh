# vm-timeout: 900
# kill9: vscsid killed with SIGKILL at random instants while dd streams
# files to one tape drive, GNU tar streams archives to another and dd
# writes to a disk, each time restarted at once (as systemd's
# Restart=on-failure would). KILL9_KILLS rounds (10; the kill9-100
# scenario, make vm-kill9, sets 100). Each round writes fresh random data
# from BOT, so nothing of an earlier round can pass for this one's.
# After each restart:
# - the disk's dd has seen no error: the restarted daemon's ring reset
#   completes the commands in flight BUSY and sd retries them;
# - each drive reports 29/00 once (the command that meets it first, the
#   writer's retried WRITE or our TEST UNIT READY) and stands at BOT
#   (READ POSITION: BOP, block 0), as docs/cartridges.md says;
# - every file whose writer finished before the kill (its close wrote the
#   filemark: WRITE FILEMARKS with IMMED=0, the sync point) reads back
#   bit-exact, record by record, each followed by its filemark;
# - what follows is the file being written at the kill: a record-aligned
#   prefix of it, then a filemark or end of data, and never anything else.
# The writers are stopped (SIGSTOP) before the kill and checked through
# sg while still stopped: when they exit, st's close writes a filemark
# where the tape stands, which on kernels that do not learn of the reset
# (before st's position_lost_in_reset) is BOT, over the data just checked.
KILLS=${KILL9_KILLS:-10}
K=$W/k9
mkdir -p "$K/media" /etc/vscsid
cat >/etc/vscsid/k9.yaml <<EOC
cmd_time_out: 10
devices:
  - name: kd0
    type: vdisk
    config: "size=1G;mode=fake_rw"
  - name: kt0
    type: vtape
    config: "personality=lto8;media=$K/media;barcode=KILL01L8"
  - name: kt1
    type: vtape
    config: "personality=lto8;media=$K/media;barcode=KILL02L8"
EOC
REC=262144 FILES=6 RECS=4 # each file 4 records of 256 KiB

# tree PID: PID and its descendants (a writer's subshell and its dd or tar).
tree() {
	echo "$1"
	for _c in $(awk -v p="$1" '$4 == p { print $1 }' /proc/[0-9]*/stat 2>/dev/null); do tree "$_c"; done
}
# start_k9 NAME: vscsid with the config, its three devices attached.
start_k9() {
	vscsid_start "$1" --config /etc/vscsid/k9.yaml >/dev/null || return 1
	wait_until 60 "dev_node block kd0 && dev_node tape kt0 && dev_node tape kt1 && dev_node sg kt0 && dev_node sg kt1"
}
# verify SG REF SYNCED: the drive holds the SYNCED files of REF (REF1,
# REF2, ... reference images of what was written, REC-sized records)
# followed by a filemark each, then at most a record prefix of the next
# and a filemark or end of data. Prints a line, 0 when all holds.
verify() {
	_sg=$1 _ref=$2 _synced=$3 _n=0
	sg_raw "/dev/$_sg" 01 00 00 00 00 00 >/dev/null 2>&1 # REWIND
	while [ $_n -lt $FILES ]; do
		_n=$((_n + 1))
		_r=0
		while :; do
			_s=$(tape_read_rec "$_sg" $REC "$K/rec")
			if [ "$_s" != ok ]; then break; fi
			$DD if="$_ref$_n" bs=$REC skip=$_r count=1 status=none 2>/dev/null | cmp -s - "$K/rec" ||
				{ echo "file $_n record $_r differs from what was written"; return 1; }
			_r=$((_r + 1))
		done
		if [ $_n -le "$_synced" ]; then
			[ "$_s" = filemark ] && [ $_r = $RECS ] ||
				{ echo "synced file $_n: $_r of $RECS records, then $_s"; return 1; }
			continue
		fi
		# The file in flight at the kill: a prefix, then a mark or EOD;
		# after it nothing (the writer stopped there).
		case $_s in filemark | eod) ;; *) echo "file $_n (in flight): $_s after $_r records"; return 1 ;; esac
		[ $_r -le $RECS ] || { echo "file $_n (in flight): $_r records"; return 1; }
		if [ "$_s" = filemark ]; then
			_s=$(tape_read_rec "$_sg" $REC "$K/rec")
			[ "$_s" = eod ] || { echo "after file $_n (in flight): $_s, want end of data"; return 1; }
		fi
		echo "$_synced synced, in flight $_r records"
		return 0
	done
	echo "$_synced synced, all written"
}

check_sh k9-config "$VSCSID --config /etc/vscsid/k9.yaml --check-config"
start_k9 first || abort "vscsid did not start with its three devices"
sd=$(dev_block kd0) t0=$(dev_tape kt0) t1=$(dev_tape kt1) g0=$(dev_sg kt0) g1=$(dev_sg kt1)
note "disk /dev/$sd, drives /dev/n$t0 (/dev/$g0, dd) and /dev/n$t1 (/dev/$g1, tar)"
bad_disk=0 bad_pos=0 bad_data=0 bad_ua=0 synced_total=0 inflight=0 i=0
while [ "$i" -lt "$KILLS" ]; do
	i=$((i + 1))
	# This round's data: FILES random files of RECS records.
	for n in $(seq $FILES); do head -c $((REC * RECS)) /dev/urandom >"$K/f$n"; done
	$MT -f /dev/n$t0 rewind 2>"$K/rw0" || { tape_ready "$g0"; $MT -f /dev/n$t0 rewind 2>>"$K/rw0" || note "kill $i: rewind 0: $(cat "$K/rw0")"; }
	$MT -f /dev/n$t1 rewind 2>"$K/rw1" || { tape_ready "$g1"; $MT -f /dev/n$t1 rewind 2>>"$K/rw1" || note "kill $i: rewind 1: $(cat "$K/rw1")"; }
	: >"$K/synced0"
	: >"$K/synced1"
	: >"$K/w0.err"
	: >"$K/w1.err"
	(for n in $(seq $FILES); do $DD if="$K/f$n" of=/dev/n$t0 bs=$REC status=none 2>>"$K/w0.err" || exit; echo "$n" >>"$K/synced0"; done) &
	w0=$!
	(for n in $(seq $FILES); do $TAR -b 512 -cf /dev/n$t1 -C "$K" "f$n" 2>>"$K/w1.err" || exit; echo "$n" >>"$K/synced1"; done) &
	w1=$!
	($DD if=/dev/zero of=/dev/$sd bs=256k count=400 oflag=direct status=none 2>"$K/disk.err"; echo $? >"$K/disk.rc") &
	wd=$!
	# 0.1 to 2.0 s: the writers take about 2-4 s for their 6 MiB each.
	sleep "$(($(od -An -N1 -tu1 /dev/urandom) % 2)).$(($(od -An -N1 -tu1 /dev/urandom) % 9 + 1))"
	# The writers stop where they are (one may be inside a command).
	# The writers' loops first, so that they start no new dd or tar, then
	# what they run.
	kill -STOP $w0 $w1 2>/dev/null
	sleep 0.1
	stopped=$(tree $w0; tree $w1)
	kill -STOP $stopped 2>/dev/null
	pos0=$(sg_raw -r 20 "/dev/$g0" 34 00 00 00 00 00 00 00 00 00 2>&1 | sed -n 's/^ *00  *//p' | head -n1)
	kill -KILL "$VSCSID_PID"
	wait "$VSCSID_PID" 2>/dev/null
	VSCSID_PID=
	s0=$(wc -l <"$K/synced0") s1=$(wc -l <"$K/synced1")
	start_k9 "kill$i" || abort "kill $i: vscsid did not come back"
	# The references of the tar drive: what tar wrote for each file, in
	# RECS+1 records (its header and end blocks padded to one more).
	for n in $(seq $FILES); do $TAR -b 512 -cf "$K/t$n" -C "$K" "f$n"; done
	# A writer in a command when the daemon died is back in user space
	# once the new daemon has answered it (stopped there, SIGSTOP).
	sleep 1
	for g in $g0 $g1; do
		tape_ready "$g" || { bad_pos=$((bad_pos + 1)); note "kill $i: /dev/$g never ready"; }
		if ! out=$(tape_at_bot "$g"); then
			bad_pos=$((bad_pos + 1))
			note "kill $i: /dev/$g not at BOT after the crash: $out"
		fi
	done
	if out=$(verify "$g0" "$K/f" "$s0"); then :; else
		bad_data=$((bad_data + 1))
		note "kill $i: dd drive before the kill: $pos0; writer: $(cat "$K/w0.err")"
	fi
	note "kill $i: dd drive: $out"
	RECS=5
	if out=$(verify "$g1" "$K/t" "$s1"); then :; else
		bad_data=$((bad_data + 1))
		note "kill $i: tar drive writer: $(cat "$K/w1.err")"
	fi
	RECS=4
	note "kill $i: tar drive: $out"
	synced_total=$((synced_total + s0 + s1))
	# Each drive reported the reset (29/00) once to the new daemon's first
	# command on it.
	for dev in kt0 kt1; do
		n=$(wget -q -O - "http://$METRICS_ADDR/metrics" | awk -v d="$dev" '$1 == "vscsi_scsi_sense_codes_total{asc=\"power_on_reset_or_bus_device_reset\",device=\"" d "\"}" { print $2 }')
		[ "${n:-0}" = 1 ] || { bad_ua=$((bad_ua + 1)); note "kill $i: $dev reported 29/00 ${n:-0} times"; }
	done
	kill -KILL $stopped 2>/dev/null
	kill -CONT $stopped 2>/dev/null
	wait $w0 $w1 2>/dev/null
	wait $wd
	if [ "$(cat "$K/disk.rc")" != 0 ]; then
		bad_disk=$((bad_disk + 1))
		note "kill $i: disk dd: exit $(cat "$K/disk.rc"): $(cat "$K/disk.err")"
	fi
done
note "$KILLS kills: $synced_total synced files checked"
expect_eq "disk-dd-errors-after-$KILLS-kills" 0 "$bad_disk"
expect_eq "drives-at-bot-after-$KILLS-kills" 0 "$bad_pos"
expect_eq "reset-reported-once-after-$KILLS-kills" 0 "$bad_ua"
expect_eq "synced-records-read-back-after-$KILLS-kills" 0 "$bad_data"
check_sh some-files-were-synced "[ $synced_total -gt 0 ]"
vscsid_stop k9-sigterm
wait_for k9-no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
