# rig-topologies: nvdimm-numa
# Benchmark (make bench; not part of make check): Debian's QEMU inside the
# rig runs tests/guest/bios/pattern-bios.S, which writes every page of its
# RAM; the time from QEMU's start to the guest's "D" is measured for guest
# RAM from (1) anonymous memory (memory-backend-ram), (2) a poolmem domain
# with the argument poolctl prints (align=2M: PMD mappings), (3) the same
# domain without align= (4 KiB mappings, what QEMU does by default), in
# rounds that interleave the three. The domain's chunks come from one pool
# node; the anonymous memory is bound to the same node. Nested TCG: only
# the ratios mean anything.
. /rig/tests/lib/common.sh
pm_pools_up
pm_warm_pool p0
MIB=${BENCH_MIB:-512}
ROUNDS=${BENCH_ROUNDS:-7}
node=$(pool_attr p0 node)
arg=$(poolctl vm create bq --size ${MIB}M --pool ${MIB}M --pools p0 --tier-policy pool-first | sed -n 2p)
noalign=$(echo "$arg" | sed 's/,align=[0-9]*//')
# run CONSOLE [numactl ARGS...] -- QEMU ARGS...: seconds until the guest wrote all its RAM
run() {
	local con=$1 t0 t1 pid pre=
	shift
	while [ "$1" != -- ]; do pre="$pre $1"; shift; done
	shift
	rm -f "$con"
	t0=$(uptime_s)
	# shellcheck disable=SC2086
	$pre sh -c '. /rig/tests/lib/common.sh; pm_qemu "$@"' sh "$con" "$@" >/dev/null 2>&1 &
	pid=$!
	wait_for 600 grep -q D "$con" || { kill -9 $pid; echo "bench: guest did not finish" >&2; return 1; }
	t1=$(uptime_s)
	kill -9 $pid
	wait $pid 2>/dev/null || true
	awk -v a=$t0 -v b=$t1 'BEGIN { printf "%.2f\n", b - a }'
}
echo "== QEMU guest writing $MIB MiB of RAM ($ROUNDS rounds; seconds from start to done)"
anon= al= na=
for r in $(seq 1 $ROUNDS); do
	a=$(run /tmp/b-anon numactl --membind=$node -- -m ${MIB}M -object memory-backend-ram,id=r,size=${MIB}M -machine memory-backend=r)
	# shellcheck disable=SC2086
	d=$(run /tmp/b-al -- $arg)
	pmtest punch bq 0 ${MIB}M >/dev/null
	# shellcheck disable=SC2086
	n=$(run /tmp/b-na -- $noalign)
	pmtest punch bq 0 ${MIB}M >/dev/null
	echo "bench: round $r: anonymous $a s, domain align=2M $d s, domain 4 KiB $n s"
	anon="$anon $a" al="$al $d" na="$na $n"
done
med() { echo "$@" | tr ' ' '\n' | grep . | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }
ma=$(med $anon) md=$(med $al) mn=$(med $na)
awk -v a=$ma -v d=$md -v n=$mn 'BEGIN {
	printf "bench: medians: anonymous %.2f s, domain align=2M %.2f s, domain 4 KiB %.2f s\n", a, d, n
	printf "bench: domain (align=2M) / anonymous time: %.2f; 4 KiB / align=2M time: %.2f\n", d / a, n / d }'
poolctl vm destroy bq >/dev/null
