# rig-topologies: nvdimm-numa
# rig-timeout: 1500
# Benchmark (make bench; issue 17): the zNUMA boot baseline. A Linux guest
# (Debian's kernel, tests/guest/inner/ with inner=idle: boot, then nothing)
# runs under Debian's QEMU inside the rig with the arguments "poolctl vm
# create --znuma" prints, a 256 MiB local window and a 256 MiB pool window.
# Once it has booted (and 10 s more), the domain's pool bytes are what
# booting alone touched of the CPU-less node (poolmem allocates at first
# touch, in 2 MiB chunks). Pond reports about 6% of a 256 MiB node. Three
# boots with the guest's default KASLR (the kernel image lands anywhere in
# guest RAM, the pool window too) and one with nokaslr.
. /rig/tests/lib/common.sh
pm_pools_up
MiB=1048576
boot() { # APPEND: prints "POOL_MIB LOCAL_MIB"
	local out arg qpid
	out=$(poolctl vm create zb --size 512M --local 256M --pool 256M --znuma --pools p0) || fail "vm create: $out"
	arg=$(echo "$out" | sed -n 2p)
	rm -f /tmp/inner.log
	# shellcheck disable=SC2086
	qemu-system-x86_64 -accel tcg,tb-size=128 -nodefaults -display none -L /rig/qemu-data \
		$arg -kernel /rig/inner/kernel -initrd /rig/inner/initrd.cpio \
		-append "console=ttyS0 quiet panic=-1 cryptomgr.notests=1 init_on_alloc=0 mitigations=off inner=idle $1" \
		-serial file:/tmp/inner.log -no-reboot > /tmp/qemu-zb.log 2>&1 &
	qpid=$!
	wait_for 400 sh -c "grep -q 'INNER BOOTED' /tmp/inner.log || ! kill -0 $qpid" || true
	grep -q "INNER BOOTED" /tmp/inner.log || fail "inner guest did not boot: $(tail -n 5 /tmp/inner.log) $(cat /tmp/qemu-zb.log)"
	sleep 10
	echo "$(($(dom_attr zb pool_bytes) / MiB)) $(($(dom_attr zb local_bytes) / MiB))"
	kill -9 $qpid
	wait $qpid 2>/dev/null || true
	poolctl vm destroy zb >/dev/null
}
all=
for append in "" "" "" nokaslr; do
	set -- $(boot "$append")
	echo "bench: znuma boot baseline (${append:-kaslr}): $1 MiB of the 256 MiB pool window touched ($(awk -v p=$1 'BEGIN { printf "%.1f", p * 100 / 256 }')%), $2 MiB of the 256 MiB local window"
	[ -n "$append" ] || all="$all $1"
done
echo "bench: znuma boot baseline with KASLR, MiB of 256 touched in the pool window:$all"
