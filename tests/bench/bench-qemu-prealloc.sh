# rig-topologies: nvdimm-numa
# rig-timeout: 1500
# rig-env: RIG_NVDIMM_SIZE=3G
# Benchmark (make bench; issue 16): how long Debian's QEMU inside the rig
# takes to start a guest whose 1 GiB of RAM is preallocated (prealloc=on,
# prealloc-threads=1 and 2), with guest RAM from
#  (1) a poolmem domain on pool p0 whose chunks all come from a full zero
#      reserve,
#  (2) the same domain with the reserve off (each chunk zeroed at the fault),
#  (3) anonymous memory bound to p0's node (memory-backend-ram, THP),
# and (4) the domain without prealloc, QEMU's start without the memory: the
# baseline, taken off each of the others to give prealloc's own time.
# "Start" is QEMU's own: it is given -S and a QMP "quit" on stdin, which it
# reads only from its main loop, after the memory backends are created and
# preallocated; the figure is the time from exec to exit (QEMU's teardown is
# in it for all four). Each round runs the four with 1 and then 2 threads;
# medians of 9 rounds of ratios to (3) in the same round, and of prealloc's
# own time with 2 threads to with 1 (scaling with the faulting threads).
# Nested TCG: only ratios mean anything.
# The NVDIMMs are 3 GiB here: a pool's reserve is at most half its node,
# and the whole 1 GiB must fit in it.
. /rig/tests/lib/common.sh
pm_pools_up
pm_warm_pool p0
node=$(pool_attr p0 node)
MIB=${BENCH_MIB:-1024}
ROUNDS=${BENCH_ROUNDS:-9}
reserve() { pool_attr p0 zero_reserve_bytes; }
at_target() { [ "$(reserve)" = "$(pool_attr p0 zero_reserve_target_bytes)" ]; }
set_reserve() {
	poolctl pool set p0 --zero-reserve "$1" >/dev/null || fail "pool set p0 --zero-reserve $1"
	wait_for 300 at_target || fail "p0's reserve did not reach $1: $(reserve) bytes"
}

arg=$(poolctl vm create qp --size ${MIB}M --pool ${MIB}M --pools p0 --tier-policy pool-first | sed -n 2p)
echo "$arg" | grep -q memory-backend-file || fail "poolctl printed no QEMU argument: $arg"

# start PREFIX... -- QEMU ARGS...: seconds from exec to exit; QEMU must exit 0
start() {
	local pre= t0 t1 rc
	while [ "$1" != -- ]; do pre="$pre $1"; shift; done
	shift
	t0=$(uptime_s)
	# shellcheck disable=SC2086
	printf '{"execute":"qmp_capabilities"}\n{"execute":"quit"}\n' |
		$pre qemu-system-x86_64 -accel tcg,tb-size=64 -nodefaults -display none -L /nonexistent \
			-bios /rig/bin/pattern-bios.bin -S -qmp stdio "$@" >/tmp/bqp.out 2>&1
	rc=$?
	t1=$(uptime_s)
	[ $rc = 0 ] || fail "QEMU exited $rc: $(tail -3 /tmp/bqp.out)"
	grep -q '"return"' /tmp/bqp.out || fail "QEMU did not answer QMP: $(tail -3 /tmp/bqp.out)"
	awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.3f\n", b - a }'
}
# the domain's chunks back to the pool, then check QEMU really allocated
punch() { pmtest punch qp 0 ${MIB}M >/dev/null || fail "punch qp"; }

# Each round runs all configurations with 1 and then 2 prealloc threads;
# /tmp/bqp.res gets "THREADS CONFIG SECONDS" lines.
: >/tmp/bqp.res
for r in $(seq 1 $ROUNDS); do
	for threads in 1 2; do
		pa=$(echo "$arg" | sed "s/share=on/share=on,prealloc=on,prealloc-threads=$threads/")
		set_reserve ${MIB}M
		h0=$(pool_attr p0 zero_reserve_hits)
		# shellcheck disable=SC2086
		tr=$(start -- $pa)
		h1=$(pool_attr p0 zero_reserve_hits)
		punch
		set_reserve 0
		# shellcheck disable=SC2086
		tn=$(start -- $pa)
		m1=$(pool_attr p0 zero_reserve_hits)
		punch
		ta=$(start numactl --membind=$node -- -m ${MIB}M \
			-object memory-backend-ram,id=r,size=${MIB}M,prealloc=on,prealloc-threads=$threads \
			-machine memory-backend=r)
		# shellcheck disable=SC2086
		tb=$(start -- $arg)
		punch
		# prealloc must have faulted the domain from the reserve: every
		# unit of it a hit (a unit is 2 MiB), none with the reserve off
		[ $((h1 - h0)) -ge $((MIB / 2)) ] || fail "round $r: $((h1 - h0)) reserve hits for $MIB MiB preallocated"
		[ "$m1" = "$h1" ] || fail "round $r: reserve hits with the reserve off ($h1 -> $m1)"
		echo "bench: round $r, prealloc-threads=$threads: from a full reserve $tr s, reserve off $tn s, anonymous THP $ta s, domain without prealloc $tb s"
		printf '%s reserve %s\n%s off %s\n%s anon %s\n%s base %s\n' $threads $tr $threads $tn $threads $ta $threads $tb >>/tmp/bqp.res
	done
done
# Per round: start time / anonymous's; prealloc's own time (start minus
# the start without prealloc, at least 10 ms: /proc/uptime's resolution) /
# anonymous's; and prealloc's own time with 2 threads / with 1.
awk -v mib=$MIB '
function med(s,   n, v, i, j, t) {
	n = split(s, v, " ")
	for (i = 1; i <= n; i++) for (j = i + 1; j <= n; j++) if (v[j] < v[i]) { t = v[i]; v[i] = v[j]; v[j] = t }
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
function own(x, b) { return x - b < 0.01 ? 0.01 : x - b }
{ k = $1 " " $2; i[k]++; t[k, i[k]] = $3; n = i[k] }
END {
	for (th = 1; th <= 2; th++) {
		sr = so = pr = po = a = r_ = o = b = ro = ""
		for (j = 1; j <= n; j++) {
			R = t[th " reserve", j]; O = t[th " off", j]; A = t[th " anon", j]; B = t[th " base", j]
			r_ = r_ " " R; o = o " " O; a = a " " A; b = b " " B
			sr = sr sprintf(" %.3f", R / A); so = so sprintf(" %.3f", O / A); ro = ro sprintf(" %.3f", R / O)
			pr = pr sprintf(" %.3f", own(R, B) / own(A, B)); po = po sprintf(" %.3f", own(O, B) / own(A, B))
		}
		printf "bench: QEMU start, prealloc=on,prealloc-threads=%d, %d MiB, medians of %d: from a full reserve %.2f s, reserve off %.2f s, anonymous THP %.2f s, without prealloc %.2f s\n", th, mib, n, med(r_), med(o), med(a), med(b)
		printf "bench: prealloc-threads=%d, start time from a full reserve / with the reserve off: %.3f (of%s)\n", th, med(ro), ro
		printf "bench: prealloc-threads=%d, start time / anonymous THP: from a full reserve %.3f (of%s), reserve off %.3f (of%s)\n", th, med(sr), sr, med(so), so
		printf "bench: prealloc-threads=%d, prealloc own time (start - start without) / anonymous THP: from a full reserve %.3f (of%s), reserve off %.3f (of%s)\n", th, med(pr), pr, med(po), po
	}
	split("reserve off anon", cs, " ")
	for (ci = 1; ci <= 3; ci++) {
		s = ""
		for (j = 1; j <= n; j++)
			s = s sprintf(" %.3f", own(t["2 " cs[ci], j], t["2 base", j]) / own(t["1 " cs[ci], j], t["1 base", j]))
		printf "bench: prealloc own time, 2 threads / 1 thread, %s: %.3f (of%s)\n", cs[ci], med(s), s
	}
}' /tmp/bqp.res
poolctl vm destroy qp >/dev/null
poolctl pool set p0 --zero-reserve 1% >/dev/null
