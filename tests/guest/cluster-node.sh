# rig-topologies: cluster2
# THEORY OF OPERATION: one of the two hosts of scripts/rig/cluster2 (issue
# 15). Both guests map the same host file as an NVDIMM: the same physical
# memory, 128 MiB extents of a device "dcd0" the host registered in an etcd
# on the host's loopback, reached through QEMU's guestfwd at 10.0.2.100.
# Only the ledger keeps the two from using the same extent. Each guest runs
# poolmem-agent on its dax device (kmem, every block offline) and:
#  race:   R rounds, started together (a barrier in etcd): both want 2 of
#          the 3 extents (SIGHUP), so they race for them; each stamps every
#          page of a domain on what it got ({magic, tag, frame, index}
#          through its own mapping), waits until the other has stamped, and
#          reads every stamp back: an extent online on both would show the
#          other's stamps. Then want 0: offline, release.
#  stop:   gA holds 2, gB wants 3 and holds 1; the host SIGSTOPs gA past its
#          lease, fences it, gB takes the 2 and stamps them; gA resumes,
#          sees the jump, offlines (timed); gB's stamps are intact after.
#  restart: at the end each agent is restarted (SIGTERM keeps the memory,
#          the next start takes the lease over): its extents stay online
#          and its stamps verify after it; then poolmem-agent release.
#  etcd:   both cycle want 2 / want 0 while the host kills and restarts
#          etcd; at the end each host's online extents are exactly its
#          claims in the ledger, and stamps show no extent on both.
#  member: the member gA's agent uses killed for twice the lease: both keep
#   every block online, gA's agent fails over, nobody fences;
#  outage: after the restart (whose new agent has on_outage = "keep") the
#          host kills etcd for twice the lease: every online block stays
#          online throughout, the stamps verify, and the ledger still gives
#          each host exactly its extents.
# Each phase's result goes to etcd under /rig/<role>/; the host checks the
# ledger's whole history (scripts/rig/cluster2).
. /rig/tests/lib/common.sh
arg() { tr ' ' '\n' < /proc/cmdline | sed -n "s/^$1=//p" | tail -n 1; }
role=$(arg rigrole)
E=$(arg rigetcd)
rounds=$(arg rigrounds)
cycles=$(arg rigcycles)
[ -n "$role" ] && [ -n "$E" ] || fail "rigrole= and rigetcd= are the host's to give"
case $role in gA) me=1 ;; gB) me=2 ;; *) fail "role $role" ;; esac
k() { pmcluster "$E" "$@"; }
say() { k put "/rig/$role/$1" "$2" >/dev/null || fail "etcd: put $1"; }
pm_load
ip link set lo up
have_eth0() { [ -e /sys/class/net/eth0 ]; }
wait_for 20 have_eth0 || fail "no eth0 (virtio_pci, virtio_net)"
ip link set eth0 up
ip addr add 10.0.2.15/24 dev eth0
wait_for 60 k get /rig/start >/dev/null || fail "etcd at $E unreachable"

# the shared NVDIMM as devdax, its memmap in this guest's RAM (-M mem: the
# other guest's memmap would otherwise share the file), then kmem, offline
ns=$(ls -d /sys/bus/nd/devices/namespace*.0 | head -n 1 | xargs basename)
out=$(ndctl create-namespace -f -e "$ns" -m devdax -M mem 2>&1) || fail "$ns: $out"
dax=$(dax_to_system_ram | tail -n 1)
node=$(dax_node "$dax")
for b in $(node_blocks "$node"); do
	[ "$(cat $MEMSYS/$b/state)" = offline ] || echo offline > $MEMSYS/$b/state || fail "$b: offline"
done
all_blocks=$(node_blocks "$node" | sed 's/memory//' | sort -n | xargs)
info "$role: $dax on node $node, blocks $all_blocks"
say blocks "$all_blocks"

cat > /tmp/agent.toml <<TOML
etcd = "$E"
host = "$role"
ttl_s = 5
fence_margin_s = 1.5
state = "/tmp/agent-state.json"
[[device]]
name = "dcd0"
dax = "$dax"
pool = "sh0"
want = 0
TOML
poolmem-agent --config /tmp/agent.toml > /tmp/agent.log 2>&1 &
apid=$!
joined() { grep -q joined /tmp/agent.log; }
wait_for 30 joined || fail "agent: $(cat /tmp/agent.log)"

gen=1
st() { cat /tmp/agent-state.json 2>/dev/null; }
field() { st | tr -d ' ' | sed -n "s/.*\"$1\":\([0-9a-z]*\).*/\1/p"; }
held() { st | tr -d ' ' | grep -o '"index":[0-9]*' | sed 's/.*://' | sort -n | xargs; }
# want N: a new target, and wait until the agent's step under it settled
want() {
	sed -i "s/^want = .*/want = $1/" /tmp/agent.toml
	gen=$((gen + 1))
	kill -HUP $apid
	settled() { [ "$(field settled_generation)" = $gen ]; }
	wait_for ${2:-60} settled || fail "want $1: the agent did not settle: $(tail -n 5 /tmp/agent.log); $(st)"
}
blocks_of() { # extent indexes -> block numbers
	local i
	for i in "$@"; do
		echo "$all_blocks" | tr ' ' '\n' | sed -n "$((i + 1))p"
	done | sort -n | xargs
}
online_blocks() {
	for b in $all_blocks; do [ "$(cat $MEMSYS/memory$b/state)" = online ] && echo "$b"; done | xargs
}
# stamp NAME TAG: a domain over 5/8 of each extent held (two hosts with
# the same extent online would overlap on at least 1/4 of it), every page stamped
# through its mapping; the blocks the stamps landed on must be ours
stamp() {
	local n=$(held | wc -w) out
	[ $n -gt 0 ] || return 0
	# the agent keeps no zero reserve on leased memory: a stale host's
	# reserve thread would zero what another host holds
	[ "$(pool_attr sh0 zero_reserve_bytes)" = 0 ] || fail "sh0 holds a zero reserve: $(pool_attr sh0 zero_reserve_bytes) bytes"
	pmtest domain-create "$1" $((n * 80))M 0 $((n * 80))M chunk=2M pools=sh0 >/dev/null || fail "domain $1"
	out=$(pmtest host-stamp "$1" "$2") || fail "stamp $1: $out"
	for b in $(echo "$out" | awk '$1 == "block" { print $2 }'); do
		echo " $(blocks_of $(held)) " | grep -q " $b " || fail "$1: stamps landed on block $b, not one of ours ($(held))"
	done
}
verify() {
	local n=$(held | wc -w) out
	[ $n -gt 0 ] || return 0
	out=$(pmtest host-verify "$1" "$2") || fail "$1: stamps changed under us, the other host used our memory: $out"
	pmtest domain-destroy "$1" >/dev/null || fail "destroy $1"
}

# ---- race ----
t0=$(uptime_s)
got=0 short=0
r=1
while [ $r -le "$rounds" ]; do
	k barrier /rig/race/$r/go $role 2 120 || fail "round $r: no start"
	want 2
	h=$(held)
	check_eq "round $r: online blocks are the held extents'" "$(blocks_of $h)" "$(online_blocks)"
	tag=$((me * 1000000 + r))
	stamp st$r $tag
	k barrier /rig/race/$r/stamped $role 2 120 || fail "round $r: the other did not stamp"
	verify st$r $tag
	say race/$r "$h"
	n=$(echo $h | wc -w)
	got=$((got + n))
	[ $n -lt 2 ] && short=$((short + 1))
	want 0
	check_eq "round $r: offline after want 0" "" "$(online_blocks)"
	r=$((r + 1))
done
t1=$(uptime_s)
info "$role: $rounds rounds in $(echo "$t0 $t1" | awk '{ printf "%.0f", $2 - $1 }') s: $got extents held, short of 2 in $short rounds"
say race-done "$got extents in all, short of 2 in $short rounds"

# ---- stop: gA holds 2, gB wants all 3 ----
if [ $role = gA ]; then
	want 2
	# a tenant's memory on them, stamped: it must never read gB's bytes
	stamp held 1999999
	nheld=$(held | wc -w)
	say stop-held "$(held)"
	# The host stops this guest (SIGSTOP) past its lease, fences it and
	# lets gB take its extents, then resumes it. Whether this guest's clock
	# shows the pause depends on its clocksource; the agent does not rely on
	# it: the first renewal after the pause finds the lease gone. Poll until
	# our blocks are offline and say so at once: the host times it from
	# SIGCONT.
	offline_now() { [ -z "$(online_blocks)" ]; }
	while ! offline_now; do sleep 0.05; done
	say stop-offline "$(uptime_s)"
	info "gA: every block offline after the pause (clocksource $(cat /sys/devices/system/clocksource/clocksource0/current_clocksource))"
	# the lease may have run out while paused: the agent revoked the pool,
	# so the tenant's chunks went with the blocks, unread; touching them
	# is a memory error, not gB's stamps (nor its own old ones)
	check_eq "gA: the tenant's chunks revoked (80 MiB per extent)" $((nheld * 40)) "$(dom_attr held revoked_chunks)"
	out=$(pmtest touch held 0 4K read=1) && fail "gA's tenant read memory it lost: $out"
	echo "$out" | grep -q "BUS_MCEERR_AR" || fail "gA's tenant: $out"
	info "gA: its tenant's touch of the lost memory: $out"
	lost=$(dom_attr held revoked_chunks)
	pmtest domain-destroy held >/dev/null
	back() { [ "$(field fenced)" = false ] && grep -q "back in the ledger" /tmp/agent.log; }
	wait_for 30 back || fail "gA did not rejoin: $(cat /tmp/agent.log)"
	check_eq "gA after the fence: extents" "" "$(held)"
	say stop-resumed "its tenant lost $lost chunks, unread: its touch got BUS_MCEERR_AR"
else
	wait_for 120 k get /rig/gA/stop-held >/dev/null || fail "gA did not hold"
	want 3
	say stop-held "$(held)"
	# the host fences gA; then the agent takes its 2 extents
	wait_for 120 k get /rig/fenced >/dev/null || fail "the host did not fence gA"
	all3() { [ "$(held | wc -w)" = 3 ]; }
	wait_for 30 all3 || fail "gB did not take gA's extents after the fence: $(held); $(tail -n 5 /tmp/agent.log)"
	check_eq "gB: online blocks after the fence" "$(blocks_of $(held))" "$(online_blocks)"
	stamp stop 2999999
	say stop-stamped "$(held)"
	wait_for 120 k get /rig/gA/stop-resumed >/dev/null || fail "gA did not resume"
	verify stop 2999999
	info "gB: its stamps on gA's old extents are intact after gA resumed"
	want 0
fi
k barrier /rig/stop-done $role 2 120 || fail "stop phase: the other did not finish"
[ $role = gA ] && want 0

# ---- etcd restarts while both claim and release ----
k barrier /rig/etcd/go $role 2 120 || fail "etcd phase: no start"
c=1
while [ $c -le "$cycles" ]; do
	want 2 120
	want 0 120
	c=$((c + 1))
done
# the host joins this barrier once its restarts are over
k barrier /rig/etcd/cycled $role 3 300 || fail "etcd phase: the other guest or the host did not finish"
want 2 120
h=$(held)
check_eq "after the restarts: online blocks are the held extents'" "$(blocks_of $h)" "$(online_blocks)"
# the ledger's word for this host is what is online here: nothing lost, nothing extra
ledger=$(poolctl cluster --etcd "$E" status --json | tr -d ' \n')
[ -n "$ledger" ] || fail "poolctl cluster status failed"
ledger=$(echo "$ledger" |
	grep -o "\"device\":\"dcd0\",\"epoch\":[0-9]*,\"host\":\"$role\",\"index\":[0-9]*" | sed 's/.*"index"://' | sort -n | xargs)
check_eq "after the restarts: the ledger's claims of $role" "$h" "$ledger"
stamp fin $((me * 1000000 + 999))
k barrier /rig/etcd/stamped $role 2 120 || fail "etcd phase: the other did not stamp"
# global placement: the other host's load on dcd0 reaches this host's
# module through the ledger (published by its agent, read by ours, written
# to sh0's remote_load for smart idle)
say fin-alloc "$(pool_attr sh0 allocated_bytes)"
other=gA; [ $role = gA ] && other=gB
wait_for 60 k get /rig/$other/fin-alloc >/dev/null || fail "the other did not say its allocation"
oalloc=$(k get /rig/$other/fin-alloc)
remote_is() { [ "$(pool_attr sh0 remote_load | cut -d' ' -f2)" = "$oalloc" ]; }
wait_for 30 remote_is ||
	fail "$role: sh0's remote_load is '$(pool_attr sh0 remote_load)', the other host has $oalloc bytes on dcd0; agent log: $(grep -v reloaded /tmp/agent.log | tail -n 14 | tr '\n' '|'); the ledger: $(poolctl cluster --etcd "$E" status --json 2>&1 | tr -d ' \n')"
info "$role: sh0 remote_load '$(pool_attr sh0 remote_load)' (the other host's load on dcd0)"
# Neither destroys its stamped domain (verify) before both have seen the
# other's bytes: remote_load follows the other host's load as it is now,
# and a domain destroyed early takes away the value the other waits for.
# (Without this barrier the host that checked first could do just that:
# the other then read "0 0" to the end, seen in two runs.)
k barrier /rig/etcd/seen $role 2 120 || fail "etcd phase: the other did not see this host's load"
# ---- a restart keeps the memory (systemctl restart poolmem-agent: SIGTERM
# with on_stop = keep, then a new agent that takes the lease over): every
# extent stays online and the tenant's stamps are all there after it ----
h=$(held) before=$(online_blocks)
kill -TERM $apid
wait $apid || fail "agent exit: $(cat /tmp/agent.log)"
grep -q "stopped, .* kept online under lease" /tmp/agent.log || fail "$role: the agent did not keep its memory: $(tail -n 3 /tmp/agent.log)"
check_eq "$role: online blocks after SIGTERM (kept)" "$before" "$(online_blocks)"
# the new agent rides out etcd outages (the outage phase below)
{ sed -n '1,/^fence_margin_s/p' /tmp/agent.toml; echo 'on_outage = "keep"'; sed '1,/^fence_margin_s/d' /tmp/agent.toml; } > /tmp/agent.toml.new
mv /tmp/agent.toml.new /tmp/agent.toml
poolmem-agent --config /tmp/agent.toml > /tmp/agent2.log 2>&1 &
apid=$!
took() { grep -q "took over its last life's lease" /tmp/agent2.log; }
wait_for 30 took || fail "$role: the restarted agent did not take the lease over: $(cat /tmp/agent2.log)"
info "$role: $(head -n 1 /tmp/agent2.log)"
check_eq "$role: extents held after the restart" "$h" "$(held)"
check_eq "$role: online blocks after the restart" "$before" "$(online_blocks)"
verify fin $((me * 1000000 + 999))
say etcd-held "extents ${h:-none} (its agent saw $(field unreachable_rounds) rounds without etcd)"

# ---- the member this host's agent uses (gA's: the host kills it) gone for
# twice the lease: every block stays online (sampled every 0.3 s), gA's
# agent fails over to another member, nobody fences, the ledger keeps each
# host's extents ----
# the member the agent uses: the last "etcd member X answers" or "Y answers now"
member_used() {
	sed -n 's/.*etcd member \([^ ]*\) answers (.*/\1/p; s/.* \([^ ]*\) answers now (failover.*/\1/p' /tmp/agent2.log | tail -n 1
}
# through_phase NAME: the online blocks every 0.3 s, whatever etcd does
# (pmcluster retries an unreachable etcd for 30 s, so the sampler does not
# touch it), from the host's /rig/NAME/ready barrier to its /rig/NAME/back
# one (the host joins that once etcd is whole again); then none of the
# samples may differ from $before
through_phase() {
	local sampler changed
	rm -f /tmp/$1-stop
	( while [ ! -e /tmp/$1-stop ]; do online_blocks; sleep 0.3; done ) > /tmp/$1-samples &
	sampler=$!
	k barrier /rig/$1/ready $role 3 300 || fail "$1 phase: no start"
	k barrier /rig/$1/back $role 3 300 || fail "$1 phase: etcd did not come back"
	touch /tmp/$1-stop
	wait $sampler
	changed=$(grep -cvx "$before" /tmp/$1-samples || true)
	check_eq "$role: $1 phase: samples with other online blocks" 0 $changed
}
say member "$(member_used)"
lease0=$(field lease)
through_phase member
# no lease lost while a quorum stood (on_outage = keep would hide a lost one
# from the samples: a new lease would be taken and the extents reclaimed)
check_eq "$role: its lease after the member phase" "$lease0" "$(field lease)"
[ "$(field fenced)" = false ] || fail "$role: fenced while one member was down: $(tail -n 5 /tmp/agent2.log)"
check_eq "$role: extents held after the member phase" "$h" "$(held)"
failovers=$(grep -c "answers now (failover" /tmp/agent2.log || true)
[ $role = gB ] || [ "$failovers" -ge 1 ] || fail "gA's agent did not fail over: $(tail -n 5 /tmp/agent2.log)"
say member-kept "$(wc -l < /tmp/member-samples) samples, every one with blocks $before online; its agent on $(member_used), $failovers failovers"

# ---- etcd gone for twice the lease, on_outage = "keep": every extent stays
# online through it (sampled every 0.3 s), the tenant's stamps are intact,
# and once etcd is back the ledger still gives this host exactly its
# extents (no other host could claim them meanwhile: no fence) ----
stamp out $((me * 1000000 + 777))
# the host kills every member, for twice the lease
through_phase outage
samples=$(wc -l < /tmp/outage-samples)
ledger_mine() {
	poolctl cluster --etcd "$E" status --json 2>/dev/null | tr -d ' \n' |
		grep -o "\"device\":\"dcd0\",\"epoch\":[0-9]*,\"host\":\"$role\",\"index\":[0-9]*" | sed 's/.*"index"://' | sort -n | xargs
}
back_in() { [ "$(field fenced)" = false ] && [ "$(ledger_mine)" = "$h" ]; }
wait_for 30 back_in || fail "$role: after the outage the ledger gives $(ledger_mine), the agent held $h: $(tail -n 6 /tmp/agent2.log)"
check_eq "$role: online blocks after the outage" "$before" "$(online_blocks)"
! grep -qE "fenced itself|[1-9][0-9]* offlined" /tmp/agent2.log ||
	fail "$role: memory went offline in the outage: $(grep -E 'fenced itself|offlined' /tmp/agent2.log)"
verify out $((me * 1000000 + 777))
say outage "${samples} samples, every one with blocks $before online (its agent saw $(field unreachable_rounds) rounds without etcd); extents ${h:-none} still this host's in the ledger; agent: $(grep -E 'new lease|kept online' /tmp/agent2.log | tail -n 1 | sed 's/^poolmem-agent: //')"
k barrier /rig/etcd/done $role 2 120 || fail "etcd phase: the other did not finish"

kill -TERM $apid
wait $apid || fail "agent exit: $(cat /tmp/agent2.log)"
poolmem-agent --config /tmp/agent.toml release > /tmp/release.log 2>&1 || fail "$role: release: $(cat /tmp/release.log)"
check_eq "$role: online blocks after release" "" "$(online_blocks)"
info "$role: agent log: $(grep -v reloaded /tmp/agent.log | tail -n 8 | tr '\n' '|')"
info "$role: ok"
