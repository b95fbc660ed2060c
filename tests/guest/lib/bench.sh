# Shared by the benchmarks of large domains (tests/bench/bench-large.sh,
# bench-large16.sh); sourced after lib/common.sh and pm_pools_up. Not a test (no
# rig-topologies line).
#
# bench_size SIZE_MIB CHUNK_MIB CSV THP: one fresh domain of SIZE_MIB on
# pool p0 in CHUNK_MIB chunks, side by side:
#  - first touch by two threads (pmtest prefault how=touch threads=2), with
#    THP=1 against as much anonymous THP memory bound to p1's node;
#  - `poolctl vm map` of the whole domain, text and --json, and of a
#    one-chunk domain (poolctl's own start), and `pmtest map` of the
#    whole domain (the kernel's share) (medians of 3);
#  - kernel memory of the chunk map: /proc/meminfo's Slab, VmallocUsed,
#    Percpu and PageTables before and after at least 8 GiB of such
#    domains are made (untouched, on p0 and p1), per GiB;
#  - the tiering worker's time over 10 s with tiering on and nothing to
#    move (the scan of an idle domain), as % of a CPU;
#  - a drain of the whole domain from p0 to p1, in MiB/s.
# Prints a "bench:" line and a "csv:CSV:" row (header: bench_size_header).
bench_size_header() {
	echo "csv:$1:size_mib,chunk_mib,chunks,touch_s,thp_s,touch_per_thp,map_ms,map_one_ms,map_pmtest_ms,map_json_ms,kmem_kib,kmem_kib_per_gib,scan_pct,drain_s,drain_mibs"
}

bench_kmem() { awk '/^(Slab|Percpu|VmallocUsed|PageTables):/ { s += $2 } END { print s }' /proc/meminfo; }
bench_settle() { sync; echo 2 > /proc/sys/vm/drop_caches; sleep 1; }
bench_ms() { pmtest elapsed "$@" | awk '/^elapsed: / { printf "%.1f\n", $2 * 1000; ok = 1 } END { exit !ok }' || fail "$*"; }

bench_size() {
	local size=$1 chunk=$2 csv=$3 thp=$4
	local nm i k0 k1 chunks out dt tt ratio m m1 mj mk lines s0 s1 t0 st scan drt kk per
	# the chunk maps of at least 8 GiB of untouched domains
	nm=$(( (8192 + size - 1) / size ))
	bench_settle; k0=$(bench_kmem)
	for i in $(seq $nm); do
		pmtest domain-create km$i ${size}M 0 ${size}M pools=p0,p1 chunk=${chunk}M >/dev/null ||
			fail "domain-create km$i ${size}M chunk ${chunk}M"
	done
	bench_settle; k1=$(bench_kmem)
	for i in $(seq $nm); do pmtest domain-destroy km$i >/dev/null; done
	pmtest domain-create big ${size}M 0 ${size}M pools=p0 chunk=${chunk}M >/dev/null ||
		fail "domain-create big ${size}M chunk ${chunk}M"
	chunks=$(( size / chunk ))
	# two threads touch the whole domain; THP on p1's node alongside
	out=$(numactl --membind=$(pool_attr p1 node) pmtest prefault big $size how=touch threads=2 thp=$thp) ||
		fail "prefault: $out"
	dt=$(echo "$out" | sed -n 's/^prefault: domain \([0-9.]*\) s, .*/\1/p')
	tt=$(echo "$out" | sed -n 's/^prefault: .*, anon THP \([0-9.]*\) s.*/\1/p')
	[ -n "$dt" ] && { [ $thp = 0 ] || [ -n "$tt" ]; } || fail "prefault: no figures: $out"
	ratio=; [ -z "$tt" ] || ratio=$(awk -v a=$dt -v b=$tt 'BEGIN { printf "%.3f", a / b }')
	[ "$(dom_pool_chunks big p0)" = $chunks ] || fail "big: $(dom_pool_chunks big p0) chunks on p0, not $chunks"
	m=$(for i in 1 2 3; do bench_ms poolctl vm map big; done | sort -n | sed -n 2p)
	# the same command on a one-chunk domain: poolctl's own start, which
	# TCG makes most of the time above
	pmtest domain-create one ${chunk}M 0 ${chunk}M pools=p0,p1 chunk=${chunk}M >/dev/null || fail "domain-create one"
	pmtest touch one 0 4K >/dev/null
	m1=$(for i in 1 2 3; do bench_ms poolctl vm map one; done | sort -n | sed -n 2p)
	pmtest domain-destroy one >/dev/null
	mj=$(for i in 1 2 3; do bench_ms poolctl vm map big --json; done | sort -n | sed -n 2p)
	# the kernel's share: the same ranges read by pmtest (C, 256 a call)
	mk=$(for i in 1 2 3; do bench_ms pmtest map big; done | sort -n | sed -n 2p)
	lines=$(poolctl vm map big | wc -l)
	[ "$chunks" != 8192 ] || bench_goal vm-map-8192 '<=' 100 "$m" "" "" ms \
		"poolctl vm map of a domain of 8,192 chunks (TCG)"
	# the tiering worker on an idle domain with nothing to move
	poolctl vm set big --tiering on >/dev/null
	sleep 2
	s0=$(dom_attr big tiering_scan_ns); t0=$(uptime_s)
	sleep 10
	s1=$(dom_attr big tiering_scan_ns)
	st=$(awk -v a=$t0 -v b=$(uptime_s) 'BEGIN { printf "%.3f", b - a }')
	poolctl vm set big --tiering off >/dev/null
	scan=$(awk -v n=$((s1 - s0)) -v t=$st 'BEGIN { printf "%.3f", n / 1e9 / t * 100 }')
	# drain all of it to p1
	pmtest set big pools=p0,p1 >/dev/null
	out=$(pmtest elapsed pmtest drain p0) || fail "drain: $out"
	drt=$(echo "$out" | sed -n 's/^elapsed: //p')
	[ "$(dom_pool_chunks big p1)" = $chunks ] || fail "drain: $(dom_pool_chunks big p1) chunks on p1; $out"
	pmtest drain p0 cancel=1 >/dev/null
	pmtest domain-destroy big >/dev/null
	kk=$(( (k1 - k0) / nm ))
	per=$(awk -v k=$((k1 - k0)) -v g=$((nm * size)) 'BEGIN { printf "%.1f", k / (g / 1024) }')
	echo "bench: $size MiB in $chunk MiB chunks ($chunks): touch by 2 threads $dt s ($(awk -v s=$size -v t=$dt 'BEGIN { printf "%.0f", s / t }') MiB/s)${tt:+, THP $tt s: ${ratio}x THP's time}; vm map $m ms ($lines lines; one chunk $m1 ms; pmtest map $mk ms), --json $mj ms; chunk map $kk KiB each ($per KiB per GiB, from $nm domains); tiering scan $scan% of a CPU; drain $drt s ($(awk -v s=$size -v t=$drt 'BEGIN { printf "%.0f", s / t }') MiB/s)"
	echo "csv:$csv:$size,$chunk,$chunks,$dt,$tt,$ratio,$m,$m1,$mk,$mj,$kk,$per,$scan,$drt,$(awk -v s=$size -v t=$drt 'BEGIN { printf "%.0f", s / t }')"
}
