#!/usr/bin/env bash
# Install every Debian package that poolmem's build, QEMU rig and tests need.
# Idempotent: packages already installed are left alone. Run as root on
# Debian 12 (sudo is used only when it is there and we are not root).
set -euo pipefail

PKGS=(
	# build
	gcc g++ make cmake pkg-config
	# kernel module: headers, the kernel image the rig boots, sparse, dkms
	linux-image-amd64 linux-headers-amd64 sparse dkms
	# the rig's debug kernel (scripts/rig/debug-kernel): its source and build tools
	linux-source-6.1 bc flex bison libelf-dev xz-utils
	# userspace libraries
	libdaxctl-dev libcxl-dev libndctl-dev libkmod-dev libnuma-dev
	libcli11-dev prometheus-cpp-dev nlohmann-json3-dev libgtest-dev uuid-dev libtomlplusplus-dev
	# the QEMU rig and what goes into the guest image
	qemu-system-x86 qemu-system-data ipxe-qemu seabios busybox-static kmod cpio
	ndctl daxctl numactl socat python3
	# exporter end-to-end tests
	prometheus curl
	# systemd-analyze security: the exporter unit's hardening
	systemd
	# libvirt's domain XML schemas and validator, for the XML poolctl prints
	libvirt-clients libvirt0 libxml2-utils
	# the policy simulator's figures (SVG, PNG)
	python3-matplotlib
	# the cluster ledger: etcd (tests start their own on loopback), its gateway through libcurl
	etcd-server etcd-client libcurl4-openssl-dev
)

missing=()
for p in "${PKGS[@]}"; do
	dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q 'install ok installed' ||
		missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
	echo "deps: all ${#PKGS[@]} packages already installed"
	exit 0
fi

SUDO=
[ "$(id -u)" -eq 0 ] || SUDO=sudo
echo "deps: installing ${missing[*]}"
$SUDO apt-get update -q
DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -q --no-install-recommends "${missing[@]}"
