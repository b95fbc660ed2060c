# rig-topologies: nvdimm-numa
# rig-env: RIG_NVDIMM_SIZE=17G RIG_NVDIMM2_FILE=1 RIG_TIMEOUT=3000
# rig-host-gib: 21 18
# Benchmark (make bench; not part of make check): 16 GiB domains (issue 33,
# item 3), in 2 MiB chunks (8,192 of them) and in 1 GiB chunks, with a
# 4 GiB domain in the same boot as the reference; bench_size
# (tests/guest/lib/bench.sh) measures each: first touch by two threads,
# `poolctl vm map` (goal: < 100 ms for 8,192 chunks), chunk-map memory per
# GiB, the tiering scan's CPU on an idle domain, and a drain of the whole
# domain p0 -> p1.
# A 16 GiB domain and its drain need 32 GiB on the pools, more than the
# 24 GiB host has: p0 (node 1) is host memory as in every rig, 17 GiB,
# warmed whole; p1 (node 2) is a 17 GiB file on the host's disk
# (RIG_NVDIMM2_FILE), so what is written to p1 goes at the speed of host
# writeback once the host's page cache is full. The drain figures are
# therefore compared with a copy of 1 GiB between the same two nodes
# (pmtest memcpy-nodes, 2 threads) and with the 4 GiB domain's drain, both
# in this boot; no THP figure (THP on p1 would measure the disk too).
# Rows go to build/bench/size16.csv (scripts/bench-plot.py adds them to
# size.svg).
. /rig/tests/lib/common.sh
. /rig/tests/lib/bench.sh
pm_pools_up
n0=$(pool_attr p0 node)
n1=$(pool_attr p1 node)
pm_warm_pools p0

echo "== 16 GiB domains: p0 $(($(pool_attr p0 capacity_bytes) / MiB)) MiB of host memory, p1 $(($(pool_attr p1 capacity_bytes) / MiB)) MiB on the host's disk"
out=$(pmtest memcpy-nodes 1024 $n0 $n1 3 2) || fail "memcpy-nodes: $out"
echo "bench: copy limit p0 -> p1: $out"
bench_size_header size16.csv
for spec in 4096:2 16384:2 16384:1024; do
	bench_size ${spec%:*} ${spec#*:} size16.csv 0
done
