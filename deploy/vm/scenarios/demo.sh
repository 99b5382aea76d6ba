# vm-timeout: 180
# demo: vscsid with no --config serves its built-in default (one vdisk, one
# vtape, and a library of two vtapes); show what the kernel made of it, the
# way a user would look.

banner() { printf '\n======== %s\n' "$*"; }
show() { # show CMD...: print the command and its output (under timeout)
	echo "\$ $*"
	timeout 60 "$@" 2>&1 </dev/null
}
showf() { # showf ERE CMD...: the same, only output lines matching ERE
	_re=$1
	shift
	echo "\$ $*"
	timeout 60 "$@" 2>&1 </dev/null | grep -E -- "$_re"
}

dmesg_mark daemon
vscsid_start default
[ -n "$VSCSID_PID" ] || abort "vscsid did not start"

# Wait until the kernel has attached every LUN the daemon exported.
names_all() {
	for l in "$CONFIGFS"/loopback/naa.*/tpgt_*/lun/lun_*/*; do
		[ -L "$l" ] && basename "$(readlink "$l")"
	done
}
attached() {
	[ -n "$(names_all)" ] || return 1
	for n in $(names_all); do
		dev_node block "$n" >/dev/null || dev_node tape "$n" >/dev/null || dev_node changer "$n" >/dev/null || return 1
	done
}
wait_for devices-attached 30 attached
names=$(names_all)

banner "SCSI devices (lsscsi -g)"
show /usr/bin/lsscsi -g
banner "kernel log"
dmesg_since daemon | grep -E 'scsi |sd |st |Attached' | sed 's/^\[[ .0-9]*\] //'

disks=0 tapes=0 libraries=0
for n in $names; do
	if sch=$(dev_changer "$n"); then
		libraries=$((libraries + 1))
		sg=$(dev_sg "$n")
		banner "$n: library /dev/$sch, /dev/$sg ($(dev_hctl "$n"))"
		show /usr/bin/mtx -f "/dev/$sg" status
		check "$n-mtx-status" /usr/bin/mtx -f "/dev/$sg" status
		show /usr/bin/mtx -f "/dev/$sg" load 1 0
		show /usr/bin/mtx -f "/dev/$sg" status
		show /usr/bin/mtx -f "/dev/$sg" unload
		continue
	fi
	if sd=$(dev_block "$n"); then
		disks=$((disks + 1))
		banner "$n: disk /dev/$sd ($(dev_hctl "$n"))"
		showf 'identification|revision|device type' sg_inq "/dev/$sd"
		showf 'Logical block length|blocks per|Lowest aligned|Device size' sg_readcap -l "/dev/$sd"
		showf '^ *(Maximum|Optimal) transfer length' sg_vpd -p bl "/dev/$sd"
		echo "queue: logical_block_size=$(cat /sys/block/$sd/queue/logical_block_size)" \
			"physical_block_size=$(cat /sys/block/$sd/queue/physical_block_size)" \
			"max_sectors_kb=$(cat /sys/block/$sd/queue/max_sectors_kb)"
		show $DD if="/dev/$sd" of=/dev/null bs=1M count=256 iflag=direct
		check "$n-dd-direct-read" $DD if="/dev/$sd" of=/dev/null bs=1M count=64 iflag=direct
	elif st=$(dev_tape "$n"); then
		tapes=$((tapes + 1))
		banner "$n: tape /dev/$st, /dev/n$st ($(dev_hctl "$n"))"
		showf 'identification|revision|device type' sg_inq "/dev/$(dev_sg "$n")"
		show "$MT" -f "/dev/n$st" status
		check "$n-mt-status" "$MT" -f "/dev/n$st" status
		if printf '%s\n' "$OUT" | grep -q DR_OPEN; then
			echo "(no cartridge: a library's drive, loaded through the library with mtx)"
			continue
		fi
		$DD if=/dev/urandom of="$W/demo" bs=32k count=8 2>/dev/null
		show "$MT" -f "/dev/n$st" rewind
		show $DD if="$W/demo" of="/dev/n$st" bs=32k
		show "$MT" -f "/dev/n$st" rewind
		show $DD if="/dev/n$st" of="$W/demo.back" bs=64k
		expect_eq "$n-round-trip" "$(md5 "$W/demo")" "$(md5 "$W/demo.back")"
		show "$MT" -f "/dev/n$st" status
	fi
done

banner "metrics (excerpt)"
if scrape_metrics "$W/metrics.txt"; then
	grep -E '^vscsi_(device_info|scsi_commands_total|scsi_read_bytes_total|scsi_written_bytes_total)' "$W/metrics.txt"
fi

echo
check_sh default-has-a-disk "[ $disks -ge 1 ]"
check_sh default-has-a-tape "[ $tapes -ge 1 ]"
check_sh default-has-a-library "[ $libraries -ge 1 ]"
vscsid_stop vscsid-sigterm-exit-0
wait_for configfs-no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
