# rig-topologies: nvdimm-numa
# rig-core: yes (on Linux 6.1 too: the kernels differ here)
# THEORY OF OPERATION: chunks move while their VMs run. Three domains (16
# MiB local + 48 MiB pool quota each, pool p0 only) are written by
# "pmtest stamp": writer threads stamp (offset, sequence) into every page
# and check each page before rewriting it, a checker reads random pages
# through process_vm_readv and O_DIRECT (out to a brd device, back, and
# read into the domain page again). Meanwhile:
#  1. a drain of p0 is refused while a domain may use no other pool, with
#     the domain and the figures named, and nothing changes;
#  2. "vm set --pools p0,p1" moves nothing (p0 is still allowed);
#  3. "poolctl pool drain p0" moves every chunk to p1: afterwards p0 holds
#     none, its node's used memory is back to its level before the VMs, and
#     every block of it goes offline; sampled every 0.2 s during the drain,
#     the local node never held more than the local quotas, and the two
#     pool nodes together never more than the pool quotas plus the one
#     chunks in transit (drain_batch);
#  4. "vm set" grows and shrinks both tiers of a running VM: the chunks
#     that no longer fit their tier move to the other one, and a tier's
#     usage is never above its quota (sampled from sysfs);
#     tiering then promotes a VM's hot pool chunks into local quota it
#     was given, with samples unmapping chunks all along;
#  5. a change that would move chunks onto a draining pool is refused
#     (ENOSPC, figures), and the drained pool's removal takes it out of
#     every domain's pools.
# No stamp may see a wrong byte or get SIGBUS, and the kernel must log no
# WARNING (the rig checks dmesg).
. /rig/tests/lib/common.sh
pm_pools_up
n0=$(pool_attr p0 node)
n1=$(pool_attr p1 node)
modprobe brd rd_nr=1 rd_size=4096 2>/dev/null || true
[ -b /dev/ram0 ] || fail "no /dev/ram0 for the O_DIRECT checker"
# brd allocates a page (on the local node) for each sector first written:
# all 4 MiB now, so that the checker's writes do not grow the local node
# during the drain (6.1 once read 6.4 MiB of growth against 4 MiB of slack)
dd if=/dev/zero of=/dev/ram0 bs=1M count=4 oflag=direct 2>/dev/null || fail "writing /dev/ram0"
secs=300	# at most: they stop when /tmp/stamps-done appears
rm -f /tmp/stamps-done

for v in va vb vc; do
	pmtest domain-create $v 64M 16M 48M pools=p0 >/dev/null
done
home=$(dom_attr va home_node)
sync; echo 3 > /proc/sys/vm/drop_caches
base0=$(node_used_kb $n0)
pmtest stamp va $secs blockdev=/dev/ram0 until=/tmp/stamps-done > /tmp/stamp.va 2>&1 &
sva=$!
pmtest stamp vb $secs layout=small until=/tmp/stamps-done > /tmp/stamp.vb 2>&1 &
svb=$!
pmtest stamp vc $secs until=/tmp/stamps-done > /tmp/stamp.vc 2>&1 &
svc=$!
all_placed() { for v in va vb vc; do [ "$(dom_attr $v chunks)" = 32 ] || return 1; done; }
wait_for 60 all_placed || fail "domains not fully placed: $(cat $DOMSYS/v?/chunks | xargs)"
check_eq "va chunks on p0" 24 "$(dom_pool_chunks va p0)"

# 1. nowhere to go: refused before anything moves
rc=0
out=$(poolctl pool drain p0 2>&1) || rc=$?
info "$out"
check_eq "exit code of a drain that can't fit" 4 $rc
echo "$out" | grep -q "cannot drain: domain va holds 48.0 MiB there but may use only 0 B elsewhere" ||
	fail "refusal does not name the domain and figures: $out"
check_eq "p0 state after a refused drain" online "$(pool_attr p0 state)"
dmesg | grep -q "drain of pool p0: domain vc holds 48 MiB there" || fail "no log line per domain"

# 2. a second pool allowed: nothing has to move
for v in va vb vc; do poolctl vm set $v --pools p0,p1 >/dev/null; done
check_eq "moves after allowing p1" "0 0 0" "$(cat $DOMSYS/va/moves $DOMSYS/vb/moves $DOMSYS/vc/moves | xargs)"

# 3. drain while the writers run, sampling node usage. One awk, at high
# priority, reads the nodes (as node_used_kb does: the zero reserve, which
# fills and trims in the background, counts as free), the destination
# before the source. The reads are not one snapshot: MemFree and the per-cpu free
# lists (zoneinfo) are read apart, and a chunk allocated or freed between
# them counts twice. Of two reads in a row, the lower one is kept, and 4
# MiB are allowed for what skew is left. On the local node, what processes
# and caches use (anon, file, kernel stacks, page tables, slab: a chunk is
# none of these, its pages are the driver's) is left out: the sampler's
# forks and poolctl grew it by up to 3.4 MiB of the 4 here. A drain that
# kept the source chunks (+144 MiB) or put chunks on the local node shows
# far above it.
used3() {
	awk -v a=$home -v b=$n0 -v c=$n1 '
		FILENAME ~ /meminfo$/ { split(FILENAME, f, "/"); n = substr(f[6], 5) }
		FILENAME ~ /meminfo$/ && /MemTotal/ { t[n] = $4 }
		FILENAME ~ /meminfo$/ && /MemFree/ { fr[n] = $4 }
		FILENAME == "/proc/zoneinfo" && /^Node/ { z = $2; sub(",", "", z) }
		FILENAME == "/proc/zoneinfo" && $1 == "count:" { fr[z] += $2 * 4 }
		FILENAME ~ /zero_reserve$/ { fr[$1] += $3 / 1024 }
		# what processes and caches use (the sampler, poolctl, the
		# writer shells) is not the local tier: no chunk is counted there
		FILENAME ~ /meminfo$/ && $3 ~ /^(AnonPages|FilePages|KernelStack|PageTables|Slab):$/ { o[n] += $4 }
		END { print t[a] - fr[a] - o[a], t[b] - fr[b], t[c] - fr[c] }' \
		$NODESYS/node$home/meminfo $NODESYS/node$n1/meminfo $NODESYS/node$n0/meminfo /proc/zoneinfo \
		/sys/kernel/poolmem/zero_reserve
}
set -- $(used3)
before_l=$1 before_p=$(($2 + $3))
out0=$(pool_attr p0 moved_out) in1=$(pool_attr p1 moved_in)	# other tests moved chunks too
rm -f /tmp/stop-sampling
( renice -n -20 $BASHPID >/dev/null 2>&1 || true
  # of two reads in a row, the one with less in the pools, and the lesser
  # of the local node's: a skewed read does not repeat, a quota overrun
  # does (node 0's free memory moves by hundreds of kB between two reads
  # as the per-CPU lists and counters fill and drain: 6.12 once read 4516
  # kB against the 4096 of slack)
  while [ ! -e /tmp/stop-sampling ]; do
	{ used3; used3; } | awk '{ p = $2 + $3 } NR == 1 || p < best { best = p; line = $0 }
		NR == 1 || $1 < loc { loc = $1 } END { split(line, f); print loc, f[2], f[3] }'
	sleep 0.1
  done ) > /tmp/samples &
sampler=$!
LAT=/sys/kernel/debug/poolmem/move_latency	# the kernel's move latency samples (make bench)
echo 0 > $LAT
out=$(poolctl pool drain p0 --rate 32M) || fail "drain: $out"
info "$out"
lat=$(cat $LAT)
info "move latency: $(echo "$lat" | tr '\n' ' ')"
# one copy sample per 2 MiB unit moved
check_eq "2 MiB unit copies sampled by the drain" $((72 * $(dom_attr va chunk_bytes) / (2 * MiB))) \
	"$(echo "$lat" | awk '$1 == "copy_unit_ns" { print $2 }')"
touch /tmp/stop-sampling
wait $sampler
check_eq "p0 chunks after drain" 0 "$(pool_attr p0 chunks)"
check_eq "p0 allocated after drain" 0 "$(pool_attr p0 allocated_bytes)"
check_eq "p0 state" draining "$(pool_attr p0 state)"
check_eq "p1 chunks" 72 "$(pool_attr p1 chunks)"
check_eq "p0 moved_out by the drain" 72 "$(( $(pool_attr p0 moved_out) - out0 ))"
check_eq "p1 moved_in by the drain" 72 "$(( $(pool_attr p1 moved_in) - in1 ))"
for v in va vb vc; do
	check_eq "$v local bytes unchanged" $((16 * MiB)) "$(dom_attr $v local_bytes)"
	check_eq "$v chunks on p1" 24 "$(dom_pool_chunks $v p1)"
done
used0=$(node_used_kb $n0)
info "node $n0 used: $base0 kB before the VMs, $used0 kB after the drain"
[ $((used0 - base0)) -le 4096 ] || fail "node $n0 holds $((used0 - base0)) kB more than before the VMs"
info "$(wc -l < /tmp/samples) samples during the drain"
# Before the drain, the local tiers were full (3 x 16 MiB) and the pool
# tiers too (3 x 48 MiB): the local node must not grow while chunks move
# pool to pool, and the pool nodes only by the chunks in transit.
# the debug kernel's KASAN quarantine and kmemleak objects grow the local
# node by several MiB over the drain's 72 moves, and its slower reads skew more.
# Chunks in transit: a run of drain_batch chunks has its destinations
# allocated before its sources are freed, on each of the drain's workers
# (drain_workers, at most the guest's CPUs here: its pool nodes have none).
lslack=4096 skew=4096
case "$(uname -r)" in *-pmdbg) lslack=16384 skew=8192 ;; esac
workers=$(cat /sys/module/poolmem/parameters/drain_workers)
[ "$workers" -le "$(nproc)" ] || workers=$(nproc)
transit=$(( $(cat /sys/module/poolmem/parameters/drain_batch) * workers * 2048 ))
awk -v bl=$before_l -v bp=$before_p -v ls=$lslack -v tr=$transit -v sk=$skew '
	{ l = $1 - bl; p = $2 + $3 - bp
	  if (l > ml) ml = l; if (p > mp) mp = p }
	END { printf "local node at most %d kB, pool nodes at most %d kB above their level with full quotas\n", ml, mp
	      # slack: 4 MiB of anything else (shells, poolctl); pools: the
	      # chunks in transit and the sampling skew (see above)
	      exit !(ml <= ls && mp <= tr + sk) }' /tmp/samples > /tmp/maxes ||
	fail "a quota was exceeded during the drain: $(cat /tmp/maxes); before: $before_l $before_p; samples: $(cat /tmp/samples | xargs)"
info "$(cat /tmp/maxes)"

# a change that would move chunks onto the draining pool: refused, figures
out=$(pmtest set vb pools=p0 2>&1) && fail "moving onto a draining pool was allowed: $out"
echo "$out" | grep -q "ENOSPC" || fail "expected ENOSPC: $out"
echo "$out" | grep -q "need=$((24 * 2 * MiB)) room=0" || fail "no figures: $out"
info "ok: $out"
check_eq "vb chunks on p1 after the refusal" 24 "$(dom_pool_chunks vb p1)"

out=$(poolctl pool offline p0) || fail "offline after drain: $out"
info "$out"
for b in $(node_blocks $n0); do
	check_eq "$b state" offline "$(cat $MEMSYS/$b/state)" >/dev/null
done

# 4. live changes of both tiers while the writers run
rm -f /tmp/stop-sampling
# quotas read before and after the usage: a quota only drops once usage has
( q() { cat $DOMSYS/va/local_quota_bytes $DOMSYS/va/pool_quota_bytes | xargs; }
  while [ ! -e /tmp/stop-sampling ]; do
	echo "$(q) $(cut -d' ' -f1,2 $DOMSYS/va/stat) $(q)"
	sleep 0.1
  done ) > /tmp/usage &
sampler=$!
out=$(poolctl vm set va --local 32M --pool 32M) || fail "grow local: $out"
info "$out"
check_eq "va local after growing it" $((32 * MiB)) "$(dom_attr va local_bytes)"
check_eq "va pool after shrinking it" $((32 * MiB)) "$(dom_attr va pool_bytes)"
out=$(poolctl vm set va --local 8M --pool 56M) || fail "shrink local: $out"
info "$out"
check_eq "va local after shrinking it" $((8 * MiB)) "$(dom_attr va local_bytes)"
check_eq "va pool after growing it" $((56 * MiB)) "$(dom_attr va pool_bytes)"
check_eq "va local quota" $((8 * MiB)) "$(dom_attr va local_quota_bytes)"
out=$(poolctl vm set va --local 64M --pool 0 --tier-policy pool-first) || fail "all local: $out"
info "$out"
check_eq "va local, all of it" $((64 * MiB)) "$(dom_attr va local_bytes)"
check_eq "va tier policy" pool-first "$(dom_attr va tier_policy)"
# the same move in steps: --rate holds it to 8 MiB/s, Ctrl-C (SIGINT) stops
# it half way with "partly done" (exit 5) and what moved in --json, and
# --resume finishes it
poolctl vm set va --local 8M --pool 56M --rate 8M --json > /tmp/set.json 2> /tmp/set.err &
setpid=$!
sleep 2
moved_mid=$(dom_attr va moves)
kill -INT $setpid
rc=0
wait $setpid || rc=$?
info "vm set interrupted: exit $rc: $(cat /tmp/set.err)"
check_eq "exit code of an interrupted vm set (partly done)" 5 $rc
grep -q "^poolctl: va: settings applied, moves interrupted after .* left; .* poolctl vm set va --resume goes on$" \
	/tmp/set.err || fail "interrupted vm set: $(cat /tmp/set.err)"
grep -q '"complete": false' /tmp/set.json || fail "interrupted vm set --json: $(cat /tmp/set.json)"
left=$(sed -n 's/.*"remaining_bytes": \([0-9]*\).*/\1/p' /tmp/set.json)
moved=$(sed -n 's/.*"moved_bytes": \([0-9]*\).*/\1/p' /tmp/set.json | head -n 1)
secs=$(sed -n 's/.*"seconds": \([0-9.e+-]*\).*/\1/p' /tmp/set.json)
[ "${left:-0}" -gt 0 ] && [ "${moved:-0}" -gt 0 ] ||
	fail "the signal did not stop vm set half way (moved ${moved:-?}, left ${left:-?}; $moved_mid moves at 2 s)"
# the pace, and at most a step's moves past it: the step the signal cut
# the sleep after (a step is 2 MiB at this rate, and moves whole chunks)
awk -v m=$moved -v s=$secs 'BEGIN { exit !(m <= 8 * 1048576 * s * 1.1 + 4 * 1048576) }' ||
	fail "--rate 8M: moved $moved bytes in $secs s"
info "interrupted after $moved bytes in $secs s, $left left (at most 8 MiB/s)"
# the shrunk tier keeps a quota of its usage until the moves are done
check_eq "va local quota while the moves wait (its usage)" "$(dom_attr va local_bytes)" \
	"$(dom_attr va local_quota_bytes)"
[ "$(dom_attr va local_bytes)" -gt $((8 * MiB)) ] || fail "va: nothing left to move after the interrupt"
out=$(poolctl vm set va --resume --json) || fail "vm set --resume: $out"
echo "$out" | grep -q '"complete": true' || fail "vm set --resume: $out"
echo "$out" | grep -q '"remaining_bytes": 0,' || fail "vm set --resume left bytes: $out"
check_eq "va local after --resume" $((8 * MiB)) "$(dom_attr va local_bytes)"
check_eq "va pool after --resume" $((56 * MiB)) "$(dom_attr va pool_bytes)"
check_eq "va local quota after --resume" $((8 * MiB)) "$(dom_attr va local_quota_bytes)"
expect_exit 2 "nothing to change" poolctl vm set va
out=$(poolctl vm set va --local 64M --pool 0) || fail "all local again: $out"
touch /tmp/stop-sampling
wait $sampler
awk '{ l = $1 > $5 ? $1 : $5; p = $2 > $6 ? $2 : $6
	if ($3 > l || $4 > p) { print "usage " $3 " " $4 " above quotas " l " " p; bad = 1 } }
	END { exit bad }' /tmp/usage || fail "a tier's usage exceeded its quota during vm set"
info "$(wc -l < /tmp/usage) usage samples during vm set, none above its quota"

# tiering under the writers: vb gets 8 chunks of local quota more, and its
# (all hot) pool chunks are promoted into it, while samples unmap chunks
poolctl vm set vb --local 32M --tiering on --scan-rate 128M >/dev/null
wait_for 120 sh -c "[ \$(cat $DOMSYS/vb/promotions) -ge 8 ]" ||
	fail "vb: tiering promoted $(dom_attr vb promotions) chunks"
poolctl vm set vb --tiering off >/dev/null
check_eq "vb local bytes after tiering" $((32 * MiB)) "$(dom_attr vb local_bytes)"
info "vb tiering: $(dom_attr vb samples) samples, $(dom_attr vb promotions) promotions"

# 5. a drained pool's removal takes it out of every domain's pools
pmtest pool-remove p0 >/dev/null
for v in va vb vc; do
	awk '$1 == "p0" { exit 1 }' $DOMSYS/$v/pool_chunks || fail "$v still lists p0"
done

touch /tmp/stamps-done
for v in va vb vc; do
	eval pid=\$s$v
	wait $pid || fail "stamp $v: $(cat /tmp/stamp.$v)"
	info "$v: $(tail -n 1 /tmp/stamp.$v)"
	grep -q "wrong_bytes=0 " /tmp/stamp.$v || fail "$v: $(cat /tmp/stamp.$v)"
done
grep -q "odirect=0 " /tmp/stamp.va && fail "the O_DIRECT checker never ran"
for v in va vb vc; do pmtest domain-destroy $v >/dev/null; done

# leave p0 as the other tests expect it
online_node_blocks $n0 >/dev/null
pmtest pool-add p0 $n0 >/dev/null
