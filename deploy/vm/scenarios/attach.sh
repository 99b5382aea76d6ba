# vm-timeout: 400
# attach: devices created by hand in configfs (as targetcli does) are served
# by vscsid: found at start, announced over netlink (ADDED with the
# Factory's verdict as reply, REMOVED, RECONFIG), kept across a daemon
# restart; vscsictl talks to the daemon over its control socket.
#
# passed 53/53 on bookworm (6.1) and trixie (6.12).
# shellcheck shell=sh disable=SC2086 # sourced by the guest's busybox ash with deploy/vm/guest/lib.sh

CTL=/usr/bin/vscsictl
[ -x "$CTL" ] || CTL=$(command -v vscsictl)
SOCK=/run/vscsid/vscsid.sock
mkdir -p /etc/vscsid /run/vscsid
cat >/etc/vscsid/attach.yaml <<'EOF'
cmd_time_out: 5
devices:
  - name: own0
    type: vdisk
    config: "size=16MiB;lbs=512;mode=fake_rw"
EOF
artefact /etc/vscsid/attach.yaml


# 1. Made before the daemon runs: found by the start-up scan.
check_sh tc0-mk "d=$CONFIGFS/core/user_9/tc0; mkdir -p \$d && echo 'dev_config=vtape/media=/tmp/vtmedia;barcode=TC0001' >\$d/control && echo dev_size=1073741824 >\$d/control && echo 5 >\$d/attrib/cmd_time_out && echo 1 >\$d/enable"
vscsid_start attach --config /etc/vscsid/attach.yaml --control.socket $SOCK --dbus=off
require wait_for own0-attached 30 "dev_node block own0"
wait_for socket-up 10 "[ -S $SOCK ]"
expect_output ctl-devices-tc0 '^tc0 +tape +vtape +attached ' $CTL devices
check_sh tc0-lun "t=$CONFIGFS/loopback/naa.5001405000000a01/tpgt_1; mkdir -p \$t/lun/lun_0 && echo naa.5001405000000a0f >\$t/nexus && ln -s $CONFIGFS/core/user_9/tc0 \$t/lun/lun_0/tc0"
require wait_for tc0-st 30 "dev_node tape tc0"
st=$(dev_tape tc0)
check tc0-mt-status "$MT" -f /dev/n$st status
check tc0-write dd if=/dev/zero of=/dev/n$st bs=32k count=4
check tc0-rewind "$MT" -f /dev/n$st rewind
check tc0-read dd if=/dev/n$st of=/dev/null bs=32k count=4
expect_output ctl-devices-node "^tc0 .*/dev/n$st .*TC0001 +ok" $CTL devices
expect_output ctl-stats-tc0 'write_6 +0x0a +4 ' $CTL stats tc0
check ctl-unload $CTL unload tc0
expect_output ctl-unloaded '^tc0 .*\(empty\)' $CTL devices
check ctl-load $CTL load tc0 TC0001
expect_output ctl-json '"origin": "attached"' $CTL devices --json

# 2. Made while the daemon runs: ADDED; the kernel waits for our reply now.
check_sh tc1-mk "d=$CONFIGFS/core/user_10/tc1; mkdir -p \$d && echo 'dev_config=vdisk/lbs=4096;mode=store;store_size=8M' >\$d/control && echo dev_size=67108864 >\$d/control && echo 5 >\$d/attrib/cmd_time_out && export d && timeout 20 sh -c 'echo 1 >\$d/enable'"
check_sh tc1-lun "t=$CONFIGFS/loopback/naa.5001405000000a02/tpgt_1; mkdir -p \$t/lun/lun_0 && echo naa.5001405000000a2f >\$t/nexus && ln -s $CONFIGFS/core/user_10/tc1 \$t/lun/lun_0/tc1"
require wait_for tc1-sd 30 "dev_node block tc1"
sd=$(dev_block tc1)
expect_eq tc1-size 67108864 "$(($(cat /sys/block/$sd/size) * 512))"
expect_eq tc1-lbs 4096 "$(cat /sys/block/$sd/queue/logical_block_size)"
check_sh tc1-data "head -c 1048576 /dev/urandom >/tmp/r && $DD if=/tmp/r of=/dev/$sd bs=64k oflag=direct 2>/dev/null && $DD if=/dev/$sd of=/tmp/r2 bs=64k count=16 iflag=direct 2>/dev/null && cmp /tmp/r /tmp/r2"

# 3. A cfgstring vscsid refuses: enable fails with the Factory's verdict.
check_sh bad-mkdir "mkdir -p $CONFIGFS/core/user_11/bad && echo 'dev_config=vdisk/size=lots' >$CONFIGFS/core/user_11/bad/control && echo dev_size=1048576 >$CONFIGFS/core/user_11/bad/control"
expect_fail bad-enable-refused sh -c "echo 1 >$CONFIGFS/core/user_11/bad/enable"
check_sh bad-cleanup "rmdir $CONFIGFS/core/user_11/bad && rmdir $CONFIGFS/core/user_11"

# 4. RECONFIG: the value in force is accepted, a change refused.
check_sh reconfig-same "echo 'vdisk/lbs=4096;mode=store;store_size=8M' >$CONFIGFS/core/user_10/tc1/attrib/dev_config"
expect_fail reconfig-change sh -c "echo 'vdisk/lbs=512' >$CONFIGFS/core/user_10/tc1/attrib/dev_config"
check_sh reconfig-size-same "echo 67108864 >$CONFIGFS/core/user_10/tc1/attrib/dev_size"
check_sh reconfig-wce-same "echo 0 >$CONFIGFS/core/user_10/tc1/attrib/emulate_write_cache"

# 5. REMOVED: unexport and remove tc1; vscsid lets go.
check_sh tc1-unlun "t=$CONFIGFS/loopback/naa.5001405000000a02/tpgt_1; rm \$t/lun/lun_0/tc1 && rmdir \$t/lun/lun_0 && rmdir \$t && rmdir $CONFIGFS/loopback/naa.5001405000000a02"
check_sh tc1-rmdir "timeout 20 rmdir $CONFIGFS/core/user_10/tc1 && rmdir $CONFIGFS/core/user_10"
wait_for ctl-tc1-gone 10 "! $CTL devices | grep -q '^tc1 '"

# 6. Restart: tc0 stays exported and is served again; own0 is removed and recreated.
vscsid_stop vscsid-stop-1
check tc0-survives-stop test -e /dev/n$st
vscsid_start attach2 --config /etc/vscsid/attach.yaml --control.socket $SOCK --dbus=off
require wait_for own0-again 30 "dev_node block own0"
wait_for ctl-tc0-again 10 "$CTL devices | grep -q '^tc0 .*attached'"
check_sh tc0-after-restart "$MT -f /dev/n$st status >/dev/null 2>&1 || true; $MT -f /dev/n$st rewind && dd if=/dev/n$st of=/dev/null bs=32k count=4"
check tc0-state-file test -s /tmp/vtmedia/.drive-tc0.json
expect_eq tc0-same-node "$st" "$(dev_tape tc0)"

# 7. SIGKILL: own0 is re-attached in place on the next start (same sdX).
own=$(dev_block own0)
kill -KILL "$VSCSID_PID"; wait "$VSCSID_PID" 2>/dev/null; VSCSID_PID=
vscsid_start attach3 --config /etc/vscsid/attach.yaml --control.socket $SOCK --dbus=off
require wait_for own0-third 30 "dev_node block own0"
expect_eq own0-same-node "$own" "$(dev_block own0)"
check own0-read dd if=/dev/$own of=/dev/null bs=4k count=16
check_sh log-adopted "grep -q 're-attached in place' $ART/vscsid-attach3.log"
# 8. One of the config's devices removed by hand while served: REMOVED is
# answered, nothing hangs, the daemon still stops cleanly.
check_sh own0-removed-by-hand "l=\$(ls -d $CONFIGFS/loopback/naa.*/tpgt_1/lun/lun_0/own0) && t=\${l%/lun/lun_0/own0} && o=\$(readlink -f \$l) && rm \$l && rmdir \$t/lun/lun_0 && timeout 20 rmdir \$o && rmdir \$(dirname \$o) && rmdir \$t && rmdir \${t%/tpgt_1}"
wait_for ctl-own0-gone 10 "! $CTL devices | grep -q '^own0 '"
check_sh log-own0-removed "grep -q 'removed by another tool' $ART/vscsid-attach3.log"
vscsid_stop vscsid-stop-3

# Cleanup of tc0 by hand (no daemon: REMOVED has no listener, which the kernel ignores).
check_sh tc0-cleanup "t=$CONFIGFS/loopback/naa.5001405000000a01/tpgt_1; rm \$t/lun/lun_0/tc0 && rmdir \$t/lun/lun_0 && rmdir \$t && rmdir $CONFIGFS/loopback/naa.5001405000000a01 && timeout 20 rmdir $CONFIGFS/core/user_9/tc0 && rmdir $CONFIGFS/core/user_9"
kernel_clean kernel-log-clean
wait_for no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
