#!/bin/sh
# The exporter's systemd unit is hardened: systemd-analyze security (offline,
# on the unit as installed) rates its exposure at most 3.0, its ExecStart
# follows the install prefix and it waits for the network.
# usage: unit-security.sh UNIT-FILE BINDIR
set -u
unit=$1 bindir=$2
command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
out=$(systemd-analyze security --offline=yes "$unit" 2>&1)
level=$(echo "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "exposure: $level"
[ -n "$level" ] || { echo "FAIL: no exposure level: $out"; exit 1; }
awk -v l="$level" 'BEGIN { exit !(l <= 3.0) }' || { echo "FAIL: exposure $level > 3.0"; echo "$out" | grep '✗'; exit 1; }
grep -q "^ExecStart=$bindir/poolmem-exporter " "$unit" || { echo "FAIL: ExecStart not under $bindir"; exit 1; }
grep -q "^Wants=network-online.target" "$unit" || { echo "FAIL: no Wants=network-online.target"; exit 1; }
echo "ok"
