# rig-topologies: nvdimm-numa
# rig-boot: own
# THEORY OF OPERATION: a long-term pin (pin_user_pages with FOLL_LONGTERM:
# VFIO passthrough, RDMA, io_uring fixed buffers; here io_uring) of a page
# in ZONE_MOVABLE makes the kernel migrate the page first. poolmem pages
# can't migrate, and Linux 6.1 then retries for ever: the pin never
# returns. A domain created pinnable takes its chunks only from memory
# outside ZONE_MOVABLE (local DRAM, pools onlined as a kernel zone), and
# admission counts only that memory for it. Here node A is onlined movable
# (pool p0) and node B as a kernel zone (pool p1), in their own boot so no
# other test has onlined them before.
. /rig/tests/lib.sh
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

# why the flag exists: a movable domain's chunks on p0 can't be pinned
pmtest domain-create mov 16M 0 16M tier=pool-first pools=p0 >/dev/null
out=$(timeout -s KILL 5 pmtest pin-longterm mov 16 2>&1) && rc=0 || rc=$?
info "movable domain, pin: exit $rc: $out"
echo "$out" | grep -q ': pinned' && fail "a chunk in ZONE_MOVABLE was long-term pinned: $out"

for d in pin-n pin-both pin-l mov; do pmtest domain-destroy $d >/dev/null; done
check_eq "p0 allocated after destroy" 0 "$(pool_attr p0 allocated_bytes)"
check_eq "p1 allocated after destroy" 0 "$(pool_attr p1 allocated_bytes)"
