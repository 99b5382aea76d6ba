# exp.sh: the recording helpers the exp-* scenarios (deploy/vm/experiments)
# share. Sourced after lib.sh by a scenario; results go to $ART/results.txt,
# which deploy/vm/experiments/report reads:
#   info KEY=VALUE...                    run-independent facts
#   run NAME device=D rc= t0= t1= cpu0= cpu1= KEY=VALUE...   one measured run
# with the metrics scraped before and after each run as NAME.before.prom and
# NAME.after.prom in $W (the scenario copies what the report needs).

# exp_info KEY=VALUE...: a line of run-independent facts.
exp_info() { echo "info $*" >>"$ART/results.txt"; }
# exp_cpu: the aggregate cpu line of /proc/stat as comma-separated ticks.
exp_cpu() { head -n1 /proc/stat | sed 's/^cpu  *//; s/  */,/g'; }
# exp_run RUN DEVICE KEY=VALUE... -- CMD...: one measured run: page cache
# dropped, metrics scraped before and after, wall time and CPU ticks from
# /proc, the command's output kept as RUN.out.
exp_run() {
	_r=$1 _d=$2
	shift 2
	_kv=
	while [ $# -gt 0 ] && [ "$1" != -- ]; do _kv="$_kv $1"; shift; done
	shift
	sync
	echo 3 >/proc/sys/vm/drop_caches
	scrape_metrics "$W/$_r.before.prom" || note "$_r: scrape before failed"
	_u0=$(cut -d' ' -f1 /proc/uptime)
	_c0=$(exp_cpu)
	capture "$@"
	_u1=$(cut -d' ' -f1 /proc/uptime)
	_c1=$(exp_cpu)
	scrape_metrics "$W/$_r.after.prom" || note "$_r: scrape after failed"
	printf '%s\n' "$OUT" >"$ART/$_r.out"
	echo "run $_r device=$_d rc=$RC t0=$_u0 t1=$_u1 cpu0=$_c0 cpu1=$_c1$_kv" >>"$ART/results.txt"
	note "$_r: exit $RC, $(printf '%s\n' "$OUT" | tail -n1)"
}

# exp_start NAME KEY=VALUE...: start the results file with the kernel and
# the experiment's parameters, then vscsid with /etc/vscsid/NAME.yaml
# (aborting the scenario if it does not start).
exp_start() {
	_n=$1
	shift
	: >"$ART/results.txt"
	exp_info kernel=$(uname -r) experiment=${_n#exp-} "$@"
	dmesg_mark daemon
	vscsid_start "$_n" --config "/etc/vscsid/$_n.yaml"
	[ -n "$VSCSID_PID" ] || abort "vscsid did not start"
}

# exp_trace NAME DEVICE -- CMD...: CMD run once (not measured) while
# vscsictl trace --json records DEVICE's commands into
# $ART/trace-NAME.json, which the report summarises: what vscsid saw of
# each command (length, segments, alignment).
exp_trace() {
	_tn=$1 _td=$2
	shift 3
	vscsictl trace "$_td" --json >"$ART/trace-$_tn.json" 2>"$W/trace-$_tn.err" &
	_tp=$!
	wait_until 15 "grep -q tracing $W/trace-$_tn.err" || note "trace-$_tn: vscsictl trace did not start: $(cat "$W/trace-$_tn.err")"
	capture "$@"
	sleep 0.5 # the daemon writes lines within 200 ms, vscsictl flushes every 100 ms
	kill -INT "$_tp"
	wait "$_tp" || note "trace-$_tn: vscsictl trace exited $?"
	note "trace-$_tn: exit $RC, $(grep -c '"command"' "$ART/trace-$_tn.json") commands traced"
}
