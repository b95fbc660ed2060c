#!/usr/bin/env bash
# DKMS (dkms.conf) builds poolmem.ko for each supported kernel: Debian 12's
# 6.1 and the 6.12 LTS. A scratch DKMS tree and source tree stand in for
# /var/lib/dkms and /usr/src, so nothing is added to the machine's DKMS
# state and nothing is installed or loaded.
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/rig/lib.sh
command -v dkms >/dev/null || { echo "dkms not installed (scripts/deps.sh)"; exit 1; }
ver=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' dkms.conf)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
src=$tmp/src/poolmem-$ver
mkdir -p "$src" "$tmp/tree"
cp dkms.conf "$src/"
rig_kmod_src "$src/kmod"
rc=0
for rel in 6.1 6.12; do
	kver=$(KVER=$rel rig_debian_kver) || { echo "$rel: no kernel installed"; rc=1; continue; }
	if ! out=$(dkms build -m poolmem -v "$ver" -k "$kver" --dkmstree "$tmp/tree" --sourcetree "$tmp/src" 2>&1); then
		echo "$out" | tail -20
		echo "$kver: dkms build failed"
		rc=1
		continue
	fi
	ko=$(ls "$tmp/tree/poolmem/$ver/$kver"/*/module/poolmem.ko* 2>/dev/null | head -n1)
	[ -n "$ko" ] || { echo "$kver: dkms built no poolmem.ko"; rc=1; continue; }
	echo "$kver: dkms built $(basename "$ko")"
done
exit $rc
