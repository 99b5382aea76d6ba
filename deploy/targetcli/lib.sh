# shellcheck shell=sh
# Shared by the create-*.sh scripts (sourced, not run).

die() { echo "$(basename "$0"): $*" >&2; exit 1; }

command -v targetcli >/dev/null || die "targetcli not found (apt install targetcli-fb / dnf install targetcli)"
[ "$(id -u)" = 0 ] || die "must run as root"

# check_name NAME: a configfs storage object name vscsid accepts.
check_name() {
	case $1 in
	'' | *[!A-Za-z0-9_.-]* | .*) die "bad device name '$1' (use [A-Za-z0-9_.-], not starting with '.')" ;;
	esac
}

# loopback_wwn NAME: a stable NAA-5 WWN (LIO OUI 00:14:05) for the
# loopback target of NAME, so the device keeps its SCSI identity when the
# script runs again.
loopback_wwn() {
	printf 'naa.5001405%s\n' "$(printf %s "$1" | sha256sum | cut -c1-9)"
}

# control_args: next to tcmu-runner, the kernel must not wait for a netlink
# reply to enable (tcmu-runner answers ENOENT for subtypes it does not know,
# and may answer first): create the backstore with nl_reply_supported=-1.
# vscsid then attaches it when it sees the ADDED event, without a verdict.
control_args() {
	if pidof tcmu-runner >/dev/null 2>&1; then
		echo "tcmu-runner is running: creating with control=nl_reply_supported=-1 (see README.md)" >&2
		echo "control=nl_reply_supported=-1"
	fi
}

# export_loopback NAME SUBTYPE: a tcm_loop target with the backstore as LUN 0.
export_loopback() {
	wwn=$(loopback_wwn "$1")
	targetcli /loopback create "$wwn"
	targetcli "/loopback/$wwn/luns" create "/backstores/user:$2/$1"
	echo "exported as $wwn lun 0; the SCSI device appears in lsscsi / vscsictl devices"
}
