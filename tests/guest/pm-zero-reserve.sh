# rig-topologies: nvdimm-numa
# rig-debug: core
# THEORY OF OPERATION: the zero reserve (kmod/reserve.c), with
# init_on_alloc=0 so that only poolmem's zeroing stands between tenants:
#  1. zeroing: a domain fills the whole of p0 it can get with a pattern and
#     is destroyed; the reserve refills from that memory (its refill count
#     grows by all of it); a new tenant then takes the whole reserve (hits
#     grow by all of it) and reads zeros only, everywhere;
#  2. settings: pool set --zero-reserve SIZE|PCT, shown by sysfs, pool show
#     and JSON; 0 turns it off and gives the memory back;
#  3. pressure: anonymous memory bound to p0's node asks for more than is
#     free there; the reserve gives its memory back (shrinker) and the
#     process gets it, no OOM kill;
#  4. offline: every block of p1's node goes offline straight through sysfs
#     (not poolctl) while the reserve holds units there: none is refused.
#     Then three rounds of it while the reserve's target flips and the
#     shrinker runs: an offline racing a trim must not hang.
. /rig/tests/lib/common.sh
grep -qw init_on_alloc=0 /proc/cmdline || fail "rig must boot with init_on_alloc=0"
pm_pools_up
n0=$(pool_attr p0 node)
n1=$(pool_attr p1 node)
reserve() { pool_attr $1 zero_reserve_bytes; }
at_target() { [ "$(reserve $1)" = "$(pool_attr $1 zero_reserve_target_bytes)" ]; }

# --- default: 1% of capacity, rounded down to 2 MiB units ---
check_eq "p0 setting" "1%" "$(pool_attr p0 zero_reserve)"
cap=$(pool_attr p0 capacity_bytes)
check_eq "p0 target" $((cap / 100 / (2 * MiB) * 2 * MiB)) "$(pool_attr p0 zero_reserve_target_bytes)"
wait_for 60 at_target p0 || fail "p0 reserve did not fill: $(reserve p0) of $(pool_attr p0 zero_reserve_target_bytes)"

# --- 1. zeroing ---
poolctl pool set p0 --zero-reserve 128M | grep -q "^p0: zero reserve 134217728 (128.0 MiB)" || fail "pool set output"
wait_for 60 at_target p0 || fail "p0 reserve did not fill to 128M: $(reserve p0)"
check_eq "p0 reserve after set" $((128 * MiB)) "$(reserve p0)"
# the whole reserve back to the node, then a tenant writes over all of it
poolctl pool set p0 --zero-reserve 0 >/dev/null
wait_for 30 at_target p0 || fail "p0 reserve not emptied: $(reserve p0)"
check_eq "p0 reserve off" 0 "$(reserve p0)"
free=$(($(node_memfree_kb $n0) * 1024 / (2 * MiB) * 2 * MiB - 64 * MiB))
pmtest domain-create dirty $free 0 $free tier=pool-first pools=p0 >/dev/null
pmtest fill dirty 0 $free 0xa5 >/dev/null
pmtest domain-destroy dirty >/dev/null
r0=$(pool_attr p0 zero_reserve_refills) h0=$(pool_attr p0 zero_reserve_hits)
poolctl pool set p0 --zero-reserve 128M >/dev/null
wait_for 60 at_target p0 || fail "p0 reserve did not refill: $(reserve p0)"
check_eq "units zeroed into the reserve" 64 $(($(pool_attr p0 zero_reserve_refills) - r0))
# a tenant of the reserve's size takes the whole of it: units leave the
# reserve oldest first, so its 64 units are the 64 zeroed above (refills
# while it touches go behind them)
pmtest domain-create clean 128M 0 128M tier=pool-first pools=p0 >/dev/null
pmtest expect clean 0 128M 0 || fail "a tenant read another tenant's bytes from the reserve"
check_eq "units taken from the reserve" 64 $(($(pool_attr p0 zero_reserve_hits) - h0))
pmtest domain-destroy clean >/dev/null

# --- 2. settings ---
expect_exit 2 "^poolctl: --zero-reserve 60%: a percentage from 0% to 50%" poolctl pool set p0 --zero-reserve 60%
expect_exit 2 "^poolctl: --zero-reserve 64G: above the pool's capacity" poolctl pool set p0 --zero-reserve 64G
expect_exit 3 "^poolctl: nope: no such pool" poolctl pool set nope --zero-reserve 1%
poolctl pool set p0 --zero-reserve 5% >/dev/null
check_eq "p0 setting 5%" "5%" "$(pool_attr p0 zero_reserve)"
check_eq "p0 target 5%" $((cap * 5 / 100 / (2 * MiB) * 2 * MiB)) "$(pool_attr p0 zero_reserve_target_bytes)"
poolctl pool show p0 | grep -qE "^  zero +[0-9.]+ [MGK]?i?B of [0-9.]+ MiB held pre-zeroed \(setting 5%\)" ||
	fail "pool show: $(poolctl pool show p0 | grep zero)"
poolctl pool show p0 --json | grep -q '"setting": "5%"' || fail "pool show --json: zero_reserve.setting"
grep -qE "^$n0 [0-9]+ [0-9]+ [0-9]+ [0-9]+ [0-9]+$" /sys/kernel/poolmem/zero_reserve ||
	fail "/sys/kernel/poolmem/zero_reserve has no line for node $n0: $(cat /sys/kernel/poolmem/zero_reserve)"
# poolctl node list shows every node's reserve: p0's, and the local tier's
# (node 0 has the CPUs: local_zero_reserve_mb, 64 MiB by default)
wait_for 60 sh -c "awk '\$1 == 0 && \$2 == \$3 && \$2 > 0' /sys/kernel/poolmem/zero_reserve | grep -q ." ||
	fail "local tier's reserve did not fill: $(cat /sys/kernel/poolmem/zero_reserve)"
# "NODE HELD TARGET" of each node's zero_reserve in node list --json (keys
# are sorted: "node" comes before "zero_reserve")
json_reserve() {
	poolctl node list --json | awk -F': ' '
		/"node":/ { n = $2 + 0 }
		/"held_bytes":/ { h[n] = $2 + 0 }
		/"target_bytes":/ { t[n] = $2 + 0; print n, h[n], t[n] }'
}
check_eq "node list --json: node 0's reserve (held, target)" "0 $((64 * MiB)) $((64 * MiB))" "$(json_reserve | grep '^0 ')"
check_eq "node list --json: node $n0's reserve target" "$(pool_attr p0 zero_reserve_target_bytes)" "$(json_reserve | awk -v n=$n0 '$1 == n { print $3 }')"
poolctl node list | grep -qE "^ +0 .* 64\.0 MiB\(64\.0 MiB\) " || fail "node list: node 0's reserve: $(poolctl node list)"

# --- 3. pressure: the reserve gives way, nothing is killed ---
poolctl pool set p0 --zero-reserve 512M >/dev/null
wait_for 120 at_target p0 || fail "p0 reserve did not fill to 512M: $(reserve p0)"
want=$(($(node_memfree_kb $n0) / 1024 + 256))
# the reserve is read while the memory is held (once it is let go, the
# reserve fills again)
numactl --membind=$n0 pmtest anon-hold $want 10 > /tmp/hog.out 2>&1 &
hog=$!
hog_ready() { grep -q "anon-hold: ready" /tmp/hog.out || ! kill -0 $hog 2>/dev/null; }
wait_for 240 hog_ready || fail "anon-hold did not get its memory in 240 s"
left=$(reserve p0)
wait $hog && rc=0 || rc=$?
[ $rc = 0 ] || fail "anonymous memory bound to node $n0 failed ($rc): $(cat /tmp/hog.out)"
grep -q "anon-hold: ready" /tmp/hog.out || fail "anon-hold: $(cat /tmp/hog.out)"
dmesg | grep -q "Out of memory" && fail "the OOM killer ran: $(dmesg | grep -A3 'Out of memory' | head -n 5)"
[ "$left" -lt $((512 * MiB - 256 * MiB)) ] || fail "the reserve did not give way: $left bytes held"
info "ok: $want MiB bound to node $n0 allocated; reserve gave way to $((left / MiB)) MiB"

# --- 4. offline straight through sysfs, reserve units on the blocks ---
poolctl pool set p1 --zero-reserve 256M >/dev/null
wait_for 120 at_target p1 || fail "p1 reserve did not fill: $(reserve p1)"
given=$(dmesg | grep -c "zero reserve units given back" || true)
for b in $(node_blocks $n1); do
	echo offline > $MEMSYS/$b/state || fail "offline of $b (node $n1) refused with the reserve there"
done
check_eq "p1 reserve after every block offline" 0 "$(reserve p1)"
[ "$(dmesg | grep -c "zero reserve units given back")" -gt "$given" ] ||
	fail "no block gave reserve units back: the test proved nothing"
online_node_blocks $n1 >/dev/null

# --- 4b. offline while the reserve trims itself ---
# A trim (the thread's, to a lower target, or the shrinker's) takes the
# node's whole unit list out while it walks it. An offline whose release
# ran meanwhile saw an empty list, and the units went back inside the
# range going offline: offline_pages() then retried until a signal. Now a
# trim holds offline_sem. The target flips every 0.2 s while every block
# goes offline under a 30 s timeout, three rounds. (A race: this can only
# catch it sometimes; the debug kernel runs it too.)
poolctl pool set p1 --zero-reserve 256M >/dev/null
wait_for 120 at_target p1 || fail "p1 reserve did not fill: $(reserve p1)"
( while :; do
	echo 64M > $POOLSYS/p1/zero_reserve; sleep 0.2
	echo 256M > $POOLSYS/p1/zero_reserve; sleep 0.2
	echo 2 > /proc/sys/vm/drop_caches
done ) &
flipper=$!
for round in 1 2 3; do
	for b in $(node_blocks $n1); do
		timeout 30 sh -c "echo offline > $MEMSYS/$b/state" ||
			{ kill $flipper; fail "round $round: offline of $b (node $n1) failed or hung with the reserve trimming"; }
	done
	online_node_blocks $n1 >/dev/null
	sleep 1
done
kill $flipper
wait $flipper 2>/dev/null || true
info "ok: 3 rounds of offlining node $n1 while its reserve trimmed"
poolctl pool set p0 --zero-reserve 1% >/dev/null
poolctl pool set p1 --zero-reserve 1% >/dev/null
