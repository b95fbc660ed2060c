# rig-topologies: nvdimm-numa
# rig-boot: own
# rig-append: memory_hotplug.memmap_on_memory=1
# THEORY OF OPERATION: where the memmap of pool memory lives (poolctl pool
# online --memmap, Linux 6.8+). kmem allocates 64 bytes of struct page per
# 4 KiB page when it binds a dax device: 30 MiB for the 1920 MiB of whole
# memory blocks of each of the rig's 2 GiB NVDIMMs. With the kernel booted with memory_hotplug.memmap_on_memory=1
# (this test's own boot):
#  1. --memmap device: node 0's free memory (DRAM) stays within 4 MiB of
#     what it was (the page tables of the new mappings), the pool node's
#     MemTotal is the device less its memmap, and poolctl says so: the
#     online line, pool show's memmap line and its JSON;
#  2. --memmap local on the other device: node 0 gives the memmap (less
#     2 MiB of slack); pool show says it is in local DRAM;
#  3. a domain on each pool works (touch, read back), and both pools go
#     offline and away (a block holding its own memmap goes whole);
#  4. --memmap device on a device bound to kmem with its memmap in DRAM
#     and memory online is refused (EBUSY, exit 4), naming the device.
# The local DRAM figures for an 8 GiB device and the onlining rates are
# tests/bench/bench-memmap.sh's.
. /rig/tests/lib/common.sh
[ -e /sys/module/memory_hotplug/parameters/memmap_on_memory ] || skip "no memory_hotplug.memmap_on_memory in this kernel"
pm_load
set -- $(make_devdax)
[ $# -ge 2 ] || fail "expected two dax devices, got: $*"
da=$1 db=$2
[ -e /sys/bus/dax/devices/$da/memmap_on_memory ] || skip "dax devices have no memmap_on_memory (Linux 6.8+)"
check_eq "boot parameter memory_hotplug.memmap_on_memory" Y "$(cat /sys/module/memory_hotplug/parameters/memmap_on_memory)"
# kmem adds the device's whole memory blocks (15 of 128 MiB of a 2 GiB NVDIMM
# namespace, after its label and alignment); each has its memmap
bs=$((0x$(cat $MEMSYS/block_size_bytes)))
size=$(($(cat /sys/bus/dax/devices/$da/size) / bs * bs))
mm=$((size / 4096 * 64)) mm_kb=$((size / 4096 * 64 / 1024))
mm_text=$(awk -v b=$mm 'BEGIN { printf "%.1f MiB", b / 1048576 }')

# --- 1. on the device ---
mem_settle
f0=$(node_memfree_kb 0)
out=$(poolctl pool online $da --name pd --memmap device) || fail "online $da --memmap device: $out"
info "$out"
echo "$out" | grep -q "memmap $mm_text on the device" || fail "online line does not place the memmap on the device: $out"
mem_settle
used=$((f0 - $(node_memfree_kb 0)))
info "--memmap device: node 0 gave $used kB for $((size >> 20)) MiB of pool memory"
[ $used -lt 4096 ] || fail "--memmap device: node 0 gave $used kB (the memmap is $mm_kb kB)"
nd=$(dax_node $da)
total=$(node_memtotal_kb $nd)
check_eq "pool node $nd MemTotal (the device less its memmap)" $((size / 1024 - mm_kb)) "$total"
poolctl pool show pd | grep -qE "^  memmap +0 B in local DRAM, $mm_text on the pool memory" ||
	fail "pool show pd: $(poolctl pool show pd)"
check_eq "pool show --json memmap" "\"device_bytes\": $mm, \"local_bytes\": 0" \
	"$(poolctl pool show pd --json | tr -d '\n' | sed -n 's/.*"memmap": {\([^}]*\)}.*/\1/p' | tr -s ' ' | sed 's/^ //; s/ $//')"

# --- 2. in local DRAM ---
mem_settle
f0=$(node_memfree_kb 0)
out=$(poolctl pool online $db --name pl --memmap local) || fail "online $db --memmap local: $out"
echo "$out" | grep -q "memmap $mm_text in local DRAM" || fail "online line: $out"
mem_settle
used=$((f0 - $(node_memfree_kb 0)))
info "--memmap local: node 0 gave $used kB for $((size >> 20)) MiB of pool memory"
[ $used -ge $((mm_kb - 2048)) ] || fail "--memmap local: node 0 gave only $used kB (the memmap is $mm_kb kB)"
poolctl pool show pl | grep -qE "^  memmap +$mm_text in local DRAM, 0 B on the pool memory" ||
	fail "pool show pl: $(poolctl pool show pl)"

# --- 3. domains on both, then both pools away ---
for p in pd pl; do
	pmtest domain-create m$p 64M 0 64M pools=$p >/dev/null || fail "domain on $p"
	pmtest fill m$p 0 64M 0x6d >/dev/null || fail "fill m$p"
	pmtest expect m$p 0 64M 0x6d >/dev/null || fail "m$p does not read back"
	pmtest domain-destroy m$p >/dev/null
done
info "domains on both pools read back"

# --- 4. no change of place under online memory ---
expect_exit 4 "^poolctl: $db: bound to kmem with its memmap in local DRAM and memory online" \
	poolctl pool online $db --name again --memmap device

for p in pd pl; do
	out=$(poolctl pool remove $p 2>&1) || fail "pool remove $p: $out"
done
check_eq "devices back in devdax mode" "device_dax device_dax" \
	"$(basename $(readlink /sys/bus/dax/devices/$da/driver)) $(basename $(readlink /sys/bus/dax/devices/$db/driver))"
