# vm-timeout: 900
# exp-st-direct-io: experiment, not a regression test (deploy/vm/experiments).
# From the mailing-list thread "st try_direct_io": a DAT72-personality vtape (wakes up in fixed
# 1024-byte mode) behind the DDS timing model (per-command overhead, 6.6
# MB/s streaming). 8 MiB written in fixed 1 KiB blocks and in variable
# 32 KiB blocks, read back (fixed: dd bs=64k, the thread's read size;
# and bs=1k; variable: bs=32k), with st's try_direct_io on (the default)
# and off.
# try_direct_io is a module parameter not writable at run time, so st is
# removed and inserted again with try_direct_io=0 between the two passes.
# Every run's vscsid metrics are scraped before and after; results.txt and
# the scrapes go out as artefacts for deploy/vm/experiments/report.

EXP_MB=${EXP_MB:-8}
CMD_TIMEOUT=180
mkdir -p /etc/vscsid
cat >/etc/vscsid/exp-st-direct-io.yaml <<'YAML'
cmd_time_out: 10
devices:
  - name: dat72
    type: vtape
    config: "personality=dat72;memory=1;capacity=64M;early_warning=1M;barcode=DDS001"
    fault:
      timing: "model=dds;rate=6.6MB/s"
YAML
artefact /etc/vscsid/exp-st-direct-io.yaml vscsid.yaml

. /vmtest/exp.sh

exp_start exp-st-direct-io mb=$EXP_MB
require wait_for dat72-attached 30 "dev_node tape dat72"

stko=$(find /lib/modules/$(uname -r) -name st.ko | head -n1)
for dio in 1 0; do
	if [ "$(cat /sys/bus/scsi/drivers/st/try_direct_io 2>/dev/null)" != "$dio" ]; then
		check "reload-st-dio$dio" sh -c "rmmod st && insmod $stko try_direct_io=$dio"
		require wait_for "dat72-attached-dio$dio" 30 "dev_node tape dat72"
	fi
	got=$(cat /sys/bus/scsi/drivers/st/try_direct_io 2>/dev/null)
	expect_eq "try_direct_io-$dio" "$dio" "$got"
	TD=/dev/n$(dev_tape dat72)
	exp_info "dio$dio.node=$TD" "dio$dio.st_buffer_kbs=$(cat /sys/module/st/parameters/buffer_kbs 2>/dev/null)"

	# Fixed 1 KiB blocks.
	check "dio$dio-fixed-rewind" "$MT" -f "$TD" rewind
	check "dio$dio-setblk-1024" "$MT" -f "$TD" setblk 1024
	exp_run "dio$dio-fixed1k-write" dat72 try_direct_io=$dio blocks=fixed-1k op=write dd_bs=1k -- \
		$DD if=/dev/zero of="$TD" bs=1k count=$((EXP_MB * 1024))
	check "dio$dio-fixed-rewind2" "$MT" -f "$TD" rewind
	exp_run "dio$dio-fixed1k-read" dat72 try_direct_io=$dio blocks=fixed-1k op=read dd_bs=64k -- \
		$DD if="$TD" of=/dev/null bs=64k count=$((EXP_MB * 16))
	# The thread's slow case: reading the fixed 1 KiB blocks one read() each.
	check "dio$dio-fixed-rewind3" "$MT" -f "$TD" rewind
	exp_run "dio$dio-fixed1k-read-bs1k" dat72 try_direct_io=$dio blocks=fixed-1k op=read dd_bs=1k -- \
		$DD if="$TD" of=/dev/null bs=1k count=$((EXP_MB * 1024))

	# Variable 32 KiB blocks.
	check "dio$dio-var-rewind" "$MT" -f "$TD" rewind
	check "dio$dio-setblk-0" "$MT" -f "$TD" setblk 0
	exp_run "dio$dio-var32k-write" dat72 try_direct_io=$dio blocks=var-32k op=write dd_bs=32k -- \
		$DD if=/dev/zero of="$TD" bs=32k count=$((EXP_MB * 32))
	check "dio$dio-var-rewind2" "$MT" -f "$TD" rewind
	exp_run "dio$dio-var32k-read" dat72 try_direct_io=$dio blocks=var-32k op=read dd_bs=32k -- \
		$DD if="$TD" of=/dev/null bs=32k count=$((EXP_MB * 32))
	check "dio$dio-rewind-end" "$MT" -f "$TD" rewind
done

vscsid_stop vscsid-stop
wait_for no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
kernel_clean kernel-log-clean
