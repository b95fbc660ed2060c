#!/bin/sh
# The release version is one: CMake's project version, dkms.conf's
# PACKAGE_VERSION, the module's MODULE_VERSION and what poolctl and
# poolmem-exporter --version print.
# usage: version-consistency.sh SRCDIR VERSION POOLCTL EXPORTER
set -u
src=$1 v=$2 ctl=$3 exp=$4
fail=0
d=$(sed -n 's/^PACKAGE_VERSION="\(.*\)"/\1/p' "$src/dkms.conf")
[ "$d" = "$v" ] || { echo "FAIL: dkms.conf $d, project $v"; fail=1; }
"$ctl" --version | grep -q "^poolctl $v " || { echo "FAIL: poolctl --version: $("$ctl" --version)"; fail=1; }
[ "$("$exp" --version)" = "poolmem-exporter $v" ] || { echo "FAIL: exporter --version: $("$exp" --version)"; fail=1; }
k=$(sed -n 's/^MODULE_VERSION("\(.*\)");/\1/p' "$src/kmod/main.c")
[ "$k" = "$v" ] || { echo "FAIL: kmod/main.c's MODULE_VERSION $k, project $v"; fail=1; }
[ $fail -eq 0 ] && echo "ok: version $v everywhere"
exit $fail
