# rig-topologies: nvdimm-numa
# rig-env: RIG_NVDIMM_SIZE=5G
# Benchmark (make bench; not part of make check): large domains (issue 33,
# item 3). For each size (256 MiB, 1 GiB, 4 GiB) and chunk size (2 MiB;
# 1 GiB from 1 GiB up), one fresh domain on pool p0, side by side:
#  - first touch by two threads (pmtest prefault how=touch threads=2),
#    against as much anonymous THP memory bound to p1's node;
#  - `poolctl vm map` of the whole domain (goal: < 100 ms for 8,192
#    chunks: scaled from the largest size here);
#  - kernel memory of the chunk map: /proc/meminfo's Slab, VmallocUsed,
#    Percpu and PageTables before and after 8 GiB of such domains are made
#    (untouched, on p0 and p1), per GiB; the map's own arrays are 8 bytes
#    of chunk_meta and 8 per 2 MiB unit for each chunk: 8 KiB per GiB in
#    2 MiB chunks, 4 KiB in 1 GiB chunks;
#  - the tiering worker's time over 10 s with tiering on and nothing to
#    move (the scan of an idle domain), as % of a CPU;
#  - a drain of the whole domain from p0 to p1, in MiB/s.
# Each NVDIMM is 5 GiB (host memory, touched only as used); a 16 GiB domain
# and its drain need 32 GiB on the pools, more than the 24 GiB host has.
# Rows go to build/bench/size.csv (scripts/bench-plot.py draws them).
. /rig/tests/lib.sh
pm_pools_up
n0=$(pool_attr p0 node)
n1=$(pool_attr p1 node)
secs_since() { awk -v a=$1 -v b=$(uptime_s) 'BEGIN { printf "%.3f", b - a }'; }
kmem() { awk '/^(Slab|Percpu|VmallocUsed|PageTables):/ { s += $2 } END { print s }' /proc/meminfo; }
settle() { sync; echo 2 > /proc/sys/vm/drop_caches; sleep 1; }
ms() { pmtest elapsed "$@" | awk '/^elapsed: / { printf "%.1f\n", $2 * 1000; ok = 1 } END { exit !ok }' || fail "$*"; }

# warm-up: both pool nodes touched once (pm_warm_pools, lib.sh)
pm_warm_pools p0 p1

echo "== large domains: sizes 256 MiB, 1 GiB, 4 GiB; chunks 2 MiB and 1 GiB"
echo "csv:size.csv:size_mib,chunk_mib,chunks,touch_s,thp_s,touch_per_thp,map_ms,map_json_ms,kmem_kib,kmem_kib_per_gib,scan_pct,drain_s,drain_mibs"
for spec in 256:2 1024:2 1024:1024 4096:2 4096:1024; do
	size=${spec%:*} chunk=${spec#*:}
	# the chunk maps of 8 GiB of untouched domains
	nm=$(( 8192 / size ))
	settle; k0=$(kmem)
	for i in $(seq $nm); do
		pmtest domain-create km$i ${size}M 0 ${size}M pools=p0,p1 chunk=${chunk}M >/dev/null ||
			fail "domain-create km$i ${size}M chunk ${chunk}M"
	done
	settle; k1=$(kmem)
	for i in $(seq $nm); do pmtest domain-destroy km$i >/dev/null; done
	pmtest domain-create big ${size}M 0 ${size}M pools=p0 chunk=${chunk}M >/dev/null ||
		fail "domain-create big ${size}M chunk ${chunk}M"
	chunks=$(( size / chunk ))
	# two threads touch the whole domain; THP on p1's node alongside
	out=$(numactl --membind=$n1 pmtest prefault big $size how=touch threads=2) || fail "prefault: $out"
	dt=$(echo "$out" | sed -n 's/^prefault: domain \([0-9.]*\) s, anon THP \([0-9.]*\) s.*/\1/p')
	tt=$(echo "$out" | sed -n 's/^prefault: domain \([0-9.]*\) s, anon THP \([0-9.]*\) s.*/\2/p')
	[ -n "$dt" ] && [ -n "$tt" ] || fail "prefault: no figures: $out"
	[ "$(dom_pool_chunks big p0)" = $chunks ] || fail "big: $(dom_pool_chunks big p0) chunks on p0, not $chunks"
	# vm map, text and JSON (the median of 3)
	m=$(for i in 1 2 3; do ms poolctl vm map big; done | sort -n | sed -n 2p)
	mj=$(for i in 1 2 3; do ms poolctl vm map big --json; done | sort -n | sed -n 2p)
	lines=$(poolctl vm map big | wc -l)
	# the tiering worker on an idle domain with nothing to move
	poolctl vm set big --tiering on >/dev/null
	sleep 2
	s0=$(dom_attr big tiering_scan_ns); t0=$(uptime_s)
	sleep 10
	s1=$(dom_attr big tiering_scan_ns); st=$(secs_since $t0)
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
	per=$(awk -v k=$((k1 - k0)) 'BEGIN { printf "%.1f", k / 8 }')
	echo "bench: $size MiB in $chunk MiB chunks ($chunks): touch by 2 threads $dt s ($(awk -v s=$size -v t=$dt 'BEGIN { printf "%.0f", s / t }') MiB/s), THP $tt s: $(awk -v a=$dt -v b=$tt 'BEGIN { printf "%.2f", a / b }')x THP's time; vm map $m ms ($lines lines), --json $mj ms; chunk map $kk KiB each ($per KiB per GiB, from $nm domains); tiering scan $scan% of a CPU; drain $drt s ($(awk -v s=$size -v t=$drt 'BEGIN { printf "%.0f", s / t }') MiB/s)"
	echo "csv:size.csv:$size,$chunk,$chunks,$dt,$tt,$(awk -v a=$dt -v b=$tt 'BEGIN { printf "%.3f", a / b }'),$m,$mj,$kk,$per,$scan,$drt,$(awk -v s=$size -v t=$drt 'BEGIN { printf "%.0f", s / t }')"
done
