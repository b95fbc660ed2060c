# rig-topologies: nvdimm-numa
# Benchmark (make bench; not part of make check): poolctl's start and
# `poolctl vm map` with the device libraries loaded only by the verbs that
# need them (poolctl: libdaxctl, libcxl, libndctl and libkmod in the
# plugin poolmem-devices.so, libxml2 and libsystemd loaded on first use;
# userspace/src/devices.hpp) against the same sources linked to every
# library as before (poolctl-linked, which scripts/bench builds), in one
# boot, the two alternating; medians of 25 rounds. Under TCG only the
# ratios count: the dynamic linker's symbol lookups, and the page faults
# of mapping 25 libraries, cost there some 15 times what they cost on
# hardware.
. /rig/tests/lib/common.sh
. /rig/tests/lib/bench.sh
pm_pools_up
[ -x /rig/bin/poolctl-linked ] || fail "no poolctl-linked in the image (scripts/bench builds it)"
libs() { LD_TRACE_LOADED_OBJECTS=1 "/rig/bin/$1" | grep -c '=>'; }
echo "bench: poolctl loads $(libs poolctl) libraries at start, poolctl-linked $(libs poolctl-linked)"
# 1,024 chunks of 2 MiB, on both pools (vm map lists the ranges of each)
pmtest domain-create m 2G 0 2G pools=p0,p1 chunk=2M >/dev/null || fail "domain-create m"
pmtest touch m 0 2G >/dev/null || fail "touch m"
check_eq "m: chunks" 1024 "$(dom_attr m chunks)"
rm -f /tmp/s.* /tmp/m.*
for i in $(seq 25); do
	for b in poolctl poolctl-linked; do
		bench_ms $b --version >> /tmp/s.$b
		bench_ms $b vm map m >> /tmp/m.$b
	done
done
med() { sort -g "$1" | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
lines=$(poolctl vm map m | wc -l)
[ "$(poolctl-linked vm map m | wc -l)" = "$lines" ] || fail "the two poolctls' vm map differ"
s=$(med /tmp/s.poolctl) sl=$(med /tmp/s.poolctl-linked)
m=$(med /tmp/m.poolctl) ml=$(med /tmp/m.poolctl-linked)
r() { awk -v a=$1 -v b=$2 'BEGIN { printf "%.2f", a / b }'; }
# per-round ratios, for the spread
paste /tmp/s.poolctl /tmp/s.poolctl-linked | awk '{ printf "%.3f\n", $1 / $2 }' > /tmp/rs
paste /tmp/m.poolctl /tmp/m.poolctl-linked | awk '{ printf "%.3f\n", $1 / $2 }' > /tmp/rm
echo "bench: start (poolctl --version): $s ms, linked to every library $sl ms: $(r $s $sl)x (rounds $(min_max < /tmp/rs | tr ' ' -))"
echo "bench: vm map of 1,024 chunks ($lines lines): $m ms, linked $ml ms: $(r $m $ml)x (rounds $(min_max < /tmp/rm | tr ' ' -)); of it the start $(r $s $m) and $(r $sl $ml)"
echo "csv:start.csv:start_ms,start_linked_ms,map1024_ms,map1024_linked_ms,map_lines"
echo "csv:start.csv:$s,$sl,$m,$ml,$lines"
bench_goal start-vs-linked '<=' 0.7 "$(r $s $sl)" $(min_max < /tmp/rs) x \
	"poolctl's start, time / the same poolctl linked to every library (device libraries on first use)"
pmtest domain-destroy m >/dev/null
