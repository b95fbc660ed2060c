# rig-topologies: nvdimm-big
# rig-append: memory_hotplug.memmap_on_memory=1
# Benchmark (make bench): what onlining 8 GiB of pool memory costs in local
# DRAM, and how fast it goes, by where the memmap lives.
#   poolctl pool online --memmap local   (struct pages in node 0's DRAM)
#   poolctl pool online --memmap device  (each block holds its own)
#   daxctl reconfigure-device --mode=system-ram --no-online + daxctl
#     online-memory, with the device's memmap_on_memory as it came (daxctl
#     76 has no option for it; an NVDIMM's dax device has it off: DRAM)
# on the same 8 GiB device, in the order local, device, daxctl, daxctl,
# device, local (drifts cancel out). DRAM: node 0's free memory before and
# after (mem_settle, tests/guest/lib/common.sh). Time:
# /proc/uptime (10 ms resolution) around the command.
. /rig/tests/lib/common.sh
pm_load
set -- $(make_devdax)
[ $# -eq 3 ] || fail "expected three dax devices, got: $*"
d8=$3
[ -e /sys/bus/dax/devices/$d8/memmap_on_memory ] || skip "dax devices have no memmap_on_memory (Linux 6.8+)"
orig=$(cat /sys/bus/dax/devices/$d8/memmap_on_memory)
gib=$(awk -v b=$(cat /sys/bus/dax/devices/$d8/size) 'BEGIN { printf "%.3f", b / 1073741824 }')
now() { cut -d' ' -f1 /proc/uptime; }

s_local=0 s_device=0 s_daxctl=0 k_local=0 k_device=0 k_daxctl=0
for mode in local device daxctl daxctl device local; do
	mem_settle
	f0=$(node_memfree_kb 0)
	t0=$(now)
	if [ $mode = daxctl ]; then
		# what the device came with (poolctl's last run left its own)
		echo $orig > /sys/bus/dax/devices/$d8/memmap_on_memory
		daxctl reconfigure-device --mode=system-ram --no-online $d8 >/dev/null 2>&1 || fail "daxctl reconfigure $d8"
		daxctl online-memory $d8 >/dev/null 2>&1 || fail "daxctl online-memory $d8"
	else
		poolctl pool online $d8 --name bm --memmap $mode >/dev/null || fail "poolctl pool online $d8 --memmap $mode"
	fi
	t1=$(now)
	mem_settle
	used=$((f0 - $(node_memfree_kb 0)))
	echo "bench: $mode: $gib GiB online in $(awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.2f", b - a }') s, node 0 DRAM $((used / 1024)) MiB ($used kB)"
	eval "s_$mode=\$(awk -v s=\$s_$mode -v a=$t0 -v b=$t1 'BEGIN { print s + b - a }')"
	eval "k_$mode=\$((k_$mode + used))"
	if [ $mode = daxctl ]; then
		daxctl offline-memory $d8 >/dev/null 2>&1
		daxctl reconfigure-device --mode=devdax $d8 >/dev/null 2>&1 || fail "daxctl back to devdax"
	else
		poolctl pool remove bm >/dev/null || fail "pool remove bm"
	fi
done
for mode in local device daxctl; do
	eval "sec=\$s_$mode k=\$k_$mode"
	awk -v m=$mode -v s=$sec -v k=$k -v g=$gib 'BEGIN {
		printf "bench: memmap %s: %.1f MiB of node 0 DRAM for %.0f GiB (mean of 2), %.3f s/GiB\n", m, k / 2 / 1024, g, s / 2 / g }'
done
awk -v l=$s_local -v d=$s_device -v x=$s_daxctl -v kl=$k_local -v kd=$k_device 'BEGIN {
	printf "bench: memmap device/local: DRAM %.4f, time %.2f; poolctl --memmap device/daxctl time %.2f\n", kd / kl, d / l, d / x }'
