# vm-timeout: 60
# smoke: the guest itself, no daemon. Modules load, configfs is mounted, the
# TCMU backstore and the tcm_loop fabric work through configfs, the guest's
# tools run. Proves the harness end to end.

# Every module of the closure is loaded (or built in). crct10dif-pclmul may
# fail harmlessly on a CPU without PCLMUL.
for m in configfs uio target_core_mod target_core_user tcm_loop scsi_mod sd_mod st sg; do
	u=$(echo "$m" | tr - _)
	check_sh "module-$m" "grep -q '^$u ' /proc/modules || grep -E >/dev/null '/$m\\.ko\$|/$u\\.ko\$' /lib/modules/\$(uname -r)/modules.builtin"
done
check_sh insmod-no-errors "! grep -v -e '^ok ' -e 'crct10dif-pclmul' /run/vmtest/insmod.log"

check_sh configfs-mounted "grep -q '^configfs /sys/kernel/config configfs' /proc/mounts"
check target-core-dir test -d "$CONFIGFS/core"
check target-version-readable cat "$CONFIGFS/version"
note "$OUT"

# TCMU backstore lifecycle without a daemon: enable gives a uio device named
# tcm-user/<hba>/<dev>/<dev_config>, rmdir removes it. nl_reply_supported=-1:
# once a daemon (vscsid, tcmu-runner) has turned on netlink command replies,
# the kernel keeps them on after it exits, and enable then waits in D state,
# forever, for a reply nobody sends.
u=$CONFIGFS/core/user_97/smoke
check tcmu-mkdir mkdir -p "$u"
check_sh tcmu-control "echo dev_size=1048576 >$u/control && echo dev_config=vdisk/size=1MiB >$u/control && echo hw_block_size=512 >$u/control && echo nl_reply_supported=-1 >$u/control"
check_sh tcmu-enable "echo 1 >$u/enable"
expect_output tcmu-uio-name '^tcm-user/97/smoke/vdisk/size=1MiB$' sh -c 'cat /sys/class/uio/uio*/name'
uio=$(grep -l '^tcm-user/97/smoke/' /sys/class/uio/uio*/name 2>/dev/null | head -n1)
uio=${uio%/name}
uio=${uio##*/}
wait_for tcmu-uio-node 5 "[ -n '$uio' ] && [ -c /dev/$uio ]"
expect_output tcmu-info 'Config: vdisk/size=1MiB Size: 1048576 ' cat "$u/info"
check_sh tcmu-rmdir "rmdir $u && rmdir $CONFIGFS/core/user_97"
wait_for tcmu-uio-gone 5 "[ -n '$uio' ] && [ ! -e /sys/class/uio/$uio ]"

# tcm_loop fabric: a target port group with an I_T nexus creates a SCSI host
# whose number the TPG's address attribute reports.
wwn=naa.50014059aa5e0001
t=$CONFIGFS/loopback/$wwn/tpgt_1
check loopback-mkdir mkdir -p "$t"
check_sh loopback-nexus "echo naa.50014059aa5e0002 >$t/nexus"
expect_output loopback-address '^[0-9]+:0:1$' cat "$t/address"
host=${OUT%%:*}
expect_output loopback-scsi-host '^tcm_loopback$' cat "/sys/class/scsi_host/host$host/proc_name"
check_sh loopback-teardown "echo NULL >$t/nexus; rmdir $t && rmdir $CONFIGFS/loopback/$wwn"
wait_for loopback-host-gone 5 "[ ! -e /sys/class/scsi_host/host$host ]"

# The dynamically linked tools find their libraries.
check tool-sg_inq sg_inq --version
check_sh tool-sg_raw "{ sg_raw --version 2>&1 || true; } | grep >/dev/null '^sg_raw '"
check tool-mt-st "$MT" --version
check tool-gnu-tar "$TAR" --version
check tool-lsscsi lsscsi --version

# The Go tests that need this kernel (configfs, uio, netlink), built by the
# host as test binaries (go test -c): a line per test, named after its
# package. A SKIP is a note (the test says why); a binary that ran no test
# is a failure.
for bin in /vmtest/gotest/*.test; do
	[ -e "$bin" ] || { fail go-test-binaries "no test binaries in /vmtest/gotest"; break; }
	pkg=$(basename "$bin" .test)
	timeout 120 "$GUESTCHECK" go-test "$bin" >"$W/gotest-$pkg.out" 2>"$W/gotest-$pkg.log" ||
		fail "go-$pkg" "guestcheck go-test $bin: exit $? (see the artefact gotest-$pkg.log)"
	while read -r verdict name why; do
		name=${name%:}
		case $verdict in
		PASS) why=${why#(} && pass "go-$pkg-$name" "${why%)}" ;;
		FAIL) fail "go-$pkg-$name" "$why" ;;
		SKIP) note "go test $pkg: $name skipped: $why" ;;
		esac
	done <"$W/gotest-$pkg.out"
	artefact "$W/gotest-$pkg.log"
done

kernel_clean kernel-log-clean
