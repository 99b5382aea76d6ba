# shellcheck shell=bash
# Host-side helpers of the shell builders (build-guest, full/build,
# ltfs/build) and of powercut, perf/run and metrics-test; run and full/run
# are Go (deploy/vm/vm, on deploy/vm/internal/vmhost).
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
