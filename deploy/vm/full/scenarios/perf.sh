# vm-timeout: 14400
# vm-test-all: no
# perf: the perf suite (guest/perf.sh; vmtest.perf_reps=N,
# vmtest.perf_runtime=S, vmtest.perf_only=W,... and vmtest.perf_poll=DUR
# size it): make perf, make perf-ab. Its raw results go out on ttyS2.
# shellcheck source=../guest/perf.sh
. "$VMTEST_DIR/perf.sh"
perf_run
