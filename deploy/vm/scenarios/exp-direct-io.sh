# vm-timeout: 900
# exp-direct-io: experiment, not a regression test (deploy/vm/experiments).
# From the mailing-list thread "direct-to-BIO for O_DIRECT": throughput and CPU cost of buffered
# GNU dd, O_DIRECT GNU dd and sg_dd (SG_IO through /dev/sgN) on one fake_rw
# disk, reads and writes, at 4 KiB, 64 KiB and 1 MiB per call. Buffered
# writes end with fdatasync so the data reaches the device inside the run.
# Every run's vscsid metrics are scraped before and after; results.txt and
# the scrapes go out as artefacts for deploy/vm/experiments/report.

# Bytes per run by block size: TCG makes a 4 KiB O_DIRECT command cost
# milliseconds, so the small sizes move less data (each run still issues
# thousands of commands).
EXP_MB_4K=${EXP_MB_4K:-8} EXP_MB_64K=${EXP_MB_64K:-64} EXP_MB_1M=${EXP_MB_1M:-128}
CMD_TIMEOUT=180
mkdir -p /etc/vscsid
cat >/etc/vscsid/exp-direct-io.yaml <<'YAML'
cmd_time_out: 10
devices:
  - name: fast
    type: vdisk
    config: "size=4GiB;lbs=512;mode=fake_rw"
YAML
artefact /etc/vscsid/exp-direct-io.yaml vscsid.yaml

. /vmtest/exp.sh

exp_start exp-direct-io mb_4k=$EXP_MB_4K mb_64k=$EXP_MB_64K mb_1m=$EXP_MB_1M cpus=$(nproc)
require wait_for fast-attached 30 "dev_node block fast && dev_node sg fast"
sd=$(dev_block fast)
sg=$(dev_sg fast)
q=/sys/block/$sd/queue
exp_info "dev=$sd" "sg=$sg" "max_sectors_kb=$(cat $q/max_sectors_kb)" "read_ahead_kb=$(cat $q/read_ahead_kb)" \
	"scheduler=$(sed 's/.*\[\(.*\)\].*/\1/' $q/scheduler)"
[ -w /sys/module/sg/parameters/allow_dio ] && echo 1 >/sys/module/sg/parameters/allow_dio

for bs in 4096 65536 1048576; do
	case $bs in 4096) mb=$EXP_MB_4K ;; 65536) mb=$EXP_MB_64K ;; *) mb=$EXP_MB_1M ;; esac
	n=$((mb * 1048576 / bs))
	k=$((bs / 1024))k
	exp_run "read-buffered-$k" fast op=read path=buffered "bs=$bs" -- \
		$DD if=/dev/$sd of=/dev/null bs=$bs count=$n
	exp_run "read-direct-$k" fast op=read path=O_DIRECT "bs=$bs" -- \
		$DD if=/dev/$sd of=/dev/null bs=$bs count=$n iflag=direct
	exp_run "read-sg-$k" fast op=read path=sg_dd_dio "bs=$bs" -- \
		sg_dd if=/dev/$sg of=/dev/null bs=512 bpt=$((bs / 512)) count=$((n * bs / 512)) dio=1 time=1
	exp_run "write-buffered-$k" fast op=write path=buffered "bs=$bs" -- \
		$DD if=/dev/zero of=/dev/$sd bs=$bs count=$n conv=fdatasync
	exp_run "write-direct-$k" fast op=write path=O_DIRECT "bs=$bs" -- \
		$DD if=/dev/zero of=/dev/$sd bs=$bs count=$n oflag=direct
	exp_run "write-sg-$k" fast op=write path=sg_dd_dio "bs=$bs" -- \
		sg_dd if=/dev/zero of=/dev/$sg bs=512 bpt=$((bs / 512)) count=$((n * bs / 512)) dio=1 time=1
done

vscsid_stop vscsid-stop
wait_for no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
kernel_clean kernel-log-clean
