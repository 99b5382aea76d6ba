# shellcheck shell=bash
# Host-side helpers of ltfs/build, the builder still in shell. Sourced,
# never executed. Requires bash >= 4. The rest of the host side is Go
# (deploy/vm/vm, on deploy/vm/internal/vmhost): these helpers ask it where
# it has the one answer (the Debian mirror, the host's packages).

set -o errexit -o nounset -o pipefail

VM_DIR=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
REPO_DIR=$(cd "$VM_DIR/../.." && pwd)
# The cache and the output, as vmhost.CacheDir and vmhost.FindDirs name them.
CACHE_DIR=${VM_CACHE_DIR:-${XDG_CACHE_HOME:-${HOME:-$VM_DIR}/.cache}/vscsid/vm}
OUT_DIR=${VM_OUT_DIR:-$VM_DIR/out}
export PATH=$PATH:/usr/local/sbin:/usr/sbin:/sbin:/usr/local/go/bin

log() { printf 'vm: %s\n' "$*" >&2; }
die() { printf 'vm: error: %s\n' "$*" >&2; exit 1; }

# check_suite SUITE: dies unless SUITE is one a guest is built from.
check_suite() { "$VM_DIR/lib/vm" check-suite "$1" || exit 2; }

# ensure_host_tools installs the Debian packages of the commands building
# and booting a guest needs that are missing.
ensure_host_tools() { "$VM_DIR/lib/vm" ensure-host-tools || exit 1; }

# debian_mirror [security]: the Debian mirror (or its security mirror,
# possibly none) to fetch packages from: VM_DEBIAN_MIRROR, else the
# machine's apt sources' for its own release.
debian_mirror() { "$VM_DIR/lib/vm" debian-mirror "$@"; }

# machine_codename: the machine's Debian release.
machine_codename() {
	# shellcheck disable=SC1091
	(. /etc/os-release 2>/dev/null && printf '%s\n' "${VERSION_CODENAME:-}")
}
