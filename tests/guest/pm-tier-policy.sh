# rig-topologies: cxl2 nvdimm-numa
# rig-debug: skip tier policies are kmod/policy, unit-tested on the host; the placement paths run on the debug kernel in pm-smoke, pm-migrate and pm-fuzz
# THEORY OF OPERATION: a domain of 64 MiB with a 16 MiB local quota and a
# 48 MiB pool quota (1:3) is touched chunk by chunk (2 MiB). The per-tier
# bytes after N chunks follow from the tier policy alone:
#   local-first  local fills first (8 chunks), then pools;
#   pool-first   pools fill first (24 chunks), then local;
#   interleave   l p p p l p p p ... (weighted by the 1:3 quota ratio).
# Pool bytes must equal the sum of the pools' allocated bytes, and quotas
# are hard: touching past both quotas is impossible (sum = size), so the
# whole domain ends exactly at local 16 MiB + pool 48 MiB.
. /rig/tests/lib/common.sh
pm_pools_up

# touch_chunks NAME FIRST COUNT: touch chunks FIRST..FIRST+COUNT-1 in order
touch_chunks() {
	local c=$2
	while [ $c -lt $(($2 + $3)) ]; do
		pmtest touch "$1" $((c * 2))M 4K >/dev/null
		c=$((c + 1))
	done
}
pools_allocated() { echo $(($(pool_attr p0 allocated_bytes) + $(pool_attr p1 allocated_bytes))); }

for policy in local-first pool-first interleave; do
	pmtest domain-create t-$policy 64M 16M 48M tier=$policy >/dev/null
	touch_chunks t-$policy 0 8
	case $policy in
	local-first) want_l=16 want_p=0 ;;
	pool-first) want_l=0 want_p=16 ;;
	interleave) want_l=4 want_p=12 ;;
	esac
	check_eq "$policy: local after 8 chunks (MiB)" $want_l $(($(dom_attr t-$policy local_bytes) / MiB))
	check_eq "$policy: pool after 8 chunks (MiB)" $want_p $(($(dom_attr t-$policy pool_bytes) / MiB))
	check_eq "$policy: pools' allocated = domain pool bytes" "$(dom_attr t-$policy pool_bytes)" "$(pools_allocated)"
	touch_chunks t-$policy 8 24
	# all 32 chunks: every policy ends with both quotas full (pool-first:
	# 24 pool chunks fill the pool quota, then 8 go local)
	want_l=16 want_p=48
	check_eq "$policy: local after 32 chunks (MiB)" $want_l $(($(dom_attr t-$policy local_bytes) / MiB))
	check_eq "$policy: pool after 32 chunks (MiB)" $want_p $(($(dom_attr t-$policy pool_bytes) / MiB))
	check_eq "$policy: sigbus" 0 "$(dom_attr t-$policy sigbus)"
	pmtest domain-destroy t-$policy >/dev/null
	check_eq "$policy: pools empty after destroy" 0 "$(pools_allocated)"
done

# pool-first after 16 chunks: all in pools; the 25th chunk must go local
pmtest domain-create pf 64M 16M 48M tier=pool-first >/dev/null
touch_chunks pf 0 24
check_eq "pool-first: 24 chunks all pool (MiB)" 48 $(($(dom_attr pf pool_bytes) / MiB))
check_eq "pool-first: local still empty" 0 "$(dom_attr pf local_bytes)"
touch_chunks pf 24 1
check_eq "pool-first: 25th chunk local (MiB)" 2 $(($(dom_attr pf local_bytes) / MiB))
pmtest domain-destroy pf >/dev/null
