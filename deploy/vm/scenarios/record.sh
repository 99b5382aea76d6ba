# vm-timeout: 300
# record: real clients' runs recorded with vscsictl record and replayed
# with vscsictl replay: tar and mt positioning on a drive, mtx loading and
# unloading a library's drive. Each recording replays in the guest with no
# difference, in vscsictl and (the tar session) through the kernel on a
# new drive configured as the recorded one, with SG_IO on its sg node; the artefacts *.vrec are the fixtures go test replays
# (cmd/vscsictl/testdata/recordings; docs/trace.md says how to refresh
# them). The devices are new and their power-on attentions cleared first,
# as replay starts from new devices.

CMD_TIMEOUT=120
CTL=/usr/bin/vscsictl
[ -x "$CTL" ] || CTL=$(command -v vscsictl)
MTX=/usr/bin/mtx
RECM=/tmp/vmtest/recmedia
mkdir -p /etc/vscsid "$RECM"
cat >/etc/vscsid/record.yaml <<EOF
cmd_time_out: 30
devices:
  - name: rec0
    type: vtape
    config: "personality=lto6;memory=1;capacity=64M;barcode=REC001L6"
  - name: rec1
    type: vtape
    config: "personality=lto6;memory=1;capacity=64M;barcode=REC001L6"
  - name: rtape0
    type: vtape
    config: "personality=lto8;media=$RECM"
  - name: rlib0
    type: vlibrary
    config: "media=$RECM;slots=6;mailslots=1;drives=rtape0;cartridges=3;first=R00001L8;capacity=4M"
EOF
artefact /etc/vscsid/record.yaml
vscsid_start record --config /etc/vscsid/record.yaml --dbus=off
require wait_for rec0-attached 30 "dev_node tape rec0"
require wait_for rec1-attached 30 "dev_node sg rec1"
require wait_for rtape0-attached 30 "dev_node tape rtape0 && dev_node sg rtape0"
require wait_for rlib0-attached 30 "dev_node changer rlib0 && dev_node sg rlib0"
T=/dev/n$(dev_tape rec0)
LT=/dev/n$(dev_tape rtape0)
SG=/dev/$(dev_sg rlib0)

# start_record NAME DEVICE...: record the devices into $W/NAME.vrec, once
# the daemon streams (vscsictl says so on stderr).
start_record() {
	_rn=$1
	shift
	"$CTL" record "$@" -o "$W/$_rn.vrec" >"$W/$_rn.out" 2>"$W/$_rn.err" &
	_rp=$!
	require wait_for "$_rn-recording" 15 "grep -q 'recording' $W/$_rn.err"
}
# stop_record NAME: stop it, check nothing was lost, replay it here.
stop_record() {
	sleep 0.5 # the daemon drains every 20 ms
	kill -INT "$_rp"
	wait "$_rp"
	expect_eq "$1-record-exit-0" 0 "$?"
	expect_match "$1-nothing-lost" '^recorded [0-9]+ commands of [^(]*$' "$(cat "$W/$1.out")"
	note "$(cat "$W/$1.out")"
	artefact "$W/$1.vrec"
	expect_output "$1-replays" '^replayed [0-9]+ commands of .*: 0 differences$' "$CTL" replay "$W/$1.vrec"
}

# A tar session with mt positioning: two archives, skip to the second,
# list it, back to the first and compare it, then the end of data.
check rec0-attentions-cleared sh -c "$MT -f $T status >/dev/null 2>&1; $MT -f $T status >/dev/null"
yes 'vscsid records what the initiator sent' | head -c 2000000 >$W/rec.txt
start_record tar-mt rec0
check tar-rewind "$MT" -f "$T" rewind
check tar-first $TAR -b 64 -cf "$T" -C $W rec.txt
check tar-second $TAR -b 20 -cf "$T" -C /etc/vscsid record.yaml
check tar-rewind2 "$MT" -f "$T" rewind
check tar-fsf "$MT" -f "$T" fsf 1
expect_output tar-list '^record.yaml$' $TAR -b 20 -tf "$T"
check tar-rewind3 "$MT" -f "$T" rewind
check tar-compare $TAR -b 64 -df "$T" -C $W
check tar-eod "$MT" -f "$T" eod
expect_output tar-tell '^At block [0-9]+\.$' "$MT" -f "$T" tell
check tar-status "$MT" -f "$T" status
stop_record tar-mt

# The same session through the kernel: rec1 is new and configured as rec0
# was, and replay sends the recorded CDBs and Data-Out to its sg node
# with SG_IO. The session begins with a rewind and overwrites what it
# finds, so it replays again on the used cartridge; with the cartridge
# unloaded, every command's answer differs and the replay fails.
SG1=/dev/$(dev_sg rec1)
expect_output tar-mt-replays-live '^replayed [0-9]+ commands of rec0 .*: 0 differences$' \
	"$CTL" replay --node "rec0=$SG1" "$W/tar-mt.vrec"
expect_output tar-mt-replays-live-again '^replayed [0-9]+ commands of rec0 .*: 0 differences$' \
	"$CTL" replay --node "$SG1" "$W/tar-mt.vrec"
check rec1-unload "$MT" -f "/dev/n$(dev_tape rec1)" offline
check_sh tar-mt-replay-live-unloaded-differs "! $CTL replay --max 3 --node $SG1 $W/tar-mt.vrec >$W/replay-unloaded.out 2>&1; grep -Eq ': [1-9][0-9]* differences\$' $W/replay-unloaded.out"
note "$(head -1 "$W/replay-unloaded.out")"
note "$(tail -1 "$W/replay-unloaded.out")"

# mtx: load a cartridge into the drive, see it, unload it.
check mtx-attentions-cleared sh -c "$MTX -f $SG status >/dev/null 2>&1; $MTX -f $SG status >/dev/null; $MT -f $LT status >/dev/null 2>&1; true"
start_record mtx rlib0 rtape0
expect_output mtx-status-full 'Storage Element 1:Full :VolumeTag=R00001L8' "$MTX" -f "$SG" status
check mtx-load "$MTX" -f "$SG" load 1 0
expect_output mtx-status-loaded 'Data Transfer Element 0:Full \(Storage Element 1 Loaded\)' "$MTX" -f "$SG" status
require wait_for mtx-drive-ready 30 "$MT -f $LT status >/dev/null 2>&1"
check mtx-drive-write $TAR -b 64 -cf "$LT" -C /etc/vscsid record.yaml
check mtx-drive-rewind "$MT" -f "$LT" rewind
check mtx-drive-offline "$MT" -f "$LT" offline
check mtx-unload "$MTX" -f "$SG" unload 1 0
expect_output mtx-status-back 'Storage Element 1:Full :VolumeTag=R00001L8' "$MTX" -f "$SG" status
stop_record mtx

vscsid_stop vscsid-sigterm-exit-0
check_sh configfs-no-residue "[ -z \"\$(configfs_residue)\" ]"
kernel_clean kernel-log-clean
