#!/usr/bin/env bash
# poolmem.ko must build with W=1 and pass sparse (C=2: every file) with no
# warning at all, against each supported kernel: Debian 12's 6.1 and the
# 6.12 LTS (KVERS= overrides the list of releases). Builds scratch copies so
# the tree's objects are not disturbed.
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/rig/lib.sh
command -v sparse >/dev/null || { echo "sparse not installed (scripts/deps.sh)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
rc=0
for rel in ${KVERS:-6.1 6.12}; do
	kver=$(KVER=$rel rig_debian_kver) || { echo "$rel: no kernel installed"; rc=1; continue; }
	kdir=/lib/modules/$kver/build
	rm -rf "$tmp/kmod"
	rig_kmod_src "$tmp/kmod"
	out=$(make -C "$kdir" M="$tmp/kmod" W=1 C=2 modules 2>&1)
	mrc=$?
	checked=$(echo "$out" | grep -c '^  CHECK')
	bad=$(echo "$out" | grep -E 'warning:|error:')
	if [ $mrc -ne 0 ]; then
		echo "$out" | tail -20
		echo "$kver: build failed"
		rc=1
	elif [ -n "$bad" ]; then
		echo "$bad"
		echo "$kver: warnings"
		rc=1
	elif [ "$checked" -lt 4 ]; then
		echo "$kver: sparse checked only $checked files"
		rc=1
	else
		echo "$kver: W=1 build and sparse clean ($checked files checked)"
	fi
done
exit $rc
