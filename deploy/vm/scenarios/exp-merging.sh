# vm-timeout: 600
# exp-merging: experiment, not a regression test (deploy/vm/experiments).
# From the mailing-list thread "Merging fails reading /dev/uba1": does reading a partition whose
# size is not a multiple of 4 KiB make the kernel send 512-byte commands?
# A 512e disk (512-byte logical, 4 KiB physical) with an MBR: p1 has an odd
# number of sectors (block size 512 for buffered I/O), p2 a multiple of 8.
# Buffered dd through the whole disk, p1, p2, and p1 after
# `blockdev --setbsz 4096`; the same on a disk advertising max_blks=8.
# Every run's vscsid metrics are scraped before and after; results.txt and
# the scrapes go out as artefacts for deploy/vm/experiments/report.
#
# The disks are mode=store (RAM, 4 MiB wrapped over the capacity), not
# fake_rw: fake_rw discards writes, so the partition table would not stick.

EXP_MB=${EXP_MB:-64}
EXP_REPS=${EXP_REPS:-3}
mkdir -p /etc/vscsid
cat >/etc/vscsid/exp-merging.yaml <<'EOF'
cmd_time_out: 10
devices:
  - name: e512
    type: vdisk
    config: "size=1GiB;lbs=512;pbexp=3;mode=store;store_size=4M"
  - name: e512m8
    type: vdisk
    config: "size=1GiB;lbs=512;pbexp=3;mode=store;store_size=4M;max_blks=8;opt_blks=8"
EOF
artefact /etc/vscsid/exp-merging.yaml vscsid.yaml

. /vmtest/exp.sh

exp_start exp-merging mb=$EXP_MB reps=$EXP_REPS
for n in e512 e512m8; do
	require wait_for "$n-attached" 30 "dev_node block $n"
done

# MBR: p1 LBA 2048 + 1000001 sectors (odd), p2 LBA 1002112 + 1000000 (a
# multiple of 8), type 0x83, written with printf+dd (the guest has no sfdisk).
le32() { printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $((($1 >> 8) & 255)) $((($1 >> 16) & 255)) $((($1 >> 24) & 255)); }
P1S=2048 P1N=1000001 P2S=1002112 P2N=1000000
{
	head -c 446 /dev/zero
	printf "\\000\\376\\377\\377\\203\\376\\377\\377$(le32 $P1S)$(le32 $P1N)"
	printf "\\000\\376\\377\\377\\203\\376\\377\\377$(le32 $P2S)$(le32 $P2N)"
	head -c 32 /dev/zero
	printf '\125\252'
} >"$W/mbr.bin"
check mbr-size sh -c "[ \$(wc -c <$W/mbr.bin) = 512 ]"

for n in e512 e512m8; do
	sd=$(dev_block "$n")
	note "$n is /dev/$sd"
	check "$n-write-mbr" $DD if="$W/mbr.bin" of="/dev/$sd" bs=512 count=1 oflag=direct
	check "$n-rereadpt" blockdev --rereadpt "/dev/$sd"
	require wait_for "$n-partitions" 10 "[ -e /dev/${sd}1 ] && [ -e /dev/${sd}2 ]"
	expect_eq "$n-p1-sectors" $P1N "$(cat /sys/block/$sd/${sd}1/size)"
	expect_eq "$n-p2-sectors" $P2N "$(cat /sys/block/$sd/${sd}2/size)"
	q=/sys/block/$sd/queue
	exp_info "$n.dev=$sd" "$n.max_sectors_kb=$(cat $q/max_sectors_kb)" \
		"$n.max_hw_sectors_kb=$(cat $q/max_hw_sectors_kb)" "$n.max_segments=$(cat $q/max_segments)" \
		"$n.physical_block_size=$(cat $q/physical_block_size)" "$n.read_ahead_kb=$(cat $q/read_ahead_kb)"
	# Repetitions interleaved, so a burst of load on the host hits every
	# target alike; the report shows the median and the range.
	for rep in $(seq "$EXP_REPS"); do
		for part in "whole:$sd" "p1:${sd}1" "p2:${sd}2"; do
			label=${part%%:*} node=${part#*:}
			exp_run "$n-$label-r$rep" "$n" "target=$label" "rep=$rep" "bsz=$(blockdev --getbsz /dev/$node)" -- \
				$DD if=/dev/$node of=/dev/null bs=10k count=$((EXP_MB * 1024 / 10))
		done
	done
	# Traced once: the request sizes reaching vscsid from p1 and p2.
	for label in p1 p2; do
		node=${sd}${label#p}
		sync
		echo 3 >/proc/sys/vm/drop_caches
		exp_trace "$n-$label" "$n" -- $DD if=/dev/$node of=/dev/null bs=10k count=20
	done
	# After the others: the block size set here may outlive the open.
	if capture blockdev --setbsz 4096 "/dev/${sd}1"; then
		# Older kernels reset the block size on the last close: hold p1
		# open on fd 3 for the runs.
		exec 3</dev/${sd}1
		blockdev --setbsz 4096 "/dev/${sd}1"
		for rep in $(seq "$EXP_REPS"); do
			exp_run "$n-p1-setbsz4096-r$rep" "$n" "target=p1+setbsz" "rep=$rep" "bsz=$(blockdev --getbsz /dev/${sd}1)" -- \
				$DD if=/dev/${sd}1 of=/dev/null bs=10k count=$((EXP_MB * 1024 / 10))
		done
		exec 3<&-
	else
		note "blockdev --setbsz 4096 /dev/${sd}1 failed: $OUT"
		exp_info "$n.setbsz=failed"
	fi
done

vscsid_stop vscsid-stop
wait_for no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
kernel_clean kernel-log-clean
