#!/bin/sh
# Create a vscsid tape drive with targetcli and export it to this host
# through tcm_loop: /dev/nstN appears. vscsid must be running (it serves
# every user:vtape backstore; `vscsictl devices` lists it as attached).
#
# usage: create-vtape.sh NAME [BARCODE]
#   MEDIA        media directory (default /var/lib/vscsid/media); the
#                cartridge BARCODE is created there if missing
#   PERSONALITY  drive model (default lto9; see `vscsid --help`)
set -eu
. "$(dirname "$0")/lib.sh"

if [ $# -lt 1 ] || [ $# -gt 2 ]; then die "usage: $0 NAME [BARCODE]"; fi
name=$1
barcode=${2:-}
check_name "$name"
media=${MEDIA:-/var/lib/vscsid/media}
cfg="personality=${PERSONALITY:-lto9};media=$media"
[ -n "$barcode" ] && cfg="$cfg;barcode=$barcode"

# size is mandatory for targetcli but means nothing to a tape drive.
# shellcheck disable=SC2046 # control_args prints zero or one word
targetcli /backstores/user:vtape create name="$name" size=1G cfgstring="$cfg" $(control_args)
export_loopback "$name" vtape
echo "change the cartridge with: vscsictl load $name BARCODE (or targetcli /backstores/user:vtape/$name changemedium ...)"
