# rig-topologies: nvdimm-numa
# rig-boot: own
# rig-timeout: 720
# rig-debug: skip a nested QEMU guest under KASAN takes many minutes; QEMU's fallocate discards run on the debug kernel in qemu-real
# THEORY OF OPERATION: memory a guest gives back returns to the pools. A
# Linux guest (Debian's kernel, tests/guest/inner/: busybox, the virtio
# balloon driver, hog) runs under Debian's QEMU inside the rig, its RAM a
# domain with the argument poolctl printed, and a virtio-balloon device
# with free-page-reporting=on. hog allocates and touches 256 MiB, then
# frees it; the guest kernel reports free 2 MiB blocks to QEMU, which
# discards them with fallocate(PUNCH_HOLE) on the domain file. Measured
# from outside the inner guest, by the per-node meminfo of the nodes the
# domain's memory came from: at least 200 MiB back within 30 s.
. /rig/tests/lib/common.sh
pm_pools_up
n1=$(pool_attr p0 node) n2=$(pool_attr p1 node)
used_mb() { echo $((($(node_used_kb 0) + $(node_used_kb $n1) + $(node_used_kb $n2)) / 1024)); }
dom_mb() { echo $((($(dom_attr vmb local_bytes) + $(dom_attr vmb pool_bytes)) / MiB)); }

arg=$(poolctl vm create vmb --size 512M --local 128M --pool 384M --tier-policy interleave | sed -n 2p)
info "poolctl printed: $arg"
rm -f /tmp/inner.log
# shellcheck disable=SC2086
qemu-system-x86_64 -accel tcg,tb-size=128 -nodefaults -display none -L /rig/qemu-data -smp 1 \
	$arg -kernel /rig/inner/kernel -initrd /rig/inner/initrd.cpio \
	-append "console=ttyS0 quiet panic=-1 cryptomgr.notests=1 init_on_alloc=0 mitigations=off init_on_free=0 page_reporting.page_reporting_order=9" \
	-serial file:/tmp/inner.log -device virtio-balloon-pci,free-page-reporting=on \
	-no-reboot > /tmp/qemu-b.log 2>&1 &
qpid=$!
t0=$(uptime_s)
# the inner guest printed $1, or QEMU is gone (then wait_for ends at once)
inner() { grep -q "$1" /tmp/inner.log 2>/dev/null || ! kill -0 $qpid 2>/dev/null; }
# nested TCG: the inner kernel boots in ~80 s and its 256 MiB of faults take
# another ~120 s on a 2-core host, more when it is busy
wait_for 400 inner "HOG ALLOCATED"
grep -q "HOG ALLOCATED" /tmp/inner.log || fail "inner guest did not allocate: $(tail -n 20 /tmp/inner.log) $(cat /tmp/qemu-b.log)"
held=$(dom_mb) before=$(used_mb)
info "inner guest: $(grep INNER /tmp/inner.log | tr '\n' ' '); 256 MiB allocated: the domain holds $held MiB, nodes 0, $n1, $n2 use $before MiB"
grep -q "no balloon device\|failed" /tmp/inner.log && fail "inner guest: $(cat /tmp/inner.log)"
wait_for 30 inner "HOG FREED"
grep -q "HOG FREED" /tmp/inner.log || fail "inner guest did not free: $(tail -n 5 /tmp/inner.log)"
t1=$(uptime_s)
info "256 MiB freed in the guest at $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.0f", b - a }') s after QEMU started"
back=0
while :; do
	back=$((before - $(used_mb)))
	[ $back -ge 200 ] && break
	[ "$(awk -v a=$t1 -v b="$(uptime_s)" 'BEGIN { print (b - a > 30) }')" = 1 ] && break
	sleep 1
done
secs=$(awk -v a=$t1 -v b="$(uptime_s)" 'BEGIN { printf "%.1f", b - a }')
info "$back MiB back on the host nodes after $secs s; the domain holds $(dom_mb) MiB, $(dom_attr vmb discards) chunks discarded"
[ $back -ge 200 ] || fail "only $back MiB of the 256 MiB the guest freed came back within 30 s"
kill -9 $qpid
wait $qpid || true
poolctl vm destroy vmb >/dev/null
