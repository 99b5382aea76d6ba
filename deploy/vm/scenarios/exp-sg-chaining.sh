# vm-timeout: 600
# exp-sg-chaining: experiment, not a regression test (deploy/vm/experiments).
# From the mailing-list thread "scsi_sgtable and Large IO sg-chaining": sg_dd direct I/O
# (blk_sgio=1 dio=1) through /dev/sgN of a 32 GiB fake_rw disk with 32, 128,
# 256, 512 and 2048 pages (4 KiB) per command, reads and writes. More than
# 128 scatterlist entries needs a chained scatterlist; tcm_loop's
# sg_tablesize (256) caps a command at 256 entries = 1 MiB, so 512 and 2048
# pages are expected to fail in the kernel, never reaching vscsid.
# Every run's vscsid metrics are scraped before and after; results.txt and
# the scrapes go out as artefacts for deploy/vm/experiments/report.

EXP_MB=${EXP_MB:-128}
EXP_REPS=${EXP_REPS:-3}
CMD_TIMEOUT=180
mkdir -p /etc/vscsid
cat >/etc/vscsid/exp-sg-chaining.yaml <<'YAML'
cmd_time_out: 10
devices:
  - name: big
    type: vdisk
    config: "size=32GiB;lbs=512;mode=fake_rw"
YAML
artefact /etc/vscsid/exp-sg-chaining.yaml vscsid.yaml

. /vmtest/exp.sh

exp_start exp-sg-chaining mb_per_run=$EXP_MB reps=$EXP_REPS
require wait_for big-attached 30 "dev_node block big && dev_node sg big"
sd=$(dev_block big)
sg=$(dev_sg big)
note "big is /dev/$sd, /dev/$sg"
q=/sys/block/$sd/queue

# The thread's tuning: max_sectors_kb up to max_hw_sectors_kb, max_segments
# up (read-only on current kernels: the attempt is recorded).
exp_info "before.max_sectors_kb=$(cat $q/max_sectors_kb)" "max_hw_sectors_kb=$(cat $q/max_hw_sectors_kb)" \
	"max_segments=$(cat $q/max_segments)" "max_segment_size=$(cat $q/max_segment_size)" \
	"host_sg_tablesize=$(cat /sys/block/$sd/device/../../scsi_host/*/sg_tablesize)"
if capture sh -c "cat $q/max_hw_sectors_kb >$q/max_sectors_kb"; then
	exp_info "after.max_sectors_kb=$(cat $q/max_sectors_kb)"
else
	exp_info "after.max_sectors_kb=unchanged($(cat $q/max_sectors_kb))"
fi
if capture sh -c "echo 4096 >$q/max_segments"; then
	exp_info "max_segments_write=ok($(cat $q/max_segments))"
else
	exp_info "max_segments_write=refused(read-only)"
fi
# sg's direct I/O is off unless allowed.
if [ -w /sys/module/sg/parameters/allow_dio ]; then
	echo 1 >/sys/module/sg/parameters/allow_dio
fi
exp_info "sg_allow_dio=$(cat /sys/module/sg/parameters/allow_dio 2>/dev/null)"

total=$((EXP_MB * 2048)) # 512-byte blocks
# Repetitions interleaved (the report shows median and range).
for rep in $(seq "$EXP_REPS"); do
	for pages in 32 128 256 512 2048; do
		bpt=$((pages * 8))
		exp_run "read-${pages}p-r$rep" big op=read "pages=$pages" "bpt=$bpt" "kib_per_cmd=$((pages * 4))" "rep=$rep" -- \
			sg_dd if=/dev/$sg of=/dev/null bs=512 bpt=$bpt count=$total blk_sgio=1 dio=1 time=1
		exp_run "write-${pages}p-r$rep" big op=write "pages=$pages" "bpt=$bpt" "kib_per_cmd=$((pages * 4))" "rep=$rep" -- \
			sg_dd if=/dev/zero of=/dev/$sg bs=512 bpt=$bpt count=$total blk_sgio=1 dio=1 time=1
	done
done
# One traced run of 4 commands per size: the data segments vscsid sees.
for pages in 32 128 256 512 2048; do
	bpt=$((pages * 8))
	exp_trace "read-${pages}p" big -- sg_dd if=/dev/$sg of=/dev/null bs=512 bpt=$bpt count=$((bpt * 4)) blk_sgio=1 dio=1
done
dmesg_since daemon >"$ART/dmesg-experiment.txt"

vscsid_stop vscsid-stop
wait_for no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
kernel_clean kernel-log-clean
