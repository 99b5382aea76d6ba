# shellcheck shell=bash
# soak.sh: one vscsid serving 65 devices under mixed load for a bounded
# time (vmtest.scenarios=soak, vmtest.soak=SECONDS; make vm-soak). Sourced by
# its scenario after the check library and helpers.sh.
#
# The devices (vscsid's own config, /etc/vscsid/vscsid.yaml replaced):
# 48 disks of mixed geometry (12 fake_rw 512 MiB of 512-byte blocks, 12
# fake_rw 1 GiB of 4 KiB blocks, 12 fake_rw 256 MiB 512e, 12 store 1 GiB
# over a 4 MiB RAM store: 33 GiB of virtual disk), 14 tape drives (10 with
# cartridges on disk, 4 with memory cartridges), and an IBM TS3100 library
# with 2 drives of its own and 4 cartridges: 65 devices, 14 cartridges.
#
# The load, two thirds of the time: fio 4 KiB randrw at QD4 on 8 disks,
# looping direct dd reads on 16, write/read/compare round trips on 4 store
# disks, GNU tar archives written and compared (tar -d) on the 10
# cartridge drives, mt write/weof/fsf/tell on the 4 memory drives, mtx
# loads and unloads on the library; fault rules added and cleared every
# 20 s (BUSY, which sd retries; RECOVERED ERROR, which it takes as success;
# delays). Then: every command the workload issued is in the metrics (per
# device: fio's I/Os plus the BUSY retries, dd's blocks, tar's records,
# mtx's moves), no tool saw an error, goroutines and open fds are back to
# where they were before the load, RSS over time. Last third: restarts
# (all 65 devices back, timed) and kill -9 under fio (config devices are
# re-attached in place: fio sees no error), goroutines and fds of the
# restarted daemon as those of the first, and no kernel error in dmesg.
# Figures are printed as "SOAK key value" notes for the closing report;
# the heap profile at the peak of anonymous memory (and its MemStats)
# goes out on the third serial port into the run directory's soak-heap/.

soak_secs=${soak_secs:-600}
SOAKD=/var/tmp/soak

# soak_proc PID: "VmRSS RssAnon RssFile RssShmem Threads" of PID, KiB.
soak_proc() { guestcheck procstat "$1" rss_kb rss_anon_kb rss_file_kb rss_shmem_kb threads; }
# soak_devices: vscsictl devices, once, into $SOAKD/devices (timed).
soak_devices() {
	local t0=$(date +%s%N)
	vscsictl devices >$SOAKD/devices 2>&1
	note "SOAK vscsictl_devices_ms $((($(date +%s%N) - t0) / 1000000))"
}
# soak_node NAME [COLUMN]: the device's node in $SOAKD/devices (6: NODE,
# 7: SG), without /dev/.
soak_node() { awk -v n="$1" -v c="${2:-6}" '$1 == n { sub("^/dev/", "", $c); print $c }' $SOAKD/devices; }
soak_pid() { systemctl show -p MainPID --value vscsid; }
# soak_fds_diff PID: what PID's descriptors point at against the first
# daemon's before the load ($SOAKD/fds0), to say which kind a leak is of.
soak_fds_diff() { guestcheck fds "$1" | diff $SOAKD/fds0 - | grep '^[<>]' | tr '\n' ';' | cut -c1-400; }
# soak_journals PID: how many more library move journals PID holds open
# than the first daemon did before the load ($j0). A library opens its
# journal at its first move after a start and keeps it: an fd the idle
# first daemon could not have, and the restarted one has when a move
# reached it.
soak_journals() { echo $(($(guestcheck fds "$1" .journal) - j0)); }
# soak_quiet: no heap profile fetch runs or starts until soak_loud, so
# that the daemon's open fds are its own.
soak_quiet() {
	touch $SOAKD/quiet
	while [ -e $SOAKD/fetching ]; do sleep 0.5; done
}
soak_loud() { rm -f $SOAKD/quiet; }
# soak_heap PREFIX: the daemon's heap profile (PREFIX.pb.gz, for go tool
# pprof) and its text form with the Go runtime's MemStats (PREFIX.txt),
# from /debug/pprof (--web.pprof); fails, replacing neither, if either
# does not come.
soak_heap() {
	local u=http://127.0.0.1:9544/debug/pprof/heap
	guestcheck http-get "$u" "$1.pb.gz" "$u?debug=1" "$1.txt" 2>/dev/null
}

soak_config() {
	local i
	{
		echo "# The soak's config (deploy/vm/full/guest/soak.sh): 65 devices."
		echo "cmd_time_out: 30"
		echo "max_data_area_mb: 16"
		echo "devices:"
		for i in $(seq -w 0 47); do
			local c
			case $((10#$i / 12)) in
			0) c="size=512MiB;lbs=512;mode=fake_rw" ;;
			1) c="size=1GiB;lbs=4096;mode=fake_rw" ;;
			2) c="size=256MiB;lbs=512;pbexp=3;lowest_aligned=1;mode=fake_rw" ;;
			3) c="size=1GiB;lbs=$((512 << (3 * (10#$i % 2))));mode=store;store_size=4MiB" ;;
			esac
			printf '  - {name: d%s, type: vdisk, config: "%s"}\n' "$i" "$c"
		done
		for i in $(seq -f %02g 0 9); do
			printf '  - {name: t%s, type: vtape, config: "personality=lto8;media=%s;barcode=SK00%sL8"}\n' "$i" /var/lib/vscsid/soak "$i"
		done
		for i in $(seq -w 10 13); do
			printf '  - {name: t%s, type: vtape, config: "personality=lto6;memory=1;capacity=64MiB;barcode=MEM0%sL6"}\n' "$i" "$i"
		done
		echo '  - {name: ld0, type: vtape, config: "personality=lto8;media=/var/lib/vscsid/slib"}'
		echo '  - {name: ld1, type: vtape, config: "personality=lto8;media=/var/lib/vscsid/slib"}'
		echo '  - {name: slib, type: vlibrary, config: "personality=ibm-ts3100;media=/var/lib/vscsid/slib;slots=8;mailslots=1;drives=ld0+ld1;cartridges=4;first=S01001L8"}'
	}
}

# soak_wait_devices: wait (120 s at most) for 48 sd, 16 nst and one sch.
soak_wait_devices() {
	local i
	for i in $(seq 240); do
		udevadm settle -t 5 >/dev/null 2>&1
		[ "$(sd_list | wc -l)" = 48 ] && [ "$(st_list | wc -l)" = 16 ] && [ -e /dev/sch0 ] && return 0
		sleep 0.5
	done
	return 1
}

# soak_loop NAME BODY: runs BODY (a shell snippet) until $SOAKD/stop
# exists, counting passes in $SOAKD/NAME.n, errors in $SOAKD/NAME.err.
soak_loop() {
	local name=$1 body=$2
	(
		n=0
		while [ ! -e "$SOAKD/stop" ]; do
			if ! out=$(bash -c "$body" 2>&1); then
				echo "pass $n: $out" | head -c 400 >>"$SOAKD/$name.err"
				echo >>"$SOAKD/$name.err"
				break
			fi
			n=$((n + 1))
		done
		echo "$n" >"$SOAKD/$name.n"
	) &
}

# soak_faults SECONDS: fault rules added and cleared every 20 s until
# SECONDS have passed: RECOVERED ERROR on fio's d12 writes, delays on dd's
# d16. (The BUSY rule on d00 stays for the whole load: clearing a rule
# takes its vscsi_fault_injected_total series away, and the count check
# needs it.)
soak_faults() {
	local end=$(($(date +%s) + $1)) on=
	while [ "$(date +%s)" -lt "$end" ]; do
		if [ -z "$on" ]; then
			vscsictl fault add d12 'op=write;every=40;recovered' >/dev/null &&
				vscsictl fault add d16 'op=read;every=10;delay=5ms' >/dev/null || echo "fault add failed" >>"$SOAKD/faults.err"
			on=1
		else
			for d in d12 d16; do vscsictl fault clear $d >/dev/null || echo "fault clear $d failed" >>"$SOAKD/faults.err"; done
			on=
		fi
		echo x >>"$SOAKD/faults.toggles"
		sleep 20
	done
	for d in d12 d16; do vscsictl fault clear $d >/dev/null || echo "fault clear $d failed" >>"$SOAKD/faults.err"; done
}

soak_run() {
	local cfg=/etc/vscsid/vscsid.yaml t0 el pid0 pid load=$((soak_secs * 2 / 3)) d i
	rm -rf "$SOAKD"
	mkdir -p "$SOAKD"
	dmesg -c >/dev/null
	soak_config >$SOAKD/vscsid.yaml
	expect_output soak-config-check 'config ok: 65 devices' vscsid --config $SOAKD/vscsid.yaml --check-config || return
	install -m 644 $SOAKD/vscsid.yaml $cfg
	# udev watches disks and probes one again (blkid reads) whenever a
	# writer closes it; here only the workload may issue commands.
	echo 'ACTION=="add|change", SUBSYSTEM=="block", KERNEL=="sd*", OPTIONS+="nowatch"' >/etc/udev/rules.d/99-soak-nowatch.rules
	udevadm control --reload
	# /debug/pprof for the heap profile at the peak of anonymous memory.
	mkdir -p /run/systemd/system/vscsid.service.d
	printf '[Service]\nExecStart=\nExecStart=%s --config %s --web.pprof\n' "$(command -v vscsid)" $cfg \
		>/run/systemd/system/vscsid.service.d/soak-pprof.conf
	systemctl daemon-reload
	rm -rf /var/tmp/soak-heap
	mkdir -p /var/tmp/soak-heap
	t0=$(date +%s%N)
	if ! systemctl restart vscsid || ! soak_wait_devices; then
		fail soak-devices "$(sd_list | wc -l) sd, $(st_list | wc -l) nst, sch0: $(ls /dev/sch0 2>&1); $(systemctl is-active vscsid)"
		return
	fi
	el=$((($(date +%s%N) - t0) / 1000000))
	pass soak-devices "48 sd, 16 nst, /dev/sch0 in $el ms"
	note "SOAK start_ms $el"
	pid0=$(soak_pid)
	sleep 5
	scrape >$SOAKD/m0 || { fail soak-scrape "/metrics did not answer within 10 s"; return; }
	local g0 f0
	g0=$(mval $SOAKD/m0 go_goroutines) f0=$(mval $SOAKD/m0 process_open_fds)
	note "SOAK before_load goroutines $g0 fds $f0 proc $(soak_proc "$pid0")"
	guestcheck fds "$pid0" >$SOAKD/fds0
	j0=$(guestcheck fds "$pid0" .journal)

	# The nodes.
	declare -A node
	soak_devices
	for d in $(seq -w 0 47 | sed 's/^/d/') $(seq -w 0 13 | sed 's/^/t/'); do
		node[$d]=$(soak_node "$d")
	done
	local lsg
	lsg=$(soak_node slib 7)
	# No merging: one fio or dd I/O is one SCSI command.
	for d in $(seq -w 0 47 | sed 's/^/d/'); do echo 2 >"/sys/block/${node[$d]}/queue/nomerges"; done
	# The archive: a static tree, its size in 64 KiB records.
	local arch_recs
	arch_recs=$(($(tar -cf - -b 128 -C / usr/lib/python3 | wc -c) / 65536))
	note "SOAK tar_archive_records $arch_recs"

	# BUSY on every 50th read of d00 (sd retries it), for the whole load.
	vscsictl fault add d00 'op=read;every=50;busy' >/dev/null || echo "fault add d00 failed" >>"$SOAKD/faults.err"
	# fio: 8 disks, 4 KiB randrw QD4, time-based.
	local fjobs=()
	for d in d00 d01 d02 d03 d12 d13 d14 d15; do
		fjobs+=(--name="$d" --filename="/dev/${node[$d]}")
	done
	fio --ioengine=libaio --direct=1 --rw=randrw --bs=4k --iodepth=4 --time_based --runtime="$load" \
		--output-format=json --output=$SOAKD/fio.json "${fjobs[@]}" >$SOAKD/fio.out 2>&1 &
	local fiopid=$!
	# dd: direct 64 KiB reads, 256 per pass, at a random offset.
	for d in $(seq 16 31 | sed 's/^/d/'); do
		soak_loop "$d" "dd if=/dev/${node[$d]} of=/dev/null bs=64k count=256 skip=\$((RANDOM % 1024)) iflag=direct status=none"
	done
	# Store disks: 1 MiB of random data at a random MiB of the store, read
	# back and compared (16 writes and 16 reads of 64 KiB a pass).
	for d in d36 d37 d38 d39; do
		soak_loop "$d" "f=$SOAKD/$d.pat; head -c 1048576 /dev/urandom >\$f; o=\$((RANDOM % 4))
			dd if=\$f of=/dev/${node[$d]} bs=64k seek=\$((o * 16)) oflag=direct status=none
			dd if=/dev/${node[$d]} bs=64k skip=\$((o * 16)) count=16 iflag=direct status=none | cmp - \$f"
	done
	# tar on the cartridge drives: write, rewind, compare.
	for d in $(seq -f %02g 0 9 | sed 's/^/t/'); do
		soak_loop "$d" "mt -f /dev/${node[$d]} rewind && tar -cf /dev/${node[$d]} -b 128 -C / usr/lib/python3 &&
			mt -f /dev/${node[$d]} rewind && tar -df /dev/${node[$d]} -b 128 -C /"
	done
	# mt on the memory drives: two files, then fsf and tell.
	for d in t10 t11 t12 t13; do
		soak_loop "$d" "n=/dev/${node[$d]}; mt -f \$n rewind && dd if=/dev/zero of=\$n bs=32k count=20 status=none && mt -f \$n weof 1 &&
			dd if=/dev/zero of=\$n bs=32k count=10 status=none && mt -f \$n weof 1 && mt -f \$n rewind && mt -f \$n fsf 1 &&
			mt -f \$n tell | grep -q 'At block 21\\.' && mt -f \$n status >/dev/null"
	done
	# mtx: slot 1 to drive 0 and back, slot 2 to drive 1 and back.
	soak_loop slib "mtx -f /dev/$lsg load 1 0 && mtx -f /dev/$lsg load 2 1 && mtx -f /dev/$lsg unload 1 0 && mtx -f /dev/$lsg unload 2 1"
	# RSS every 15 s, for the whole soak; the heap profile whenever the
	# anonymous memory reaches a new peak (the last one is the peak's).
	(
		s=$(date +%s) peak=0
		while [ ! -e $SOAKD/done ]; do
			if l=$(soak_proc "$(soak_pid)" 2>/dev/null); then
				l="$(($(date +%s) - s)) $l"
				echo "$l" >>$SOAKD/rss
				read -r _ _ a _ <<<"$l"
				# Not while a check counts the daemon's fds (soak_quiet):
				# the fetch's connection is one.
				touch $SOAKD/fetching
				if [ ! -e $SOAKD/quiet ] && [ "${a:-0}" -gt "$peak" ] && soak_heap /var/tmp/soak-heap/peak; then
					peak=$a
					echo "$l" >/var/tmp/soak-heap/peak.at
				fi
				rm -f $SOAKD/fetching
			fi
			sleep 15
		done
	) &
	local rsspid=$!
	soak_faults "$load"
	touch $SOAKD/stop
	wait $fiopid
	local fiorc=$?
	# The loops end their pass; the rss sampler runs on.
	for i in $(seq 300); do
		[ "$(ls $SOAKD/*.n 2>/dev/null | wc -l)" = 35 ] && break
		sleep 1
	done
	sleep 5
	soak_quiet
	scrape >$SOAKD/m1 || { fail soak-scrape "/metrics did not answer within 10 s"; return; }
	local g1 f1
	g1=$(mval $SOAKD/m1 go_goroutines) f1=$(mval $SOAKD/m1 process_open_fds)
	note "SOAK after_load goroutines $g1 fds $f1 proc $(soak_proc "$pid0")"
	soak_loud
	vscsictl fault clear d00 >/dev/null || echo "fault clear d00 failed" >>"$SOAKD/faults.err"

	# No tool saw an error.
	local errs
	errs=$(cat $SOAKD/*.err 2>/dev/null | head -c 1500)
	if [ $fiorc -eq 0 ] && [ -z "$errs" ] && [ "$(ls $SOAKD/*.n | wc -l)" = 35 ] && [ "$(soak_pid)" = "$pid0" ]; then
		pass soak-load-no-error "$load s: fio on 8 disks, dd on 16, round trips on 4, tar on 10 drives, mt on 4, mtx; $(wc -l <$SOAKD/faults.toggles) fault toggles"
	else
		fail soak-load-no-error "fio rc $fiorc; $(ls $SOAKD/*.n | wc -l) of 35 loops ended; pid $pid0 now $(soak_pid); $errs"
	fi
	# Every command the workload issued, per device: DEVICE, the commands
	# its tool issued (fio's I/Os, dd's blocks, tar's records, mtx's
	# moves), the commands that count them (guestcheck command-counts,
	# which takes the BUSY retries off).
	local rw=read_10,read_16,write_10,write_16 counts sum total
	counts=$({
		for d in d00 d01 d02 d03 d12 d13 d14 d15; do echo "$d fio $rw"; done
		for d in $(seq 16 31 | sed 's/^/d/'); do echo "$d $(($(cat $SOAKD/$d.n) * 256)) read_10,read_16"; done
		for d in d36 d37 d38 d39; do echo "$d $(($(cat $SOAKD/$d.n) * 32)) $rw"; done
		for d in $(seq -f %02g 0 9 | sed 's/^/t/'); do echo "$d $(($(cat $SOAKD/$d.n) * arch_recs)) write_6"; done
		for d in t10 t11 t12 t13; do echo "$d $(($(cat $SOAKD/$d.n) * 30)) write_6"; done
		echo "slib $(($(cat $SOAKD/slib.n) * 4)) move_medium"
	} | guestcheck command-counts $SOAKD/m0 $SOAKD/m1 $SOAKD/fio.json 2>$SOAKD/counts.err)
	local rc=$?
	while read -r l; do note "SOAK count $l"; done <<<"$counts"
	read -r _ sum _ total < <(tail -n1 <<<"$counts")
	if [ $rc = 0 ]; then
		pass soak-command-counts "$sum data and move commands of the workload, each in the metrics ($total commands in all)"
	else
		fail soak-command-counts "$(cut -c1-1500 $SOAKD/counts.err)"
	fi
	# No leak: the goroutines and fds of before the load. (Two goroutines
	# of slack: a connection of the control socket or of the scrape can be
	# closing; a leak of the load would be thousands.)
	local jn
	jn=$(soak_journals "$pid0")
	if [ "$g1" -le $((g0 + 2)) ] && [ "$f1" -le $((f0 + jn)) ]; then
		pass soak-no-leak "goroutines $g0 -> $g1, fds $f0 -> $f1 ($jn library journal opened by the first move)"
	else
		fail soak-no-leak "goroutines $g0 -> $g1, fds $f0 -> $f1; descriptors before and after: $(soak_fds_diff "$pid0")"
	fi

	# Restarts: all 65 devices back each time, timed.
	local rs='' ok=1
	for i in 1 2 3; do
		t0=$(date +%s%N)
		if systemctl restart vscsid && soak_wait_devices; then
			rs="$rs $((($(date +%s%N) - t0) / 1000000))"
		else
			ok=
			rs="$rs failed"
		fi
	done
	note "SOAK restart_ms$rs"
	if [ -n "$ok" ]; then pass soak-restarts "3 restarts, all 65 devices back in$rs ms"; else fail soak-restarts "$rs"; fi
	# kill -9 under fio: systemd's Restart=on-failure brings vscsid back,
	# which re-attaches its config devices in place; fio sees no error.
	soak_devices
	for d in d00 d01 d12 d13; do node[$d]=$(soak_node "$d"); done
	fio --ioengine=libaio --direct=1 --rw=randrw --bs=4k --iodepth=4 --time_based --runtime=40 \
		--name=k0 --filename="/dev/${node[d00]}" --name=k1 --filename="/dev/${node[d01]}" \
		--name=k2 --filename="/dev/${node[d12]}" --name=k3 --filename="/dev/${node[d13]}" >$SOAKD/fio-kill.out 2>&1 &
	fiopid=$!
	local kills=0
	for i in 1 2; do
		sleep 12
		pid=$(soak_pid)
		kill -9 "$pid" && kills=$((kills + 1))
		for _ in $(seq 120); do
			sleep 0.5
			[ "$(systemctl is-active vscsid)" = active ] && [ "$(soak_pid)" != "$pid" ] && break
		done
	done
	wait $fiopid
	fiorc=$?
	if [ $fiorc -eq 0 ] && [ $kills = 2 ] && [ "$(systemctl is-active vscsid)" = active ] && soak_wait_devices; then
		pass soak-kill9-under-fio "2 kills, fio on 4 disks without an error, 65 devices back"
	else
		fail soak-kill9-under-fio "fio rc $fiorc: $(grep -i err $SOAKD/fio-kill.out | head -n 3 | tr '\n' ' '); $(systemctl is-active vscsid)"
	fi
	# The restarted daemon, idle, against the first one idle; a robot move
	# (a load and an unload) reaches it first, so that its library holds
	# its move journal open: the one descriptor the first idle daemon did
	# not have, which the check allows (soak_journals). (Unless that move
	# was the one in 1,024 that writes a snapshot instead, which closes the
	# journal: then none.)
	systemctl restart vscsid && soak_wait_devices
	local moved=yes
	{ mtx -f /dev/$lsg load 1 0 && mtx -f /dev/$lsg unload 1 0; } >/dev/null 2>$SOAKD/move-after-restart.err || moved=no
	soak_quiet
	sleep 5
	pid=$(soak_pid)
	scrape >$SOAKD/m2
	local g2 f2
	g2=$(mval $SOAKD/m2 go_goroutines) f2=$(mval $SOAKD/m2 process_open_fds)
	note "SOAK after_restarts goroutines $g2 fds $f2 proc $(soak_proc "$pid")"
	jn=$(soak_journals "$pid")
	if [ $moved = yes ] && [ "$jn" -le 1 ] && [ "$g2" -le $((g0 + 2)) ] && [ "$f2" -le $((f0 + jn)) ]; then
		pass soak-restarted-daemon-same "goroutines $g0 / $g2, fds $f0 / $f2 ($jn library journal opened by the move after the restart)"
	else
		fail soak-restarted-daemon-same "move after the restart: $moved $(head -c 200 $SOAKD/move-after-restart.err); journals $jn; goroutines $g0 / $g2, fds $f0 / $f2; descriptors of the first and of the restarted: $(soak_fds_diff "$pid")"
	fi
	touch $SOAKD/done
	wait $rsspid 2>/dev/null
	# RSS over time ("seconds VmRSS RssAnon RssFile RssShmem threads", KiB).
	note "SOAK rss (s VmRSS RssAnon RssFile RssShmem threads, KiB):"
	sed 's/^/SOAK rss /' $SOAKD/rss | while read -r l; do note "$l"; done
	local maxrss maxanon ms
	read -r maxrss maxanon < <(guestcheck column-max $SOAKD/rss 2 3)
	note "SOAK rss_max_kib $maxrss rss_anon_max_kib $maxanon"
	[ -s /var/tmp/soak-heap/peak.at ] && note "SOAK heap profile at $(cat /var/tmp/soak-heap/peak.at)"
	ms=$(guestcheck memstats /var/tmp/soak-heap/peak.txt) && note "SOAK memstats at the peak: $ms"
	serial_out soak-heap soak-heap-out
	# The issue's goal is 64 MiB for 32 GiB of virtual disk and 10
	# cartridges; this is 65 devices and 14 cartridges with 48 MiB of RAM
	# store, so the bound checked is the daemon's own (anonymous) memory
	# under 96 MiB, the figures are reported as they are.
	if [ "$maxanon" -gt 0 ] && [ "$maxanon" -le $((96 * 1024)) ]; then
		pass soak-memory "RSS at most $((maxrss / 1024)) MiB (anonymous $((maxanon / 1024)) MiB) for 65 devices, 33 GiB of virtual disk, 14 cartridges"
	else
		fail soak-memory "RSS at most $((maxrss / 1024)) MiB, anonymous $((maxanon / 1024)) MiB (bound: 96 MiB anonymous)"
	fi
	# The kernel logged no error.
	local kerr
	# (ch reports, at every probe, what READ ELEMENT STATUS says of each
	# drive's SCSI address: "ID/LUN unknown", the drives being on other
	# tcm_loop hosts; that is its verbose probe output, not an error.)
	# rtslib (targetcli, targetctl) writes dbroot when it starts, which the
	# kernel refuses while any device exists: "db_root: cannot be changed
	# because it's in use", logged as an error, the tool's and harmless.
	kerr=$(dmesg -l err,crit,alert,emerg 2>/dev/null | grep -v -E '\] ch [0-9:]+: \[ch[0-9]+\] (ID/LUN unknown|not this SCSI bus)$' |
		grep -v -E "\] db_root: cannot be changed because it's in use$")
	note "dmesg warnings: $(dmesg -l warn | sort | uniq -c | sort -rn | head -n 8 | tr '\n' ';')"
	if [ -z "$kerr" ]; then
		pass soak-dmesg-clean "no kernel message of level err or worse"
	else
		fail soak-dmesg-clean "$(printf '%s' "$kerr" | head -n 5 | tr '\n' ' ' | cut -c1-400)"
	fi
	soak_complete=1
}
