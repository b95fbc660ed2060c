# rig-topologies: nvdimm-numa
# rig-core: yes (on Linux 6.1 too: the kernels differ here)
# THEORY OF OPERATION: the DRAM autopilot (poolctl autopilot run) moves
# local quota to where each VM's hot set is, within a budget. Four VMs of
# 256 MiB start with equal local quotas of 64 MiB. Each is a writer
# stamping the pages of its hot set (16, 32, 64 and 128 MiB from offset
# 0) after one pass over all its memory, while a checker verifies them.
# Tiering samples each VM's chunks (the heat the autopilot measures) and
# moves hot chunks into whatever local quota the autopilot gives.
#
# The budget, 320 MiB, is far below what the VMs want while their first
# pass makes all of them look hot, and above the real hot sets with their
# margin (268 MiB). Checks, each with a deadline, judged from the
# kernel's figures (vm map, sysfs), not from the autopilot's report:
#   - every VM's hot set becomes local (>= 90% of its chunks in vm map);
#   - the VMs' local use (sysfs local_bytes) stays within the budget at
#     every sample, and no tier's use ever exceeds its quota;
#   - a fifth VM arriving gets its min (32 MiB, from vm create
#     --autopilot-min, read by the running daemon); bounds that contradict
#     themselves make nothing;
#   - a VM whose hot set grows gets more, and one whose hot set shrank
#     gives back;
#   - SIGTERM leaves the quotas where they are;
#   - SIGKILL mid-move (a smaller budget, a slow rate) leaves every tier
#     within its quota, and the next run first finishes the moves the
#     kernel reports pending (moves_pending_bytes), then keeps the budget;
#   - no stamp is lost.
. /rig/tests/lib/common.sh
pm_pools_up

# sampling that sees a writer's pass as hot under TCG: a refault within
# 8 s is hot, none for 10 periods of 1 s is cold
echo 1000 > /sys/module/poolmem/parameters/tiering_period_ms
echo 10 > /sys/module/poolmem/parameters/tiering_cold_periods
budget=$((320 * MiB))
vms="a b c d"
set -- 16 32 64 128
for v in $vms; do
	poolctl vm create $v --size 256M --local 64M --pool 256M --pools p0,p1 >/dev/null
	poolctl vm set $v --tiering on --scan-rate 64M --hot-threshold 8s >/dev/null
	echo $(($1 * MiB)) > /tmp/hot.$v
	eval hot_$v=$1
	shift
done
mkdir -p /etc/poolmem
cat > /tmp/autopilot.toml <<EOF
[autopilot]
budget = "320M"
rate = "64M"
interval = "2s"
windows = 4
EOF
rm -f /tmp/ap.stop
pids=
for v in $vms; do
	pmtest stamp $v 600 threads=1 hotfile=/tmp/hot.$v until=/tmp/ap.stop > /tmp/stamp.$v 2>&1 &
	pids="$pids $!"
done
trap 'touch /tmp/ap.stop; kill ${ap:-} ${qs:-} 2>/dev/null || true' EXIT

# every 0.5 s: each VM's local quota and use, pool quota and use (sysfs)
quota_samples $vms e > /tmp/ap-samples &
qs=$!

# local MiB of [FROM, TO) MiB of VM, from poolctl vm map --json
local_mib() {
	poolctl vm map $1 --json | awk -v a=$(($2 * MiB)) -v b=$(($3 * MiB)) '
		/"offset"/ { gsub(/[^0-9]/, ""); off = $0 + 0 }
		/"length"/ { gsub(/[^0-9]/, ""); len = $0 + 0 }
		/"pool"/ { pool = $0 }
		/}/ && len > 0 {
			if (pool ~ /"local"/) {
				s = off > a ? off : a; e = off + len < b ? off + len : b
				if (e > s) n += e - s
			}
			len = 0
		}
		END { print int(n / 1048576) }'
}
hot_local() { # VM: is >= 90% of its hot set local?
	local h=$(cat /tmp/hot.$1) l
	l=$(local_mib $1 0 $((h / MiB)))
	[ $((l * 10)) -ge $((h / MiB * 9)) ]
}
all_hot_local() { for v in $vms; do hot_local $v || return 1; done; }
report() {
	for v in $vms e; do
		[ -d $DOMSYS/$v ] || continue
		info "  $v: quota $(($(dom_attr $v local_quota_bytes) / MiB)) MiB, local $(($(dom_attr $v local_bytes) / MiB)) MiB, hot set local $(local_mib $v 0 $(($(cat /tmp/hot.$v 2>/dev/null || echo 0) / MiB))) of $(($(cat /tmp/hot.$v 2>/dev/null || echo 0) / MiB)) MiB, heat $(dom_attr $v heat), promotions $(dom_attr $v promotions), demotions $(dom_attr $v demotions), move retries $(dom_attr $v move_retries)"
	done
}

# at the start the biggest hot set is half in the pool
sleep 4
hot_local d && fail "d's hot set is local before the autopilot ran: the test shows nothing"
poolctl autopilot advise --config /tmp/autopilot.toml
poolctl autopilot run --config /tmp/autopilot.toml --state /tmp/ap-state.json > /tmp/ap.log 2>&1 &
ap=$!

# 1. every hot set local
t0=$(uptime_s)
wait_for 90 all_hot_local || { report; cat /tmp/ap.log; grep -h . /tmp/stamp.*; fail "hot sets not local after 90 s"; }
info "ok: every hot set local after $(awk -v a=$t0 -v b=$(uptime_s) 'BEGIN { printf "%.0f", b - a }') s"
report
# 90% of a hot set local can come before the last step of its quota (the rate)
quota_holds_hot() { [ $(dom_attr $1 local_quota_bytes) -ge $(cat /tmp/hot.$1) ]; }
for v in $vms; do
	wait_for 30 quota_holds_hot $v || fail "$v: local quota $(dom_attr $v local_quota_bytes) below its hot set after 30 s"
done
poolctl autopilot status --state /tmp/ap-state.json

# 2. a fifth VM gets its min, given where it is made; bad bounds make nothing
if poolctl vm create e --size 256M --local 0 --pool 256M --pools p0,p1 --autopilot-min 64M \
	--autopilot-max 32M > /dev/null 2> /tmp/ap-err; then
	fail "vm create took a min above its max"
fi
grep -q "^poolctl: e: autopilot min 64M is above max 32M" /tmp/ap-err || fail "error: $(cat /tmp/ap-err)"
[ ! -e $DOMSYS/e ] || fail "vm create with bad bounds made domain e"
poolctl vm set nosuch --autopilot-min 1M > /dev/null 2> /tmp/ap-err && fail "vm set took an unknown VM"
grep -q "nosuch" /tmp/ap-err || fail "error does not name the VM: $(cat /tmp/ap-err)"
poolctl vm create e --size 256M --local 0 --pool 256M --pools p0,p1 --autopilot-min 48M >/dev/null
check_eq "e's bounds after vm set" "e: autopilot bounds now min 32M, max 128M, SLO the default" \
	"$(poolctl vm set e --autopilot-min 32M --autopilot-max 128M)"
poolctl vm set e --tiering on --scan-rate 64M --hot-threshold 8s >/dev/null
wait_for 30 sh -c "[ \$(cat $DOMSYS/e/local_quota_bytes) -ge $((32 * MiB)) ]" ||
	fail "e's local quota $(dom_attr e local_quota_bytes), not its min 32 MiB, after 30 s"
info "ok: e got its min: $(($(dom_attr e local_quota_bytes) / MiB)) MiB"

# 3. a grows (16 -> 64 MiB), d shrinks (128 -> 32 MiB)
qa=$(dom_attr a local_quota_bytes) qd=$(dom_attr d local_quota_bytes)
echo $((64 * MiB)) > /tmp/hot.a
echo $((32 * MiB)) > /tmp/hot.d
wait_for 150 sh -c "[ \$(cat $DOMSYS/a/local_quota_bytes) -ge $((64 * MiB)) ] &&
	[ \$(cat $DOMSYS/d/local_quota_bytes) -lt $qd ]" ||
	{ report; fail "a's quota $(dom_attr a local_quota_bytes) (was $qa), d's $(dom_attr d local_quota_bytes) (was $qd) after 150 s"; }
wait_for 90 hot_local a || { report; fail "a's grown hot set not local after 90 s"; }
info "ok: a grew to $(($(dom_attr a local_quota_bytes) / MiB)) MiB, d gave back to $(($(dom_attr d local_quota_bytes) / MiB)) MiB"
report

# 4. SIGTERM: the quotas stay
kill -TERM $ap
wait $ap || fail "autopilot run exited $? on SIGTERM"
ap=
before=$(cat $DOMSYS/[a-e]/local_quota_bytes | xargs)
sleep 3
check_eq "local quotas 3 s after SIGTERM" "$before" "$(cat $DOMSYS/[a-e]/local_quota_bytes | xargs)"
grep -q "the quotas stay as they are" /tmp/ap.log || fail "no stop line in the log"
grep -c "autopilot: .*local quota" /tmp/ap.log | xargs -I{} echo "$TEST: {} decision lines logged"

# 5. killed mid-move: a budget 96 MiB smaller, moved at 4 MiB/s, a decision
# every 8 s (32 MiB of quota change each, 8 s of moves)
pending() { for v in $vms e; do [ $(dom_attr $v moves_pending_bytes) -eq 0 ] || return 0; done; return 1; }
pending_mib() { cat $DOMSYS/[a-e]/moves_pending_bytes | awk '{ n += $1 } END { print int(n / 1048576) }'; }
pending_8m() { [ $(pending_mib) -ge 8 ]; }
poolctl autopilot run --config /tmp/autopilot.toml --budget 224M --rate 4M --interval 8s --reclaim eager \
	--state /tmp/ap-state.json > /tmp/ap2.log 2>&1 &
ap=$!
wait_for 60 pending_8m || { cat /tmp/ap2.log; fail "not 8 MiB of moves pending within 60 s of a smaller budget"; }
kill -KILL $ap
wait $ap 2>/dev/null || true
ap=
poolctl vm show d | grep -E "local|moving" | sed "s/^/$TEST:   /"
left=$(pending_mib)
[ "$left" -gt 0 ] || fail "nothing left to move at the kill: the test shows nothing"
info "killed (SIGKILL) with $left MiB to move; quotas $(cat $DOMSYS/[a-e]/local_quota_bytes | awk '{ printf "%d ", $1 / 1048576 }')MiB"
poolctl autopilot run --config /tmp/autopilot.toml --budget 224M --rate 64M --interval 2s \
	--state /tmp/ap-state.json > /tmp/ap3.log 2>&1 &
ap=$!
settled() { ! pending; }
wait_for 60 settled ||
	{ cat /tmp/ap3.log; fail "$(pending_mib) MiB still pending 60 s after the restart"; }
grep -q "an earlier run left" /tmp/ap3.log || { cat /tmp/ap3.log; fail "the restart did not finish the moves first"; }
within_budget() { [ $(cat $DOMSYS/[a-e]/local_quota_bytes | awk '{ n += $1 } END { print n }') -le $((224 * MiB)) ]; }
wait_for 60 within_budget || { report; fail "local quotas above the new budget 60 s after the restart"; }
info "ok: the restart moved $(grep "an earlier run left" /tmp/ap3.log | awk '{ s = s $2 " " $4 " " $5 ", " } END { print s }')first; quotas within 224 MiB"
kill -TERM $ap
wait $ap || fail "autopilot run exited $? on SIGTERM"
ap=

# 6. budget and quotas at every sample; no stamp lost
kill $qs; qs=
awk -v budget=$budget '
	$1 == "--" { if (sum > budget) { print "local use " sum " above the budget"; bad = 1 }
		     if (sum > peak) peak = sum; sum = 0; n++; next }
	{ sum += $3; if ($3 > $2 || $5 > $4) { print "over quota: " $0; bad = 1 } }
	END { printf "%d samples, local use at most %d MiB\n", n, peak / 1048576; exit bad }' /tmp/ap-samples > /tmp/ap-judged ||
	{ cat /tmp/ap-judged; fail "budget or a quota broken (samples above)"; }
info "ok: $(tail -n 1 /tmp/ap-judged), within the budget (320 MiB) and every quota"
touch /tmp/ap.stop
for p in $pids; do wait $p || { cat /tmp/stamp.*; fail "a stamp was lost"; }; done
grep -h "wrong_bytes" /tmp/stamp.* | sed "s/^/$TEST: /"
for v in $vms e; do pmtest domain-destroy $v >/dev/null; done
echo 1000 > /sys/module/poolmem/parameters/tiering_period_ms
echo 3 > /sys/module/poolmem/parameters/tiering_cold_periods
