# rig-topologies: nvdimm-numa
# Benchmark (make bench): the zero reserve (issue 16), side by side in one
# guest run, 5 rounds each, medians:
# 1. first touch (a byte per page, one thread) of a fresh 512 MiB pool
#    domain whose chunks all come from a full reserve, from no reserve, and
#    of anonymous THP memory bound to the same node (goal: from the reserve
#    at least 2x THP's speed, i.e. time ratio <= 0.5);
# 2. the same with MADV_POPULATE_WRITE (QEMU prealloc), by 1 and 2 threads
#    (goal: <= 0.5x THP's time);
# 3. the zeroing thread's CPU time per GiB zeroed into the reserve, against
#    memset of as much in userspace (2 MiB at a time).
. /rig/tests/lib/common.sh
pm_pools_up
pm_warm_pool p0
node=$(pool_attr p0 node)
MIB=512
reserve() { pool_attr p0 zero_reserve_bytes; }
at_target() { [ "$(reserve)" = "$(pool_attr p0 zero_reserve_target_bytes)" ]; }
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
# run HOW THREADS RESERVE: prints "domain_s thp_s"
run() {
	poolctl pool set p0 --zero-reserve $3 >/dev/null
	wait_for 300 at_target || fail "p0 reserve did not reach $3: $(reserve)"
	pmtest domain-create pf ${MIB}M 0 ${MIB}M tier=pool-first pools=p0 >/dev/null
	out=$(numactl --membind=$node pmtest prefault pf $MIB how=$1 threads=$2) || fail "prefault: $out"
	pmtest domain-destroy pf >/dev/null
	echo "$out" | awk '{ print $3, $7 }'
}
: >/tmp/bzr.res
for how in touch populate; do
	for threads in 1 2; do
		[ $how = touch ] && [ $threads = 2 ] && continue
		rr= rn= rt=
		for round in 1 2 3 4 5; do
			set -- $(run $how $threads ${MIB}M); rr="$rr $(awk -v d=$1 -v t=$2 'BEGIN { print d / t }')"
			echo "$how $threads reserve $1 thp $2" >>/tmp/bzr.res
			set -- $(run $how $threads 0); rn="$rn $(awk -v d=$1 -v t=$2 'BEGIN { print d / t }')"
			echo "$how $threads off $1 thp $2" >>/tmp/bzr.res
		done
		echo "bench: $how by $threads thread(s), $MIB MiB, time / anon THP's: from a full reserve median $(echo $rr | median) (of$rr), without $(echo $rn | median) (of$rn) (goal: from the reserve <= 0.5)"
		bench_goal "zero-reserve-$how-$threads" '<=' 0.5 "$(echo $rr | median)" \
			$(echo $rr | tr ' ' '\n' | min_max) x "first touch ($how, $threads thread(s)) from a full zero reserve, time / anonymous THP's"
	done
done

# scaling with the faulting threads: MADV_POPULATE_WRITE's median time by 2
# threads over by 1, the domain's (reserve off: zeroing at the fault, the
# CPU-bound case) and anonymous THP's
med_of() { awk -v w="$1" '$1 == "populate" && $2 == w && $3 == "off" { print $4 }' /tmp/bzr.res | median; }
thp_of() { awk -v w="$1" '$1 == "populate" && $2 == w { print $6 }' /tmp/bzr.res | median; }
awk -v d1="$(med_of 1)" -v d2="$(med_of 2)" -v t1="$(thp_of 1)" -v t2="$(thp_of 2)" 'BEGIN {
	printf "bench: populate, 2 threads / 1 thread (median times): domain, reserve off %.3f (%.3f s / %.3f s), anonymous THP %.3f (%.3f s / %.3f s)\n",
		d2 / d1, d2, d1, t2 / t1, t2, t1 }'

# the thread's CPU time for 512 MiB zeroed ahead vs memset
pid=$(pgrep -x poolmem_zerod || ps | awk '$NF == "[poolmem_zerod]" { print $1 }')
[ -n "$pid" ] || fail "no poolmem_zerod thread"
cpu() { awk '{ print $14 + $15 }' /proc/$pid/stat; }
hz=100
poolctl pool set p0 --zero-reserve 0 >/dev/null
wait_for 60 at_target || fail "reserve not emptied"
c0=$(cpu)
poolctl pool set p0 --zero-reserve ${MIB}M >/dev/null
wait_for 300 at_target || fail "reserve did not refill"
c1=$(cpu)
m=$(pmtest memset-cpu $MIB | awk '{ print $2 }')
awk -v a=$c0 -v b=$c1 -v hz=$hz -v m=$m -v mib=$MIB 'BEGIN {
	k = (b - a) / hz
	printf "bench: zeroing %d MiB ahead took the thread %.2f s of CPU (%.2f s/GiB), memset %.2f s (%.2f s/GiB): ratio %.2f\n",
		mib, k, k * 1024 / mib, m, m * 1024 / mib, (m > 0 ? k / m : 0) }'
poolctl pool set p0 --zero-reserve 1% >/dev/null
