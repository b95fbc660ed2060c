# rig-topologies: cxl2
# rig-boot: own
# Benchmark (make bench; not part of make check): seed 000's density curve
# at rig scale (issue 50, item 5). A host with a local DRAM budget of
# 256 MiB for VMs of 64 MiB: DRAM alone holds 4. VMs are added one at a
# time (2, 4, 6, 8); each first touches all of its memory (its boot), then
# works on its last 50% (then 80%): a writer touching every page of that
# active set over and over (pmtest hammer), so local-first placed the
# wrong half locally and tiering has to bring the active set in. Side by
# side at each count, measured over the same seconds:
#  - DRAM only: every VM all-local (the reference at that count; beyond 4
#    VMs it breaks the budget, which the rig's 2 GiB allow, so that CPU
#    sharing is the same in every column);
#  - static split: local quota 55% (88% at 80% active) of the VM, the
#    active set and its margin, tiering on;
#  - autopilot: poolctl autopilot run with the 256 MiB budget, every VM
#    starting at the budget shared evenly, tiering on.
# A VM fits when its pages touched per second are at least 90% of DRAM
# only's at the same count and its policy's local quotas are within the
# budget. Each policy's VMs work 5 s more once their active sets are
# local before the measure (a chunk just moved maps again, tiering's
# moves end: 2 VMs at 56 MiB ran at 0.6-0.7x without it, 1.02x with it).
# Pool memory is CXL type-3 memory, which QEMU serves through its
# device model (an MMIO access, not RAM): far slower than local under
# TCG, as a pool is slower than DRAM on hardware. Under TCG only the
# ratios mean anything. Prints a "bench:" line per point and "csv:density.csv:"
# rows; goal: the autopilot fits at least as many VMs as the static split.
. /rig/tests/lib/common.sh
pm_pools_up
echo 1000 > /sys/module/poolmem/parameters/tiering_period_ms
echo 3 > /sys/module/poolmem/parameters/tiering_cold_periods
size=64 budget=256 secs=8
echo "csv:density.csv:active_pct,vms,policy,local_quota_mib,pages_per_s_per_vm,ratio_to_dram_only,fits"

# vms N LOCAL: N domains v1..vN of $size MiB with LOCAL MiB local quota,
# tiering on, every page touched once (the VM's boot)
vms() {
	local i
	for i in $(seq "$1"); do
		poolctl vm create v$i --size ${size}M --local ${2}M --pool ${size}M --pools p0,p1 \
			--tiering on --scan-rate 64M --hot-threshold 2s >/dev/null || fail "vm create v$i"
		pmtest touch v$i 0 ${size}M >/dev/null
	done
}
gone() { local i; for i in $(seq "$1"); do pmtest domain-destroy v$i >/dev/null 2>&1; done; }
# hammer N ACTIVE_MIB SECONDS: every VM's active set (its last ACTIVE_MIB)
# touched for SECONDS; prints the mean pages touched per second per VM
hammer() {
	local i off=$((size - $2)) pids=
	for i in $(seq "$1"); do
		pmtest hammer v$i ${off}M ${2}M "$3" > /tmp/hammer.v$i &
		pids="$pids $!"
	done
	for i in $pids; do wait $i; done
	for i in $(seq "$1"); do sed -n 's/^hammer: \([0-9]*\) passes.*/\1/p' /tmp/hammer.v$i; done |
		awk -v pages=$(($2 * 256)) -v s="$3" '{ t += $1 * pages / s; n++ } END { printf "%.0f\n", t / n }'
}
# active set local (MiB) summed over the VMs, from vm map
active_local() {
	local i sum=0 l
	for i in $(seq "$1"); do
		l=$(poolctl vm map v$i --json | awk -v a=$(((size - $2) * MiB)) -v b=$((size * MiB)) '
			/"offset"/ { gsub(/[^0-9]/, ""); off = $0 + 0 }
			/"length"/ { gsub(/[^0-9]/, ""); len = $0 + 0 }
			/"pool"/ { pool = $0 }
			/}/ && len > 0 {
				if (pool ~ /"local"/) { s = off > a ? off : a; e = off + len < b ? off + len : b; if (e > s) n += e - s }
				len = 0
			}
			END { print int(n / 1048576) }')
		sum=$((sum + l))
	done
	echo $sum
}
quota_sum() { cat $DOMSYS/v*/local_quota_bytes | awk '{ s += $1 } END { print int(s / 1048576) }'; }
# settle N ACTIVE QUOTA: let tiering bring the active sets in while they
# are worked on, until all of them that the quotas hold is local (at
# most 90 s): a page of pool memory costs an MMIO access here
settle() {
	local t want
	for t in $(seq 18); do
		hammer "$1" "$2" 5 >/dev/null
		want=$(($1 * $2)) have=$(quota_sum)
		[ $have -lt $want ] && want=$have
		if [ "$(active_local "$1" "$2")" -ge $want ]; then
			# the moves' last chunks map again, tiering quiets: 5 s more
			hammer "$1" "$2" 5 >/dev/null
			return 0
		fi
	done
	info "N=$1: active sets local $(active_local "$1" "$2") of $(($1 * $2)) MiB after 90 s"
}

point() { # ACTIVE_PCT N
	local pct=$1 n=$2 active=$(($size * $1 / 100)) ref st ap qs qa fs fa
	local static=$(((active * 110 / 100 + 1) / 2 * 2))
	# DRAM only
	vms "$n" $size
	hammer "$n" $active 5 >/dev/null
	ref=$(hammer "$n" $active $secs)
	gone "$n"
	# static split
	vms "$n" $static
	settle "$n" $active
	st=$(hammer "$n" $active $secs)
	qs=$(quota_sum)
	gone "$n"
	# the autopilot
	vms "$n" $((budget / n < size ? budget / n / 2 * 2 : size))
	poolctl autopilot run --budget ${budget}M --rate 64M --interval 1s --state /tmp/ap.json > /tmp/ap.log 2>&1 &
	local app=$!
	settle "$n" $active
	ap=$(hammer "$n" $active $secs)
	qa=$(quota_sum)
	kill -TERM $app; wait $app || true
	gone "$n"
	for p in "dram-only $((n * size)) $ref" "static $qs $st" "autopilot $qa $ap"; do
		set -- $p
		fits=$(awk -v v=$3 -v r=$ref -v q=$2 -v b=$budget 'BEGIN { print (v >= 0.9 * r && q <= b) ? 1 : 0 }')
		ratio=$(awk -v v=$3 -v r=$ref 'BEGIN { printf "%.2f", r ? v / r : 0 }')
		echo "csv:density.csv:$pct,$n,$1,$2,$3,$ratio,$fits"
		echo "bench: density: $pct% active, $n VMs, $1: local quotas $2 MiB, $3 pages/s per VM, ${ratio}x DRAM only, fits $fits"
	done
}

for pct in 50 80; do
	fd=0 fs=0 fa=0 okd=1 oks=1 oka=1 r=
	for n in 2 4 6 8; do
		point $pct $n > /tmp/point.out
		cat /tmp/point.out
		r=$(grep '^csv:' /tmp/point.out | sed 's/^csv:density.csv://')
		[ "$(echo "$r" | awk -F, '$3 == "dram-only" { print $7 }')" = 1 ] && [ $okd = 1 ] && fd=$n || okd=0
		[ "$(echo "$r" | awk -F, '$3 == "static" { print $7 }')" = 1 ] && [ $oks = 1 ] && fs=$n || oks=0
		[ "$(echo "$r" | awk -F, '$3 == "autopilot" { print $7 }')" = 1 ] && [ $oka = 1 ] && fa=$n || oka=0
	done
	echo "bench: density: $pct% active: VMs that fit 256 MiB of DRAM: DRAM only $fd, static split $fs, autopilot $fa"
	bench_goal density-$pct '>=' "$fs" "$fa" "" "" VMs \
		"the autopilot fits as many VMs as the static split, $pct% active (cxl2, TCG; VMs that keep 90% of DRAM only's rate)"
done
