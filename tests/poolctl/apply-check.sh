#!/bin/sh
# poolctl apply checks every step before it applies any, each as the step's
# own command with --check, so that --dry-run of a bad config fails with the
# very message and exit code of the command it would run (against a
# fixture sysfs, no module: the checks that need none). For each bad
# config: the direct command's error line, then apply --dry-run's exit
# code and output, which must hold that line, an "x step" line, and
# "nothing applied"; and apply without --dry-run must fail the same way.
# usage: apply-check.sh POOLCTL FIXTURES
set -u
poolctl=$1 fix=$(cd "$2" && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir "$t/sys"
ln -s "$fix/sysfs-2node/devices" "$t/sys/devices"
ln -s "$fix/sysfs-poolmem/kernel" "$t/sys/kernel"
ln -s "$fix/sysfs-poolmem/class" "$t/sys/class"
pc() { "$poolctl" --sysfs "$t/sys" --control /nonexistent --mount "$t/mnt" "$@"; }
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
# same_as NAME TOML DIRECT-COMMAND...: apply of TOML fails as the command does
same_as() {
	name=$1 toml=$2
	shift 2
	printf '%s\n' "$toml" > "$t/$name.toml"
	want=$(pc "$@" 2>&1 >/dev/null); want_rc=$?
	[ "$want_rc" -ne 0 ] || { bad "$name: the direct command '$*' succeeds: the case proves nothing"; return; }
	for mode in --dry-run ""; do
		out=$(pc apply --config "$t/$name.toml" $mode 2>&1); rc=$?
		if [ "$rc" -ne "$want_rc" ] || ! printf '%s\n' "$out" | grep -qxF -- "$want" ||
			! printf '%s\n' "$out" | grep -q "^x step 1 " || ! printf '%s\n' "$out" | grep -q "nothing applied"; then
			bad "$name (apply $mode): exit $rc (want $want_rc), output:
$out
(want the line: $want)"
		else
			echo "ok: $name (apply ${mode:-without --dry-run}): exit $rc, $want"
		fi
	done
}
same_as tier-policy '[domains.x]
size = "64M"
local = "64M"
tier_policy = "fast"' vm create x --size 64M --local 64M --tier-policy fast
same_as size-0 '[domains.x]
size = "0"
local = "0"' vm create x --size 0 --local 0
same_as no-pool '[domains.x]
size = "64M"
pool = "64M"
pools = ["nosuch"]' vm create x --size 64M --pool 64M --pools nosuch
same_as cpu-node '[pools.x]
node = 0' pool add x --node 0 --overcommit 1
same_as profile-policy '[profiles.p]
local = "100%"
pool_select = "fastest"' profile create p --local 100% --pool-select fastest
# a pool the plan registers counts as existing in the checks of the steps
# after it (their admission waits for it); a wrong name still fails
mkdir -p "$t/sys/bus/dax/devices/dax0.0"
printf '[pools.cxl9]\ndevice = "dax0.0"\n[domains.x]\nsize = "64M"\npool = "64M"\npools = ["cxl9"]\n' > "$t/planned.toml"
out=$(pc apply --config "$t/planned.toml" --dry-run 2>&1); rc=$?
[ $rc -eq 0 ] || bad "a domain on a planned pool: exit $rc: $out"
printf '%s\n' "$out" | grep -q "^checks: 2 passed, 0 failed; the admission of 1 step on domains and profiles is checked once" ||
	bad "the deferred admission is not said: $out"
sed 's/"cxl9"\]/"cxl8"]/' "$t/planned.toml" > "$t/planned2.toml"
out=$(pc apply --config "$t/planned2.toml" --dry-run 2>&1); rc=$?
[ $rc -eq 3 ] && printf '%s\n' "$out" | grep -q "^poolctl: cxl8: no such pool" ||
	bad "a domain on a pool neither there nor planned: exit $rc: $out"
echo "ok: a planned pool counts in the checks, another name does not"
[ $fails -eq 0 ] && echo "ok: every bad config fails as its command"
exit $fails
