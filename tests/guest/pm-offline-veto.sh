# rig-topologies: cxl2 nvdimm-numa
# THEORY OF OPERATION: chunk pages are not movable, so offlining a memory
# block that holds one would make the kernel retry migration until it gives
# up. poolmem's memory notifier must refuse such an offline at once with
# EBUSY, while blocks without chunks offline normally. The blocks that must
# refuse are computed from the chunk map (host physical ranges).
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
