# vm-timeout: 420
# encryption: application-managed tape encryption through stenc (Debian's:
# 1.0.7 in bookworm, 2.x in sid), st, GNU tar, mtx and the image files:
#  - stenc shows the drive's capabilities and turns encryption on with a
#    key file, and off;
#  - a tar archive written encrypted reads back bit-exact with the key;
#    the cartridge image does not contain a marker written in it;
#  - after stenc -e off, with a wrong key, after a daemon restart, and in
#    another library drive (mtx moves the cartridge), reads fail with
#    DATA PROTECT (74/01 unable to decrypt, 74/03 incorrect key), which
#    dmesg shows and tar reports as an error, not as data; the right key
#    makes the cartridge readable again.

CMD_TIMEOUT=60
MEDIA=/tmp/vmtest/media-encryption
mkdir -p /etc/vscsid "$MEDIA"
cat >/etc/vscsid/encryption.yaml <<EOF
cmd_time_out: 30
devices:
  - name: ed0
    type: vtape
    config: "personality=lto6;media=$MEDIA"
  - name: ed1
    type: vtape
    config: "personality=lto6;media=$MEDIA"
  - name: elib
    type: vlibrary
    config: "media=$MEDIA;slots=4;mailslots=1;drives=ed0+ed1;cartridges=2;first=ENC001L6;capacity=64M"
EOF
artefact /etc/vscsid/encryption.yaml

start() {
	dmesg_mark "$1"
	vscsid_start "$1" --config /etc/vscsid/encryption.yaml --dbus=off
	[ -n "$VSCSID_PID" ] || abort "vscsid did not start"
	require wait_for "$1-attached" 30 "dev_node tape ed0 && dev_node tape ed1 && dev_node sg elib"
	T0=/dev/n$(dev_tape ed0) T1=/dev/n$(dev_tape ed1) SGL=/dev/$(dev_sg elib)
}
start enc
note "ed0 is $T0, ed1 is $T1, the library $SGL"

# The two stenc command lines: 1.x has -e on|off|mixed|rawread and no -d.
if stenc --help 2>&1 | grep -q -- '--decrypt\|-d, '; then STENC=2; else STENC=1; fi
note "stenc $(stenc --version 2>&1 | head -n1) (command line $STENC.x)"
# ON and OFF are the mode options, split into words where used.
if [ $STENC = 2 ]; then ON="-e on -d on" OFF="-e off -d off"; else ON="-e on" OFF="-e off"; fi

# Keys: 32 bytes as hex, stenc's key file format (line 1).
KEY="$W/key" WRONG="$W/wrong"
echo 000102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f >"$KEY"
echo ffeeddccbbaa99887766554433221100ffeeddccbbaa99887766554433221100 >"$WRONG"

check load-slot1-drive0 mtx -f "$SGL" load 1 0
require wait_for ed0-ready 20 "$MT -f $T0 status | grep -q ONLINE"

# --------------------------------------------------- capabilities, on
check stenc-status stenc -f "$T0"
expect_match stenc-status-shows-encryption '[Ee]ncrypt' "$OUT"
status_off=$OUT
# stenc 2.x prints the capabilities page: the algorithm, KAD, raw mode.
[ $STENC = 1 ] || expect_match stenc-shows-capabilities 'AES-256-GCM-128' "$OUT"
check stenc-on stenc -f "$T0" $ON -a 1 -k "$KEY"
check stenc-status-on stenc -f "$T0"
# The status after setting the key is not the one before (its wording
# differs between stenc 1.x and 2.x; both are in the transcript).
sum_off=$(printf '%s' "$status_off" | md5sum | cut -c1-32)
sum_on=$(printf '%s' "$OUT" | md5sum | cut -c1-32)
check_sh stenc-status-changed "[ $sum_off != $sum_on ]"

# A tree with a marker: the archive on tape is encrypted, the image
# must not hold the marker.
MARK=VSCSID-ENCRYPTION-MARKER-$$-$(date +%s)
mkdir -p "$W/src" "$W/out"
i=0
while [ $i -lt 200 ]; do echo "$MARK line $i" >>"$W/src/marked.txt"; i=$((i + 1)); done
$DD if=/dev/urandom of="$W/src/random.bin" bs=64k count=16 2>/dev/null
check rewind-1 "$MT" -f "$T0" rewind
check tar-write-encrypted /usr/bin/tar -c -b 64 -f "$T0" -C "$W/src" .
check rewind-2 "$MT" -f "$T0" rewind
check tar-read-with-key /usr/bin/tar -x -b 64 -f "$T0" -C "$W/out"
check tree-identical cmp "$W/src/marked.txt" "$W/out/marked.txt"
check random-identical cmp "$W/src/random.bin" "$W/out/random.bin"
check_sh image-has-no-marker "! grep -q '$MARK' $MEDIA/ENC001L6.vtape"
# The key is nowhere under the media directory: not in the image (as
# bytes), not in the drives' saved state (as text).
check_sh image-has-no-key "! od -An -tx1 -v $MEDIA/ENC001L6.vtape | tr -d ' \\n' | grep -q 000102030405060708090a0b0c0d0e0f"
check_sh state-has-no-key "! grep -rq -e 000102030405060708 -e AAECAwQFBgcICQoL $MEDIA"

# tar_fails NAME ASC-TEXT: reading the archive fails with an I/O error,
# and the kernel logs the sense.
tar_fails() {
	dmesg_mark "$1"
	check "$1-rewind" "$MT" -f "$T0" rewind
	expect_fail "$1-tar-fails" /usr/bin/tar -t -b 64 -f "$T0"
	expect_match "$1-tar-io-error" 'Input/output error|Cannot read' "$OUT"
	check_sh "$1-dmesg-sense" "dmesg | tail -n 40 | grep -q '$2'"
}
# ------------------------------------------------------------- off
check stenc-off stenc -f "$T0" $OFF -a 1
tar_fails off 'Unable to decrypt data'
# ------------------------------------------------------- wrong key
check stenc-wrong stenc -f "$T0" $ON -a 1 -k "$WRONG"
tar_fails wrong-key 'Incorrect data encryption key'
check stenc-right stenc -f "$T0" $ON -a 1 -k "$KEY"
check rewind-3 "$MT" -f "$T0" rewind
check tar-list-right-key /usr/bin/tar -t -b 64 -f "$T0"

# ------------------------------------ a restart loses the key
vscsid_stop enc-stop
start enc-restart
tape_ready "$(dev_sg ed0)" || true
check_sh restart-cartridge-still-in-drive0 "$MT -f $T0 status | grep -q ONLINE"
tar_fails restart 'Unable to decrypt data'
check stenc-after-restart stenc -f "$T0" $ON -a 1 -k "$KEY"
check rewind-4 "$MT" -f "$T0" rewind
check tar-after-restart-with-key /usr/bin/tar -t -b 64 -f "$T0"

# -------------------------------------- another drive of the library
check unload-drive0 mtx -f "$SGL" unload 1 0
check load-slot1-drive1 mtx -f "$SGL" load 1 1
require wait_for ed1-ready 20 "$MT -f $T1 status | grep -q ONLINE"
T0=$T1
tar_fails drive1 'Unable to decrypt data'
check stenc-drive1 stenc -f "$T1" $ON -a 1 -k "$KEY"
check rewind-5 "$MT" -f "$T1" rewind
check tar-drive1-with-key /usr/bin/tar -x -b 64 -f "$T1" -C "$W/out"
check drive1-identical cmp "$W/src/marked.txt" "$W/out/marked.txt"

vscsid_stop enc-stop-2
kernel_clean encryption-kernel-clean
