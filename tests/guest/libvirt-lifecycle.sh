# rig-topologies: libvirt
# rig-timeout: 900
# rig-debug: skip nested QEMU guests under KASAN take many minutes; the kernel paths (profile files, fallocate discards, SIGBUS) run on the debug kernel in pm-fs, qemu-real and qemu-balloon's kin
# THEORY OF OPERATION: the real libvirt daemon (libvirtd 11 and QEMU 10
# from bookworm-backports, tests/guest/lib/libvirt.sh) runs a VM whose RAM
# is a poolmem profile, driven only through virsh:
#  1. poolctl profile create gold --local 25% --pool 75% --owner
#     libvirt-qemu --libvirt; its qemu.conf line is qemu.conf's only change
#     and its <memoryBacking> goes into tests/guest/libvirt/vm.xml;
#  2. virsh define + start: libvirt makes <dir>/libvirt/qemu/<id>-web1/,
#     QEMU sizes a file there per memory backend (the NUMA cell's boot
#     RAM, the virtio-mem device's), each a domain of the profile whose
#     quotas are 25/75 of its size; the Linux guest boots (direct kernel
#     boot) and touches 64 MiB: the boot-RAM domain holds no more local
#     memory than its quota, and the pool nodes' meminfo grew by exactly
#     the domain's pool bytes;
#  3. the guest frees the 64 MiB: free page reporting through the balloon
#     gives at least 24 MiB of it back (QEMU punches it out of the file)
#     within 30 s (the guest reports free 2 MiB blocks a share at a time:
#     42 to 48 MiB came back in 17 to 30 s on 2026-12-02, 30 and 32 MiB
#     in two runs of 2026-12-03, one of them beside a build);
#  4. virsh setmem 200M inflates the balloon by 56 MiB: chunks its pages
#     fill go back (QEMU discards them a 4 KiB page at a time; poolmem
#     frees a chunk once it reads as zeroes), the domain holds no more than
#     the guest has left; virsh setmem 256M deflates it;
#  5. virsh update-memory-device --requested-size grows the virtio-mem
#     device; the guest onlines the memory and touches it: the device's
#     domain grows within 30 s; shrinking it to 0 unplugs it and the
#     domain is empty again within 30 s;
#  6. virsh destroy + undefine: the files and libvirt's directory are
#     gone, no domain is left, every byte is back on the pool nodes;
#  7. a VM too big for the profile's admission fails at virsh start with
#     libvirt's error carrying the reason, and leaves nothing behind.
. /rig/tests/lib/common.sh
. /rig/tests/lib/libvirt.sh
pm_pools_up
n1=$(pool_attr p0 node) n2=$(pool_attr p1 node)
pools_used_kb() { echo $(($(node_used_kb $n1) + $(node_used_kb $n2))); }

# --- 1. the profile, as poolctl prints it for libvirt ---
lv_mount	# libvirt-qemu is a user of the root
poolctl profile create gold --local 25% --pool 75% --owner libvirt-qemu --libvirt > /tmp/gold.out
cat /tmp/gold.out
conf=$(grep '^memory_backing_dir = ' /tmp/gold.out) || fail "no qemu.conf line in poolctl's output"
sed -n '/<memoryBacking>/,/<\/memoryBacking>/p' /tmp/gold.out > /tmp/gold.mb
[ -s /tmp/gold.mb ] || fail "no <memoryBacking> in poolctl's output"
lv_up "$conf"
lv_clean
base=$(pools_used_kb)

# --- 2. start ---
lv_xml vm.xml web1 "@MEMORY_BACKING@</tmp/gold.mb" | lv_define web1
t0=$(uptime_s)
virsh start web1 || fail "virsh start web1: $(tail -n 20 $LV$LVLOG)"
con=$(lv_console web1)
since() { awk -v a="$1" -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }'; }
dom_total() { echo $(($(dom_attr $1 local_bytes) + $(dom_attr $1 pool_bytes))); }
# what QEMU has plugged of the virtio-mem device, bytes (libvirt's <current>)
vmem_current() { echo $(($(virsh dumpxml web1 | sed -n "s|.*<current unit='KiB'>\([0-9]*\)</current>.*|\1|p") * 1024)); }
wait_for 20 sh -c "ls -d $PMFS/gold/libvirt/qemu/*-web1" || fail "libvirt made no directory for web1 in the profile"
vmdir=$(ls -d $PMFS/gold/libvirt/qemu/*-web1)
ls -ln $vmdir
qpid=$(lv_qemu_pid web1)
# libvirt's defaults: QEMU as libvirt-qemu, in a mount namespace of its own
# with a private /dev, in a cgroup of its own
check_eq "QEMU's user" "64055" "$(awk '/^Uid:/ { print $2 }' /proc/$qpid/status)"
[ "$(readlink /proc/$qpid/ns/mnt)" != "$(readlink /proc/$(lv_daemon_pid)/ns/mnt)" ] ||
	fail "QEMU shares libvirtd's mount namespace: libvirt's namespaces are off"
grep -q ' /dev tmpfs ' /proc/$qpid/mounts || fail "QEMU's /dev is not libvirt's private tmpfs: $(grep ' /dev ' /proc/$qpid/mounts)"
grep -q 'machine/qemu-[0-9]*-web1.libvirt-qemu' /proc/$qpid/cgroup || fail "QEMU is not in libvirt's cgroup: $(cat /proc/$qpid/cgroup)"
info "QEMU $qpid: uid 64055, own mount namespace and /dev, cgroup $(cut -d: -f3 /proc/$qpid/cgroup)"
ram=$(dom_of_file $vmdir/ram-node0) vmem=$(dom_of_file $vmdir/virtiomem0)
[ -n "$ram" ] && [ -n "$vmem" ] || fail "no domain for libvirt's files: $(ls $DOMSYS)"
for d in $ram $vmem; do
	check_eq "$d: quotas of 256 MiB at 25/75" "$((64 * MiB)) $((192 * MiB))" \
		"$(dom_attr $d local_quota_bytes) $(dom_attr $d pool_quota_bytes)"
done

# the guest boots and touches 64 MiB: quotas held, the pools' meminfo
# grew by exactly the domains' pool bytes
wait_for 400 grep -q "HOG ALLOCATED 64" $con || fail "the guest did not boot and allocate: $(cat $con)"
info "guest: $(grep INNER $con | tr '\n' ' ')"
info "booted and touched 64 MiB $(since $t0) s after virsh start"
grep -q "INNER DRIVERS 2" $con || fail "the guest lacks the balloon or virtio-mem driver: $(cat $con)"
used=$(($(pools_used_kb) - base)) pb=$(($(dom_attr $ram pool_bytes) + $(dom_attr $vmem pool_bytes)))
peak=$(dom_total $ram)
info "web1's RAM: local $(($(dom_attr $ram local_bytes) / MiB)) MiB, pool $(($(dom_attr $ram pool_bytes) / MiB)) MiB; pool nodes +$((used / 1024)) MiB"
[ $(dom_attr $ram local_bytes) -le $((64 * MiB)) ] || fail "$ram: local bytes over the quota"
[ $(dom_attr $ram pool_bytes) -le $((192 * MiB)) ] || fail "$ram: pool bytes over the quota"
[ $peak -le $((64 * MiB)) ] || check_eq "$ram: local-first, the local quota full" $((64 * MiB)) $(dom_attr $ram local_bytes)
d=$((used - pb / 1024))
[ ${d#-} -le 8192 ] || fail "the pool nodes grew by $((used / 1024)) MiB, web1's domains hold $((pb / MiB)) MiB there"

# --- 3. free page reporting ---
wait_for 30 grep -q "HOG FREED 64" $con || fail "the guest did not free: $(cat $con)"
t1=$(uptime_s)
fpr_back() { [ $(dom_total $ram) -le $((peak - 24 * MiB)) ]; }
wait_for 30 fpr_back ||
	fail "free page reporting: web1's RAM holds $(($(dom_total $ram) / MiB)) MiB 30 s after the guest freed 64 MiB ($((peak / MiB)) MiB before)"
info "free page reporting: $(((peak - $(dom_total $ram)) / MiB)) MiB of the 64 MiB the guest freed back $(since $t1) s later ($(dom_attr $ram discards) chunks discarded)"

# --- 4. the balloon: virsh setmem 200M of 256 gives it 56 MiB. QEMU
# discards ballooned memory a 4 KiB page at a time (fallocate PUNCH_HOLE
# on the file: its page size for any file but hugetlbfs); poolmem zeroes
# each page and frees a chunk once it reads as zeroes. Free page reporting
# had already returned most of the guest's free memory in 2 MiB blocks;
# the guest zeroes what it hands its balloon (init_on_alloc), which faults
# such chunks in again, and the balloon's discards must return them: at
# least 8 chunks the balloon filled go back (12-21 of its 28 in the runs
# of 2026-12-03; 1 with that reclaim disabled), and the domain holds no
# more than the guest has left (200 MiB). What the domain holds after is
# measured: the guest faults chunks in again while its balloon inflates,
# and balloon pages that lie in chunks holding other data can't go back
# (a 2 MiB chunk, as a huge page of hugetlbfs): it went from 164-166 MiB
# to 158-192 in those runs ---
# free page reporting settled first: its discards would count below
steady() { a=$(dom_attr $ram discards); sleep 2; [ "$a" = "$(dom_attr $ram discards)" ]; }
wait_for 6 steady || fail "free page reporting still discarding after 30 tries"
before=$(dom_total $ram) d0=$(dom_attr $ram discards)
t1=$(uptime_s)
virsh setmem web1 200M >/dev/null || fail "virsh setmem web1 200M"
ballooned() { virsh dommemstat web1 | grep -q '^actual 204800$'; }
wait_for 60 ballooned || fail "the balloon did not reach 200 MiB: $(lv_vm_diag web1)"
# 8 chunks: 16 MiB of the 56
filled() { [ $(($(dom_attr $ram discards) - d0)) -ge 8 ]; }
wait_for 30 filled ||
	fail "virsh setmem web1 200M: $(($(dom_attr $ram discards) - d0)) chunks of web1's RAM freed by the balloon's discards 30 s on, web1's RAM domain $((before / MiB)) -> $(($(dom_total $ram) / MiB)) MiB"
after=$(dom_total $ram)
[ $after -le $((200 * MiB)) ] ||
	fail "virsh setmem web1 200M: web1's RAM domain holds $((after / MiB)) MiB ($((before / MiB)) before), more than the guest has left"
info "virsh setmem web1 200M: $(($(dom_attr $ram discards) - d0)) chunks the balloon filled freed, web1's RAM domain $((before / MiB)) -> $((after / MiB)) MiB $(since $t1) s later"
virsh domstate web1 | grep -q running || fail "web1 died with its balloon inflated: $(lv_vm_diag web1)"
virsh setmem web1 256M >/dev/null || fail "virsh setmem web1 256M"
deflated() { virsh dommemstat web1 | grep -q '^actual 262144$'; }
wait_for 60 deflated || fail "the balloon did not deflate to 256 MiB: $(lv_vm_diag web1)"

# --- 5. virtio-mem, both ways ---
t1=$(uptime_s)
virsh update-memory-device web1 --requested-size 48M >/dev/null || fail "virsh update-memory-device web1 --requested-size 48M"
vmem_grown() { [ $(dom_total $vmem) -ge $((24 * MiB)) ]; }
# (the nested guest is TCG inside TCG: on a loaded machine its boot took
# 386 s and touching 32 MiB more than 30 s)
wait_for 120 vmem_grown ||
	fail "virtio-mem grown to 48 MiB: its domain holds $(($(dom_total $vmem) / MiB)) MiB after 120 s: $(grep INNER $con | tail -n 2)"
info "virtio-mem grown to 48 MiB: its domain holds $(($(dom_total $vmem) / MiB)) MiB $(since $t1) s later (the guest onlined it and touched 32 MiB)"
wait_for 120 grep -q "HOG ALLOCATED 32" $con || fail "the guest did not touch its new memory: $(cat $con)"
grown=$(dom_total $vmem)
[ $grown -le $((48 * MiB)) ] || fail "virtio-mem: the domain holds $((grown / MiB)) MiB, more than the 48 MiB plugged"
t1=$(uptime_s)
virsh update-memory-device web1 --requested-size 0 >/dev/null || fail "virsh update-memory-device web1 --requested-size 0"
# QEMU has unplugged what the guest gave back, and the domain holds no
# more than what is still plugged (the guest may keep a block or two it
# can't empty at once: virtio_mem retries)
follows() { [ $(vmem_current) -le $((8 * MiB)) ] && [ $(dom_total $vmem) -le $(vmem_current) ]; }
wait_for 120 follows || fail "virtio-mem shrunk to 0: QEMU has $(($(vmem_current) / MiB)) MiB plugged, its domain holds $(($(dom_total $vmem) / MiB)) MiB after 120 s"
info "virtio-mem shrunk to 0: $(($(vmem_current) / MiB)) MiB still plugged, its domain holds $(($(dom_total $vmem) / MiB)) MiB $(since $t1) s later ($(dom_attr $vmem discards) chunks discarded)"

# --- 6. destroy and undefine: every byte back ---
virsh destroy web1 >/dev/null
virsh undefine web1 >/dev/null
wait_for 20 sh -c "[ ! -e $vmdir ]" || fail "libvirt left $vmdir: $(ls -l $vmdir)"
for d in $ram $vmem; do [ ! -e $DOMSYS/$d ] || fail "domain $d outlived its VM"; done
pools_back() { [ $(($(pools_used_kb) - base)) -le 2048 ]; }
wait_for 20 pools_back ||
	fail "the pool nodes still use $((($(pools_used_kb) - base) / 1024)) MiB after web1 is gone"
info "web1 destroyed and undefined: its directory, files and domains are gone, the pool nodes are back within $((($(pools_used_kb) - base))) KiB"

# --- 7. too big for admission: refused at virsh start, nothing left ---
dmesg -c >/dev/null
lv_xml big.xml huge "@MEMORY_BACKING@</tmp/gold.mb" "@MEMORY@=16777216" | lv_define huge
if virsh start huge > /tmp/huge.out 2>&1; then
	fail "a 16 GiB VM started on 4 GiB of pools: $(cat /tmp/huge.out)"
fi
cat /tmp/huge.out
grep -q "No space left on device" /tmp/huge.out || fail "libvirt's error does not carry the reason: $(cat /tmp/huge.out)"
dmesg | grep poolmem || true
dmesg | grep -q "poolmem: .*huge" || fail "the kernel logged no figures for the refused VM"
virsh list --all | grep -q "huge *shut off" || fail "huge is not shut off: $(virsh list --all)"
[ -z "$(ls $PMFS/gold/libvirt/qemu/)" ] || fail "a refused start left $(ls $PMFS/gold/libvirt/qemu/)"
[ -z "$(profile_domain gold)" ] || fail "a refused start left domain $(profile_domain gold)"
virsh undefine huge >/dev/null
[ $((($(pools_used_kb) - base))) -le 2048 ] || fail "a refused start took $((($(pools_used_kb) - base) / 1024)) MiB"
# libvirt keeps <dir>/libvirt/qemu (it made it at its start, for its
# user): a profile is removed once it is empty
lv_stop_daemon
rm -r $PMFS/gold/libvirt
poolctl profile remove gold >/dev/null
