# rig-topologies: nvdimm-big
# Benchmark (make bench): bringing DAX memory online.
# 1. poolctl pool online against daxctl reconfigure-device --mode=system-ram
#    --no-online + daxctl online-memory, on two identical 2 GiB devices, in
#    both assignments (A/B then B/A) so device differences cancel out:
#    wall time per GiB for each, and the ratio.
# 2. poolctl pool online --async --first 1G: time until the first GiB is
#    online and registered, for a 2 GiB and an 8 GiB device (the goal is
#    that it does not grow with the device), and the time until all is
#    online in the background.
# Times come from /proc/uptime (10 ms resolution) inside the guest.
. /rig/tests/lib/common.sh
pm_load
set -- $(make_devdax)
[ $# -eq 3 ] || fail "expected three dax devices, got: $*"
d2a=$1 d2b=$2 d8=$3
size_of() { cat /sys/bus/dax/devices/$1/size; }
[ "$(size_of $d2a)" = "$(size_of $d2b)" ] || fail "the 2 GiB devices differ in size"
gib() { awk -v b=$(size_of $1) 'BEGIN { printf "%.3f", b / 1073741824 }'; }
now() { cut -d' ' -f1 /proc/uptime; }
el() { awk -v a=$1 -v b=$2 'BEGIN { printf "%.3f", b - a }'; }

undo() { # pool-or-empty dax
	[ -n "$1" ] && poolctl pool remove $1 >/dev/null && return
	for b in $(node_blocks $(dax_node $2)); do echo offline > $MEMSYS/$b/state; done
	daxctl reconfigure-device --mode=devdax $2 >/dev/null 2>&1
}

tp=0 td=0
for round in 1 2; do
	if [ $round = 1 ]; then pd=$d2a dd=$d2b; else pd=$d2b dd=$d2a; fi
	t0=$(now); poolctl pool online $pd --name bp >/dev/null; t1=$(now)
	t2=$(now)
	daxctl reconfigure-device --mode=system-ram --no-online $dd >/dev/null 2>&1
	daxctl online-memory $dd >/dev/null 2>&1
	t3=$(now)
	check_eq "daxctl onlined every block of $dd" "$(node_blocks $(dax_node $dd) | wc -w)" "$(online_node_blocks $(dax_node $dd))"
	echo "bench: round $round: poolctl $pd $(el $t0 $t1) s, daxctl $dd $(el $t2 $t3) s for $(gib $pd) GiB each"
	tp=$(awk -v a=$tp -v b=$(el $t0 $t1) 'BEGIN { print a + b }')
	td=$(awk -v a=$td -v b=$(el $t2 $t3) 'BEGIN { print a + b }')
	undo bp $pd; undo "" $dd
done
awk -v p=$tp -v d=$td -v g=$(gib $d2a) 'BEGIN {
	printf "bench: online per GiB: poolctl %.3f s, daxctl %.3f s; poolctl/daxctl time %.2f\n", p / 2 / g, d / 2 / g, p / d }'

for dev in $d2a $d8; do
	t0=$(now); poolctl pool online $dev --name async --async --first 1G >/dev/null; t1=$(now)
	done_() { poolctl pool show async --json | grep -q '"state": "done"'; }
	wait_for 300 done_ || fail "$dev: background onlining did not finish"
	total=$(poolctl pool show async --json | sed -n 's/.*"seconds": \([0-9.]*\).*/\1/p')
	echo "bench: --async --first 1G on $(gib $dev) GiB $dev: first GiB usable after $(el $t0 $t1) s, all online after $total s"
	poolctl pool remove async >/dev/null
done
