#!/bin/sh
# poolctl capacity against the fixture tree (pools cxl0: 1920 MiB x 1,
# 96 MiB committed; cxl1: 1920 MiB x 1.5; domain web1: 16M local on node 0,
# 48M pool on cxl0,cxl1) and a zoneinfo giving node 0 1 GiB present: the
# limits, committed bytes and VMs that fit are pm_admit()'s arithmetic, and
# bad input exits 2 or 3 with one line.
# usage: capacity.sh POOLCTL FIXTURES
set -u
poolctl=$1 fix=$(cd "$2" && pwd)
t=$(mktemp -d)
trap 'rm -rf "$t"' EXIT
mkdir "$t/sys" "$t/proc"
ln -s "$fix/sysfs-2node/devices" "$t/sys/devices"
ln -s "$fix/sysfs-poolmem/kernel" "$t/sys/kernel"
ln -s "$fix/sysfs-poolmem/class" "$t/sys/class"
# node 0: 4000 + 258144 pages present (1 GiB), other nodes' zones ignored
printf 'Node 0, zone      DMA\n  pages free     3\n        present  4000\n        managed  3000\nNode 0, zone   Normal\n        present  258144\n  present_early_pages 0\nNode 1, zone  Movable\n        present  491520\n' > "$t/proc/zoneinfo"
pc() { "$poolctl" --sysfs "$t/sys" --procfs "$t/proc" "$@"; }
fails=0
bad() { echo "FAIL: $*"; fails=$((fails + 1)); }
MiB=1048576
out=$(pc capacity --shape 64M/25% --json) || bad "capacity --json: $out"
python3 - "$out" <<'PYEND' || bad "capacity --json: $out"
import json, sys
MiB = 1 << 20
j = json.loads(sys.argv[1])
# local: 1 GiB x 100% against web1's 16 MiB; 16 MiB each
assert j["local"] == {"node": 0, "limit_bytes": 1024 * MiB, "committed_bytes": 16 * MiB,
                      "headroom_bytes": 1008 * MiB, "fits": 63}, j["local"]
# the pool set {cxl0, cxl1}: 1920 + 2880 MiB against web1's 48 MiB; 48 MiB each
assert j["pool"]["limit_bytes"] == 4800 * MiB and j["pool"]["committed_bytes"] == 48 * MiB, j["pool"]
assert j["pool"]["fits"] == 99, j["pool"]
pools = {p["name"]: p for p in j["pools"]}
assert pools["cxl0"]["fits"] == (1920 - 96) // 48 and pools["cxl1"]["fits"] == 2880 // 48, pools
assert j["fits"] == 63 and j["shape"]["local_bytes"] == 16 * MiB and j["shape"]["pool_bytes"] == 48 * MiB, j
PYEND
out=$(pc capacity --shape 64M --pools cxl1 --json) || bad "capacity --pools cxl1: $out"
echo "$out" | grep -q '^  "fits": 44,' || bad "all-pool shape on cxl1 (2880 MiB less web1's 48, in 64s): $out"
out=$(pc capacity --json) || bad "capacity without a shape: $out"
echo "$out" | grep -q '^  "fits": null,' || bad "no shape, fits not null: $out"
out=$(pc capacity --shape 64M/25%) || bad "capacity: $out"
echo "$out" | grep -q "^63 more VMs of this shape fit now (admission control; the local tier is the limit)$" ||
	bad "capacity text: $out"
out=$(pc capacity --shape 64M/200% 2>&1); rc=$?
[ $rc -eq 2 ] && echo "$out" | grep -q "^poolctl: --shape: invalid shape '64M/200%'" || bad "bad shape: exit $rc: $out"
out=$(pc capacity --shape 3M 2>&1); rc=$?
[ $rc -eq 2 ] || bad "a shape of 3M (not whole chunks): exit $rc: $out"
out=$(pc capacity --pools nosuch 2>&1); rc=$?
[ $rc -eq 3 ] && [ "$out" = "poolctl: nosuch: no such pool" ] || bad "unknown pool: exit $rc: $out"
out=$("$poolctl" --sysfs "$t/proc" capacity 2>&1); rc=$?
[ $rc -eq 3 ] && [ "$out" = "poolctl: poolmem: module not loaded" ] || bad "no module: exit $rc: $out"
[ $fails -eq 0 ] && echo "ok: capacity"
exit $fails
