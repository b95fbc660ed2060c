# rig-topologies: nvdimm-numa
# Benchmark (make bench; not part of make check): chunk migration.
#  1. Drain throughput: poolmem draining BENCH_MIB of a live domain from
#     pool p0's node to p1's, against the kernel's own migratepages moving
#     as much anonymous THP memory between the same two nodes; rounds
#     alternate the two, the ratio is of the medians (>= 1.0: poolmem at
#     least as fast).
#  2. Stall: a writer touches one word per chunk round and round while
#     the chunks are drained back and forth; each write that met a moving
#     chunk is a stall. Its p99 against one 2 MiB memcpy (goal: <= 2x).
#  Both for drain_batch 1, the default and 16: chunks unmapped at once (one
#  TLB flush) against the wait of a vCPU on the last chunk of a run.
#  3. Tiering overhead: the tiering worker's CPU time at the default scan
#     rate (64 MiB/s) on a 256 MiB VM whose moves are done, as a share of
#     one CPU (goal: < 1%).
# Under TCG only the ratios mean anything.
. /rig/tests/lib.sh
pm_pools_up
MIB=${BENCH_MIB:-1024}
ROUNDS=${BENCH_ROUNDS:-7}
n0=$(pool_attr p0 node)
n1=$(pool_attr p1 node)
median() { sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
least() { sort -n | head -n 1; }
secs_since() { awk -v a=$1 -v b=$(uptime_s) 'BEGIN { printf "%.3f", b - a }'; }

# Warm-up: the pool nodes are host memory (memfd) that the host maps on
# first touch; touch all of both once, so that neither side pays for it.
for p in p0 p1; do
	w=$(( $(pool_attr $p free_bytes) / MiB / 2 * 2 - 64 ))
	pmtest domain-create warm ${w}M 0 ${w}M pools=$p >/dev/null
	pmtest touch warm 0 ${w}M >/dev/null
	pmtest domain-destroy warm >/dev/null
done

echo "== drain throughput: $MIB MiB from node $n0 to node $n1, $ROUNDS rounds"
: > /tmp/kernel.s; : > /tmp/poolmem.s; : > /tmp/ratio.s; : > /tmp/b1.s; : > /tmp/b16.s
BATCH=/sys/module/poolmem/parameters/drain_batch
batch0=$(cat $BATCH)
for r in $(seq $ROUNDS); do
	# the kernel: anonymous THP, migratepages
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
		pmtest hold bm 600 > /tmp/hold.out &
		hp=$!
		wait_for 120 grep -q touched /tmp/hold.out || fail "hold: $(cat /tmp/hold.out)"
		pmtest set bm pools=p0,p1 >/dev/null
		t=$(pmtest elapsed pmtest drain p0 | sed -n 's/^elapsed: //p')
		pmtest drain p0 cancel=1 >/dev/null
		kill $hp; wait $hp 2>/dev/null || true
		pmtest domain-destroy bm >/dev/null
		case $b in 1) t1=$t ;; 16) t16=$t ;; *) pt=$t ;; esac
	done
	echo $batch0 > $BATCH
	echo "bench: round $r: migratepages $kt s ($thp MiB THP, $left pages left on node $n0), poolmem drain $pt s (drain_batch 1: $t1 s, 16: $t16 s)"
	echo $kt >> /tmp/kernel.s; echo $pt >> /tmp/poolmem.s; echo $t1 >> /tmp/b1.s; echo $t16 >> /tmp/b16.s
	awk -v a=$kt -v b=$pt 'BEGIN { print a / b }' >> /tmp/ratio.s
done
kt=$(median < /tmp/kernel.s); pt=$(median < /tmp/poolmem.s)
echo "bench: drain $MIB MiB: poolmem $pt s ($(awk -v m=$MIB -v t=$pt 'BEGIN { printf "%.0f", m / t }') MiB/s), migratepages (anonymous THP) $kt s ($(awk -v m=$MIB -v t=$kt 'BEGIN { printf "%.0f", m / t }') MiB/s): ratio of medians $(awk -v a=$kt -v b=$pt 'BEGIN { printf "%.2f", a / b }')x, median of the rounds' ratios $(median < /tmp/ratio.s | awk '{ printf "%.2f", $1 }')x ($ROUNDS rounds, drain_batch $batch0)"
echo "bench: drain_batch 1: $(median < /tmp/b1.s) s, 16: $(median < /tmp/b16.s) s (medians)"
# The rig shares a loaded 2-core host: a round that waits on a preempted
# vCPU (TLB-flush IPIs) runs several times slower, for both sides. The
# fastest round of each is the least disturbed one.
echo "bench: fastest rounds: migratepages $(least < /tmp/kernel.s) s, poolmem drain_batch 1 $(least < /tmp/b1.s) s, $batch0 $(least < /tmp/poolmem.s) s, 16 $(least < /tmp/b16.s) s: ratios $(awk -v k=$(least < /tmp/kernel.s) -v a=$(least < /tmp/b1.s) -v b=$(least < /tmp/poolmem.s) -v c=$(least < /tmp/b16.s) 'BEGIN { printf "%.2fx, %.2fx, %.2fx", k / a, k / b, k / c }')"

for b in 1 $batch0 16; do
	echo $b > $BATCH
	echo "== stall of a writer on moving chunks, drain_batch $b"
	pmtest domain-create st 64M 0 64M pools=p0,p1 >/dev/null
	pmtest touch st 0 64M >/dev/null
	pmtest stall st 20 > /tmp/stall.out &
	sp=$!
	sleep 1
	moved=0
	while kill -0 $sp 2>/dev/null; do
		for p in p0 p1; do
			pmtest drain $p >/dev/null 2>&1 && moved=$((moved + 1))
			pmtest drain $p cancel=1 >/dev/null
		done
	done
	wait $sp
	echo "bench: $(cat /tmp/stall.out) ($moved drains of 64 MiB)"
	awk -v b=$b '{ for (i = 1; i <= NF; i++) if ($i == "p99") p = $(i + 1); else if ($i == "p90") q = $(i + 1); else if ($i == "copy") c = $(i + 1) }
		END { printf "bench: stall / one 2 MiB copy, drain_batch %d: p90 %.2f, p99 %.2f\n", b, q / c, p / c }' /tmp/stall.out
	pmtest domain-destroy st >/dev/null
done
echo $batch0 > $BATCH

echo "== tiering worker CPU at the default scan rate"
pmtest domain-create tt 256M 128M 256M pools=p0 >/dev/null
pmtest touch tt 0 256M >/dev/null
pmtest hammer tt 128M 64M 60 >/dev/null &
hp=$!
poolctl vm set tt --tiering on >/dev/null
sleep 10	# the hot set moves up, the cold one down
s0=$(dom_attr tt tiering_scan_ns); m0=$(dom_attr tt moves); t0=$(uptime_s)
sleep 20
s1=$(dom_attr tt tiering_scan_ns); m1=$(dom_attr tt moves); dt=$(secs_since $t0)
echo "bench: tiering at $(dom_attr tt tiering | cut -d' ' -f2) B/s: $(( (s1 - s0) / 1000000 )) ms of CPU in $dt s = $(awk -v n=$((s1 - s0)) -v t=$dt 'BEGIN { printf "%.3f", n / 1e9 / t * 100 }')% of a CPU ($((m1 - m0)) moves meanwhile; $(dom_attr tt samples) samples in all)"
kill $hp; wait $hp 2>/dev/null || true
pmtest domain-destroy tt >/dev/null
