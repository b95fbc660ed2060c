# rig-topologies: nvdimm-numa
# rig-debug: skip the QEMU-like test program; Debian's QEMU itself runs on the debug kernel in qemu-real
# THEORY OF OPERATION: what QEMU and vhost do with guest RAM backed by a
# domain: memory-backend-file opens the char device, reads the size with
# lseek(SEEK_END), maps it MAP_SHARED, and discards with fallocate
# (balloon/virtio-mem); vhost and O_DIRECT pin it with get_user_pages. The
# chunk map must show where every chunk is, and the reverse map must find
# the domain and offset from a host physical address.
. /rig/tests/lib/common.sh
pm_pools_up
pmtest domain-create vm 32M 8M 24M tier=interleave >/dev/null
pmtest qemu vm
check_eq "discards (half the domain)" 8 "$(dom_attr vm discards)"

modprobe brd rd_nr=1 rd_size=4096 || fail "brd not available"
dd if=/dev/urandom of=/dev/ram0 bs=1M count=1 2>/dev/null
pmtest gup vm /dev/ram0
dd if=/dev/ram0 of=/tmp/ram.head bs=1M count=1 2>/dev/null

# forward map: ranges add up to the allocated bytes; reverse map agrees
pmtest map vm > /tmp/map
total=$(awk '{ s += $2 } END { print s }' /tmp/map)
check_eq "map covers allocated bytes" $(($(dom_attr vm local_bytes) + $(dom_attr vm pool_bytes))) "$total"
while read -r off len phys pool node; do
	got=$(pmtest rmap $((phys + len - 4096)))
	check_eq "rmap of $phys+$len" "vm $(printf '%#x' $((off + len - 4096))) $pool $node" "$got" >/dev/null
done < /tmp/map
info "reverse map agrees with $(wc -l < /tmp/map) forward ranges"
# a small batch forces the continuation protocol
check_eq "map in batches of 1" "$(cat /tmp/map)" "$(pmtest map vm batch=1)"
# the map may be copied into the domain's own, untouched memory: the copy
# faults into the domain, which must not deadlock on the domain's lock
pmtest domain-create self 16M 0 16M >/dev/null
pmtest touch self 0 8M >/dev/null
pmtest map-into-self self > /tmp/self.map
check_eq "map copied into its own domain: ranges" 4 "$(wc -l < /tmp/self.map)"
check_eq "map into itself = map" "$(pmtest map self | head -n 4)" "$(head -n 4 /tmp/self.map)"
pmtest domain-destroy self >/dev/null
pmtest domain-destroy vm >/dev/null

# the same sequence through a mapping that can't take PMDs
pmtest domain-create vm2 32M 8M 24M tier=interleave >/dev/null
pmtest qemu vm2 layout=small
pmtest domain-destroy vm2 >/dev/null
