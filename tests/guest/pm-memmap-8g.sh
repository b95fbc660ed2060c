# rig-topologies: nvdimm-big
# rig-boot: own
# rig-append: memory_hotplug.memmap_on_memory=1
# THEORY OF OPERATION: the memmap goal at the size it was set for (issue 45):
# 8 GiB of pool memory onlined with `--memmap device` costs local DRAM at
# most 1 MiB (the struct pages live on the device; what is left is the
# page tables of the new mappings), and with `--memmap local` node 0 gives
# the whole memmap, 64 bytes per 4 KiB page (128 MiB for 8 GiB), less 2 MiB
# of slack. The same device both ways, on nvdimm-big's 8 GiB NVDIMM.
# pm-memmap checks the rest at 2 GiB (pool show, JSON, domains, refusals).
. /rig/tests/lib/common.sh
[ -e /sys/module/memory_hotplug/parameters/memmap_on_memory ] || skip "no memory_hotplug.memmap_on_memory in this kernel"
pm_load
set -- $(make_devdax)
[ $# -eq 3 ] || fail "expected three dax devices, got: $*"
d8=$3
[ -e /sys/bus/dax/devices/$d8/memmap_on_memory ] || skip "dax devices have no memmap_on_memory (Linux 6.8+)"
bs=$((0x$(cat $MEMSYS/block_size_bytes)))
size=$(($(cat /sys/bus/dax/devices/$d8/size) / bs * bs))
[ $size -ge $((7 << 30)) ] || fail "$d8 is $((size >> 20)) MiB, not the 8 GiB NVDIMM"
mm_kb=$((size / 4096 * 64 / 1024))

# --- on the device: at most 1 MiB of local DRAM ---
mem_settle
f0=$(node_memfree_kb 0)
out=$(poolctl pool online $d8 --name big --memmap device) || fail "online $d8 --memmap device: $out"
mem_settle
used=$((f0 - $(node_memfree_kb 0)))
info "--memmap device: node 0 gave $used kB for $((size >> 20)) MiB of pool memory (its memmap is $mm_kb kB)"
[ $used -le 1024 ] || fail "--memmap device: node 0 gave $used kB for 8 GiB (goal: at most 1 MiB)"
check_eq "pool node MemTotal (the device less its memmap)" $((size / 1024 - mm_kb)) \
	"$(node_memtotal_kb $(dax_node $d8))"
out=$(poolctl pool remove big 2>&1) || fail "pool remove big: $out"

# --- in local DRAM: the whole memmap ---
mem_settle
f0=$(node_memfree_kb 0)
out=$(poolctl pool online $d8 --name big --memmap local) || fail "online $d8 --memmap local: $out"
mem_settle
used=$((f0 - $(node_memfree_kb 0)))
info "--memmap local: node 0 gave $used kB for $((size >> 20)) MiB of pool memory (its memmap is $mm_kb kB)"
[ $used -ge $((mm_kb - 2048)) ] || fail "--memmap local: node 0 gave only $used kB (the memmap is $mm_kb kB)"
out=$(poolctl pool remove big 2>&1) || fail "pool remove big: $out"
info "8 GiB: --memmap device costs node 0 at most 1 MiB, --memmap local the whole $((mm_kb >> 10)) MiB memmap"
