# rig-topologies: nvdimm-numa cxl2
# rig-core: yes (on Linux 6.1 too: the kernels differ here)
# THEORY OF OPERATION: quotas are admission limits; the memory itself can
# still run out when a pool is overcommitted. p0 is re-registered with a 300%
# overcommit (on four of its node's blocks) and partly filled by one domain. A second domain allowed on p0
# and p1 must fall back to p1 when p0 is full (p0 counts failures). A third,
# allowed only on p0 with no local quota, must get SIGBUS once p0 is full:
# its sigbus counter counts it and the kernel log names it.
. /rig/tests/lib.sh
pm_pools_up
n0=$(pool_attr p0 node)
pmtest pool-remove p0 >/dev/null
# p0 is filled by touching it, and on cxl2 every byte touched is emulated
# one load or store at a time (filling its 2 GiB took 140 s): while the test
# runs, all but four of n0's blocks go offline, so that there is less to
# fill; the checks are the same. They come back before p0 is re-registered.
offlined=""
for b in $(node_blocks $n0 | sort -t y -k 2 -n | tail -n +5); do
	echo offline > $MEMSYS/$b/state 2>/dev/null && offlined="$offlined $b"
done
restore_blocks() {
	for b in $offlined; do echo online_movable > $MEMSYS/$b/state; done
	offlined=""
}
trap restore_blocks EXIT
pmtest pool-add p0 $n0 overcommit=300 >/dev/null
cap=$(( $(pool_attr p0 capacity_bytes) / MiB / 2 * 2 ))

pmtest domain-create fill $((cap - 64))M 0 $((cap - 64))M pools=p0 >/dev/null
pmtest touch fill 0 $((cap - 64))M >/dev/null
info "p0 holds $(( $(pool_attr p0 allocated_bytes) / MiB )) MiB of $cap MiB"

# falls back within quota: round-robin tries p0 every other chunk; once p0
# is full those chunks go to p1
pmtest domain-create fb 512M 0 512M pools=p0,p1 select=round-robin >/dev/null
pmtest touch fb 0 512M >/dev/null
check_eq "fb: all 512 MiB placed" $((512 * MiB)) "$(dom_attr fb pool_bytes)"
check_eq "fb: no SIGBUS" 0 "$(dom_attr fb sigbus)"
on0=$(dom_pool_chunks fb p0) on1=$(dom_pool_chunks fb p1)
info "fb: $on0 chunks on p0, $on1 on p1; p0 failures $(pool_attr p0 failures)"
[ "$on1" -gt 0 ] || fail "nothing fell back to p1"
[ "$(pool_attr p0 failures)" -gt 0 ] || fail "p0 counted no failures"

pmtest domain-create starve 512M 0 512M pools=p0 >/dev/null
rc=0
out=$(pmtest touch starve 0 512M) || rc=$?
echo "$out"
check_eq "starve: touch ends in SIGBUS (exit 3)" 3 $rc
[ "$(dom_attr starve sigbus)" -ge 1 ] || fail "sigbus counter did not count"
dmesg | grep -q "domain starve: no memory within quota" || fail "no log line names the domain"
info "starve: $(dom_attr starve sigbus) SIGBUS, $(( $(dom_attr starve pool_bytes) / MiB )) MiB placed"
for d in fill fb starve; do pmtest domain-destroy $d >/dev/null; done
pmtest pool-remove p0 >/dev/null
restore_blocks
pmtest pool-add p0 $n0 >/dev/null
