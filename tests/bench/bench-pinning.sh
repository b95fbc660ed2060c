# rig-topologies: nvdimm-numa
# rig-boot: own
# rig-env: RIG_NVDIMM_SIZE=9G
# Benchmark (make bench; not part of make check): pinning at VM start
# (issue 33, item 4; seed 001: a VM with a passthrough device pins all of
# its RAM before it boots). A FOLL_LONGTERM pin of a whole --pinnable
# domain (io_uring IORING_REGISTER_BUFFERS, standing in for VFIO's DMA
# map; the pin faults the memory in), side by side in one guest run, 5
# rounds each, medians:
#  - the domain's chunks from a full zero reserve;
#  - the zero reserve off (each chunk zeroed at its fault);
#  - anonymous THP memory bound to the same node (the baseline).
# At 256 MiB, 1 GiB and 4 GiB (9 GiB NVDIMMs: host memory, touched only
# as used; a reserve holds at most half its node, and 4 GiB of it must fit
# for every chunk of the largest pin to come from it). Each pin from the
# reserve reports the reserve's hits and misses during it (a miss zeroes
# its unit on the fault path, as with the reserve off). Goals: flat per
# GiB (each size's time per GiB against 256 MiB's near 1.00), and from the
# reserve at most 0.5x THP's time.
# The pinnable pool is node B onlined as a kernel zone, as in pm-pinning.
. /rig/tests/lib/common.sh
pm_load
daxes=$(devices_to_system_ram)
set -- $(for dax in $daxes; do dax_node "$dax"; done | sort -n)
[ $# -ge 2 ] || fail "expected two pool nodes, got: $*"
normal=$2
for b in $(node_blocks $normal); do echo online_kernel > $MEMSYS/$b/state; done
pmtest pool-add p1 $normal >/dev/null
median() { tr ' ' '\n' | grep . | sort -g | awk '{ v[NR] = $1 } END { print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2 }'; }
reserve() { pool_attr p1 zero_reserve_bytes; }
at_target() { [ "$(reserve)" = "$(pool_attr p1 zero_reserve_target_bytes)" ]; }
# domain MIB RESERVE [rings=each]: seconds the pin of a fresh pinnable domain took
domain() {
	local out
	poolctl pool set p1 --zero-reserve $2 >/dev/null
	wait_for 300 at_target || fail "p1 reserve did not reach $2: $(reserve)"
	pmtest domain-create pin $1M 0 $1M tier=pool-first pools=p1 pinnable=1 >/dev/null
	h0=$(pool_attr p1 zero_reserve_hits) m0=$(pool_attr p1 zero_reserve_misses)
	out=$(pmtest pin-longterm pin $1 touch=0 ${3:-}) || fail "pin-longterm: $out"
	[ -n "${3:-}" ] ||
		echo "$(($(pool_attr p1 zero_reserve_hits) - h0)) $(($(pool_attr p1 zero_reserve_misses) - m0))" >> /tmp/hm.$1.$2
	pmtest domain-destroy pin >/dev/null
	echo "$out" | sed -n 's/.* answered in \([0-9.]*\) s.*/\1/p'
}
anon() { pmtest pin-anon $1 $normal ${2:-} | sed -n 's/.* pinned in \([0-9.]*\) s/\1/p'; }

echo "== pinning a whole domain (io_uring fixed buffers), node $normal onlined as a kernel zone"
echo "csv:pinning.csv:mib,reserve_s,off_s,thp_s"
rm -f /tmp/pins /tmp/hm.*
for mib in 256 1024 4096; do
	r= o= a=
	for round in 1 2 3 4 5; do
		r="$r $(domain $mib ${mib}M)"
		o="$o $(domain $mib 0)"
		a="$a $(anon $mib)"
	done
	mr=$(echo $r | median) mo=$(echo $o | median) ma=$(echo $a | median)
	echo "bench: pin of $mib MiB from the reserve: hits and misses per round: $(awk '{ printf "%s%d/%d", (NR > 1 ? ", " : ""), $1, $2 }' /tmp/hm.$mib.${mib}M) (of $((mib / 2)) units)"
	awk -v n=$((mib / 2)) '$1 != n { bad = 1 } END { exit bad }' /tmp/hm.$mib.${mib}M ||
		info "pin of $mib MiB: not every unit came from the reserve"
	echo "bench: pin of $mib MiB: from a full reserve $mr s (of$r), reserve off $mo s (of$o), anonymous THP $ma s (of$a)"
	echo "bench: pin of $mib MiB, time / THP's: from the reserve $(awk -v a=$mr -v b=$ma 'BEGIN { printf "%.3f", a / b }') (goal <= 0.5), reserve off $(awk -v a=$mo -v b=$ma 'BEGIN { printf "%.3f", a / b }')"
	bench_goal pin-reserve-vs-thp-$mib '<=' 0.5 "$(awk -v a=$mr -v b=$ma 'BEGIN { printf "%.3f", a / b }')" "" "" x \
		"long-term pin of $mib MiB from a full zero reserve, time / anonymous THP's"
	echo "csv:pinning.csv:$mib,$mr,$mo,$ma"
	echo "$mib $mr $mo $ma" >> /tmp/pins
done
# Where 4 GiB's extra time goes: io_uring accounts each buffer's huge
# pages against those of every buffer registered on the ring before it
# (headpage_already_acct(), quadratic in head pages: some 2 million
# compares at 4 GiB in four 1 GiB buffers, against 130,000 at 1 GiB). The
# same pins with a ring per GiB leave that out; what is left is the pin.
e= ea=
for round in 1 2 3 4 5; do
	e="$e $(domain 4096 4096M rings=each)"
	ea="$ea $(anon 4096 rings=each)"
done
me=$(echo $e | median) mea=$(echo $ea | median)
r4=$(awk '$1 == 4096 { print $2 }' /tmp/pins) a4=$(awk '$1 == 4096 { print $4 }' /tmp/pins)
r1=$(awk '$1 == 1024 { print $2 }' /tmp/pins)
echo "bench: pin of 4096 MiB, a ring per GiB: from a full reserve $me s (of$e), anonymous THP $mea s (of$ea)"
echo "bench: pin of 4096 MiB from the reserve, one ring / a ring per GiB: $(awk -v a=$r4 -v b=$me 'BEGIN { printf "%.2f", a / b }'); a ring per GiB, per GiB against 1 GiB's: $(awk -v a=$me -v b=$r1 'BEGIN { printf "%.2f", a / b / 4 }'); THP one ring / a ring per GiB: $(awk -v a=$a4 -v b=$mea 'BEGIN { printf "%.2f", a / b }')"
echo "csv:pinning-rings.csv:mib,reserve_one_ring_s,reserve_ring_each_s,thp_one_ring_s,thp_ring_each_s"
echo "csv:pinning-rings.csv:4096,$r4,$me,$a4,$mea"
bench_goal pin-flat-per-gib-ring-each '<=' 1.25 "$(awk -v a=$me -v b=$r1 'BEGIN { printf "%.2f", a / b / 4 }')" \
	$(for x in $e; do awk -v a=$x -v b=$r1 'BEGIN { printf "%.2f\n", a / b / 4 }'; done | min_max) x \
	"pin from the zero reserve, time per GiB at 4 GiB (a ring per GiB) / at 1 GiB"
awk 'NR == 1 { m = $1; r = $2; o = $3; a = $4; next }
	{ k = $1 / m; printf "bench: pin time per GiB, %d MiB against %d MiB (1.00 is flat): from the reserve %.2f, reserve off %.2f, THP %.2f\n", $1, m, $2 / r / k, $3 / o / k, $4 / a / k }' /tmp/pins
poolctl pool set p1 --zero-reserve 0 >/dev/null
info "pass"
