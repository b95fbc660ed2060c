#!/bin/sh
# A systemd unit of poolmem, as installed, is hardened: systemd-analyze
# security (offline) rates its exposure at most MAX, and systemd-analyze
# verify finds nothing wrong in it but what only a booted host has (its
# ExecStart binary).
# usage: unit-security.sh UNIT-FILE MAX
set -u
unit=$1 max=$2
command -v systemd-analyze >/dev/null || { echo "SKIP: no systemd-analyze"; exit 77; }
out=$(systemd-analyze security --offline=yes "$unit" 2>&1)
level=$(echo "$out" | sed -n 's/.*Overall exposure level for [^:]*: \([0-9.]*\).*/\1/p')
echo "$(basename "$unit"): exposure $level (at most $max)"
[ -n "$level" ] || { echo "FAIL: no exposure level: $out"; exit 1; }
awk -v l="$level" -v m="$max" 'BEGIN { exit !(l <= m) }' || { echo "FAIL: exposure $level > $max"; echo "$out" | grep '✗'; exit 1; }
# unknown or misspelt directives are what verify reports here
bad=$(systemd-analyze verify "$unit" 2>&1 | grep -v "Command .* is not executable\|Command .man \|not found\|Failed to prepare filename" || true)
[ -z "$bad" ] || { echo "FAIL: systemd-analyze verify: $bad"; exit 1; }
echo "ok"
