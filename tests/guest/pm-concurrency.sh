# rig-topologies: cxl2 nvdimm-numa
# THEORY OF OPERATION: 8 threads touch random pages of one 256 MiB domain at
# once, so many first touches of the same chunk race. Each chunk must be
# allocated exactly once: the kernel's chunk count must equal the number of
# chunks with a mapped page (mincore), bytes must equal chunks x 2 MiB, and
# neither tier may exceed its quota.
. /rig/tests/lib.sh
pm_pools_up
pmtest domain-create conc 256M 64M 192M tier=interleave select=round-robin >/dev/null
out=$(pmtest threads conc 8 2000)
echo "$out"
touched=$(echo "$out" | sed -n 's/.*chunks=\([0-9]*\).*/\1/p')
chunks=$(dom_attr conc chunks)
check_eq "kernel chunks = chunks touched" "$touched" "$chunks"
check_eq "bytes = chunks x 2 MiB" $((chunks * 2 * MiB)) $(($(dom_attr conc local_bytes) + $(dom_attr conc pool_bytes)))
[ "$(dom_attr conc local_bytes)" -le $((64 * MiB)) ] || fail "local quota exceeded"
[ "$(dom_attr conc pool_bytes)" -le $((192 * MiB)) ] || fail "pool quota exceeded"
check_eq "pools' chunks = domain pool chunks" $(($(dom_attr conc pool_bytes) / (2 * MiB))) \
	$(($(pool_attr p0 chunks) + $(pool_attr p1 chunks)))
# the whole domain: every chunk, quotas exactly full, no SIGBUS
pmtest threads conc 8 20000 >/dev/null
pmtest touch conc 0 256M >/dev/null
check_eq "all chunks" 128 "$(dom_attr conc chunks)"
check_eq "local full" $((64 * MiB)) "$(dom_attr conc local_bytes)"
check_eq "pool full" $((192 * MiB)) "$(dom_attr conc pool_bytes)"
check_eq "sigbus" 0 "$(dom_attr conc sigbus)"
pmtest domain-destroy conc >/dev/null
