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
for v in "pool offline" "pool remove" "pool undrain" "vm destroy" "apply"; do
	# shellcheck disable=SC2086
	"$pc" $v --help 2>&1 | grep -q -- "--check" || { echo "FAIL: $v has no --check"; fails=$((fails + 1)); }
done
[ $fails -eq 0 ] || { echo "$fails failed"; exit 1; }
echo "all passed"
