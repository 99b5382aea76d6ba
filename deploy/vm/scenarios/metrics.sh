# vm-timeout: 300
# metrics: vscsid's Prometheus counters and histograms against a known
# workload, measured by scraping /metrics before and after inside the guest:
# N direct 64 KiB reads from a disk are N read_10 commands in the (32 KiB,
# 64 KiB] read bucket; N 32 KiB records to a tape are N write_6 commands in
# the (16 KiB, 32 KiB] write bucket. On a 512e disk, a partition
# whose end is not 4 KiB-aligned has a last page holding one sector: read
# alone it is a 512-byte command, read sequentially it rides on the last
# readahead command (512 bytes past a 4 KiB multiple: misaligned); the whole
# disk (4 KiB-aligned end) gives neither.
#
# With networking (deploy/vm/metrics-test boots it with --hostfwd) vscsid
# listens on 0.0.0.0:9544, the guest prints its own figures as
# "METRICS-GUEST key value" lines and "VMTEST-METRICS-READY" on the console,
# then holds with the daemon up (at most METRICS_HOLD s) until the host
# connects to guest port 9545 to say it has finished querying Prometheus.

N_READ=${N_READ:-100}
N_WRITE=${N_WRITE:-50}
METRICS_HOLD=${METRICS_HOLD:-150}
mkdir -p /etc/vscsid
cat >/etc/vscsid/metrics.yaml <<'EOF'
cmd_time_out: 5
devices:
  - name: d0
    type: vdisk
    config: "size=1GiB;lbs=512;mode=fake_rw"
  - name: p0
    type: vdisk
    config: "size=16M;lbs=512;pbexp=3;mode=store"
  - name: t0
    type: vtape
    config: "personality=lto6;memory=1;capacity=512M;barcode=MET001L6"
EOF
artefact /etc/vscsid/metrics.yaml

# The figures come from guestcheck (deploy/vm/guestcheck): scrapes read by
# Prometheus's own parser (expfmt) and PromQL series selectors (equality
# matchers), as the host's metrics-test queries Prometheus. A label matches exactly, and a
# metric missing from the scrape (a misspelt name) is an error, not a 0.
# mval FILE SELECTOR: the sum of the samples SELECTOR matches in a scrape.
mval() { "$GUESTCHECK" prom-value "$1" "$2"; }
# delta SELECTOR: mval in $W/after.prom minus mval in $W/before.prom.
delta() { "$GUESTCHECK" prom-delta "$W/before.prom" "$W/after.prom" "$1"; }
# measure NAME CMD...: scrape, run CMD as check NAME, scrape again.
measure() {
	_m=$1
	shift
	scrape_metrics "$W/before.prom" || fail "$_m-scrape-before" "wget /metrics failed"
	check "$_m" "$@"
	scrape_metrics "$W/after.prom" || fail "$_m-scrape-after" "wget /metrics failed"
	cp "$W/before.prom" "$ART/$_m.before.prom"
	cp "$W/after.prom" "$ART/$_m.after.prom"
}

dmesg_mark daemon
METRICS_LISTEN=0.0.0.0:9544 vscsid_start metrics --config /etc/vscsid/metrics.yaml
[ -n "$VSCSID_PID" ] || abort "vscsid did not start"
require wait_for d0-attached 30 "dev_node block d0"
require wait_for p0-attached 30 "dev_node block p0"
require wait_for t0-attached 30 "dev_node tape t0 && [ -e /dev/n\$(dev_tape t0) ]"
D0=$(dev_block d0)
P0=$(dev_block p0)
T0=/dev/n$(dev_tape t0)
note "d0 is /dev/$D0, p0 is /dev/$P0, t0 is $T0"

# ---------------------------------------------------------------- disk
# N direct 64 KiB reads: N READ(10) of 65536 bytes, nothing else.
measure d0-direct-reads $DD if=/dev/$D0 of=/dev/null bs=64k count=$N_READ iflag=direct
expect_eq d0-read_10-delta $N_READ "$(delta 'vscsi_scsi_commands_total{device="d0",command="read_10"}')"
expect_eq d0-commands-delta $N_READ "$(delta 'vscsi_scsi_commands_total{device="d0"}')"
expect_eq d0-read-le64k-delta $N_READ "$(delta 'vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="65536"}')"
expect_eq d0-read-le32k-delta 0 "$(delta 'vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="32768"}')"
expect_eq d0-read-count-delta $N_READ "$(delta 'vscsi_scsi_transfer_bytes_count{device="d0",direction="read"}')"
expect_eq d0-read-sum-delta $((N_READ * 65536)) "$(delta 'vscsi_scsi_transfer_bytes_sum{device="d0",direction="read"}')"
expect_eq d0-read-bytes-delta $((N_READ * 65536)) "$(delta 'vscsi_scsi_read_bytes_total{device="d0"}')"
expect_eq d0-duration-count-delta $N_READ "$(delta 'vscsi_scsi_command_duration_seconds_count{device="d0",command="read_10"}')"
expect_eq d0-no-check-conditions 0 "$(delta 'vscsi_scsi_command_check_conditions_total{device="d0"}')"

# ---------------------------------------------------------------- tape
# N 32 KiB variable records: N WRITE(6) of 32768 bytes (st adds a filemark
# at close: WRITE FILEMARKS, no data).
measure t0-writes $DD if=/dev/zero of=$T0 bs=32k count=$N_WRITE
expect_eq t0-write_6-delta $N_WRITE "$(delta 'vscsi_scsi_commands_total{device="t0",command="write_6"}')"
expect_eq t0-write-le32k-delta $N_WRITE "$(delta 'vscsi_scsi_transfer_bytes_bucket{device="t0",direction="write",le="32768"}')"
expect_eq t0-write-le16k-delta 0 "$(delta 'vscsi_scsi_transfer_bytes_bucket{device="t0",direction="write",le="16384"}')"
expect_eq t0-write-count-delta $N_WRITE "$(delta 'vscsi_scsi_transfer_bytes_count{device="t0",direction="write"}')"
expect_eq t0-written-bytes-delta $((N_WRITE * 32768)) "$(delta 'vscsi_scsi_written_bytes_total{device="t0"}')"
expect_eq t0-filemarks-delta 1 "$(delta 'vscsi_tape_filemarks_written_total{device="t0"}')"
# The drive compresses (DCE on at power-on): zeros reach the medium as a
# few bytes a record, and the cartridge holds what reached it.
expect_eq t0-data-bytes-delta $((N_WRITE * 32768)) "$(delta 'vscsi_tape_data_bytes_total{device="t0",direction="write"}')"
T0_MEDIUM=$(delta 'vscsi_tape_medium_bytes_total{device="t0",direction="write"}')
note "t0: $((N_WRITE * 32768)) bytes of zeros written, $T0_MEDIUM reached the medium"
expect_eq t0-medium-bytes-compressed 1 "$([ "$T0_MEDIUM" -gt 0 ] && [ "$T0_MEDIUM" -lt $((N_WRITE * 32768 / 10)) ] && echo 1 || echo 0)"
expect_eq t0-used-bytes-holds-medium 1 "$([ "$(mval "$W/after.prom" 'vscsi_tape_medium_used_bytes{device="t0"}')" -ge "$T0_MEDIUM" ] && echo 1 || echo 0)"

# ------------------------------------- a misaligned partition on a 512e disk
# 512e disk (512-byte logical, 4 KiB physical blocks), 16 MiB, MBR with p1
# at LBA 2048, 8193 sectors: its end is 512 bytes past a 4 KiB boundary.
le32() { printf '\\%03o\\%03o\\%03o\\%03o' $(($1 & 255)) $((($1 >> 8) & 255)) $((($1 >> 16) & 255)) $((($1 >> 24) & 255)); }
P1S=2048 P1N=8193
{
	head -c 446 /dev/zero
	printf "\\000\\376\\377\\377\\203\\376\\377\\377$(le32 $P1S)$(le32 $P1N)"
	head -c 48 /dev/zero
	printf '\125\252'
} >"$W/mbr.bin"
check mbr-size sh -c "[ \$(wc -c <$W/mbr.bin) = 512 ]"
check p0-write-mbr $DD if="$W/mbr.bin" of=/dev/$P0 bs=512 count=1 oflag=direct
check p0-rereadpt blockdev --rereadpt /dev/$P0
require wait_for p0-partition 10 "[ -e /dev/${P0}1 ]"
expect_eq p0-p1-sectors $P1N "$(cat /sys/block/$P0/${P0}1/size)"
expect_eq p0-p1-soft-block-size 512 "$(blockdev --getbsz /dev/${P0}1)"

# read_sizes LABEL: the p0 read commands of the last measure by size, as
# the notes and METRICS-GUEST lines show them; sets le512, le2k, le4k, cnt,
# bytes, mis.
read_sizes() {
	le512=$(delta 'vscsi_scsi_transfer_bytes_bucket{device="p0",direction="read",le="512"}')
	le2k=$(delta 'vscsi_scsi_transfer_bytes_bucket{device="p0",direction="read",le="2048"}')
	le4k=$(delta 'vscsi_scsi_transfer_bytes_bucket{device="p0",direction="read",le="4096"}')
	cnt=$(delta 'vscsi_scsi_transfer_bytes_count{device="p0",direction="read"}')
	bytes=$(delta 'vscsi_scsi_read_bytes_total{device="p0"}')
	mis=$(delta 'vscsi_disk_misaligned_commands_total{device="p0",direction="read"}')
	note "$1: $cnt read commands, $bytes bytes; <=512 B: $le512, <=4 KiB: $le4k, misaligned: $mis"
	echo "METRICS-GUEST ${1}_read_commands $cnt"
	echo "METRICS-GUEST ${1}_read_le512 $le512"
	echo "METRICS-GUEST ${1}_read_misaligned $mis"
}
# fresh: drop the page cache, so the next buffered read goes to the disk.
fresh() { sync; echo 3 >/proc/sys/vm/drop_caches; }

# What 6.1 does (bookworm; the 512-byte requests reported in 2005, in the
# thread "Merging fails reading /dev/uba1", came from the buffer-head reads
# of 2.6): a sequential buffered read of p1 goes through
# readahead in large commands; the last page, which holds one sector of p1,
# is appended to the last command, so exactly one command is 512 bytes past
# a 4 KiB multiple (counted misaligned) and none is small.
fresh
measure p1-sequential-read $DD if=/dev/${P0}1 of=/dev/null bs=64k
read_sizes p1_sequential
expect_eq p1-sequential-bytes $((P1N * 512)) "$bytes"
expect_eq p1-sequential-one-misaligned 1 "$mis"
expect_eq p1-sequential-no-sub-4k 0 "$le2k"
# Read on its own (a file system reading its last block, blkid probing the
# end), that page is one 512-byte command: the small misaligned read.
fresh
measure p1-tail-read $DD if=/dev/${P0}1 of=/dev/null bs=512 skip=$((P1N - 1)) count=1
read_sizes p1_tail
expect_eq p1-tail-one-command 1 "$cnt"
expect_eq p1-tail-512-byte-command 1 "$le512"
expect_eq p1-tail-misaligned 1 "$mis"

# The whole disk ends 4 KiB-aligned: no sub-4 KiB command either way; its
# last sector alone is one 4 KiB command (the whole last page).
fresh
measure whole-sequential-read $DD if=/dev/$P0 of=/dev/null bs=64k
read_sizes whole_sequential
expect_eq whole-sequential-bytes $((16 * 1024 * 1024)) "$bytes"
expect_eq whole-sequential-no-sub-4k 0 "$le2k"
expect_eq whole-sequential-none-misaligned 0 "$mis"
fresh
measure whole-tail-read $DD if=/dev/$P0 of=/dev/null bs=512 skip=$((16 * 2048 - 1)) count=1
read_sizes whole_tail
expect_eq whole-tail-one-command 1 "$cnt"
expect_eq whole-tail-no-512-byte-command 0 "$le2k"
expect_eq whole-tail-one-4k-command 1 "$le4k"
expect_eq whole-tail-4k-bytes 4096 "$bytes"

# ---------------------------------------------------------------- host
if [ -n "${VMTEST_NET:-}" ]; then
	scrape_metrics "$W/ready.prom" || fail ready-scrape "wget /metrics failed"
	cp "$W/ready.prom" "$ART/ready.prom"
	# The figures the host compares with what Prometheus scraped.
	figure() { echo "METRICS-GUEST $1 $(mval "$W/ready.prom" "$2")"; }
	figure d0_read_10 'vscsi_scsi_commands_total{device="d0",command="read_10"}'
	figure d0_read_le65536 'vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="65536"}'
	figure d0_read_le32768 'vscsi_scsi_transfer_bytes_bucket{device="d0",direction="read",le="32768"}'
	figure t0_write_6 'vscsi_scsi_commands_total{device="t0",command="write_6"}'
	figure t0_write_le32768 'vscsi_scsi_transfer_bytes_bucket{device="t0",direction="write",le="32768"}'
	figure t0_write_le16384 'vscsi_scsi_transfer_bytes_bucket{device="t0",direction="write",le="16384"}'
	figure p0_read_le512 'vscsi_scsi_transfer_bytes_bucket{device="p0",direction="read",le="512"}'
	figure p0_read_misaligned 'vscsi_disk_misaligned_commands_total{device="p0",direction="read"}'
	echo "VMTEST-METRICS-READY"
	# Hold with the daemon up until the host says it is done.
	s=$(date +%s)
	if timeout "$METRICS_HOLD" nc -l -p 9545 </dev/null >/dev/null 2>&1; then
		pass host-queried
	else
		fail host-queried "no word from the host within ${METRICS_HOLD}s"
	fi
	note "held $(($(date +%s) - s)) s for the host"
	# Scrapes through the forward add no SCSI commands.
	scrape_metrics "$W/held.prom" || fail held-scrape "wget /metrics failed"
	for d in d0 p0 t0; do
		expect_eq "$d-commands-unchanged-while-scraped" "$(mval "$W/ready.prom" "vscsi_scsi_commands_total{device=\"$d\"}")" \
			"$(mval "$W/held.prom" "vscsi_scsi_commands_total{device=\"$d\"}")"
	done
fi

vscsid_stop vscsid-stop
wait_for no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
kernel_clean kernel-log-clean
