#!/bin/sh
# --check on the verbs that take something away (pool offline, pool remove,
# pool undrain, vm destroy) and apply's alias for --dry-run, against the
# fixture tree: the checks run, their refusals keep their exit codes and
# one-line messages, and nothing else happens (no control device here: a
# check that got past its checks would still need it, and says so).
# The success path, on a live module, is poolctl-flow's.
# usage: check-verbs.sh POOLCTL FIXTURES
set -u
pc=$1 fx=$2/sysfs-poolmem
fails=0
expect() { # RC PATTERN ARGS...
	rc=$1 pat=$2
	shift 2
	out=$("$pc" --sysfs "$fx" --control /nonexistent "$@" 2>&1)
	got=$?
	if [ $got -ne "$rc" ] || ! echo "$out" | grep -q -- "$pat"; then
		echo "FAIL: $*: exit $got (want $rc): $out (want '$pat')"
		fails=$((fails + 1))
	else
		echo "ok: $*: $out"
	fi
}
expect 4 "^poolctl: cxl0: cannot offline: chunks of domains live there: web1 (24 chunks)$" pool offline cxl0 --check
expect 4 "^poolctl: cxl0: cannot remove: chunks of domains live there: web1" pool remove cxl0 --check
expect 3 "^poolctl: nosuch: no such pool" pool offline nosuch --check
expect 3 "^poolctl: nosuch: no such pool" pool undrain nosuch --check
expect 3 "^poolctl: nosuch: no such domain$" vm destroy nosuch --check
expect 3 "^poolctl: /nonexistent: cannot open" vm destroy web1 --check
# every verb that changes something has --check and --json (poolctl(8),
# Documentation/json.md); cluster claim holds extents until stopped, and
# libvirt hook is libvirt's, so neither prints a result to script against
for v in "pool online" "pool add" "pool offline" "pool remove" "pool drain" "pool undrain" "pool set" \
	"pool soft-offline" "pool poison-scan" "vm create" "vm set" "vm destroy" "profile create" \
	"profile remove" "apply" "cluster register" "cluster fence"; do
	for f in --check --json; do
		# shellcheck disable=SC2086
		"$pc" $v --help 2>&1 | grep -q -- "^ *$f" || { echo "FAIL: $v has no $f"; fails=$((fails + 1)); }
	done
done

[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
