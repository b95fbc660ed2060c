# rig-topologies: nvdimm-numa
# rig-debug: core
# rig-core: yes (on Linux 6.1 too: d_children and the shrinker API changed between the kernels)
# THEORY OF OPERATION: lifetimes. rmmod must fail while a domain exists and
# work once none does. Destroying a mapped domain removes its file (no new
# opens) but the mapping keeps its data until it goes; then the memory
# returns. After create/touch/destroy cycles every pool node's MemFree is
# back at its baseline (nothing leaked). A domain's inode held by a drain
# keeps the file system alive after every mount and name is gone.
. /rig/tests/lib/common.sh
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
# allow 256 KiB of noise per node (other allocations on the node). Freed
# units may sit in the per-CPU free lists, which MemFree does not count,
# for a moment (6.1 in a fast guest once read 18 MiB short): settle first,
# and give a real leak 5 s to go away.
for n in "$n0:$base0" "$n1:$base1"; do
	node=${n%%:*} base=${n#*:}
	for i in $(seq 25); do
		mem_settle
		now=$(free_kb $node)
		[ $((base - now)) -le 256 ] && break
		sleep 0.2
	done
	info "node $node MemFree: baseline $base kB, now $now kB"
	[ $((base - now)) -le 256 ] || fail "node $node leaked $((base - now)) kB"
done
# ---- a held inode keeps the file system alive (issue 46) ----
# A profile domain whose file only a holder has open (QEMU's mem-path=DIR
# unlinks its file at once), its profile removed, and /run/poolmem
# unmounted lazily: the holder's open file is the last thing that keeps the
# file system. A drain of the domain's pool holds the domain's inode
# (pm_domain_hold()) while the holder is killed: the superblock must
# outlive the drain. Before the fix the holder's last fput() shut it down
# under the drain ("Busy inodes after unmount", then a use-after-free at
# the drain's iput(), which KASAN reports on the debug kernel).
echo 1 > /sys/module/poolmem/parameters/drain_workers	# a longer drain
pmtest profile-create lz 0 100% >/dev/null
truncate -s 1G $PMFS/lz/vm || fail "lz: ftruncate of a profile file"
pmtest hold lz/vm 120 > /tmp/lz.out &
holder=$!
wait_for 60 grep -q mapped /tmp/lz.out || fail "lz: the holder did not map its file: $(cat /tmp/lz.out)"
rm $PMFS/lz/vm
rmdir $PMFS/lz || fail "lz: rmdir of the empty profile"
check_eq "lz: poolmem mounts before the lazy umount" 1 "$(grep -c ' poolmem ' /proc/mounts)"
umount -l $PMFS
check_eq "lz: poolmem mounts after the lazy umount" 0 "$(grep -c ' poolmem ' /proc/mounts)"
dmesg -c >/dev/null
src=p0
[ "$(pool_attr p1 allocated_bytes)" -gt "$(pool_attr p0 allocated_bytes)" ] && src=p1
a0=$(pool_attr $src allocated_bytes)
# (pmtest would mount $PMFS again, taking the file system's last reference)
PMTEST_NO_MOUNT=1 pmtest drain $src > /tmp/lz.drain 2>&1 &
drainer=$!
draining() { [ "$(pool_attr $src allocated_bytes)" -lt $a0 ]; }
wait_for 10 draining || fail "lz: the drain of $src did not start"
kill -9 $holder
wait $holder 2>/dev/null || true	# killed: 137
kill -0 $drainer 2>/dev/null ||
	fail "lz: the drain of $src ended before the holder did: nothing held the inode meanwhile ($(cat /tmp/lz.drain))"
info "lz: the holder's file closed while the drain of $src ran ($(($(pool_attr $src allocated_bytes) >> 20)) MiB left there)"
wait $drainer
check_eq "lz: poolmem mounts after the drain" 0 "$(grep -c ' poolmem ' /proc/mounts)"
pmtest drain $src cancel=1 >/dev/null 2>&1 || fail "lz: undrain of $src"
echo 8 > /sys/module/poolmem/parameters/drain_workers
pools_empty() { [ $(($(pool_attr p0 allocated_bytes) + $(pool_attr p1 allocated_bytes))) -eq 0 ]; }
wait_for 20 pools_empty ||
	fail "lz: the domain's memory did not come back after the drain"
dmesg | grep -E 'Busy inodes|use-after-free' && fail "lz: the file system went while the drain held its inode"
# pmtest mounts $PMFS again where it is missing (as poolctl does)
check_eq "lz: poolmem mounted again" 1 "$(grep -c ' poolmem ' /proc/mounts)"
umount /run/poolmem
rmmod poolmem || fail "rmmod failed with no domains"
[ ! -e /dev/poolmem/control ] || fail "control node left after rmmod"
pm_load
