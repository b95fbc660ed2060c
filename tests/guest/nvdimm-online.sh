# rig-topologies: nvdimm-numa
# rig-debug: skip the rig's own check of NVDIMM onlining and HMAT: no poolmem code runs
# THEORY OF OPERATION: two QEMU NVDIMMs sit on CPU-less NUMA nodes 1 and 2
# (scripts/rig/topologies/nvdimm-numa.sh). Their label-less namespaces are
# reconfigured to devdax and then to system-ram; onlining the blocks must put
# exactly the blocks' size on the device's own node, and the firmware's NUMA
# distances and HMAT latency/bandwidth must be visible in sysfs.
. /rig/tests/lib/common.sh

check_eq "NVDIMMs" 2 "$(ls /sys/bus/nd/devices | grep -c '^nmem[0-9]')"
daxes=$(devices_to_system_ram)
check_eq "dax devices in system-ram mode" 2 "$(echo $daxes | wc -w)"

bs=$(block_bytes)
for dax in $daxes; do
	node=$(dax_node "$dax")
	case $node in 1|2) ;; *) fail "$dax: on node $node, expected 1 or 2" ;; esac
	check_eq "$dax: CPUs on node $node" "" "$(cat $NODESYS/node$node/cpulist)"
	want=$(($(cat /sys/bus/dax/devices/$dax/size) / bs))
	check_eq "$dax: blocks online on node $node" "$want" "$(online_node_blocks "$node")"
	check_eq "$dax: node $node MemTotal (kB)" "$((want * bs / 1024))" "$(node_memtotal_kb "$node")"
done

# Linux numbers nodes in SRAT order, not QEMU's: find them by distance.
d0=$(cat $NODESYS/node0/distance)
check_eq "node0 distances (sorted)" "10 21 31" "$(echo $d0 | tr ' ' '\n' | sort -n | xargs)"
near=$(echo $d0 | awk '{ for (i = 1; i <= NF; i++) if ($i == 21) print i - 1 }')
far=$(echo $d0 | awk '{ for (i = 1; i <= NF; i++) if ($i == 31) print i - 1 }')
check_eq "distance near node$near -> far node$far" 41 "$(cut -d' ' -f$((far + 1)) $NODESYS/node$near/distance)"

# HMAT: initiator node 0 reaches the near node at 100 ns / 5 GB/s, the far
# one at 200 ns / 2 GB/s (sysfs: ns and MB/s).
for n in $near $far; do
	a=$NODESYS/node$n/access0/initiators
	[ -d $a ] || fail "node$n: no HMAT access0 attributes"
	check_eq "node$n access0 initiator" node0 "$(ls -d $a/node* | xargs -n1 basename)"
done
check_eq "node$near read_latency (ns)" 100 "$(cat $NODESYS/node$near/access0/initiators/read_latency)"
check_eq "node$far read_latency (ns)" 200 "$(cat $NODESYS/node$far/access0/initiators/read_latency)"
check_eq "node$near read_bandwidth (MB/s)" 5120 "$(cat $NODESYS/node$near/access0/initiators/read_bandwidth)"
check_eq "node$far read_bandwidth (MB/s)" 2048 "$(cat $NODESYS/node$far/access0/initiators/read_bandwidth)"
