# vm-timeout: 1500
# vm-test-all: no
# newest: the short pass of the real clients that make test gives the
# newest kernel beside the first suite's full run: a library made and
# deleted with targetcli, driven by mtx and Bacula's mtx-changer, LTFS on
# its drive, every stream through restarts; the iSCSI login and I/O.
# shellcheck source=../guest/library.sh
. "$VMTEST_DIR/library.sh"
# shellcheck source=../guest/ltfs.sh
. "$VMTEST_DIR/ltfs.sh"
library_run hp-lto8
iscsi_run short
