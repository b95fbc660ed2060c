# rig-topologies: nvdimm-numa
# Benchmark (make bench; not part of make check): first-touch throughput of
# a poolmem domain mapping against anonymous memory with THP and without
# THP (MADV_NOHUGEPAGE), side by side in one guest run, each round
# interleaving the three, by one thread and by two threads touching halves
# at once (a VM's vCPUs faulting together: the guest has 2 CPUs); then the
# domain's fault latency percentiles from its log2 histogram. Twice: the
# zero reserves off (like for like: both zero at the fault) and on (the
# product's figure). The THP baseline must really get huge pages
# (AnonHugePages; pmtest bench fails otherwise). Under TCG only the ratios
# mean anything.
. /rig/tests/lib/common.sh
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

# reserve off | on: the zero reserves of p0 and of the local tier (node 0)
zero_reserves() {
	if [ "$1" = off ]; then
		echo 0 > /sys/module/poolmem/parameters/local_zero_reserve_mb
		poolctl pool set p0 --zero-reserve 0 >/dev/null
	else
		echo 64 > /sys/module/poolmem/parameters/local_zero_reserve_mb
		poolctl pool set p0 --zero-reserve 64M >/dev/null
		sleep 5	# the refill thread fills them
	fi
}

# Twice: with the zero reserves off, like for like (THP zeroes at the
# fault as the domain then does), and with them on, the product as it
# ships (the domain's first chunks come zeroed ahead, THP's don't).
for reserve in off on; do
	zero_reserves $reserve
	for tier in local pool; do
		if [ $tier = local ]; then q="${MIB}M 0"; else q="0 ${MIB}M"; fi
		pmtest domain-create b-$tier ${MIB}M $q tier=$tier-first pools=p0 >/dev/null
		# the anonymous baselines come from the same node as the domain's chunks
		if [ $tier = local ]; then node=0; else node=$(pool_attr p0 node); fi
		for threads in 1 2; do
			echo "== $tier tier, zero reserve $reserve ($MIB MiB, $ROUNDS rounds, $threads thread(s), anonymous baselines bound to node $node)"
			out=$(numactl --membind=$node pmtest bench b-$tier $MIB rounds=$ROUNDS threads=$threads) ||
				fail "$tier, reserve $reserve, $threads thread(s): $out"
			echo "$out"
			r=$(echo "$out" | sed -n 's/^bench: domain\/THP \([0-9.]*\) .*/\1/p')
			rounds=$(echo "$out" | sed -n 's/^bench: round [0-9]*:.* domain\/THP \([0-9.]*\)$/\1/p')
			# like for like only: with the reserve on, it is the product's figure
			[ $reserve = on ] || bench_goal "first-touch-$tier-$threads" '>=' 0.9 "$r" \
				$(echo "$rounds" | min_max) x "first touch of a $tier-tier domain by $threads thread(s), speed / anonymous THP's (zero reserves off)"
		done
		echo "bench: $tier, zero reserve $reserve: fault latency p50 < $(pct 50 b-$tier) ns, p99 < $(pct 99 b-$tier) ns over $(dom_attr b-$tier faults) faults"
		pmtest domain-destroy b-$tier >/dev/null
	done
done
zero_reserves on
