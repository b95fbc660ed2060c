# rig-topologies: cxl2 nvdimm-numa
# (not in the debug kernel's CI core: every other test there walks this path first: create, map, fault, destroy)
# rig-core: yes (on Linux 6.1 too: the inode, mount and fault paths behind the compat shims)
# THEORY OF OPERATION: the smallest end-to-end path through poolmem.ko:
# register the topology's two far-memory nodes as pools, create a domain,
# touch it through a shared mapping, read the counters, destroy it.
. /rig/tests/lib/common.sh
pm_pools_up
check_eq "pools" "p0 p1" "$(ls $POOLSYS | xargs)"
pmtest domain-create smoke 16M 4M 12M tier=local-first
check_eq "domain file" "-rw-------" "$(ls -l /run/poolmem/smoke | cut -c1-10)"
check_eq "file size" $((16 * MiB)) "$(stat -c %s /run/poolmem/smoke)"
pmtest touch smoke 0 16M
check_eq "st_blocks: allocated bytes / 512" $((16 * MiB / 512)) "$(stat -c %b /run/poolmem/smoke)"
check_eq "local bytes" $((4 * MiB)) "$(dom_attr smoke local_bytes)"
check_eq "pool bytes" $((12 * MiB)) "$(dom_attr smoke pool_bytes)"
check_eq "chunks" 8 "$(dom_attr smoke chunks)"
check_eq "faults (one per chunk)" 8 "$(dom_attr smoke faults)"
check_eq "moves pending (ABI 15)" 0 "$(dom_attr smoke moves_pending_bytes)"
# the stat files hold the same values as the single-value files
check_eq "domain stat" "$(for f in local_bytes pool_bytes chunks faults sigbus discards fault_latency_sum_ns retired_chunks \
	moves move_retries move_pins samples sample_hits promotions demotions tiering_scan_ns revoked_chunks memory_errors sample_hits_pool \
	rebalanced_chunks; do
	dom_attr smoke $f; done | xargs)" "$(dom_attr smoke stat)"
for p in p0 p1; do
	# capacity, free and access factor move on their own; the rest must agree
	check_eq "$p stat" "$(for f in allocated_bytes committed_bytes chunks allocations faults failures; do
		pool_attr $p $f; done | xargs)" "$(cut -d' ' -f3-8 $POOLSYS/$p/stat)"
	check_eq "$p stat (ABI 3)" "$(for f in moved_in moved_out accesses moved_bytes move_retries move_pins \
		samples promotions demotions; do pool_attr $p $f; done | xargs)" "$(cut -d' ' -f10-18 $POOLSYS/$p/stat)"
done
pmtest domain-info smoke
pmtest map smoke
pmtest domain-destroy smoke
[ ! -e /run/poolmem/smoke ] || fail "domain file still there after destroy"
check_eq "p0 allocated after destroy" 0 "$(pool_attr p0 allocated_bytes)"
check_eq "p1 allocated after destroy" 0 "$(pool_attr p1 allocated_bytes)"
