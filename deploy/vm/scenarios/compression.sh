# vm-timeout: 360
# compression: a drive's data compression (DCE, mode page 0Fh) changes
# what reaches the cartridge, as on an LTO drive, seen through st, mt-st,
# dd, sg_logs and the image files:
#  - on fresh cartridges of the same size, 64 MiB of zeros fit with DCE on
#    while 64 MiB of random data stops at early warning (ENOSPC) after
#    about capacity minus the early-warning zone; with DCE off (the
#    drive's compression=0) zeros stop there too;
#  - sg_logs decodes the data compression log page (1Bh): write ratio
#    x100 far above 100 for zeros, 100 for random data and with DCE off;
#    "Data compression enabled" follows mt-st's compression command;
#  - both read back bit-exact; the image of the zeros takes little disk;
#  - with a timing model (rate=8MB/s) zeros stream much faster than
#    random data, the difference amtapetype detects hardware compression
#    by;
#  - /metrics has the logical and the medium bytes.

CMD_TIMEOUT=60
MEDIA=/tmp/vmtest/media-compression
CTL=/usr/bin/vscsictl
[ -x "$CTL" ] || CTL=$(command -v vscsictl)
mkdir -p /etc/vscsid "$MEDIA"
for b in ZON001L6 RON001L6 ZOF001L6 ROF001L6 TIM001L6; do
	check "create-$b" "$CTL" media create --dir "$MEDIA" --barcode "$b" --capacity 48MiB --early-warning 4MiB
done
cat >/etc/vscsid/compression.yaml <<EOF
cmd_time_out: 30
devices:
  - name: zon
    type: vtape
    config: "personality=lto6;media=$MEDIA;barcode=ZON001L6"
  - name: ron
    type: vtape
    config: "personality=lto6;media=$MEDIA;barcode=RON001L6"
  - name: zoff
    type: vtape
    config: "personality=lto6;media=$MEDIA;barcode=ZOF001L6;compression=0"
  - name: roff
    type: vtape
    config: "personality=lto6;media=$MEDIA;barcode=ROF001L6;compression=0"
  - name: tim
    type: vtape
    config: "personality=lto6;media=$MEDIA;barcode=TIM001L6"
    fault:
      timing: "model=lto6;rate=8MB/s;reposition=100ms"
EOF
artefact /etc/vscsid/compression.yaml
DRIVES="zon ron zoff roff tim"

dmesg_mark daemon
vscsid_start compression --config /etc/vscsid/compression.yaml
[ -n "$VSCSID_PID" ] || abort "vscsid did not start"
for n in $DRIVES; do
	require wait_for "$n-attached" 30 "dev_node tape $n && [ -e /dev/n\$(dev_tape $n) ] && dev_node sg $n"
done
nst() { echo "/dev/n$(dev_tape "$1")"; }
sgof() { echo "/dev/$(dev_sg "$1")"; }

check random-64m $DD if=/dev/urandom of="$W/rand" bs=1M count=64
md5() { md5sum <"$1" | cut -d' ' -f1; }

# records DD-OUTPUT: the records dd wrote ("N+0 records out").
records() { printf '%s\n' "$1" | sed -n 's/^\([0-9]*\)+0 records out$/\1/p'; }

# ------------------------------------------- capacity follows the data
# 48 MiB cartridges, early warning 4 MiB before the end: 176 records of
# 256 KiB reach it (the record crossing it is written, then ENOSPC).
expect_output zon-zeros-fit '^256\+0 records out' $DD if=/dev/zero of="$(nst zon)" bs=256k count=256
expect_errno ron-random-enospc ENOSPC $DD if="$W/rand" of="$(nst ron)" bs=256k
ron_n=$(records "$OUT")
expect_errno zoff-zeros-enospc ENOSPC $DD if=/dev/zero of="$(nst zoff)" bs=256k count=256
zoff_n=$(records "$OUT")
expect_errno roff-random-enospc ENOSPC $DD if="$W/rand" of="$(nst roff)" bs=256k
roff_n=$(records "$OUT")
note "records of 256 KiB before ENOSPC: random DCE on $ron_n, zeros DCE off $zoff_n, random DCE off $roff_n; zeros DCE on: all 256"
check_sh ron-records-near-ew "[ ${ron_n:-0} -ge 170 ] && [ ${ron_n:-0} -le 178 ]"
expect_eq zoff-like-roff "$roff_n" "$zoff_n"
expect_eq roff-like-ron "$ron_n" "$roff_n"

# ------------------------------------------------------ the log pages
# sg_logs decodes page 1Bh: "Write compression ratio x100: N".
# logval NAME OUTPUT: the value sg_logs prints for NAME, in decimal (it
# prints some in hex: "Data compression enabled: 0x1").
logval() {
	_v=$(printf '%s\n' "$2" | sed -n "s/^ *$1: *\\([0-9a-fx]*\\)\$/\\1/p" | head -n1)
	[ -n "$_v" ] && echo $((_v))
}
for n in zon ron zoff; do
	check "$n-sg-logs-1b" sg_logs -p 0x1b "$(sgof "$n")"
	eval "${n}_ratio=\$(logval 'Write compression ratio x100' \"\$OUT\")"
	eval "${n}_enabled=\$(logval 'Data compression enabled' \"\$OUT\")"
	eval "${n}_mb=\$(logval 'Megabytes transferred from server' \"\$OUT\")"
done
note "write ratio x100: zeros $zon_ratio, random $ron_ratio, zeros DCE off $zoff_ratio; MiB from the initiator: $zon_mb, $ron_mb, $zoff_mb"
check_sh zon-ratio-high "[ ${zon_ratio:-0} -ge 1000 ]"
expect_eq zon-mib-from-server 64 "$zon_mb"
expect_eq ron-ratio-one 100 "$ron_ratio"
expect_eq zoff-ratio-one 100 "$zoff_ratio"
expect_eq zon-compression-enabled 1 "$zon_enabled"
expect_eq zoff-compression-disabled 0 "$zoff_enabled"
# mt-st's compression command sets DCE through MODE SELECT page 0Fh.
check zon-mt-compression-off "$MT" -f "$(nst zon)" compression 0
check zon-sg-logs-after-mt sg_logs -p 0x1b "$(sgof zon)"
expect_eq zon-mt-disabled 0 "$(logval 'Data compression enabled' "$OUT")"
check zon-mt-compression-on "$MT" -f "$(nst zon)" compression 1
check zon-sg-logs-after-mt-on sg_logs -p 0x1b "$(sgof zon)"
expect_eq zon-mt-enabled 1 "$(logval 'Data compression enabled' "$OUT")"

# --------------------------------------------------------- read back
check zon-rewind "$MT" -f "$(nst zon)" rewind
expect_output zon-read-back '^256\+0 records in' $DD if="$(nst zon)" of="$W/zon-back" bs=256k
$DD if=/dev/zero of="$W/zeros" bs=256k count=256 2>/dev/null
expect_eq zon-read-back-md5 "$(md5 "$W/zeros")" "$(md5 "$W/zon-back")"
check ron-rewind "$MT" -f "$(nst ron)" rewind
expect_output ron-read-back "^${ron_n}\\+0 records in" $DD if="$(nst ron)" of="$W/ron-back" bs=256k
$DD if="$W/rand" of="$W/ron-want" bs=256k count="$ron_n" 2>/dev/null
expect_eq ron-read-back-md5 "$(md5 "$W/ron-want")" "$(md5 "$W/ron-back")"
check zon-sg-logs-read sg_logs -p 0x1b "$(sgof zon)"
zon_read_ratio=$(logval 'Read compression ratio x100' "$OUT")
note "read ratio x100 of the zeros: $zon_read_ratio"
check_sh zon-read-ratio-high "[ ${zon_read_ratio:-0} -ge 1000 ]"

# The image holds what reached the medium: the zeros take little disk.
zon_kib=$(du -k "$MEDIA/ZON001L6.vtape" | cut -f1)
ron_kib=$(du -k "$MEDIA/RON001L6.vtape" | cut -f1)
note "image disk use: zeros $zon_kib KiB, random $ron_kib KiB"
check_sh zon-image-small "[ $zon_kib -lt 4096 ]"
check_sh ron-image-full "[ $ron_kib -ge 40000 ]"

# ----------------------------------------------------- timing follows
# rate=8MB/s applies to the bytes that reach the medium; st writes a
# filemark at close (IMMED=0), which waits for the drive's buffer. The
# zeros keep the tape waiting for data: it stops and repositions
# (backhitch) as a real drive fed too slowly does, so the reposition time
# is short here to leave the rate as the difference.
# secs DD-OUTPUT: the seconds dd reports ("... copied, 2.03 s, ...").
# The wall time of the random stream shows the rate (a lower bound, which
# a loaded host only makes safer); the comparison of the two streams is
# on the delay the timing model added to each (vscsi_fault_delay_seconds,
# its sum before and after each), which the guest's own load (dd, st,
# compression under TCG, other guests on the host) does not move.
secs() { printf '%s\n' "$1" | sed -n 's/.* copied, \([0-9.]*\) s,.*/\1/p'; }
delay_sum() { scrape_metrics "$W/tim.prom" && "$GUESTCHECK" prom-value "$W/tim.prom" 'vscsi_fault_delay_seconds_sum{device="tim"}'; }
d0=$(delay_sum)
check tim-zeros $DD if=/dev/zero of="$(nst tim)" bs=256k count=64
tz=$(secs "$OUT")
d1=$(delay_sum)
check tim-rewind "$MT" -f "$(nst tim)" rewind
check tim-random $DD if="$W/rand" of="$(nst tim)" bs=256k count=64
tr=$(secs "$OUT")
d2=$(delay_sum)
note "16 MiB at rate=8MB/s: zeros ${tz}s, random ${tr}s of wall time; the model delayed them $d0 -> $d1 -> $d2 s"
check_sh tim-random-at-rate "awk 'BEGIN { exit !($tr >= 1.9) }'"
check_sh tim-zeros-faster "awk 'BEGIN { dz = ${d1:-0} - ${d0:-0}; dr = ${d2:-0} - ${d1:-0}; print \"model delay: zeros \" dz \" s, random \" dr \" s\"; exit !(dr >= 1.5 && dz < dr / 2) }'"

# ------------------------------------------------------------ metrics
scrape_metrics "$W/m.prom" || fail metrics-scrape "wget /metrics failed"
mval() { "$GUESTCHECK" prom-value "$W/m.prom" "$1"; }
expect_eq zon-data-bytes $((64 << 20)) "$(mval 'vscsi_tape_data_bytes_total{device="zon",direction="write"}')"
zon_medium=$(mval 'vscsi_tape_medium_bytes_total{device="zon",direction="write"}')
note "zon: 64 MiB of zeros, $zon_medium bytes to the medium"
check_sh zon-medium-bytes-small "[ $zon_medium -gt 0 ] && [ $zon_medium -lt 1048576 ]"
expect_eq ron-medium-equals-data "$(mval 'vscsi_tape_data_bytes_total{device="ron",direction="write"}')" \
	"$(mval 'vscsi_tape_medium_bytes_total{device="ron",direction="write"}')"

vscsid_stop compression-stop
kernel_clean compression-kernel-clean
