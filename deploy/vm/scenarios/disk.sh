# vm-timeout: 420
# disk: vscsid's vdisk through TCMU + tcm_loop + sd, checked with the tools a
# storage engineer uses. Three geometries (512n, 4Kn, 512e with lowest
# aligned LBA 1) in fake_rw mode and one store-mode disk.
#
# The block-layer values the kernel derives (alignment_offset, minimum and
# optimal I/O size, max_sectors_kb) are compared with what the same kernel
# reports for the kernel's own emulator, scsi_debug, given the same
# geometry: the expectation is the kernel's reading of the same READ
# CAPACITY(16) and Block Limits VPD, on whatever kernel the suite boots.

mkdir -p /etc/vscsid
cat >/etc/vscsid/disk.yaml <<'EOF'
cmd_time_out: 5
devices:
  - name: d512n
    type: vdisk
    config: "size=1GiB;lbs=512;mode=fake_rw;opt_blks=512;max_blks=1024"
  - name: d4kn
    type: vdisk
    config: "size=4GiB;lbs=4096;mode=fake_rw;opt_blks=256;max_blks=256;product=VDISK-4KN"
  - name: d512e
    type: vdisk
    config:
      size: 2GiB
      lbs: 512
      pbexp: 3
      lowest_aligned: 1
      mode: fake_rw
      opt_blks: 2048
      max_blks: 4096
  - name: store0
    type: vdisk
    config: "size=256MiB;lbs=512;mode=store;store_size=64M;lbpu=1"
  - name: atomic0
    type: vdisk
    config: "size=64MiB;lbs=512;pbexp=3;mode=store;atomic_wr=1"
  - name: zoned0
    type: vdisk
    config: "size=256MiB;mode=store;zoned=host-managed;zone_size=16M"
  - name: zonedfs
    type: vdisk
    config: "size=512MiB;mode=store;zoned=host-managed;zone_size=4M;zone_nr_conv=8"
  - name: zonedha
    type: vdisk
    config: "size=64MiB;mode=store;zoned=host-aware;zone_size=16M"
  - name: zonedcap
    type: vdisk
    config: "size=64MiB;mode=store;zoned=host-managed;zone_size=16M;zone_cap=12M"
EOF
artefact /etc/vscsid/disk.yaml

# name lbs pbexp lowest_aligned opt_blks max_blks bytes product
GEOMETRIES="
d512n 512 0 0 512 1024 1073741824 VDISK
d4kn 4096 0 0 256 256 4294967296 VDISK-4KN
d512e 512 3 1 2048 4096 2147483648 VDISK
store0 512 0 0 1024 0 268435456 VDISK
"
QATTRS="logical_block_size physical_block_size minimum_io_size optimal_io_size max_sectors_kb rotational add_random"
# Compared one to one with scsi_debug (whose MAXIMUM TRANSFER LENGTH cannot
# be set: max_sectors_kb is compared after capping, below). Both report a
# non-rotating medium by default (VPD B1h rate 1): rotational=0,
# add_random=0, as a disk without latency of its own should look.
REFATTRS="logical_block_size physical_block_size minimum_io_size optimal_io_size alignment_offset rotational add_random"

# vpd_blocks LABEL TEXT: the number after "LABEL:" in sg_vpd output, which
# sg3-utils prints in decimal ("512 blocks", 1.46) or hex ("0x200", 1.48).
vpd_blocks() {
	_v=$(printf '%s\n' "$2" | sed -nE "s/^ *$1: *(0x[0-9a-fA-F]+|[0-9]+).*/\1/p" | head -n1)
	[ -n "$_v" ] && echo $((_v))
}

# qvals SDX: the block-layer view of a disk, one "attr=value" per line.
qvals() {
	for a in $QATTRS; do echo "$a=$(cat /sys/block/$1/queue/$a)"; done
	echo "alignment_offset=$(cat /sys/block/$1/alignment_offset)"
}

# ---------------------------------------------------------------- reference
# scsi_debug with each geometry; its disk is the only sd while loaded.
sdebug=/lib/modules/$(uname -r)/kernel/drivers/scsi/scsi_debug.ko
echo "$GEOMETRIES" >"$W/geometries"
while read -r n lbs pbexp low opt max bytes prod; do
	[ -n "$n" ] || continue
	check "ref-$n-scsi_debug-load" insmod "$sdebug" dev_size_mb=16 sector_size="$lbs" \
		physblk_exp="$pbexp" lowest_aligned="$low" opt_blks="$opt"
	if wait_until 20 "ls /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/sd* >/dev/null"; then
		d=$(basename /sys/bus/pseudo/drivers/scsi_debug/adapter*/host*/target*/*/block/sd*)
		qvals "$d" >"$W/ref-$n"
		note "scsi_debug $n: $(tr '\n' ' ' <"$W/ref-$n")"
	else
		fail "ref-$n-scsi_debug-disk" "scsi_debug disk did not appear"
	fi
	check "ref-$n-scsi_debug-unload" rmmod scsi_debug
done <"$W/geometries"

# ------------------------------------------------------------------- daemon
dmesg_mark daemon
vscsid_start disk --config /etc/vscsid/disk.yaml
[ -n "$VSCSID_PID" ] || abort "vscsid did not start"

for n in d512n d4kn d512e store0 atomic0 zoned0 zonedfs zonedha zonedcap; do
	require wait_for "$n-attached" 30 "dev_node block $n && dev_node sg $n"
done

# ---------------------------------------------------------- per-disk checks
while read -r n lbs pbexp low opt max bytes prod; do
	[ -n "$n" ] || continue
	sd=$(dev_block "$n")
	sg=$(dev_sg "$n")
	blocks=$((bytes / lbs))
	note "$n is /dev/$sd (/dev/$sg, $(dev_hctl "$n"))"

	check_sh "$n-dmesg-attached" "dmesg_since daemon | grep >/dev/null '\\[$sd\\] Attached SCSI disk'"
	check_sh "$n-dmesg-capacity" "dmesg_since daemon | grep >/dev/null '\\[$sd\\] $blocks $lbs-byte logical blocks'"
	expect_eq "$n-sysfs-vendor" VSCSI "$(sed 's/ *$//' /sys/block/$sd/device/vendor)"
	expect_eq "$n-sysfs-model" "$prod" "$(sed 's/ *$//' /sys/block/$sd/device/model)"
	expect_eq "$n-sysfs-type" 0 "$(cat /sys/block/$sd/device/type)"

	expect_output "$n-sg_inq-vendor" '^ *Vendor identification: VSCSI *$' sg_inq "/dev/$sd"
	expect_match "$n-sg_inq-product" "^ *Product identification: $prod *\$" "$OUT"
	expect_match "$n-sg_inq-pdt-disk" 'Peripheral device type: disk' "$OUT"
	# Version descriptors: SBC-4, and SBC-3 for initiators that look
	# for it (as on LIO's backstores and scsi_debug).
	expect_output "$n-sg_inq-sbc4" 'SBC-4 \(no version claimed\)' sg_inq -d "/dev/$sd"
	expect_match "$n-sg_inq-sbc3" 'SBC-3 \(no version claimed\)' "$OUT"

	check "$n-sg_vpd-bl" sg_vpd -p bl "/dev/$sd"
	expect_eq "$n-sg_vpd-bl-optimal" "$opt" "$(vpd_blocks 'Optimal transfer length' "$OUT")"
	expect_eq "$n-sg_vpd-bl-maximum" "$max" "$(vpd_blocks 'Maximum transfer length' "$OUT")"
	expect_output "$n-sg_readcap-lbs" "Logical block length=$lbs bytes" sg_readcap -l "/dev/$sd"
	expect_match "$n-sg_readcap-pbexp" "Logical blocks per physical block exponent=$pbexp" "$OUT"
	expect_match "$n-sg_readcap-lowest-aligned" "Lowest aligned LBA=$low\$" "$OUT"
	expect_match "$n-sg_readcap-blocks" "Number of logical blocks=$blocks\$" "$OUT"

	# Block layer: absolute values, then the scsi_debug reference.
	expect_eq "$n-logical_block_size" "$lbs" "$(cat /sys/block/$sd/queue/logical_block_size)"
	expect_eq "$n-physical_block_size" "$((lbs << pbexp))" "$(cat /sys/block/$sd/queue/physical_block_size)"
	expect_eq "$n-alignment_offset" "$((low * lbs))" "$(cat /sys/block/$sd/alignment_offset)"
	expect_eq "$n-size-sectors" "$((bytes / 512))" "$(cat /sys/block/$sd/size)"
	expect_eq "$n-optimal_io_size" "$((opt * lbs))" "$(cat /sys/block/$sd/queue/optimal_io_size)"
	expect_eq "$n-rotational" 0 "$(cat /sys/block/$sd/queue/rotational)"
	if [ -f "$W/ref-$n" ]; then
		qvals "$sd" >"$W/got-$n"
		for a in $REFATTRS; do
			expect_eq "$n-$a-as-scsi_debug" "$(sed -n "s/^$a=//p" "$W/ref-$n")" "$(sed -n "s/^$a=//p" "$W/got-$n")"
		done
		# The kernel's default request size for this geometry (6.1: the
		# optimal transfer length; 6.12: BLK_DEF_MAX_SECTORS_CAP), capped
		# by the MAXIMUM TRANSFER LENGTH.
		want=$(sed -n "s/^max_sectors_kb=//p" "$W/ref-$n")
		[ "$max" -gt 0 ] && [ $((max * lbs / 1024)) -lt "$want" ] && want=$((max * lbs / 1024))
		expect_eq "$n-max_sectors_kb" "$want" "$(cat /sys/block/$sd/queue/max_sectors_kb)"
	fi

	# MAXIMUM TRANSFER LENGTH bounds max_sectors_kb: the maximum is
	# accepted, twice the maximum is refused (6.1) or clamped (6.12).
	if [ "$max" -gt 0 ]; then
		cur=$(cat /sys/block/$sd/queue/max_sectors_kb)
		check_sh "$n-max_sectors_kb-accepts-max" "echo $((max * lbs / 1024)) >/sys/block/$sd/queue/max_sectors_kb"
		echo $((max * lbs / 1024 * 2)) >/sys/block/$sd/queue/max_sectors_kb 2>/dev/null
		check_sh "$n-max_sectors_kb-never-above-max" "[ \$(cat /sys/block/$sd/queue/max_sectors_kb) -le $((max * lbs / 1024)) ]"
		echo "$cur" >/sys/block/$sd/queue/max_sectors_kb
	fi

	# Plain I/O, buffered and direct.
	check "$n-dd-read-buffered" $DD if="/dev/$sd" of=/dev/null bs=1M count=16
	check "$n-dd-read-direct" $DD if="/dev/$sd" of=/dev/null bs=1M count=16 iflag=direct
	check "$n-dd-read-direct-1block" $DD if="/dev/$sd" of=/dev/null bs="$lbs" count=64 iflag=direct
	check "$n-dd-write-direct" $DD if=/dev/zero of="/dev/$sd" bs=1M count=16 oflag=direct
	check "$n-dd-write-buffered" $DD if=/dev/zero of="/dev/$sd" bs=64k count=64 conv=fsync
	check "$n-dd-read-last-block" $DD if="/dev/$sd" of=/dev/null bs="$lbs" skip=$((blocks - 1)) count=1 iflag=direct

	# Out of range: READ(10)/READ(16) at LBA = capacity, and a READ(10) that
	# crosses the end, get ILLEGAL REQUEST / LBA OUT OF RANGE (21/00); the
	# last block reads.
	h=$(printf '%08x' "$blocks" | sed 's/../& /g')
	expect_output "$n-read10-at-capacity-21-00" 'Logical block address out of range' \
		sh -c "sg_raw -r $lbs /dev/$sg 28 00 $h 00 00 01 00 2>&1; true"
	expect_match "$n-read10-at-capacity-illegal-request" 'Sense key: Illegal Request' "$OUT"
	h=$(printf '%016x' "$blocks" | sed 's/../& /g')
	expect_output "$n-read16-at-capacity-21-00" 'Logical block address out of range' \
		sh -c "sg_raw -r $lbs /dev/$sg 88 00 $h 00 00 00 01 00 00 2>&1; true"
	h=$(printf '%08x' $((blocks - 1)) | sed 's/../& /g')
	expect_output "$n-read10-crossing-end-21-00" 'Logical block address out of range' \
		sh -c "sg_raw -r $((2 * lbs)) /dev/$sg 28 00 $h 00 00 02 00 2>&1; true"
	expect_output "$n-read10-last-block-good" 'SCSI Status: Good' \
		sh -c "sg_raw -r $lbs /dev/$sg 28 00 $h 00 00 01 00 2>&1"
done <"$W/geometries"

# ------------------------------------------------------------ disk specifics
sd=$(dev_block d512n)
sg=$(dev_sg d512n)
# A READ(10) longer than MAXIMUM TRANSFER LENGTH (1024 blocks) is refused
# with INVALID FIELD IN CDB (24/00); exactly the maximum is fine.
expect_output d512n-read10-above-max-24-00 'Invalid field in cdb' \
	sh -c "sg_raw -r $((1025 * 512)) /dev/$sg 28 00 00 00 00 00 00 04 01 00 2>&1; true"
expect_output d512n-read10-at-max-good 'SCSI Status: Good' \
	sh -c "sg_raw -r $((1024 * 512)) /dev/$sg 28 00 00 00 00 00 00 04 00 00 2>&1 | head -n3"

# 4Kn: the kernel refuses direct I/O smaller than a logical block.
expect_errno d4kn-direct-512-refused EINVAL $DD if="/dev/$(dev_block d4kn)" of=/dev/null bs=512 count=1 iflag=direct

# Command sizes without blktrace: /sys/block/X/stat counts completed
# requests (= SCSI commands). A 1 MiB direct read is one 1 MiB command on
# the 512e disk (max_sectors_kb >= 1024), and on d512n (MAXIMUM TRANSFER
# LENGTH 512 KiB) 1 MiB / max_sectors_kb commands, each within the maximum.
cmds() { # cmds SDX → "reads sectors"
	awk '{print $1, $3}' "/sys/block/$1/stat"
}
for n in d512e d512n; do
	sd=$(dev_block "$n")
	kb=$(cat /sys/block/$sd/queue/max_sectors_kb)
	per=$(((1024 + kb - 1) / kb))
	[ "$n" = d512e ] && expect_eq d512e-max_sectors_kb-holds-1MiB 1 "$per"
	before=$(cmds "$sd")
	check "$n-dd-1MiB-direct-32" $DD if="/dev/$sd" of=/dev/null bs=1M count=32 iflag=direct
	after=$(cmds "$sd")
	expect_eq "$n-1MiB-direct-read-commands" "$((32 * per)) 65536" \
		"$((${after% *} - ${before% *})) $((${after#* } - ${before#* }))"
done

# ---------------------------------------------- fake_rw reads are zeros
# vscsid skips the zero fill of data-area pages it knows to be zero; no
# byte of an earlier command's Data-Out may come back. Random data written
# through the same data-area pages, then direct reads of the same size.
sd=$(dev_block d512n)
sg=$(dev_sg d512n)
check fake-random-4MiB $DD if=/dev/urandom of="$W/fake-rand" bs=1M count=4
head -c 4194304 /dev/zero >"$W/zero-4MiB"
zmd5=$(md5 "$W/zero-4MiB")
for round in 1 2 3; do
	check "fake-write-direct-$round" $DD if="$W/fake-rand" of="/dev/$sd" bs=1M count=4 oflag=direct
	check_sh "fake-read-after-write-is-zero-$round" "[ \"\$($DD if=/dev/$sd bs=1M count=4 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = $zmd5 ]"
	check_sh "fake-read-again-is-zero-$round" "[ \"\$($DD if=/dev/$sd bs=64k count=64 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = $zmd5 ]"
done
# READ(10) sent with Data-Out (sg_raw -s): whatever the kernel does with a
# direction the opcode does not have, no later READ may see that data.
head -c 65536 "$W/fake-rand" >"$W/fake-64k"
rc=0; sg_raw -s 65536 -i "$W/fake-64k" "/dev/$sg" 28 00 00 00 00 00 00 00 80 00 >"$W/sg_raw-mismatch" 2>&1 || rc=$?
note "READ(10) with Data-Out: sg_raw exit $rc: $(tr '\n' ' ' <"$W/sg_raw-mismatch" | cut -c1-200)"
check_sh fake-read-after-mismatched-direction-is-zero "[ \"\$($DD if=/dev/$sd bs=64k count=64 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = $zmd5 ]"
scrape_metrics "$W/metrics-zero.txt"
expect_match metrics-zero-fill-skipped '^[1-9][0-9]*$' "$("$GUESTCHECK" prom-value "$W/metrics-zero.txt" 'vscsi_ring_zero_fill_bytes_total{device="d512n",outcome="skipped"}')"

# ------------------------------------------------------------- store mode
sd=$(dev_block store0)
check store-random-8MiB $DD if=/dev/urandom of="$W/rand" bs=1M count=8
want=$(md5 "$W/rand")
check store-write-direct $DD if="$W/rand" of="/dev/$sd" bs=1M count=8 oflag=direct
check_sh store-read-direct-md5 "[ \"\$($DD if=/dev/$sd bs=1M count=8 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = $want ]"
echo 3 >/proc/sys/vm/drop_caches
check_sh store-read-buffered-md5 "[ \"\$($DD if=/dev/$sd bs=1M count=8 2>/dev/null | md5sum | cut -d' ' -f1)\" = $want ]"
# A buffered sub-page overwrite (read-modify-write in the page cache) lands
# where it should and nowhere else.
check store-partial-overwrite $DD if=/dev/zero of="/dev/$sd" bs=512 seek=4097 count=3 conv=notrunc,fsync
check_sh store-partial-overwrite-md5 "dd if=/dev/zero of=$W/rand bs=512 seek=4097 count=3 conv=notrunc 2>/dev/null; [ \"\$($DD if=/dev/$sd bs=1M count=8 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = \"\$(md5sum <$W/rand | cut -d' ' -f1)\" ]"
# store_size=64M on a 256 MiB disk: the store wraps, LBA 64 MiB is LBA 0.
check store-wrap-write $DD if=/dev/urandom of="$W/wrap" bs=1M count=1
check store-wrap-write-at-64MiB $DD if="$W/wrap" of="/dev/$sd" bs=1M seek=64 count=1 oflag=direct
check_sh store-wrap-read-at-0 "[ \"\$($DD if=/dev/$sd bs=1M count=1 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = \"\$(md5 $W/wrap)\" ]"

# ------------------- COMPARE AND WRITE, WRITE AND VERIFY, PRE-FETCH, RSOC
# sg3-utils' own tools against the store-mode disk, at LBA 200000 (a part
# of the store no check above writes).
sd=$(dev_block store0)
sg=$(dev_sg store0)
lba=200000
lbah=$(printf '%08x' $lba | sed 's/../& /g')
check caw-data $DD if=/dev/urandom of="$W/caw-rand" bs=512 count=6
head -c 1024 "$W/caw-rand" >"$W/caw-old"
tail -c +1025 "$W/caw-rand" | head -c 1024 >"$W/caw-new"
cat "$W/caw-old" "$W/caw-new" >"$W/caw-in"
check caw-setup $DD if="$W/caw-old" of="/dev/$sd" bs=512 seek=$lba count=2 oflag=direct
check caw-match-writes sg_compare_and_write --in="$W/caw-in" --lba=$lba --num=2 --xferlen=2048 "/dev/$sg"
check_sh caw-wrote-the-new-blocks "[ \"\$($DD if=/dev/$sd bs=512 skip=$lba count=2 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = $(md5 "$W/caw-new") ]"
# The same request again: the medium holds the new blocks, so the compare
# fails (sg3-utils exit 14, MISCOMPARE) and nothing is written. With the
# new blocks as compare data except byte 700, the offset is 700.
check_sh caw-miscompare-exit-14 "rc=0; sg_compare_and_write --quiet --in=$W/caw-in --lba=$lba --num=2 --xferlen=2048 /dev/$sg || rc=\$?; [ \$rc -eq 14 ]"
b=$(od -An -tu1 -j700 -N1 "$W/caw-new" | tr -d ' ')
cp "$W/caw-new" "$W/caw-cmp"
printf "\\$(printf %03o $((255 - b)))" | dd of="$W/caw-cmp" bs=1 seek=700 conv=notrunc 2>/dev/null
cat "$W/caw-cmp" "$W/caw-old" >"$W/caw-bad"
expect_output caw-miscompare-offset-700 'Miscompare at byte offset: 700 ' \
	sh -c "sg_compare_and_write --in=$W/caw-bad --lba=$lba --num=2 --xferlen=2048 /dev/$sg 2>&1; true"
check_sh caw-miscompare-wrote-nothing "[ \"\$($DD if=/dev/$sd bs=512 skip=$lba count=2 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = $(md5 "$W/caw-new") ]"
check_sh caw-listed-in-block-limits "sg_vpd -p bl /dev/$sd | grep -E 'Maximum compare and write length: (255|0xff)'"

# WRITE AND VERIFY(10) and (16), with BYTCHK 0 and 1.
head -c 1024 "$W/caw-rand" >"$W/wv-a"
tail -c 1024 "$W/caw-rand" >"$W/wv-b"
check wv10-bytchk0 sg_write_verify --lba=$((lba + 8)) --num=2 --in="$W/wv-a" "/dev/$sg"
check_sh wv10-wrote "[ \"\$($DD if=/dev/$sd bs=512 skip=$((lba + 8)) count=2 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = $(md5 "$W/wv-a") ]"
check wv16-bytchk1 sg_write_verify --16 --bytchk=1 --lba=$((lba + 8)) --num=2 --in="$W/wv-b" "/dev/$sg"
check_sh wv16-wrote "[ \"\$($DD if=/dev/$sd bs=512 skip=$((lba + 8)) count=2 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = $(md5 "$W/wv-b") ]"

# PRE-FETCH(16) and (10): CONDITION MET for each command.
expect_output prefetch16-condition-met 'number of condition_mets=2, number of goods=0' \
	sh -c "sg_seek --pre-fetch --count=2 --lba=$lba --num-blocks=64 -v /dev/$sg 2>&1; true"
expect_output prefetch10-condition-met 'number of condition_mets=2, number of goods=0' \
	sh -c "sg_seek --pre-fetch --10 --immed --count=2 --lba=$lba --num-blocks=64 -v /dev/$sg 2>&1; true"

# REPORT SUPPORTED OPERATION CODES lists them, with timeouts.
expect_output rsoc-lists-compare-and-write '[Cc]ompare and write' sg_opcodes "/dev/$sg"
expect_match rsoc-lists-write-and-verify-16 '[Ww]rite and verify\(16\)' "$OUT"
expect_match rsoc-lists-pre-fetch-10 '[Pp]re-fetch\(10\)' "$OUT"
expect_output rsoc-timeouts ' 30 .*[Cc]ompare and write|[Cc]ompare and write.* 30( |$)' sg_opcodes --rctd "/dev/$sg"

# A WRITE(10) of one block sent with 1024 bytes of Data-Out: ILLEGAL
# REQUEST, INVALID FIELD IN COMMAND INFORMATION UNIT (as LIO's own
# backstores answer), and the block is untouched.
expect_output write-dataout-longer-0e-03 'Invalid field in command information unit' \
	sh -c "sg_raw -s 1024 -i $W/wv-a /dev/$sg 2a 00 $lbah 00 00 01 00 2>&1; true"
check_sh write-dataout-longer-wrote-nothing "[ \"\$($DD if=/dev/$sd bs=512 skip=$lba count=2 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = $(md5 "$W/caw-new") ]"

# GET LBA STATUS reports what writes mapped and sg_unmap deallocated, to
# the store's 64 KiB chunk (128 blocks). LBA 204800 (100 MiB, store offset
# 36 MiB) starts a chunk no check above writes.
glba=204800
gls() { # gls LBA: the provisioning status sg_get_lba_status reports for LBA
	# (sg3-utils 1.46 prints the number; 1.48 "lba_access:0,p_status:1 ...").
	sg_get_lba_status -bb --lba="$1" "/dev/$sg" 2>/dev/null | tr -d ' ' | sed 's/.*p_status:\([0-9]*\).*/\1/'
}
expect_eq lba-status-unwritten-deallocated 1 "$(gls $glba)"
check lba-status-write-256 $DD if=/dev/urandom of="/dev/$sd" bs=512 seek=$glba count=256 oflag=direct
expect_eq lba-status-written-mapped 0 "$(gls $glba)"
expect_eq lba-status-written-mapped-second-chunk 0 "$(gls $((glba + 255)))"
expect_output lba-status-descriptors "^ *0x0*$(printf %x $glba) +0x100 +0 " sg_get_lba_status -b --lba=$glba --maxlen=64 "/dev/$sg"
check_sh lba-status-whole-descriptors "! sg_get_lba_status -b --lba=$glba --maxlen=64 /dev/$sg 2>&1 | grep incomplete"
check lba-status-unmap-first-chunk sg_unmap --force --lba=$glba --num=128 "/dev/$sg"
expect_eq lba-status-unmapped-deallocated 1 "$(gls $glba)"
expect_eq lba-status-rest-still-mapped 0 "$(gls $((glba + 128)))"
check_sh lba-status-unmapped-reads-zeros "[ \"\$($DD if=/dev/$sd bs=512 skip=$glba count=128 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = \"\$(head -c 65536 /dev/zero | md5sum | cut -d' ' -f1)\" ]"
# The kernel's own discard (BLKDISCARD), in 4 KiB pieces over the second
# chunk, frees it as one UNMAP would.
check_sh lba-status-blkdiscard-pieces "b=$(((glba + 128) * 512)); for i in \$(seq 0 15); do blkdiscard -o \$((b + i * 4096)) -l 4096 /dev/$sd; done"
expect_eq lba-status-discarded-deallocated 1 "$(gls $((glba + 128)))"
scrape_metrics "$W/metrics-gls.txt"
expect_match lba-status-metric '^[1-9][0-9]*$' "$("$GUESTCHECK" prom-value "$W/metrics-gls.txt" 'vscsi_scsi_commands_total{command="get_lba_status",device="store0"}')"

# ------------------------------------------------------------ atomic writes
# atomic_wr=1 with 4 KiB physical blocks: VPD B0 reports 128 blocks, aligned
# and granular to the physical block; Linux 6.11 and later make the queue's
# atomic write limits of them (unit 4 KiB..64 KiB) and send RWF_ATOMIC
# writes as WRITE ATOMIC(16). Older kernels (bookworm's 6.1) read none of it.
sd=$(dev_block atomic0)
check_sh atomic-vpd-max-length "sg_vpd -p bl /dev/$sd | grep -E 'Maximum atomic transfer length: (128|0x80)'"
q=/sys/block/$sd/queue
if [ -f $q/atomic_write_max_bytes ]; then
	expect_eq atomic-queue-max-bytes 65536 "$(cat $q/atomic_write_max_bytes)"
	expect_eq atomic-queue-unit-min 4096 "$(cat $q/atomic_write_unit_min_bytes)"
	expect_eq atomic-queue-unit-max 65536 "$(cat $q/atomic_write_unit_max_bytes)"
	if xfs_io -c "help pwrite" 2>&1 | grep -q -- ' -A '; then
		head -c 65536 /dev/zero | tr '\000' 'Z' >"$W/atomic-64k"
		expect_output atomic-pwrite-64k 'wrote 65536/65536 bytes' \
			xfs_io -d -c "pwrite -A -D -V1 -S 0x5a -b 65536 1048576 65536" "/dev/$sd"
		check_sh atomic-pwrite-data "[ \"\$($DD if=/dev/$sd bs=65536 skip=16 count=1 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = $(md5 "$W/atomic-64k") ]"
		# Beyond the unit maximum, and unaligned: the block layer refuses
		# them before any command is sent.
		expect_output atomic-pwrite-128k-refused 'Invalid argument' \
			sh -c "xfs_io -d -c 'pwrite -A -D -V1 -b 131072 0 131072' /dev/$sd 2>&1; true"
		expect_output atomic-pwrite-unaligned-refused 'Invalid argument' \
			sh -c "xfs_io -d -c 'pwrite -A -D -V1 -b 8192 4096 8192' /dev/$sd 2>&1; true"
		scrape_metrics "$W/metrics-atomic.txt"
		expect_match atomic-reached-vscsid '^[1-9][0-9]*$' "$("$GUESTCHECK" prom-value "$W/metrics-atomic.txt" 'vscsi_scsi_commands_total{command="write_atomic_16",device="atomic0"}')"
	else
		note "xfs_io $(xfs_io -V 2>&1) has no pwrite -A: no atomic write through the block layer"
	fi
else
	note "kernel $(uname -r) has no atomic write limits (Linux 6.11 and later): VPD checked only"
fi
# WRITE ATOMIC(16) by sg_raw on any kernel: 8 blocks at LBA 8 are within
# the limits; 4 blocks are not a multiple of the 8-block granularity.
check atomic-data $DD if=/dev/urandom of="$W/atomic-4k" bs=4096 count=1
expect_output atomic-sg-raw-good 'SCSI Status: Good' \
	sh -c "sg_raw -s 4096 -i $W/atomic-4k /dev/$(dev_sg atomic0) 9c 00 00 00 00 00 00 00 00 08 00 00 00 08 00 00 2>&1"
check_sh atomic-sg-raw-wrote "[ \"\$($DD if=/dev/$sd bs=512 skip=8 count=8 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = $(md5 "$W/atomic-4k") ]"
expect_output atomic-sg-raw-granularity-24-00 'Invalid field in cdb' \
	sh -c "sg_raw -s 2048 -i $W/atomic-4k /dev/$(dev_sg atomic0) 9c 00 00 00 00 00 00 00 00 08 00 00 00 04 00 00 2>&1; true"

# ------------------------------------------------------------ zoned (ZBC)
# A host-managed disk of 16 zones of 16 MiB (32768 sectors), the first
# conventional, through sd's zoned support and util-linux's blkzone.
sd=$(dev_block zoned0)
zb=32768
expect_eq zbc-sysfs-type 20 "$(cat /sys/block/$sd/device/type)"
expect_eq zbc-queue-zoned host-managed "$(cat /sys/block/$sd/queue/zoned)"
expect_eq zbc-queue-chunk-sectors $zb "$(cat /sys/block/$sd/queue/chunk_sectors)"
expect_eq zbc-queue-nr-zones 16 "$(cat /sys/block/$sd/queue/nr_zones)"
expect_eq zbc-queue-max-open-zones 8 "$(cat /sys/block/$sd/queue/max_open_zones)"
expect_output zbc-blkzone-report-conventional 'start: 0x000000000.*CONVENTIONAL' blkzone report -c 1 "/dev/$sd"
expect_output zbc-blkzone-report-16 "start: 0x000078000, len 0x008000" blkzone report "/dev/$sd"
expect_eq zbc-blkzone-report-lines 16 "$(printf '%s\n' "$OUT" | grep -c 'start: ')"
expect_match zbc-blkzone-zone1-empty 'start: 0x000008000, len 0x008000.* wptr 0x000000 .*zcond: ?1\(em\).*SEQ_WRITE_REQUIRED' "$OUT"
# Sequential writes at the write pointer; the zone opens implicitly.
check zbc-write-at-wp $DD if=/dev/urandom of="/dev/$sd" bs=1M seek=16 count=2 oflag=direct
expect_output zbc-wp-advanced 'wptr 0x001000 .*zcond: ?2\(oi\)' blkzone report -o $zb -c 1 "/dev/$sd"
# A write elsewhere in the zone fails. Before Linux 6.10 the kernel sends
# it, the disk answers UNALIGNED WRITE COMMAND and sd logs that; from
# 6.10 the block layer's zone write plugging knows the write pointer and
# refuses the write itself. Through sg the disk's own answer shows on any
# kernel.
dmesg_mark zbc-unaligned
expect_fail zbc-unaligned-write-fails $DD if=/dev/zero of="/dev/$sd" bs=1M seek=20 count=1 oflag=direct
if kernel_before 6 10; then
	wait_for zbc-unaligned-logged 10 "dmesg_since zbc-unaligned | grep -i 'unaligned write command'"
else
	note "kernel $(uname -r) plugs zone writes: the block layer refused the unaligned write without sending it"
fi
head -c 512 /dev/zero >"$W/z512"
expect_output zbc-sg-unaligned-21-04 'Unaligned write command' \
	sh -c "sg_raw -s 512 -i $W/z512 /dev/$(dev_sg zoned0) 8a 00 00 00 00 00 00 00 80 64 00 00 00 01 00 00 2>&1; true"
expect_output zbc-sg-boundary-21-05 'Write boundary violation' \
	sh -c "sg_raw -s 1024 -i $W/caw-in /dev/$(dev_sg zoned0) 8a 00 00 00 00 00 00 00 7f ff 00 00 00 02 00 00 2>&1; true"
# Zone management through the kernel: finish, reset, open, close.
check zbc-blkzone-finish blkzone finish -o $((2 * zb)) -c 1 "/dev/$sd"
expect_output zbc-finished-full 'zcond: ?14\(fu\)' blkzone report -o $((2 * zb)) -c 1 "/dev/$sd"
check zbc-blkzone-reset blkzone reset -o $zb -c 1 "/dev/$sd"
expect_output zbc-reset-empty 'wptr 0x000000 .*zcond: ?1\(em\)' blkzone report -o $zb -c 1 "/dev/$sd"
check_sh zbc-reset-reads-zeros "[ \"\$($DD if=/dev/$sd bs=1M skip=16 count=2 iflag=direct 2>/dev/null | md5sum | cut -d' ' -f1)\" = \"\$(head -c 2097152 /dev/zero | md5sum | cut -d' ' -f1)\" ]"
check zbc-blkzone-open blkzone open -o $((3 * zb)) -c 1 "/dev/$sd"
expect_output zbc-opened-explicitly 'zcond: ?3\(oe\)' blkzone report -o $((3 * zb)) -c 1 "/dev/$sd"
check zbc-blkzone-close blkzone close -o $((3 * zb)) -c 1 "/dev/$sd"
expect_output zbc-closed-empty 'zcond: ?1\(em\)' blkzone report -o $((3 * zb)) -c 1 "/dev/$sd"
scrape_metrics "$W/metrics-zbc.txt"
expect_match zbc-metrics '^[1-9][0-9]* [1-9][0-9]*$' "$("$GUESTCHECK" prom-value "$W/metrics-zbc.txt" 'vscsi_scsi_commands_total{command="report_zones",device="zoned0"}' 'vscsi_scsi_commands_total{command="reset_write_pointer",device="zoned0"}')"

# f2fs in its zoned mode on a host-managed disk (zonefs-tools, the other
# client, is not in Debian): 8 conventional zones of 4 MiB hold its
# metadata, the other 120 take its data sequentially. It formats, mounts,
# writes 48 MiB (more than the conventional zones hold, so that data must
# reach the sequential ones), reads them back equal after a remount, and
# leaves write pointers past their zones' starts.
# It runs on Linux 6.10 and later (the suite's newest kernel), where the
# block layer plugs zone writes, f2fs's path today; on older kernels sd's
# own write-pointer tracking, which the checks above drive, is the path,
# and make test's time is better spent there.
sd=$(dev_block zonedfs)
if kernel_before 6 10; then
	note "f2fs on the zoned disk: runs on Linux 6.10 and later, this is $(uname -r)"
elif modprobe f2fs 2>/dev/null; then
	check zbc-f2fs-mkfs mkfs.f2fs -f -m "/dev/$sd"
	mkdir -p /mnt/f2fs
	check zbc-f2fs-mount mount -t f2fs "/dev/$sd" /mnt/f2fs
	head -c 48M /dev/urandom >"$W/f2fs.data"
	check_sh zbc-f2fs-write "cp $W/f2fs.data /mnt/f2fs/data && sync && umount /mnt/f2fs && mount -t f2fs /dev/$sd /mnt/f2fs"
	check zbc-f2fs-read-back cmp "$W/f2fs.data" /mnt/f2fs/data
	check_sh zbc-f2fs-zones-written "blkzone report /dev/$sd >$W/f2fs.zones; n=\$(grep SEQ_WRITE_REQUIRED $W/f2fs.zones | grep -vc 'wptr 0x000000 ' || true)
		echo \"\$n sequential zones written\"; [ \$n -gt 0 ] || { head -n 12 $W/f2fs.zones; exit 1; }"
	check zbc-f2fs-umount umount /mnt/f2fs
else
	fail zbc-f2fs "no f2fs module in kernel $(uname -r)"
fi

# A host-aware disk: sequential write preferred zones take a write away
# from the write pointer (the zone is then marked non-sequential in
# REPORT ZONES). Linux before 6.10 sees a zoned host-aware disk; from
# 6.10 the kernel treats host-aware disks as regular ones.
sd=$(dev_block zonedha)
if kernel_before 6 10; then
	expect_eq zbc-ha-queue-zoned host-aware "$(cat /sys/block/$sd/queue/zoned)"
else
	expect_eq zbc-ha-queue-zoned none "$(cat /sys/block/$sd/queue/zoned)"
fi
expect_eq zbc-ha-sysfs-type 0 "$(cat /sys/block/$sd/device/type)"
check zbc-ha-write-off-wp $DD if=/dev/urandom of="/dev/$sd" bs=64k seek=300 count=2 oflag=direct
expect_output zbc-ha-report-non-seq '(Non_seq|NON_SEQ): 1' sg_rep_zones --start=32768 "/dev/$(dev_sg zonedha)"
expect_match zbc-ha-report-preferred '[Ss]equential write preferred' "$OUT"

# Zone capacity below the zone size (zone_cap, scsi_debug's zone_cap_mb):
# gap zones after each sequential zone. sd takes the zone starting LBA
# granularity for the zone length, so the kernel sees 4 zones of 16 MiB
# (32768 sectors), the sequential ones with a capacity of 12 MiB (24576);
# a write fills a zone to its capacity and leaves it full.
sd=$(dev_block zonedcap)
expect_eq zbc-cap-chunk-sectors 32768 "$(cat /sys/block/$sd/queue/chunk_sectors)"
expect_eq zbc-cap-nr-zones 4 "$(cat /sys/block/$sd/queue/nr_zones)"
expect_output zbc-cap-blkzone-capacity 'start: 0x000008000, len 0x008000, cap 0x006000' blkzone report "/dev/$sd"
check zbc-cap-fill-zone $DD if=/dev/urandom of="/dev/$sd" bs=1M seek=16 count=12 oflag=direct
expect_output zbc-cap-zone-full 'start: 0x000008000.*zcond: ?14\(fu\)' blkzone report -o 32768 -c 1 "/dev/$sd"
expect_output zbc-cap-sg-gap-21-09 'Attempt to access gap zone|ASC=21 ASCQ=09' \
	sh -c "sg_raw -s 512 -i $W/z512 /dev/$(dev_sg zonedcap) 8a 00 00 00 00 00 00 00 e0 00 00 00 00 01 00 00 2>&1; true"

# ------------------------------------------------- protection information
# A user (TCMU) backstore cannot carry T10 protection information: its
# attrib/ has no pi_prot_type (target_core_user.c gives LIO no init_prot,
# so target_core_configfs.c would refuse it anyway), hw_pi_prot_type is 0,
# and the data area carries only the data, never the protection
# scatterlist. The initiator sees a disk without protection.
b=$(ls -d $CONFIGFS/core/user_*/atomic0)
check_sh pi-no-prot-type-attribute "[ ! -e $b/attrib/pi_prot_type ]"
expect_eq pi-hw-prot-type-0 0 "$(cat $b/attrib/hw_pi_prot_type)"
if [ -f /sys/block/$sd/integrity/format ]; then
	expect_eq pi-integrity-none none "$(cat /sys/block/$sd/integrity/format)"
fi
check_sh pi-readcap-prot-en-0 "sg_readcap -l /dev/$sd | grep -E 'Protection: prot_en=0'"

# ------------------------------------------------- persistent reservations
# Persistent reservations are LIO's (the kernel's core answers PERSISTENT
# RESERVE for TCMU backstores). Each backstore carries the unit serial its
# VPD page 80h reports, so LIO's APTPL state is one file per device, and
# vscsid made LIO's <dbroot>/pr, where that state lives.
# unit_serial SD: VPD page 80h's serial, from the raw page (its 4-byte
# header cut): sg_vpd's text differs between sg3-utils 1.46 (bookworm) and
# 1.48 (sid).
unit_serial() { sg_vpd -p sn -r "/dev/$1" 2>/dev/null | tail -c +5 | tr -d '\000'; }
for n in d512n d4kn; do
	sd=$(dev_block "$n")
	vpd=$(unit_serial "$sd")
	expect_match "$n-vpd-80-serial" '.' "$vpd"
	expect_eq "$n-backstore-unit-serial-is-vpd-80" "T10 VPD Unit Serial Number: $vpd" \
		"$(cat $CONFIGFS/core/user_*/$n/wwn/vpd_unit_serial)"
done
dbroot=$(cat $CONFIGFS/dbroot)
check_sh pr-dir-exists "[ -d '$dbroot/pr' ]"
sd=$(dev_block d512n)
ser=$(unit_serial "$sd")
dmesg_mark pr
check pr-register sg_persist --out --register --param-sark=0x1234 "/dev/$sd"
expect_output pr-read-keys '0x1234' sg_persist --in --read-keys "/dev/$sd"
check pr-reserve sg_persist --out --reserve --param-rk=0x1234 --prout-type=1 "/dev/$sd"
expect_output pr-read-reservation 'Key=0x1234' sg_persist --in --read-reservation "/dev/$sd"
expect_match pr-reservation-type 'Write Exclusive' "$OUT"
check pr-release sg_persist --out --release --param-rk=0x1234 --prout-type=1 "/dev/$sd"
# APTPL: the registration persists in the device's own file.
check pr-register-aptpl sg_persist --out --register --param-rk=0x1234 --param-sark=0x5678 --param-aptpl "/dev/$sd"
check_sh pr-aptpl-file-is-per-device "[ -s '$dbroot/pr/aptpl_$ser' ]"
check pr-unregister sg_persist --out --register --param-rk=0x5678 --param-sark=0 "/dev/$sd"
check_sh pr-dmesg-no-aptpl-error "! dmesg_since pr | grep -i 'aptpl\|filp_open'"

# ----------------------------------------------------------------- metrics
check_sh metrics-scrape "scrape_metrics $W/metrics.txt && grep -q '^# TYPE ' $W/metrics.txt"

# ----------------------------------------------------------------- teardown
disks=""
for n in d512n d4kn d512e store0 atomic0 zoned0 zonedfs zonedha zonedcap; do disks="$disks $(dev_block "$n")"; done
vscsid_stop vscsid-sigterm-exit-0
wait_for configfs-no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
[ -z "$(configfs_residue)" ] || note "left in configfs: $(configfs_residue | tr '\n' ' ')"
for sd in $disks; do
	wait_for "sd-$sd-removed" 15 "[ ! -e /sys/block/$sd ] && [ ! -e /dev/$sd ]"
done
check_sh no-tcmu-uio-left "! grep -q '^tcm-user/' /sys/class/uio/uio*/name 2>/dev/null"
kernel_clean kernel-log-clean

