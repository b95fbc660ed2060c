#!/usr/bin/env bash
# Install every Debian package that poolmem's build, QEMU rig and tests need:
# this is the rig's and CI's machine, not a production host (it adds
# bookworm-backports for QEMU 10 and libvirt 11, installs a 6.12 kernel that
# becomes the default boot kernel, and etcd and Prometheus, whose services
# Debian starts). On a host that runs VMs use --host.
# Idempotent: packages already installed are left alone. Run as root on
# Debian 12 (sudo is used only when it is there and we are not root).
#
# usage: scripts/deps.sh [--debug-kernel | --host]
#   --debug-kernel  only what scripts/rig/debug-kernel builds with (the
#                   source and a compiler): .ci/run starts that build, which
#                   is all CPU, while the rest downloads and unpacks
#   --host          only what building and installing poolmem on this host
#                   needs, from the host's own sources (no backports, no
#                   kernel, no services): debian/control's Build-Depends, a
#                   compiler and the running kernel's headers (make install
#                   builds for uname -r)
#
# Two stacks: Debian 12's own Linux 6.1, and the current one, Linux 6.12 LTS
# (Debian 12 security/backports builds, "+deb12"), QEMU 10 and libvirt 11
# from bookworm-backports. backports is added as a deb822 source, and an
# apt preferences file takes from it only the packages named there (QEMU,
# its firmware and libvirt); everything else stays on bookworm.
set -euo pipefail

case "${1:-}" in
'' | --debug-kernel | --host) ;;
*) echo "usage: scripts/deps.sh [--debug-kernel | --host]" >&2; exit 2 ;;
esac
SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo

# install PKG...: those not installed yet, from the sources apt already has
install_missing() {
	local p missing=()
	for p in "$@"; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' || missing+=("$p")
	done
	if [ ${#missing[@]} -eq 0 ]; then
		echo "deps: all $# packages already installed"
		return 0
	fi
	echo "deps: installing ${missing[*]}"
	[ -z "${DEPS_DRY_RUN:-}" ] || return 0	# tests/deps-host.sh
	$SUDO apt-get update -q
	DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
}

if [ "${1:-}" = --host ]; then
	# (DEPS_DRY_RUN=1: say what would be installed, install nothing)
	# debian/control's Build-Depends, names only (versions and
	# alternatives as apt would pick them: the first)
	mapfile -t bdeps < <(sed -n '/^Build-Depends:/,/^[A-Z]/p' "$(dirname "$0")/../debian/control" |
		sed '1s/^Build-Depends://; /^[A-Z]/d' | tr ',' '\n' | sed 's/|.*//; s/(.*)//; s/\[.*\]//; s/^ *//; s/ *$//' |
		sed 's/^debhelper-compat$/debhelper/' | grep -v '^$')
	install_missing gcc g++ make "linux-headers-$(uname -r)" daxctl "${bdeps[@]}"
	exit
fi

BPO_SOURCES=/etc/apt/sources.list.d/poolmem-backports.sources
BPO_PREFS=/etc/apt/preferences.d/poolmem-backports
bpo_sources='Types: deb deb-src
URIs: http://deb.debian.org/debian
Suites: bookworm-backports
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
'
# The packages below come from backports at the priority of a release
# (500, where the rest of backports stays at its default 100): they win by
# version. qemu-system-x86 10 needs its -common/-data and a newer seabios;
# libvirt 11 is built for that QEMU.
bpo_prefs='Package: qemu-system-x86 qemu-system-common qemu-system-data qemu-system-gui qemu-system-modules-spice qemu-utils qemu-block-extra seabios libbrlapi0.8 libvirt*
Pin: release n=bookworm-backports
Pin-Priority: 500
'
updated=0
apt_update() {
	[ $updated -eq 1 ] || $SUDO apt-get update -q
	updated=1
}
if [ "$(cat "$BPO_SOURCES" 2>/dev/null)" != "${bpo_sources%$'\n'}" ] ||
	[ "$(cat "$BPO_PREFS" 2>/dev/null)" != "${bpo_prefs%$'\n'}" ]; then
	echo "deps: adding bookworm-backports ($BPO_SOURCES, pinned by $BPO_PREFS)"
	printf '%s' "$bpo_sources" | $SUDO tee "$BPO_SOURCES" >/dev/null
	printf '%s' "$bpo_prefs" | $SUDO tee "$BPO_PREFS" >/dev/null
	apt_update
fi
# apt-cache knows no package until the first update on a fresh machine
apt-cache show linux-source-6.12 >/dev/null 2>&1 || apt_update

# The newest Linux 6.12 image built for Debian 12 (bookworm-security carries
# it as linux-6.12, "+deb12"; its version moves with security updates, so
# look it up, never hard-code it). An installed one is kept if apt knows no
# newer (an offline re-run).
k612=$(apt-cache search --names-only '^linux-image-6\.12\.[0-9]+\+deb12-amd64$' |
	awk '{print $1}' | sed 's/^linux-image-//' | sort -V | tail -1)
if [ -z "$k612" ]; then
	k612=$(ls /boot/vmlinuz-6.12.*+deb12-amd64 2>/dev/null | sed 's|/boot/vmlinuz-||' | sort -V | tail -1)
fi
[ -n "$k612" ] || { echo "deps: no linux-image-6.12.*+deb12-amd64 in apt's lists" >&2; exit 1; }

PKGS=(
	# build
	gcc g++ make cmake pkg-config
	# kernel module: headers, the kernel image the rig boots, sparse, dkms
	# (6.1: Debian 12's own; 6.12: the current LTS, the rig's default)
	linux-image-amd64 linux-headers-amd64 sparse dkms
	"linux-image-$k612" "linux-headers-$k612"
	# the rig's debug kernel (scripts/rig/debug-kernel): its source and build tools
	linux-source-6.12 bc flex bison libelf-dev xz-utils
	# userspace libraries
	libdaxctl-dev libcxl-dev libndctl-dev libkmod-dev libnuma-dev
	libcli11-dev prometheus-cpp-dev nlohmann-json3-dev libgtest-dev uuid-dev libtomlplusplus-dev zlib1g-dev
	# libxml2: the libvirt hook reads the domain XML libvirt gives it
	libxml2-dev
	# the exporter's HTTP server: libmicrohttpd (IPv6, dual stack, TLS
	# through GnuTLS), its --web.config.file (yaml-cpp), basic auth's
	# bcrypt hashes through libcrypt (libxcrypt)
	libmicrohttpd-dev libgnutls28-dev libyaml-cpp-dev libcrypt-dev
	# the audit trail in the journal (sd_journal_send)
	libsystemd-dev
	# the runbooks as HTML (rst2html), installed for the alerts' runbook_url
	python3-docutils
	# the QEMU rig and what goes into the guest image
	# (qemu-system-x86 10 from backports, by the preferences above)
	qemu-system-x86 qemu-system-data ipxe-qemu seabios busybox-static kmod cpio
	ndctl daxctl numactl socat python3
	# exporter end-to-end tests
	prometheus curl
	# systemd-analyze security: the exporter unit's hardening
	systemd
	# libvirt's domain XML schemas and validator, for the XML poolctl prints
	libvirt-clients libvirt0 libxml2-utils
	# the libvirt topology's Debian root with the real daemon (scripts/rig/libvirt-root)
	mmdebstrap e2fsprogs
	# the policy simulator's figures (SVG, PNG)
	python3-matplotlib
	# the cluster ledger: etcd (tests start their own on loopback), its gateway through libcurl
	etcd-server etcd-client libcurl4-openssl-dev
	# the TLS tests: a CA and certificates for etcd and the agent
	openssl
	# the Debian packages (debian/, scripts/pkg-test): build, lint; their
	# test root is made by mmdebstrap (above) and booted by QEMU
	dpkg-dev debhelper dh-dkms lintian
)

[ "${1:-}" != --debug-kernel ] || PKGS=(gcc make linux-source-6.12 bc flex bison libelf-dev xz-utils)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done
# QEMU 7.2 installed by an earlier deps.sh: upgrade it to backports' 10
case "$(dpkg-query -W -f='${Version}' qemu-system-x86 2>/dev/null)" in
1:[0-9].*) missing+=(qemu-system-x86 qemu-system-common qemu-system-data seabios) ;;
esac

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#PKGS[@]} packages already installed"
	exit 0
fi

echo "deps: installing ${missing[*]}"
apt_update
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
