# rig-topologies: nvdimm-numa
# rig-env: RIG_SMP=1
# Benchmark (make bench; not part of make check): drain throughput.
# poolmem draining BENCH_MIB of a live domain from pool p0's node to p1's,
# against the kernel's own migratepages moving as much anonymous THP
# memory between the same two nodes, and against the limit: a memcpy of
# as many bytes from one node to the other, 2 MiB at a time (the faster
# of memcpy() and rep movsb). Rounds alternate the kernel and poolmem with
# drain_batch 1, the default and 16 (chunks per unmap and TLB flush). The
# guest has one CPU (RIG_SMP=1): with two, a round that sends a TLB-flush
# IPI to a vCPU the loaded host has preempted runs several times slower,
# on both sides, and the comparison drowns in that noise.
# Under TCG only the ratios mean anything.
. /rig/tests/lib/common.sh
pm_pools_up
MIB=${BENCH_MIB:-1024}
ROUNDS=${BENCH_ROUNDS:-7}
n0=$(pool_attr p0 node)
n1=$(pool_attr p1 node)
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
least() { sort -n | head -n 1; }

# warm-up: both pool nodes touched once (pm_warm_pools, tests/guest/lib/common.sh)
pm_warm_pools p0 p1

echo "== drain throughput: $MIB MiB from node $n0 to node $n1, $ROUNDS rounds"
: > /tmp/kernel.s; : > /tmp/poolmem.s; : > /tmp/ratio.s; : > /tmp/b1.s; : > /tmp/b16.s; : > /tmp/memcpy.s; : > /tmp/mratio.s
BATCH=/sys/module/poolmem/parameters/drain_batch
batch0=$(cat $BATCH)
for r in $(seq $ROUNDS); do
	# the kernel: anonymous THP, migratepages
	rm -f /tmp/anon.out	# (else the wait below may see the last round's)
	numactl --membind=$n0 pmtest anon-hold $MIB 600 > /tmp/anon.out &
	ap=$!
	wait_for 120 grep -q ready /tmp/anon.out || fail "anon-hold: $(cat /tmp/anon.out)"
	thp=$(awk '/AnonHugePages/ { s += $2 } END { print s / 1024 }' /proc/$ap/smaps)
	kt=$(pmtest elapsed migratepages $ap $n0 $n1 | sed -n 's/^elapsed: //p')
	left=$(tr ' ' '\n' < /proc/$ap/numa_maps | awk -F= -v n=N$n0 '$1 == n { s += $2 } END { print s + 0 }')
	kill $ap; wait $ap 2>/dev/null || true
	# poolmem: a held domain on p0, drained to p1 (drain_batch 1, default, 16)
	for b in 1 $batch0 16; do
		echo $b > $BATCH
		pmtest domain-create bm ${MIB}M 0 ${MIB}M pools=p0 >/dev/null
		rm -f /tmp/hold.out
		pmtest hold bm 600 > /tmp/hold.out &
		hp=$!
		wait_for 120 grep -q touched /tmp/hold.out || fail "hold: $(cat /tmp/hold.out)"
		pmtest set bm pools=p0,p1 >/dev/null
		out=$(pmtest elapsed pmtest drain p0) || fail "drain_batch $b: $out"
		t=$(echo "$out" | sed -n 's/^elapsed: //p')
		[ "$(dom_pool_chunks bm p1)" = $((MIB / 2)) ] || fail "drain_batch $b: $(dom_pool_chunks bm p1) chunks on p1; $(pmtest domain-info bm); $(cat $DOMSYS/bm/pool_chunks | xargs); drain: $out; hold: $(cat /tmp/hold.out)"
		pmtest drain p0 cancel=1 >/dev/null
		kill $hp; wait $hp 2>/dev/null || true
		pmtest domain-destroy bm >/dev/null
		case $b in 1) t1=$t ;; 16) t16=$t ;; *) pt=$t ;; esac
	done
	echo $batch0 > $BATCH
	# the limit: memcpy of the same bytes between the two nodes, 2 MiB at a time
	mc=$(pmtest memcpy-nodes $MIB $n0 $n1 1)
	mt=$(echo "$mc" | sed -n 's/.*: \([0-9.]*\) s (.*/\1/p')
	[ -n "$mt" ] || fail "memcpy-nodes: no figure: $mc"
	echo "bench: round $r: migratepages $kt s ($thp MiB THP, $left pages left on node $n0), poolmem drain $pt s (drain_batch 1: $t1 s, 16: $t16 s), copy limit $mt s (${mc#*; })"
	# a round whose anonymous memory was not all THP, or did not all move,
	# measured something else: left out
	if [ "${thp%.*}" -lt $MIB ] || [ "$left" -gt 0 ]; then
		echo "bench: round $r left out: $thp MiB THP, $left pages not moved"
		continue
	fi
	echo $kt >> /tmp/kernel.s; echo $pt >> /tmp/poolmem.s; echo $t1 >> /tmp/b1.s; echo $t16 >> /tmp/b16.s
	echo $mt >> /tmp/memcpy.s
	awk -v a=$mt -v b=$pt 'BEGIN { print a / b }' >> /tmp/mratio.s
	awk -v a=$kt -v b=$pt 'BEGIN { print a / b }' >> /tmp/ratio.s
done
[ -s /tmp/kernel.s ] || fail "no round with all the anonymous memory in THPs"
kt=$(median < /tmp/kernel.s); pt=$(median < /tmp/poolmem.s)
echo "bench: drain $MIB MiB: poolmem $pt s ($(awk -v m=$MIB -v t=$pt 'BEGIN { printf "%.0f", m / t }') MiB/s), migratepages (anonymous THP) $kt s ($(awk -v m=$MIB -v t=$kt 'BEGIN { printf "%.0f", m / t }') MiB/s): ratio of medians $(awk -v a=$kt -v b=$pt 'BEGIN { printf "%.2f", a / b }')x, median of the rounds' ratios $(median < /tmp/ratio.s | awk '{ printf "%.2f", $1 }')x ($ROUNDS rounds, drain_batch $batch0)"
echo "bench: drain_batch 1: $(median < /tmp/b1.s) s, 16: $(median < /tmp/b16.s) s (medians)"
bench_goal drain-vs-migratepages-1cpu '>=' 1 "$(awk -v a=$kt -v b=$pt 'BEGIN { printf "%.2f", a / b }')" $(min_max < /tmp/ratio.s) x \
	"drain speed / migratepages' (anonymous THP), one guest CPU, ratio of medians"
mt=$(median < /tmp/memcpy.s)
echo "bench: drain against the copy limit: copy of $MIB MiB node $n0 -> $n1 $mt s ($(awk -v m=$MIB -v t=$mt 'BEGIN { printf "%.0f", m / t }') MiB/s), poolmem drain $pt s: drain at $(awk -v a=$mt -v b=$pt 'BEGIN { printf "%.2f", a / b }')x the copy's bandwidth (ratio of medians; median of the rounds' ratios $(median < /tmp/mratio.s | awk '{ printf "%.2f", $1 }')x; goal 0.8x), migratepages at $(awk -v a=$mt -v b=$kt 'BEGIN { printf "%.2f", a / b }')x, 1 CPU"
# The rig shares a loaded 2-core host: a round that waits on a preempted
# vCPU (TLB-flush IPIs) runs several times slower, for both sides. The
# fastest round of each is the least disturbed one.
echo "bench: fastest rounds: migratepages $(least < /tmp/kernel.s) s, poolmem drain_batch 1 $(least < /tmp/b1.s) s, $batch0 $(least < /tmp/poolmem.s) s, 16 $(least < /tmp/b16.s) s: ratios $(awk -v k=$(least < /tmp/kernel.s) -v a=$(least < /tmp/b1.s) -v b=$(least < /tmp/poolmem.s) -v c=$(least < /tmp/b16.s) 'BEGIN { printf "%.2fx, %.2fx, %.2fx", k / a, k / b, k / c }')"

