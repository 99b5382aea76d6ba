# shellcheck shell=bash
# btape.sh: Bacula's own tape qualification, btape's "test" command, on
# one drive of each family besides the LTO-5 to LTO-9 ones (LTO-10, IBM
# 3592, StorageTek T10000, Super DLT), sourced by its scenario (bash) after the
# check library and the helpers.
#
#   btape_run
#
# For each personality: a vtape drive with a memory cartridge made with
# targetcli on its own tcm_loop target, a bacula-sd configuration whose
# one Device is its /dev/nstN (variable-block mode, Bacula's 64,512-byte
# blocks), and "test" in btape (bacula-sd's package): write and re-read
# 2 x 10,000 blocks, the block position test, the append test, write,
# back up and re-read, forward space files. btape says "This is correct!"
# or "Test succeeded" after each step it is satisfied with; any line it
# marks as a failure fails the check. Check names are btape-PERSONALITY-STEP.
#
# The run on BTAPE_RECORD is recorded with vscsictl record --digests
# (btape writes 1.3 GB: the recording keeps each block's CRC-32C, not the
# block), replayed here with no difference, and left in
# /var/tmp/recordings, which vmtest sends out: it is the fixture
# cmd/vscsictl/testdata/recordings/btape-lto10.vrec (docs/trace.md says
# how to refresh it).

BTAPE_MODELS="lto10 ts1160 t10000c sdlt600"
BTAPE_RECORD=lto10

btape_run() {
	local p n=0
	for p in $BTAPE_MODELS; do
		n=$((n + 1))
		btape_on "$p" $n
	done
}

btape_on() {
	local p=$1 n=$2 dev=bt-$1 wwn st conf out rc before
	wwn=$(printf 'naa.5001405000f%05x' "$n")
	before=$(st_list)
	if ! tcb "/backstores/user:vtape create name=$dev size=2G cfgstring=personality=$p;memory=1;capacity=2G;barcode=BT$(printf %04d "$n")" \
		"/loopback create $wwn" "/loopback/$wwn/luns create /backstores/user:vtape/$dev" ||
		! st=$(wait_new st_list "$before"); then
		fail "btape-$p-attach" "no new st device for $dev"
		tcb "/loopback delete $wwn" "/backstores/user:vtape delete $dev"
		return
	fi
	pass "btape-$p-attach" "/dev/$st"
	conf=/tmp/btape-$p.conf
	cat >"$conf" <<-EOF
		Storage {
		  Name = vmtest-sd
		  WorkingDirectory = /var/lib/bacula
		  Pid Directory = /run/bacula
		}
		Director {
		  Name = vmtest-dir
		  Password = "vmtest"
		}
		Device {
		  Name = Drive-$p
		  Media Type = Tape
		  Archive Device = /dev/$st
		  AutomaticMount = yes
		  AlwaysOpen = yes
		  RemovableMedia = yes
		  RandomAccess = no
		}
		Messages {
		  Name = Standard
		  director = vmtest-dir = all
		}
	EOF
	mkdir -p /run/bacula /var/lib/bacula
	mt -f "/dev/$st" status >/dev/null 2>&1 # st's first open takes the unit attentions
	local rec=/var/tmp/recordings/btape-$p.vrec rp=
	if [ "$p" = "$BTAPE_RECORD" ]; then
		mkdir -p /var/tmp/recordings
		vscsictl record "$dev" --digests -o "$rec" >/tmp/btaperec.out 2>/tmp/btaperec.err &
		rp=$!
		wait_for "btape-$p-recording" 15 "grep -q recording /tmp/btaperec.err"
	fi
	rc=0
	out=$(printf 'test\nquit\n' | timeout 900 btape -c "$conf" "Drive-$p" 2>&1) || rc=$?
	if [ -n "$rp" ]; then
		sleep 0.5 # the daemon drains every 20 ms
		kill -INT "$rp"
		wait "$rp"
		expect_eq "btape-$p-record-exit-0" 0 "$?"
		expect_match "btape-$p-nothing-lost" '^recorded [0-9]+ commands of [^(]*$' "$(cat /tmp/btaperec.out)"
		note "$(cat /tmp/btaperec.out): $(stat -c %s "$rec") bytes"
		expect_output "btape-$p-replays" '^replayed [0-9]+ commands of .*: 0 differences$' vscsictl replay "$rec"
	fi
	printf '%s\n' "$out" | sed 's/^/  | /' >&2
	expect_eq "btape-$p-exit" 0 "$rc"
	expect_eq "btape-$p-write-reread" 2 "$(grep -c '=== Test Succeeded. End Write, rewind, and re-read test ===' <<<"$out")"
	expect_match "btape-$p-append" 'We should be in file 3. I am at file 3. This is correct!' "$out"
	expect_match "btape-$p-append-scan" 'We should be in file 4. I am at file 4. This is correct!' "$out"
	expect_match "btape-$p-backup-reread" 'Block re-read correct. Test succeeded!' "$out"
	expect_match "btape-$p-forward-space" 'We should be in file 5. I am at file 5. This is correct!' "$out"
	local bad
	bad=$(grep -iE 'fail|error|ERR=|not correct' <<<"$out" | grep -v 'there should be no I/O errors' | head -n 3 | tr '\n' ' ')
	expect_eq "btape-$p-no-failure" "" "$bad"
	tcb "/loopback delete $wwn" "/backstores/user:vtape delete $dev"
}
