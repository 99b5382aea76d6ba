# vm-timeout: 14400
# vm-test-all: no
# soak: one daemon, 65 devices, mixed load, restarts and fault rules for
# vmtest.soak seconds (guest/soak.sh; make vm-soak).
# shellcheck source=../guest/soak.sh
. "$VMTEST_DIR/soak.sh"
soak_run
# (A shell error inside soak_run returns early: that is a failure.)
[ -n "${soak_complete:-}" ] || fail soak-complete "the soak stopped before its last check (see the console)"
