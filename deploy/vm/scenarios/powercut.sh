# vm-timeout: 900
# vm-test-all: no
# powercut: one boot of the power-cut run (deploy/vm/powercut; make
# vm-powercut). The cartridges and the library's inventory live on ext4 on
# a virtio disk (/dev/vda) that outlives the guest; the host SIGKILLs qemu
# at a random instant while this boot streams, and boots the guest again on
# the same disk. Each boot
# 1. checks what the cut before it left: the drive stands at BOT; every
#    file the host saw synced (the writer's close returned: st wrote its
#    filemark, WRITE FILEMARKS with IMMED=0) reads back bit-exact, record
#    by record, with its filemark; after them, whole files or a record
#    prefix of the one in flight and then end of data, never anything that
#    was not written there; the library's inventory is the one after the
#    last move the host saw acknowledged, or after the one in flight;
# 2. streams from BOT (a label, then raw dd records of mixed sizes and GNU
#    tar archives of mixed blocking factors, each file a fresh pattern of
#    this cycle) while a robot loop moves cartridges between slots, and
#    says on the console what was acknowledged ("vmtest-pc: synced C K",
#    "vmtest-pc: moved N"), then waits for the cut.
# Kernel command line: vmtest.pc=CYCLE:SYNCED:MOVES:HELD:MODE, from the
# host: the cycle that wrote the tape last (0: a new disk), the last file
# of it the host saw synced (-1: none; the label is file 0), the last move
# it saw acknowledged, the cycle whose data the tape held before CYCLE
# wrote (a cut before the label's sync may bring that back:
# docs/cartridges.md), and cut (check, stream, wait) or final (check only).
CMD_TIMEOUT=300
PCM=/mnt/pc
MEDIA=$PCM/media
SRC=$VSCSID # a large file that every boot has, identical: the raw records' source
SRCSZ=$(stat -c %s "$SRC")
MTX=/usr/bin/mtx

pc=$(tr ' ' '\n' </proc/cmdline | sed -n 's/^vmtest\.pc=//p')
[ -n "$pc" ] || abort "no vmtest.pc= on the kernel command line: this scenario is one boot of deploy/vm/powercut"
IFS=: read -r CYCLE SYNCED MOVES HELD MODE <<EOF
$pc
EOF
NEXT=$((CYCLE + 1))
note "checking cycle $CYCLE (host saw file $SYNCED synced, move $MOVES done; before it the tape held cycle $HELD); mode $MODE"

# say WORDS: an acknowledgement for the host, on the console. It is
# printed after the fact it reports, so the host may miss the last one
# (cut before the line left the UART), never see one too many.
say() { echo "vmtest-pc: $*" >/dev/ttyS0; }

# nth I WORD...: word I modulo their number, counting from 0.
nth() {
	_i=$1
	shift
	_i=$((_i % $# + 1))
	eval "echo \${$_i}"
}

# The stream of cycle C: file 0 the label, odd files raw records (size R,
# count N, from offset OFF of $SRC), even files tar archives of a tree of
# the guest with blocking factor B and an mtime of this cycle and file.
SIZES="4096 65536 262144 1048576 10240 524288 32768"
BLOCKING="20 64 256 2048"
TREES="usr/lib/modules usr/sbin usr/bin usr/lib/x86_64-linux-gnu vmtest"
# params C K: sets KIND, BS (the record size) and the kind's parameters.
params() {
	if [ "$2" -eq 0 ]; then
		KIND=label BS=512
	elif [ $(($2 % 2)) = 1 ]; then
		KIND=raw BS=$(nth $(($1 * 3 + $2)) $SIZES)
		N=$((1 + ($1 * 7 + $2 * 13) % 24))
		while [ $((BS * N)) -gt $((SRCSZ / 2)) ]; do N=$((N / 2)); done
		OFF=$((($1 * 7919 + $2 * 104729) % (SRCSZ - BS * N)))
	else
		KIND=tar B=$(nth $(($1 + $2)) $BLOCKING)
		BS=$((B * 512))
		TREE=$(nth $(($1 * 5 + $2)) $TREES)
	fi
}
# gen C K OUT: file K of cycle C, written to OUT (the tape, or a reference).
gen() {
	params "$1" "$2"
	case $KIND in
	label) printf 'VSCSID POWER CUT CYCLE %s\n' "$1" | $DD of="$3" bs=512 conv=sync status=none ;;
	raw) $DD if="$SRC" of="$3" bs="$BS" count="$N" skip="$OFF" iflag=skip_bytes status=none ;;
	tar) $TAR -c -b "$B" --format=gnu --sort=name --mtime="@$(($1 * 1000 + $2))" --owner=0 --group=0 --numeric-owner -f "$3" -C / "$TREE" ;;
	esac
}

# The robot's walk: slots 2-8 hold six cartridges and a hole; move N takes
# the cartridge before the hole into it, so the hole walks 8, 7, ..., 2, 8
# and the cartridges turn: 42 different inventories before one repeats.
hole() { echo $((8 - $1 % 7)); }
# inventory N: the library after N moves: the drive, slots 1-8, the mail slot.
inventory() {
	for _s in 2 3 4 5 6 7; do eval "_s$_s=PC000${_s}L8"; done
	_s8=- _m=0
	while [ $_m -lt "$1" ]; do
		_m=$((_m + 1))
		_from=$(hole $_m) _to=$(hole $((_m - 1)))
		eval "_s$_to=\$_s$_from _s$_from=-"
	done
	echo "D=PC0001L8 1=- 2=$_s2 3=$_s3 4=$_s4 5=$_s5 6=$_s6 7=$_s7 8=$_s8 9=-"
}
# observed: the same from mtx status.
observed() {
	$MTX -f "/dev/$SGL" status | awk '
		/Data Transfer Element 0:Empty/ { d = "-" }
		/Data Transfer Element 0:Full/ { t = $0; sub(/.*VolumeTag *= */, "", t); split(t, a, " "); d = a[1] }
		/Storage Element [0-9]+.*:Full/ { n = $3; sub(/:.*/, "", n); t = $0; sub(/.*VolumeTag=/, "", t); split(t, a, " "); s = s " " n "=" a[1] }
		/Storage Element [0-9]+.*:Empty/ { n = $3; sub(/:.*/, "", n); s = s " " n "=-" }
		END { print "D=" d s }'
}

mkdir -p "$PCM"
# The mount, watched. Once in some hundred boots under TCG the guest
# kernel's mount of the cut disk blocked in D state for good (journal
# replay; "task mount blocked for more than 120 seconds"), before vscsid
# ran: nothing to kill, and nothing of vscsid's to judge. The guest dumps
# its blocked tasks for the record and says so; the host boots it again on
# the same disk (the replay starts over).
(
	mount -t ext4 /dev/vda "$PCM" >"$W/mount.out" 2>&1
	echo $? >"$W/mount.rc"
) &
if ! wait_until 180 "[ -s $W/mount.rc ]"; then
	echo w >/proc/sysrq-trigger
	dmesg | tail -n 120 >/dev/ttyS0
	say "mount-hung"
	abort "mount of /dev/vda blocked for 180 s (guest kernel); the host boots again"
fi
if [ "$(cat "$W/mount.rc")" = 0 ]; then
	pass mount-ext4
else
	fail mount-ext4 "$(tail -n1 "$W/mount.out")"
	abort "no ext4 on /dev/vda: run through deploy/vm/powercut"
fi
# The checks rebuild each file from this guest's own files ($SRC and the
# trees), so every boot of a series must have the same ones: a guest
# rebuilt (or a scenario file edited) between boots would read as
# cartridge data that was never written. The first boot keeps their
# fingerprint (their contents) on the disk; a later boot with another one
# stops there.
{
	md5sum <"$SRC"
	(cd / && find $TREES -type f -exec md5sum {} +) | sort
} >"$W/reference.list"
if [ "$CYCLE" = 0 ]; then
	cp "$W/reference.list" "$PCM/reference.list"
	sync # before the cut can come
elif ! cmp -s "$W/reference.list" "$PCM/reference.list"; then
	note "the reference files that changed: $(diff "$PCM/reference.list" "$W/reference.list" | grep '^[-+][^-+]' | head -n 4 | tr '\n' ' ')"
	abort "this boot's guest is not the series' first (rebuilt, or its scenario files edited during the series): the checks' reference data differ; run the series again"
fi
mkdir -p "$MEDIA" /etc/vscsid
cat >/etc/vscsid/powercut.yaml <<EOC
cmd_time_out: 30
devices:
  - name: pct0
    type: vtape
    config: "personality=lto8;media=$MEDIA"
  - name: pcl0
    type: vlibrary
    config: "media=$MEDIA;slots=8;mailslots=1;drives=pct0;cartridges=7;first=PC0001L8;capacity=2G"
EOC
vscsid_start pc --config /etc/vscsid/powercut.yaml --dbus=off
[ -n "$VSCSID_PID" ] || abort "vscsid did not start"
require wait_for pc-attached 60 "dev_node tape pct0 && dev_node sg pct0 && dev_node changer pcl0 && dev_node sg pcl0"
T=/dev/n$(dev_tape pct0) SGT=$(dev_sg pct0) SGL=$(dev_sg pcl0)

if [ "$CYCLE" -eq 0 ]; then
	check_sh pc-load "$MTX -f /dev/$SGL load 1 0"
	moves_at=0
else
	# The inventory: after the last move seen, or after the one in flight.
	got=$(observed)
	moves_at=
	for n in "$MOVES" $((MOVES + 1)); do
		[ "$got" = "$(inventory "$n")" ] && { moves_at=$n; break; }
	done
	if [ -n "$moves_at" ]; then
		pass "cut$CYCLE-inventory (after move $moves_at; host saw $MOVES)"
	else
		fail "cut$CYCLE-inventory" "mtx status: $got; after move $MOVES: $(inventory "$MOVES")"
		moves_at=$MOVES
	fi
fi
say "moves-at $moves_at"

# The tape, as the cut left it: at BOT, then the files.
check pc-ready tape_ready "$SGT"
check pc-at-bot tape_at_bot "$SGT"
# is_eod: the drive stands at end of data (a READ of it gets BLANK CHECK).
is_eod() { [ "$(tape_read_rec "$SGT" 1048576 "$W/rec")" = eod ]; }
# verify: reads the files from BOT; sets HOLDS (the cycle whose stream the
# tape holds, 0: blank), COMPLETE (its files with their filemarks), RECS
# (records read back in files up to SYNCED); prints why and returns 1 at
# the first thing that was not written there.
verify() {
	HOLDS= COMPLETE=0 RECS=0
	_k=0
	while :; do
		if [ $_k = 0 ]; then _cands="$CYCLE $HELD"; else _cands=$HOLDS; fi
		params "${_cands%% *}" $_k
		$DD if="$T" of="$W/got" bs="$BS" 2>"$W/rd.err"
		_rc=$?
		_sz=$(stat -c %s "$W/got")
		_in=$(sed -n 's/ records in$//p' "$W/rd.err")
		_match=
		for _c in $_cands; do
			[ "$_c" -gt 0 ] || continue
			gen "$_c" $_k "$W/ref"
			_rsz=$(stat -c %s "$W/ref")
			if [ "$_sz" -le "$_rsz" ] && cmp -s -n "$_sz" "$W/got" "$W/ref"; then
				_match=$_c
				break
			fi
		done
		if [ $_k = 0 ] && [ "$_sz" = 0 ]; then
			# A blank tape: only before any label was synced.
			is_eod || { echo "no label at BOT and not end of data"; return 1; }
			[ "$SYNCED" -lt 0 ] && [ "$HELD" = 0 ] || { echo "blank, but the label of cycle $CYCLE was synced"; return 1; }
			HOLDS=0
			return 0
		fi
		[ -n "$_match" ] || { echo "file $_k: $_sz bytes ($_in records) that are not what cycle ${_cands%% *} wrote there"; return 1; }
		HOLDS=$_match
		if [ $_k = 0 ] && [ "$HOLDS" != "$CYCLE" ] && [ "$SYNCED" -ge 0 ]; then
			echo "the label of cycle $HOLDS, but that of $CYCLE was synced"
			return 1
		fi
		if [ $_rc = 0 ] && [ "$_sz" = "$_rsz" ]; then
			case $_in in *+0) ;; *) echo "file $_k: records of another size ($_in in blocks of $BS)"; return 1 ;; esac
			COMPLETE=$((COMPLETE + 1))
			[ "$HOLDS" != "$CYCLE" ] || [ $_k -gt "$SYNCED" ] || RECS=$((RECS + ${_in%+*}))
			_k=$((_k + 1))
			continue
		fi
		# Short of the whole file: the one in flight at the cut. A
		# filemark after it (dd's end of file with data) was never
		# written; what follows must be end of data (st returns 0 for
		# the first BLANK CHECK after a filemark, EIO otherwise).
		if [ $_rc = 0 ] && [ "$_sz" != 0 ]; then
			echo "file $_k: a filemark after $_in records, short of the $((_rsz / BS)) written"
			return 1
		fi
		is_eod || { echo "file $_k: $_in records, then not end of data: $(cat "$W/rd.err" | tr '\n' ' ')"; return 1; }
		[ "$HOLDS" != "$CYCLE" ] || [ $_k -gt "$SYNCED" ] || { echo "file $_k was synced, but only $_in records of it are there"; return 1; }
		return 0
	done
}
if [ "$CYCLE" -gt 0 ]; then
	if out=$(
		verify
		rc=$?
		echo "HOLDS=$HOLDS COMPLETE=$COMPLETE RECS=$RECS"
		exit $rc
	); then
		eval "$(echo "$out" | tail -n1)"
		pass "cut$CYCLE-tape (cycle $HOLDS: $COMPLETE whole files; $RECS records of the synced files bit-exact)"
	else
		eval "$(echo "$out" | tail -n1)"
		fail "cut$CYCLE-tape" "$(echo "$out" | sed '$d' | tr '\n' ' ')"
	fi
	say "holds $HOLDS complete $COMPLETE records $RECS"
else
	HOLDS=0
	say "holds 0 complete 0 records 0"
fi

if [ "$MODE" = final ]; then
	vscsid_stop pc-stop
	check pc-umount umount "$PCM"
else
	# Stream until the cut: the writer and the robot.
	check pc-rewind $MT -f "$T" rewind
	(
		k=0
		while :; do
			gen $NEXT $k "$T" 2>>"$W/write.err" || { say "write-error $NEXT $k: $(tail -n1 "$W/write.err")"; exit 1; }
			say "synced $NEXT $k"
			k=$((k + 1))
		done
	) &
	(
		n=$moves_at
		while :; do
			n=$((n + 1))
			$MTX -f "/dev/$SGL" transfer "$(hole $n)" "$(hole $((n - 1)))" >/dev/null 2>>"$W/move.err" ||
				{ say "move-error $n: $(tail -n1 "$W/move.err")"; exit 1; }
			say "moved $n"
			sleep 0.3
		done
	) &
	say "streaming cycle $NEXT"
	sleep 800
	fail pc-not-cut "the host did not cut the power"
fi
