# vm-timeout: 2400
# ltfs: LTFS (built from source into /opt/ltfs when the build had its
# source) on each personality of vmtest.ltfs (default lto8,hp-lto8,ts1160):
# mkltfs, mount, write, unmount, ltfsck (guest/ltfs.sh); then a recorded
# LTFS run replayed in the guest, its recording sent out on ttyS2 (the
# fixture of cmd/vscsictl/testdata/recordings). Without LTFS in the guest
# its checks fail when vmtest.require_ltfs=1 (CI, or full/run --suite
# ltfs), else a note says they did not run.
# shellcheck source=../guest/ltfs.sh
. "$VMTEST_DIR/ltfs.sh"
if ! ltfs_available; then
	if [ "${require_ltfs:-0}" = 1 ]; then
		fail ltfs-available "no /opt/ltfs in this guest and vmtest.require_ltfs=1: deploy/vm/ltfs/build had no source (set LTFS_SRC, or put an ltfs-*.tar.gz in shared/vendor beside the checkout)"
	else
		note "LTFS not available in this guest (deploy/vm/ltfs/build had no source: set LTFS_SRC, or put an ltfs-*.tar.gz in shared/vendor beside the checkout); its checks did not run"
	fi
	return 0
fi
modprobe fuse 2>/dev/null
n=0
for p in $(echo "${ltfs_personalities:-lto8,hp-lto8,ts1160}" | tr ',' ' '); do
	n=$((n + 1))
	ltfs_scenario "$p" $n
done
ltfs_record
serial_out recordings recordings-out
