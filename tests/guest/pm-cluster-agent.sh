# rig-topologies: nvdimm-numa
# rig-debug: skip memory hotplug of whole blocks, as pm_pools_up does; the ledger's logic is tested on the host
# rig-needs: etcd openssl libcurl
# THEORY OF OPERATION: poolmem-agent onlines exactly the extents of a
# shared device that the ledger gives it (issue 15). Here the ledger is an
# etcd inside the guest, on its loopback, and the "shared device" is one
# NVDIMM's dax device, kmem-bound with its blocks offline. The test:
#  1. registers it in 128 MiB extents, and lets another "host" (poolctl
#     cluster claim) hold two of them;
#  2. starts the agent wanting 3: the ledger shows 3 for this host, and
#     exactly those extents' memory blocks are online (the other host's
#     and the free ones stay offline), as a pool;
#  3. stops etcd (SIGSTOP: connections hang): the agent fences itself,
#     every block of its extents offline, before its 4 s lease could run
#     out (a first version did so only after 6.8 s: each step waited out
#     its full HTTP timeout; now no call outlasts the deadline); etcd resumes:
#     the agent starts a new life and onlines 3 extents again;
#  4. a restart: SIGTERM keeps the memory online (on_stop = keep, the
#     default), the next start takes the lease over; a tenant's stamps on
#     every page of the extents are intact after it;
#  5. on_outage = "keep": etcd stopped for twice the lease; every block
#     stays online throughout, then the agent replaces its lease and
#     reclaims the same extents, and the stamps are all there;
#  6. poolmem-agent release: every extent offline and given back.
# The agent talks to etcd over TLS with a client certificate, which etcd's
# TLS listener requires (a client without one is refused); the test's own
# poolctl calls use etcd's plain loopback listener.
. /rig/tests/lib/common.sh
command -v etcd >/dev/null || skip "etcd not in the image"
pm_load
pm_clean
ip link set lo up 2>/dev/null || ifconfig lo 127.0.0.1 up
daxes=$(devices_to_system_ram)
dax=$(echo "$daxes" | tail -n 1)
node=$(dax_node "$dax")
# the node's pool from earlier tests goes (pm_pools_up makes it again)
for p in $(pmtest pool-list); do
	[ "$(pool_attr "$p" node)" = "$node" ] && { pmtest pool-remove "$p" >/dev/null || fail "pool $p: remove"; }
done
for b in $(node_blocks "$node"); do
	[ "$(cat $MEMSYS/$b/state)" = offline ] || echo offline > $MEMSYS/$b/state || fail "$b: offline"
done
nblocks=$(node_blocks "$node" | wc -l)
bs=$(block_bytes)
info "$dax on node $node: $nblocks blocks of $((bs / MiB)) MiB"
ext=$((128 * MiB))
[ $bs -le $ext ] || skip "memory blocks larger than 128 MiB"
per=$((ext / bs))
n=$((nblocks / per))

rm -rf /tmp/etcd
# the agent's ledger over TLS: etcd also listens on 2381 with the rig's
# certificates (scripts/rig/mkimage) and requires a client certificate there
T=/rig/tls
[ -f $T/cli.pem ] || skip "no TLS certificates in the image (openssl on the host)"
etcd --name g --data-dir /tmp/etcd --listen-client-urls http://127.0.0.1:2379,https://127.0.0.1:2381 \
	--advertise-client-urls http://127.0.0.1:2379 --listen-peer-urls http://127.0.0.1:2380 \
	--cert-file $T/srv.pem --key-file $T/srv.key --trusted-ca-file $T/ca.pem --client-cert-auth \
	--initial-advertise-peer-urls http://127.0.0.1:2380 --initial-cluster g=http://127.0.0.1:2380 \
	> /tmp/etcd.log 2>&1 &
epid=$!
up() { poolctl cluster status >/dev/null 2>&1; }
wait_for 30 up || fail "etcd did not start: $(tail -n 5 /tmp/etcd.log)"
poolctl cluster register dcd0 --size $((n * ext)) --extent 128M
poolctl cluster claim dcd0 --host other --index 0,1 --ttl 60 > /tmp/other.log 2>&1 &
opid=$!
claimed_other() { grep -q claimed /tmp/other.log; }
wait_for 20 claimed_other || fail "the other host's claim: $(cat /tmp/other.log)"

out=$(poolctl cluster --etcd https://127.0.0.1:2381 --cacert $T/ca.pem status 2>&1) &&
	fail "etcd's TLS listener took a client without a certificate: $out"
info "ok: without a client certificate: $out"
cat > /tmp/agent.toml <<TOML
host = "g1"
etcd = "https://127.0.0.1:2381"
etcd_cacert = "$T/ca.pem"
etcd_cert = "$T/cli.pem"
etcd_key = "$T/cli.key"
ttl_s = 4
fence_margin_s = 1.5
[[device]]
name = "dcd0"
dax = "$dax"
pool = "sh0"
want = 3
TOML
poolmem-agent --config /tmp/agent.toml > /tmp/agent.log 2>&1 &
apid=$!
joined() { grep -q joined /tmp/agent.log; }
wait_for 30 joined || fail "agent: $(cat /tmp/agent.log)"
info "$(cat /tmp/agent.log)"

# which extents the ledger gives g1, and which blocks are online
mine() { poolctl cluster status --json | tr -d ' \n' | grep -o '"device":"dcd0","epoch":[0-9]*,"host":"g1","index":[0-9]*' | sed 's/.*"index"://' | sort -n | xargs; }
online_blocks_of_node() {
	for b in $(node_blocks "$node"); do [ "$(cat $MEMSYS/$b/state)" = online ] && echo "${b#memory}"; done | sort -n | xargs
}
blocks_of() { # extent indexes -> the node's block numbers, in order
	local all i
	all=$(node_blocks "$node" | sed 's/memory//' | sort -n | xargs)
	for i in "$@"; do
		echo "$all" | tr ' ' '\n' | sed -n "$((i * per + 1)),$(((i + 1) * per))p"
	done | sort -n | xargs
}
set -- $(mine)
check_eq "extents the ledger gives g1" 3 $#
for i in "$@"; do [ "$i" -ge 2 ] || fail "g1 got extent $i, held by the other host"; done
check_eq "online blocks: exactly g1's extents" "$(blocks_of "$@")" "$(online_blocks_of_node)"
[ -d $POOLSYS/sh0 ] || fail "no pool sh0 on node $node"
check_eq "pool sh0's node" "$node" "$(pool_attr sh0 node)"

# etcd stops: the agent fences itself before its lease could run out
kill -STOP $epid
t0=$(uptime_s)
offline_all() { [ -z "$(online_blocks_of_node)" ]; }
wait_for 10 offline_all || fail "the agent kept its blocks online with no ledger: $(cat /tmp/agent.log)"
t1=$(uptime_s)
dt=$(echo "$t0 $t1" | awk '{ printf "%.1f", $2 - $1 }')
info "every block offline $dt s after etcd stopped (lease 4 s, self-fence margin 1.5 s)"
# the last renewal came before the stop: offline must come before the lease could run out
echo "$dt" | awk '{ exit !($1 < 4.0) }' || fail "offline only $dt s after etcd stopped: past the 4 s lease"
# the line comes after the last block went offline
wait_for 5 grep -q "fenced itself" /tmp/agent.log || fail "agent did not say it fenced itself: $(cat /tmp/agent.log)"
kill -CONT $epid
back() { [ -n "$(online_blocks_of_node)" ] && [ "$(mine | wc -w)" = 3 ]; }
wait_for 30 back || fail "the agent did not come back: $(cat /tmp/agent.log); $(poolctl cluster status)"
set -- $(mine)
check_eq "after the pause: online blocks are g1's extents" "$(blocks_of "$@")" "$(online_blocks_of_node)"
grep -q "back in the ledger" /tmp/agent.log || fail "agent did not say it is back: $(cat /tmp/agent.log)"

# a restart (SIGTERM, on_stop keep: systemctl restart) keeps the memory
# online, and the next start takes the lease over: a tenant's stamps on
# every page of the 3 extents are all there after it
held_blocks=$(online_blocks_of_node)
pmtest domain-create tenant 240M 0 240M chunk=2M pools=sh0 >/dev/null || fail "tenant domain"
pmtest host-stamp tenant 4242 >/dev/null || fail "stamping the tenant"
kill -TERM $apid
wait $apid || fail "agent exit: $(cat /tmp/agent.log)"
grep -q "stopped, .* kept online under lease" /tmp/agent.log || fail "agent did not keep its memory: $(tail -n 3 /tmp/agent.log)"
check_eq "online blocks after SIGTERM (kept for the next start)" "$held_blocks" "$(online_blocks_of_node)"
poolmem-agent --config /tmp/agent.toml > /tmp/agent2.log 2>&1 &
apid=$!
took() { grep -q "took over its last life's lease" /tmp/agent2.log; }
wait_for 30 took || fail "the restarted agent did not take the lease over: $(cat /tmp/agent2.log)"
info "$(head -n 1 /tmp/agent2.log)"
check_eq "g1's extents after the restart" "$*" "$(mine)"
check_eq "online blocks after the restart" "$held_blocks" "$(online_blocks_of_node)"
out=$(pmtest host-verify tenant 4242) || fail "the tenant's stamps changed across the restart: $out"
info "ok: restart: $out"
# on_outage = keep: etcd gone for twice the lease (8 s), the memory stays
# online throughout; once etcd answers the agent replaces its lease and
# reclaims the same extents: the tenant's stamps are all there
kill -TERM $apid
wait $apid || fail "agent exit: $(cat /tmp/agent2.log)"
{ echo 'on_outage = "keep"'; cat /tmp/agent.toml; } > /tmp/agent.toml.new && mv /tmp/agent.toml.new /tmp/agent.toml
poolmem-agent --config /tmp/agent.toml > /tmp/agent3.log 2>&1 &
apid=$!
took3() { grep -q "took over its last life's lease" /tmp/agent3.log; }
wait_for 30 took3 || fail "the agent (on_outage keep) did not take the lease over: $(cat /tmp/agent3.log)"
kill -STOP $epid
t0=$(uptime_s)
while awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { exit !(b - a < 8) }'; do
	[ "$(online_blocks_of_node)" = "$held_blocks" ] || fail "on_outage keep: blocks went offline $(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { print b - a }') s into the outage: $(cat /tmp/agent3.log)"
	sleep 0.5
done
kill -CONT $epid
relet() { grep -q "new lease .* 3 kept online, 0 offlined" /tmp/agent3.log; }
wait_for 30 relet || fail "the agent did not reclaim its extents after the outage: $(cat /tmp/agent3.log)"
info "$(grep 'new lease' /tmp/agent3.log)"
check_eq "g1's extents after the outage" "$*" "$(mine)"
check_eq "online blocks after the outage" "$held_blocks" "$(online_blocks_of_node)"
out=$(pmtest host-verify tenant 4242) || fail "the tenant's stamps changed across the outage: $out"
info "ok: outage of 2x the lease with on_outage keep: $out"
pmtest domain-destroy tenant >/dev/null
# poolmem-agent release: the host gives its memory back and leaves
kill -TERM $apid
wait $apid || fail "agent exit: $(cat /tmp/agent3.log)"
poolmem-agent --config /tmp/agent.toml release > /tmp/release.log 2>&1 || fail "release: $(cat /tmp/release.log)"
check_eq "online blocks after release" "" "$(online_blocks_of_node)"
check_eq "g1's extents after release" "" "$(mine)"
kill -TERM $opid 2>/dev/null; wait $opid 2>/dev/null || true
poolctl pool remove sh0 >/dev/null || fail "pool sh0: remove"
kill $epid; wait $epid 2>/dev/null || true
info "ok: the agent onlines exactly its extents and fences itself"
