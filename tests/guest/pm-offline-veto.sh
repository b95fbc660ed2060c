# rig-topologies: cxl2 nvdimm-numa
# rig-debug: core
# rig-core: yes (on Linux 6.1 too: the memory notifier got new events in 6.9)
# THEORY OF OPERATION: chunk pages are not movable, so offlining a memory
# block that holds one would make the kernel retry migration until it gives
# up. poolmem's memory notifier must refuse such an offline at once with
# EBUSY, while blocks without chunks offline normally. The blocks that must
# refuse are computed from the chunk map (host physical ranges). Chunk
# allocations in flight on one node veto offlining on that node only: a
# domain allocating on one pool all the time must not stop another pool's
# node from going offline (a single global count did).
. /rig/tests/lib.sh
pm_pools_up
node=$(pool_attr p0 node)
bs=$(block_bytes)
pmtest domain-create veto 32M 0 32M pools=p0 >/dev/null
pmtest touch veto 0 32M >/dev/null
busy=$(pmtest map veto | while read -r off len phys pool n; do
	s=$(( phys / bs )); e=$(( (phys + len - 1) / bs ))
	while [ $s -le $e ]; do echo memory$s; s=$((s + 1)); done
done | sort -u | xargs)
info "blocks holding chunks: $busy"
[ -n "$busy" ] || fail "no busy blocks found"

refused=0 offlined=0
for b in $(node_blocks $node); do
	t0=$(uptime_s)
	if echo offline > $MEMSYS/$b/state 2>/tmp/err; then
		offlined=$((offlined + 1))
		echo " $busy " | grep -q " $b " && fail "$b holds chunks but went offline"
	else
		grep -q 'busy' /tmp/err || fail "$b: offline failed with: $(cat /tmp/err)"
		echo " $busy " | grep -q " $b " || fail "$b holds no chunks but offline was refused"
		secs=$(awk -v a=$t0 -v b=$(uptime_s) 'BEGIN { print b - a }')
		awk -v s=$secs 'BEGIN { exit !(s < 2) }' || fail "$b: refusal took $secs s"
		refused=$((refused + 1))
	fi
done
check_eq "refused blocks" "$(echo $busy | wc -w)" $refused
info "offlined $offlined blocks without chunks"
dmesg | grep -q "domain veto has chunks" || fail "no log line names the domain"
pmtest domain-destroy veto >/dev/null
for b in $busy; do
	echo offline > $MEMSYS/$b/state || fail "$b: offline refused after destroy"
done
check_eq "blocks back online" "$(node_blocks $node | wc -w)" "$(online_node_blocks $node)"

# allocations in flight on p0's node don't veto offlining p1's node
other=$(pool_attr p1 node)
blk=$(node_blocks $other | head -n 1)
pmtest domain-create fly 64M 0 64M pools=p0 >/dev/null
( end=$(($(cut -d. -f1 /proc/uptime) + 8))
  while [ $(cut -d. -f1 /proc/uptime) -lt $end ]; do
	pmtest touch fly 0 64M >/dev/null; pmtest punch fly 0 64M >/dev/null
  done ) &
churner=$!
sleep 1
refusals=0
for i in 1 2 3 4 5 6 7 8 9 10; do
	if echo offline > $MEMSYS/$blk/state 2>/tmp/err; then
		echo online_movable > $MEMSYS/$blk/state
	else
		refusals=$((refusals + 1))
		info "offline of $blk (node $other) refused: $(dmesg | grep 'refused' | tail -n 1)"
	fi
done
wait $churner
info "allocations on node $(pool_attr p0 node) meanwhile: $(pool_attr p0 allocations) in all"
check_eq "offlines of node $other refused while node $(pool_attr p0 node) allocates" 0 $refusals
pmtest domain-destroy fly >/dev/null
