# vm-timeout: 1500
# core: the full guest's own life cycle under systemd: the config's
# devices, targetcli and D-Bus, targetctl's save and restore, stop and
# restart, restarts under I/O (vmtest.restarts=N, 20 by default; make
# test takes 4), the package's upgrade under streams, reloads, metrics
# over TLS, the package's purge.
# 1b. One version everywhere: the package's (Debian spells the pre-release
# ~dev), vscsid's and vscsictl's --version, and vscsi_build_info.
check_sh version-stamped 'v=$(dpkg-query -W -f "\${Version}" vscsid); v=${v%-*}; v=${v/\~dev/-dev}; echo "package: $v"
	[ "${v#0.0~git}" = "$v" ]
	vscsid --version | head -n1 | grep -F "vscsid, version $v (branch: "
	vscsictl --version | head -n1 | grep -F "vscsictl, version $v (branch: "
	scrape >/tmp/version.metrics; n=$(mval /tmp/version.metrics "vscsi_build_info{version=\"$v\"}"); echo "vscsi_build_info{version=\"$v\"}: $n"; [ "$n" = 1 ]'
# 1b2. The package installed real man pages (with the sections a reader
# looks for) and completion scripts that complete.
check_sh package-man-pages 'for p in man8/vscsid.8 man1/vscsictl.1; do
		zcat /usr/share/man/$p.gz | grep -c "^\.SH \(SYNOPSIS\|OPTIONS\|COMMANDS\|EXIT STATUS\|EXAMPLES\)" | grep -qx 4 || { echo "$p lacks sections"; exit 1; }
	done
	if command -v man >/dev/null; then man -P cat vscsid | grep -q "^SYNOPSIS"; fi'
check_sh package-completion 'f=/usr/share/bash-completion/completions/vscsictl; [ -f /usr/share/bash-completion/completions/vscsid ]
	out=$(bash -c ". $f; COMP_WORDS=(vscsictl media create --bar); COMP_CWORD=3; _vscsictl; echo \${COMPREPLY[*]}"); echo "$out"; [ "$out" = --barcode ]'
# 1c. The journal has each line's level (--log.format auto is journal under
# systemd): a clean start logged no error, and its start-up line is text
# at priority info, not JSON (the start-up error is at the end of core_run).
check_sh journal-clean-start 'e=$(journalctl -u vscsid -b -p err -o cat); [ -z "$e" ] || { echo "errors at a clean start: $e"; exit 1; }
	journalctl -u vscsid -b -p info -o cat | grep "^starting	"'
# 2. The config's devices: one disk, one tape drive.
udevadm settle -t 20 >/dev/null 2>&1
cfg_sd=$(sd_list)
cfg_st=$(st_list)
note "config devices: sd=[$cfg_sd] st=[$cfg_st]"
if [ "$(printf '%s\n' "$cfg_sd" | sed '/^$/d' | wc -l)" = 1 ] &&
	[ "$(cat "/sys/block/$cfg_sd/size" 2>/dev/null)" = $((256 * 2048)) ]; then
	pass config-disk
	check config-disk-io disk_roundtrip "/dev/$cfg_sd"
else
	fail config-disk "expected one 256 MiB sd, found [$cfg_sd]"
fi
if [ "$cfg_st" != nst0 ]; then
	fail config-tape "expected /dev/nst0, found [$cfg_st]"
elif check config-tape mt -f /dev/nst0 status; then
	note "$OUT"
	check config-tape-io tape_roundtrip /dev/nst0
fi

# 3. targetcli sees vscsid's handlers over D-Bus.
check_sh targetcli-ls-handlers 'out=$(tc ls /backstores)
	for h in user:vtape user:vdisk; do grep -q "$h" <<<"$out" || { echo "no $h in targetcli ls /backstores"; exit 1; }; done'

# 4. help create shows the handler's ConfigDesc.
check_sh targetcli-help-configdesc 'out=$(tc /backstores/user:vdisk help create)
	for k in store_size lbs; do grep -q "$k" <<<"$out" || { echo "no vdisk cfgstring key $k in help create"; exit 1; }; done'

# 5. A bad cfgstring is refused with vscsid's message.
out=$(tc /backstores/user:vdisk create name=bad size=1M cfgstring=lbs=999)
if printf '%s' "$out" | grep -qi 'cfgstring invalid' && printf '%s' "$out" | grep -q 'lbs' &&
	[ ! -e /sys/kernel/config/target/core/user_0/bad ] && ! ls -d /sys/kernel/config/target/core/user_*/bad >/dev/null 2>&1; then
	pass targetcli-bad-cfgstring
else
	fail targetcli-bad-cfgstring "$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-200)"
fi

# 5b. The D-Bus service on the real system bus: a user who is not root is
# refused. This guest has tcmu-runner's package too, whose policy lets
# every user send to the service, so the refusal is vscsid's own
# ("only root may call"); without it, the installed policy's. Malformed
# or hostile calls from root get an error or a refusal naming what is
# wrong, and the daemon keeps serving.
dbus_pid=$(systemctl show -p MainPID --value vscsid)
check_sh dbus-nonroot-checkconfig-denied 'out=$(DBUS_CALL_UID=65534 dbus_call vdisk CheckConfig s vdisk/size=1M) &&
		{ echo "nobody was answered: $out"; exit 1; }
	echo "$out"; grep -qiE "only root may call|access denied|rejected send message" <<<"$out"'
check_sh dbus-nonroot-changemedium-denied 'out=$(DBUS_CALL_UID=65534 dbus_call vtape ChangeMedium sts tct0 1073741824 vtape/memory=1) &&
		{ echo "nobody was answered: $out"; exit 1; }
	echo "$out"; grep -qiE "only root may call|access denied|rejected send message" <<<"$out"'
# (busctl's reply to CheckConfig is "bs false \"message\"". godbus
# converts a number to the string or width a method takes, so a uint32
# where CheckConfig wants its string arrives as a one-rune config and is
# refused as such; a string where a number goes, or a wrong count, is
# InvalidArgs.)
check_sh dbus-wrong-signature 'out=$(dbus_call vtape ChangeMedium sss tct0 big vtape/memory=1) && { echo "answered: $out"; exit 1; }
	echo "$out"; grep -qiE "invalid" <<<"$out"'
check_sh dbus-wrong-arg-count 'out=$(dbus_call vdisk CheckConfig ss vdisk/size=1M extra) && { echo "answered: $out"; exit 1; }
	echo "$out"; grep -qiE "invalid" <<<"$out"'
check_sh dbus-number-for-string 'out=$(dbus_call vdisk CheckConfig u 7); echo "$out"
	grep -q "^bs false" <<<"$out" && grep -q "want vdisk/" <<<"$out"'
check_sh dbus-wrong-subtype 'out=$(dbus_call vdisk CheckConfig s vtape/memory=1); echo "$out"
	grep -q "^bs false" <<<"$out" && grep -q "want vdisk/" <<<"$out"'
check_sh dbus-barcode-traversal 'out=$(dbus_call vtape CheckConfig s "vtape/memory=1;barcode=../../etc/x"); echo "$out"
	grep -q "^bs false" <<<"$out" && grep -q "barcode" <<<"$out"'
check_sh dbus-oversized-number 'out=$(dbus_call vdisk CheckConfig s "vdisk/size=99999999999999999999999"); echo "$out"
	grep -q "^bs false" <<<"$out" && grep -q "size" <<<"$out"'
check_sh dbus-unknown-key 'out=$(dbus_call vdisk CheckConfig s "vdisk/size=1M;colour=blue"); echo "$out"
	grep -q "^bs false" <<<"$out" && grep -q "colour" <<<"$out"'
check_sh dbus-changemedium-no-such-drive 'out=$(dbus_call vtape ChangeMedium sts nosuchdrive 1073741824 vtape/memory=1); echo "$out"
	grep -qE "^is -[0-9]+ " <<<"$out"'
check_sh dbus-good-checkconfig 'out=$(dbus_call vdisk CheckConfig s vdisk/size=1M); echo "$out"; grep -q "^bs true" <<<"$out"'
check_sh dbus-daemon-unharmed '[ "$(systemctl show -p MainPID --value vscsid)" = '"$dbus_pid"' ] && systemctl is-active vscsid'

# 6. A disk made with targetcli: backstore, loopback target, LUN.
DWWN=naa.500140500000d001 TWWN=naa.500140500000e001
before=$(sd_list)
# As the brief and targetcli's own syntax put it: the size is targetcli's
# size= (configfs dev_size), the cfgstring carries the rest.
if out=$(tc /backstores/user:vdisk create name=tcd0 size=64M 'cfgstring=lbs=4096;mode=store'); then
	pass targetcli-disk-create "size from targetcli's size="
else
	fail targetcli-disk-create "$(printf '%s' "$out" | tr '\n' ' ' | cut -c1-200)"
	# (vscsid before 901ef95 wanted size= in the cfgstring.) Carry on
	# with the size in the cfgstring too, so that the checks below run.
	tc /backstores/user:vdisk create name=tcd0 size=64M 'cfgstring=size=64M;lbs=4096;mode=store' >/dev/null
fi
tcb "/loopback create $DWWN" "/loopback/$DWWN/luns create /backstores/user:vdisk/tcd0"
if tcd=$(wait_new sd_list "$before"); then
	lbs=$(cat /sys/block/$tcd/queue/logical_block_size)
	sz=$(($(cat /sys/block/$tcd/size) * 512))
	if [ "$lbs" = 4096 ] && [ "$sz" = $((64 << 20)) ]; then
		pass targetcli-disk "/dev/$tcd"
	else
		fail targetcli-disk "/dev/$tcd: lbs $lbs size $sz"
	fi
	check targetcli-disk-io disk_roundtrip "/dev/$tcd"
else
	tcd=
	fail targetcli-disk "no new sd after creating tcd0"
fi

# 7. A tape drive made with targetcli.
before=$(st_list)
tcb "/backstores/user:vtape create name=tct0 size=1G cfgstring=memory=1;barcode=TCT001" \
	"/loopback create $TWWN" "/loopback/$TWWN/luns create /backstores/user:vtape/tct0"
if tct=$(wait_new st_list "$before"); then
	check targetcli-tape mt -f "/dev/$tct" status
	note "/dev/$tct: $OUT"
	check targetcli-tape-io tape_roundtrip /dev/$tct
else
	tct=
	fail targetcli-tape "no new nst after creating tct0"
fi

# 8. changemedium swaps the cartridge: the new one is blank, the old one
# comes back with its data.
if [ -n "$tct" ]; then
	out=$(tc /backstores/user:vtape changemedium tct0 1G cfgstring=barcode=TCT002)
	rc=$?
	# The drive reports the change (UNIT ATTENTION) once; st passes it on.
	mt -f /dev/$tct status >/dev/null 2>&1
	mtout=$(mt -f /dev/$tct status 2>&1)
	note "$mtout"
	holds=$(vscsictl devices 2>/dev/null | grep -w tct0)
	note "vscsictl: $holds"
	got=$(mt -f /dev/$tct rewind 2>&1 && dd if=/dev/$tct bs=64k 2>/dev/null | wc -c)
	if [ $rc -eq 0 ] && printf '%s' "$holds" | grep -q TCT002 && [ "$got" = 0 ] &&
		printf '%s' "$mtout" | grep -qi 'BOT\|ONLINE'; then
		pass targetcli-changemedium "TCT002 loaded, blank"
	else
		fail targetcli-changemedium "rc $rc; vscsictl: $holds; read $got bytes from the new cartridge; $(printf '%s' "$out $mtout" | tr '\n' ' ' | cut -c1-200)"
	fi
	# An empty barcode unloads: the drive reports no medium (mt status
	# DR_OPEN, a non-blocking read ENOMEDIUM; a blocking open would wait
	# st's 120 s for a cartridge).
	out=$(tc /backstores/user:vtape changemedium tct0 1G cfgstring=barcode= 2>&1)
	rc=$?
	mt -f /dev/$tct status >/dev/null 2>&1
	mtout=$(mt -f /dev/$tct status 2>&1)
	rdout=$(dd if=/dev/$tct of=/dev/null bs=64k count=1 iflag=nonblock 2>&1)
	if [ $rc -eq 0 ] && printf '%s' "$mtout" | grep -q DR_OPEN && printf '%s' "$rdout" | grep -q 'No medium found'; then
		pass targetcli-changemedium-unload "empty drive: DR_OPEN, ENOMEDIUM"
	else
		fail targetcli-changemedium-unload "rc $rc: $(printf '%s' "$out" | tr '\n' ' ' | cut -c1-120); mt: $(printf '%s' "$mtout" | tr '\n' ' ' | cut -c1-120); dd: $rdout"
	fi
	tc /backstores/user:vtape changemedium tct0 1G cfgstring=barcode=TCT001 >/dev/null
	mt -f /dev/$tct status >/dev/null 2>&1
	if mt -f /dev/$tct rewind && dd if=/dev/$tct of=/tmp/tback bs=64k status=none && cmp -s /tmp/tpat /tmp/tback; then
		pass targetcli-changemedium-back "TCT001 keeps its data"
	else
		fail targetcli-changemedium-back "TCT001 does not read back what was written"
	fi
fi

# 9. saveconfig, clearconfig, targetctl restore.
tc saveconfig >/dev/null
# Debian's rtslib-fb keeps it in /etc/rtslib-fb-target, upstream in /etc/target.
saved=/etc/rtslib-fb-target/saveconfig.json
[ -s $saved ] || saved=/etc/target/saveconfig.json
expect_output targetcli-saveconfig tcd0 cat "$saved"
tc clearconfig confirm=True >/dev/null
sleep 2
left=$(ls -d /sys/kernel/config/target/core/user_*/* 2>/dev/null | grep -v -e '/hba_info$' -e '/hba_mode$')
if [ -z "$(sd_list)" ] && [ -z "$(st_list)" ] && [ -z "$left" ]; then
	pass targetcli-clearconfig
else
	fail targetcli-clearconfig "left: sd=[$(sd_list)] st=[$(st_list)] configfs=[$left]"
fi
before_sd=$(sd_list) before_st=$(st_list)
out=$(targetctl restore $saved 2>&1)
rc=$?
note "targetctl restore: rc $rc $out"
sleep 3
udevadm settle -t 20 >/dev/null 2>&1
note "after restore: sd=[$(sd_list | tr '\n' ' ')] st=[$(st_list | tr '\n' ' ')]"
note "$(vscsictl devices 2>&1)"
rsd=$(dev_block tcd0) rst=$(dev_node ntape tct0)
if [ $rc -eq 0 ] && [ -n "$rsd" ] && disk_roundtrip /dev/$rsd; then
	pass targetctl-restore-disk "/dev/$rsd"
else
	fail targetctl-restore-disk "rc $rc; tcd0 not serving I/O after restore (node [$rsd]): $(printf '%s' "$out" | tr '\n' ' ' | cut -c1-200)"
fi
# The drive reports power on/reset once after the restore.
[ -n "$rst" ] && mt -f /dev/$rst status >/dev/null 2>&1
if [ $rc -eq 0 ] && [ -n "$rst" ] && mt -f /dev/$rst status >/dev/null 2>&1 && tape_roundtrip /dev/$rst; then
	pass targetctl-restore-tape "/dev/$rst"
else
	fail targetctl-restore-tape "tct0 not serving I/O after restore (node [$rst])"
fi
# vscsid's own config devices went with clearconfig; a restart brings
# them back as vscsid made them.
systemctl restart vscsid
sleep 2
udevadm settle -t 20 >/dev/null 2>&1
note "after restart: $(vscsictl devices 2>&1)"
if [ "$(systemctl is-active vscsid)" = active ] && vscsictl devices 2>/dev/null | grep -w cfgdisk | grep -q 'sd[a-z]' &&
	vscsictl devices 2>/dev/null | grep -w cfgtape | grep -q 'st[0-9]'; then
	pass config-devices-after-restore
else
	fail config-devices-after-restore "$(vscsictl devices 2>&1 | tr '\n' ' ' | cut -c1-300)"
fi

# 10. Stop: nothing of the config devices is left; the targetcli ones stay.
cfgdev=$(vscsictl devices 2>/dev/null | grep -w cfgdisk | grep -o 'sd[a-z][a-z]*' | head -n1)
systemctl stop vscsid
sleep 1
res=$(ls -d /sys/kernel/config/target/core/user_*/cfgdisk /sys/kernel/config/target/core/user_*/cfgtape 2>/dev/null
	ls /sys/kernel/config/target/loopback 2>/dev/null | grep '^naa\.' | grep -v -e $DWWN -e $TWWN)
if [ "$(systemctl is-active vscsid)" != active ] && [ -z "$res" ] && { [ -z "$cfgdev" ] || [ ! -e "/sys/block/$cfgdev" ]; } &&
	[ -z "$(ls /run/vscsid 2>/dev/null)" ]; then
	pass stop-no-residue
else
	fail stop-no-residue "configfs: [$res] sd ${cfgdev:-?} exists: $([ -e "/sys/block/${cfgdev:-none}" ] && echo yes || echo no); /run/vscsid: $(ls /run/vscsid 2>/dev/null)"
fi
if [ -n "$rsd" ]; then check stop-keeps-targetcli-devices test -e "/sys/block/$rsd"; else fail stop-keeps-targetcli-devices "no restored targetcli disk"; fi
systemctl start vscsid
expect_eq start-again active "$(systemctl is-active vscsid)"

# 11. Restarts under a reading dd, a writing tar and fio: the targetcli
# disk, the config file's drive and the config file's disk (all taken
# over in place at every start: the old daemon hands them over) keep
# serving; dd, tar and fio see no error, the drive no unit attention, and
# every archive reads back equal. The config file's disk is a RAM store
# (32 MiB): each restart carries its data over in memory (systemd's
# file-descriptor store), so a pattern written to its last 8 MiB before
# the restarts, which fio does not touch, reads back equal after them, and
# sd never logs the power-on unit attention a store lost would raise.
rst_tape=$(dev_node ntape cfgtape)
rst_disk=$(dev_block cfgdisk)
if [ -n "$rsd" ] && [ -n "$rst_tape" ] && [ -n "$rst_disk" ]; then
	: >/tmp/dd.err
	rm -f /tmp/dd.stop
	rst_hctl=$(basename "$(readlink -f /sys/block/$rst_disk/device)")
	rst_po=$(dmesg | grep -c "$rst_hctl: Power-on or device reset occurred")
	head -c 8M /dev/urandom >/tmp/rst.pat
	dd if=/tmp/rst.pat of=/dev/$rst_disk bs=1M seek=24 oflag=direct conv=fsync status=none || echo "pattern write failed" >>/tmp/dd.err
	repeat /tmp/dd.stop 0 /tmp/dd.passes /tmp/dd.err dd if=/dev/$rsd of=/dev/null bs=256k iflag=direct status=none
	ddpid=$!
	mt -f /dev/$rst_tape rewind
	repeat /tmp/dd.stop 2 /tmp/rst.tars /tmp/dd.err paced tar -cf /dev/$rst_tape -b 512 -C / "$TAR_TREE"
	tarpid=$!
	repeat /tmp/dd.stop 0 /tmp/rst.fios /tmp/dd.err fio --name=rst --filename=/dev/$rst_disk --rw=randrw --bs=4k --iodepth=8 \
		--ioengine=libaio --direct=1 --size=24M --time_based --runtime=2 --output=/dev/null
	fiopid=$!
	restarts_under "$restarts" /tmp/dd.stop $ddpid $tarpid $fiopid
	scrape >/tmp/rst.metrics
	ua=$(mval /tmp/rst.metrics 'vscsi_scsi_unit_attentions_total{device="cfgtape"}')
	if [ $restarts_failed -eq 0 ] && [ ! -s /tmp/dd.err ] && [ "$(systemctl is-active vscsid)" = active ] && [ "$ua" = 0 ]; then
		pass restart-under-io "$restarts restarts, $(cat /tmp/dd.passes) full reads of /dev/$rsd, $(cat /tmp/rst.tars) archives to /dev/$rst_tape, $(cat /tmp/rst.fios) fio runs on /dev/$rst_disk"
	else
		fail restart-under-io "$restarts_failed failed restarts; cfgtape unit attentions [$ua]; dd and tar: $(tr '\n' ' ' </tmp/dd.err | cut -c1-200)"
	fi
	check restart-under-io-data disk_roundtrip /dev/$rsd
	check_sh restart-under-io-ram-store "dd if=/dev/$rst_disk of=/tmp/rst.back bs=1M skip=24 count=8 iflag=direct status=none &&
		cmp -s /tmp/rst.back /tmp/rst.pat || { echo \"the pattern in the RAM store differs after the restarts\"; exit 1; }
		n=\$(dmesg | grep -c '$rst_hctl: Power-on or device reset occurred' || true)
		[ \"\$n\" = $rst_po ] || { echo \"\$((n - $rst_po)) power-on unit attentions on $rst_hctl\"; exit 1; }
		echo \"8 MiB of the RAM store equal after $restarts restarts; no power-on unit attention on $rst_hctl\""
	tars=$(cat /tmp/rst.tars 2>/dev/null || echo 0)
	check restart-under-io-tape-data archives_equal /dev/$rst_tape "$tars"
else
	fail restart-under-io "no targetcli disk [$rsd], config drive [$rst_tape] or config disk [$rst_disk]"
fi

# 11b. A package upgrade under streams: dd reads the targetcli disk and
# the config file's disk, and GNU tar writes archive after archive to a
# targetcli drive and to the config file's drive (cartridges on disk)
# through st while dpkg -i installs the next Debian revision, whose
# postinst restarts vscsid: the old daemon hands the config file's
# devices over in place (--on-stop=auto sees systemd's restart job) and
# the new one takes them over. Nothing is application-visible: dd and tar
# see no error, the drives resume at the same position without a unit
# attention (the restart is a pause to st), every archive compares equal
# to the files it was made of, and every device keeps its node. The
# streams pause a moment between commands: at full speed on the guest's
# one TCG CPU they starved dpkg (110 s to unpack and run the scripts),
# while a stream that issues a command every fraction of a second still
# has commands waiting in the ring through the second the restart takes.
UWWN=naa.500140500000e002
upgrade=$(ls /usr/local/share/vscsid/upgrade/vscsid_*.deb 2>/dev/null | head -n1)
before=$(st_list)
if [ -z "$upgrade" ]; then
	fail upgrade-under-streams "no upgrade package in /usr/local/share/vscsid/upgrade (full/build puts it there)"
elif [ -z "$rsd" ]; then
	fail upgrade-under-streams "no targetcli disk to read"
elif ! { tcb "/backstores/user:vtape create name=upt0 size=4G cfgstring=personality=lto8;media=/var/lib/vscsid/upgrade;barcode=UPG001L8" \
	"/loopback create $UWWN" "/loopback/$UWWN/luns create /backstores/user:vtape/upt0" &&
	ust=$(wait_new st_list "$before"); }; then
	fail upgrade-under-streams "no new nst after creating upt0"
else
	old_ver=$(dpkg-query -W -f '${Version}' vscsid) old_pid=$(systemctl show -p MainPID --value vscsid)
	new_ver=$(dpkg-deb -f "$upgrade" Version)
	cst=$(dev_node ntape cfgtape)
	csd=$(dev_block cfgdisk)
	for t in $ust $cst; do
		mt -f /dev/$t rewind
		mt -f /dev/$t status >/dev/null 2>&1
	done
	rm -f /tmp/up.stop /tmp/up.passes /tmp/up.tars /tmp/up.cpasses /tmp/up.ctars
	: >/tmp/up.err
	# up_read DISK: the next 4 MiB round the disk (the position counts in
	# the stream's own shell); up_reads DISK COUNTFILE: reads until up.stop.
	up_read() {
		dd if=/dev/$1 of=/dev/null bs=256k count=16 skip=$((up_n % ($(cat /sys/block/$1/size) / 8192) * 16)) iflag=direct status=none &&
			up_n=$((up_n + 1))
	}
	up_n=0
	up_reads() { repeat /tmp/up.stop 0 "$2" /tmp/up.err paced up_read "$1"; }
	# up_tars TAPE COUNTFILE: 256 KiB records (-b 512), one archive per
	# file on the tape; a static tree, so that each can be compared with
	# the files.
	up_tars() { repeat /tmp/up.stop 2 "$2" /tmp/up.err paced tar -cf /dev/$1 -b 512 -C / "$TAR_TREE"; }
	up_reads "$rsd" /tmp/up.passes
	ddpid=$!
	up_tars "$ust" /tmp/up.tars
	tarpid=$!
	cpids=
	if [ -n "$csd" ] && [ -n "$cst" ]; then
		up_reads "$csd" /tmp/up.cpasses
		cpids="$!"
		up_tars "$cst" /tmp/up.ctars
		cpids="$cpids $!"
	else
		fail upgrade-config-devices "no node for cfgdisk [$csd] or cfgtape [$cst]: $(vscsictl devices 2>&1 | tr '\n' ' ')"
	fi
	sleep 3
	t0=$(date +%s)
	out=$(dpkg -i "$upgrade" 2>&1)
	rc=$?
	note "dpkg -i $upgrade: rc $rc in $(($(date +%s) - t0)) s: $(printf '%s' "$out" | tail -n 4 | tr '\n' ' ')"
	sleep 3
	touch /tmp/up.stop
	# shellcheck disable=SC2086 # the pids, one word each
	wait $ddpid $tarpid $cpids
	new_pid=$(systemctl show -p MainPID --value vscsid)
	got_ver=$(dpkg-query -W -f '${Version}' vscsid)
	if [ $rc -eq 0 ] && [ "$got_ver" = "$new_ver" ] && [ "$got_ver" != "$old_ver" ] &&
		[ "$(systemctl is-active vscsid)" = active ] && [ "$new_pid" != "$old_pid" ] && [ "$new_pid" != 0 ]; then
		pass upgrade-restarts "$old_ver to $got_ver, MainPID $old_pid to $new_pid"
	else
		fail upgrade-restarts "dpkg rc $rc; version $old_ver to $got_ver (want $new_ver); MainPID $old_pid to $new_pid; $(systemctl is-active vscsid)"
	fi
	if [ ! -s /tmp/up.err ]; then
		pass upgrade-no-application-error "$(cat /tmp/up.passes) and $(cat /tmp/up.cpasses 2>/dev/null) 4 MiB reads of /dev/$rsd and /dev/$csd, $(cat /tmp/up.tars) and $(cat /tmp/up.ctars 2>/dev/null) tar archives to /dev/$ust and /dev/$cst"
	else
		fail upgrade-no-application-error "$(tr '\n' ' ' </tmp/up.err | cut -c1-300)"
	fi
	ncst=$(dev_node ntape cfgtape)
	ncsd=$(dev_block cfgdisk)
	if [ "$(dev_block tcd0)" = "$rsd" ] && [ "$(dev_node ntape upt0)" = "$ust" ] && [ "$ncst" = "$cst" ] && [ "$ncsd" = "$csd" ] &&
		[ -e "/sys/block/$csd" ]; then
		pass upgrade-keeps-nodes "/dev/$rsd, /dev/$ust, /dev/$csd, /dev/$cst"
	else
		fail upgrade-keeps-nodes "disk [$rsd] now [$(dev_block tcd0)], tape [$ust] now [$(dev_node ntape upt0)], cfgdisk [$csd] now [$ncsd], cfgtape [$cst] now [$ncst]"
	fi
	# The new daemon's drives reported no unit attention: st was never
	# told of a reset, because to the initiator there was none. The log
	# says the config file's devices were handed over.
	scrape >/tmp/up.metrics
	expect_eq upgrade-no-unit-attention 1:0:1:0 "$(mval /tmp/up.metrics 'vscsi_device_info{device="upt0"}'):$(mval /tmp/up.metrics 'vscsi_scsi_unit_attentions_total{device="upt0"}'):$(mval /tmp/up.metrics 'vscsi_device_info{device="cfgtape"}'):$(mval /tmp/up.metrics 'vscsi_scsi_unit_attentions_total{device="cfgtape"}')"
	check_sh upgrade-handed-over "journalctl -u vscsid --no-pager -o cat _PID=$old_pid | grep 'device handed over' | grep cfgtape >/dev/null
		journalctl -u vscsid --no-pager -o cat _PID=$new_pid | grep 'continuing the device the previous daemon handed over' | grep cfgdisk >/dev/null"
	# Every archive reads back (dd to its filemark) and matches the files
	# (tar -d); after the last, end of data.
	for t in "targetcli $ust up.tars" "config $cst up.ctars"; do
		read -r what tdev tfile <<<"$t"
		tars=$(cat "/tmp/$tfile" 2>/dev/null || echo 0)
		check "upgrade-tape-data-$what" archives_equal "/dev/$tdev" "$tars"
	done
fi
tcb "/loopback delete $UWWN" "/backstores/user:vtape delete upt0"

# 11c. The metrics endpoint with TLS and basic auth (exporter-toolkit's
# --web.config.file; the certificate full/build made for 127.0.0.1): a
# real HTTPS client (python3's urllib, verifying the certificate) is
# served with the right password and refused (401) with a wrong one or
# none; plain HTTP gets no metrics. Then the unit as it was.
mkdir -p /etc/systemd/system/vscsid.service.d
printf '[Service]\nExecStart=\nExecStart=/usr/sbin/vscsid --config /etc/vscsid/vscsid.yaml --web.config.file=/etc/vscsid/web-config.yml\n' \
	>/etc/systemd/system/vscsid.service.d/tls.conf
systemctl daemon-reload
systemctl restart vscsid
# metrics_get URL USER PASSWORD: prints "STATUS BYTES HAS-METRICS".
metrics_get() {
	python3 - "$@" <<-'EOF'
		import base64, ssl, sys, urllib.error, urllib.request
		url, user, pw = sys.argv[1], sys.argv[2], sys.argv[3]
		ctx = ssl.create_default_context(cafile="/etc/vscsid/tls/metrics.crt")
		req = urllib.request.Request(url)
		if user:
		    req.add_header("Authorization", "Basic " + base64.b64encode(f"{user}:{pw}".encode()).decode())
		try:
		    with urllib.request.urlopen(req, context=ctx, timeout=10) as r:
		        body, code = r.read().decode(errors="replace"), r.status
		except urllib.error.HTTPError as e:
		    body, code = e.read().decode(errors="replace"), e.code
		except Exception as e:
		    print("error", type(e).__name__)
		    sys.exit(0)
		print(code, len(body), "vscsi_devices{" in body)
	EOF
}
tls_url=https://127.0.0.1:9544/metrics
expect_eq metrics-tls-right-password "200 True" "$(metrics_get $tls_url vmtest vmtest-metrics-secret | awk '{ print $1, $3 }')"
expect_eq metrics-tls-wrong-password "401 False" "$(metrics_get $tls_url vmtest wrong-secret | awk '{ print $1, $3 }')"
expect_eq metrics-tls-no-password "401 False" "$(metrics_get $tls_url '' '' | awk '{ print $1, $3 }')"
out=$(metrics_get http://127.0.0.1:9544/metrics vmtest vmtest-metrics-secret)
if [ "${out##* }" != True ]; then
	pass metrics-tls-plain-http-refused "$out"
else
	fail metrics-tls-plain-http-refused "plain HTTP served the metrics: $out"
fi
rm -f /etc/systemd/system/vscsid.service.d/tls.conf
systemctl daemon-reload
systemctl restart vscsid
expect_eq metrics-plain-again active "$(systemctl is-active vscsid)"

# 11c2. systemctl reload (SIGHUP) applies the config file's changes to the
# running daemon while tar writes archives to the config file's drive:
# the first reload adds a drive and two disks, the second removes one disk
# and sets a timing model on the other. A file that does not pass the
# checks, and one that changes what a running device cannot change (the
# drive's cfgstring), are refused whole: the devices stay as they were.
# The stream sees nothing: no error, no unit attention, and its archives
# compare equal. Then the original file again, and the added devices go.
cp /etc/vscsid/vscsid.yaml /tmp/rl.orig
{ cat /tmp/rl.orig; cat <<'EOF2'
  - name: rldtape
    type: vtape
    config: "personality=lto8;media=/var/lib/vscsid/reload;barcode=RLD001L8"
  - name: rlddisk
    type: vdisk
    config: "size=64M;mode=fake_rw"
  - name: rldgone
    type: vdisk
    config: "size=32M;mode=fake_rw"
EOF2
} >/tmp/rl.1
{ cat /tmp/rl.orig; cat <<'EOF2'
  - name: rldtape
    type: vtape
    config: "personality=lto8;media=/var/lib/vscsid/reload;barcode=RLD001L8"
  - name: rlddisk
    type: vdisk
    config: "size=64M;mode=fake_rw"
    fault:
      timing: "latency=1ms"
EOF2
} >/tmp/rl.2
sed 's/barcode=CFG001L9/barcode=CFG002L9/' /tmp/rl.2 >/tmp/rl.unchangeable
printf 'cmd_time_out: 10\ndevices:\n  - name: x\n    type: vnothing\n' >/tmp/rl.bad
rl_pid=$(systemctl show -p MainPID --value vscsid)
rl_st=$(dev_node ntape cfgtape)
rm -f /tmp/rl.stop /tmp/rl.tars
: >/tmp/rl.err
if [ -z "$rl_st" ]; then
	fail reload-stream "no node for cfgtape"
else
	mt -f /dev/$rl_st rewind
	scrape >/tmp/rl.before
	repeat /tmp/rl.stop 2 /tmp/rl.tars /tmp/rl.err paced tar -cf /dev/$rl_st -b 512 -C / "$TAR_TREE"
	rl_tar=$!
	check_sh reload-adds "cp /tmp/rl.1 /etc/vscsid/vscsid.yaml; systemctl reload vscsid; sleep 2; udevadm settle -t 20 >/dev/null 2>&1
		d=\$(vscsictl devices); echo \"\$d\"
		for n in rldtape rlddisk rldgone; do echo \"\$d\" | grep -w \$n | grep /dev/ >/dev/null; done"
	check_sh reload-removes-and-sets-timing "cp /tmp/rl.2 /etc/vscsid/vscsid.yaml; systemctl reload vscsid; sleep 2
		d=\$(vscsictl devices); echo \"\$d\"
		if echo \"\$d\" | grep -w rldgone >/dev/null || ls -d /sys/kernel/config/target/core/user_*/rldgone 2>/dev/null; then exit 1; fi
		vscsictl fault list rlddisk | grep 'latency=1ms' >/dev/null"
	since=$(date +%s)
	check_sh reload-refuses-bad-file "cp /tmp/rl.bad /etc/vscsid/vscsid.yaml; systemctl reload vscsid; sleep 2
		journalctl -u vscsid -p err -o cat --since @$since | grep 'reload refused'
		vscsictl devices | grep -w rlddisk >/dev/null"
	since=$(date +%s)
	check_sh reload-refuses-unchangeable "cp /tmp/rl.unchangeable /etc/vscsid/vscsid.yaml; systemctl reload vscsid; sleep 2
		journalctl -u vscsid -p err -o cat --since @$since | grep 'device cfgtape: config changed'
		vscsictl devices | grep -w cfgtape | grep CFG001L9 >/dev/null"
	touch /tmp/rl.stop
	wait $rl_tar
	scrape >/tmp/rl.after
	if [ ! -s /tmp/rl.err ] && [ "$(systemctl show -p MainPID --value vscsid)" = "$rl_pid" ] &&
		[ "$(mval /tmp/rl.before 'vscsi_scsi_unit_attentions_total{device="cfgtape"}')" = "$(mval /tmp/rl.after 'vscsi_scsi_unit_attentions_total{device="cfgtape"}')" ]; then
		pass reload-stream-unharmed "$(cat /tmp/rl.tars) archives to /dev/$rl_st through four reloads, same process $rl_pid"
	else
		fail reload-stream-unharmed "tar: $(tr '\n' ' ' </tmp/rl.err | cut -c1-200); pid $rl_pid now $(systemctl show -p MainPID --value vscsid); unit attentions $(mval /tmp/rl.before 'vscsi_scsi_unit_attentions_total{device="cfgtape"}') then $(mval /tmp/rl.after 'vscsi_scsi_unit_attentions_total{device="cfgtape"}')"
	fi
	tars=$(cat /tmp/rl.tars 2>/dev/null || echo 0)
	check reload-stream-data archives_equal /dev/$rl_st "$tars"
fi
check_sh reload-back "cp /tmp/rl.orig /etc/vscsid/vscsid.yaml; systemctl reload vscsid; sleep 2
	d=\$(vscsictl devices); echo \"\$d\"
	if echo \"\$d\" | grep -w -e rldtape -e rlddisk >/dev/null || ls -d /sys/kernel/config/target/core/user_*/rld* 2>/dev/null; then exit 1; fi"
# 11d. A crash carries nothing: after a kill -9, systemd's Restart=
# starts the next daemon, which takes the config file's disk over in
# place (the same node) from power-on: its RAM store is empty, and sd
# logs the power-on unit attention the disk raises.
cd_node=$(dev_block cfgdisk)
if [ -n "$cd_node" ]; then
	check_sh crash-ram-store-empty "hctl=\$(basename \"\$(readlink -f /sys/block/$cd_node/device)\")
		head -c 8M /dev/urandom | dd of=/dev/$cd_node bs=1M seek=24 oflag=direct iflag=fullblock conv=fsync status=none
		po=\$(dmesg | grep -c \"\$hctl: Power-on or device reset occurred\" || true)
		pid=\$(systemctl show -P MainPID vscsid); systemctl kill -s KILL vscsid
		for i in \$(seq 60); do
			sleep 1; p=\$(systemctl show -P MainPID vscsid)
			[ \"\$(systemctl is-active vscsid)\" = active ] && [ \"\$p\" != \"\$pid\" ] && [ \"\$p\" != 0 ] && break
		done
		[ \"\$(systemctl is-active vscsid)\" = active ] || { echo \"vscsid not back after the crash\"; exit 1; }
		vscsictl devices | awk '\$1 == \"cfgdisk\"' | grep -qw $cd_node || { echo \"cfgdisk is no longer /dev/$cd_node\"; exit 1; }
		dd if=/dev/$cd_node of=/tmp/crash.back bs=1M skip=24 count=8 iflag=direct status=none
		cmp -s -n 8388608 /tmp/crash.back /dev/zero || { echo \"the RAM store kept data through a crash\"; exit 1; }
		n=\$(dmesg | grep -c \"\$hctl: Power-on or device reset occurred\" || true)
		[ \$n -gt \$po ] || { echo \"no power-on unit attention on \$hctl after the crash\"; exit 1; }
		echo \"pid \$pid killed, \$p serving; /dev/$cd_node empty again, \$((n - po)) power-on unit attention\""
else
	fail crash-ram-store-empty "no config disk in vscsictl devices"
fi

# 11e. A start-up error reaches the journal at priority err, where
# journalctl -p err finds it: a config file that is not there.
check_sh journal-startup-error 'd=/run/systemd/system/vscsid.service.d; mkdir -p $d
	printf "[Service]\nExecStart=\nExecStart=/usr/sbin/vscsid --config /etc/vscsid/missing.yaml\nRestart=no\n" >$d/missing.conf
	systemctl daemon-reload; since=$(date +%s)
	! systemctl restart vscsid 2>/dev/null
	e=$(journalctl -u vscsid -p err -o cat --since "@$since"); echo "$e"
	rm $d/missing.conf; systemctl daemon-reload; systemctl start vscsid
	grep -q "^vscsid: read config: .*missing.yaml" <<<"$e"'
expect_eq journal-service-back active "$(systemctl is-active vscsid)"

# 12. The package purged, last: the unit stopped (the config file's
# devices removed), disabled and gone from the unit list; nothing of
# vscsid's in configfs or /run; the targetcli devices, the user's, stay.
check_sh purge-leaves-nothing 'dpkg --purge vscsid >/tmp/purge.out 2>&1 || { cat /tmp/purge.out; exit 1; }
	if systemctl list-unit-files vscsid.service 2>/dev/null | grep "^vscsid.service" >/dev/null; then echo "the unit is still listed"; exit 1; fi
	if ls -d /sys/kernel/config/target/core/user_*/cfgdisk /sys/kernel/config/target/core/user_*/cfgtape 2>/dev/null | grep . >/dev/null; then echo "config devices left in configfs"; exit 1; fi
	if [ -e /run/vscsid ] || [ -e /etc/vscsid/vscsid.yaml ]; then echo "/run/vscsid or the conffile left"; exit 1; fi
	ls -d /sys/kernel/config/target/core/user_*/tcd0 >/dev/null'
