#!/bin/sh
# Remove a device made by create-vtape.sh or create-vdisk.sh: the loopback
# target first (sd/st detach while vscsid still serves the device), then
# the backstore (vscsid stops serving it on the kernel's REMOVED event).
#
# usage: remove.sh NAME
set -eu
. "$(dirname "$0")/lib.sh"

[ $# -eq 1 ] || die "usage: $0 NAME"
name=$1
check_name "$name"
wwn=$(loopback_wwn "$name")
if targetcli ls "/loopback/$wwn" >/dev/null 2>&1; then
	targetcli /loopback delete "$wwn"
fi
for sub in vtape vdisk; do
	if targetcli ls "/backstores/user:$sub/$name" >/dev/null 2>&1; then
		targetcli "/backstores/user:$sub" delete "$name"
		exit 0
	fi
done
die "no user:vtape or user:vdisk backstore named $name"
