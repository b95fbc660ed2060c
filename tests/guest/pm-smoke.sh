# rig-topologies: cxl2 nvdimm-numa
# THEORY OF OPERATION: the smallest end-to-end path through poolmem.ko:
# register the topology's two far-memory nodes as pools, create a domain,
# touch it through a shared mapping, read the counters, destroy it.
. /rig/tests/lib.sh
pm_pools_up
check_eq "pools" "p0 p1" "$(ls $POOLSYS | xargs)"
pmtest domain-create smoke 16M 4M 12M tier=local-first
check_eq "device node" "crw-------" "$(ls -l /dev/poolmem/smoke | cut -c1-10)"
pmtest touch smoke 0 16M
check_eq "local bytes" $((4 * MiB)) "$(dom_attr smoke local_bytes)"
check_eq "pool bytes" $((12 * MiB)) "$(dom_attr smoke pool_bytes)"
check_eq "chunks" 8 "$(dom_attr smoke chunks)"
check_eq "faults (one per chunk)" 8 "$(dom_attr smoke faults)"
pmtest domain-info smoke
pmtest map smoke
pmtest domain-destroy smoke
[ ! -e /dev/poolmem/smoke ] || fail "device node still there after destroy"
check_eq "p0 allocated after destroy" 0 "$(pool_attr p0 allocated_bytes)"
check_eq "p1 allocated after destroy" 0 "$(pool_attr p1 allocated_bytes)"
