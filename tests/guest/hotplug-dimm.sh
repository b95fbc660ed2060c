# rig-topologies: hotplug
# rig-debug: core
# THEORY OF OPERATION: the host adds a 1 GiB pc-dimm on CPU-less node 1
# through QMP while the guest runs (@@RIG HOST plug-dimm). ACPI memory
# hotplug must add its blocks offline on node 1; onlining them movable must
# give node 1 exactly 1 GiB; offlining them and asking the host to unplug
# (@@RIG HOST unplug-dimm) must remove the blocks again.
. /rig/tests/lib/common.sh

check_eq "node1 blocks before plug" 0 "$(node_blocks 1 | wc -w)"
want=$(((1 << 30) / $(block_bytes)))

host_request plug-dimm dimm1 1G 1
has_blocks() { [ "$(node_blocks 1 | wc -w)" = "$want" ]; }
wait_for 30 has_blocks || fail "node1: $want blocks did not appear (have $(node_blocks 1 | wc -w))"
for b in $(node_blocks 1); do
	check_eq "$b state after plug" offline "$(cat $MEMSYS/$b/state)"
done
check_eq "blocks onlined" "$want" "$(online_node_blocks 1)"
check_eq "node1 MemTotal (kB)" $((1 << 20)) "$(node_memtotal_kb 1)"

for b in $(node_blocks 1); do
	echo offline > $MEMSYS/$b/state || fail "$b: offline failed"
done
host_request unplug-dimm dimm1
no_blocks() { [ "$(node_blocks 1 | wc -w)" = 0 ]; }
wait_for 30 no_blocks || fail "node1: blocks still present after unplug"
info "dimm1 plugged, onlined, offlined and removed"
