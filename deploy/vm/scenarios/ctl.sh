# vm-timeout: 180
# ctl: devices created and removed at runtime with vscsictl (create and
# delete, as if they were config devices). vscsid makes the backstore and its
# own tcm_loop target, the kernel attaches sd or st, I/O works, and
# `vscsictl delete` takes it all away again without touching the
# config-file device next to it. Bad requests are refused with vscsid's
# message and change nothing. vscsictl trace shows a tar to the drive and
# O_DIRECT writes to a disk command by command.

CTL=/usr/bin/vscsictl
[ -x "$CTL" ] || CTL=$(command -v vscsictl)
mkdir -p /etc/vscsid
cat >/etc/vscsid/ctl.yaml <<'EOC'
cmd_time_out: 10
devices:
  - name: base0
    type: vdisk
    config: "size=32MiB"
EOC
artefact /etc/vscsid/ctl.yaml
vscsid_start ctl --config /etc/vscsid/ctl.yaml --dbus=off
require wait_for base0-attached 30 "dev_node block base0"

# The control socket answers root only: another user cannot connect to
# the 0600 socket, and when the socket is opened up by hand the daemon
# still refuses that user by its SO_PEERCRED credentials (403 EPERM).
SOCK=/run/vscsid/vscsid.sock
grep -q '^nobody:' /etc/passwd || echo 'nobody:x:65534:65534:nobody:/:/bin/sh' >>/etc/passwd
expect_output ctl-socket-mode '^srw------- ' ls -l "$SOCK"
expect_output ctl-nobody-cannot-connect 'ermission denied' sh -c "su -s /bin/sh nobody -c '$CTL devices' 2>&1; true"
check ctl-socket-opened chmod 0666 "$SOCK"
expect_output ctl-nobody-refused-by-peercred 'user 65534 .* is not allowed' sh -c "su -s /bin/sh nobody -c '$CTL devices' 2>&1; true"
check ctl-socket-closed chmod 0600 "$SOCK"
expect_output ctl-root-served '^base0 ' "$CTL" devices

# A disk: created, listed, read and written, removed.
expect_output create-disk '^d9: created vdisk at [0-9]+:0:1:0 \(/dev/sd[a-z]+, sg[0-9]+\)$' \
	"$CTL" create d9 vdisk 'size=64MiB;lbs=4096;mode=store;store_size=8M' --hw-max-sectors 256
require wait_for d9-attached 30 "dev_node block d9"
sd=$(dev_block d9)
note "d9 is $sd"
expect_eq d9-logical-block-size 4096 "$(cat /sys/block/$sd/queue/logical_block_size)"
expect_eq d9-size-bytes 67108864 "$(blockdev --getsize64 /dev/$sd)"
# --hw-max-sectors is the backstore's attribute (the queue limits come
# from tcm_loop's host and vdisk's Block Limits VPD page).
expect_eq d9-hw-max-sectors 256 "$(cat $CONFIGFS/core/user_*/d9/attrib/hw_max_sectors)"
check d9-write $DD if=/dev/urandom of=$W/d9.src bs=64k count=16
check d9-write-dev $DD if=$W/d9.src of=/dev/$sd bs=64k oflag=direct
check_sh d9-read-back "[ \"\$($DD if=/dev/$sd bs=64k count=16 iflag=direct 2>/dev/null | md5sum)\" = \"\$(md5sum <$W/d9.src)\" ]"
expect_output devices-lists-d9 "^d9 +disk +vdisk +config .*/dev/$sd" "$CTL" devices

# Refusals: a bad cfgstring, a taken name, an unknown type, an unknown
# device; none of them leaves anything in configfs.
_n0=$(ls $CONFIGFS/core | wc -l)
_vt_run 30 "$CTL" create bad1 vdisk 'size=64MiB;lbs=3'
expect_eq bad-cfgstring-exit 1 "$RC"
expect_match bad-cfgstring-message 'lbs' "$OUT"
_vt_run 30 "$CTL" create d9 vdisk 'size=1MiB'
expect_eq taken-name-exit 1 "$RC"
expect_match taken-name-message 'd9' "$OUT"
expect_fail unknown-type "$CTL" create bad2 vcdrom 'size=1MiB'
_vt_run 30 "$CTL" delete nosuch
expect_match unknown-device-message 'no such device' "$OUT"
expect_eq refusals-leave-no-backstore "$_n0" "$(ls $CONFIGFS/core | wc -l)"

expect_output delete-disk '^d9: removed$' "$CTL" delete d9
wait_for d9-sd-gone 15 "[ ! -e /sys/block/$sd ]"
check_sh d9-backstore-gone "! grep -l '/d9/' /sys/class/uio/uio*/name 2>/dev/null && ! ls -d $CONFIGFS/core/user_*/d9 2>/dev/null"
check_sh devices-no-d9 "! $CTL devices | grep -q '^d9 '"
# A deleted device is gone for fault injection too (no stale wrapper
# answers "rule added").
_vt_run 30 "$CTL" fault add d9 busy
expect_eq fault-on-deleted-exit 1 "$RC"
expect_match fault-on-deleted-message 'no device' "$OUT"
check base0-still-serves $DD if=/dev/$(dev_block base0) of=/dev/null bs=64k count=16 iflag=direct

# A tape drive with a memory cartridge: st binds it, mt works, removed.
expect_output create-tape '^t9: created vtape at ' "$CTL" create t9 vtape 'personality=lto6;memory=1;barcode=CTL001L6'
require wait_for t9-attached 30 "dev_node tape t9"
T=/dev/n$(dev_tape t9)
check t9-rewind "$MT" -f "$T" rewind
check t9-write $DD if=$W/d9.src of="$T" bs=64k
check t9-rewind2 "$MT" -f "$T" rewind
check_sh t9-read-back "[ \"\$($DD if=$T bs=64k 2>/dev/null | md5sum)\" = \"\$(md5sum <$W/d9.src)\" ]"
expect_output t9-status 'Tape block size 0 bytes' "$MT" -f "$T" status

# vscsictl trace (docs/trace.md): a tar to the drive seen command by
# command by two readers at once, one in text and one in JSON: the
# WRITE(6) records with their byte counts, then the filemark st writes
# when tar closes the device.
check t9-rewind3 "$MT" -f "$T" rewind
"$CTL" trace t9 --json >$W/trace-t9.json 2>$W/trace-t9.err &
_tj=$!
"$CTL" trace t9 >$W/trace-t9.txt 2>&1 &
_tt=$!
require wait_for trace-t9-attached 15 "$MT -f $T status >/dev/null 2>&1; [ -s $W/trace-t9.json ] && [ -s $W/trace-t9.txt ]"
check t9-tar $TAR -b 64 -cf "$T" -C $W d9.src
sleep 0.5 # the daemon drains every 20 ms, vscsictl flushes every 100 ms
kill -INT "$_tj" "$_tt"
wait "$_tj"
expect_eq trace-json-exit-0 0 "$?"
wait "$_tt"
expect_eq trace-text-exit-0 0 "$?"
artefact $W/trace-t9.json
artefact $W/trace-t9.txt
_seq=$($GUESTCHECK trace-seq $W/trace-t9.json)
note "trace of tar: $_seq"
expect_match trace-tar-writes-then-filemark 'write_6\*[0-9]+ write_filemarks_6' "$_seq"
expect_eq trace-tar-record-bytes 32768 "$($GUESTCHECK trace-values $W/trace-t9.json write_6 bytes)"
expect_eq trace-tar-record-count 32768 "$($GUESTCHECK trace-values $W/trace-t9.json write_6 extent.count)"
expect_eq trace-tar-one-filemark 1 "$($GUESTCHECK trace-values $W/trace-t9.json write_filemarks_6 extent.count)"
check_sh trace-text-write-line "grep -Eq '^[0-9]+\.[0-9]{6} t9 #[0-9]+ W write_6 count=32768 32768/32768B [0-9]+seg@[0-9]+\+[0-9]+ good q=' $W/trace-t9.txt"
check_sh trace-text-filemark-line "grep -q ' - write_filemarks_6 count=1 good ' $W/trace-t9.txt"
check_sh trace-nothing-lost "! grep -q LOST $W/trace-t9.txt && ! grep -q lost $W/trace-t9.err"
expect_eq trace-json-says-tracing "vscsictl trace: tracing t9" "$(cat $W/trace-t9.err)"

# On a disk, an O_DIRECT write of three 512-byte blocks at LBA 6, traced
# with a filter. The kernel copies the initiator's pages into TCMU's data
# area, so the segments are the data area's: one of 1536 bytes, not a
# multiple of the page.
_b0=$(dev_block base0)
trace_on $W/trace-b0.json base0 --op write --lba 0+100
trace_on $W/trace-b0-check.json base0 --status check
require wait_for trace-b0-attached 15 "grep -q tracing $W/trace-b0.json.err && grep -q tracing $W/trace-b0-check.json.err"
check b0-dio-512 $DD if=/dev/zero of=/dev/$_b0 bs=512 count=1 seek=50 oflag=direct
check b0-dio-1536 $DD if=/dev/urandom of=/dev/$_b0 bs=1536 count=1 seek=2 oflag=direct
check b0-dio-outside $DD if=/dev/zero of=/dev/$_b0 bs=4096 count=1 seek=1000 oflag=direct
trace_off
expect_eq trace-b0-exit-0 0 "$?"
artefact $W/trace-b0.json
expect_eq trace-b0-dio-lbas "50 6" "$($GUESTCHECK trace-values $W/trace-b0.json write_10 extent.lba)"
expect_eq trace-b0-dio-bytes "1536 512" "$($GUESTCHECK trace-values $W/trace-b0.json write_10 bytes)"
expect_eq trace-b0-dio-seg-unaligned 1 "$($GUESTCHECK trace-values $W/trace-b0.json write_10 unaligned)"
# trace-seq must read the capture (an unreadable one would print nothing).
check_sh trace-b0-no-check-conditions "s=\$($GUESTCHECK trace-seq $W/trace-b0-check.json) && [ -z \"\$s\" ]"
_st=$(dev_tape t9)
expect_output delete-tape '^t9: removed$' "$CTL" delete t9
wait_for t9-st-gone 15 "[ ! -e /sys/class/scsi_tape/$_st ]"
# The name can be used again.
expect_output recreate-disk '^d9: created vdisk' "$CTL" create d9 vdisk 'size=8MiB'
require wait_for d9-again-attached 30 "dev_node block d9"

# vscsid's stop removes what vscsictl created too.
vscsid_stop vscsid-sigterm-exit-0
check_sh configfs-no-residue "[ -z \"\$(configfs_residue)\" ]"
check_sh log-no-error "! grep '\"level\":\"error\"' $ART/vscsid-ctl.log"
# vscsid's devices have nl_reply_supported=-1: it sends no netlink reply
# the kernel would log at KERN_ERR as awaited by nobody.
check_sh kernel-no-unawaited-replies "! dmesg_since | grep 'completion could not find device'"
kernel_clean kernel-log-clean
