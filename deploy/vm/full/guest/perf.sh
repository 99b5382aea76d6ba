# shellcheck shell=bash
# The perf suite (vmtest.scenarios=perf; make perf): the same fio workloads on
# every disk configuration in one boot, interleaved (each repetition runs
# every workload on every configuration before the next repetition), and
# a tape drive streaming through st next to a disk stream of the same
# record size. Raw results go to /var/tmp/perf (fio JSON and the daemon's
# /proc counters before and after each run) and out through the third
# serial port as a tar; deploy/vm/perf/report turns them into the report.
#
# Configurations, all 128 MiB, 512-byte blocks, each its own sd:
#   scsi_debug  the kernel's emulator (fake_rw=1, delay=0): no ring at all
#   floor       vscsi-floor: a TCMU backstore that completes every command
#               at once and never touches the data area (deploy/vm/perf/floor)
#   fake_rw     vscsid vdisk, mode=fake_rw
#   store       vscsid vdisk, mode=store (RAM)
#   tcmu-runner tcmu-runner 1.5.4's qcow handler on a raw image in RAM
#   fake_rw-rot vscsid fake_rw with rotation=0 (the kernel takes it for a
#               spinning disk): what the old default cost
#   fake_rw-traced  the fake_rw disk while vscsictl trace runs (text to
#               /dev/null), on the 4 KiB random reads: what tracing costs
#   fake_rw-poll  the fake_rw disk with adaptive polling (ring_poll, set by
#               a reload), on the 4 KiB random workloads
#
# A/B (perf/run --base REV, which puts REV's vscsid in the guest as
# /usr/local/sbin/vscsid-base): one fake_rw disk only, made with targetcli
# and served alternately by the package's vscsid (configuration ab-tree)
# and the base (ab-base): before each run the service restarts on the
# configuration's binary if the other one serves, handing the disk over in
# place (the same node, no unit attention), so that both are measured in
# the same boot, interleaved, on the same disk.
#
# vmtest.perf_reps=N (default 3) and vmtest.perf_runtime=S (default 2 s,
# after 1 s of ramp) size it; under TCG each fio run costs about 2.7 s
# more than its runtime (fio's own start-up). vmtest.perf_poll=DUR
# (default 2ms) is fake_rw-poll's window: under TCG a command's round trip
# through fio and the kernel takes several hundred microseconds, which a
# window must outlast to catch the next command. vmtest.perf_only=W,W,...
# runs only those workloads (names of PERF_WORKLOADS, and "tape" for the
# streams): for a quick A/B of one path, with more repetitions;
# vmtest.perf_configs=C,... only those configurations (all are still made).

PERF=/var/tmp/perf
PERF_BASE=/usr/local/sbin/vscsid-base
PERF_SIZE=128M
PERF_BYTES=134217728

# perf_proc PID: the serving process's counters, one key=value per line
# (guestcheck procstat): CPU ticks (utime+stime, all threads) and of them
# the kernel's (stime: the kick's completion reaping and Data-In copy run
# in the daemon's write), read and write syscalls (syscr, syscw: the uio
# wait and kick are a read and a write), context switches summed over its
# threads, RSS and threads; nothing without a PID (scsi_debug).
perf_proc() { [ -z "$1" ] || guestcheck procstat "$1" 2>/dev/null; }

# perf_fio NAME DEV PID RW BS QD JOBS: one fio run, its JSON and the
# daemon's counters around it.
perf_fio() {
	local name=$1 dev=$2 pid=$3 rw=$4 bs=$5 qd=$6 jobs=$7
	{ perf_proc "$pid"; echo "dstat=$(cat "/sys/block/$dev/stat")"; } >"$PERF/$name.before"
	fio --name=perf --filename="/dev/$dev" --direct=1 --ioengine=libaio --rw="$rw" --bs="$bs" \
		--iodepth="$qd" --numjobs="$jobs" --runtime="$perf_runtime" --ramp_time=1 --time_based \
		--group_reporting --size=$PERF_SIZE --randrepeat=0 --norandommap \
		--output-format=json --output="$PERF/$name.json" >/dev/null 2>"$PERF/$name.err"
	local rc=$?
	{ perf_proc "$pid"; echo "dstat=$(cat "/sys/block/$dev/stat")"; } >"$PERF/$name.after"
	return $rc
}

# The disk configurations: NAME, block device, serving PID.
perf_disks=()
perf_add() { # perf_add NAME DEV PID
	local q=/sys/block/$2/queue
	perf_disks+=("$1 $2 ${3:--}")
	echo none >"$q/scheduler" 2>/dev/null
	# tcmu-runner reports no rotation rate, so the kernel takes its disk
	# for a spinning one; the comparison is of backstores, not of that
	# heuristic: same flags as the others (fake_rw-rot keeps it on purpose).
	[ "$1" = tcmu-runner ] && echo 0 >"$q/rotational"
	note "perf: $1 is /dev/$2 (pid ${3:--}): rotational=$(cat $q/rotational) max_sectors_kb=$(cat $q/max_sectors_kb) max_hw_sectors_kb=$(cat $q/max_hw_sectors_kb) scheduler=$(cat $q/scheduler)"
	echo "$1 $2 ${3:--} rotational=$(cat $q/rotational) add_random=$(cat $q/add_random) max_sectors_kb=$(cat $q/max_sectors_kb) max_hw_sectors_kb=$(cat $q/max_hw_sectors_kb) wbt_lat_usec=$(cat $q/wbt_lat_usec 2>/dev/null || echo -)" >>"$PERF/configs"
}

# perf_lun LISTFN HANDLER NAME WWN ARGS...: a targetcli backstore
# /backstores/HANDLER/NAME (size and cfgstring in ARGS), a tcm_loop target
# WWN with it as LUN 0; prints the new node LISTFN shows.
perf_lun() {
	local fn=$1 h=$2 o=$3 w=$4 before
	shift 4
	before=$($fn)
	tc /backstores/"$h" create name="$o" "$@" >/dev/null &&
		tc /loopback create "$w" >/dev/null &&
		tc /loopback/"$w"/luns create /backstores/"$h"/"$o" >/dev/null &&
		wait_new "$fn" "$before"
}

# perf_exec BIN: the service runs BIN, with --web.pprof (for perf_profile)
# when BIN has the flag (a binary from before it, perf/run --vscsid OLD or
# a base, runs without).
perf_exec() {
	local pprof=
	"$1" --help 2>&1 | grep -q -- '-web\.pprof' && pprof=" --web.pprof"
	mkdir -p /run/systemd/system/vscsid.service.d
	printf '[Service]\nExecStart=\nExecStart=%s --config /etc/vscsid/vscsid.yaml%s\n' "$1" "$pprof" \
		>/run/systemd/system/vscsid.service.d/perf-pprof.conf
	systemctl daemon-reload
	[ -n "$pprof" ]
}

# perf_ab_use CONFIG DEV: the service runs CONFIG's binary (ab-base: the
# base, ab-tree: the package's), restarted on it if the other one serves;
# prints its PID once DEV answers TEST UNIT READY.
perf_ab_use() {
	local bin pid
	bin=$(command -v vscsid)
	[ "$1" = ab-base ] && bin=$PERF_BASE
	pid=$(systemctl show -p MainPID --value vscsid)
	if [ "$(readlink -f "/proc/$pid/exe")" != "$bin" ]; then
		perf_exec "$bin"
		systemctl restart vscsid
		wait_until 30 "sg_turs /dev/$2" || note "perf: /dev/$2 not ready 30 s after the restart on $bin" >&2
		pid=$(systemctl show -p MainPID --value vscsid)
	fi
	echo "$pid"
}

# perf_poll WINDOW: every vscsid device polls its empty ring for WINDOW
# (0: none), set as ring_poll in the service's config file and applied by
# a reload; it fails unless the daemon shows it on perf_fake_rw within
# 10 s.
perf_poll() {
	local f=/etc/vscsid/vscsid.yaml
	sed -i '/^ring_poll:/d' "$f"
	[ "$1" = 0 ] || sed -i "1i ring_poll: $1" "$f"
	systemctl reload vscsid
	if [ "$1" = 0 ]; then
		wait_until 10 "! vscsictl devices --json | grep -q '\"ring_poll\"'"
	else
		wait_until 10 "vscsictl devices --json | grep -q '\"ring_poll\"'"
	fi && return
	fail "perf-ring-poll-$1" "not applied 10 s after the reload: $(vscsictl devices --json 2>&1 | grep -c ring_poll) devices poll"
	return 1
}

# perf_idle: the daemon's CPU while its disks are idle, blocking and with
# polling, after a command: polling must stop once its window passed.
perf_idle() {
	local pid d mode t0 t1 secs=4
	pid=$(systemctl show -p MainPID --value vscsid)
	d=$(awk '$1 == "fake_rw" {print $2}' "$PERF/configs")
	[ -n "$d" ] || return 0
	for mode in 0 "$perf_poll_window"; do
		perf_poll "$mode" || continue
		sg_turs "/dev/$d"
		sleep 1
		t0=$(guestcheck procstat "$pid" ticks)
		sleep $secs
		t1=$(guestcheck procstat "$pid" ticks)
		echo "idle ring_poll=$mode ticks=$((t1 - t0)) seconds=$secs" >>"$PERF/idle"
		# Under 5% of one CPU: the runtime's own timers, not a spin.
		if [ $((t1 - t0)) -le $(($(getconf CLK_TCK) * secs / 20)) ]; then
			pass "perf-idle-cpu-ring_poll-$mode" "$((t1 - t0)) ticks in $secs s"
		else
			fail "perf-idle-cpu-ring_poll-$mode" "$((t1 - t0)) ticks in $secs s idle: more than 5% of a CPU"
		fi
	done
	perf_poll 0
}

perf_setup() {
	local before d pid cfs=/sys/kernel/config/target
	mkdir -p "$PERF"
	: >"$PERF/configs"
	# tcmu-runner first, then vscsid registers its handlers with it: the
	# coexistence order of cmd/internal/dbus/doc.go. vscsid's devices are then
	# made with control=nl_reply_supported=-1.
	systemctl stop vscsid
	perf_exec "$(command -v vscsid)" && perf_pprof=1
	if [ -x "$PERF_BASE" ]; then
		systemctl start vscsid
		if d=$(perf_lun sd_list user:vdisk perf_fake_rw naa.5001405000009011 size=$PERF_SIZE cfgstring=mode=fake_rw); then
			pass perf-ab-disk "/dev/$d: $(vscsid --version 2>&1 | head -n1) against $($PERF_BASE --version 2>&1 | head -n1)"
			perf_add ab-tree "$d" ""
			perf_add ab-base "$d" ""
		else
			fail perf-ab-disk "no sd for the A/B disk"
		fi
		return
	fi
	systemctl start tcmu-runner
	systemctl start vscsid
	sleep 1
	# scsi_debug: one 128 MiB disk, no data copies, no delay.
	before=$(sd_list)
	if check perf-scsi_debug-load modprobe scsi_debug dev_size_mb=128 fake_rw=1 delay=0 &&
		d=$(wait_new sd_list "$before"); then
		perf_add scsi_debug "$d" ""
	else
		fail perf-scsi_debug-disk "no sd from scsi_debug"
	fi
	pid=$(systemctl show -p MainPID --value vscsid)
	# vscsid's disks, made with targetcli like a user would.
	for spec in "fake_rw 9011 mode=fake_rw" "store 9012 mode=store;store_size=$PERF_SIZE" "fake_rw-rot 9013 mode=fake_rw;rotation=0"; do
		local n cfg w o
		read -r n w cfg <<<"$spec"
		o=perf_${n//-/_}
		if d=$(perf_lun sd_list user:vdisk "$o" naa.500140500000"$w" size=$PERF_SIZE "cfgstring=$cfg" control=nl_reply_supported=-1); then
			pass "perf-vscsid-$n" "/dev/$d"
			perf_add "$n" "$d" "$pid"
			# The same disk with vscsictl trace running: what tracing
			# costs (docs/trace.md).
			[ "$n" = fake_rw ] && perf_add fake_rw-traced "$d" "$pid"
			[ "$n" = fake_rw ] && perf_add fake_rw-poll "$d" "$pid"
		else
			fail "perf-vscsid-$n" "no sd for $o"
		fi
	done
	# The floor: a TCMU device in configfs (no netlink handshake), its
	# server, then the tcm_loop LUN.
	local fdir=$cfs/core/user_90/floor0
	before=$(sd_list)
	if mkdir -p "$fdir" && echo "dev_config=floor/perf" >"$fdir/control" &&
		echo "dev_size=$PERF_BYTES" >"$fdir/control" && echo "nl_reply_supported=-1" >"$fdir/control" &&
		echo 1 >"$fdir/enable"; then
		vscsi-floor "tcm-user/90/floor0/floor/perf" >"$PERF/floor.log" 2>&1 &
		floor_pid=$!
		sleep 0.5
		w=naa.5001405000009001
		mkdir -p "$cfs/loopback/$w/tpgt_1/lun/lun_0" &&
			echo naa.5001405000009002 >"$cfs/loopback/$w/tpgt_1/nexus" &&
			ln -s "$fdir" "$cfs/loopback/$w/tpgt_1/lun/lun_0/floor0"
		if d=$(wait_new sd_list "$before"); then
			pass perf-floor "/dev/$d, pid $floor_pid"
			perf_add floor "$d" "$floor_pid"
		else
			fail perf-floor "no sd for the floor device: $(cat "$PERF/floor.log")"
		fi
	else
		fail perf-floor "could not create $fdir"
	fi
	# tcmu-runner's qcow handler on a raw image, as in the full suite's
	# coexistence phase.
	truncate -s $PERF_SIZE /var/tmp/perf-qc.img
	if d=$(perf_lun sd_list user:qcow perf_qc naa.5001405000009014 size=$PERF_SIZE cfgstring=/var/tmp/perf-qc.img); then
		pass perf-tcmu-runner "/dev/$d"
		perf_add tcmu-runner "$d" "$(systemctl show -p MainPID --value tcmu-runner)"
	else
		fail perf-tcmu-runner "no sd for tcmu-runner's qcow device"
	fi
}

# perf_workloads: NAME RW BS QD JOBS
PERF_WORKLOADS="
randread-4k-qd1 randread 4k 1 1
randread-4k-qd32x2 randread 4k 32 2
randwrite-4k-qd1 randwrite 4k 1 1
randwrite-4k-qd32x2 randwrite 4k 32 2
read-64k read 64k 8 1
write-64k write 64k 8 1
read-1m read 1m 8 1
write-1m write 1m 8 1
"

# perf_wanted NAME: whether vmtest.perf_only names NAME (or is unset).
perf_wanted() {
	[ -z "${perf_only:-}" ] && return 0
	case ,$perf_only, in *,"$1",*) return 0 ;; esac
	return 1
}
# perf_config_wanted NAME: the configuration is measured (vmtest.perf_configs).
perf_config_wanted() {
	[ -z "${perf_configs:-}" ] && return 0
	case ,$perf_configs, in *,"$1",*) return 0 ;; esac
	return 1
}

# perf_check_only: every name in vmtest.perf_only is a workload or "tape";
# a misspelt one would silently measure nothing.
perf_check_only() {
	local w bad=
	[ -n "${perf_only:-}" ] || return 0
	for w in ${perf_only//,/ }; do
		[ "$w" = tape ] && continue
		awk -v w="$w" '$1 == w {f = 1} END {exit !f}' <<<"$PERF_WORKLOADS" || bad+=" $w"
	done
	if [ -n "$bad" ]; then
		fail perf-only "vmtest.perf_only names no such workload:$bad (accepted: tape$(awk 'NF {printf " %s", $1}' <<<"$PERF_WORKLOADS"))"
		return 1
	fi
	note "perf: only $perf_only"
}

perf_disk_runs() {
	local r w rw bs qd jobs c n d pid ok=0 bad=0
	for r in $(seq "$perf_reps"); do
		while read -r w rw bs qd jobs; do
			[ -n "$w" ] || continue
			perf_wanted "$w" || continue
			for c in "${perf_disks[@]}"; do
				read -r n d pid <<<"$c"
				perf_config_wanted "$n" || continue
				[ "$pid" = - ] && pid=
				case $n in ab-*) pid=$(perf_ab_use "$n" "$d") ;; esac
				# The rotation=0 disk shows what the kernel's spinning-disk
				# treatment costs: on the loaded workloads only.
				[ "$n" = fake_rw-rot ] && case $w in *qd32x2 | *-1m) ;; *) continue ;; esac
				# Tracing: on the 4 KiB random reads, where the per-command
				# cost shows most; its text goes to /dev/null.
				local tp= rt=
				if [ "$n" = fake_rw-traced ]; then
					case $w in randread-4k-*) ;; *) continue ;; esac
					vscsictl trace perf_fake_rw >/dev/null 2>"$PERF/r$r-$w-$n.trace.err" &
					tp=$!
					sleep 0.3
					# The reader's CPU, beside the daemon's (the report's
					# per-command figure for it).
					rt=$(guestcheck procstat "$tp" ticks)
				fi
				if [ "$n" = fake_rw-poll ]; then
					case $w in rand*-4k-*) ;; *) continue ;; esac
					perf_poll "$perf_poll_window" || continue
				fi
				if perf_fio "r$r-$w-$n" "$d" "$pid" "$rw" "$bs" "$qd" "$jobs"; then
					ok=$((ok + 1))
				else
					bad=$((bad + 1))
					note "perf: fio $w on $n failed: $(head -c 300 "$PERF/r$r-$w-$n.err")"
				fi
				if [ -n "$tp" ]; then
					echo "reader_ticks=$rt" >>"$PERF/r$r-$w-$n.before"
					echo "reader_ticks=$(guestcheck procstat "$tp" ticks)" >>"$PERF/r$r-$w-$n.after"
					kill -INT "$tp"
					wait "$tp" || note "perf: vscsictl trace on $w exited $?: $(head -c 300 "$PERF/r$r-$w-$n.trace.err")"
				fi
				[ "$n" = fake_rw-poll ] && perf_poll 0
			done
			note "perf: r$r $w done at $(cut -d' ' -f1 /proc/uptime) s"
		done <<<"$PERF_WORKLOADS"
		note "perf: repetition $r done at $(cut -d' ' -f1 /proc/uptime) s"
	done
	expect_eq perf-fio-runs-failed 0 "$bad"
}

# perf_strace: every system call of the serving daemons, counted by
# strace -c on one short run of the workloads where wake-ups dominate
# (/proc/PID/io counts reads and writes only; a poll, epoll_wait or futex
# is invisible there). Tracing slows every call, so batches grow and the
# counts per command are a lower bound of the untraced run's; they are
# for comparing the daemons with each other, not for their speed.
perf_strace() {
	local w rw bs qd jobs c n d pid sp
	if ! command -v strace >/dev/null; then
		note "perf: no strace in this guest: the report has no system-call summary"
		return
	fi
	for w in randread-4k-qd1 randread-4k-qd32x2 read-64k; do
		perf_wanted "$w" || continue
		read -r rw bs qd jobs < <(awk -v w="$w" '$1 == w {print $2, $3, $4, $5}' <<<"$PERF_WORKLOADS")
		for c in "${perf_disks[@]}"; do
			read -r n d pid <<<"$c"
			case $n in floor | fake_rw | tcmu-runner) ;; *) continue ;; esac
			perf_config_wanted "$n" || continue
			strace -c -f -q -p "$pid" -o "$PERF/strace-$w-$n.txt" 2>"$PERF/strace-$w-$n.err" &
			sp=$!
			sleep 1
			perf_fio "strace-$w-$n" "$d" "$pid" "$rw" "$bs" "$qd" "$jobs" ||
				note "perf: traced fio $w on $n failed: $(head -c 300 "$PERF/strace-$w-$n.err")"
			kill -INT "$sp" 2>/dev/null
			wait "$sp"
		done
	done
	perf_wanted randread-4k-qd1 && check perf-strace-summaries test -s "$PERF/strace-randread-4k-qd1-fake_rw.txt"
}

# perf_profile: a CPU profile of vscsid (/debug/pprof/profile, served
# with --web.pprof) over one longer fio run on fake_rw per workload, while
# vscsid serves nothing else: where the daemon's CPU goes, function by
# function, in the system calls' kernel work included (the report groups
# it). perf/run turns each profile into pprof-W-fake_rw.top on the host.
perf_profile() {
	local w rw bs qd jobs c n d pid fp perf_runtime=6
	if [ -z "${perf_pprof:-}" ]; then
		note "perf: this vscsid has no --web.pprof: the report has no CPU profile"
		return
	fi
	for c in "${perf_disks[@]}"; do
		read -r n d pid <<<"$c"
		[ "$n" = fake_rw ] && break
		d=
	done
	[ -n "$d" ] || return
	local cfg tp
	for w in randread-4k-qd1 randread-4k-qd32x2 read-1m; do
		perf_wanted "$w" || continue
		read -r rw bs qd jobs < <(awk -v w="$w" '$1 == w {print $2, $3, $4, $5}' <<<"$PERF_WORKLOADS")
		# The traced profile (4 KiB reads, as in perf_disk_runs): where a
		# trace's cost goes.
		for cfg in fake_rw fake_rw-traced; do
			tp=
			if [ "$cfg" = fake_rw-traced ]; then
				case $w in randread-4k-*) ;; *) continue ;; esac
				vscsictl trace perf_fake_rw >/dev/null 2>"$PERF/pprof-$w-$cfg.trace.err" &
				tp=$!
				sleep 0.3
			fi
			guestcheck http-get -timeout 60s "http://127.0.0.1:9544/debug/pprof/profile?seconds=$perf_runtime" \
				"$PERF/pprof-$w-$cfg.pb.gz" 2>"$PERF/pprof-$w-$cfg.fetch-err" &
			fp=$!
			perf_fio "pprof-$w-$cfg" "$d" "$pid" "$rw" "$bs" "$qd" "$jobs" ||
				note "perf: profiled fio $w on $cfg failed: $(head -c 300 "$PERF/pprof-$w-$cfg.err")"
			wait "$fp" || note "perf: no CPU profile of $w on $cfg: $(head -c 300 "$PERF/pprof-$w-$cfg.fetch-err")"
			if [ -n "$tp" ]; then
				kill -INT "$tp"
				wait "$tp" || note "perf: vscsictl trace on $w exited $?"
			fi
		done
	done
	perf_wanted randread-4k-qd1 && check perf-pprof-profile test -s "$PERF/pprof-randread-4k-qd1-fake_rw.pb.gz"
}

# perf_stream NAME CMD...: one timed stream; its seconds and the daemon's
# counters go into $PERF/NAME.{time,before,after}.
perf_stream() {
	local name=$1 pid=$2 t0 t1
	shift 2
	perf_proc "$pid" >"$PERF/$name.before"
	t0=$(date +%s.%N)
	"$@" >/dev/null 2>"$PERF/$name.err"
	local rc=$?
	t1=$(date +%s.%N)
	perf_proc "$pid" >"$PERF/$name.after"
	echo "seconds=$(echo "$t1 $t0" | awk '{printf "%.3f", $1 - $2}')" >"$PERF/$name.time"
	return $rc
}

# Tape: a vscsid drive with a RAM cartridge, variable blocks of 256 KiB
# and 1 MiB through st, dd and tar, next to the same stream on the store
# disk through sd.
perf_tape() {
	local pid st sd mb=96 bs r
	perf_wanted tape || return 0
	pid=$(systemctl show -p MainPID --value vscsid)
	if ! st=$(perf_lun st_list user:vtape perf_tape naa.5001405000009015 size=1G \
		'cfgstring=personality=lto8;memory=1;capacity=512M;barcode=PERF01L8' control=nl_reply_supported=-1); then
		fail perf-tape "no st for the perf drive"
		return
	fi
	pass perf-tape "/dev/$st"
	sd=$(awk '$1 == "store" {print $2}' "$PERF/configs")
	mkdir -p /var/tmp/perf-tree
	head -c $((mb << 20)) /dev/urandom >/var/tmp/perf-tree/blob
	for r in $(seq "$perf_reps"); do
		for bs in 256k 1m; do
			local cnt=$((mb * 4)) bf=512 ddbs=256K # tar's blocking factor counts 512-byte records
			[ "$bs" = 1m ] && cnt=$mb bf=2048 ddbs=1M
			mt -f "/dev/$st" setblk 0 && mt -f "/dev/$st" rewind
			perf_stream "r$r-tape-dd-write-$bs" "$pid" dd if=/dev/zero of="/dev/$st" bs=$ddbs count=$cnt ||
				note "perf: tape dd write $bs: $(cat "$PERF/r$r-tape-dd-write-$bs.err")"
			mt -f "/dev/$st" weof 1 && mt -f "/dev/$st" rewind
			perf_stream "r$r-tape-dd-read-$bs" "$pid" dd if="/dev/$st" of=/dev/null bs=$ddbs ||
				note "perf: tape dd read $bs: $(cat "$PERF/r$r-tape-dd-read-$bs.err")"
			mt -f "/dev/$st" rewind
			perf_stream "r$r-tape-tar-write-$bs" "$pid" tar -C /var/tmp/perf-tree -b $bf -cf "/dev/$st" blob ||
				note "perf: tar write $bs: $(cat "$PERF/r$r-tape-tar-write-$bs.err")"
			mt -f "/dev/$st" rewind
			perf_stream "r$r-tape-tar-read-$bs" "$pid" tar -b $bf -tf "/dev/$st" ||
				note "perf: tar read $bs: $(cat "$PERF/r$r-tape-tar-read-$bs.err")"
			if [ -n "$sd" ]; then
				perf_stream "r$r-disk-dd-write-$bs" "$pid" dd if=/dev/zero of="/dev/$sd" bs=$ddbs count=$cnt oflag=direct
				perf_stream "r$r-disk-dd-read-$bs" "$pid" dd if="/dev/$sd" of=/dev/null bs=$ddbs count=$cnt iflag=direct
			fi
		done
	done
	echo "tape_mib=$mb" >"$PERF/stream.env"
}

perf_run() {
	perf_reps=${perf_reps:-3} perf_runtime=${perf_runtime:-2} perf_poll_window=${perf_poll:-2ms}
	note "perf: $perf_reps repetitions, ${perf_runtime}s per run after 1 s of ramp; $(nproc) CPUs; $(uname -r)"
	perf_check_only || return
	perf_setup
	{
		echo "only=${perf_only:-}"
		echo "kernel=$(uname -r)"
		echo "reps=$perf_reps"
		echo "runtime=$perf_runtime"
		echo "ring_poll=$perf_poll_window"
		echo "cpus=$(nproc)"
		echo "clocksource=$(cat /sys/devices/system/clocksource/clocksource0/current_clocksource)"
		case " $(cat /proc/cmdline) " in *" idle=poll "*) echo "idle=poll" ;; *) echo "idle=halt" ;; esac
		echo "clk_tck=$(getconf CLK_TCK)"
		echo "fio=$(fio --version)"
		echo "tcmu_runner=$(dpkg-query -W -f '${Version}' tcmu-runner 2>/dev/null)"
		echo "vscsid=$(vscsid -version 2>&1 | head -n1)"
		[ -x "$PERF_BASE" ] && echo "vscsid_base=$($PERF_BASE -version 2>&1 | head -n1)"
	} >"$PERF/env"
	perf_disk_runs
	if [ -x "$PERF_BASE" ]; then
		# A/B: nothing else (the other measurements need their own
		# disks); the package's vscsid serves again at the end.
		perf_ab_use ab-tree "$(awk '$1 == "ab-tree" {print $2}' "$PERF/configs")" >/dev/null
		perf_teardown
		serial_out perf perf-results-out
		return
	fi
	perf_wanted randread-4k-qd1 && perf_idle
	perf_strace
	perf_profile
	perf_tape
	scrape >"$PERF/metrics.txt" 2>/dev/null || note "perf: no /metrics scrape"
	perf_teardown
	serial_out perf perf-results-out
}

# perf_teardown: remove the LUNs whose servers do not outlive vmtest (the
# floor, tcmu-runner), so that sd's cache flush at power-off does not wait
# for a server that is gone.
perf_teardown() {
	local cfs=/sys/kernel/config/target w=naa.5001405000009001
	tc /loopback delete naa.5001405000009014 >/dev/null
	tc /backstores/user:qcow delete perf_qc >/dev/null
	rm -f "$cfs/loopback/$w/tpgt_1/lun/lun_0/floor0"
	rmdir "$cfs/loopback/$w/tpgt_1/lun/lun_0" "$cfs/loopback/$w/tpgt_1" "$cfs/loopback/$w" 2>/dev/null
	[ -n "${floor_pid:-}" ] && kill "$floor_pid" 2>/dev/null
	echo 0 >"$cfs/core/user_90/floor0/enable" 2>/dev/null
	rmdir "$cfs/core/user_90/floor0" "$cfs/core/user_90" 2>/dev/null
}
