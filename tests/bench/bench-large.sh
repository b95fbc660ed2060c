# rig-topologies: nvdimm-numa
# rig-env: RIG_NVDIMM_SIZE=5G
# Benchmark (make bench; not part of make check): large domains (issue 33,
# item 3). For each size (256 MiB, 1 GiB, 4 GiB) and chunk size (2 MiB;
# 1 GiB from 1 GiB up), one fresh domain on pool p0 (bench_size,
# tests/guest/lib/bench.sh), side by side:
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
# Each NVDIMM is 5 GiB (host memory, touched only as used); 16 GiB domains
# are bench-large16's.
# Rows go to build/bench/size.csv (scripts/bench-plot.py draws them).
. /rig/tests/lib/common.sh
. /rig/tests/lib/bench.sh
pm_pools_up

# warm-up: both pool nodes touched once (pm_warm_pools, tests/guest/lib/common.sh)
pm_warm_pools p0 p1

echo "== large domains: sizes 256 MiB, 1 GiB, 4 GiB; chunks 2 MiB and 1 GiB"
bench_size_header size.csv
for spec in 256:2 1024:2 1024:1024 4096:2 4096:1024; do
	bench_size ${spec%:*} ${spec#*:} size.csv 1
done
