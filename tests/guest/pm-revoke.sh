# rig-topologies: nvdimm-numa
# rig-debug: core
# rig-core: yes (on Linux 6.1 too: memory-error delivery to the mappings)
# THEORY OF OPERATION: a revoked pool (POOLMEM_DRAIN_REVOKE, what
# poolmem-agent asks for when its lease on a shared device may be gone)
# lets its memory go offline with chunks on it: as each block goes, the
# memory notifier unmaps the chunks there and drops them unread (their
# bytes may be another host's), and their domain gets a memory error
# (SIGBUS, BUS_MCEERR_AR) when it touches them, until it discards the
# range. Checked here:
#  - before the revoke, an offline moves the chunks out of the block
#    (within p0, the only pool rv may use) and loses nothing; after it,
#    every block of the node goes offline, chunks dropped, while a reader
#    keeps touching the domain (a fault waiting on a chunk being revoked);
#  - touching a revoked chunk, read or write: BUS_MCEERR_AR, never data;
#    its chunks elsewhere (on another pool) keep their bytes;
#  - counters: revoked_chunks, chunks, pool_bytes, the pool's allocation;
#  - a punched hole is a hole again (zeros on touch, from another pool);
#  - (no pinned chunk here: the agent onlines shared extents movable, where
#    FOLL_LONGTERM can't pin and pinnable domains can't go; in a kernel
#    zone the kernel's isolation refuses the offline before poolmem is
#    asked, revoked or not: Documentation/cluster.md);
#  - the revoke ends with undrain (cancel): the pool takes chunks again.
. /rig/tests/lib/common.sh
pm_pools_up
n0=$(pool_attr p0 node)
bs=$(block_bytes)
expect_errno EINVAL pmtest drain p0 revoke=1 local=1

# rv on p0 (to be revoked), keep on p1 (must not notice)
pmtest domain-create rv 32M 0 32M pools=p0 >/dev/null
pmtest domain-create keep 16M 0 16M pools=p1 >/dev/null
pmtest fill rv 0 32M 0xa5 >/dev/null
pmtest fill keep 0 16M 0x5a >/dev/null
check_eq "rv: chunks on p0 before" 16 "$(dom_pool_chunks rv p0)"
busy=$(pmtest map rv | while read -r off len phys pool n; do
	s=$(( phys / bs )); e=$(( (phys + len - 1) / bs ))
	while [ $s -le $e ]; do echo memory$s; s=$((s + 1)); done
done | sort -u | xargs)
[ -n "$busy" ] || fail "no block holds rv's chunks"
b1=${busy%% *}
echo offline > $MEMSYS/$b1/state 2>/tmp/err ||
	fail "$b1: offline with chunks refused before the revoke: $(cat /tmp/err); $(dmesg | tail -n 3)"
dmesg | grep -q "chunks moved out" || fail "$b1 went offline but no chunk moved out"
check_eq "rv: chunks on p0 after an offline before the revoke" 16 "$(dom_pool_chunks rv p0)"
pmtest expect rv 0 32M 0xa5 >/dev/null || fail "rv lost bytes when its chunks moved out of $b1"
echo online_movable > $MEMSYS/$b1/state

pmtest drain p0 revoke=1 >/dev/null
check_eq "p0 draining after the revoke" draining "$(pool_attr p0 state)"
dmesg | grep -q "pool p0: revoked" || fail "no log line for the revoke"
# revoked memory still online may be another host's: no cancel before it is offline
expect_errno EBUSY pmtest drain p0 cancel=1
# a reader keeps touching rv while its blocks go
( while :; do pmtest touch rv 0 32M read=1 >/dev/null 2>&1 || true; done ) &
reader=$!
for b in $(node_blocks $n0); do
	[ "$(cat $MEMSYS/$b/state)" = online ] || continue
	echo offline > $MEMSYS/$b/state 2>/tmp/err || fail "$b: offline refused after the revoke: $(cat /tmp/err); $(dmesg | tail -n 5)"
done
kill $reader; wait $reader 2>/dev/null || true
online_count() { for b in $(node_blocks $1); do cat $MEMSYS/$b/state; done | grep -c '^online' || true; }
check_eq "node $n0 online blocks" 0 "$(online_count $n0)"
check_eq "rv: revoked_chunks" 16 "$(dom_attr rv revoked_chunks)"
check_eq "rv: chunks" 0 "$(dom_attr rv chunks)"
check_eq "rv: pool_bytes" 0 "$(dom_attr rv pool_bytes)"
check_eq "p0: allocated_bytes" 0 "$(pool_attr p0 allocated_bytes)"
dmesg | grep -q "16 chunks revoked\|chunks revoked" || fail "no log line counts the revoked chunks"

# touching a revoked chunk is a memory error, read or write
out=$(pmtest touch rv 0 4K read=1) && fail "read of a revoked chunk: $out"
echo "$out" | grep -q "SIGBUS at offset 0 (BUS_MCEERR_AR)" || fail "read of a revoked chunk: $out"
out=$(pmtest touch rv 8M 4K) && fail "write to a revoked chunk: $out"
echo "$out" | grep -q "(BUS_MCEERR_AR)" || fail "write to a revoked chunk: $out"
pmtest expect keep 0 16M 0x5a >/dev/null || fail "a domain on another pool lost bytes"
# a punched chunk is a hole again: zeros, placed on another pool of rv's
pmtest punch rv 0 2M >/dev/null
out=$(pmtest touch rv 4K 4K read=1) && fail "only the punched chunk is a hole: $out"
pmtest set rv pools=p0,p1 >/dev/null
pmtest expect rv 0 2M 0 >/dev/null || fail "a punched revoked chunk does not read zeros"
check_eq "rv: a punched chunk placed anew" 1 "$(dom_attr rv chunks)"
pmtest domain-destroy rv >/dev/null
pmtest domain-destroy keep >/dev/null

# the pool comes back: cancel, online
pmtest drain p0 cancel=1 >/dev/null
for b in $(node_blocks $n0); do echo online_movable > $MEMSYS/$b/state; done
check_eq "p0 after the cancel" online "$(pool_attr p0 state)"

info "ok: a revoked pool's memory goes offline with its chunks; they read as memory errors, never as data"
