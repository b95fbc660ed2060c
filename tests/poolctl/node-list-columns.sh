#!/bin/sh
# poolctl node list keeps its columns aligned with a real host's CPU lists
# (node 0 gets "0-31,64-95") and gives HMAT bandwidth in the kernel's unit
# (MB/s, sysfs-devices-node).  usage: node-list-columns.sh POOLCTL FIXTURES
set -u
poolctl=$1 fix=$(cd "$2" && pwd)
sys=$(mktemp -d)
trap 'rm -rf "$sys"' EXIT
cp -r "$fix/sysfs-2node/." "$sys/"
echo "0-31,64-95" > "$sys/devices/system/node/node0/cpulist"
# the zero reserve (module loaded): node 1 holds 16 of 20 MiB, node 0 none
mkdir -p "$sys/kernel/poolmem"
printf '1 20971520 16777216 9 4 7\n' > "$sys/kernel/poolmem/zero_reserve"
out=$("$poolctl" --sysfs "$sys" node list) || { echo "FAIL: node list"; exit 1; }
echo "$out"
echo "$out" | python3 -c '
import sys
lines = [l for l in sys.stdin.read().splitlines() if not l.startswith("memory block size")]
head = lines[0]
for col in ("TOTAL", "FREE", "ZEROED(TARGET)", "LATENCY", "BANDWIDTH"):
    end = head.index(col) + len(col)
    for l in lines[1:]:
        if len(l) < end or l[end - 1] == " " or (len(l) > end and l[end] != " "):
            sys.exit("FAIL: column %s not right-aligned at %d in: %r" % (col, end, l))
' || exit 1
echo "$out" | grep -q "0-31,64-95" || { echo "FAIL: CPU list"; exit 1; }
echo "$out" | grep -q " MB/s" || { echo "FAIL: bandwidth unit"; exit 1; }
echo "$out" | grep -Eq '^ *1 .* 16(\.0)? ?MiB\(20(\.0)? ?MiB\)' || { echo "FAIL: node 1's zero reserve"; exit 1; }
echo "$out" | grep -Eq '^ *0 .* - +[0-9]+\(' || { echo "FAIL: node 0 has no reserve: '-'"; exit 1; }
j=$("$poolctl" --sysfs "$sys" node list --json) || { echo "FAIL: node list --json"; exit 1; }
echo "$j" | python3 -c '
import json, sys
n = {x["node"]: x for x in json.load(sys.stdin)}
assert n[0]["zero_reserve"] is None, n[0]
z = n[1]["zero_reserve"]
assert z == {"target_bytes": 20971520, "held_bytes": 16777216, "refills": 9, "hits": 4, "misses": 7}, z
' || { echo "FAIL: zero_reserve in JSON"; exit 1; }
echo "ok: aligned"
