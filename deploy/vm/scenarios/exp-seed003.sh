# vm-timeout: 600
# exp-seed003: experiment, not a regression test (deploy/vm/experiments).
# Seed 003 "scsi_sgtable and Large IO sg-chaining": sg_dd direct I/O
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
cat >/etc/vscsid/exp-seed003.yaml <<'YAML'
cmd_time_out: 10
devices:
  - name: big
    type: vdisk
    config: "size=32GiB;lbs=512;mode=fake_rw"
YAML
artefact /etc/vscsid/exp-seed003.yaml vscsid.yaml

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
exp_info kernel=$(uname -r) experiment=seed003 mb_per_run=$EXP_MB reps=$EXP_REPS

dmesg_mark daemon
vscsid_start exp-seed003 --config /etc/vscsid/exp-seed003.yaml
[ -n "$VSCSID_PID" ] || abort "vscsid did not start"
require wait_for big-attached 30 "dev_node block big && dev_node sg big"
sd=$(dev_block big)
sg=$(dev_sg big)
note "big is /dev/$sd, /dev/$sg"
q=/sys/block/$sd/queue

# The seed's tuning: max_sectors_kb up to max_hw_sectors_kb, max_segments
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
dmesg_since daemon >"$ART/dmesg-experiment.txt"

vscsid_stop vscsid-stop
wait_for no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
kernel_clean kernel-log-clean
