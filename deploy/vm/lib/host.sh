# shellcheck shell=bash
# Host-side helpers shared by build-guest, run, full/run, metrics-test and demo.
# Sourced, never executed. Requires bash >= 4.

set -o errexit -o nounset -o pipefail

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_DIR=$(cd "$VM_DIR/../.." && pwd)
# Downloads, extracted packages, debootstrapped roots and the LTFS build are
# kept outside the checkout (as Go keeps its build cache), so that a fresh
# clone, CI's included, reuses them; VM_CACHE_DIR names another place.
# Everything in it is keyed by what made it (package versions, the package
# list, the LTFS source's hash) and is rebuilt when that changes.
CACHE_DIR=${VM_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-$VM_DIR}/.cache}/vscsid/vm}
OUT_DIR=${VM_OUT_DIR:-$VM_DIR/out}
# vCPUs of every guest (TCG runs each on a host thread).
VM_SMP=${VM_SMP:-2}
SUITES="bookworm trixie sid"
DEFAULT_SUITE=bookworm
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin:/usr/local/go/bin

log() { printf 'vm: %s\n' "$*" >&2; }
die() { printf 'vm: error: %s\n' "$*" >&2; exit 1; }

check_suite() {
	case " $SUITES " in
	*" $1 "*) ;;
	*) die "unknown suite '$1' (want one of: $SUITES)" ;;
	esac
}

# ensure_host_tools installs the Debian packages that provide the missing
# commands of those building and booting a guest needs.
ensure_host_tools() {
	ensure_commands qemu-system-x86_64:qemu-system-x86 cpio:cpio depmod:kmod \
		modprobe:kmod dpkg-deb:dpkg apt-get:apt gzip:gzip timeout:coreutils \
		readelf:binutils xz:xz-utils zstd:zstd tar:tar mkfs.ext4:e2fsprogs openssl:openssl patch:patch
}

# ensure_commands COMMAND:PACKAGE...: for the commands missing from PATH,
# apt-get update once, then install only their packages (as root).
ensure_commands() {
	local missing=() pair
	for pair in "$@"; do
		command -v "${pair%%:*}" >/dev/null 2>&1 || missing+=("${pair#*:}")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	mapfile -t missing < <(printf '%s\n' "${missing[@]}" | sort -u)
	[ "$(id -u)" -eq 0 ] || die "missing host packages: ${missing[*]} (run as root, or: apt-get install ${missing[*]})"
	log "installing host packages: ${missing[*]}"
	apt-get update -qq || die "apt-get update failed"
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2 ||
		die "apt-get install ${missing[*]} failed"
}

go_cmd() {
	if command -v go >/dev/null 2>&1; then
		command -v go
	else
		die "no Go toolchain (go not in PATH nor /usr/local/go/bin)"
	fi
}

machine_codename() {
	# shellcheck disable=SC1091
	(. /etc/os-release 2>/dev/null && printf '%s\n' "${VERSION_CODENAME:-}")
}

# APT_SOURCES: the machine's apt source files, one-line and deb822.
APT_SOURCES="/etc/apt/sources.list /etc/apt/sources.list.d/*.list /etc/apt/sources.list.d/*.sources"

# apt_source_uri SUITE: the first URI of the machine's apt sources that
# serves SUITE's main component as "deb" (one-line .list entries and
# deb822 .sources stanzas; disabled stanzas skipped), with a trailing slash.
apt_source_uri() {
	local f files=()
	for f in $APT_SOURCES; do [ -f "$f" ] && files+=("$f"); done
	[ ${#files[@]} -gt 0 ] || return 0
	awk -v want="$1" '
		function has(list, x,   n, a, i) {
			n = split(list, a, /[ \t]+/)
			for (i = 1; i <= n; i++) if (a[i] == x) return 1
			return 0
		}
		function found(uri) {
			sub(/\/*$/, "/", uri)
			print uri
			done = 1
			exit
		}
		# deb822: a stanza ends at a blank line or at the end of a file.
		function stanza() {
			if (tolower(st["enabled"]) != "no" && has(st["types"], "deb") &&
			    has(st["suites"], want) && has(st["components"], "main")) {
				split(st["uris"], u, /[ \t]+/)
				if (u[1] != "") found(u[1])
			}
			delete st
		}
		FNR == 1 { if (prev ~ /\.sources$/) stanza(); prev = FILENAME; last = "" }
		FILENAME ~ /\.sources$/ {
			if ($0 ~ /^[ \t]*#/) next
			if ($0 ~ /^[ \t]*$/) { stanza(); next }
			if ($0 ~ /^[ \t]/) { st[last] = st[last] " " $0; next }
			k = tolower($0); sub(/:.*/, "", k)
			v = $0; sub(/^[^:]*:[ \t]*/, "", v); sub(/[ \t]+$/, "", v)
			st[k] = v; last = k
			next
		}
		{
			sub(/#.*/, "")
			if ($1 != "deb") next
			i = 2
			if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
			if ($(i + 1) == want && has(substr($0, index($0, $(i + 1))), "main")) found($i)
		}
		END { if (!done && prev ~ /\.sources$/) stanza() }' "${files[@]}"
}

# debian_mirror [security]: the Debian mirror (or its security mirror) to
# fetch packages from: VM_DEBIAN_MIRROR (VM_DEBIAN_SECURITY_MIRROR), else
# the one the machine's apt sources use for its own release (so a machine
# behind a local mirror or proxy keeps using it). No mirror is written in
# the repository: without either, it dies naming both (the security mirror
# is optional and prints nothing when there is none).
debian_mirror() {
	local codename uri
	codename=$(machine_codename)
	if [ "${1:-}" = security ]; then
		if [ -n "${VM_DEBIAN_SECURITY_MIRROR:-}" ]; then printf '%s\n' "$VM_DEBIAN_SECURITY_MIRROR"; return 0; fi
		[ -n "$codename" ] && apt_source_uri "$codename-security"
		return 0
	fi
	if [ -n "${VM_DEBIAN_MIRROR:-}" ]; then printf '%s\n' "$VM_DEBIAN_MIRROR"; return 0; fi
	uri=
	[ -z "$codename" ] || uri=$(apt_source_uri "$codename")
	[ -n "$uri" ] || die "no Debian mirror: the machine's apt sources ($APT_SOURCES) have no 'deb' entry for ${codename:-its release} main; set VM_DEBIAN_MIRROR to a Debian mirror's URL"
	printf '%s\n' "$uri"
}

# APT is the apt option array for the selected suite: empty (the machine's
# own configuration) when the suite is the machine's, else a private
# sources list, state, cache and empty dpkg status under cache/<suite>/apt,
# so the machine's own apt is never changed.
APT=()
setup_apt() {
	local suite=$1
	APT=()
	if [ "$suite" = "$(machine_codename)" ] && [ -z "${VM_PRIVATE_APT:-}" ]; then
		return 0
	fi
	local a=$CACHE_DIR/$suite/apt
	mkdir -p "$a/lists/partial" "$a/cache/archives/partial" "$a/parts" "$a/prefs"
	: >"$a/status"
	local key=/usr/share/keyrings/debian-archive-keyring.gpg mirror security
	mirror=$(debian_mirror)
	security=$(debian_mirror security)
	[ -r "$key" ] || die "$key missing (apt-get install debian-archive-keyring)"
	{
		printf 'deb [signed-by=%s] %s %s main\n' "$key" "$mirror" "$suite"
		if [ "$suite" != sid ]; then
			printf 'deb [signed-by=%s] %s %s-updates main\n' "$key" "$mirror" "$suite"
			[ -n "$security" ] && printf 'deb [signed-by=%s] %s %s-security main\n' "$key" "$security" "$suite"
		fi
	} >"$a/sources.list"
	APT=(
		-o "Dir::Etc::SourceList=$a/sources.list"
		-o "Dir::Etc::SourceParts=$a/parts"
		-o "Dir::Etc::Preferences=$a/prefs/none"
		-o "Dir::Etc::PreferencesParts=$a/prefs"
		-o "Dir::State::Lists=$a/lists"
		-o "Dir::State::Status=$a/status"
		-o "Dir::Cache=$a/cache"
		-o "APT::Architecture=amd64"
		-o "APT::Architectures=amd64"
		-o "Acquire::Languages=none"
	)
	if [ ! -e "$a/lists/.updated" ] || [ -n "${VM_REFRESH:-}" ]; then
		log "apt-get update ($suite, private lists in $a)"
		apt-get "${APT[@]}" update -qq >&2 || die "apt-get update for $suite failed"
		touch "$a/lists/.updated"
	fi
}

# guest_paths sets the output locations of a built guest.
guest_paths() {
	GUEST_DIR=$OUT_DIR/$1
	KERNEL_IMG=$GUEST_DIR/vmlinuz
	INITRD_IMG=$GUEST_DIR/initramfs.cpio.gz
}

# pack_harness OUT: a gzip'd newc cpio of /init and /vmtest (library,
# scenarios and the guestcheck helper, built here: static, like vscsid)
# from the work tree. The kernel unpacks it over the base initramfs when the
# two are concatenated.
# KERNEL_TEST_PKGS are the packages whose tests run against the guest's
# kernel (they skip themselves elsewhere unless VSCSID_KERNEL_TESTS=1).
KERNEL_TEST_PKGS="./target/netlink"

pack_harness() {
	local out=$1 stage go
	stage=$(mktemp -d)
	mkdir -p "$stage/vmtest/scenarios"
	go=$(go_cmd)
	(cd "$REPO_DIR" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 "$go" build -trimpath -ldflags="-s -w" \
		-o "$stage/vmtest/guestcheck" ./deploy/vm/guestcheck) || { rm -rf "$stage"; log "go build ./deploy/vm/guestcheck failed"; return 1; }
	# The Go tests that need a real kernel (configfs, uio, netlink), as
	# test binaries the smoke scenario runs (guestcheck go-test).
	local pkg
	mkdir -p "$stage/vmtest/gotest"
	for pkg in $KERNEL_TEST_PKGS; do
		(cd "$REPO_DIR" && CGO_ENABLED=0 GOOS=linux GOARCH=amd64 "$go" test -c -trimpath -ldflags="-s -w" \
			-o "$stage/vmtest/gotest/$(basename "$pkg").test" "$pkg") || { rm -rf "$stage"; log "go test -c $pkg failed"; return 1; }
	done
	install -m 755 "$VM_DIR/guest/init" "$stage/init"
	install -m 644 "$VM_DIR/guest/lib.sh" "$stage/vmtest/lib.sh"
	install -m 644 "$VM_DIR/guest/exp.sh" "$stage/vmtest/exp.sh"
	install -m 755 "$VM_DIR/guest/run-scenario" "$VM_DIR/guest/run-scenarios" "$stage/vmtest/"
	install -m 644 "$VM_DIR"/scenarios/*.sh "$stage/vmtest/scenarios/"
	(cd "$stage" && find . -mindepth 1 | LC_ALL=C sort | cpio --quiet -o -H newc -R 0:0 | gzip -1 >"$out")
	local rc=$?
	rm -rf "$stage"
	return $rc
}

# scenario_file prints the path of a scenario or dies listing the known ones.
scenario_file() {
	local f=$VM_DIR/scenarios/$1.sh
	[ -f "$f" ] && { printf '%s\n' "$f"; return 0; }
	die "unknown scenario '$1' (have: $(list_scenarios | tr '\n' ' '))"
}

list_scenarios() {
	local f
	for f in "$VM_DIR"/scenarios/*.sh; do
		basename "$f" .sh
	done
}

# scenario_meta NAME KEY prints the value of a "# vm-KEY: value" header line.
scenario_meta() {
	sed -n "s/^# vm-$2:[[:space:]]*//p" "$VM_DIR/scenarios/$1.sh" | head -n1
}

# ---------------------------------------------------------------- results
# The one result format, written by guest/lib.sh in both guests (and by
# metrics-test's host-side checks):
#   PASS group/name[ (detail)]
#   FAIL group/name: why
#   group: N passed, N failed      a group's summary
#   N passed, N failed             the closing line
#   VMTEST-VERDICT: PASS|FAIL      a guest's verdict
# Counts are the PASS and FAIL lines themselves; a closing line that
# disagrees with them (a lost line, a check counted in a subshell) is a
# failure.

RESULT_LINE='^(PASS|FAIL) '
SUMMARY_LINE='^[0-9]+ passed, [0-9]+ failed$'
GROUP_LINE='^[a-z0-9_+-]+: [0-9]+ passed, [0-9]+ failed$'

# results_parse FILE: RES_PASS and RES_FAIL (the PASS and FAIL lines of
# FILE), RES_SUMMARY (its last closing line, or empty), RES_GROUPS (its
# group summaries, one a line) and RES_VERDICT (PASS, FAIL or empty).
results_parse() {
	RES_PASS=$(grep -c '^PASS ' "$1" || true)
	RES_FAIL=$(grep -c '^FAIL ' "$1" || true)
	RES_SUMMARY=$(grep -E "$SUMMARY_LINE" "$1" | tail -n1 || true)
	RES_GROUPS=$(grep -E "$GROUP_LINE" "$1" || true)
	RES_VERDICT=$(sed -n 's/^VMTEST-VERDICT: //p' "$1" | tail -n1)
}

# results_stream FILE PID: print FILE's result lines as they arrive, until
# PID exits (run in the background).
# (sed -u: no stage may hold lines back in a pipe's buffer, or the suite's
# steps would time a buffer's flush, not a check.)
results_stream() {
	tail -n +1 -f --pid="$2" "$1" 2>/dev/null | sed -unE "s/\r\$//; /$RESULT_LINE/p"
}

# guest_verdict GUEST RUN_DIR QEMU_RC LIMIT: the end of a guest's run (run,
# full/run). Parses RUN_DIR/results.log, prints its group summaries, a
# "FAIL boot/GUEST: why" line with the last console lines when the run
# broke (qemu killed or failed, no verdict, a summary that disagrees with
# the lines), and the closing line. Returns 0 only for the guest's PASS
# verdict with no FAIL line.
guest_verdict() {
	local guest=$1 dir=$2 rc=$3 limit=$4 problem='' p f
	sed -i 's/\r$//' "$dir/console.log" "$dir/results.log" 2>/dev/null || true
	results_parse "$dir/results.log"
	[ -z "$RES_GROUPS" ] || printf '%s\n' "$RES_GROUPS"
	if [ "$rc" -eq 124 ] || [ "$rc" -eq 137 ]; then
		problem="qemu killed after the ${limit}s limit (guest hung?)"
	elif [ -z "$RES_VERDICT" ]; then
		problem="the guest printed no verdict (qemu exit $rc): it did not boot, or its test did not run"
	elif [ "$rc" -ne 0 ]; then
		problem="qemu exited with status $rc"
	elif [ "$RES_SUMMARY" != "$RES_PASS passed, $RES_FAIL failed" ]; then
		problem="the guest's closing line '$RES_SUMMARY' disagrees with its $RES_PASS PASS and $RES_FAIL FAIL lines"
	elif [ "$RES_PASS" -eq 0 ]; then
		problem="the guest reported no checks"
	fi
	p=$RES_PASS f=$RES_FAIL
	if [ -n "$problem" ]; then
		echo "FAIL boot/$guest: $problem"
		f=$((f + 1))
		echo "vm: last console lines:" >&2
		{ grep -v '^[[:space:]]*$' "$dir/console.log" || echo "(the console is empty)"; } | tail -n 25 | sed 's/^/  | /' >&2
		if [ -s "$dir/qemu.out" ]; then sed 's/^/  qemu: /' "$dir/qemu.out" >&2; fi
	fi
	echo "$p passed, $f failed"
	VERDICT_PASS=$p VERDICT_FAIL=$f # for a caller that sums several guests
	[ -z "$problem" ] && [ "$f" -eq 0 ] && [ "$RES_VERDICT" = PASS ]
}
