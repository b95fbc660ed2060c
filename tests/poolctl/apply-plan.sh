#!/bin/sh
# poolctl apply --dry-run against a fixture sysfs (pools cxl0, cxl1; domain
# web1 64M, 16M/48M, interleave): the plan names each step with the command
# that does it, leaves unnamed objects alone, and a malformed file or an
# unknown key is an error with FILE:LINE and exit 2.
# usage: apply-plan.sh POOLCTL FIXTURES
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
cat > "$t/a.toml" <<'CONF'
[pools.cxl0]
device = "dax0.0"
overcommit = 1.5
[pools.newp]
node = 3
overcommit = 200
[domains.web1]
size = "64M"
local = "32M"
pool = "32M"
tier_policy = "interleave"
[domains.fresh]
size = "16G"
local = "4G"
pool = "12G"
tiering = "on"
CONF
out=$(pc apply --config "$t/a.toml" --dry-run 2>&1); rc=$?
echo "$out"
# the fixture has no node 3: the plan is printed, then pool add's own check fails
[ $rc -eq 2 ] || bad "dry run exit $rc (want 2: pool add --node 3 --check)"
printf '%s\n' "$out" | grep -qx "x step [0-9]* (+ pool newp: register node 3) would fail with exit code 2" ||
	bad "no x line for newp's check"
for want in "= pool cxl1: not in $t/a.toml, left as it is" "+ pool newp: register node 3" \
	"    poolctl pool add newp --node 3 --overcommit 2" "+ domain fresh: 16G" \
	"~ pool cxl0: overcommit 1 -> 1.5" "    poolctl pool set cxl0 --overcommit 1.5" \
	"    poolctl vm create fresh --size 16G --local 4G --pool 12G --tiering on" \
	"~ domain web1: quotas 16.0 MiB/48.0 MiB -> 32.0 MiB/32.0 MiB" "    poolctl vm set web1 --local 32M --pool 32M"; do
	printf '%s\n' "$out" | grep -qxF -- "$want" || bad "plan lacks: $want"
done
printf '%s\n' "$out" | grep -q "domain web1: tier_policy" && bad "unchanged tier policy planned"
# --json: the same plan as one object on stdout, each check's exit code and
# error in it, the one-line error on stderr, the same exit code
pc apply --config "$t/a.toml" --check --json > "$t/plan.json" 2> "$t/plan.err"; rc=$?
[ $rc -eq 2 ] || bad "--json dry run exit $rc (want 2)"
python3 - "$t/plan.json" <<'PYEND' || bad "--json plan: $(cat "$t/plan.json") $(cat "$t/plan.err")"
import json, sys
j = json.load(open(sys.argv[1]))
steps = {s["what"]: s for s in j["steps"]}
assert j["applied"] is False, j["applied"]
assert j["unmanaged"] == ["pool cxl1"], j["unmanaged"]
web1 = steps["~ domain web1: quotas 16.0 MiB/48.0 MiB -> 32.0 MiB/32.0 MiB"]
assert web1["command"] == ["poolctl", "vm", "set", "web1", "--local", "32M", "--pool", "32M"], web1
assert web1["applied"] is False and web1["exit_code"] is None, web1
newp = steps["+ pool newp: register node 3"]
assert newp["check"] == "failed" and newp["check_exit_code"] == 2, newp
assert "--node 3" in newp["check_error"], newp
for s in j["steps"]:
    assert set(s) == {"what", "command", "waits_for_pools", "check", "check_exit_code", "check_error",
                      "applied", "exit_code"}, s
PYEND
grep -q "would fail (steps\[\].check); nothing applied" "$t/plan.err" || bad "--json plan's error: $(cat "$t/plan.err")"
printf '[pools.x]\ndevice = "dax0.0"\nzonee = "normal"\n' > "$t/b.toml"
out=$(pc apply --config "$t/b.toml" 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$out" = "poolctl: $t/b.toml:3: pools.x: unknown key 'zonee'" ] || bad "unknown key: exit $rc: $out"
printf '[domains.y]\nlocal = "1G"\n' > "$t/c.toml"
out=$(pc apply --config "$t/c.toml" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "c.toml:1: domains.y: size is required" || bad "missing size: exit $rc: $out"
printf '[pools.x\n' > "$t/d.toml"
out=$(pc apply --config "$t/d.toml" 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "d.toml:1: " || bad "parse error: exit $rc: $out"
# overcommit: a ratio or a percentage; anything else named with its line
printf '[pools.x]\ndevice = "dax0.0"\novercommit = 0.5\n' > "$t/e.toml"
out=$(pc apply --config "$t/e.toml" 2>&1); rc=$?
[ $rc -eq 2 ] && [ "$out" = "poolctl: $t/e.toml:3: pools.x: overcommit: a ratio from 1 to 10 (1.5) or a percentage (\"150%\")" ] ||
	bad "overcommit 0.5: exit $rc: $out"
out=$(pc apply --config "$t/none.toml" 2>&1); rc=$?
[ $rc -eq 3 ] && echo "$out" | grep -q "none.toml: no such file" || bad "no file: exit $rc: $out"
[ $fails -eq 0 ] && echo "ok: plan and errors"
exit $fails
