# rig-topologies: cxl2
# THEORY OF OPERATION: QEMU emulates two CXL type-3 devices, each behind its
# own CXL host bridge with its own fixed memory window. Each device becomes a
# pmem region, a devdax namespace, then system-ram through kmem, which adds
# one CPU-less NUMA node per window. Onlining every block must make each
# node's MemTotal exactly its blocks' size: two separate pools.
. /rig/tests/lib/common.sh

check_eq "CXL memdevs" 2 "$(ls /sys/bus/cxl/devices | grep -c '^mem[0-9]')"
check_eq "CXL root decoders" 2 "$(ls /sys/bus/cxl/devices | grep -c '^decoder0\.')"

daxes=$(devices_to_system_ram)
check_eq "dax devices in system-ram mode" 2 "$(echo $daxes | wc -w)"

bs=$(block_bytes)
nodes=""
for dax in $daxes; do
	node=$(dax_node "$dax")
	[ "$node" -ge 1 ] || fail "$dax: memory landed on node $node, not a new node"
	check_eq "$dax: CPUs on node $node" "" "$(cat $NODESYS/node$node/cpulist)"
	size=$(cat /sys/bus/dax/devices/$dax/size)
	want=$((size / bs))
	[ $want -ge 7 ] || fail "$dax: only $want blocks of $bs bytes"
	check_eq "$dax: blocks online on node $node" "$want" "$(online_node_blocks "$node")"
	check_eq "$dax: node $node MemTotal (kB)" "$((want * bs / 1024))" "$(node_memtotal_kb "$node")"
	for b in $(node_blocks "$node"); do
		check_eq "$b state" online "$(cat $MEMSYS/$b/state)"
	done > /dev/null
	nodes="$nodes $node"
done
[ "$(echo $nodes | tr ' ' '\n' | sort -u | wc -l)" = 2 ] || fail "both devices share one node:$nodes"
info "pools on nodes:$nodes"
