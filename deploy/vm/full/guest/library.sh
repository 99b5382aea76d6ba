# shellcheck shell=bash
# The targetcli library of the tools and newest scenarios (library_run),
# and every stream through restarts (streams_under_restarts); sourced by
# those scenarios after the check library and helpers.sh. Reads $restarts
# (vmtest.restarts).

# streams_under_restarts N LSG: every stream at once through N restarts
# of vscsid (each hands every device over in place): mtx moves a
# cartridge between slot 1 and drive 0 of the targetcli library LSG; tar
# writes an archive and compares it with the files, over and over, on the
# library's drive 1 (loaded from slot 2) and on the config file's drive;
# fio runs on the config file's disk. Nothing fails: no move, no archive,
# no fio run, no restart.
streams_under_restarts() {
	local n=$1 lsg=$2 d1 ctape cdisk i t pids=()
	check streams-load-drive1 mtx -f "$lsg" load 2 1 || return
	d1=$(dev_path ntape tlt1)
	ctape=$(dev_path ntape cfgtape)
	cdisk=$(dev_path block cfgdisk)
	# The load's unit attention (28/00) goes to st's first open, as after
	# a robot load.
	for i in 1 2 3 4; do mt -f "$d1" status >/dev/null 2>&1 && break; sleep 0.5; done
	rm -f /tmp/su.stop /tmp/su.*.count
	: >/tmp/su.err
	# su_moves: a load and unload pair of the library's robot.
	su_moves() { mtx -f "$lsg" load 1 0 >/dev/null && mtx -f "$lsg" unload 1 0 >/dev/null; }
	# su_archive TAPE: an archive written and compared with the files.
	su_archive() { mt -f "$1" rewind && tar -cf "$1" -b 512 -C / "$TAR_TREE" && mt -f "$1" rewind && tar -df "$1" -b 512 -C /; }
	repeat /tmp/su.stop 0 /tmp/su.moves.count /tmp/su.err su_moves
	pids+=($!)
	for t in "$d1" "$ctape"; do
		repeat /tmp/su.stop 0 "/tmp/su.${t##*/}.count" /tmp/su.err paced su_archive "$t"
		pids+=($!)
	done
	repeat /tmp/su.stop 0 /tmp/su.fio.count /tmp/su.err fio --name=su --filename="$cdisk" --rw=randrw --bs=4k --iodepth=8 \
		--ioengine=libaio --direct=1 --size=32M --time_based --runtime=2 --output=/dev/null
	pids+=($!)
	restarts_under "$n" /tmp/su.stop "${pids[@]}"
	# shellcheck disable=SC2154 # set by restarts_under (helpers.sh)
	if [ "$restarts_failed" = 0 ] && [ ! -s /tmp/su.err ] && [ "$(cat /tmp/su.*.count 2>/dev/null | wc -l)" = 4 ]; then
		pass streams-under-restarts "$n restarts: $(cat /tmp/su.moves.count) load and unload pairs, $(cat "/tmp/su.${d1##*/}.count") archives written and compared on $d1 and $(cat "/tmp/su.${ctape##*/}.count") on $ctape, $(cat /tmp/su.fio.count) fio runs on $cdisk"
	else
		fail streams-under-restarts "$restarts_failed failed restarts; $(head -c 400 /tmp/su.err | tr '\n' ' ')"
		note "vscsid's log: $(journalctl -u vscsid --no-pager -o short-monotonic | tail -n 120)"
	fi
	check streams-unload-drive1 mtx -f "$lsg" unload 2 1
}

# library_run PERSONALITY: a tape library made with targetcli: two vtape
# drives of PERSONALITY (an LTO-8 one: the cartridges are L8) and a
# vlibrary whose drives= names them, each on its own loopback target. mtx
# drives it through sg, and Bacula's own changer script (bacula-sd's
# mtx-changer, as the storage daemon runs it) lists, loads and unloads;
# every stream at once through restarts; LTFS on drive 0; targetcli
# deletes it all.
library_run() {
local p=$1 LIBM=/var/lib/vscsid/tclib
before=$(st_list)
L1=naa.500140500000a001 L2=naa.500140500000a002 L3=naa.500140500000a003
ok=1
tcb "/backstores/user:vtape create name=tlt0 size=1G cfgstring=personality=$p;media=$LIBM" \
	"/backstores/user:vtape create name=tlt1 size=1G cfgstring=personality=$p;media=$LIBM" \
	"/backstores/user:vlibrary create name=tlib size=1G cfgstring=media=$LIBM;slots=10;mailslots=2;drives=tlt0+tlt1;cartridges=5;first=T00001L8;capacity=64M" \
	"/loopback create $L1" "/loopback/$L1/luns create /backstores/user:vtape/tlt0" \
	"/loopback create $L2" "/loopback/$L2/luns create /backstores/user:vtape/tlt1" \
	"/loopback create $L3" "/loopback/$L3/luns create /backstores/user:vlibrary/tlib" || ok=
udevadm settle -t 20 >/dev/null 2>&1
lsg=$(dev_path sg tlib)
t0=$(dev_path ntape tlt0)
note "library: sg [$lsg], tlt0 [$t0]; $(vscsictl devices 2>&1 | grep -E '^(tlib|tlt)' | tr '\n' ';')"
if [ -n "$ok" ] && [ -n "$lsg" ] && [ -n "$t0" ]; then
	pass targetcli-library "$lsg, drive 0 $t0"
	# ch's probe reads each drive's SCSI address from READ ELEMENT
	# STATUS: the drives are on loopback targets of their own, so the
	# library says NOT BUS and ch binds none of them (nor holds them).
	check_sh library-ch-not-bus 'lsmod | grep -q "^ch " || modprobe ch; udevadm settle -t 10
		dmesg | grep -E "\] ch [0-9:]+: \[ch[0-9]+\] not this SCSI bus$" | tail -n 2
		! dmesg | grep -q "ID/LUN unknown"'
	expect_output library-mtx-status '^ *Storage Changer .*:2 Drives, 12 Slots \( 2 Import/Export \)' mtx -f "$lsg" status
	expect_output library-mtx-barcodes '^ +Storage Element 5:Full :VolumeTag=T00005L8' mtx -f "$lsg" status
	MC=/etc/bacula/scripts/mtx-changer
	expect_eq bacula-mtx-changer-slots 12 "$($MC "$lsg" slots 2>&1)"
	expect_output bacula-mtx-changer-list '^3:T00003L8$' "$MC" "$lsg" list
	check bacula-mtx-changer-load "$MC" "$lsg" load 3 "$t0" 0
	expect_eq bacula-mtx-changer-loaded 3 "$($MC "$lsg" loaded 3 "$t0" 0 2>&1)"
	expect_output bacula-drive-online ONLINE mt -f "$t0" status
	check bacula-drive-io tape_roundtrip "$t0"
	expect_output bacula-mtx-changer-list-drive '^3:T00003L8$' "$MC" "$lsg" list
	check bacula-mtx-changer-unload "$MC" "$lsg" unload 3 "$t0" 0
	expect_eq bacula-mtx-changer-loaded-empty 0 "$($MC "$lsg" loaded 3 "$t0" 0 2>&1)"
	check_sh library-survives-restart "systemctl restart vscsid && sleep 2 && mtx -f $lsg status | grep -q 'Storage Element 3:Full :VolumeTag=T00003L8'"
	streams_under_restarts "$restarts" "$lsg"
	check_sh library-moves-end-in-slot "mtx -f $lsg status | grep 'Storage Element 1:Full :VolumeTag=T00001L8' >/dev/null"
	# LTFS on a library's drive: a cartridge in through the mail slot,
	# loaded by mtx, then the whole LTFS scenario on drive 0, and back.
	if ltfs_available; then
		modprobe fuse 2>/dev/null
		# (2 GiB, the default: on 1 GiB LTFS keeps too little for data and
		# mounts read-only, "Medium has no space")
		check library-ltfs-cartridge vscsictl media create --dir "$LIBM" --barcode LTFS01L8
		check library-ltfs-import vscsictl library import tlib LTFS01L8
		expect_output library-ltfs-in-mailslot '^ +Storage Element 11 IMPORT/EXPORT:Full :VolumeTag=LTFS01L8' mtx -f "$lsg" status
		if check library-ltfs-load mtx -f "$lsg" load 11 0; then
			lt0=$(dev_path sg tlt0)
			# After a robot load, backup software polls the drive until it is
			# ready (mtx-changer's wait_for_drive); so does this, taking the
			# unit attentions the restart and the load left (29/00, 28/00).
			check_sh library-ltfs-drive-ready "for i in 1 2 3 4; do sg_turs $lt0 && exit 0; done; exit 1"
			ltfs_on_drive "library-$p" tlt0 "$lt0" "$p"
			check library-ltfs-unload mtx -f "$lsg" unload 11 0
		fi
	fi
else
	fail targetcli-library "created: ${ok:-no}; sg [$lsg], tlt0 [$t0]"
fi
# targetcli deletes them: the storage objects, the LUNs and vscsid's
# devices go.
check_sh targetcli-library-deleted "tcb '/loopback delete $L1' '/loopback delete $L2' '/loopback delete $L3' \
		'/backstores/user:vlibrary delete tlib' '/backstores/user:vtape delete tlt0' '/backstores/user:vtape delete tlt1'
	udevadm settle -t 20
	! ls -d /sys/kernel/config/target/core/user_*/tlib /sys/kernel/config/target/core/user_*/tlt[01] 2>/dev/null
	! vscsictl devices | grep -q -w -e tlib -e tlt0 -e tlt1"
}
