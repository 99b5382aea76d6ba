#!/bin/sh
# Create a vscsid disk with targetcli and export it to this host through
# tcm_loop: /dev/sdX appears. vscsid must be running.
#
# usage: create-vdisk.sh NAME SIZE [CFGSTRING]
#   SIZE       backstore size, e.g. 1G (the disk's capacity unless the
#              cfgstring has size= or blocks=)
#   CFGSTRING  vdisk keys, default "lbs=512;mode=fake_rw" (see vscsid --help)
set -eu
. "$(dirname "$0")/lib.sh"

if [ $# -lt 2 ] || [ $# -gt 3 ]; then die "usage: $0 NAME SIZE [CFGSTRING]"; fi
name=$1
size=$2
cfg=${3:-lbs=512;mode=fake_rw}
check_name "$name"
case $cfg in *,* | *:*) die "cfgstring must not contain ',' or ':'" ;; esac

# shellcheck disable=SC2046 # control_args prints zero or one word
targetcli /backstores/user:vdisk create name="$name" size="$size" cfgstring="$cfg" $(control_args)
export_loopback "$name" vdisk
