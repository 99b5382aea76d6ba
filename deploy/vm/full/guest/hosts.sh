# shellcheck shell=bash
# Two hosts: the full guest booted twice by `deploy/vm/full/run --suite
# two-hosts`, joined by a private qemu socket network that exists only
# between them (no tap, no bridge, nothing forwarded). The target guest
# (vmtest.scenarios=hosts-target) runs vscsid as its systemd service with a
# disk, an 8 MiB-block LTO-8 drive and a TS3100 library with its drive, all
# exported over LIO iSCSI from vscsid's own config (export: [iscsi], CHAP),
# and /metrics on the private network too. The initiator guest
# (vmtest.scenarios=hosts-initiator) logs in with open-iscsi and works the
# devices through its own sd, st, ch and sg drivers: dd and tar round
# trips with checksums, mt positioning, 8 MiB blocks, the short-read
# residue, mtx and Bacula's mtx-changer; then it asks the target to
# restart vscsid (systemctl restart, then a kill -9 that systemd's
# Restart=on-failure answers) under its dd and checks that dd saw no error.
#
# The initiator asks the target over a line protocol on TCP port 7000 of
# the private network (hosts_serve): ping, restart, kill9, done. It is the
# test harness's, not vscsid's. Sourced by run-scenario after helpers.sh;
# hosts_target_run and hosts_initiator_run are the entry points. Kernel
# command line: vmtest.addr=A/N (this guest's address), vmtest.peer=A.

HOSTS_INI=iqn.2026-12.io.github.vscsid:remote-initiator
HOSTS_USER=vscsi
HOSTS_PASS=remote-secret-1
HOSTS_PRE=iqn.2026-12.io.github.vscsid
HOSTS_DEVICES="rdisk rtape rlibd0 rlib"
HOSTS_PORT=7000
HOSTS_ISCSI=/sys/kernel/config/target/iscsi

# hosts_net ADDR/N: this guest's address on the private network's one
# interface (virtio-net; the name udev gives it).
hosts_net() {
	local i ifc=''
	modprobe virtio_net 2>/dev/null
	for i in $(seq 100); do
		ifc=$(ls /sys/class/net | grep -vx lo | head -n1)
		[ -n "$ifc" ] && break
		sleep 0.2
	done
	[ -n "$ifc" ] || return 1
	ip link set "$ifc" up && ip addr add "$1" dev "$ifc" && note "network: $ifc $1"
}

# hosts_enabled: every device's iSCSI target is enabled.
hosts_enabled() {
	local d
	for d in $HOSTS_DEVICES; do
		[ "$(cat "$HOSTS_ISCSI/$HOSTS_PRE:$d/tpgt_1/enable" 2>/dev/null)" = 1 ] || return 1
	done
}

# hosts_do COMMAND: one request of the initiator, on the target. Prints one
# line, "ok ..." or "fail ...".
hosts_do() {
	local pid
	case $1 in
	ping) echo ok pong ;;
	restart)
		if systemctl restart vscsid && wait_until 90 hosts_enabled; then
			echo "ok restarted, pid $(systemctl show -p MainPID --value vscsid)"
		else
			echo "fail vscsid did not come back: $(systemctl is-active vscsid)"
		fi
		;;
	kill9)
		pid=$(systemctl show -p MainPID --value vscsid)
		kill -9 "$pid"
		# systemd restarts it after RestartSec (2 s).
		if wait_until 90 "[ \"\$(systemctl show -p MainPID --value vscsid)\" != $pid ] && systemctl is-active -q vscsid && hosts_enabled"; then
			echo "ok killed $pid, now pid $(systemctl show -p MainPID --value vscsid)"
		else
			echo "fail vscsid did not come back after kill -9 of $pid: $(systemctl is-active vscsid)"
		fi
		;;
	*) echo "fail unknown request '$1'" ;;
	esac
}

# hosts_serve ADDR SECS: answer requests on ADDR:HOSTS_PORT until "done"
# or SECS pass; each request is a line, each answer hosts_do's line.
hosts_serve() {
	python3 - "$1" "$HOSTS_PORT" "$2" <<-'PY'
		import socket, subprocess, sys, time
		addr, port, secs = sys.argv[1], int(sys.argv[2]), float(sys.argv[3])
		end = time.time() + secs
		s = socket.socket()
		s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
		s.bind((addr, port))
		s.listen(4)
		while time.time() < end:
		    s.settimeout(max(1.0, end - time.time()))
		    try:
		        c, _ = s.accept()
		    except socket.timeout:
		        break
		    with c:
		        req = c.makefile().readline().strip()
		        if req == "done":
		            c.sendall(b"ok done\n")
		            print("hosts: done", flush=True)
		            sys.exit(0)
		        out = subprocess.run(["bash", "-c", ". /usr/local/lib/vmtest/lib.sh; . /usr/local/lib/vmtest/helpers.sh; . /usr/local/lib/vmtest/hosts.sh; hosts_do \"$1\"", "hosts", req],
		                             capture_output=True, text=True).stdout.strip().splitlines()
		        ans = out[-1] if out else "fail no answer"
		        print("hosts: %s -> %s" % (req, ans), flush=True)
		        c.sendall((ans + "\n").encode())
		print("hosts: no 'done' within %d s" % secs, flush=True)
		sys.exit(1)
	PY
}

# hosts_ask REQUEST: send one request to the target; 0 when it answered ok.
hosts_ask() {
	local ans
	ans=$(python3 - "$HOSTS_PEER" "$HOSTS_PORT" "$1" <<-'PY'
		import socket, sys
		c = socket.create_connection((sys.argv[1], int(sys.argv[2])), timeout=150)
		c.sendall((sys.argv[3] + "\n").encode())
		print(c.makefile().readline().strip())
	PY
	) || return 1
	echo "$ans"
	[ "${ans%% *}" = ok ]
}

hosts_target_run() {
	local addr=$1 cfg=/etc/vscsid/vscsid.yaml ip=${1%/*} rc=0
	check target-network hosts_net "$addr"
	cat >/var/tmp/remote.yaml <<-CFG
		cmd_time_out: 30
		iscsi:
		  portals: ["$ip:3260"]
		  acls:
		    - initiator: $HOSTS_INI
		      chap_user: $HOSTS_USER
		      chap_password: $HOSTS_PASS
		devices:
		  # Its data is RAM: a restart starts it empty, as scsi_debug's.
		  # opt_blks 8 MiB: sd then sends requests of up to 8 MiB.
		  - name: rdisk
		    type: vdisk
		    config: "size=1GiB;mode=store;store_size=128MiB;opt_blks=16384"
		    hw_max_sectors: 16384
		    export: [iscsi]
		  - name: rtape
		    type: vtape
		    config: "personality=lto8;media=/var/lib/vscsid/remote;barcode=RMT001L8;max_block=8388608"
		    hw_max_sectors: 16384
		    export: [iscsi]
		  - name: rlibd0
		    type: vtape
		    config: "personality=lto8;media=/var/lib/vscsid/rlib"
		    export: [iscsi]
		  - name: rlib
		    type: vlibrary
		    config: "personality=ibm-ts3100;media=/var/lib/vscsid/rlib;slots=8;mailslots=1;drives=rlibd0;cartridges=4;first=R01001L8"
		    export: [iscsi]
	CFG
	expect_output target-config-check 'config ok: 4 devices' vscsid --config /var/tmp/remote.yaml --check-config
	install -m 600 /var/tmp/remote.yaml $cfg
	# CHAP from the config needs the unit's CHAP drop-in (CAP_SYS_ADMIN):
	# without it vscsid refuses to start, and says why.
	check_sh target-chap-needs-dropin "! systemctl restart vscsid
		journalctl -u vscsid --no-pager | grep -q 'sets CHAP secrets only for a process with CAP_SYS_ADMIN'"
	systemctl stop vscsid
	systemctl reset-failed vscsid
	mkdir -p /etc/systemd/system/vscsid.service.d
	install -m 644 /usr/share/doc/vscsid/examples/iscsi-chap.conf /etc/systemd/system/vscsid.service.d/
	# /metrics on the private network as well: the initiator reads the
	# transfer histogram from there, as a Prometheus server of a fleet
	# would (the unit's IPAddressAllow has the private ranges).
	printf '[Service]\nExecStart=\nExecStart=/usr/sbin/vscsid --config %s --web.listen-address=127.0.0.1:9544 --web.listen-address=%s:9544\n' \
		$cfg "$ip" >/etc/systemd/system/vscsid.service.d/remote.conf
	systemctl daemon-reload
	check target-vscsid-restart systemctl restart vscsid
	wait_for target-iscsi-enabled 90 hosts_enabled
	check_sh target-portal "[ -d $HOSTS_ISCSI/$HOSTS_PRE:rtape/tpgt_1/np/$ip:3260 ] && [ \"\$(cat $HOSTS_ISCSI/$HOSTS_PRE:rlib/tpgt_1/attrib/authentication)\" = 1 ]"
	note "target ready: $(ls $HOSTS_ISCSI | grep '^iqn' | tr '\n' ' ')"
	# The initiator's requests, until it says done (its whole run).
	hosts_serve "$ip" 1500 || rc=$?
	if [ $rc = 0 ]; then pass target-served-initiator; else fail target-served-initiator "no 'done' from the initiator (rc $rc)"; fi
	# Across the restart and the kill -9 the iSCSI targets were taken
	# over as they were, never removed and made anew.
	expect_output target-iscsi-kept 'iSCSI target taken over in place' journalctl -u vscsid --no-pager
	check_sh target-iscsi-not-remade "! journalctl -u vscsid --no-pager | grep 'removing the leftover iSCSI target'"
	check target-vscsid-stop systemctl stop vscsid
	check_sh target-no-residue "! ls $HOSTS_ISCSI | grep -q '^$HOSTS_PRE:r' && ! ls /sys/kernel/config/target/core/user_* 2>/dev/null | grep -qx -e rdisk -e rtape -e rlib -e rlibd0"
}

# hosts_node IQN KIND: scsi_node (the check library's) of LUN 0 behind the
# session with target IQN.
hosts_node() {
	local s d
	for s in /sys/class/iscsi_session/session*; do
		[ "$(cat "$s/targetname" 2>/dev/null)" = "$1" ] || continue
		for d in "$s"/device/target*/*:0; do
			scsi_node "$d" "$2" && return 0
		done
	done
	return 1
}

# hosts_login IQN: discovery's node record with CHAP, then login.
hosts_login() {
	local n=(-m node -T "$1" -p "$HOSTS_PEER")
	iscsiadm "${n[@]}" -o update -n node.session.auth.authmethod -v CHAP &&
		iscsiadm "${n[@]}" -o update -n node.session.auth.username -v "$HOSTS_USER" &&
		iscsiadm "${n[@]}" -o update -n node.session.auth.password -v "$HOSTS_PASS" &&
		iscsiadm "${n[@]}" --login
}

# remote_bucket DEVICE DIRECTION LE: the target's transfer histogram,
# read over the private network.
remote_bucket() { metric -h "$HOSTS_PEER" "vscsi_scsi_transfer_bytes_bucket{device=\"$1\",direction=\"$2\",le=\"$3\"}"; }

# dd_under DEV ACTION: direct writes of 2 MiB to DEV, one after another,
# from 2 s before the target's ACTION (restart, kill9: hosts_ask) to 1 s
# after it is done, however long that takes; fails when a write or the
# action fails.
dd_under() {
	local dev=$1 pid
	rm -f /tmp/ddu.stop
	(
		n=0
		while [ ! -e /tmp/ddu.stop ]; do
			dd if=/dev/urandom of="$dev" bs=256k count=8 oflag=direct status=none || exit 1
			n=$((n + 1))
		done
		echo "$n writes of 2 MiB"
	) &
	pid=$!
	sleep 2
	if ! hosts_ask "$2"; then
		touch /tmp/ddu.stop
		wait $pid
		return 1
	fi
	sleep 1
	touch /tmp/ddu.stop
	wait $pid
}

hosts_initiator_run() {
	local d sd st lst ch lsg sg ok
	check initiator-network hosts_net "$1"
	# This host's own vscsid is not part of it: its devices stay out of
	# the sd and st lists.
	systemctl stop vscsid
	iscsi_initiator "$HOSTS_INI"
	# The target guest boots at the same time and then sets up.
	wait_for initiator-target-up 600 "hosts_ask ping"
	check_sh initiator-discovery "out=\$(iscsiadm -m discovery -t sendtargets -p $HOSTS_PEER); echo \"\$out\"
		for d in $HOSTS_DEVICES; do grep -qx \"$HOSTS_PEER:3260,1 $HOSTS_PRE:\$d\" <<<\"\$out\" || exit 1; done"
	check_sh initiator-login-needs-chap "! iscsiadm -m node -T $HOSTS_PRE:rdisk -p $HOSTS_PEER --login"
	ok=1
	for d in $HOSTS_DEVICES; do
		check "initiator-login-$d" hosts_login "$HOSTS_PRE:$d" || ok=
	done
	udevadm settle -t 20 >/dev/null 2>&1
	wait_until 30 "hosts_node $HOSTS_PRE:rdisk block && hosts_node $HOSTS_PRE:rtape ntape && hosts_node $HOSTS_PRE:rlibd0 ntape && hosts_node $HOSTS_PRE:rlib changer"
	sd=$(hosts_node $HOSTS_PRE:rdisk block) st=$(hosts_node $HOSTS_PRE:rtape ntape)
	lst=$(hosts_node $HOSTS_PRE:rlibd0 ntape) ch=$(hosts_node $HOSTS_PRE:rlib changer)
	lsg=$(hosts_node $HOSTS_PRE:rlib sg) sg=$(hosts_node $HOSTS_PRE:rtape sg)
	if [ -z "$ok" ] || [ -z "$sd" ] || [ -z "$st" ] || [ -z "$lst" ] || [ -z "$ch" ] || [ -z "$lsg" ]; then
		fail initiator-attached "disk [$sd] tape [$st] library drive [$lst] changer [$ch $lsg]"
		hosts_ask done
		return
	fi
	pass initiator-attached "/dev/$sd, /dev/$st, /dev/$lst, /dev/$ch (/dev/$lsg)"
	check_sh initiator-over-network "readlink -f /sys/block/$sd/device | grep -q /session && iscsiadm -m session -P 1 | grep -q 'Current Portal: $HOSTS_PEER:3260'"

	# The disk: dd round trips with checksums, 4 MiB at 1 MiB and 32 MiB
	# in 8 MiB commands (one command each, by the target's histogram).
	check initiator-disk-roundtrip disk_roundtrip "/dev/$sd"
	check_sh initiator-disk-8mib "w0=\$(remote_bucket rdisk write 8.388608e+06) w4=\$(remote_bucket rdisk write 4.194304e+06)
		head -c 32M /dev/urandom >/tmp/d8; a=\$(sha256sum </tmp/d8)
		dd if=/tmp/d8 of=/dev/$sd bs=8M seek=4 oflag=direct status=none
		b=\$(dd if=/dev/$sd bs=8M skip=4 count=4 iflag=direct status=none | sha256sum); [ \"\$a\" = \"\$b\" ]
		w=\$((\$(remote_bucket rdisk write 8.388608e+06) - w0 - (\$(remote_bucket rdisk write 4.194304e+06) - w4)))
		echo \"8 MiB writes seen by the target: \$w\"; [ \$w = 4 ]"

	# The drive: a tar archive in 2 MiB records, raw files around it, mt
	# positioning between them, 8 MiB blocks.
	check_sh initiator-tape-ready "for i in 1 2 3 4 5; do mt -f /dev/$st status >/dev/null 2>&1 && exit 0; sleep 0.5; done; exit 1"
	check_sh initiator-tar-roundtrip "mt -f /dev/$st rewind && mt -f /dev/$st setblk 0 &&
		tar -C /usr/lib -b 4096 -cf /dev/$st python3 && mt -f /dev/$st rewind &&
		tar -C /usr/lib -b 4096 -df /dev/$st"
	# mt tell and mt seek (READ POSITION, LOCATE) as well as file marks
	# (st writes one when dd closes the drive after writing).
	check_sh initiator-mt-positioning "head -c 3M /dev/urandom >/tmp/f1; head -c 5M /dev/urandom >/tmp/f2
		mt -f /dev/$st rewind; mt -f /dev/$st fsf 1
		b=\$(mt -f /dev/$st tell | sed -n 's/^At block \\([0-9]*\\).*/\\1/p'); echo \"file 1 at block \$b\"; [ -n \"\$b\" ]
		dd if=/tmp/f1 of=/dev/$st bs=1M status=none
		dd if=/tmp/f2 of=/dev/$st bs=512k status=none
		mt -f /dev/$st rewind; mt -f /dev/$st fsf 2; mt -f /dev/$st status | grep -q 'File number=2'
		echo 'file 2 after fsf 2'; dd if=/dev/$st bs=512k status=none | cmp - /tmp/f2
		mt -f /dev/$st seek \$b; mt -f /dev/$st tell; mt -f /dev/$st status
		echo 'file 1 after seek'; dd if=/dev/$st bs=1M status=none | cmp - /tmp/f1
		mt -f /dev/$st rewind; tar -C /usr/lib -b 4096 -tf /dev/$st >/dev/null"
	check_sh initiator-tape-8mib "mt -f /dev/$st rewind; head -c 24M /dev/urandom >/tmp/t8
		dd if=/tmp/t8 of=/dev/$st bs=8M status=none; mt -f /dev/$st rewind
		dd if=/dev/$st bs=8M status=none | cmp - /tmp/t8
		r=\$((\$(remote_bucket rtape read 8.388608e+06) - \$(remote_bucket rtape read 4.194304e+06)))
		echo \"8 MiB reads seen by the target: \$r\"; [ \$r -ge 3 ]"
	# A short read: ILI with INFORMATION 3096 (C18h), and iSCSI's residual
	# count agrees (sg_raw receives 1000 bytes).
	check_sh initiator-ili-residue "mt -f /dev/$st rewind; head -c 1000 /tmp/t8 | dd of=/dev/$st bs=1000 status=none; mt -f /dev/$st rewind
		out=\$(sg_raw -r 4096 /dev/$sg 08 00 00 10 00 00 2>&1 || true); echo \"\$out\"
		grep -q 'Received 1000 bytes' <<<\"\$out\"; grep -qi 'info.*0xc18\\|information.*c18' <<<\"\$out\""

	# The library through ch and sg: mtx, Bacula's mtx-changer, a tar on
	# the cartridge it loaded.
	expect_output initiator-mtx-status '^ *Storage Changer .*:1 Drives, 9 Slots \( 1 Import/Export \)' mtx -f "/dev/$lsg" status
	expect_output initiator-mtx-barcodes '^ +Storage Element 2:Full :VolumeTag=R01002L8' mtx -f "/dev/$lsg" status
	local MC=/etc/bacula/scripts/mtx-changer
	expect_eq initiator-mtx-changer-slots 9 "$($MC "/dev/$lsg" slots 2>&1)"
	check initiator-mtx-changer-load "$MC" "/dev/$lsg" load 2 "/dev/$lst" 0
	expect_eq initiator-mtx-changer-loaded 2 "$($MC "/dev/$lsg" loaded 2 "/dev/$lst" 0 2>&1)"
	check_sh initiator-library-tar "mt -f /dev/$lst rewind && tar -C /usr/lib -b 256 -cf /dev/$lst python3 &&
		mt -f /dev/$lst rewind && tar -C /usr/lib -b 256 -df /dev/$lst"
	check initiator-mtx-unload mtx -f "/dev/$lsg" unload 2 0
	expect_output initiator-mtx-back '^ +Storage Element 2:Full :VolumeTag=R01002L8' mtx -f "/dev/$lsg" status
	check_sh initiator-changer-node "[ -c /dev/$ch ]"

	# Restarts of vscsid on the target under this host's dd: the next
	# daemon takes the iSCSI targets over as they are, so the sessions
	# stay up (no connection error here: the kernel logs "detected conn
	# error" when one drops) and dd sees no error (dd_under).
	local ce
	ce=$(dmesg | grep -c 'detected conn error')
	CMD_TIMEOUT=240 check initiator-restart-under-io dd_under "/dev/$sd" restart
	expect_eq initiator-restart-session-kept "$ce" "$(dmesg | grep -c 'detected conn error')"
	check initiator-disk-after-restart disk_roundtrip "/dev/$sd"
	ce=$(dmesg | grep -c 'detected conn error')
	CMD_TIMEOUT=240 check initiator-kill9-under-io dd_under "/dev/$sd" kill9
	expect_eq initiator-kill9-session-kept "$ce" "$(dmesg | grep -c 'detected conn error')"
	check initiator-disk-after-kill9 disk_roundtrip "/dev/$sd"
	# The drive after the restarts: a reset was reported (st marks its
	# position lost), then it reads the block written before them.
	check_sh initiator-tape-after-restarts "for i in 1 2 3 4 5; do mt -f /dev/$st rewind 2>/dev/null && break; sleep 0.5; done
		dd if=/dev/$st bs=4096 count=1 status=none | cmp - <(head -c 1000 /tmp/t8)"
	# On failure the last line (the FAIL reason) is the sense sd saw.
	check_sh initiator-no-io-errors "! dmesg | grep -E 'I/O error|critical (target|medium) error' | grep -v 'st[0-9]' ||
		{ dmesg | grep -E 'Sense Key|Add. Sense' | tail -n 2 | tr -s ' \n' ' '; echo; exit 1; }"
	note "initiator dmesg (iSCSI): $(dmesg | grep -i -e iscsi -e 'connection' | tail -n 20 | tr '\n' '|')"
	iscsiadm -m node --logoutall=all >/dev/null 2>&1
	check initiator-done hosts_ask done
}
