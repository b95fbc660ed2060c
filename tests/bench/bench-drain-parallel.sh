# rig-topologies: nvdimm-numa
# rig-env: RIG_SMP=2
# Benchmark (make bench; not part of make check): a drain on two CPUs.
# Side by side in each round, BENCH_MIB between pool p0's node and p1's:
# the kernel's migratepages of as much anonymous THP memory (one thread:
# that is what the kernel does), poolmem's drain with drain_workers 1 and
# 2, and the limit, a copy of as many bytes between the nodes 2 MiB at a
# time (the faster of memcpy() and rep movsb) by one and by two threads.
# The guest has two CPUs; its pool nodes have none, so a drain's workers
# are bounded by node 0's two (pm_drain_cpus()). bench-drain has the same
# on one CPU. Under TCG only the ratios mean anything.
# Under TCG the user-space copy is slower than the kernel's own (the
# kernel's 2 MiB copy_mc_to_kernel() runs as one string instruction), so
# it is no limit. The limit is the kernel's own copy of as many bytes
# between the same nodes, with the drain's primitive and nothing else, by
# one and by two threads (debugfs poolmem/copy_limit, kmod/move.c), in
# each round beside the drains: a drain's speed against it is what its
# bookkeeping (freeze, unmap, chunk map, accounting) costs.
. /rig/tests/lib/common.sh
pm_pools_up
MIB=${BENCH_MIB:-1024}
ROUNDS=${BENCH_ROUNDS:-5}
n0=$(pool_attr p0 node)
n1=$(pool_attr p1 node)
W=/sys/module/poolmem/parameters/drain_workers
LAT=/sys/kernel/debug/poolmem/move_latency
w0=$(cat $W)
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
spread() { sort -n | awk '{ v[NR] = $1 } END { printf "%.2f-%.2f", v[1], v[NR] }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f\n", a / b }'; }
copy_time() { echo "$1" | sed -n 's/.*: \([0-9.]*\) s (.*/\1/p'; }
CL=/sys/kernel/debug/poolmem/copy_limit
# copy_limit THREADS: the kernel's copy of $MIB MiB from node n0 to n1, in s
copy_limit() {
	echo "$n0 $n1 $MIB $1" > $CL || fail "copy_limit $n0 $n1 $MIB $1 refused"
	awk -v t="$1" '$4 == t { printf "%.6f", $5 / 1e9 }' $CL
}

[ "$(nproc)" = 2 ] || fail "the guest has $(nproc) CPUs, not 2"
# warm-up: both pool nodes touched once (pm_warm_pools, tests/guest/lib/common.sh)
pm_warm_pools p0 p1

# poolmem: a held domain on p0, drained to p1 by $1 workers; prints the
# time and the sum of its 2 MiB copies (kernel clock), in s
drain_once() {
	echo $1 > $W
	pmtest domain-create bm ${MIB}M 0 ${MIB}M pools=p0 >/dev/null
	rm -f /tmp/hold.out
	pmtest hold bm 600 > /tmp/hold.out &
	hp=$!
	wait_for 120 grep -q touched /tmp/hold.out || fail "hold: $(cat /tmp/hold.out)"
	pmtest set bm pools=p0,p1 >/dev/null
	echo 0 > $LAT
	out=$(pmtest elapsed pmtest drain p0) || fail "drain_workers $1: $out"
	[ "$(dom_pool_chunks bm p1)" = $((MIB / 2)) ] ||
		fail "drain_workers $1: $(dom_pool_chunks bm p1) chunks on p1; drain: $out"
	pmtest drain p0 cancel=1 >/dev/null
	kill $hp; wait $hp 2>/dev/null || true
	pmtest domain-destroy bm >/dev/null
	cs=$(awk '$1 == "copy_unit_ns" { for (i = 2; i < NF; i++) if ($i == "sum") printf "%.6f", $(i + 1) / 1e9 }' $LAT)
	[ -n "$cs" ] || fail "no copy sampled: $(cat $LAT)"
	echo "$(echo "$out" | sed -n 's/^elapsed: //p') $cs"
}

echo "== drain on 2 CPUs: $MIB MiB from node $n0 to node $n1, $ROUNDS rounds"
for f in kt d1 d2 c1 c2 k1 k2 r2c r2k r21 rk1 rk2; do : > /tmp/$f.s; done
for r in $(seq $ROUNDS); do
	rm -f /tmp/anon.out
	numactl --membind=$n0 pmtest anon-hold $MIB 600 > /tmp/anon.out &
	ap=$!
	wait_for 120 grep -q ready /tmp/anon.out || fail "anon-hold: $(cat /tmp/anon.out)"
	thp=$(awk '/AnonHugePages/ { s += $2 } END { print s / 1024 }' /proc/$ap/smaps)
	kt=$(pmtest elapsed migratepages $ap $n0 $n1 | sed -n 's/^elapsed: //p')
	left=$(tr ' ' '\n' < /proc/$ap/numa_maps | awk -F= -v n=N$n0 '$1 == n { s += $2 } END { print s + 0 }')
	kill $ap; wait $ap 2>/dev/null || true
	# the two drains take turns at going first
	if [ $((r % 2)) = 1 ]; then o1=$(drain_once 1); o2=$(drain_once 2)
	else o2=$(drain_once 2); o1=$(drain_once 1); fi
	d1=${o1% *} d2=${o2% *}
	k1=$(copy_limit 1); k2=$(copy_limit 2)
	[ -n "$k1" ] && [ -n "$k2" ] || fail "copy_limit: no figure: $(cat $CL)"
	m1=$(pmtest memcpy-nodes $MIB $n0 $n1 1 1); c1=$(copy_time "$m1")
	m2=$(pmtest memcpy-nodes $MIB $n0 $n1 1 2); c2=$(copy_time "$m2")
	[ -n "$c1" ] && [ -n "$c2" ] || fail "memcpy-nodes: no figure: $m1 / $m2"
	echo "bench: round $r: migratepages $kt s ($thp MiB THP, $left pages left on node $n0); drain 1 worker $d1 s, 2 workers $d2 s; the kernel's copy 1 thread $k1 s, 2 threads $k2 s; user-space copy 1 thread $c1 s, 2 threads $c2 s"
	if [ "${thp%.*}" -lt $MIB ] || [ "$left" -gt 0 ]; then
		echo "bench: round $r left out: $thp MiB THP, $left pages not moved"
		continue
	fi
	echo $kt >> /tmp/kt.s; echo $d1 >> /tmp/d1.s; echo $d2 >> /tmp/d2.s
	echo $c1 >> /tmp/c1.s; echo $c2 >> /tmp/c2.s; echo $k1 >> /tmp/k1.s; echo $k2 >> /tmp/k2.s
	ratio $k1 $d1 >> /tmp/rk1.s; ratio $k2 $d2 >> /tmp/rk2.s
	ratio $c2 $d2 >> /tmp/r2c.s; ratio $kt $d2 >> /tmp/r2k.s; ratio $d1 $d2 >> /tmp/r21.s
done
echo $w0 > $W
[ -s /tmp/kt.s ] || fail "no round with all the anonymous memory in THPs"
kt=$(median < /tmp/kt.s); d1=$(median < /tmp/d1.s); d2=$(median < /tmp/d2.s)
c1=$(median < /tmp/c1.s); c2=$(median < /tmp/c2.s); k1=$(median < /tmp/k1.s); k2=$(median < /tmp/k2.s)
mibs() { awk -v m=$MIB -v t=$1 'BEGIN { printf "%.0f", m / t }'; }
echo "bench: medians of $(wc -l < /tmp/kt.s) rounds, $MIB MiB: migratepages $kt s ($(mibs $kt) MiB/s); drain 1 worker $d1 s ($(mibs $d1) MiB/s), 2 workers $d2 s ($(mibs $d2) MiB/s); user-space copy 1 thread $c1 s ($(mibs $c1) MiB/s), 2 threads $c2 s ($(mibs $c2) MiB/s)"
echo "bench: the kernel's copy of $MIB MiB (copy_limit): 1 thread $k1 s ($(mibs $k1) MiB/s), 2 threads $k2 s ($(mibs $k2) MiB/s)"
echo "bench: drain at the kernel's copy limit: 1 worker $(ratio $k1 $d1)x (rounds $(spread < /tmp/rk1.s)), 2 workers $(ratio $k2 $d2)x (goal 0.8x; rounds $(spread < /tmp/rk2.s))"
echo "bench: drain with 2 workers at $(ratio $c2 $d2)x the 2-thread user-space copy's bandwidth (rounds $(spread < /tmp/r2c.s); no limit under TCG), $(ratio $c1 $d2)x the 1-thread copy's"
echo "bench: drain with 2 workers at $(ratio $kt $d2)x migratepages (goal 2x; rounds $(spread < /tmp/r2k.s)); 2 workers / 1 worker: $(ratio $d1 $d2)x faster (rounds $(spread < /tmp/r21.s)); copy 2 threads / 1: $(ratio $c1 $c2)x"
bench_goal drain-vs-copy-limit '>=' 0.8 "$(ratio $k2 $d2)" $(min_max < /tmp/rk2.s) x \
	"drain with 2 workers on 2 CPUs, speed / the kernel's own copy of the same bytes by 2 threads"
bench_goal drain-vs-migratepages '>=' 2 "$(ratio $kt $d2)" $(min_max < /tmp/r2k.s) x \
	"drain with 2 workers on 2 CPUs, speed / migratepages'"
