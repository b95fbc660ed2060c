# rig-topologies: nvdimm-numa
# rig-boot: own
# rig-core: yes (Linux 6.1 is the kernel whose FOLL_LONGTERM retries for ever)
# THEORY OF OPERATION: a long-term pin (pin_user_pages with FOLL_LONGTERM:
# VFIO passthrough, RDMA, io_uring fixed buffers; here io_uring) of a page
# in ZONE_MOVABLE makes the kernel migrate the page first. poolmem pages
# can't migrate, and Linux 6.1 then retries for ever: the pin never
# returns. A domain created pinnable takes its chunks only from memory
# outside ZONE_MOVABLE (local DRAM, pools onlined as a kernel zone), and
# admission counts only that memory for it; its chunks come zeroed from
# the zero reserve when a reserve unit there is outside ZONE_MOVABLE. Here node A is onlined movable
# (pool p0) and node B as a kernel zone (pool p1), in their own boot so no
# other test has onlined them before.
. /rig/tests/lib/common.sh
pm_load
daxes=$(devices_to_system_ram)
set -- $(for dax in $daxes; do dax_node "$dax"; done | sort -n)
[ $# -ge 2 ] || fail "expected two pool nodes, got: $*"
movable=$1 normal=$2
online_node_blocks $movable >/dev/null
for b in $(node_blocks $normal); do echo online_kernel > $MEMSYS/$b/state; done
pmtest pool-add p0 $movable >/dev/null
pmtest pool-add p1 $normal >/dev/null

check_eq "pinnable bytes of p0 (onlined movable)" 0 "$(pool_attr p0 pinnable_bytes)"
check_eq "pinnable bytes of p1 (onlined kernel)" "$(pool_attr p1 capacity_bytes)" \
	"$(pool_attr p1 pinnable_bytes)"

# admission: a pinnable domain needs memory outside ZONE_MOVABLE
expect_errno ENOSPC pmtest domain-create pin-mov 16M 0 16M pools=p0 pinnable=1
expect_errno EINVAL pmtest domain-create badflag 16M 0 16M flags=2
expect_errno EINVAL pmtest domain-create badflag 16M 0 16M flags=0x80000001
cap=$(( $(pool_attr p1 pinnable_bytes) / MiB / 2 * 2 + 2 ))  # one chunk more than p1 has
expect_errno ENOSPC pmtest domain-create pin-big ${cap}M 0 ${cap}M pools=p0,p1 pinnable=1
# ... while a movable domain may count p0 as well
pmtest domain-create mov-big ${cap}M 0 ${cap}M pools=p0,p1 >/dev/null
pmtest domain-destroy mov-big >/dev/null

# a pinnable domain on the kernel-zone pool: pinned at once
pmtest domain-create pin-n 32M 0 32M tier=pool-first pools=p1 pinnable=1 >/dev/null
check_eq "sysfs pinnable" 1 "$(dom_attr pin-n pinnable)"
pmtest domain-info pin-n | grep -q ' flags=0x1 ' || fail "domain info: no pinnable flag"
out=$(timeout -s KILL 60 pmtest pin-longterm pin-n 32) || fail "pin of pin-n: $out"
info "$out"
echo "$out" | grep -q ': pinned' || fail "pin of pin-n: $out"
check_eq "pin-n chunks on p1" 16 "$(dom_pool_chunks pin-n p1)"

# allowed on both pools: every chunk still comes from p1, p0 is tried and fails
f0=$(pool_attr p0 failures)
pmtest domain-create pin-both 32M 0 32M tier=pool-first pools=p0,p1 select=round-robin \
	pinnable=1 >/dev/null
out=$(timeout -s KILL 60 pmtest pin-longterm pin-both 32) || fail "pin of pin-both: $out"
echo "$out" | grep -q ': pinned' || fail "pin of pin-both: $out"
check_eq "pin-both chunks on p0 (movable)" 0 "$(dom_pool_chunks pin-both p0)"
check_eq "pin-both chunks on p1" 16 "$(dom_pool_chunks pin-both p1)"
[ "$(pool_attr p0 failures)" -gt "$f0" ] || fail "p0 was never tried"
info "ok: p0 failures $f0 -> $(pool_attr p0 failures)"

# local tier: the home node's DRAM is a kernel zone
pmtest domain-create pin-l 16M 16M 0 pinnable=1 >/dev/null
out=$(timeout -s KILL 60 pmtest pin-longterm pin-l 16) || fail "pin of pin-l: $out"
echo "$out" | grep -q ': pinned' || fail "pin of pin-l: $out"
check_eq "sysfs pinnable of a default domain" 0 "$(pmtest domain-create dflt 2M 2M 0 >/dev/null;
	dom_attr dflt pinnable)"
pmtest domain-destroy dflt >/dev/null

# why the flag exists: a movable domain's chunks on p0 can't be pinned, and
# a long-term pin of them fails at once with EFAULT (kmod/pin.c). The
# kernel's own FOLL_LONGTERM loop would retry it forever (it can migrate
# only LRU pages): before the fix this was killed after its timeout.
#  - pages the pinning process never mapped: its own faults refuse them;
#  - pages it mapped and wrote first (QEMU with prealloc): the pin watch
#    sees them pinned on two looks 20 ms apart within a period (250 ms)
#    and unmaps them, then the same.
pmtest domain-create mov 16M 0 16M tier=pool-first pools=p0 >/dev/null
pmtest fill mov 0 16M 1 >/dev/null
for how in touch=0 touch=1; do
	out=$(timeout -s KILL 20 pmtest pin-longterm mov 16 $how 2>&1) && rc=0 || rc=$?
	info "movable domain, pin ($how): exit $rc: $out"
	[ $rc -ne 137 ] || fail "long-term pin of movable chunks ($how) hung: killed after 20 s"
	echo "$out" | grep -q ': pinned' && fail "a chunk in ZONE_MOVABLE was long-term pinned ($how): $out"
	echo "$out" | grep -q "Bad address" || fail "long-term pin ($how): expected EFAULT: $out"
	secs=$(echo "$out" | sed -n 's/.*answered in \([0-9.]*\) s.*/\1/p')
	awk -v s="$secs" 'BEGIN { exit !(s != "" && s < 1.5) }' || fail "long-term pin ($how) took $secs s to fail"
done
dmesg | grep -q "domain mov: long-term pin .* refused" || fail "no log line names the domain"
pmtest expect mov 0 16M 1 >/dev/null || fail "the refused pins changed the domain's bytes"

# The zero reserve serves long-term pinned chunks too, from memory outside
# ZONE_MOVABLE: a pinnable domain's pin on p1 (a kernel zone) takes p1's
# zeroed units, and every byte of them reads zero.
poolctl pool set p1 --zero-reserve 64M >/dev/null
at_target() { [ "$(pool_attr p1 zero_reserve_bytes)" = "$(pool_attr p1 zero_reserve_target_bytes)" ]; }
wait_for 60 at_target || fail "p1 reserve did not fill: $(pool_attr p1 zero_reserve_bytes)"
h0=$(pool_attr p1 zero_reserve_hits)
pmtest domain-create pin-r 64M 0 64M tier=pool-first pools=p1 pinnable=1 >/dev/null
out=$(timeout -s KILL 60 pmtest pin-longterm pin-r 64 touch=0) || fail "pin of pin-r: $out"
echo "$out" | grep -q ': pinned' || fail "pin of pin-r: $out"
check_eq "pin-r units taken from p1's zero reserve" 32 $(( $(pool_attr p1 zero_reserve_hits) - h0 ))
pmtest expect pin-r 0 64M 0 >/dev/null || fail "pin-r: a unit from the reserve was not zero"
poolctl pool set p1 --zero-reserve 0 >/dev/null
pmtest domain-destroy pin-r >/dev/null

for d in pin-n pin-both pin-l mov; do pmtest domain-destroy $d >/dev/null; done
check_eq "p0 allocated after destroy" 0 "$(pool_attr p0 allocated_bytes)"
check_eq "p1 allocated after destroy" 0 "$(pool_attr p1 allocated_bytes)"

# Migration of a long-term pinned chunk (here an AF_XDP UMEM, which pins
# with FOLL_LONGTERM as VFIO and RDMA do; io_uring fixed buffers refuse
# files other than shmem and hugetlbfs in 6.1): a drain must fail at once,
# naming the domain and the chunk's offset, lose nothing, and succeed once
# the pin is gone.
pmtest domain-create pin-mv 16M 16M 16M tier=pool-first pools=p1 pinnable=1 >/dev/null
pmtest fill pin-mv 0 16M 0x77 >/dev/null
check_eq "pin-mv chunks on p1" 8 "$(dom_pool_chunks pin-mv p1)"
pmtest xdp-pin pin-mv 4M 2M 60 > /tmp/xdp.out 2>&1 &
xdp=$!
wait_for 20 grep -q pinned /tmp/xdp.out || fail "AF_XDP pin: $(cat /tmp/xdp.out)"
t0=$(uptime_s)
rc=0
out=$(timeout -s KILL 60 poolctl pool drain p1 --allow-local 2>&1) || rc=$?
secs=$(awk -v a=$t0 -v b=$(uptime_s) 'BEGIN { print b - a }')
info "drain with a pinned chunk: exit $rc after $secs s: $out"
check_eq "drain exit code (partly done: the pool stays draining)" 5 $rc
echo "$out" | grep -q "domain pin-mv offset 0x400000 is long-term pinned" ||
	fail "the pinned chunk is not named: $out"
awk -v s=$secs 'BEGIN { exit !(s < 10) }' || fail "the refusal took $secs s"
[ "$(dom_attr pin-mv move_pins)" -ge 1 ] || fail "move_pins did not count it"
dmesg | grep -q "drain of pool p1: domain pin-mv offset 0x400000 is long-term pinned" ||
	fail "no log line names the pinned chunk"
check_eq "pin-mv chunks, all still there" 8 "$(dom_attr pin-mv chunks)"
pmtest expect pin-mv 0 16M 0x77 >/dev/null || fail "data changed: $(pmtest expect pin-mv 0 16M 0x77)"
kill $xdp
wait $xdp || true
out=$(timeout -s KILL 60 poolctl pool drain p1 --allow-local) || fail "drain after unpinning: $out"
info "$out"
check_eq "pin-mv local bytes after the drain" $((16 * MiB)) "$(dom_attr pin-mv local_bytes)"
pmtest expect pin-mv 0 16M 0x77 >/dev/null || fail "data changed by the drain"
poolctl pool undrain p1 >/dev/null
check_eq "p1 state after undrain" online "$(pool_attr p1 state)"
pmtest domain-destroy pin-mv >/dev/null

# ---- a held unit in a kernel zone (issue 46) ----
# A unit with a poisoned page is held out of use for good (kmod/unit.c).
# On p1, a kernel zone, memory offline's isolation refuses the held unit
# (a compound page neither on the LRU nor movable) before any notifier
# runs, so its block can never go offline again: poolmem says so when it
# holds the unit, and the offline is refused at once (EBUSY), not looped.
modprobe hwpoison_inject 2>/dev/null || [ -e /sys/kernel/debug/hwpoison/corrupt-pfn ] ||
	fail "no hwpoison_inject in this kernel"
pmtest domain-create pin-e 8M 0 8M tier=pool-first pools=p1 pinnable=1 >/dev/null
out=$(pmtest memerr pin-e huge inject 5) || fail "pin-e: memory error: $out"
pmtest domain-destroy pin-e >/dev/null
held() { dmesg | grep -q 'held unit at PFN .* is in a kernel zone'; }
wait_for 10 held || fail "no log line about the held unit in a kernel zone: $(dmesg | tail -n 5)"
line=$(dmesg | grep 'held unit at PFN .* is in a kernel zone' | tail -n 1)
pfn=$(echo "$line" | sed -n 's/.*held unit at PFN \(0x[0-9a-f]*\) .*/\1/p')
blk=memory$(( pfn * 4096 / $(block_bytes) ))
t0=$(uptime_s)
echo offline > $MEMSYS/$blk/state 2>/tmp/err && fail "$blk (a held unit in a kernel zone) went offline"
dt=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
grep -qi 'busy' /tmp/err || fail "$blk: offline refused, but not EBUSY: $(cat /tmp/err)"
echo "$dt" | awk '{ exit !($1 < 5) }' || fail "$blk: the offline took $dt s to be refused"
info "held unit in a kernel zone: $(echo "$line" | sed 's/^\[[^]]*\] //'); offline of $blk refused in $dt s"
