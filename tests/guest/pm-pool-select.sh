# rig-topologies: cxl2 nvdimm-numa
# rig-debug: skip the selection policies are kmod/policy, unit-tested on the host; the placement paths run on the debug kernel in pm-smoke and pm-fuzz
# THEORY OF OPERATION: pool-tier-only domains (local quota 0) touched chunk
# by chunk show the pool-selection policy directly in pool_chunks and in the
# chunk map:
#   round-robin  alternates p0 p1 p0 p1 ... from where the domain's cursor
#                starts: consecutive domains start on consecutive pools
#                (the host's domain count plus a per-load salt), so two
#                domains made one after the other start on different pools
#                (with every cursor at 0, every VM's first chunks shared
#                pools: Documentation/simulation.md);
#   nearest      every chunk on the pool with the lowest NUMA distance from
#                the home node (nvdimm-numa: 21 vs 31; cxl2: equal distances,
#                so the lower id);
#   smart-idle   with one pool made busy by another domain (its access
#                factor is high), every new chunk goes to the idle pool.
#   random       both pools get chunks over 32 draws.
. /rig/tests/lib/common.sh
pm_pools_up

touch_n() { local c=0; while [ $c -lt $2 ]; do pmtest touch "$1" $((c * 2))M 4K >/dev/null; c=$((c + 1)); done; }

pmtest domain-create rr 32M 0 32M tier=pool-first select=round-robin >/dev/null
pmtest domain-create rr2 32M 0 32M tier=pool-first select=round-robin >/dev/null
touch_n rr 8
touch_n rr2 8
order=$(pmtest map rr | awk '{ print $4 }' | xargs)
order2=$(pmtest map rr2 | awk '{ print $4 }' | xargs)
case "$order" in
"0 1 0 1 0 1 0 1") want2="1 0 1 0 1 0 1 0" ;;
"1 0 1 0 1 0 1 0") want2="0 1 0 1 0 1 0 1" ;;
*) fail "round-robin order: $order does not alternate" ;;
esac
info "ok: round-robin alternates: $order"
check_eq "the next domain's round-robin order (its cursor one pool on)" "$want2" "$order2"
pmtest domain-destroy rr >/dev/null
pmtest domain-destroy rr2 >/dev/null

pmtest domain-create near 16M 0 16M tier=pool-first select=nearest >/dev/null
touch_n near 8
d0=$(cut -d' ' -f$(($(pool_attr p0 node) + 1)) $NODESYS/node0/distance)
d1=$(cut -d' ' -f$(($(pool_attr p1 node) + 1)) $NODESYS/node0/distance)
if [ "$d1" -lt "$d0" ]; then near=p1; else near=p0; fi
info "distances from node 0: p0 $d0, p1 $d1 -> nearest $near"
check_eq "nearest: chunks on $near" 8 "$(dom_pool_chunks near $near)"
pmtest domain-destroy near >/dev/null

# make p0 busy: 24 chunk allocations and faults in the current windows;
# windows of 60 s so none rotates out however slow the machine is
echo 60000 > /sys/module/poolmem/parameters/window_ms
pmtest domain-create busy 48M 0 48M tier=pool-first pools=p0 >/dev/null
touch_n busy 24
info "access factor: p0 $(pool_attr p0 access_factor), p1 $(pool_attr p1 access_factor)"
[ "$(pool_attr p0 access_factor)" -gt "$(pool_attr p1 access_factor)" ] || fail "p0 not busier than p1"
pmtest domain-create idle 16M 0 16M tier=pool-first select=smart-idle >/dev/null
touch_n idle 6
check_eq "smart-idle: chunks on idle p1" 6 "$(dom_pool_chunks idle p1)"
check_eq "smart-idle: chunks on busy p0" 0 "$(dom_pool_chunks idle p0)"
pmtest domain-destroy idle >/dev/null
pmtest domain-destroy busy >/dev/null

# other hosts' load on a shared device (remote_load, which poolmem-agent
# writes from the cluster ledger) counts for smart idle: p1, idle here,
# is busy elsewhere in the cluster, so a new domain goes to p0
check_eq "p1's remote load at start" "0 0" "$(pool_attr p1 remote_load)"
echo "1000000 0" > $POOLSYS/p1/remote_load
check_eq "p1's remote load" "1000000 0" "$(pool_attr p1 remote_load)"
pmtest domain-create idle2 16M 0 16M tier=pool-first select=smart-idle >/dev/null
touch_n idle2 6
check_eq "smart-idle, p1 busy elsewhere: chunks on p0" 6 "$(dom_pool_chunks idle2 p0)"
pmtest domain-destroy idle2 >/dev/null
for bad in "1" "1 2 3" "x 1" "1 2x" "$((1 << 49)) 0"; do
	echo "$bad" > $POOLSYS/p1/remote_load 2>/dev/null && fail "remote_load took '$bad'"
done
echo "0 0" > $POOLSYS/p1/remote_load
echo 1000 > /sys/module/poolmem/parameters/window_ms

pmtest domain-create rnd 64M 0 64M tier=pool-first select=random >/dev/null
touch_n rnd 32
a=$(dom_pool_chunks rnd p0) b=$(dom_pool_chunks rnd p1)
info "random: p0 $a, p1 $b"
[ "$a" -gt 0 ] && [ "$b" -gt 0 ] || fail "random used one pool only ($a/$b)"
check_eq "random: all chunks placed" 32 $((a + b))
pmtest domain-destroy rnd >/dev/null
