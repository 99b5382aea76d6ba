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
ISCSI_USER=vscsi
ISCSI_PASS=vscsi-secret-1
ISCSI_MEDIA=/var/lib/vscsid/iscsi

# iscsi_export NAME SUBTYPE: a target iqn...:NAME with the default portal
# (0.0.0.0:3260), the backstore as LUN 0 and an ACL with CHAP for
# ISCSI_INI. Prints the target's IQN.
iscsi_export() {
	local iqn=iqn.2026-12.io.github.vscsid:$1
	tc /iscsi create "$iqn" >/dev/null &&
		tc "/iscsi/$iqn/tpg1/luns" create "/backstores/user:$2/$1" >/dev/null &&
		tc "/iscsi/$iqn/tpg1/acls" create "$ISCSI_INI" >/dev/null &&
		tc "/iscsi/$iqn/tpg1/acls/$ISCSI_INI" set auth "userid=$ISCSI_USER" "password=$ISCSI_PASS" >/dev/null &&
		tc "/iscsi/$iqn/tpg1" set attribute authentication=1 >/dev/null &&
		printf '%s\n' "$iqn"
}

# iscsi_login IQN: the node record with CHAP, then login (the SCSI host
# scans the LUN before iscsiadm returns).
iscsi_login() {
	iscsiadm -m node -T "$1" -p 127.0.0.1 -o update -n node.session.auth.authmethod -v CHAP &&
		iscsiadm -m node -T "$1" -p 127.0.0.1 -o update -n node.session.auth.username -v "$ISCSI_USER" &&
		iscsiadm -m node -T "$1" -p 127.0.0.1 -o update -n node.session.auth.password -v "$ISCSI_PASS" &&
		iscsiadm -m node -T "$1" -p 127.0.0.1 --login
}

# iscsi_sg NODE: the sg device of the SCSI device behind block or tape
# node NODE (sdb, nst0).
iscsi_sg() {
	local d
	case $1 in
	sd*) d=/sys/block/$1/device ;;
	nst*) d=/sys/class/scsi_tape/$1/device ;;
	esac
	ls "$d/scsi_generic" 2>/dev/null | head -n1
}

# bucket DEVICE DIRECTION LE: the transfer histogram's cumulative count.
bucket() {
	scrape |
		awk -v s="vscsi_scsi_transfer_bytes_bucket{device=\"$1\",direction=\"$2\",le=\"$3\"}" '$1 == s { print $2 }'
}

iscsi_run() {
	modprobe iscsi_tcp 2>/dev/null
	printf 'InitiatorName=%s\n' "$ISCSI_INI" >/etc/iscsi/initiatorname.iscsi
	systemctl restart iscsid.socket iscsid.service >/dev/null 2>&1 || systemctl restart iscsid >/dev/null 2>&1
	local ok=1 itape idisk sd st sg
	tc /backstores/user:vdisk create name=idisk size=256M 'cfgstring=size=256M;mode=store' >/dev/null || ok=
	# max_block 8 MiB (LTO's largest block) and hw_max_sectors to match:
	# the iSCSI path carries it, tcm_loop does not.
	tc /backstores/user:vtape create name=itape size=1G hw_max_sectors=16384 \
		"cfgstring=personality=lto8;media=$ISCSI_MEDIA;barcode=ISC001L8;max_block=8388608" >/dev/null || ok=
	idisk=$(iscsi_export idisk vdisk) || ok=
	itape=$(iscsi_export itape vtape) || ok=
	if [ -z "$ok" ]; then
		fail iscsi-targetcli "targetcli could not create the backstores or targets"
		iscsi_cleanup
		return
	fi
	pass iscsi-targetcli "$idisk, $itape"
	expect_output iscsi-portal '0\.0\.0\.0:3260' tc "/iscsi/$itape/tpg1/portals" ls
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
	check_sh iscsi-metric-fabric "scrape | grep -x 'vscsi_device_exported_luns{device=\"itape\",fabric=\"iscsi\"} 1'"
	check_sh iscsi-transport "readlink -f /sys/block/$sd/device | grep -q /session"
	check iscsi-disk-roundtrip disk_roundtrip "/dev/$sd"
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
	# The same drive on tcm_loop at once (a second I_T nexus): there an
	# 8 MiB block cannot go (256 segments of 4 KiB = 1 MiB per command),
	# a 1 MiB one can. Each transport's limit, not vscsid's.
	check iscsi-logout-tape iscsiadm -m node -T "$itape" -p 127.0.0.1 --logout
	local lw=naa.5001405000e00001 lst
	st0=$(st_list)
	if tc /loopback create $lw >/dev/null && tc /loopback/$lw/luns create /backstores/user:vtape/itape >/dev/null &&
		lst=$(wait_new st_list "$st0"); then
		pass iscsi-also-on-tcm-loop "/dev/$lst"
		check_sh iscsi-metric-both-fabrics "scrape | grep -x 'vscsi_device_exported_luns{device=\"itape\",fabric=\"loopback\"} 1'
			scrape | grep -x 'vscsi_device_exported_luns{device=\"itape\",fabric=\"iscsi\"} 1'"
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
	check_sh iscsi-no-residue "[ -z \"\$(ls /sys/kernel/config/target/iscsi 2>/dev/null | grep '^iqn\\.')\" ]"
}

iscsi_cleanup() {
	iscsiadm -m node --logoutall=all >/dev/null 2>&1
	iscsiadm -m node -o delete >/dev/null 2>&1
	local n
	for n in idisk itape; do
		tc /iscsi delete "iqn.2026-12.io.github.vscsid:$n" >/dev/null 2>&1
	done
	tc /backstores/user:vdisk delete idisk >/dev/null 2>&1
	tc /backstores/user:vtape delete itape >/dev/null 2>&1
}
