#!/usr/bin/env bash
# poolmem.ko must build with W=1 and pass sparse (C=2: every file) with no
# warning at all, against the kernel the rig boots. Builds a scratch copy so
# the tree's objects are not disturbed.
set -uo pipefail
cd "$(dirname "$0")/../.."
. scripts/rig/lib.sh
kdir=/lib/modules/$(rig_kver)/build
command -v sparse >/dev/null || { echo "sparse not installed (scripts/deps.sh)"; exit 1; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cp -r kmod "$tmp/"
rm -f "$tmp"/kmod/*.o "$tmp"/kmod/policy/*.o "$tmp"/kmod/*.ko
out=$(make -C "$kdir" M="$tmp/kmod" W=1 C=2 modules 2>&1)
rc=$?
checked=$(echo "$out" | grep -c '^  CHECK')
bad=$(echo "$out" | grep -E 'warning:|error:')
[ $rc -eq 0 ] || { echo "$out" | tail -20; echo "build failed"; exit 1; }
[ -z "$bad" ] || { echo "$bad"; exit 1; }
[ "$checked" -ge 4 ] || { echo "sparse checked only $checked files"; exit 1; }
echo "W=1 build and sparse: clean ($checked files checked)"
