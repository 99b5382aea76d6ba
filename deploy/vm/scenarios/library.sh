# vm-timeout: 900
# library: vscsid's vlibrary (an SMC medium changer) through TCMU + tcm_loop,
# bound by the kernel's ch driver and driven through sg by mtx, the way a
# backup administrator would: status with barcodes, load, unload, transfer, exchange,
# first/next, inventory, eepos; the drive that mtx loaded is the /dev/nstN
# whose serial number READ ELEMENT STATUS (DVCID) names, mt sees it online
# and tar writes and reads it; every refused move gives mtx's error and the
# sense a real library gives; an operator's import shows up in mtx status;
# a multi-volume GNU tar spans three cartridges, loaded by mtx from its
# --new-volume-script, and restores bit-exact; the inventory survives
# restarts and kill -9 in the middle of a series of moves. Then the other
# library models (identity, element addresses, default counts), cleaning
# through TapeAlert and a CLN cartridge, and OPEN/CLOSE IMPORT/EXPORT
# ELEMENT.

CMD_TIMEOUT=120
CTL=/usr/bin/vscsictl
[ -x "$CTL" ] || CTL=$(command -v vscsictl)
MTX=/usr/bin/mtx
LIBM=/tmp/vmtest/library
STRICT=/tmp/vmtest/strict
mkdir -p /etc/vscsid "$LIBM" "$STRICT"
cat >/etc/vscsid/library.yaml <<EOF
cmd_time_out: 30
devices:
  - name: ltape0
    type: vtape
    config: "personality=lto8;media=$LIBM"
  - name: ltape1
    type: vtape
    config: "personality=lto8;media=$LIBM"
  - name: lib0
    type: vlibrary
    config: "media=$LIBM;slots=8;mailslots=2;drives=ltape0+ltape1;cartridges=6;first=A00001L8;capacity=4M"
  - name: stape0
    type: vtape
    config: "personality=lto8;media=$STRICT"
  - name: strict
    type: vlibrary
    config: "personality=ibm-ts3100;media=$STRICT;slots=4;mailslots=1;drives=stape0;autounload=0;cartridges=2;first=S00001L8"
EOF
artefact /etc/vscsid/library.yaml

start_library() { # start_library LOGNAME
	vscsid_start "$1" --config /etc/vscsid/library.yaml --dbus=off
	[ -n "$VSCSID_PID" ] || abort "vscsid did not start"
	for n in ltape0 ltape1 stape0; do
		require wait_for "$1-$n-attached" 30 "dev_node tape $n && dev_node sg $n"
	done
	for n in lib0 strict; do
		require wait_for "$1-$n-attached" 30 "dev_node changer $n && dev_node sg $n"
	done
}

dmesg_mark daemon
start_library library
SG=/dev/$(dev_sg lib0)
SG2=/dev/$(dev_sg strict)
T0=/dev/n$(dev_tape ltape0)
T1=/dev/n$(dev_tape ltape1)
TS=/dev/n$(dev_tape stape0)
export SG SG2 T0 T1 TS MTX CTL
note "lib0 $SG /dev/$(dev_changer lib0), strict $SG2, drives $T0 $T1 $TS"

# The kernel's view: ch bound, a mediumx in lsscsi, the cartridges created.
check_sh ch-attached "dmesg | grep -E 'Attached scsi changer ch[0-9]+' >/dev/null"
expect_output lsscsi-mediumx "^\\[[0-9:]+\\] +mediumx +VSCSI +VLIBRARY .*/dev/sch[0-9]+ +$SG *\$" /usr/bin/lsscsi -g
expect_eq cartridges-created 8 "$(ls "$LIBM"/*.vtape "$STRICT"/*.vtape | wc -l)"

# mtx status: drives, slots, mail slots, barcodes.
expect_output status-header "^ *Storage Changer $SG:2 Drives, 10 Slots \\( 2 Import/Export \\)\$" "$MTX" -f "$SG" status
expect_output status-slot1 '^ +Storage Element 1:Full :VolumeTag=A00001L8 *$' "$MTX" -f "$SG" status
expect_output status-slot6 '^ +Storage Element 6:Full :VolumeTag=A00006L8 *$' "$MTX" -f "$SG" status
expect_output status-slot8-empty '^ +Storage Element 8:Empty *$' "$MTX" -f "$SG" status
expect_output status-mail '^ +Storage Element 9 IMPORT/EXPORT:Empty *$' "$MTX" -f "$SG" status
expect_output status-drive1-empty '^Data Transfer Element 1:Empty *$' "$MTX" -f "$SG" status
expect_output strict-header "^ *Storage Changer $SG2:1 Drives, 5 Slots \\( 1 Import/Export \\)\$" "$MTX" -f "$SG2" status
expect_output inquiry-ibm 'Product ID: .3573-TL' "$MTX" -f "$SG2" inquiry

# mtx load: the cartridge goes into drive 0, which is ltape0, the drive
# whose serial READ ELEMENT STATUS (DVCID) reports for element 0.
check mtx-load "$MTX" -f "$SG" load 2 0
expect_output status-drive0-loaded '^Data Transfer Element 0:Full \(Storage Element 2 Loaded\):VolumeTag = A00002L8 *$' "$MTX" -f "$SG" status
expect_output status-slot2-empty '^ +Storage Element 2:Empty *$' "$MTX" -f "$SG" status
# The unit serial number VPD page raw (sg3-utils prints it differently
# from version to version): its data after the 4-byte header.
serial=$(sg_inq -p 0x80 -r "/dev/$(dev_sg ltape0)" | tail -c +5 | tr -d ' \000')
note "ltape0 serial $serial"
check dvcid-res sg_raw -o "$W/res.bin" -r 1024 "$SG" b8 04 00 00 00 01 01 00 04 00 00 00
note "READ ELEMENT STATUS, drives, DVCID: $(od -A x -t x1 "$W/res.bin" | head -n 8)"
check_sh dvcid-names-ltape0 "[ -n '$serial' ] && tr -d '\\000' <'$W/res.bin' | grep -F '$serial' >/dev/null"
expect_output loaded-mt-online 'ONLINE' /usr/bin/mt-st -f "$T0" status
expect_output loaded-vscsictl '^ltape0 .* A00002L8 ' "$CTL" devices
check_sh loaded-tar-roundtrip "
	dd if=/dev/urandom of=$W/lib.data bs=64k count=16 2>/dev/null
	/usr/bin/tar -C $W -cf $T0 -b 128 lib.data
	/usr/bin/mt-st -f $T0 rewind
	mkdir -p $W/lib.out && /usr/bin/tar -C $W/lib.out -xf $T0 -b 128
	cmp $W/lib.data $W/lib.out/lib.data"
check mtx-unload "$MTX" -f "$SG" unload
expect_output unload-home '^ +Storage Element 2:Full :VolumeTag=A00002L8 *$' "$MTX" -f "$SG" status
check_sh unload-drive-empty "$CTL devices | grep -E '^ltape0 ' | grep -v A00002L8 >/dev/null"

# transfer, exchange, first/next, inventory, eepos.
check mtx-transfer "$MTX" -f "$SG" transfer 3 8
expect_output transfer-dest '^ +Storage Element 8:Full :VolumeTag=A00003L8 *$' "$MTX" -f "$SG" status
check mtx-transfer-back "$MTX" -f "$SG" transfer 8 3
# exchange: EXCHANGE MEDIUM with the source as second destination (a swap).
check mtx-exchange "$MTX" -f "$SG" exchange 3 4
expect_output exchange-3 '^ +Storage Element 3:Full :VolumeTag=A00004L8 *$' "$MTX" -f "$SG" status
expect_output exchange-4 '^ +Storage Element 4:Full :VolumeTag=A00003L8 *$' "$MTX" -f "$SG" status
check mtx-exchange-back "$MTX" -f "$SG" exchange 4 3
expect_output exchange-back '^ +Storage Element 3:Full :VolumeTag=A00003L8 *$' "$MTX" -f "$SG" status
# The robot timing model: with move=2s a transfer takes two seconds of
# robot time, an exchange four; cleared, a move is quick again.
expect_output robot-timing-set '.' "$CTL" fault timing lib0 'move=2s;inventory=3s'
check_sh robot-move-takes-2s "u() { awk '{ printf \"%d\", \$1 * 1000 }' /proc/uptime; }; s=\$(u); $MTX -f $SG transfer 3 8; $MTX -f $SG transfer 8 3
	ms=\$((\$(u) - s)); echo \${ms}ms; [ \$ms -ge 4000 ] && [ \$ms -lt 12000 ]"
check_sh robot-exchange-takes-4s "u() { awk '{ printf \"%d\", \$1 * 1000 }' /proc/uptime; }; s=\$(u); $MTX -f $SG exchange 3 4; $MTX -f $SG exchange 4 3
	ms=\$((\$(u) - s)); echo \${ms}ms; [ \$ms -ge 8000 ] && [ \$ms -lt 20000 ]"
expect_output robot-timing-clear '.' "$CTL" fault timing lib0 ''
check_sh robot-move-quick "u() { awk '{ printf \"%d\", \$1 * 1000 }' /proc/uptime; }; s=\$(u); $MTX -f $SG transfer 3 8; $MTX -f $SG transfer 8 3
	ms=\$((\$(u) - s)); echo \${ms}ms; [ \$ms -lt 3000 ]"
check mtx-first "$MTX" -f "$SG" first 1
expect_output first-loads-slot1 '^Data Transfer Element 1:Full \(Storage Element 1 Loaded\):VolumeTag = A00001L8' "$MTX" -f "$SG" status
check mtx-next "$MTX" -f "$SG" next 1
expect_output next-loads-slot2 '^Data Transfer Element 1:Full \(Storage Element 2 Loaded\):VolumeTag = A00002L8' "$MTX" -f "$SG" status
expect_output next-returned-slot1 '^ +Storage Element 1:Full :VolumeTag=A00001L8' "$MTX" -f "$SG" status
check mtx-unload-1 "$MTX" -f "$SG" unload 2 1
check mtx-inventory "$MTX" -f "$SG" inventory
check mtx-eepos-to-mail "$MTX" -f "$SG" eepos 1 transfer 4 9
expect_output eepos-mail-full '^ +Storage Element 9 IMPORT/EXPORT:Full :VolumeTag=A00004L8' "$MTX" -f "$SG" status
check mtx-eepos-back "$MTX" -f "$SG" eepos 0 transfer 9 4

# Refused moves: mtx's error, and through sg_raw the sense a real library
# gives (mtx checks some conditions itself before it sends MOVE MEDIUM).
expect_fail mtx-load-empty-slot "$MTX" -f "$SG" load 8 0
expect_fail mtx-load-full-drive sh -c "$MTX -f $SG load 1 0 && $MTX -f $SG load 3 0"
check mtx-unload-after-full "$MTX" -f "$SG" unload 1 0
# MOVE MEDIUM: a5, transport 0000, source, destination (generic: drives
# from 0001, mail slots from 0010, slots from 1000).
expect_output sense-source-empty 'Medium source element empty' sh -c "sg_raw $SG a5 00 00 00 10 07 10 06 00 00 00 00 2>&1; true"
expect_output sense-destination-full 'Medium destination element full' sh -c "sg_raw $SG a5 00 00 00 10 00 10 01 00 00 00 00 2>&1; true"
expect_output sense-invalid-element 'Invalid element address' sh -c "sg_raw $SG a5 00 00 00 20 00 10 07 00 00 00 00 2>&1; true"
# A drive whose initiator prevents medium removal (mt lock: st's MTLOCK,
# PREVENT ALLOW MEDIUM REMOVAL; st sends it itself at the first read or
# write with its auto-lock option): the library cannot take its cartridge
# (05/53/03) until it is allowed again.
check mtx-load-for-prevent "$MTX" -f "$SG" load 5 1
check mt-lock /usr/bin/mt-st -f "$T1" lock
expect_output sense-drive-prevents 'Medium removal prevented by data transfer element' sh -c "sg_raw $SG a5 00 00 00 00 02 10 04 00 00 00 00 2>&1; true"
expect_fail mtx-unload-prevented "$MTX" -f "$SG" unload 5 1
check mt-unlock /usr/bin/mt-st -f "$T1" unlock
check mtx-unload-after-close "$MTX" -f "$SG" unload 5 1
# The strict library (autounload=0): a loaded drive is not unloaded by the
# robot; mt offline first, as on libraries that need it.
check strict-load "$MTX" -f "$SG2" load 1 0
expect_output strict-sense-still-loaded 'Medium removal prevented' sh -c "sg_raw $SG2 a5 00 00 00 01 00 10 00 00 00 00 00 2>&1; true"
expect_fail strict-unload-refused "$MTX" -f "$SG2" unload 1 0
check strict-mt-offline /usr/bin/mt-st -f "$TS" offline
check strict-unload-after-offline "$MTX" -f "$SG2" unload 1 0
# A library's drive is loaded only through the library.
expect_output direct-load-refused 'belongs to library lib0' sh -c "$CTL load ltape0 A00006L8 2>&1; true"

# An operator import through a mail slot; the changer reports 28/01, mtx
# sees the new barcode.
check media-create-import "$CTL" media create --dir "$LIBM" --barcode B00001L8 --capacity 4MiB
check library-import "$CTL" library import lib0 B00001L8
expect_output import-shows-in-mtx '^ +Storage Element 9 IMPORT/EXPORT:Full :VolumeTag=B00001L8' sh -c "$MTX -f $SG status || $MTX -f $SG status"
check import-to-slot "$MTX" -f "$SG" transfer 9 7
expect_output library-status-vscsictl '^slot7 +0x1006 +B00001L8 +mail1' "$CTL" library status lib0

# Multi-volume GNU tar across three 4 MiB cartridges (slots 4-6): the
# new-volume script loads the next slot with mtx, as backup scripts do.
cat >"$W/next-volume" <<EOS
#!/bin/sh
$MTX -f $SG next 0 >>$W/next-volume.log 2>&1
EOS
chmod +x "$W/next-volume"
check_sh multivolume-write "
	dd if=/dev/urandom of=$W/mv.data bs=1M count=7 2>/dev/null
	$MTX -f $SG load 4 0
	/usr/bin/tar -C $W -c -M -F $W/next-volume -f $T0 -b 64 mv.data
	cat $W/next-volume.log"
expect_output multivolume-spans-three '^Data Transfer Element 0:Full \(Storage Element 6 Loaded\)' "$MTX" -f "$SG" status
check_sh multivolume-restore "
	$MTX -f $SG unload
	$MTX -f $SG load 4 0
	mkdir -p $W/mv.out
	/usr/bin/tar -C $W/mv.out -x -M -F $W/next-volume -f $T0 -b 64
	cmp $W/mv.data $W/mv.out/mv.data
	$MTX -f $SG unload"

# The inventory survives a clean restart and kill -9 during moves: every
# barcode in exactly one element, the drives holding what it says.
cat >"$W/inventory-sane" <<'EOS'
#!/bin/sh
# Every barcode in exactly one element (7: A00001L8-A00006L8, B00001L8),
# and a drive's cartridge is the one the inventory has in its element. A
# drive may hold nothing while its element is full: the cartridge was
# ejected (mt offline, or a crash between the drive's unload and the
# inventory's save) and waits for the robot, as in a real library.
$MTX -f "$SG" status >"$W/inv.txt" 2>&1 || $MTX -f "$SG" status >"$W/inv.txt" 2>&1 || { cat "$W/inv.txt"; exit 1; }
n=$(grep -oE 'VolumeTag ?= ?[A-Z0-9]+' "$W/inv.txt" | sed 's/.*= *//' | sort -u | wc -l)
all=$(grep -oE 'VolumeTag ?= ?[A-Z0-9]+' "$W/inv.txt" | wc -l)
[ "$n" = 7 ] && [ "$all" = 7 ] || { echo "barcodes: $n distinct of $all"; cat "$W/inv.txt"; exit 1; }
for d in 0 1; do
	want=$(sed -n "s/^Data Transfer Element $d:Full .*VolumeTag = \([A-Z0-9]*\).*/\1/p" "$W/inv.txt")
	got=$($CTL devices | awk -v n="ltape$d" '$1 == n { print $9 }')
	case $got in -|"(empty)") continue ;; esac
	[ "$want" = "$got" ] || { echo "drive $d: mtx says '$want', vscsid '$got'"; exit 1; }
done
EOS
chmod +x "$W/inventory-sane"
export W
vscsid_stop library-sigterm
start_library restart
SG=/dev/$(dev_sg lib0)
check inventory-after-restart "$W/inventory-sane"
kills=${LIBRARY_KILLS:-20}
bad=0
i=0
while [ "$i" -lt "$kills" ]; do
	i=$((i + 1))
	(
		for m in "1 8" "8 1" "2 0" "0 2" "3 9" "9 3"; do
			set -- $m
			if [ "$2" = 0 ]; then $MTX -f "$SG" load "$1" 0; elif [ "$1" = 0 ]; then $MTX -f "$SG" unload "$2" 0; else $MTX -f "$SG" transfer "$1" "$2"; fi
		done
	) >/dev/null 2>&1 &
	mover=$!
	sleep "0.$(($(od -An -N1 -tu1 /dev/urandom) % 9 + 1))"
	kill -KILL "$VSCSID_PID"
	wait "$VSCSID_PID" 2>/dev/null
	VSCSID_PID=
	# Restart at once, as systemd's Restart= would: the command mtx has in
	# flight is completed by the restarted daemon's ring reset (BUSY) or
	# served by it, and the mover goes on against the new daemon.
	start_library "kill$i" >/dev/null
	wait "$mover" 2>/dev/null
	SG=/dev/$(dev_sg lib0)
	export SG
	if ! capture "$W/inventory-sane"; then
		bad=$((bad + 1))
		note "kill $i: $OUT"
	fi
done
expect_eq "inventory-after-$kills-kills" 0 "$bad"
vscsid_stop library-final-sigterm
wait_for configfs-no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
# Library models: each personality's INQUIRY identity, its element
# addresses (mode page 1Dh, which mtx numbers from) and default counts;
# the StorageTek model, addressed from 1000 (3E8h), loads and unloads
# through mtx. Its drive asks for cleaning through TapeAlert (tapeinfo,
# as Bacula's tapealert script reads it); a CLN cartridge cleans it (NOT
# READY 30/03, then unloaded in the drive), and past its life it is
# expired (flag 22). Its import/export station opened with OPEN/CLOSE
# IMPORT/EXPORT ELEMENT is out of the robot's reach until closed (28/01).
MODELS=/tmp/vmtest/models
mkdir -p "$MODELS/msl" "$MODELS/scalar" "$MODELS/ts4300" "$MODELS/l700" "$MODELS/big" "$MODELS/mixed" "$MODELS/i3584" \
	"$MODELS/sl500" "$MODELS/spectra"
# Mixed generations: a blank LTO-9 and a blank LTO-10 cartridge (their
# images record no density: the label's media id says the generation).
check mixed-create-l9 "$CTL" media create --dir "$MODELS/mixed" --barcode M00001L9 --capacity 4MiB
check mixed-create-la "$CTL" media create --dir "$MODELS/mixed" --barcode M00002LA --capacity 4MiB
check cln-create "$CTL" media create --dir "$MODELS/l700" --barcode CLN001L1 --capacity 4MiB
cat >/etc/vscsid/models.yaml <<EOF
cmd_time_out: 30
devices:
  - name: msld0
    type: vtape
    config: "personality=lto8;media=$MODELS/msl"
  - name: msl
    type: vlibrary
    config: "personality=hp-msl-g3;media=$MODELS/msl;drives=msld0"
  - name: scalard0
    type: vtape
    config: "personality=lto8;media=$MODELS/scalar"
  - name: scalar
    type: vlibrary
    config: "personality=quantum-scalar-i3;media=$MODELS/scalar;drives=scalard0"
  - name: ts4300d0
    type: vtape
    config: "personality=lto8;media=$MODELS/ts4300"
  - name: ts4300
    type: vlibrary
    config: "personality=ibm-ts4300;media=$MODELS/ts4300;drives=ts4300d0"
  - name: ctape0
    type: vtape
    config: "personality=lto8;media=$MODELS/l700;cleanafter=1;cleaninglife=2;cleantime=3s"
  - name: l700
    type: vlibrary
    config: "personality=stk-l700;media=$MODELS/l700;drives=ctape0;cartridges=2;first=C00001L8;capacity=4M"
  - name: bigd0
    type: vtape
    config: "personality=lto8;media=$MODELS/big"
  - name: big
    type: vlibrary
    config: "media=$MODELS/big;slots=20000;mailslots=4;drives=bigd0;cartridges=3;first=G00001L8;capacity=4M"
  - name: i3584d0
    type: vtape
    config: "personality=lto9;media=$MODELS/i3584"
  - name: i3584
    type: vlibrary
    config: "personality=ibm-3584;media=$MODELS/i3584;slots=5000;mailslots=16;drives=i3584d0;cartridges=100;first=I00001L9;capacity=4M"
  - name: sl500d0
    type: vtape
    config: "personality=lto9;media=$MODELS/sl500"
  - name: sl500
    type: vlibrary
    config: "personality=stk-sl500;media=$MODELS/sl500;drives=sl500d0;cartridges=2;first=S00001L9;capacity=4M"
  - name: spectrad0
    type: vtape
    config: "personality=lto9;media=$MODELS/spectra"
  - name: spectra
    type: vlibrary
    config: "personality=spectra-tseries;media=$MODELS/spectra;drives=spectrad0;cartridges=2;first=P00001L9;capacity=4M"
  - name: mixd0
    type: vtape
    config: "personality=lto10;media=$MODELS/mixed"
  - name: mixd1
    type: vtape
    config: "personality=lto9;media=$MODELS/mixed"
  - name: mixed
    type: vlibrary
    config: "media=$MODELS/mixed;slots=4;mailslots=1;drives=mixd0+mixd1"
EOF
artefact /etc/vscsid/models.yaml
vscsid_start models --config /etc/vscsid/models.yaml --dbus=off
[ -n "$VSCSID_PID" ] || abort "vscsid did not start"
for n in msl scalar ts4300 l700 big mixed i3584 sl500 spectra; do
	require wait_for "models-$n-attached" 30 "dev_node changer $n && dev_node sg $n"
done
for n in msld0 scalard0 ts4300d0 ctape0 bigd0 mixd0 mixd1 i3584d0 sl500d0 spectrad0; do
	require wait_for "models-$n-attached" 30 "dev_node tape $n && dev_node sg $n"
done
# model NAME VENDOR PRODUCT SLOTS MAIL STORAGE MAILADDR DRIVEADDR: lsscsi,
# mtx status's header (mtx counts mail slots among the slots, and refuses
# a library without drives, so each has one), and page
# 1Dh's first storage, import/export and data transfer addresses.
model() {
	sg=/dev/$(dev_sg "$1")
	expect_output "$1-lsscsi" "^\\[[0-9:]+\\] +mediumx +$2 +$3 .* $sg *\$" /usr/bin/lsscsi -g
	expect_output "$1-mtx-status" "^ *Storage Changer $sg:[0-9]+ Drives, $4 Slots \\( $5 Import/Export \\)\$" "$MTX" -f "$sg" status
	check "$1-mode-1d" sg_raw -o "$W/$1.1d" -r 64 "$sg" 1a 08 1d 00 40 00
	expect_eq "$1-addresses" "$6 $7 $8" "$(od -An -tx1 -v "$W/$1.1d" | tr -s ' \n' ' ' | awk '{ print $11$12, $15$16, $19$20 }')"
}
model msl HP "MSL G3 Series" 24 1 0020 01c0 01e0
model scalar QUANTUM "Scalar i3-i6" 50 5 1000 0010 0100
model ts4300 IBM 3573-TL 40 5 1000 0010 0100
model l700 STK L700 36 4 03e8 000a 01f4
model sl500 STK SL500 55 5 03e8 000a 01f4
model spectra SPECTRA PYTHON 60 10 1000 0010 0100
# mtx's transfer, load and unload on the StorageTek SL and Spectra
# models: the first cartridge to the last slot, into drive 0 and back, and
# through the first import/export cell (numbered after the slots).
moves() { # NAME BARCODE SLOTS
	local sg
	sg=/dev/$(dev_sg "$1")
	check "$1-transfer-to-last" "$MTX" -f "$sg" transfer 1 "$3"
	expect_output "$1-last-slot-full" "^ +Storage Element $3:Full :VolumeTag=$2 *\$" "$MTX" -f "$sg" status
	check "$1-load-from-last" "$MTX" -f "$sg" load "$3" 0
	expect_output "$1-loaded" "^Data Transfer Element 0:Full \\(Storage Element $3 Loaded\\):VolumeTag = $2" "$MTX" -f "$sg" status
	check "$1-unload-to-last" "$MTX" -f "$sg" unload "$3" 0
	check "$1-transfer-to-mail" "$MTX" -f "$sg" transfer "$3" "$(($3 + 1))"
	expect_output "$1-in-mail" "^ +Storage Element $(($3 + 1)) IMPORT/EXPORT:Full :VolumeTag=$2" "$MTX" -f "$sg" status
	check "$1-transfer-back" "$MTX" -f "$sg" transfer "$(($3 + 1))" 1
}
moves sl500 S00001L9 50
moves spectra P00001L9 50
# A library of 20,000 slots (the generic model takes up to 61,440): mtx
# reads its storage in two requests of 10,000 elements, moves a cartridge
# to the last slot and loads it from there into the drive.
model big VSCSI VLIBRARY 20004 4 1000 0010 0001
SGB=/dev/$(dev_sg big)
# How long mtx status of the whole library takes in the guest (TCG): for
# the note, not a check.
u0=$(cut -d' ' -f1 /proc/uptime)
"$MTX" -f "$SGB" status >/dev/null 2>&1
note "mtx status of the 20,000-slot library: $(awk -v a="$u0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.2f", b - a }') s in the guest"
check big-transfer-to-last "$MTX" -f "$SGB" transfer 1 20000
expect_output big-last-slot-full '^ +Storage Element 20000:Full :VolumeTag=G00001L8 *$' "$MTX" -f "$SGB" status
check big-load-from-last "$MTX" -f "$SGB" load 20000 0
expect_output big-loaded '^Data Transfer Element 0:Full \(Storage Element 20000 Loaded\):VolumeTag = G00001L8' "$MTX" -f "$SGB" status
check big-unload-to-last "$MTX" -f "$SGB" unload 20000 0
# The IBM 3584 with 5,000 slots (its own element layout: I/O cells from
# 300h, drives from 101h, storage from 400h): mtx status (timed, for the
# note), a load from the last slot and an unload.
model i3584 IBM 03584L32 5016 16 0400 0300 0101
SGI=/dev/$(dev_sg i3584)
check i3584-transfer-to-last "$MTX" -f "$SGI" transfer 1 5000
u0=$(cut -d' ' -f1 /proc/uptime)
expect_output i3584-last-slot-full '^ +Storage Element 5000:Full :VolumeTag=I00001L9 *$' "$MTX" -f "$SGI" status
note "mtx status of the 5,000-slot IBM 3584: $(awk -v a="$u0" -v b="$(cut -d' ' -f1 /proc/uptime)" 'BEGIN { printf "%.2f", b - a }') s in the guest"
check i3584-load-from-last "$MTX" -f "$SGI" load 5000 0
check i3584-unload "$MTX" -f "$SGI" unload 5000 0
# Mixed generations in one library: the LTO-10 drive (element 1) does
# not take the LTO-9 cartridge (slot 1, element 1000h): MOVE MEDIUM is
# ILLEGAL REQUEST 30/00, mtx's load fails and the cartridge stays in its
# slot; the LTO-9 drive takes it, and the LTO-10 drive its own.
SGX=/dev/$(dev_sg mixed)
expect_output mixed-move-incompatible 'Incompatible medium installed' sh -c "sg_raw $SGX a5 00 00 00 10 00 00 01 00 00 00 00 2>&1; true"
expect_fail mixed-mtx-load-l9-into-lto10 "$MTX" -f "$SGX" load 1 0
expect_output mixed-l9-stays '^ +Storage Element 1:Full :VolumeTag=M00001L9 *$' "$MTX" -f "$SGX" status
expect_match mixed-lto10-empty '^Data Transfer Element 0:Empty' "$OUT"
check mixed-l9-into-lto9 "$MTX" -f "$SGX" load 1 1
check mixed-la-into-lto10 "$MTX" -f "$SGX" load 2 0
expect_output mixed-both-loaded 'Data Transfer Element 1:Full \(Storage Element 1 Loaded\):VolumeTag = M00001L9' "$MTX" -f "$SGX" status
expect_match mixed-la-loaded 'Data Transfer Element 0:Full \(Storage Element 2 Loaded\):VolumeTag = M00002LA' "$OUT"
SGL=/dev/$(dev_sg l700)
DSG=/dev/$(dev_sg ctape0)
check l700-load "$MTX" -f "$SGL" load 1 0
expect_output l700-loaded '^Data Transfer Element 0:Full \(Storage Element 1 Loaded\):VolumeTag = C00001L8' "$MTX" -f "$SGL" status
check l700-turs-ua sh -c "for i in 1 2 3 4; do sg_raw $DSG 00 00 00 00 00 00 && exit 0; done; exit 1"
expect_output clean-now-raised '^TapeAlert\[20\]:' /usr/bin/tapeinfo -f "$DSG"
check l700-unload "$MTX" -f "$SGL" unload 1 0
cln=$($MTX -f "$SGL" status | sed -n 's/^ *Storage Element \([0-9]*\):Full :VolumeTag=CLN001L1.*/\1/p')
expect_eq cln-in-a-slot 3 "$cln"
# READ ELEMENT STATUS of storage element 3EAh (the third slot): byte 9 of
# its descriptor, MEDIUM TYPE, is 2 (cleaning).
check_sh cln-medium-type "sg_raw -o $W/cln.res -r 1024 $SGL b8 02 03 ea 00 01 00 00 04 00 00 00
	od -An -tx1 -v $W/cln.res | tr -s ' \n' ' ' | awk '{ print \$26 }' | grep -x 02"
for use in 1 2; do
	check "cln-load-$use" "$MTX" -f "$SGL" load "$cln" 0
	expect_output "cln-cleaning-$use" 'leaning cartridge installed' sh -c "sg_raw $DSG 00 00 00 00 00 00 2>&1; sg_raw $DSG 00 00 00 00 00 00 2>&1; true"
	wait_for "cln-done-$use" 20 "sg_raw $DSG 00 00 00 00 00 00 2>&1 | grep -q 'Medium not present'"
	check_sh "clean-now-cleared-$use" "! /usr/bin/tapeinfo -f $DSG | grep 'TapeAlert\\[2[01]\\]'"
	expect_output "cln-still-in-drive-$use" "^Data Transfer Element 0:Full \\(Storage Element $cln Loaded\\):VolumeTag = CLN001L1" "$MTX" -f "$SGL" status
	check "cln-unload-$use" "$MTX" -f "$SGL" unload "$cln" 0
	# A data cartridge load dirties the drive again (cleanafter=1).
	check "l700-reload-$use" sh -c "$MTX -f $SGL load 2 0 && $MTX -f $SGL unload 2 0"
done
check cln-load-expired "$MTX" -f "$SGL" load "$cln" 0
expect_output cln-expired-not-ready 'Medium not present' sh -c "sg_raw $DSG 00 00 00 00 00 00 2>&1; sg_raw $DSG 00 00 00 00 00 00 2>&1; true"
expect_output cln-expired-alert '^TapeAlert\[22\]:' /usr/bin/tapeinfo -f "$DSG"
expect_output cln-expired-still-asks '^TapeAlert\[20\]:' /usr/bin/tapeinfo -f "$DSG"
check cln-unload-expired "$MTX" -f "$SGL" unload "$cln" 0
# OPEN/CLOSE IMPORT/EXPORT ELEMENT on the first CAP cell (0Ah): MOVE
# MEDIUM into it is NOT READY 3A/02, and mtx's transfer into it (element
# 33, after the 32 slots) fails while the station is open.
check ie-open sg_raw "$SGL" 1b 00 00 0a 00 00
expect_output ie-open-sense 'Medium not present - tray open' sh -c "sg_raw $SGL a5 00 00 00 03 e8 00 0a 00 00 00 00 2>&1; true"
expect_fail ie-open-mtx-transfer "$MTX" -f "$SGL" transfer 1 33
check ie-close sg_raw "$SGL" 1b 00 00 0a 01 00
expect_output ie-close-ua 'Import or export element accessed' sh -c "sg_raw $SGL 00 00 00 00 00 00 2>&1; true"
check ie-closed-transfer "$MTX" -f "$SGL" transfer 1 33
expect_output ie-closed-in-mail '^ +Storage Element 33 IMPORT/EXPORT:Full :VolumeTag=C00001L8' "$MTX" -f "$SGL" status
check ie-transfer-back "$MTX" -f "$SGL" transfer 33 1
vscsid_stop models-sigterm
wait_for models-configfs-no-residue 15 "[ -z \"\$(configfs_residue)\" ]"
kernel_clean library-kernel-log
