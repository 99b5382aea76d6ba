# vm-timeout: 480
# tape: vscsid's vtape through TCMU + tcm_loop + st, driven by mt-st, dd and
# GNU tar the way an operator would: identity, variable and fixed records,
# short and long reads (ILI), filemarks and positioning, early warning and
# ENOSPC, empty drive, write protect, DAT72's fixed default, the T10000C
# and SDLT600 identities and densities, st's
# statistics, and a file-backed cartridge that survives a daemon restart.
#
# st blocks in open() while a drive is NOT READY, so every command runs
# under timeout and cmd_time_out is small.

CMD_TIMEOUT=60
MEDIA=/tmp/vmtest/media
mkdir -p /etc/vscsid "$MEDIA"
cat >/etc/vscsid/tape.yaml <<EOF
cmd_time_out: 5
devices:
  - name: tape0
    type: vtape
    config: "personality=lto6;memory=1;capacity=512M;barcode=LTO601L6"
  - name: small
    type: vtape
    config: "personality=lto6;memory=1;capacity=8M;early_warning=256K;barcode=SMALL1L6"
  - name: empty
    type: vtape
    config: "personality=lto6;memory=1"
  - name: dat
    type: vtape
    config: "personality=dat72;memory=1;capacity=64M;barcode=DAT001"
  - name: wprot
    type: vtape
    config: "personality=lto6;memory=1;wp=1;barcode=WPROT1L6"
  - name: persist
    type: vtape
    config: "personality=lto6;media=$MEDIA;barcode=PERS01L6"
  - name: t10k
    type: vtape
    config: "personality=t10000c;memory=1;capacity=64M;barcode=T10001"
  - name: sdlt
    type: vtape
    config: "personality=sdlt600;memory=1;capacity=64M;barcode=SDL001"
EOF
artefact /etc/vscsid/tape.yaml
TAPES="tape0 small empty dat wprot persist t10k sdlt"

dmesg_mark daemon
vscsid_start tape --config /etc/vscsid/tape.yaml
[ -n "$VSCSID_PID" ] || abort "vscsid did not start"
for n in $TAPES; do
	require wait_for "$n-attached" 30 "dev_node tape $n && [ -e /dev/n\$(dev_tape $n) ] && dev_node sg $n"
done
# The daemon creates a missing cartridge image in the media directory.
check_sh persist-image-created "ls $MEDIA | grep >/dev/null PERS01L6"

# The empty drive. O_NONBLOCK opens without a cartridge; the read then
# fails with ENOMEDIUM.
TE=/dev/n$(dev_tape empty)
# O_NONBLOCK opens without a cartridge; the read then fails with ENOMEDIUM.
expect_errno empty-nonblock-read-enomedium ENOMEDIUM "$DD" if="$TE" of=/dev/null bs=64k count=1 iflag=nonblock
expect_output empty-status-dr-open 'DR_OPEN' "$MT" -f "$TE" status
# A blocking open: st retries TEST UNIT READY once a second for
# ST_BLOCK_SECONDS (120) while the drive is NOT READY, then fails with
# ENOMEDIUM. It runs in the background while the rest goes on (st allows one
# open at a time: the empty drive is busy until then) and is collected
# before the daemon stops.
(
	s=$(date +%s)
	timeout 240 "$DD" if="$TE" of=/dev/null bs=64k count=1 >"$W/blockopen.out" 2>&1 </dev/null
	echo "$? $(($(date +%s) - s))" >"$W/blockopen.rc"
) &

# ----------------------------------------------------------------- identity
# tape_id NAME VENDOR PRODUCT
tape_id() {
	_st=$(dev_tape "$1")
	_h=$(dev_hctl "$1")
	note "$1 is /dev/$_st, /dev/n$_st ($_h)"
	check_sh "$1-dmesg-sequential-access" "dmesg_since daemon | grep -E >/dev/null 'scsi $_h: Sequential-Access +$2 +$3 '"
	check_sh "$1-dmesg-attached-st" "dmesg_since daemon | grep >/dev/null 'st $_h: Attached scsi tape $_st\$'"
	check "$1-sysfs-scsi_tape" test -d "/sys/class/scsi_tape/$_st"
	expect_eq "$1-sysfs-type-1" 1 "$(cat /sys/class/scsi_device/$_h/device/type)"
	expect_eq "$1-sysfs-vendor" "$2" "$(sed 's/ *$//' /sys/class/scsi_device/$_h/device/vendor)"
	expect_eq "$1-sysfs-model" "$3" "$(sed 's/ *$//' /sys/class/scsi_device/$_h/device/model)"
	expect_output "$1-sg_inq-pdt-1-rmb-1" 'PDT=1 +RMB=1 ' sg_inq "/dev/$(dev_sg "$1")"
	expect_match "$1-sg_inq-pdt-tape" 'Peripheral device type: tape' "$OUT"
}
tape_id tape0 IBM ULT3580-TD6
tape_id dat HP DAT72

T=/dev/n$(dev_tape tape0)
R=/dev/$(dev_tape tape0)
S=$(dev_tape tape0)

expect_output tape0-mt-status-bot 'BOT' "$MT" -f "$T" status
expect_match tape0-mt-status-online 'ONLINE' "$OUT"
expect_match tape0-mt-status-variable 'Tape block size 0 bytes' "$OUT"
expect_match tape0-mt-status-density-lto6 'Density code 0x5a' "$OUT"

# ------------------------------------------------ variable records, dd
check rand-1000 $DD if=/dev/urandom of="$W/r1000" bs=1000 count=1
check rand-2000 $DD if=/dev/urandom of="$W/r2000" bs=2000 count=3
check rand-32k $DD if=/dev/urandom of="$W/r32k" bs=32k count=10
check rand-1M $DD if=/dev/urandom of="$W/r1m" bs=1M count=2
check var-rewind "$MT" -f "$T" rewind
# One dd per file: st writes a filemark when the node is closed after writing.
check var-write-1x1000 $DD if="$W/r1000" of="$T" bs=1000
check var-write-3x2000 $DD if="$W/r2000" of="$T" bs=2000
check var-write-10x32k $DD if="$W/r32k" of="$T" bs=32k
check var-write-2x1M $DD if="$W/r1m" of="$T" bs=1M
expect_output var-tell-after-write '^At block 20\.' "$MT" -f "$T" tell
check var-rewind-2 "$MT" -f "$T" rewind
# A larger buffer returns each shorter record whole: dd counts partial reads.
expect_output var-read-1000-with-64k '^0\+1 records in' $DD if="$T" of="$W/o1" bs=64k
expect_eq var-read-1000-size 1000 "$(wc -c <"$W/o1")"
expect_eq var-read-1000-md5 "$(md5 "$W/r1000")" "$(md5 "$W/o1")"
expect_output var-read-2000-with-64k '^0\+3 records in' $DD if="$T" of="$W/o2" bs=64k
expect_eq var-read-2000-md5 "$(md5 "$W/r2000")" "$(md5 "$W/o2")"
expect_output var-read-32k-with-64k '^0\+10 records in' $DD if="$T" of="$W/o3" bs=64k
expect_eq var-read-32k-md5 "$(md5 "$W/r32k")" "$(md5 "$W/o3")"
expect_output var-read-1M-with-1M '^2\+0 records in' $DD if="$T" of="$W/o4" bs=1M
expect_eq var-read-1M-md5 "$(md5 "$W/r1m")" "$(md5 "$W/o4")"
# At EOD: a read returns nothing.
expect_output var-read-at-eod '^0\+0 records in' $DD if="$T" of=/dev/null bs=64k count=1
# A smaller buffer than the record: st refuses with ENOMEM.
check var-fsf-2 sh -c "$MT -f $T rewind && $MT -f $T fsf 2"
expect_errno var-read-32k-with-16k-enomem ENOMEM $DD if="$T" of=/dev/null bs=16k count=1

# /dev/stN rewinds on close.
check rewind-node-rewind "$MT" -f "$T" rewind
check rewind-node-write $DD if="$W/r1000" of="$R" bs=1000
expect_output rewind-node-at-bot 'BOT' "$MT" -f "$T" status
expect_match rewind-node-file-0 'File number=0, block number=0' "$OUT"

# --------------------------------------------------------------- st stats
ststat() { cat "/sys/class/scsi_tape/$S/stats/$1"; }
check stats-rewind "$MT" -f "$T" rewind
w0=$(ststat write_cnt) wb0=$(ststat write_byte_cnt)
check stats-write-10x32k $DD if="$W/r32k" of="$T" bs=32k
expect_eq stats-write_cnt-delta 10 "$(($(ststat write_cnt) - w0))"
expect_eq stats-write_byte_cnt-delta 327680 "$(($(ststat write_byte_cnt) - wb0))"
check stats-rewind-2 "$MT" -f "$T" rewind
r0=$(ststat read_cnt) rb0=$(ststat read_byte_cnt)
check stats-read-10x32k $DD if="$T" of=/dev/null bs=64k
# The residual of each short READ reached st (TCMU READ_LEN): bytes count
# what the records held, not what was asked for. The READ that meets the
# filemark is counted too.
# The READ that meets the filemark adds its whole request (64 KiB): it
# completes with CHECK CONDITION and no data, and TCMU cannot report a
# residual for that (read_len 0 means "not set" in tcmu_handle_completion),
# so st sees no residual. A real HBA would report 64 KiB of residual.
expect_eq stats-read_byte_cnt-delta $((327680 + 65536)) "$(($(ststat read_byte_cnt) - rb0))"
expect_eq stats-read_cnt-delta 11 "$(($(ststat read_cnt) - r0))"

# ---------------------------------------------------------------- GNU tar
for d in a b c; do
	mkdir -p "$W/src-$d"
	for i in 1 2 3; do
		$DD if=/dev/urandom of="$W/src-$d/f$i" bs=$((i * 7777)) count=1 2>/dev/null
	done
	echo "archive $d" >"$W/src-$d/README"
done
check tar-rewind "$MT" -f "$T" rewind
check tar-write-first "$TAR" -b 20 -cf "$T" -C "$W/src-a" .
check tar-write-second "$TAR" -b 20 -cf "$T" -C "$W/src-b" .
check tar-fsf-1 sh -c "$MT -f $T rewind && $MT -f $T fsf 1"
expect_output tar-list-second '^\./f3$' "$TAR" -b 20 -tf "$T"
check tar-fsf-1-again sh -c "$MT -f $T rewind && $MT -f $T fsf 1"
mkdir -p "$W/x-b"
check tar-extract-second "$TAR" -b 20 -xf "$T" -C "$W/x-b"
check tar-second-identical diff -r "$W/src-b" "$W/x-b"
check tar-eod "$MT" -f "$T" eod
# st spaces filemarks until BLANK CHECK: file 2, block unknown (-1), EOD.
expect_output tar-eod-file-number-2 'File number=2, block number=-1,' "$MT" -f "$T" status
expect_match tar-eod-status-eod ' EOD ' "$OUT"
check tar-append-third "$TAR" -b 20 -cf "$T" -C "$W/src-c" .
check tar-fsf-2 sh -c "$MT -f $T rewind && $MT -f $T fsf 2"
mkdir -p "$W/x-c"
check tar-extract-third "$TAR" -b 20 -xf "$T" -C "$W/x-c"
check tar-third-identical diff -r "$W/src-c" "$W/x-c"
check tar-rewind-first "$MT" -f "$T" rewind
mkdir -p "$W/x-a"
check tar-extract-first "$TAR" -b 20 -xf "$T" -C "$W/x-a"
check tar-first-identical diff -r "$W/src-a" "$W/x-a"

# ------------------------------------------------------------ tell / seek
check seek-src $DD if=/dev/urandom of="$W/seek" bs=4k count=20
check seek-rewind "$MT" -f "$T" rewind
check seek-write-20x4k $DD if="$W/seek" of="$T" bs=4k
# 20 records and the filemark written at close.
expect_output seek-tell-21 '^At block 21\.' "$MT" -f "$T" tell
check seek-7 "$MT" -f "$T" seek 7
expect_output seek-tell-7 '^At block 7\.' "$MT" -f "$T" tell
check seek-read-record-7 $DD if="$T" of="$W/rec7" bs=4k count=1
$DD if="$W/seek" of="$W/want7" bs=4k skip=7 count=1 2>/dev/null
expect_eq seek-record-7-md5 "$(md5 "$W/want7")" "$(md5 "$W/rec7")"
expect_output seek-tell-8 '^At block 8\.' "$MT" -f "$T" tell

# ------------------------------------------------------ fixed-block mode
check fixed-setblk-1024 "$MT" -f "$T" setblk 1024
expect_output fixed-status-1024 'Tape block size 1024 bytes' "$MT" -f "$T" status
check fixed-src $DD if=/dev/urandom of="$W/fx" bs=1k count=64
check fixed-rewind "$MT" -f "$T" rewind
check fixed-write-bs1k $DD if="$W/fx" of="$T" bs=1k
check fixed-write-bs32k $DD if="$W/fx" of="$T" bs=32k
check fixed-rewind-2 "$MT" -f "$T" rewind
expect_output fixed-read-bs32k '^2\+0 records in' $DD if="$T" of="$W/fx1" bs=32k
expect_eq fixed-bs1k-file-md5 "$(md5 "$W/fx")" "$(md5 "$W/fx1")"
expect_output fixed-read-bs1k '^64\+0 records in' $DD if="$T" of="$W/fx2" bs=1k
expect_eq fixed-bs32k-file-md5 "$(md5 "$W/fx")" "$(md5 "$W/fx2")"
expect_errno fixed-odd-size-write-refused EINVAL $DD if="$W/fx" of="$T" bs=1000 count=1
check fixed-setblk-0 "$MT" -f "$T" setblk 0
expect_output fixed-back-to-variable 'Tape block size 0 bytes' "$MT" -f "$T" status

# ------------------------------------------- early warning and ENOSPC
TS=/dev/n$(dev_tape small)
check small-src $DD if=/dev/urandom of="$W/big" bs=1M count=12
check small-rewind "$MT" -f "$TS" rewind
expect_errno small-write-until-enospc ENOSPC $DD if="$W/big" of="$TS" bs=64k
n=$(printf '%s\n' "$OUT" | sed -n 's/^\([0-9]*\)+0 records out$/\1/p')
n=${n:-0}
note "small cartridge took $n records of 64 KiB before ENOSPC"
# Early warning at 8M - 256K = 124 records of 64 KiB; the record that
# crosses it is written, and per-record overhead may take a few.
check_sh small-records-before-ew "[ $n -ge 118 ] && [ $n -le 128 ]"
check small-rewind-2 "$MT" -f "$TS" rewind
expect_output small-read-back-all "^$n\\+0 records in" $DD if="$TS" of="$W/big-back" bs=64k
$DD if="$W/big" of="$W/big-want" bs=64k count="$n" 2>/dev/null
expect_eq small-read-back-md5 "$(md5 "$W/big-want")" "$(md5 "$W/big-back")"

# --------------------------------------------------------- write protect
TW=/dev/n$(dev_tape wprot)
expect_errno wp-open-write-erofs EROFS $DD if=/dev/zero of="$TW" bs=1k count=1
expect_output wp-status-wr-prot 'WR_PROT' "$MT" -f "$TW" status
check wp-open-read-ok "$MT" -f "$TW" rewind

# ------------------------------------------------------------------ DAT72
TD=/dev/n$(dev_tape dat)
expect_output dat72-status-fixed-1024 'Tape block size 1024 bytes' "$MT" -f "$TD" status
expect_match dat72-density-0x47 'Density code 0x47' "$OUT"
check dat72-write-16k $DD if="$W/fx" of="$TD" bs=1k count=16
check dat72-rewind "$MT" -f "$TD" rewind
$DD if="$W/fx" of="$W/fx16" bs=1k count=16 2>/dev/null
check_sh dat72-read-back "[ \"\$($DD if=$TD bs=1k 2>/dev/null | md5sum | cut -d' ' -f1)\" = $(md5 "$W/fx16") ]"

# --------------------------------------- StorageTek T10000C, Quantum SDLT600
# Their identities and densities as st sees them; a T10000C's 1 MiB
# blocks through st (its 2 MiB ones do not fit tcm_loop's 256 pages).
tape_id t10k STK T10000C
tape_id sdlt QUANTUM SDLT600
TK=/dev/n$(dev_tape t10k)
expect_output t10k-density-0x4c 'Density code 0x4c' "$MT" -f "$TK" status
check t10k-write-1m $DD if="$W/r1m" of="$TK" bs=1M
check t10k-rewind "$MT" -f "$TK" rewind
check_sh t10k-read-back "[ \"\$($DD if=$TK bs=1M 2>/dev/null | md5sum | cut -d' ' -f1)\" = $(md5 "$W/r1m") ]"
expect_output sdlt-density-0x4a 'Density code 0x4a' "$MT" -f "/dev/n$(dev_tape sdlt)" status

# ---------------------------------------- persistence across a restart
TP=/dev/n$(dev_tape persist)
check persist-src $DD if=/dev/urandom of="$W/p" bs=64k count=16
check persist-rewind "$MT" -f "$TP" rewind
check persist-write $DD if="$W/p" of="$TP" bs=64k
check persist-write-second-file $DD if="$W/r1000" of="$TP" bs=1000
# A clean stop keeps the position and the block size: leave the tape at
# the start of the second file (block 17) in fixed 1000-byte blocks.
check persist-rewind-before-stop "$MT" -f "$TP" rewind
check persist-fsf-before-stop "$MT" -f "$TP" fsf 1
check persist-setblk-before-stop "$MT" -f "$TP" setblk 1000
expect_output persist-tell-before-stop 'At block 17\.' "$MT" -f "$TP" tell

check_sh metrics-scrape "scrape_metrics $W/metrics.txt && grep -q '^# TYPE ' $W/metrics.txt"

wait_for empty-blocking-open-returned 200 "[ -s $W/blockopen.rc ]"
read -r rc el <"$W/blockopen.rc" 2>/dev/null || rc=none el=0
note "blocking open of the empty drive: exit $rc after ${el}s: $(tail -n1 "$W/blockopen.out" 2>/dev/null)"
check_sh empty-blocking-open-enomedium "grep -q 'No medium found' $W/blockopen.out"
check_sh empty-blocking-open-waited-st-block-seconds "[ $el -ge 110 ] && [ $el -le 200 ]"

nodes=""
for n in $TAPES; do nodes="$nodes $(dev_tape "$n")"; done
vscsid_stop vscsid-sigterm-exit-0
wait_for configfs-no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
for s in $nodes; do
	wait_for "$s-removed" 15 "[ ! -e /sys/class/scsi_tape/$s ]"
done

dmesg_mark restart
vscsid_start tape-restart --config /etc/vscsid/tape.yaml
[ -n "$VSCSID_PID" ] || abort "vscsid did not restart"
require wait_for persist-reattached 30 "dev_node tape persist"
TP=/dev/n$(dev_tape persist)
# The new st instance asks the drive: READ POSITION and MODE SENSE show
# where the clean stop left it, and a fixed-block read goes on from there.
expect_output persist-tell-after-restart 'At block 17\.' "$MT" -f "$TP" tell
expect_output persist-blocksize-after-restart 'Tape block size 1000 bytes' "$MT" -f "$TP" status
check persist-read-fixed-after-restart $DD if="$TP" of="$W/p-fixed" bs=1000 count=1
expect_eq persist-fixed-read-md5 "$(md5 "$W/r1000")" "$(md5 "$W/p-fixed")"
check persist-setblk-0-after-restart "$MT" -f "$TP" setblk 0
check persist-rewind-after-restart "$MT" -f "$TP" rewind
expect_output persist-read-first-file '^16\+0 records in' $DD if="$TP" of="$W/p-back" bs=64k
expect_eq persist-first-file-md5 "$(md5 "$W/p")" "$(md5 "$W/p-back")"
expect_output persist-read-second-file '^0\+1 records in' $DD if="$TP" of="$W/p-back2" bs=64k
expect_eq persist-second-file-md5 "$(md5 "$W/r1000")" "$(md5 "$W/p-back2")"
# The memory cartridge was not persisted: a fresh one is blank.
T=/dev/n$(dev_tape tape0)
check memory-rewind-after-restart "$MT" -f "$T" rewind
# st returns EIO for BLANK CHECK unless it follows a filemark.
expect_errno memory-blank-after-restart-eio EIO $DD if="$T" of=/dev/null bs=64k count=1
vscsid_stop vscsid-sigterm-exit-0-after-restart
wait_for configfs-no-residue-after-restart 15 "[ -z \"\$(configfs_residue)\" ]"

# ----------------------------------------------------- a degraded start
# One damaged cartridge image, one inventory that does not parse and one
# drive state file that is a FIFO (which used to block start-up): each of
# the three devices says why it is degraded, and every device starts.
DG=$W/degraded
mkdir -p "$DG/m1" "$DG/m2" "$DG/m3"
check degraded-make-cartridge /usr/bin/vscsictl media create --dir "$DG/m1" --barcode DMG001L9
check degraded-cut-cartridge truncate -s 100 "$DG/m1/DMG001L9.vtape"
check degraded-fifo-state mkfifo "$DG/m2/.drive-dgfifo.json"
printf '{' >"$DG/m3/.library-dglib.json"
cat >/etc/vscsid/degraded.yaml <<EOF
devices:
  - name: dgcart
    type: vtape
    config: "media=$DG/m1;barcode=DMG001L9"
  - name: dgfifo
    type: vtape
    config: "media=$DG/m2;barcode=FIF001L9"
  - name: dglib
    type: vlibrary
    config: "media=$DG/m3;slots=4"
  - name: dgdisk
    type: vdisk
    config: "size=16M"
EOF
vscsid_start degraded --config /etc/vscsid/degraded.yaml
[ -n "$VSCSID_PID" ] || abort "vscsid did not start with three degraded devices"
require wait_for degraded-all-attached 30 "dev_node tape dgcart && dev_node tape dgfifo && dev_node sg dglib && dev_node block dgdisk"
dlog=$ART/vscsid-degraded.log
check_sh degraded-says-cartridge "grep 'the cartridge cannot be loaded' $dlog | grep -q DMG001L9"
check_sh degraded-says-fifo "grep 'ignoring the saved drive state' $dlog | grep -q 'is a FIFO'"
check_sh degraded-says-inventory "grep -q 'the saved inventory cannot be read' $dlog"
check_sh degraded-inventory-kept "ls $DG/m3/.library-dglib.json.damaged-*"
check_sh degraded-cartridge-left-alone "[ \$(stat -c %s $DG/m1/DMG001L9.vtape) -eq 100 ]"
# The damaged drive is empty; the other drive holds its cartridge.
# TEST UNIT READY by sg_raw (sid's sg_turs 1.48 says "bad pass-through
# setup" and exits 0), past the unit attentions of the start.
tur() { sg_raw "/dev/$(dev_sg "$1")" 00 00 00 00 00 00 2>&1; }
for g in dgcart dgfifo; do
	for i in 1 2 3 4 5; do tur $g | grep -q 'Unit Attention' || break; done
done
expect_output degraded-drive-empty 'Medium not present' sh -c "sg_raw /dev/$(dev_sg dgcart) 00 00 00 00 00 00 2>&1; true"
expect_output degraded-fifo-drive-ready 'SCSI Status: Good' sh -c "sg_raw /dev/$(dev_sg dgfifo) 00 00 00 00 00 00 2>&1; true"
expect_output degraded-library-serves 'Medium Changer' mtx -f "/dev/$(dev_sg dglib)" inquiry
vscsid_stop vscsid-sigterm-exit-0-degraded
wait_for configfs-no-residue-after-degraded 15 "[ -z \"\$(configfs_residue)\" ]"

kernel_clean kernel-log-clean
