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
out=$("$poolctl" --sysfs "$sys" node list) || { echo "FAIL: node list"; exit 1; }
echo "$out"
echo "$out" | python3 -c '
import sys
lines = [l for l in sys.stdin.read().splitlines() if not l.startswith("memory block size")]
head = lines[0]
for col in ("TOTAL", "FREE", "LATENCY", "BANDWIDTH"):
    end = head.index(col) + len(col)
    for l in lines[1:]:
        if len(l) < end or l[end - 1] == " " or (len(l) > end and l[end] != " "):
            sys.exit("FAIL: column %s not right-aligned at %d in: %r" % (col, end, l))
' || exit 1
echo "$out" | grep -q "0-31,64-95" || { echo "FAIL: CPU list"; exit 1; }
echo "$out" | grep -q " MB/s" || { echo "FAIL: bandwidth unit"; exit 1; }
echo "ok: aligned"
