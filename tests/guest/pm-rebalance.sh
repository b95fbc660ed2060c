# rig-topologies: nvdimm-numa
# rig-core: yes (on Linux 6.1 too: the kernels differ here)
# THEORY OF OPERATION: rebalancing between pools (issue 51). Four
# smart-idle domains of 32 MiB, all in the pool tier (local quota 0),
# spread over p0 and p1 by placement, each a writer stamping all its
# pages while a checker verifies them. Tiering samples them (mode
# "sample": no tier moves), so their chunks are hot, and every sampled
# refault counts in its pool's access factor. Rebalancing is on
# (rebalance_rate_mb 32, checks every 500 ms, contended after 3 checks in
# a row 25% above the other pool).
#   1. The pools even: for 10 s nothing is contended and nothing moves.
#   2. p0 made busy as another host's VMs on its shared device would make
#      it: poolmem-agent's remote_load gives p0 an access factor 50 times
#      what the domains put on the two pools. Within a deadline p0 is
#      contended, and the hot chunks leave it: judged from vm map (no
#      domain chunk left on p0) and from p0's node (its used memory falls
#      by about what left), not from the module's counters alone.
#   3. Throughout, sampled every 0.5 s: no tier above its quota, each
#      domain's pool-tier use unchanged (moves stay within the pool
#      tier), and no stamp lost.
#   4. A pool that takes a removed pool's id is not contended before its
#      first check: p0, still contended, is removed and registered again
#      (the same id) while the next check is a minute away.
# With the decision broken (pm_rb_dest() never naming a pool), step 2
# fails; without the removal clearing the pool's pm_pools_contended bit, step 4 does.
. /rig/tests/lib/common.sh
pm_pools_up

P=/sys/module/poolmem/parameters
for f in tiering_period_ms tiering_cold_periods rebalance_rate_mb rebalance_period_ms rebalance_margin_pct \
	rebalance_periods rebalance_af_floor; do
	eval "old_$f=\$(cat $P/$f)"
done
restore() {
	touch /tmp/rb.stop
	kill ${qs:-} 2>/dev/null || true
	echo "0 0" > $POOLSYS/p0/remote_load 2>/dev/null || true
	for f in tiering_period_ms tiering_cold_periods rebalance_rate_mb rebalance_period_ms rebalance_margin_pct \
		rebalance_periods rebalance_af_floor; do
		eval "echo \$old_$f > $P/$f" 2>/dev/null || true
	done
}
trap restore EXIT
# sampling that sees a writer's pass as hot under TCG (as pm-autopilot)
echo 1000 > $P/tiering_period_ms
echo 10 > $P/tiering_cold_periods
echo 500 > $P/rebalance_period_ms
echo 25 > $P/rebalance_margin_pct
echo 3 > $P/rebalance_periods
echo 256 > $P/rebalance_af_floor
echo 32 > $P/rebalance_rate_mb

# The pools idle first: an earlier test's load (pm-offline's churner, say)
# stays in a pool's Af for four windows, and smart idle would put every
# chunk on the other pool.
idle() { [ "$(pool_attr p0 access_factor)" = 0 ] && [ "$(pool_attr p1 access_factor)" = 0 ]; }
wait_for 60 idle || fail "the pools' access factors $(pool_attr p0 access_factor) and $(pool_attr p1 access_factor) did not decay to 0 in 60 s"
vms="ra rb rc rd"
for v in $vms; do
	poolctl vm create $v --size 32M --local 0 --pool 32M --pools p0,p1 --pool-select smart-idle >/dev/null
	poolctl vm set $v --tiering sample --scan-rate 64M --hot-threshold 8s >/dev/null
done
rm -f /tmp/rb.stop
pids=
for v in $vms; do
	pmtest stamp $v 600 threads=1 until=/tmp/rb.stop > /tmp/stamp.$v 2>&1 &
	pids="$pids $!"
done

# every 0.5 s: each domain's local quota and use, pool quota and use
quota_samples $vms > /tmp/rb-samples &
qs=$!

# MiB of VM's chunks on POOL, from poolctl vm map --json
pool_mib() {
	poolctl vm map $1 --json | awk -v want="\"$2\"" '
		/"length"/ { gsub(/[^0-9]/, ""); len = $0 + 0 }
		/"pool"/ { pool = $0 }
		/}/ && len > 0 { if (index(pool, want)) n += len; len = 0 }
		END { print int(n / 1048576) }'
}
on_p0() { local n=0 v; for v in $vms; do n=$((n + $(pool_mib $v p0))); done; echo $n; }
rebalanced() { echo $(($(pool_attr p0 rebalanced_chunks) + $(pool_attr p1 rebalanced_chunks))); }
node_used_mib() { # MemUsed of node $1, MiB
	awk '/MemUsed:/ { print int($4 / 1024) }' /sys/devices/system/node/node$1/meminfo
}
report() {
	for p in p0 p1; do
		info "  $p: af $(pool_attr $p access_factor), remote_load $(cat $POOLSYS/$p/remote_load), contended $(pool_attr $p contended), rebalanced $(pool_attr $p rebalanced_chunks), allocated $(($(pool_attr $p allocated_bytes) / MiB)) MiB"
	done
	for v in $vms; do
		info "  $v: p0 $(pool_mib $v p0) MiB, p1 $(pool_mib $v p1) MiB, heat $(dom_attr $v heat), rebalanced $(dom_attr $v rebalanced_chunks)"
	done
}

# every page written once: all chunks present, spread by placement
wait_for 60 sh -c "for v in $vms; do [ \$(cat $DOMSYS/\$v/pool_bytes) -eq $((32 * MiB)) ] || exit 1; done" ||
	fail "the writers did not touch every chunk in 60 s"
p0_start=$(on_p0)
info "placement: $p0_start MiB of 128 on p0"
[ "$p0_start" -ge 16 ] || fail "placement put only $p0_start MiB on p0: the test shows nothing"

# 1. even pools: nothing moves
sleep 10
report
check_eq "chunks rebalanced while the pools are even" 0 "$(rebalanced)"
check_eq "p0 contended while the pools are even" 0 "$(pool_attr p0 contended)"

# 2. p0 busy: another host's load, 50 times what the domains give both pools
af=$(($(pool_attr p0 access_factor) + $(pool_attr p1 access_factor)))
busy=$(( (af > 100 ? af : 100) * 50 ))
node0=$(pool_attr p0 node)
used0=$(node_used_mib $node0)
echo "$busy 0" > $POOLSYS/p0/remote_load
t0=$(uptime_s)
wait_for 20 sh -c "[ \$(cat $POOLSYS/p0/contended) = 1 ]" || { report; fail "p0 not contended 20 s after remote_load $busy"; }
drained() { [ "$(on_p0)" -eq 0 ]; }
wait_for 60 drained || { report; fail "$(on_p0) MiB of the domains still on p0 60 s after it became busy"; }
secs=$(awk -v a=$t0 -v b=$(uptime_s) 'BEGIN { printf "%.0f", b - a }')
freed=$((used0 - $(node_used_mib $node0)))
report
info "ok: p0 busy (remote_load $busy): its $p0_start MiB of hot chunks left in $secs s; $(rebalanced) chunks rebalanced; node $node0 used $freed MiB less"
[ "$(rebalanced)" -ge $((p0_start / 2)) ] || fail "rebalanced_chunks $(rebalanced), for $p0_start MiB moved"
[ "$freed" -ge $((p0_start * 3 / 4)) ] || fail "node $node0's used memory fell by $freed MiB, not about $p0_start"
check_eq "p1 contended" 0 "$(pool_attr p1 contended)"

# 3. quotas and the pool tier's use at every sample; no stamp lost
kill $qs; qs=
awk '
	$1 == "--" { n++; next }
	{ if ($3 > $2 || $5 > $4) { print "over quota: " $0; bad = 1 }
	  if ($5 != 33554432 && seen[$1]) { print "pool-tier use changed: " $0; bad = 1 }
	  if ($5 == 33554432) seen[$1] = 1 }
	END { printf "%d samples\n", n; exit bad }' /tmp/rb-samples > /tmp/rb-judged ||
	{ cat /tmp/rb-judged; fail "a quota broken, or a move left the pool tier (samples above)"; }
info "ok: $(tail -n 1 /tmp/rb-judged), every tier within its quota, the pool tier's use unchanged"
touch /tmp/rb.stop
for p in $pids; do wait $p || { cat /tmp/stamp.*; fail "a stamp was lost"; }; done
grep -h "wrong_bytes" /tmp/stamp.* | sed "s/^/$TEST: /"
for v in $vms; do pmtest domain-destroy $v >/dev/null; done

# 4. the id of a removed pool, taken again, starts uncontended
check_eq "p0 contended after its domains went" 1 "$(pool_attr p0 contended)"
id0=$(pool_attr p0 id)
echo 60000 > $P/rebalance_period_ms
sleep 1 # the check queued with the old period runs; the next is a minute away
check_eq "p0 contended with the next check a minute away" 1 "$(pool_attr p0 contended)"
pmtest pool-remove p0 >/dev/null || fail "p0 could not be removed (no domain is left)"
pmtest pool-add p0 $node0 >/dev/null || fail "p0 could not be registered again on node $node0"
check_eq "the new p0's id" $id0 "$(pool_attr p0 id)"
check_eq "the new p0 contended before its first check" 0 "$(pool_attr p0 contended)"
