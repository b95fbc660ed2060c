# rig-topologies: nvdimm-numa
# rig-debug: core
# rig-core: yes (on Linux 6.1 too: d_children and the shrinker API changed between the kernels)
# THEORY OF OPERATION: lifetimes. rmmod must fail while a domain exists and
# work once none does. Destroying a mapped domain removes its file (no new
# opens) but the mapping keeps its data until it goes; then the memory
# returns. After create/touch/destroy cycles every pool node's MemFree is
# back at its baseline (nothing leaked).
. /rig/tests/lib.sh
pm_pools_up
n0=$(pool_attr p0 node) n1=$(pool_attr p1 node)
free_kb() { node_free_kb "$@"; }
base0=$(free_kb $n0) base1=$(free_kb $n1)

pmtest domain-create life 64M 0 64M >/dev/null
rmmod poolmem 2>/dev/null && fail "rmmod succeeded while a domain exists"
info "ok: rmmod refused while domain exists"

pmtest hold life 4 > /tmp/hold.out &
holder=$!
wait_for 10 grep -q mapped /tmp/hold.out || fail "holder did not map"
pmtest domain-destroy life >/dev/null
[ ! -e /run/poolmem/life ] || fail "file still exists after destroy"
check_eq "domain gone from list" "" "$(pmtest domain-list | xargs)"
busy=$(($(pool_attr p0 allocated_bytes) + $(pool_attr p1 allocated_bytes)))
check_eq "memory still held by the mapping" $((64 * MiB)) $busy
wait $holder || fail "holder saw its data change: $(cat /tmp/hold.out)"
check_eq "memory returned after last unmap" 0 $(($(pool_attr p0 allocated_bytes) + $(pool_attr p1 allocated_bytes)))

for i in 1 2 3; do
	pmtest domain-create cyc 128M 0 128M select=round-robin >/dev/null
	pmtest touch cyc 0 128M >/dev/null
	pmtest domain-destroy cyc >/dev/null
done
# allow 256 KiB of noise per node (other allocations on the node)
for n in "$n0:$base0" "$n1:$base1"; do
	node=${n%%:*} base=${n#*:} now=$(free_kb ${n%%:*})
	info "node $node MemFree: baseline $base kB, now $now kB"
	[ $((base - now)) -le 256 ] || fail "node $node leaked $((base - now)) kB"
done
umount /run/poolmem
rmmod poolmem || fail "rmmod failed with no domains"
[ ! -e /dev/poolmem/control ] || fail "control node left after rmmod"
pm_load
