# vm-timeout: 900
# exp-seed002: experiment, not a regression test (deploy/vm/experiments).
# Seed 002 "direct-to-BIO for O_DIRECT": throughput and CPU cost of buffered
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
cat >/etc/vscsid/exp-seed002.yaml <<'YAML'
cmd_time_out: 10
devices:
  - name: fast
    type: vdisk
    config: "size=4GiB;lbs=512;mode=fake_rw"
YAML
artefact /etc/vscsid/exp-seed002.yaml vscsid.yaml

# ------------------------------------------------------------ recording
# exp_info KEY=VALUE...: a line of run-independent facts.
exp_info() { echo "info $*" >>"$ART/results.txt"; }
# exp_cpu: the aggregate cpu line of /proc/stat as comma-separated ticks.
exp_cpu() { head -n1 /proc/stat | sed 's/^cpu  *//; s/  */,/g'; }
# exp_run RUN DEVICE KEY=VALUE... -- CMD...: one measured run: page cache
# dropped, metrics scraped before and after, wall time and CPU ticks from
# /proc, the command's output kept as RUN.out.
exp_run() {
	_r=$1 _d=$2
	shift 2
	_kv=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do _kv="$_kv $1"; shift; done
	shift
	sync
	echo 3 >/proc/sys/vm/drop_caches
	scrape_metrics "$W/$_r.before.prom" || note "$_r: scrape before failed"
	_u0=$(cut -d' ' -f1 /proc/uptime)
	_c0=$(exp_cpu)
	capture "$@"
	_u1=$(cut -d' ' -f1 /proc/uptime)
	_c1=$(exp_cpu)
	scrape_metrics "$W/$_r.after.prom" || note "$_r: scrape after failed"
	printf '%s\n' "$OUT" >"$ART/$_r.out"
	echo "run $_r device=$_d rc=$RC t0=$_u0 t1=$_u1 cpu0=$_c0 cpu1=$_c1$_kv" >>"$ART/results.txt"
	note "$_r: exit $RC, $(printf '%s\n' "$OUT" | tail -n1)"
}

: >"$ART/results.txt"
exp_info kernel=$(uname -r) experiment=seed002 mb_4k=$EXP_MB_4K mb_64k=$EXP_MB_64K mb_1m=$EXP_MB_1M cpus=$(nproc)

dmesg_mark daemon
vscsid_start exp-seed002 --config /etc/vscsid/exp-seed002.yaml
[ -n "$VSCSID_PID" ] || abort "vscsid did not start"
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
