# shellcheck shell=bash
# iSCSI on one guest: vscsid backstores exported through LIO's iSCSI
# fabric (iscsi_target_mod) with targetcli, the way deploy/targetcli/README.md
# tells it, and logged into over 127.0.0.1 by the kernel's own initiator
# (open-iscsi's iscsiadm and iscsid, iscsi_tcp), with CHAP. The initiator
# sees an sd disk and an st drive of its own; the drive takes 2, 4 and
# 8 MiB variable blocks, which tcm_loop (256 segments, 1 MiB) cannot carry,
# and vscsid's transfer histogram shows them arrive whole. Sourced by
# vmtest after helpers.sh; iscsi_run is its entry point.

ISCSI_INI=iqn.2026-12.io.github.vscsid:initiator
# A second initiator on the same host: its own open-iscsi iface with its
# own initiator name, so the target sees a second I_T nexus.
ISCSI_INI2=iqn.2026-12.io.github.vscsid:initiator2
ISCSI_IFACE2=vscsi2
ISCSI_USER=vscsi
ISCSI_PASS=vscsi-secret-1
ISCSI_MEDIA=/var/lib/vscsid/iscsi

# iscsi_export NAME SUBTYPE: a target iqn...:NAME with the default portal
# (0.0.0.0:3260, or [::0]:3260), the backstore as LUN 0 and an ACL with CHAP for
# ISCSI_INI. Prints the target's IQN.
iscsi_export() {
	local iqn=iqn.2026-12.io.github.vscsid:$1
	tcb "/iscsi create $iqn" \
		"/iscsi/$iqn/tpg1/luns create /backstores/user:$2/$1" \
		"/iscsi/$iqn/tpg1/acls create $ISCSI_INI" \
		"/iscsi/$iqn/tpg1/acls/$ISCSI_INI set auth userid=$ISCSI_USER password=$ISCSI_PASS" \
		"/iscsi/$iqn/tpg1 set attribute authentication=1" &&
		printf '%s\n' "$iqn"
}

# iscsi_login IQN [IFACE]: the node record with CHAP, then login (the
# SCSI host scans the LUN before iscsiadm returns).
iscsi_login() {
	# -I: only this iface's record (the second initiator's would be tried
	# too, and refused).
	local n=(-m node -T "$1" -p 127.0.0.1 -I "${2:-default}") d=(-m discovery -t sendtargets -p 127.0.0.1 -I "${2:-default}")
	# The node record comes from discovery (for a target made since the
	# last one).
	iscsiadm -m node -T "$1" -p 127.0.0.1 -I "${2:-default}" >/dev/null 2>&1 || iscsiadm "${d[@]}" >/dev/null
	iscsiadm "${n[@]}" -o update -n node.session.auth.authmethod -v CHAP &&
		iscsiadm "${n[@]}" -o update -n node.session.auth.username -v "$ISCSI_USER" &&
		iscsiadm "${n[@]}" -o update -n node.session.auth.password -v "$ISCSI_PASS" &&
		iscsiadm "${n[@]}" --login
}

# iscsi_reservations IQN SD: the disk from a second initiator (ISCSI_INI2,
# its own iface and ACL), then persistent reservations and RESERVE(6)/
# RELEASE(6) between the two I_T nexuses, which LIO's core keeps per
# nexus for TCMU backstores: while one holds the reservation the other
# gets RESERVATION CONFLICT (sg3_utils exit status 24), as SPC says.
iscsi_reservations() {
	local iqn=$1 a=/dev/$2 b sd0
	local rd='28 00 00 00 00 00 00 00 01 00' # READ(10) of one block
	conflict() {
		local rc=0
		"$@" >/dev/null 2>&1 || rc=$?
		[ "$rc" = 24 ]
	}
	sd0=$(sd_list)
	if ! tc "/iscsi/$iqn/tpg1/acls" create "$ISCSI_INI2" >/dev/null ||
		! tc "/iscsi/$iqn/tpg1/acls/$ISCSI_INI2" set auth "userid=$ISCSI_USER" "password=$ISCSI_PASS" >/dev/null ||
		! iscsiadm -m iface -I $ISCSI_IFACE2 -o new >/dev/null ||
		! iscsiadm -m iface -I $ISCSI_IFACE2 -o update -n iface.initiatorname -v "$ISCSI_INI2" >/dev/null ||
		! iscsiadm -m discovery -t sendtargets -p 127.0.0.1 -I $ISCSI_IFACE2 >/dev/null; then
		fail iscsi-second-initiator "could not add the ACL or the iface for $ISCSI_INI2"
		return
	fi
	check iscsi-login-second-initiator iscsi_login "$iqn" $ISCSI_IFACE2
	b=$(wait_new sd_list "$sd0")
	if [ -z "$b" ]; then
		fail iscsi-second-nexus "no second sd for the disk after the second login"
		return
	fi
	b=/dev/$b
	expect_output iscsi-two-sessions "$ISCSI_INI2" sh -c "iscsiadm -m session -P 3 2>/dev/null; ls /sys/kernel/config/target/iscsi/$iqn/tpgt_1/acls"
	check_sh iscsi-same-lun "[ \"\$(sg_inq -p 0x80 -r $a | od -An -c)\" = \"\$(sg_inq -p 0x80 -r $b | od -An -c)\" ]"
	check iscsi-pr-register-a sg_persist -n --out --register --param-sark=0xa1 "$a"
	check iscsi-pr-register-b sg_persist -n --out --register --param-sark=0xb2 "$b"
	check_sh iscsi-pr-keys "out=\$(sg_persist -n --in --read-keys $b); grep -q 0xa1 <<<\"\$out\"; grep -q 0xb2 <<<\"\$out\""
	check iscsi-pr-reserve-a sg_persist -n --out --reserve --param-rk=0xa1 --prout-type=3 "$a"
	expect_output iscsi-pr-read-reservation 'Key=0xa1' sg_persist -n --in --read-reservation "$b"
	check_sh iscsi-pr-conflict-b "$(declare -f conflict); conflict sg_raw -r 512 $b $rd"
	check iscsi-pr-holder-a sg_raw -r 512 "$a" $rd
	check_sh iscsi-pr-reserve-b-conflict "$(declare -f conflict); conflict sg_persist -n --out --reserve --param-rk=0xb2 --prout-type=3 $b"
	check iscsi-pr-release-a sg_persist -n --out --release --param-rk=0xa1 --prout-type=3 "$a"
	check iscsi-pr-b-after-release sg_raw -r 512 "$b" $rd
	check iscsi-pr-clear sg_persist -n --out --clear --param-rk=0xa1 "$a"
	# The clear left B a unit attention (registrations cleared): take it.
	sg_turs "$b" >/dev/null 2>&1
	sg_turs "$b" >/dev/null 2>&1
	check iscsi-reserve6-a sg_raw "$a" 16 00 00 00 00 00
	check_sh iscsi-reserve6-conflict-b "$(declare -f conflict); conflict sg_raw -r 512 $b $rd && conflict sg_raw $b 16 00 00 00 00 00"
	check iscsi-release6-a sg_raw "$a" 17 00 00 00 00 00
	check iscsi-reserve6-released-b sg_raw -r 512 "$b" $rd
	check iscsi-logout-second-initiator iscsiadm -m node -T "$iqn" -p 127.0.0.1 -I $ISCSI_IFACE2 --logout
}

# iscsi_sg NODE: the sg device of the SCSI device behind block or tape
# node NODE (sdb, nst0).
iscsi_sg() {
	local d
	case $1 in
	sd*) d=/sys/block/$1/device ;;
	nst*) d=/sys/class/scsi_tape/$1/device ;;
	esac
	scsi_node "$d" sg
}

# bucket DEVICE DIRECTION LE: the transfer histogram's cumulative count.
bucket() { metric "vscsi_scsi_transfer_bytes_bucket{device=\"$1\",direction=\"$2\",le=\"$3\"}"; }

# iscsi_chaining: the sg-chaining experiment (sg-chaining) on both transports
# in one boot: sg_dd direct I/O through /dev/sgN with 32, 128, 256, 512
# and 2048 pages (4 KiB each) per command, on one fake_rw disk exported
# over iSCSI and over tcm_loop at once. Per run: sg_dd's exit status, its
# MB/s, and the READ commands vscsid saw per transfer-size bucket (its
# histogram delta). tcm_loop refuses more than 256 pages in the kernel
# (sg_tablesize 256: EINVAL before vscsid sees anything); iSCSI carries
# 2048 pages as 8 MiB commands. MIB: the MiB each run reads (16: the
# counts scale with it; the experiment's report reads 64).
iscsi_chaining() {
	local mib=${1:-16} iqn lw=naa.5001405000e00002 sd0 isd lsd ids lsg t pages bpt rc mbs out tab
	sd0=$(sd_list)
	if ! tc /backstores/user:vdisk create name=ichain size=4G hw_max_sectors=16384 'cfgstring=size=4G;mode=fake_rw' >/dev/null ||
		! iqn=$(iscsi_export ichain vdisk) || ! iscsi_login "$iqn" >/dev/null; then
		fail iscsi-chaining-setup "could not create or log into the chaining disk"
		return
	fi
	isd=$(wait_new sd_list "$sd0")
	sd0=$(sd_list)
	tcb "/loopback create $lw" "/loopback/$lw/luns create /backstores/user:vdisk/ichain"
	lsd=$(wait_new sd_list "$sd0")
	ids=$(iscsi_sg "$isd") lsg=$(iscsi_sg "$lsd")
	if [ -z "$ids" ] || [ -z "$lsg" ]; then
		fail iscsi-chaining-setup "sg nodes: iSCSI [$ids] tcm_loop [$lsg]"
		return
	fi
	[ -w /sys/module/sg/parameters/allow_dio ] && echo 1 >/sys/module/sg/parameters/allow_dio
	note "chaining: iSCSI /dev/$isd (/dev/$ids, sg_tablesize $(cat /sys/block/$isd/device/../../scsi_host/*/sg_tablesize), max_hw_sectors_kb $(cat /sys/block/$isd/queue/max_hw_sectors_kb)); tcm_loop /dev/$lsd (/dev/$lsg, sg_tablesize $(cat /sys/block/$lsd/device/../../scsi_host/*/sg_tablesize))"
	tab="| transport | pages | KiB/cmd | sg_dd | MB/s | READs ≤ 128 KiB | ≤ 512 KiB | ≤ 1 MiB | ≤ 2 MiB | ≤ 8 MiB |
|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"
	for t in iscsi:$ids tcm_loop:$lsg; do
		for pages in 32 128 256 512 2048; do
			bpt=$((pages * 8))
			local -a b0 b1
			read -r -a b0 <<<"$(iscsi_read_buckets ichain)"
			rc=0
			out=$(sg_dd if=/dev/${t#*:} of=/dev/null bs=512 bpt=$bpt count=$((mib * 2048)) blk_sgio=1 dio=1 time=1 2>&1) || rc=$?
			read -r -a b1 <<<"$(iscsi_read_buckets ichain)"
			mbs=$(sed -n 's/.* at \([0-9.]*\) MB\/sec.*/\1/p' <<<"$out" | head -n1)
			tab="$tab
| ${t%%:*} | $pages | $((pages * 4)) | exit $rc | ${mbs:--} | $((b1[0] - b0[0])) | $((b1[1] - b0[1])) | $((b1[2] - b0[2])) | $((b1[3] - b0[3])) | $((b1[4] - b0[4])) |"
			eval "chain_${t%%:*}_${pages}=\"$rc $((b1[0] - b0[0])) $((b1[1] - b0[1])) $((b1[2] - b0[2])) $((b1[3] - b0[3])) $((b1[4] - b0[4]))\""
		done
	done
	printf '%s\n' "$tab" >/var/tmp/iscsi-chaining.md
	note "sg-chaining over both transports ($mib MiB read per run; READ commands per cumulative bucket, so ≤ 8 MiB counts the smaller ones too):"
	while IFS= read -r l; do note "  $l"; done </var/tmp/iscsi-chaining.md
	# chained RUN BIG: RUN (rc and cumulative deltas at 128K 512K 1M 2M 8M)
	# succeeded, and exactly BIG of its READs were above 128 KiB.
	chained() { set -- $1 "$2"; [ "$1" = 0 ] && [ $(($6 - $2)) = "$7" ]; }
	# iSCSI: every size works and arrives whole: 128 KiB commands all sit
	# at or below 128 KiB; 256 pages are MIB commands of 1 MiB, 512 pages
	# MIB/2 of 2 MiB, 2048 pages MIB/8 of 8 MiB.
	check_sh iscsi-chaining-32-pages "$(declare -f chained); chained '$chain_iscsi_32' 0"
	check_sh iscsi-chaining-256-pages "$(declare -f chained); chained '$chain_iscsi_256' $mib"
	check_sh iscsi-chaining-512-pages "$(declare -f chained); chained '$chain_iscsi_512' $((mib / 2)); set -- $chain_iscsi_512; [ \$((\$5 - \$4)) = $((mib / 2)) ]"
	check_sh iscsi-chaining-2048-pages "$(declare -f chained); chained '$chain_iscsi_2048' $((mib / 8)); set -- $chain_iscsi_2048; [ \$((\$6 - \$5)) = $((mib / 8)) ]"
	# tcm_loop: 256 pages (1 MiB) work; 512 and 2048 are refused in the
	# kernel, and no READ above 128 KiB reached vscsid.
	check_sh tcm-loop-chaining-256-pages "$(declare -f chained); chained '$chain_tcm_loop_256' $mib"
	check_sh tcm-loop-chaining-refuses-512-and-2048 "for v in '$chain_tcm_loop_512' '$chain_tcm_loop_2048'; do set -- \$v; [ \$1 != 0 ] && [ \$((\$6 - \$2)) = 0 ] || exit 1; done"
	iscsiadm -m node -T "$iqn" -p 127.0.0.1 --logout >/dev/null 2>&1
	tcb "/loopback delete $lw" "/iscsi delete $iqn" "/backstores/user:vdisk delete ichain"
}

# iscsi_read_buckets DEVICE: the cumulative READ transfer histogram of
# DEVICE at 128 KiB, 512 KiB, 1 MiB, 2 MiB and 8 MiB, on one line.
iscsi_read_buckets() {
	local le sels=()
	for le in 131072 524288 1.048576e+06 2.097152e+06 8.388608e+06; do
		sels+=("vscsi_scsi_transfer_bytes_bucket{device=\"$1\",direction=\"read\",le=\"$le\"}")
	done
	metric "${sels[@]}"
}

# iscsi_config_export: the same from vscsid's own config file (export:
# [loopback, iscsi] and [iscsi]): vscsid makes the targets, portal, ACL
# and CHAP at start; a kill -9 under the initiator's I/O and a restart
# remove the leftover and make it anew while the initiator recovers; a
# SIGTERM removes exactly what it made. Run outside systemd, with the
# service stopped meanwhile (one vscsid at a time).
iscsi_config_export() {
	local cfg=/var/tmp/vscsid-iscsi.yaml log=/var/tmp/vscsid-iscsi.log pid sd0 st0 sd st sdl
	local root=/sys/kernel/config/target/iscsi pre=iqn.2026-12.io.github.vscsid
	cat >$cfg <<-CFG
		cmd_time_out: 30
		iscsi:
		  portals: ["127.0.0.1:3260"]
		  acls:
		    - initiator: $ISCSI_INI
		      chap_user: $ISCSI_USER
		      chap_password: $ISCSI_PASS
		devices:
		  - name: cdisk
		    type: vdisk
		    config: "size=256MiB;mode=store"
		    export: [loopback, iscsi]
		  - name: ctape
		    type: vtape
		    config: "personality=lto8;memory=1;barcode=CFG001L8;max_block=8388608"
		    hw_max_sectors: 16384
		    export: [iscsi]
	CFG
	expect_output iscsi-config-check 'config ok: 2 devices' vscsid --config $cfg --check-config
	systemctl stop vscsid
	sd0=$(sd_list) st0=$(st_list)
	start_cfg() {
		vscsid --config $cfg >>$log 2>&1 &
		pid=$!
		wait_until 60 "[ \"\$(cat $root/$pre:ctape/tpgt_1/enable 2>/dev/null)\" = 1 ] && [ \"\$(cat $root/$pre:cdisk/tpgt_1/enable 2>/dev/null)\" = 1 ]"
	}
	if start_cfg; then
		pass iscsi-config-start "pid $pid"
	else
		fail iscsi-config-start "the targets were not enabled within 60 s"
		kill -QUIT "$pid"
		sleep 2
		note "vscsid with $cfg: $(tail -c 12000 $log)"
		note "configfs: $(ls /sys/kernel/config/target/iscsi 2>&1 | tr '\n' ' ') | $(ls /sys/kernel/config/target/core/user_* 2>&1 | tr '\n' ' ')"
	fi
	sdl=$(wait_new sd_list "$sd0")
	check_sh iscsi-config-loopback-disk "[ -n '$sdl' ]"
	# The tape is on iSCSI only: no st before the login, no tcm_loop LUN.
	check_sh iscsi-config-tape-iscsi-only "[ \"\$(st_list)\" = '$st0' ] && ! ls /sys/kernel/config/target/loopback/*/tpgt_1/lun/lun_0/ 2>/dev/null | grep -qx ctape"
	check_sh iscsi-config-tree "[ -d $root/$pre:cdisk/tpgt_1/acls/$ISCSI_INI/lun_0 ] && [ -d $root/$pre:ctape/tpgt_1/np/127.0.0.1:3260 ] &&
		[ \"\$(cat $root/$pre:cdisk/tpgt_1/attrib/authentication)\" = 1 ] && [ \"\$(cat $root/$pre:cdisk/tpgt_1/attrib/generate_node_acls)\" = 0 ]"
	expect_output iscsi-config-discovery "$pre:ctape" iscsiadm -m discovery -t sendtargets -p 127.0.0.1
	sd0=$(sd_list)
	check iscsi-config-login-disk iscsi_login $pre:cdisk
	check iscsi-config-login-tape iscsi_login $pre:ctape
	sd=$(wait_new sd_list "$sd0") st=$(wait_new st_list "$st0")
	if [ -z "$sd" ] || [ -z "$st" ]; then
		fail iscsi-config-attached "no sd or st after the logins: disk [$sd] tape [$st]"
	else
		pass iscsi-config-attached "/dev/$sd, /dev/$st"
		check iscsi-config-disk-roundtrip disk_roundtrip "/dev/$sd"
		check_sh iscsi-config-tape-8mib "for i in 1 2 3 4; do mt -f /dev/$st status >/dev/null 2>&1 && break; sleep 0.5; done
			mt -f /dev/$st rewind; mt -f /dev/$st setblk 0
			head -c 16M /dev/urandom >/tmp/cb8; dd if=/tmp/cb8 of=/dev/$st bs=8M status=none
			mt -f /dev/$st rewind; dd if=/dev/$st bs=8M status=none | cmp - /tmp/cb8"
		# kill -9 under I/O, then the same config again: the leftover
		# iSCSI target is taken over as it is (its session stays logged
		# in) with the disk's tcm_loop LUN, and dd completes without an
		# error.
		check_sh iscsi-config-kill9-under-io "
			dd if=/dev/zero of=/dev/$sd bs=256k count=256 oflag=direct status=none & dd=\$!
			sleep 1; kill -9 $pid; sleep 1
			vscsid --config $cfg >>$log 2>&1 & echo \$! >/var/tmp/vscsid-iscsi.pid
			wait \$dd"
		pid=$(cat /var/tmp/vscsid-iscsi.pid)
		wait_for iscsi-config-restarted 60 "[ \"\$(cat $root/$pre:cdisk/tpgt_1/enable 2>/dev/null)\" = 1 ]"
		expect_output iscsi-config-leftover-kept 'iSCSI target taken over in place' cat $log
		check_sh iscsi-config-leftover-not-remade "! grep 'removing the leftover iSCSI target' $log"
		check iscsi-config-disk-after-kill9 disk_roundtrip "/dev/$sd"
		check_sh iscsi-config-same-loopback-node "[ -b /dev/$sdl ]"
	fi
	iscsiadm -m node -T $pre:cdisk -p 127.0.0.1 --logout >/dev/null 2>&1
	iscsiadm -m node -T $pre:ctape -p 127.0.0.1 --logout >/dev/null 2>&1
	kill -TERM "$pid"
	check_sh iscsi-config-sigterm-exit "for i in \$(seq 100); do kill -0 $pid 2>/dev/null || exit 0; sleep 0.2; done; exit 1"
	check_sh iscsi-config-removed-exactly "! ls $root | grep -q '^$pre:c' && ! grep -qs -e cdisk -e ctape /sys/kernel/config/target/core/user_*/*/attrib/dev_config 2>/dev/null && ! ls /sys/kernel/config/target/core/user_* 2>/dev/null | grep -q -e cdisk -e ctape"
	iscsiadm -m node -o delete >/dev/null 2>&1
	systemctl start vscsid
	check_sh iscsi-config-service-back "for i in \$(seq 50); do systemctl is-active -q vscsid && exit 0; sleep 0.2; done; exit 1"
}

# iscsi_initiator NAME: the kernel's initiator (iscsi_tcp, iscsid) with
# initiator name NAME.
iscsi_initiator() {
	modprobe iscsi_tcp 2>/dev/null
	printf 'InitiatorName=%s\n' "$1" >/etc/iscsi/initiatorname.iscsi
	systemctl restart iscsid.socket iscsid.service >/dev/null 2>&1 || systemctl restart iscsid >/dev/null 2>&1
}

# iscsi_chaining_run: the sg-chaining runs alone (vmtest.scenarios=chaining),
# for the sg-chaining experiment's report (deploy/vm/experiments/run sg-chaining):
# their table goes out on the third serial port as chaining/.
iscsi_chaining_run() {
	iscsi_initiator "$ISCSI_INI"
	iscsi_chaining 64
	mkdir -p /var/tmp/chaining
	cp /var/tmp/iscsi-chaining.md /var/tmp/chaining/ 2>/dev/null
	serial_out chaining chaining-results-out
	iscsi_cleanup
}

# iscsi_run [short]: the iSCSI scenario. short (the newest kernel's pass):
# export, discovery, CHAP, the logins, disk and tape I/O with 8 MiB
# blocks, logout and removal; without the reservations, the restart, the
# sg-chaining runs, tcm_loop beside iSCSI and the config file's export.
iscsi_run() {
	local mode=${1:-} ok=1 itape idisk sd st sg
	iscsi_initiator "$ISCSI_INI"
	# max_block 8 MiB (LTO's largest block) and hw_max_sectors to match:
	# the iSCSI path carries it, tcm_loop does not.
	tcb "/backstores/user:vdisk create name=idisk size=256M cfgstring=size=256M;mode=store" \
		"/backstores/user:vtape create name=itape size=1G hw_max_sectors=16384 cfgstring=personality=lto8;media=$ISCSI_MEDIA;barcode=ISC001L8;max_block=8388608" || ok=
	idisk=$(iscsi_export idisk vdisk) || ok=
	itape=$(iscsi_export itape vtape) || ok=
	if [ -z "$ok" ]; then
		fail iscsi-targetcli "targetcli could not create the backstores or targets"
		iscsi_cleanup
		return
	fi
	pass iscsi-targetcli "$idisk, $itape"
	# The default portal listens on every address: 0.0.0.0:3260 with
	# bookworm's targetcli, [::0]:3260 (IPv6 and IPv4) with newer ones.
	expect_output iscsi-portal '(0\.0\.0\.0|\[::0\]):3260' tc "/iscsi/$itape/tpg1/portals" ls
	expect_output iscsi-discovery "127\\.0\\.0\\.1:3260,1 $itape" iscsiadm -m discovery -t sendtargets -p 127.0.0.1
	# Without CHAP the login is refused.
	check_sh iscsi-login-needs-chap "! iscsiadm -m node -T $idisk -p 127.0.0.1 --login"
	local sd0 st0
	sd0=$(sd_list) st0=$(st_list)
	check iscsi-login-disk iscsi_login "$idisk"
	check iscsi-login-tape iscsi_login "$itape"
	sd=$(wait_new sd_list "$sd0")
	st=$(wait_new st_list "$st0")
	note "iSCSI sessions: $(iscsiadm -m session 2>&1 | tr '\n' ';'); disk [$sd] tape [$st]"
	if [ -z "$sd" ] || [ -z "$st" ]; then
		fail iscsi-attached "no new sd or st device after the logins: disk [$sd] tape [$st]"
		iscsi_cleanup
		return
	fi
	pass iscsi-attached "/dev/$sd, /dev/$st"
	# The metrics say which fabric exports each device.
	expect_eq iscsi-metric-fabric 1 "$(metric 'vscsi_device_exported_luns{device="itape",fabric="iscsi"}')"
	check_sh iscsi-transport "readlink -f /sys/block/$sd/device | grep -q /session"
	check iscsi-disk-roundtrip disk_roundtrip "/dev/$sd"
	[ "$mode" = short ] || iscsi_reservations "$idisk" "$sd"
	sg=$(iscsi_sg "$st")
	# READ BLOCK LIMITS: maximum 800000h = 8 MiB, minimum 1.
	expect_output iscsi-block-limits '00 80 00 00 00 01' sg_raw -r 6 "/dev/$sg" 05 00 00 00 00 00
	check_sh iscsi-tape-ready "for i in 1 2 3 4; do sg_turs /dev/$sg && exit 0; done; exit 1"
	check_sh iscsi-tape-large-blocks "
		mt -f /dev/$st rewind
		mt -f /dev/$st setblk 0
		for m in 2 4 8; do head -c \$((m * 3))M /dev/urandom >/tmp/ib\$m; done
		for m in 2 4 8; do dd if=/tmp/ib\$m of=/dev/$st bs=\${m}M status=none; done
		mt -f /dev/$st rewind
		for m in 2 4 8; do dd if=/dev/$st of=/tmp/ob\$m bs=\${m}M status=none; cmp /tmp/ib\$m /tmp/ob\$m; done"
	# The three 8 MiB blocks each way reached vscsid as one command each:
	# above the 4 MiB bucket, within the 8 MiB one (the device is new).
	check_sh iscsi-8mib-commands "
		w=\$((\$(bucket itape write 8.388608e+06) - \$(bucket itape write 4.194304e+06)))
		r=\$((\$(bucket itape read 8.388608e+06) - \$(bucket itape read 4.194304e+06)))
		echo \"8 MiB commands: \$w writes, \$r reads\"; [ \$w -eq 3 ] && [ \$r -ge 3 ]"
	check iscsi-tape-roundtrip tape_roundtrip "/dev/$st"
	if [ "$mode" = short ]; then
		iscsi_cleanup
		iscsi_no_residue
		return
	fi
	# A short read over the network fabric: a 1000-byte block read with a
	# 4096-byte READ(6) (SILI=0) is ILI with INFORMATION 3096 (C18h) in the
	# sense, and the transport's residual count agrees: sg_raw receives
	# 1000 bytes (LTFS refuses a drive whose two disagree).
	check_sh iscsi-short-block "mt -f /dev/$st rewind; head -c 1000 /tmp/ib2 | dd of=/dev/$st bs=1000 status=none; mt -f /dev/$st rewind"
	check_sh iscsi-ili-residue "out=\$(sg_raw -r 4096 /dev/$sg 08 00 00 10 00 00 2>&1 || true); echo \"\$out\"
		grep -q 'Received 1000 bytes' <<<\"\$out\"; grep -qi 'info.*0xc18\\|information.*c18' <<<\"\$out\""
	# A restart of vscsid under the initiator's I/O: the commands in flight
	# are completed BUSY by the ring reset and retried by the initiator's
	# SCSI layer, so dd sees no error. (The vdisk store is RAM, as
	# scsi_debug's: what was written before the restart is gone by design;
	# the disk serves again at once.) Last, since the drive then reports
	# 29/00 and st marks its position lost.
	check_sh iscsi-restart-under-io "
		dd if=/dev/urandom of=/dev/$sd bs=256k count=256 oflag=direct status=none & pid=\$!
		sleep 1
		systemctl restart vscsid
		wait \$pid
		systemctl is-active vscsid"
	check iscsi-disk-after-restart disk_roundtrip "/dev/$sd"
	iscsi_chaining
	# The same drive on tcm_loop at once (a second I_T nexus): there an
	# 8 MiB block cannot go (256 segments of 4 KiB = 1 MiB per command),
	# a 1 MiB one can. Each transport's limit, not vscsid's.
	check iscsi-logout-tape iscsiadm -m node -T "$itape" -p 127.0.0.1 --logout
	local lw=naa.5001405000e00001 lst
	st0=$(st_list)
	if tc /loopback create $lw >/dev/null && tc /loopback/$lw/luns create /backstores/user:vtape/itape >/dev/null &&
		lst=$(wait_new st_list "$st0"); then
		pass iscsi-also-on-tcm-loop "/dev/$lst"
		expect_eq iscsi-metric-both-fabrics "1 1" "$(metric 'vscsi_device_exported_luns{device="itape",fabric="loopback"}' 'vscsi_device_exported_luns{device="itape",fabric="iscsi"}')"
		check_sh tcm-loop-ready "for i in 1 2 3 4; do mt -f /dev/$lst status >/dev/null 2>&1 && mt -f /dev/$lst rewind && exit 0; sleep 0.2; done; exit 1"
		# (st cannot map the 8 MiB buffer onto tcm_loop's 256 segments: EBUSY)
		expect_output tcm-loop-refuses-8mib 'Device or resource busy' sh -c "dd if=/tmp/ib8 of=/dev/$lst bs=8M count=1 status=none 2>&1; true"
		check_sh tcm-loop-takes-1mib "mt -f /dev/$lst rewind; head -c 2M /tmp/ib2 | dd of=/dev/$lst bs=1M status=none
			mt -f /dev/$lst rewind; dd if=/dev/$lst bs=1M status=none | cmp - <(head -c 2M /tmp/ib2)"
	else
		fail iscsi-also-on-tcm-loop "no st device on the loopback LUN"
	fi
	tc /loopback delete $lw >/dev/null 2>&1
	iscsi_cleanup
	iscsi_config_export
	iscsi_no_residue
}

# iscsi_no_residue: no iSCSI target is left in configfs.
iscsi_no_residue() {
	check_sh iscsi-no-residue "[ -z \"\$(ls /sys/kernel/config/target/iscsi 2>/dev/null | grep '^iqn\\.')\" ]"
}

iscsi_cleanup() {
	iscsiadm -m node --logoutall=all >/dev/null 2>&1
	iscsiadm -m node -o delete >/dev/null 2>&1
	iscsiadm -m iface -I $ISCSI_IFACE2 -o delete >/dev/null 2>&1
	# Any of these may be gone already: tcb fails, and nobody minds.
	tcb "/iscsi delete iqn.2026-12.io.github.vscsid:idisk" "/iscsi delete iqn.2026-12.io.github.vscsid:itape" \
		"/backstores/user:vdisk delete idisk" "/backstores/user:vtape delete itape"
}
