# shellcheck shell=bash
# ltfs.sh: the LTFS scenario of the full guest, sourced by its scenario (bash)
# after the check library and the helpers. LTFS is built from source into
# /opt/ltfs by deploy/vm/ltfs/build; ltfs_available says whether it is here.
#
#   ltfs_scenario PERSONALITY N
#
# creates drive ltfs-PERSONALITY with targetcli on its own tcm_loop target
# (the N-th, from 1), with a 1 GiB cartridge LTFS0NLg (g = the LTO
# generation), and drives it through LTFS's IBM sg backend as a user does:
# device_list, mkltfs, mount, write (small files, a directory, a 32 MiB
# file), unmount, mount and compare checksums, a second index generation,
# ltfsck, ltfsck -l and a rollback mount of the first generation, mkltfs
# refusing a formatted volume without --force, --force, and -w; the
# second mount with logical block protection on the IBM models. Then it
# reports the CHECK CONDITIONs vscsid answered during the run (from its
# metrics) and fails on any that LTFS does not expect of a real drive.
# On the 3592 models, last, ltfs_kmi: encryption with LTFS's key manager.
# Check names are ltfs-PERSONALITY-STEP.

LTFS_BIN=/opt/ltfs/bin
ltfs_available() { [ -x $LTFS_BIN/mkltfs ]; }

# ltfs_codes DEVICE: "asc count" per additional sense code vscsid counted
# in CHECK CONDITIONs of DEVICE, zero counts left out.
ltfs_codes() { scrape | guestcheck prom-by - "vscsi_scsi_sense_codes_total{device=\"$1\"}" asc; }

# ltfs_generations DEV: the index generations ltfsck -l lists, oldest first
# (each is on both partitions, so listed twice).
ltfs_generations() {
	$LTFS_BIN/ltfsck -l "$1" 2>/dev/null | awk '$1 ~ /^[0-9]+:$/ { sub(":", "", $1); print $1 }' | sort -nu
}

# ltfs_step_sh NAME 'CODE': check_sh with LTFS's long commands allowed.
ltfs_step_sh() { CMD_TIMEOUT=600 check_sh "$@"; }
ltfs_step() { CMD_TIMEOUT=600 check "$@"; }

ltfs_scenario() {
	local p=$1 n=$2 dev=ltfs-$1 wwn mid bc sg ok
	wwn=$(printf 'naa.5001405000b%05x' "$n")
	# The media id: L5..L9 for LTO, LA for LTO-10 (IBM's "generation A";
	# LTFS's IBM backend wants an L in the seventh place); the 3592
	# cartridge of the drive's own format (JC E07, JD E08 and 55F, JE 60F,
	# JF 70F).
	case $p in
	ts1140) mid=JC ;;
	ts1150 | ts1155) mid=JD ;;
	ts1160) mid=JE ;;
	ts1170) mid=JF ;;
	*lto10) mid=LA ;;
	*) mid=L${p##*lto} ;;
	esac
	bc=$(printf 'LTFS%02d%s' "$n" "$mid")
	note "LTFS on $p: drive $dev, cartridge $bc, target $wwn"
	ok=
	tcb "/backstores/user:vtape create name=$dev size=1G cfgstring=personality=$p;media=/var/lib/vscsid/ltfs;barcode=$bc" \
		"/loopback create $wwn" "/loopback/$wwn/luns create /backstores/user:vtape/$dev" && ok=1
	udevadm settle -t 20 >/dev/null 2>&1
	sg=$(dev_path sg "$dev")
	if [ -z "$ok" ] || [ -z "$sg" ]; then
		fail "ltfs-$p-attach" "targetcli created: ${ok:-no}; sg node [$sg]"
	else
		pass "ltfs-$p-attach"
		ltfs_on_drive "$p" "$dev" "$sg" "$p"
		# LTFS's sg backend encrypts on enterprise drives only.
		case $p in ts11*) ltfs_kmi "$p" "$dev" "$sg" "$bc" ;; esac
	fi
	ltfs_teardown "$dev" "$wwn"
}

# ltfs_kmi NAME DEVICE SG BARCODE: application-managed encryption through
# LTFS's key manager interface, its simple plugin (a data key, DK, and its
# identifier, DKi, on the command line): mkltfs formats with the key
# (SECURITY PROTOCOL OUT before the labels), a mount with it writes a
# file; a mount without the key and one with another key under the same
# DKi fail (the drive answers the reads 74/01, 74/03); the right key reads
# the file back, LTFS finding it through the DKi the drive reports
# (SECURITY PROTOCOL IN, next block encryption status); last, unloaded,
# the cartridge image holds encrypted blocks and not the file's text.
ltfs_kmi() {
	local name=$1 dev=$2 sg=$3 bc=$4 g=ltfs-$1-kmi m=/mnt/ltfs-$1 dk dk2 dki marker
	dk=$(head -c 32 /dev/urandom | base64) dk2=$(head -c 32 /dev/urandom | base64)
	dki=VSC$(head -c 9 /dev/urandom | od -An -tx1 | tr -d ' \n')
	marker=vscsid-kmi-$(head -c 8 /dev/urandom | od -An -tx1 | tr -d ' \n')
	{ echo "$marker"; head -c 100000 /dev/urandom | base64; echo "$marker"; } >/tmp/$g.txt
	local key="-o kmi_dk=$dk -o kmi_dki=$dki" other="-o kmi_dk=$dk2 -o kmi_dki=$dki"
	# shellcheck disable=SC2086 # $key is four words
	ltfs_step "$g-mkltfs" $LTFS_BIN/mkltfs -d "$sg" -f -n "KMI-$name" --kmi-backend=simple $key \
		-o kmi_dk_for_format="$dk" -o kmi_dki_for_format="$dki" || return
	ltfs_step_sh "$g-write" "$LTFS_BIN/ltfs -o devname=$sg -o kmi_backend=simple $key $m && trap 'fusermount -u $m' EXIT &&
		cp /tmp/$g.txt $m/secret.txt && sync"
	# LTFS 17192W: "Cannot read: medium is encrypted."
	ltfs_step_sh "$g-no-key-refused" "if $LTFS_BIN/ltfs -o devname=$sg $m >/tmp/$g.err 2>&1; then fusermount -u $m; exit 1; fi
		grep -E 'LTFS1719[0-9]|LTFS1717[0-9]' /tmp/$g.err; grep -q 17192W /tmp/$g.err"
	ltfs_step_sh "$g-wrong-key-refused" "if $LTFS_BIN/ltfs -o devname=$sg -o kmi_backend=simple $other $m >/tmp/$g.err 2>&1; then fusermount -u $m; exit 1; fi
		grep -E 'LTFS1719[0-9]|LTFS1717[0-9]' /tmp/$g.err; grep -q 17192W /tmp/$g.err"
	ltfs_step_sh "$g-read-back" "$LTFS_BIN/ltfs -o devname=$sg -o kmi_backend=simple $key $m && trap 'fusermount -u $m' EXIT &&
		cmp /tmp/$g.txt $m/secret.txt"
	ltfs_step_sh "$g-ciphertext" "vscsictl unload $dev && vscsictl media inspect --dir /var/lib/vscsid/ltfs --barcode $bc --json |
			python3 -c 'import json, sys; n = sum(p[\"encrypted_blocks\"] for p in json.load(sys.stdin)[\"partitions\"]); print(n, \"encrypted blocks\"); sys.exit(n == 0)'
		! grep -rqaF $marker /var/lib/vscsid/ltfs"
}

# ltfs_on_drive NAME DEVICE SG PERSONALITY: the scenario on vscsid device
# DEVICE (its SCSI generic node SG, a cartridge loaded), checks named
# ltfs-NAME-STEP. Its sense report counts only what the scenario provoked.
ltfs_on_drive() {
	local name=$1 dev=$2 sg=$3 p=$4 g=ltfs-$1 m=/mnt/ltfs-$1
	ltfs_senses_mark "$dev"
	local mark
	mark=$(dmesg | wc -l)
	local serial
	serial=$(sg_vpd -r -p 0x80 "$sg" 2>/dev/null | tail -c +5 | tr -d ' \0')
	# (grep -q in a pipeline would fail it with SIGPIPE under pipefail)
	ltfs_step_sh "$g-device-list" "out=\$($LTFS_BIN/ltfs -o device_list 2>&1) || true; echo \"\$out\" | grep 'Device Name'
		echo \"\$out\" | grep -F 'Device Name = $sg ' | grep -F 'Serial Number = ${serial:-no serial},' >/dev/null"
	if ! ltfs_step "$g-mkltfs" $LTFS_BIN/mkltfs -d "$sg" -n "LTFS-$name"; then
		return
	fi
	mkdir -p "$m" /tmp/$g
	head -c $((32 << 20)) /dev/urandom >/tmp/$g/big.dat
	head -c 3000 /dev/urandom >/tmp/$g/small.dat
	if ltfs_step "$g-mount" $LTFS_BIN/ltfs -o devname="$sg" "$m"; then
		ltfs_step_sh "$g-write" "mkdir -p $m/dir/sub && cp /tmp/$g/big.dat $m/dir/big.dat &&
			for i in 1 2 3 4 5; do echo file \$i >$m/dir/sub/f\$i.txt; done &&
			cp /tmp/$g/small.dat $m/small.dat && sync"
		ltfs_step "$g-umount" fusermount -u "$m"
	fi
	# LTFS protects logical blocks on IBM drives when asked (scsi_lbprotect):
	# the second mount reads and writes with Reed-Solomon CRC (LTO-5, 6) or
	# CRC32C (LTO-7 and later).
	local lbp=
	case $p in lto*) lbp="-o scsi_lbprotect=on" ;; esac
	# shellcheck disable=SC2086 # $lbp is two words or none
	if ltfs_step "$g-remount" $LTFS_BIN/ltfs -o devname="$sg" $lbp "$m"; then
		if [ -n "$lbp" ]; then
			expect_match "$g-lbp-on" 30251I "$OUT"
		fi
		ltfs_step_sh "$g-read-back" "cmp /tmp/$g/big.dat $m/dir/big.dat && cmp /tmp/$g/small.dat $m/small.dat &&
			[ \"\$(cat $m/dir/sub/f3.txt)\" = 'file 3' ]"
		# The second generation: one more file, one removed.
		ltfs_step_sh "$g-second-generation" "echo generation two >$m/gen2.txt && rm $m/small.dat && sync"
		ltfs_step "$g-umount-2" fusermount -u "$m"
	fi
	# ltfsck exits 1 when it checked and found the volume consistent.
	ltfs_step_sh "$g-ltfsck" "rc=0; out=\$($LTFS_BIN/ltfsck $sg 2>&1) || rc=\$?; echo \"\$out\" | tail -n 3
		[ \$rc -le 1 ] && grep -q 'Volume is consistent' <<<\"\$out\""
	local gens first last
	gens=$(ltfs_generations "$sg")
	first=$(printf '%s\n' "$gens" | sed -n 1p)
	last=$(printf '%s\n' "$gens" | tail -n 1)
	note "$name: ltfsck -l generations: $(printf '%s' "$gens" | tr '\n' ' ')"
	# mkltfs writes generation 1; the first mount's unmount writes a newer
	# one holding small.dat, the second mount's a newer one without it.
	if [ "$(printf '%s\n' "$gens" | sed '/^$/d' | wc -l)" -ge 3 ]; then
		pass "$g-rollback-points"
	else
		fail "$g-rollback-points" "ltfsck -l listed [$(printf '%s' "$gens" | tr '\n' ' ')], want at least 3 generations"
	fi
	local mid
	mid=$(printf '%s\n' "$gens" | tail -n 2 | head -n 1)
	if [ -n "$mid" ] && [ "$mid" != "$last" ] &&
		ltfs_step "$g-rollback-mount" $LTFS_BIN/ltfs -o devname="$sg" -o rollback_mount="$mid" "$m"; then
		ltfs_step_sh "$g-rollback-view" "cmp /tmp/$g/small.dat $m/small.dat && [ ! -e $m/gen2.txt ] &&
			! touch $m/new.txt 2>/dev/null"
		fusermount -u "$m"
	else
		fail "$g-rollback-view" "no generation before $last to mount (first $first)"
	fi
	# mkltfs does not format an LTFS volume without --force.
	ltfs_step_sh "$g-mkltfs-refuses" "out=\$($LTFS_BIN/mkltfs -d $sg -n again 2>&1) && exit 1
		echo \"\$out\" | tail -n 2; grep -q '15047E' <<<\"\$out\""
	ltfs_step "$g-mkltfs-force" $LTFS_BIN/mkltfs -d "$sg" -f -n "LTFS-$name-2"
	ltfs_step_sh "$g-reformatted-empty" "$LTFS_BIN/ltfs -o devname=$sg $m && trap 'fusermount -u $m' EXIT &&
		[ -z \"\$(ls -A $m)\" ]"
	# mkltfs -w exits 1 when it unformatted the medium.
	ltfs_step_sh "$g-mkltfs-wipe" "rc=0; out=\$($LTFS_BIN/mkltfs -d $sg -w -f 2>&1) || rc=\$?; echo \"\$out\" | tail -n 2
		[ \$rc -le 1 ] && grep -q '15040I' <<<\"\$out\""
	ltfs_step_sh "$g-wiped" "! $LTFS_BIN/ltfs -o devname=$sg $m 2>/dev/null"
	ltfs_step_sh "$g-no-aptpl-failure" "! dmesg | tail -n +$((mark + 1)) | grep 'APTPL'"
	ltfs_senses "$name" "$dev" "$p"
}

# ltfs_senses NAME DEVICE PERSONALITY: report every additional sense code
# vscsid answered the scenario with (since ltfs_senses_mark), and the
# commands that got them;
# fail on one LTFS would not get from a real drive. What LTFS meets on a
# real drive: UNIT ATTENTION at attach (29/00, 28/00) on TEST UNIT READY;
# on READ a filemark (NO SENSE 00/01), a block shorter than the 512 KiB it
# asks for (NO SENSE ILI, 00/00) and end of data (BLANK CHECK 00/05), on
# LOCATE(16) and SPACE end of data; READ ATTRIBUTE of an attribute not yet
# written (ILLEGAL REQUEST 24/00: mkltfs asks for the volume coherency
# before it writes one). The HP models lack IBM's mode page 25h and log
# page 37h, which LTFS asks every drive for, so on those MODE SENSE and LOG
# SENSE get 24/00 as they do from a real HPE drive.
ltfs_senses_mark() {
	ltfs_codes "$1" >"/tmp/ltfs-$1.codes"
	vscsictl stats "$1" --json >"/tmp/ltfs-$1.stats" 2>/dev/null
}

# ltfs_delta BEFORE: "name count" lines of stdin less those of file BEFORE,
# zero differences left out.
ltfs_delta() {
	awk -v base="$1" 'FILENAME == base { was[$1] = $2; next } $2 - was[$1] > 0 { print $1, $2 - was[$1] }' "$1" -
}

ltfs_senses() {
	local name=$1 dev=$2 p=$3 codes allowed bad
	codes=$(ltfs_codes "$dev" | ltfs_delta "/tmp/ltfs-$dev.codes" | tr '\n' ' ')
	note "$name: CHECK CONDITIONs by code during the scenario: ${codes:-none}"
	allowed='test_unit_ready read_6 read_16 locate_16 space_6 space_16 read_attribute'
	case $p in hp-*) allowed="$allowed mode_sense_10 log_sense" ;; esac
	bad=$(ltfs_codes "$dev" | ltfs_delta "/tmp/ltfs-$dev.codes" |
		awk '$1 !~ /^(power_on_reset_or_bus_device_reset|not_ready_to_ready_change|no_additional_sense_information|filemark_detected|end_of_data_detected|invalid_field_in_cdb)$/ { print $1 }')
	local others ua
	others=$(vscsictl stats "$dev" --json 2>/dev/null | python3 -c '
import json, sys
allowed, before = sys.argv[1].split(), sys.argv[2]
try:
    was = {c["name"]: c["check_conditions"] for c in json.load(open(before))["commands"]}
except (OSError, ValueError):
    was = {}
for c in json.load(sys.stdin)["commands"]:
    n = c["check_conditions"] - was.get(c["name"], 0)
    if n > 0:
        print("%s:%d" % (c["name"], n), file=sys.stderr)
        if c["name"] not in allowed:
            print("%s:%d" % (c["name"], n))
' "$allowed" "/tmp/ltfs-$dev.stats" 2>/tmp/ltfs-$dev.bycmd | tr '\n' ' ')
	note "$name: commands with CHECK CONDITION during the scenario: $(tr '\n' ' ' <"/tmp/ltfs-$dev.bycmd")"
	# A unit attention goes to whichever command comes first. On 7.x
	# kernels nothing consumes the drive's power-on and medium-change unit
	# attentions before LTFS opens it, so its first commands (REPORT
	# SUPPORTED OPERATION CODES, then SEND DIAGNOSTIC for the dump LTFS
	# takes on an unexpected sense) report them: as many CHECK CONDITIONs
	# outside the list as there were unit attentions are those.
	ua=$(ltfs_codes "$dev" | ltfs_delta "/tmp/ltfs-$dev.codes" |
		awk '$1 ~ /^(power_on_reset_or_bus_device_reset|not_ready_to_ready_change)$/ { n += $2 } END { print n + 0 }')
	if [ "$(echo "$others" | tr ' ' '\n' | awk -F: '{ n += $2 } END { print n + 0 }')" -gt "$ua" ]; then
		bad="$bad $others"
	fi
	bad=$(echo $bad)
	if [ -z "$bad" ]; then
		pass "ltfs-$name-expected-senses"
	else
		fail "ltfs-$name-expected-senses" "unexpected: $bad (codes: $codes)"
	fi
}

ltfs_teardown() {
	tcb "/loopback delete $2" "/backstores/user:vtape delete $1"
}

# ltfs_record: a small LTFS session recorded with vscsictl record (mkltfs,
# mount, a few files written, unmount, mount and read back, unmount,
# ltfsck) on a new LTO-8 drive with a memory cartridge, replayed here with
# no difference, and left in /var/tmp/recordings: vmtest sends it out,
# and it is the fixture cmd/vscsictl/testdata/recordings/ltfs-lto8.vrec
# (docs/trace.md says how to refresh it). The drive's power-on attentions
# are cleared first, as replay starts from a new drive.
ltfs_record() {
	local dev=ltfsrec wwn=naa.5001405000bfff01 sg m=/mnt/ltfsrec out=/var/tmp/recordings rp i
	rm -rf /var/lib/vscsid/ltfsrec
	mkdir -p "$out" "$m" /var/lib/vscsid/ltfsrec
	tcb "/backstores/user:vtape create name=$dev size=1G cfgstring=personality=lto8;media=/var/lib/vscsid/ltfsrec;barcode=LTFSR1L8" \
		"/loopback create $wwn" "/loopback/$wwn/luns create /backstores/user:vtape/$dev"
	udevadm settle -t 20 >/dev/null 2>&1
	sg=$(dev_path sg "$dev")
	if [ -z "$sg" ]; then
		fail ltfs-record-attach "no sg node for $dev"
		return
	fi
	for i in 1 2 3 4; do sg_turs "$sg" >/dev/null 2>&1 && break; done
	vscsictl record "$dev" -o "$out/ltfs-lto8.vrec" >/tmp/ltfsrec.out 2>/tmp/ltfsrec.err &
	rp=$!
	wait_for ltfs-record-started 15 "grep -q recording /tmp/ltfsrec.err"
	ltfs_step ltfs-record-mkltfs $LTFS_BIN/mkltfs -d "$sg" -n LTFS-REC
	ltfs_step ltfs-record-mount $LTFS_BIN/ltfs -o devname="$sg" "$m"
	ltfs_step_sh ltfs-record-write "mkdir -p $m/docs && for i in 1 2 3; do head -c 20000 </dev/zero | tr '\\0' \$i >$m/docs/f\$i.txt; done && sync"
	ltfs_step ltfs-record-umount fusermount -u "$m"
	ltfs_step ltfs-record-remount $LTFS_BIN/ltfs -o devname="$sg" "$m"
	ltfs_step_sh ltfs-record-read-back "[ \"\$(head -c 5 $m/docs/f2.txt)\" = 22222 ] && [ \$(wc -c <$m/docs/f3.txt) = 20000 ]"
	ltfs_step ltfs-record-umount-2 fusermount -u "$m"
	ltfs_step_sh ltfs-record-ltfsck "rc=0; $LTFS_BIN/ltfsck $sg >/tmp/ltfsrec.ck 2>&1 || rc=\$?; [ \$rc -le 1 ]"
	sleep 0.5
	kill -INT "$rp"
	wait "$rp"
	expect_eq ltfs-record-exit-0 0 "$?"
	expect_match ltfs-record-nothing-lost '^recorded [0-9]+ commands of [^(]*$' "$(cat /tmp/ltfsrec.out)"
	note "$(cat /tmp/ltfsrec.out)"
	expect_output ltfs-record-replays '^replayed [0-9]+ commands of .*: 0 differences$' vscsictl replay "$out/ltfs-lto8.vrec"
	ltfs_teardown "$dev" "$wwn"
}
