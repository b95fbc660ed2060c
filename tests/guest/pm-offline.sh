# rig-topologies: cxl2 nvdimm-numa
# rig-debug: core
# rig-core: yes (on Linux 6.1 too: the memory notifier got new events in 6.9)
# THEORY OF OPERATION: chunks are allocated from ZONE_MOVABLE pool memory,
# whose promise is that it can go offline; the kernel's migration can't
# move them (neither LRU nor movable_ops pages), so poolmem's memory
# notifier moves them out itself. An ordinary offline through sysfs
# ("echo offline > .../memoryN/state", what daxctl offline-memory does)
# of a pool's memory with a live tenant succeeds, and every byte reads
# back:
#  1. every block of p0's node goes offline, one by one, under a domain
#     allowed on p0 and p1 with 32 MiB written (a byte per chunk): chunks
#     move to other blocks of p0 while it has room, then to p1; the data
#     is intact and the domain ends on p1;
#  2. a chunk that truly can't move (a page of it held by a pipe, after
#     vmsplice: a reference that does not go away) makes the offline of its
#     block fail with EBUSY within a couple of seconds, and the log names
#     the domain and why; once the pipe is closed the same offline succeeds;
#  3. chunk allocations in flight on one pool's node don't hold up
#     offlining another pool's node (a single global count did): p0's
#     allocation counter grows during the offlines, and its churner
#     outlives them.
. /rig/tests/lib/common.sh
pm_pools_up
node=$(pool_attr p0 node)
other=$(pool_attr p1 node)

# ---- 1. offline every block of p0's node under a live tenant ----
pmtest domain-create mv 32M 0 32M pools=p0 >/dev/null
for c in $(seq 0 15); do pmtest fill mv $((c * 2))M 2M $((c + 1)) >/dev/null; done
check_eq "chunks on p0 before" 16 "$(dom_pool_chunks mv p0)"
pmtest set mv pools=p0,p1 >/dev/null	# p1 too, for when p0 has no room left
offlined=0
for b in $(node_blocks $node); do
	t0=$(uptime_s)
	echo offline > $MEMSYS/$b/state 2>/tmp/err || fail "$b: offline with a tenant refused: $(cat /tmp/err); $(dmesg | grep 'offline of PFNs' | tail -n 2)"
	offlined=$((offlined + 1))
done
info "offlined all $offlined blocks of node $node; $(dmesg | grep -c 'chunks moved out') moved chunks out"
left=$(dom_pool_chunks mv p0)
check_eq "chunks on p0 after" 0 "${left:-0}"
check_eq "chunks on p1 after" 16 "$(dom_pool_chunks mv p1)"
for c in $(seq 0 15); do
	pmtest expect mv $((c * 2))M 2M $((c + 1)) >/dev/null || fail "chunk $c lost its bytes in the moves"
done
check_eq "blocks back online" "$(node_blocks $node | wc -w)" "$(online_node_blocks $node)"
pmtest domain-destroy mv >/dev/null

# ---- 2. a chunk that can't move refuses its block, at once, and says why ----
pmtest domain-create held 4M 0 4M pools=p0 >/dev/null
pmtest fill held 0 4M 7 >/dev/null
rm -f /tmp/pipe-go
pmtest pipe-hold held /tmp/pipe-go >/tmp/pipe.out 2>&1 &
holder=$!
wait_for 10 grep -q ready /tmp/pipe.out || fail "pipe-hold: $(cat /tmp/pipe.out)"
blk=memory$(( $(pmtest map held | awk 'NR == 1 { print $3 }') / $(block_bytes) ))
t0=$(uptime_s)
echo offline > $MEMSYS/$blk/state 2>/tmp/err && fail "$blk went offline under a chunk a pipe holds"
grep -q busy /tmp/err || fail "$blk: offline failed with: $(cat /tmp/err)"
secs=$(awk -v a=$t0 -v b=$(uptime_s) 'BEGIN { print b - a }')
awk -v s=$secs 'BEGIN { exit !(s < 5) }' || fail "$blk: refusal took $secs s"
dmesg | grep -q "domain held offset .* can't move (referenced)" ||
	fail "no log line names the domain and the reason: $(dmesg | grep 'offline of PFNs' | tail -n 2)"
info "refused in $secs s: $(dmesg | grep "can't move" | tail -n 1)"
touch /tmp/pipe-go
wait $holder || fail "pipe-hold: $(cat /tmp/pipe.out)"
echo offline > $MEMSYS/$blk/state 2>/tmp/err || fail "$blk: offline refused after the pipe let go: $(cat /tmp/err)"
pmtest expect held 0 4M 7 >/dev/null || fail "the held domain lost its bytes"
online_node_blocks $node >/dev/null
pmtest domain-destroy held >/dev/null

# ---- 3. allocations in flight on p0's node don't hold up p1's node ----
blk=$(node_blocks $other | head -n 1)
pmtest domain-create fly 64M 0 64M pools=p0 >/dev/null
# it churns until the offlines are done (cxl2's emulated memory makes them
# slow), and at most two minutes
rm -f /tmp/churn.stop
( end=$(($(cut -d. -f1 /proc/uptime) + 120))
  while [ ! -e /tmp/churn.stop ] && [ $(cut -d. -f1 /proc/uptime) -lt $end ]; do
	pmtest touch fly 0 64M >/dev/null; pmtest punch fly 0 64M >/dev/null
  done ) &
churner=$!
sleep 1
refusals=0
a0=$(pool_attr p0 allocations)
for i in 1 2 3 4 5 6 7 8 9 10; do
	if echo offline > $MEMSYS/$blk/state 2>/tmp/err; then
		echo online_movable > $MEMSYS/$blk/state
	else
		refusals=$((refusals + 1))
		info "offline of $blk (node $other) refused: $(dmesg | grep 'refused' | tail -n 1)"
	fi
done
a1=$(pool_attr p0 allocations)
# the offlines ran while node p0 allocated: chunk allocations happened
# between the first and the last, and the churner outlived the loop
kill -0 $churner 2>/dev/null || fail "the churner ended before the offlines did: no allocation was in flight at the end"
[ $((a1 - a0)) -gt 0 ] || fail "no chunk allocation on p0 during the 10 offlines of node $other"
info "chunk allocations on p0 during the 10 offlines of node $other: $((a1 - a0))"
touch /tmp/churn.stop
wait $churner
info "allocations on node $(pool_attr p0 node) meanwhile: $(pool_attr p0 allocations) in all"
check_eq "offlines of node $other refused while node $(pool_attr p0 node) allocates" 0 $refusals
pmtest domain-destroy fly >/dev/null
