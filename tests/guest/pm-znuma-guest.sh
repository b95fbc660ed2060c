# rig-topologies: nvdimm-numa
# rig-boot: own
# rig-timeout: 900
# rig-debug: skip a nested QEMU guest under KASAN takes many minutes; the window paths run on the debug kernel in pm-znuma
# THEORY OF OPERATION: the guest's view of a znuma domain (issue 17). A
# Linux guest (Debian's kernel, tests/guest/inner/ with inner=znuma) runs
# under Debian's QEMU inside the rig with exactly the arguments "poolctl vm
# create --znuma" printed: a 256 MiB local window and a 256 MiB pool window
# on p0. The guest must see node 0 with its CPU and node 1 with none and
# the pool window's memory. Then a guest program (tests/guest/inner/hog.c)
# touches 64 MiB bound to node 0 (numactl --membind=0's set_mempolicy),
# waits, and 128 MiB bound to node 1 (more than boot touched there: the
# initrd QEMU loads at the top of RAM is freed and reused). The guest runs
# with nokaslr, as the admin guide recommends: with KASLR its kernel image
# lands in the pool window in some boots. Measured from outside the
# inner guest, by the host's per-node meminfo and the domain's tier bytes:
# the first lands in local memory (node 0), not in the pool node; the
# second in the pool node, not in local memory. (Only part of the first is
# new to the domain: the guest reuses pages its boot touched and freed.)
. /rig/tests/lib/common.sh
pm_pools_up
n1=$(pool_attr p0 node)
MiB=1048576
out=$(poolctl vm create zg --size 512M --local 256M --pool 256M --znuma --pools p0) || fail "vm create: $out"
arg=$(echo "$out" | sed -n 2p)
info "poolctl printed: $arg"
rm -f /tmp/inner.log
# shellcheck disable=SC2086
qemu-system-x86_64 -accel tcg,tb-size=128 -nodefaults -display none -L /rig/qemu-data \
	$arg -kernel /rig/inner/kernel -initrd /rig/inner/initrd.cpio \
	-append "console=ttyS0 quiet panic=-1 cryptomgr.notests=1 init_on_alloc=0 mitigations=off nokaslr inner=znuma" \
	-serial file:/tmp/inner.log -no-reboot > /tmp/qemu-z.log 2>&1 &
qpid=$!
inner() { grep -q "$1" /tmp/inner.log 2>/dev/null || ! kill -0 $qpid 2>/dev/null; }
wait_for 400 inner "INNER NODE1" || true
grep -q "INNER NODE1" /tmp/inner.log || fail "inner guest did not boot: $(tail -n 20 /tmp/inner.log) $(cat /tmp/qemu-z.log)"
boot_pool=$(dom_attr zg pool_bytes) boot_local=$(dom_attr zg local_bytes)
info "inner guest booted: $(grep "INNER" /tmp/inner.log | tr '\n' ' ')"
info "boot baseline: the guest touched $((boot_pool / MiB)) MiB of its 256 MiB pool window, $((boot_local / MiB)) MiB of its local window"
grep -q "INNER NODE1 CPUS \[\] MemTotal: *2[0-9][0-9][0-9][0-9][0-9] kB" /tmp/inner.log ||
	fail "guest node 1: expected no CPUs and about 256 MiB: $(grep NODE1 /tmp/inner.log)"
grep -q "INNER NODE0 CPUS \[0\]" /tmp/inner.log || fail "guest node 0: expected CPU 0: $(grep NODE0 /tmp/inner.log)"

# measure: bytes of the domain's tiers, used memory of host node 0 and of p0's node
snap() { echo "$(dom_attr zg local_bytes) $(dom_attr zg pool_bytes) $(node_used_kb 0) $(node_used_kb $n1)"; }
set -- $(snap)
l0=$1 p0=$2 u0=$3 un0=$4
wait_for 300 inner "HOG ALLOCATED 64 ON NODE 0" || true
grep -q "HOG ALLOCATED 64 ON NODE 0" /tmp/inner.log || fail "hog on node 0: $(grep -v "INNER waiting" /tmp/inner.log | tail -n 12)"
set -- $(snap)
dl=$((($1 - l0) / MiB)) dp=$((($2 - p0) / MiB)) du=$((($3 - u0) / 1024)) dun=$((($4 - un0) / 1024))
info "64 MiB bound to guest node 0: local window +$dl MiB, pool window +$dp MiB; host node 0 +$du MiB, node $n1 +$dun MiB"
# the guest reuses pages its boot touched and freed (initramfs): at least half is new
[ $dl -ge 32 ] || fail "membind=0: only $dl MiB more local memory"
[ $dp -le 4 ] && [ $dun -le 8 ] || fail "membind=0: the pool grew by $dp MiB (node $n1 by $dun MiB)"
[ $du -ge 30 ] || fail "membind=0: host node 0 grew by only $du MiB"
l0=$1 p0=$2 u0=$3 un0=$4
wait_for 300 inner "HOG ALLOCATED 128 ON NODE 1" || true
grep -q "HOG ALLOCATED 128 ON NODE 1" /tmp/inner.log || fail "hog on node 1: $(tail -n 12 /tmp/inner.log)"
set -- $(snap)
dl=$((($1 - l0) / MiB)) dp=$((($2 - p0) / MiB)) du=$((($3 - u0) / 1024)) dun=$((($4 - un0) / 1024))
info "128 MiB bound to guest node 1: local window +$dl MiB, pool window +$dp MiB; host node 0 +$du MiB, node $n1 +$dun MiB"
# at most what boot touched of the pool window can be reused
reuse=$((boot_pool / MiB))
[ $dp -ge $((128 - reuse - 8)) ] && [ $dp -ge 64 ] || fail "membind=1: only $dp MiB more pool memory (boot touched $reuse MiB)"
[ $dun -ge $((dp - 8)) ] || fail "membind=1: host node $n1 grew by only $dun MiB"
[ $dl -le 8 ] || fail "membind=1: the local window grew by $dl MiB"
kill -9 $qpid
wait $qpid || true
poolctl vm destroy zg >/dev/null
