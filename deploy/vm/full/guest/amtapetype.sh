# shellcheck shell=bash
# amtapetype.sh: Amanda's tape qualification tool, amtapetype, detecting a
# drive's hardware compression, sourced by its scenario (bash) after the check
# library and the helpers.
#
#   amtapetype_run
#
# amtapetype cannot ask a tape drive whether it compresses (Amanda's tape
# device does not read mode page 0Fh): it writes random data for 60 s,
# then as many bytes of a repeating 0..255 pattern, and says "Compression:
# enabled" when the pattern went more than 1.2 times as fast. A drive
# with a rate set (vscsictl fault timing) streams at that rate the bytes
# that reach the medium, after compression, as a real drive does: so with
# DCE on the pattern runs far faster than the random data and amtapetype
# finds compression enabled; with DCE off (mt-st's compression 0) both run
# at the rate and it finds compression disabled. -c stops after that
# check, -f lets it go on when compression is on. Check names are
# amtapetype-DCE-....

amtapetype_run() {
	local dev=amt0 wwn=naa.5001405000f10001 st before out rc dce
	if ! command -v amtapetype >/dev/null; then
		fail amtapetype-installed "no amtapetype in this guest: build it with deploy/vm/full/build --amanda (deploy/vm/full/run --suite btape does)"
		return
	fi
	before=$(st_list)
	# 2 MB/s for 60 s: about 120 MB of random data on a 256 MiB memory
	# cartridge, which amtapetype rewrites from its start in each pass.
	if ! tcb "/backstores/user:vtape create name=$dev size=1G cfgstring=personality=lto8;memory=1;capacity=256M;barcode=AMT001L8" \
		"/loopback create $wwn" "/loopback/$wwn/luns create /backstores/user:vtape/$dev" ||
		! st=$(wait_new st_list "$before"); then
		fail amtapetype-attach "no new st device for $dev"
		tcb "/loopback delete $wwn" "/backstores/user:vtape delete $dev"
		return
	fi
	pass amtapetype-attach "/dev/$st"
	check amtapetype-rate vscsictl fault timing "$dev" 'rate=2MB/s'
	mt -f "/dev/$st" status >/dev/null 2>&1 # st's first open takes the unit attentions
	for dce in on off; do
		if [ $dce = on ]; then
			check "amtapetype-$dce-mt" mt -f "/dev/$st" compression 1
		else
			check "amtapetype-$dce-mt" mt -f "/dev/$st" compression 0
		fi
		rc=0
		out=$(timeout 600 amtapetype -c -f "tape:/dev/$st" 2>&1) || rc=$?
		printf '%s\n' "$out" | sed 's/^/  | /' >&2
		expect_eq "amtapetype-$dce-exit" 0 "$rc"
		# (Its speed lines follow the spinner's carriage returns.)
		note "DCE $dce: $(grep -o 'Wrote [a-z]* ([a-z]*) data at [0-9.e+]* bytes/sec' <<<"$out" | tr '\n' ' ')"
		if [ $dce = on ]; then
			expect_match "amtapetype-$dce-detected" '^Compression: enabled$' "$out"
		else
			expect_match "amtapetype-$dce-detected" '^Compression: disabled$' "$out"
		fi
	done
	tcb "/loopback delete $wwn" "/backstores/user:vtape delete $dev"
}
