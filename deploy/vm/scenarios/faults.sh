# vm-timeout: 300
# faults: injected faults reach the kernel's real error paths.
#  - a medium error at an LBA surfaces to dd as EIO at that offset, sd logs
#    the sense (Medium Error, Unrecovered read error) and the LBA, and the
#    blocks before it are delivered;
#  - a no-response rule makes the kernel time out (cmd_time_out) and fail
#    the command; with sd's timeout below cmd_time_out, sd times it out
#    first and aborts it (ABORT TASK), vscsid counts the TMR and drops the
#    held command at once, sd retries,
#    and the device keeps serving;
#  - an early-warning rule makes a tape write get ENOSPC at the chosen point;
#  - the rules and their counts are visible in vscsictl and in /metrics.

CTL=/usr/bin/vscsictl
[ -x "$CTL" ] || CTL=$(command -v vscsictl)
mkdir -p /etc/vscsid
cat >/etc/vscsid/faults.yaml <<'EOC'
cmd_time_out: 4
devices:
  - name: fd0
    type: vdisk
    config: "size=64MiB;lbs=512;mode=store;store_size=64M"
    fault:
      rules:
        - "op=read;lba=20000+8;sense=medium_error/0x11/0x00"
  - name: ft0
    type: vtape
    config: "personality=lto6;memory=1;capacity=64M;barcode=FLT001L6"
    fault:
      rules:
        - "early_warning_after=1MiB"
  # The same latency served one command at a time and 32 at once.
  - name: fq1
    type: vdisk
    config: "size=64MiB;mode=fake_rw"
    fault:
      timing: "latency=100ms"
  - name: fq32
    type: vdisk
    config: "size=64MiB;mode=fake_rw"
    fault:
      timing: "latency=100ms"
      depth: 32
EOC
artefact /etc/vscsid/faults.yaml
dmesg_mark f
vscsid_start faults --config /etc/vscsid/faults.yaml --dbus=off
require wait_for fd0-attached 30 "dev_node block fd0"
require wait_for ft0-attached 30 "dev_node tape ft0"
sd=$(dev_block fd0); st=$(dev_tape ft0)
note "fd0 is $sd, ft0 is $st"

# ---------------------------------------------------------- medium error
# Sector 20000 is byte 10240000; a direct 1 MiB read starting at sector
# 19968 (byte 10223616) covers it: dd must fail right at sector 20000,
# after 32 good sectors.
_vt_run 60 "$DD" if=/dev/$sd of=/dev/null bs=512 skip=19968 count=2048 iflag=direct
printf '%s\n' "$OUT" | sed 's/^/  | /'
expect_eq medium-error-dd-fails 1 "$([ "$RC" -ne 0 ] && echo 1 || echo 0)"
expect_match medium-error-errno 'No data available|Input/output error' "$OUT"
expect_match medium-error-at-offset '^32\+0 records in' "$(printf '%s\n' "$OUT" | grep 'records in')"
# Reads that stop before the bad range succeed.
check medium-error-before-ok "$DD" if=/dev/$sd of=/dev/null bs=512 skip=19968 count=32 iflag=direct
check medium-error-after-ok "$DD" if=/dev/$sd of=/dev/null bs=512 skip=20008 count=64 iflag=direct
# sd logs the sense and the failing LBA (the INFORMATION field).
check_sh medium-error-dmesg-sense "dmesg_since f | grep -q 'Medium Error'"
check_sh medium-error-dmesg-asc "dmesg_since f | grep -qi 'Unrecovered read error'"
check_sh medium-error-dmesg-lba "dmesg_since f | grep -qE 'sector 20000|I/O error.*sector 20000'"
note "$(dmesg_since f | grep -iE 'medium|unrecovered|sector' | tail -n 6)"
expect_output fault-list-shows-injected 'medium_error|sense' "$CTL" fault list fd0

# --------------------------------------------------- no response (timeout)
expect_output fault-add-timeout '.' "$CTL" fault add fd0 'op=read;lba=40000+8;timeout;count=1'
_t0=$(date +%s)
# The command is held past cmd_time_out (4 s): the kernel fails it and sd
# retries or gives up; either way dd must come back, not hang.
_vt_run 120 "$DD" if=/dev/$sd of=/dev/null bs=512 skip=40000 count=8 iflag=direct
_t1=$(date +%s)
note "held read: rc=$RC after $((_t1 - _t0))s: $(_vt_lastline)"
expect_match timeout-took-cmd_time_out '^([4-9]|[1-9][0-9]+)$' "$((_t1 - _t0))"
expect_eq timeout-dd-fails 1 "$([ "$RC" -ne 0 ] && echo 1 || echo 0)"
check_sh timeout-kernel-08-00 "dmesg_since f | grep -q 'Logical unit communication failure'"
check_sh timeout-kernel-sector "dmesg_since f | grep -q 'I/O error, dev $sd, sector 40000'"
note "$(dmesg_since f | grep -iE 'communication|sector 40000|abort' | tail -n 4)"
# The device keeps serving afterwards.
check after-timeout-read-ok "$DD" if=/dev/$sd of=/dev/null bs=64k count=16 iflag=direct
# ------------------------------------- no response, the initiator aborts
# With sd's own command timeout (2 s) below TCMU's cmd_time_out (4 s), the
# SCSI midlayer times the command out first and sends ABORT TASK through
# tcm_loop; target_core_user puts a TMR entry listing the command in the
# ring (vscsid sets attrib/tmr_notification=1), and vscsid counts it. The
# held command ends when vscsid sees the abort, as a real device drops an
# aborted task, so the abort completes at once: sd retries the read, the
# count=1 rule lets it through, and dd succeeds without TCMU's timeout.
_sdev=/sys/block/$sd/device
_to0=$(cat $_sdev/timeout)
_tmo0=$(printf '%d' "$(cat $_sdev/iotmo_cnt)")
echo 2 >$_sdev/timeout
expect_output fault-add-abort '.' "$CTL" fault add fd0 'op=read;lba=48000+8;timeout;count=1'
dmesg_mark abort
_t0=$(date +%s)
_vt_run 120 "$DD" if=/dev/$sd of=/dev/null bs=512 skip=48000 count=8 iflag=direct
_t1=$(date +%s)
echo "$_to0" >$_sdev/timeout
_tmo1=$(printf '%d' "$(cat $_sdev/iotmo_cnt)")
note "aborted read: rc=$RC after $((_t1 - _t0))s: $(_vt_lastline); sd timeouts (iotmo_cnt) $_tmo0 -> $_tmo1"
expect_eq abort-sd-timed-out 1 "$([ "$_tmo1" -gt "$_tmo0" ] && echo 1 || echo 0)"
expect_eq abort-then-retry-succeeds 0 "$RC"
# TCMU never timed the command out: no 08/00, no I/O error at 48000.
check_sh abort-no-tcmu-timeout "! dmesg_since abort | grep -qE 'sector 48000|communication failure'"
check abort-device-keeps-serving "$DD" if=/dev/$sd of=/dev/null bs=64k count=16 iflag=direct
scrape_metrics "$W/faults.prom"
check_sh metrics-fault-injected "grep -E '^vscsi_fault_injected_total\\{.*device=\"fd0\"' $W/faults.prom | grep -vq ' 0\$'"
check_sh metrics-medium-error-counted "grep -E '^vscsi_scsi_check_conditions_total\\{.*device=\"fd0\".*sense_key=\"medium_error\"' $W/faults.prom | grep -vq ' 0\$'"
note "$(grep -E '^vscsi_ring_(task_management|aborted)' $W/faults.prom | grep 'fd0' | grep -v ' 0$')"
check_sh metrics-abort-ended-hold "grep -E '^vscsi_ring_aborted_running_commands_total\\{device=\"fd0\"\\} 1\$' $W/faults.prom"
check_sh metrics-abort-tmr-counted "grep -E '^vscsi_ring_task_management_requests_total\\{.*device=\"fd0\".*tmr=\"abort_task\"' $W/faults.prom | grep -vq ' 0\$'"
expect_output fault-clear '.' "$CTL" fault clear fd0
check medium-error-gone-after-clear "$DD" if=/dev/$sd of=/dev/null bs=512 skip=19968 count=2048 iflag=direct

# ---------------------------------------- timing: latency=2ms (a figure)
# The mean the duration histogram records for a configured 2 ms latency,
# reported, not asserted (an emulated CPU on a shared host); the command
# count is exact.
# The same 300 reads without timing first: the guest's own cost of a
# command, which the 2 ms come on top of.
_lat() { awk -v k="$2" '$1 == "vscsi_scsi_command_duration_seconds_" k "{command=\"read_10\",device=\"fd0\"}" {print $2}' "$1"; }
_mean() { awk -v a="$(_lat $1 sum)" -v b="$(_lat $2 sum)" -v n="$3" 'BEGIN {printf "%.3f", (b - a) / n * 1000}'; }
scrape_metrics "$W/lat0.prom"
check timing-baseline-reads "$DD" if=/dev/$sd of=/dev/null bs=4k count=300 skip=1000 iflag=direct
scrape_metrics "$W/lat1.prom"
expect_output timing-set '.' "$CTL" fault timing fd0 'latency=2ms'
check timing-reads "$DD" if=/dev/$sd of=/dev/null bs=4k count=300 skip=1000 iflag=direct
scrape_metrics "$W/lat2.prom"
_n=$(awk -v a="$(_lat $W/lat1.prom count)" -v b="$(_lat $W/lat2.prom count)" 'BEGIN {print b - a}')
expect_eq timing-read-count 300 "$_n"
_m0=$(_mean $W/lat0.prom $W/lat1.prom 300)
_m1=$(_mean $W/lat1.prom $W/lat2.prom 300)
note "guest clock: $(grep -m1 -o 'hres_active *: *[0-9]' /proc/timer_list 2>/dev/null), $(grep -m1 -o 'Clock Event Device: .*' /proc/timer_list 2>/dev/null), $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource 2>/dev/null)"
note "READ(10) mean recorded: $_m0 ms without timing, $_m1 ms with latency=2ms (added: $(awk -v a=$_m0 -v b=$_m1 'BEGIN {printf "%.3f", b - a}') ms)"
expect_output timing-clear '.' "$CTL" fault timing fd0 ''

# ------------------------------------- depth: latencies that overlap
# Eight readers of 5 direct 4 KiB reads each on a disk with latency=100ms.
# Served one at a time (fq1) the 40 latencies add up: at least 4 s, by
# construction. With depth: 32 (fq32) they overlap, as in a real disk's
# queue and in scsi_debug's per-command delay. Whether they overlapped is
# read from a trace of each disk (every command's service time, on the
# daemon's clock): the wall time of the fq32 run also holds the guest's
# own cost of starting eight dd under TCG, which with other guests on the
# host's CPUs reached 2 s and once made a time-based check fail.
require wait_for fq-attached 30 "dev_node block fq1 && dev_node block fq32"
trace_on $W/trace-fq1.json fq1 --op read_10
trace_on $W/trace-fq32.json fq32 --op read_10
require wait_for fq-traced 15 "grep -q tracing $W/trace-fq1.json.err && grep -q tracing $W/trace-fq32.json.err"
_readers() { # DEV: wall seconds of eight parallel readers
	local t0 t1 i
	t0=$(cut -d' ' -f1 /proc/uptime)
	for i in 0 1 2 3 4 5 6 7; do
		"$DD" if=/dev/$1 of=/dev/null bs=4k count=5 skip=$((i * 1000)) iflag=direct 2>/dev/null &
	done
	wait
	t1=$(cut -d' ' -f1 /proc/uptime)
	awk -v a="$t0" -v b="$t1" 'BEGIN {printf "%.2f", b - a}'
}
_s1=$(_readers "$(dev_block fq1)")
_s32=$(_readers "$(dev_block fq32)")
trace_off || true # the overlap checks below read what they wrote
_o1=$("$GUESTCHECK" trace-overlap $W/trace-fq1.json read_10)
_o32=$("$GUESTCHECK" trace-overlap $W/trace-fq32.json read_10)
note "8 x 5 reads at latency=100ms: $_s1 s one at a time, $_s32 s with depth 32; at most $_o1 and $_o32 in service at once"
scrape_metrics "$W/depth.prom"
expect_eq depth-workers "32 1" "$("$GUESTCHECK" prom-value "$W/depth.prom" 'vscsi_ring_workers{device="fq32"}' 'vscsi_ring_workers{device="fq1"}')"
check_sh depth1-latencies-add-up "awk -v s=$_s1 'BEGIN {exit !(s >= 4.0)}'"
expect_eq depth1-one-at-a-time 1 "$_o1"
# Eight readers with one command each outstanding: eight at once when
# they all started within a read's 100 ms; four already rules out serving
# one at a time, whatever the guest's load.
check_sh depth32-latencies-overlap "[ ${_o32:-0} -ge 4 ]"

# ------------------------------------------------- tape early warning
T=/dev/n$st
check_sh tape-rewind "timeout 20 $MT -f $T rewind"
# 64 KiB records: early warning after 1 MiB = the 16th record; st then
# returns ENOSPC on a later write.
"$DD" if=/dev/zero of="$T" bs=64k count=64 >"$W/ew.out" 2>&1
_rc=$?
cat "$W/ew.out" | sed 's/^/  | /'
expect_eq tape-ew-dd-fails 1 "$([ $_rc -ne 0 ] && echo 1 || echo 0)"
check_sh tape-ew-enospc "grep -q 'No space left on device' $W/ew.out"
_recs=$(sed -nE 's/^([0-9]+)\+0 records out.*/\1/p' "$W/ew.out" | head -n1)
note "records written before ENOSPC: $_recs"
expect_match tape-ew-at-chosen-point '^1[6-7]$' "$_recs"

vscsid_stop vscsid-sigterm-exit-0
check_sh configfs-no-residue "[ -z \"\$(configfs_residue)\" ]"
