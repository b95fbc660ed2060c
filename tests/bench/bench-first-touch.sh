# rig-topologies: nvdimm-numa
# Benchmark (make bench; not part of make check): first-touch throughput of
# a poolmem domain mapping against anonymous memory with THP and without
# THP (MADV_NOHUGEPAGE), side by side in one guest run, each round
# interleaving the three, by one thread and by two threads touching halves
# at once (a VM's vCPUs faulting together: the guest has 2 CPUs); then the
# domain's fault latency percentiles from its log2 histogram. Under TCG
# only the ratios mean anything.
. /rig/tests/lib.sh
pm_pools_up
MIB=${BENCH_MIB:-256}
ROUNDS=${BENCH_ROUNDS:-11}

# p PERCENT NAME: upper bound (ns) of the histogram bucket holding the percentile
pct() {
	awk -v p=$1 '{
		for (i = 1; i <= NF; i++) n += $i
		want = n * p / 100; b = 1
		for (i = 1; i <= NF; i++) { b *= 2; s += $i; if (s >= want) { print b; exit } }
	}' $DOMSYS/$2/fault_latency_histogram
}

for tier in local pool; do
	if [ $tier = local ]; then q="${MIB}M 0"; else q="0 ${MIB}M"; fi
	pmtest domain-create b-$tier ${MIB}M $q tier=$tier-first pools=p0 >/dev/null
	# the anonymous baselines come from the same node as the domain's chunks
	if [ $tier = local ]; then node=0; else node=$(pool_attr p0 node); fi
	for threads in 1 2; do
		echo "== $tier tier ($MIB MiB, $ROUNDS rounds, $threads thread(s), anonymous baselines bound to node $node)"
		numactl --membind=$node pmtest bench b-$tier $MIB rounds=$ROUNDS threads=$threads
	done
	echo "bench: $tier fault latency p50 < $(pct 50 b-$tier) ns, p99 < $(pct 99 b-$tier) ns over $(dom_attr b-$tier faults) faults"
	pmtest domain-destroy b-$tier >/dev/null
done
