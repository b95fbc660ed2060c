# rig-topologies: cxl2
# The newcomer's demo (make demo), kept in the cxl2 suite so it cannot rot:
# two emulated CXL memory expanders become two CPU-less NUMA nodes of
# online, movable memory, shown with poolctl.
. /rig/tests/lib.sh

info "before: the guest has DRAM on node 0 only"
poolctl node list
daxes=$(devices_to_system_ram)
for dax in $daxes; do
	node=$(dax_node "$dax")
	n=$(online_node_blocks "$node")
	info "$dax: onlined $n blocks on node $node (movable)"
done
info "after: each CXL device is a pool on its own node"
poolctl node list
poolctl node list --json > /tmp/nodes.json
check_eq "nodes in poolctl node list --json" 3 "$(grep -c '"node":' /tmp/nodes.json)"
