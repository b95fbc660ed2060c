# rig-topologies: nvdimm-numa
# rig-debug: core
# THEORY OF OPERATION: 8 threads touch random pages of one 256 MiB domain at
# once, so many first touches of the same chunk race. Each chunk must be
# allocated exactly once: the kernel's chunk count must equal the number of
# chunks with a mapped page (mincore), bytes must equal chunks x 2 MiB, and
# neither tier may exceed its quota. Then touches race with discards of
# the same chunks (a fault allocates with the domain lock dropped, a
# discard frees under it), on both mapping layouts: the accounting must
# still add up and everything must go back to the pools.
. /rig/tests/lib/common.sh
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
pmtest threads conc 8 $(pm_scale 20000) >/dev/null
pmtest touch conc 0 256M >/dev/null
check_eq "all chunks" 128 "$(dom_attr conc chunks)"
check_eq "local full" $((64 * MiB)) "$(dom_attr conc local_bytes)"
check_eq "pool full" $((192 * MiB)) "$(dom_attr conc pool_bytes)"
check_eq "sigbus" 0 "$(dom_attr conc sigbus)"
pmtest domain-destroy conc >/dev/null

# churn: 4 touching threads and a discarding one on a 64 MiB domain
for layout in huge small; do
	a0=$(pool_attr p0 allocated_bytes) a1=$(pool_attr p1 allocated_bytes)
	pmtest domain-create churn 64M 16M 48M tier=interleave select=round-robin >/dev/null
	out=$(pmtest churn churn 4 $(pm_scale 3000) layout=$layout) || fail "$layout churn: $out"
	info "$layout: $out"
	chunks=$(dom_attr churn chunks)
	lb=$(dom_attr churn local_bytes) pb=$(dom_attr churn pool_bytes)
	check_eq "$layout churn: bytes = chunks x 2 MiB" $((chunks * 2 * MiB)) $((lb + pb))
	[ "$lb" -le $((16 * MiB)) ] && [ "$pb" -le $((48 * MiB)) ] || fail "$layout churn: quota exceeded: $lb $pb"
	check_eq "$layout churn: pools' bytes = domain pool bytes" "$pb" \
		$(( $(pool_attr p0 allocated_bytes) - a0 + $(pool_attr p1 allocated_bytes) - a1 ))
	check_eq "$layout churn: sigbus" 0 "$(dom_attr churn sigbus)"
	[ "$(dom_attr churn discards)" -gt 0 ] || fail "$layout churn: no discards"
	pmtest domain-destroy churn >/dev/null
	check_eq "$layout churn: pools back after destroy" "$a0 $a1" \
		"$(pool_attr p0 allocated_bytes) $(pool_attr p1 allocated_bytes)"
done
