# rig-topologies: nvdimm-numa
# rig-core: yes (on Linux 6.1 too: the kernels differ here)
# THEORY OF OPERATION: the kernel's own memory tiering (demotion of cold
# pages in reclaim, NUMA balancing's tiering mode that promotes hot pages)
# runs beside poolmem and never moves a domain's chunks. With
# /sys/kernel/mm/numa/demotion_enabled = 1 and kernel.numa_balancing = 2
# (scanning sped up to 100 ms):
# - the pool nodes sit in a lower memory tier than node 0's DRAM
#   (/sys/devices/virtual/memory_tiering), which demotion and promotion
#   need, and pool show and the exporter say which;
# - controls, so that the test proves the features ran: anonymous memory
#   that migratepages put on a pool node and a task keeps touching is
#   promoted (pgpromote_success grows), and anonymous memory bound to
#   node 0 beyond its free memory is demoted (pgdemote_* grow);
# - meanwhile domain "still" (local and pool chunks, huge mapping) is
#   written and checked by stamp writers: every chunk keeps its host
#   physical address (pmtest map before and after), and NUMA balancing
#   does not even scan its mapping (numa_pte_updates grows by less than
#   one pass over it: since 6.7 a ->get_policy that returns NULL let the
#   scanner in, file.c);
# - domain "mover" is drained off p0 and tiered while the features run:
#   its stamps stay intact and its quotas hold (sampled), and the drain
#   moved at least the chunks that were on p0 (its moves counter).
. /rig/tests/lib/common.sh
TIERS=/sys/devices/virtual/memory_tiering
[ -d $TIERS ] || skip "no memory tiers in this kernel"
[ -e /sys/kernel/mm/numa/demotion_enabled ] || skip "no demotion in this kernel"
pm_pools_up
set -- $POOL_NODES
n0=$1 n1=$2

# the tier (memory_tierN) whose nodelist holds node $1
tier_of() {
	local t
	for t in $TIERS/memory_tier*; do
		awk -v n="$1" -F, '{ for (i = 1; i <= NF; i++) { split($i, r, "-"); if (r[2] == "") r[2] = r[1];
			if (n >= r[1] && n <= r[2]) found = 1 } } END { exit !found }' "$t/nodelist" &&
			echo "${t##*memory_tier}"
	done
	return 0	# not the last awk's status: the tier may come earlier
}
t_dram=$(tier_of 0) t_p0=$(tier_of $n0) t_p1=$(tier_of $n1)
info "memory tiers: node 0 in $t_dram, pool nodes $n0 in $t_p0, $n1 in $t_p1"
[ -n "$t_dram" ] && [ -n "$t_p0" ] && [ -n "$t_p1" ] || fail "a node in no memory tier"
[ "$t_p0" -gt "$t_dram" ] && [ "$t_p1" -gt "$t_dram" ] ||
	fail "pool nodes not in a lower tier than DRAM (tiers $t_p0 $t_p1, DRAM $t_dram)"
poolctl pool show p0 | grep -qE "^  memory tier +$t_p0 \(below DRAM's $t_dram\)" ||
	fail "pool show does not give p0's memory tier: $(poolctl pool show p0)"
check_eq "pool show --json: p0's memory tier" 1 \
	"$(poolctl pool show p0 --json | grep -c "\"memory_tier\": $t_p0")"

echo 1 > /sys/kernel/mm/numa/demotion_enabled
echo 2 > /proc/sys/kernel/numa_balancing
nb=/sys/kernel/debug/sched/numa_balancing
for k in scan_delay_ms scan_period_min_ms; do [ ! -e $nb/$k ] || echo 100 > $nb/$k; done
restore() {
	echo 0 > /proc/sys/kernel/numa_balancing
	echo 0 > /sys/kernel/mm/numa/demotion_enabled
	kill ${pids:-} 2>/dev/null || true
}
trap restore EXIT
vmstat() { awk -v k="$1" '$1 == k { print $2 }' /proc/vmstat; }

# --- the domain the kernel must leave alone ---
pmtest domain-create still 128M 32M 96M pools=p0,p1 >/dev/null
pmtest touch still 0 128M >/dev/null
before=$(pmtest map still)
upd0=$(vmstat numa_pte_updates)
pmtest stamp still 12 >/tmp/stamp.still 2>&1 &
ps=$!
pids="$ps"
sleep 6
upd_still=$(($(vmstat numa_pte_updates) - upd0))

# --- control: promotion of anonymous memory a task keeps touching ---
prom0=$(vmstat pgpromote_success)
pmtest anon-hammer 64 20 >/tmp/hammer.anon &
ph=$!
pids="$pids $ph"
wait_for 10 grep -q ready /tmp/hammer.anon || fail "anon-hammer did not start"
migratepages $ph 0 $n0 >/dev/null 2>&1 || fail "migratepages $ph 0 $n0"
wait_for 15 sh -c "[ \$(awk '\$1 == \"pgpromote_success\" { print \$2 }' /proc/vmstat) -gt $prom0 ]" ||
	fail "control: no promotion of hot anonymous memory on node $n0 (pgpromote_success $prom0)"
info "control: pgpromote_success $prom0 -> $(vmstat pgpromote_success)"
kill $ph 2>/dev/null; wait $ph 2>/dev/null || true

# --- control: demotion of anonymous memory past node 0's free memory ---
# Bound to node 0: under the default (local) policy a THP fault that finds
# node 0 short tries it without reclaim and then takes the next node in the
# zonelist, a pool node, so reclaim (and demotion) ran only when the pool
# nodes happened to be short too (CI saw pgdemote stay 0 on 6.12). With
# MPOL_BIND the allocation must reclaim node 0, and with no swap reclaiming
# anonymous memory is demoting it.
dem() { echo $(($(vmstat pgdemote_kswapd) + $(vmstat pgdemote_direct))); }
dem0=$(dem)
free0=$(($(node_memfree_kb 0) / 1024))
numactl --membind=0 pmtest anon-hold $((free0 + 256)) 3 >/tmp/hold.anon 2>&1 &
pa=$!
pids="$pids $pa"
wait $pa || fail "anon-hold of $((free0 + 256)) MiB: $(cat /tmp/hold.anon)"
[ "$(dem)" -gt "$dem0" ] || fail "control: nothing demoted under pressure on node 0 (pgdemote $dem0)"
info "control: pgdemote $dem0 -> $(dem) with $((free0 + 256)) MiB anonymous on node 0 (${free0} MiB free)"

wait $ps || fail "stamp on still: $(cat /tmp/stamp.still)"
after=$(pmtest map still)
[ "$before" = "$after" ] || fail "still: chunks moved under the kernel's tiering: before
$before
after
$after"
info "still: every chunk where poolmem put it ($(echo "$before" | wc -l) ranges)"
# one pass over the domain's PMDs counts 128 MiB / 4 KiB = 32768 updates
info "numa_pte_updates grew by $upd_still in 6 s of writers on still"
[ "$upd_still" -lt 8192 ] || fail "NUMA balancing scanned still's mapping ($upd_still PTE updates)"

# --- poolmem's own moves under the features: drain and tiering ---
pmtest domain-create mover 96M 32M 96M pools=p0,p1 >/dev/null
pmtest touch mover 0 96M >/dev/null
( while :; do cat $DOMSYS/mover/local_quota_bytes $DOMSYS/mover/pool_quota_bytes \
	$DOMSYS/mover/local_bytes $DOMSYS/mover/pool_bytes | xargs; sleep 0.2; done ) > /tmp/quota-samples &
qs=$!
pmtest stamp mover 10 >/tmp/stamp.mover 2>&1 &
pm=$!
pids="$pids $qs $pm"
sleep 1
on_p0=$(dom_pool_chunks mover p0)
moves0=$(dom_attr mover moves)
[ "${on_p0:-0}" -gt 0 ] || fail "mover: no chunk on p0 before the drain: the drain would move nothing"
poolctl pool drain p0 >/dev/null || fail "drain p0 under the kernel's tiering"
check_eq "mover: chunks left on p0 after the drain" 0 "$(dom_pool_chunks mover p0 || echo 0)"
moved=$(($(dom_attr mover moves) - moves0))
[ $moved -ge "$on_p0" ] || fail "mover: the drain moved $moved chunks, but $on_p0 were on p0"
info "mover: the drain moved $moved chunks off p0 ($on_p0 were there)"
out=$(poolctl pool undrain p0 2>&1) || fail "undrain p0: $out"
poolctl vm set mover --tiering on --scan-rate 64M >/dev/null
sleep 3
wait $pm || fail "stamp on mover: $(cat /tmp/stamp.mover)"
kill $qs; wait $qs 2>/dev/null || true
over=$(awk '$3 > $1 || $4 > $2' /tmp/quota-samples | head -n 3)
[ -z "$over" ] || fail "mover: over quota while moving: $over"
info "mover: drained and tiered, stamps intact, quotas held in $(wc -l < /tmp/quota-samples) samples"
for d in still mover; do pmtest domain-destroy $d >/dev/null; done
