# vm-timeout: 240
# reclaim: vscsid killed with SIGKILL leaves its devices in configfs with a
# LUN in use and a command in the dead daemon's ring; a restart re-attaches
# them in place (block_dev, reset_ring: the stuck command is retried after
# BUSY), so the kernel's device nodes stay the same, and a clean stop
# leaves nothing.
mkdir -p /etc/vscsid
cat >/etc/vscsid/r.yaml <<EOC
cmd_time_out: 5
devices:
  - name: d0
    type: vdisk
    config: "size=64M"
  - name: t0
    type: vtape
    config: "personality=lto6;memory=1;capacity=64M;barcode=RCL001L6"
EOC
dmesg_mark first
vscsid_start first --config /etc/vscsid/r.yaml
[ -n "$VSCSID_PID" ] || abort "vscsid did not start"
require wait_for d0-attached 30 "dev_node block d0"
require wait_for t0-attached 30 "dev_node tape t0"
sd=$(dev_block d0); st=$(dev_tape t0)
note "first run: d0 is $sd, t0 is $st"
sd1=$sd st1=$st
check_sh d0-read "dd if=/dev/$sd of=/dev/null bs=64k count=16 iflag=direct"
check_sh t0-status "timeout 20 $MT -f /dev/n$st status"
kill -KILL "$VSCSID_PID"; wait "$VSCSID_PID" 2>/dev/null; VSCSID_PID=
note "killed; residue: $(configfs_residue | tr '\n' ' ')"
check_sh residue-after-kill "[ -n \"\$(configfs_residue)\" ]"
# A command in the ring of the dead daemon.
(timeout 60 dd if=/dev/$sd of=/dev/null bs=4k count=1 skip=100 iflag=direct 2>/tmp/stuck.err; echo "stuck-dd rc=$?" >/tmp/stuck.rc) &
sleep 1
vscsid_start second --config /etc/vscsid/r.yaml
[ -n "$VSCSID_PID" ] || abort "vscsid did not restart"
require wait_for d0-reattached 60 "dev_node block d0"
require wait_for t0-reattached 60 "dev_node tape t0"
sd=$(dev_block d0); st=$(dev_tape t0)
note "second run: d0 is $sd, t0 is $st"
check_sh d0-read-again "dd if=/dev/$sd of=/dev/null bs=64k count=16 iflag=direct"
check_sh t0-status-again "timeout 20 $MT -f /dev/n$st status"
check_sh reattached-in-place-logged "grep -q 're-attached in place' $ART/vscsid-second.log"
check_sh same-disk-node "[ \"$sd\" = \"$sd1\" ]"
check_sh same-tape-node "[ \"$st\" = \"$st1\" ]"
wait_until 70 "[ -s /tmp/stuck.rc ]"
note "$(cat /tmp/stuck.rc /tmp/stuck.err 2>/dev/null)"
check_sh stuck-command-completed "grep -q 'rc=0' /tmp/stuck.rc"
vscsid_stop vscsid-sigterm-exit-0
check_sh configfs-no-residue "[ -z \"\$(configfs_residue)\" ]"
check_sh no-tcmu-uio-left "! grep -qs '^tcm-user' /sys/class/uio/uio*/name"
note "$(dmesg_since first | tail -n 40)"
kernel_clean kernel-log-clean
