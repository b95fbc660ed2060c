# rig-topologies: nvdimm-numa
# rig-core: yes (on Linux 6.1 too: the kernels differ here)
# THEORY OF OPERATION: tiering finds a VM's hot and cold chunks by refault
# sampling and moves them within the quotas. Domain "hot" (192 MiB, local
# quota 64 MiB, pool quota 192 MiB, local-first) first touches its cold set
# (0-64 MiB: fills the local quota), then its hot set (64-128 MiB: lands
# on p0), which a writer then touches continuously. With tiering on
# (64 MiB/s, 1 s periods), at least 90% of the hot set must be local
# within 10 periods, and the cold set must have gone the other way (local
# is full, so cold chunks make room). Quotas hold throughout (sampled).
#
# Contention: domain "busy" (64 MiB on p1) is written continuously after
# its first touch, while p0 sees a little new allocation. Without
# sampling, p1's access factor falls to 0 (no allocation, no fault: seed
# 003's blind spot) and smart-idle puts a new domain's first chunk on the
# hammered p1; with tiering "sample", sampled refaults count as p1's
# accesses, its access factor rises above p0's, and the chunk goes to p0.
. /rig/tests/lib/common.sh
pm_pools_up
# windows of 500 ms: the access factor forgets in 2 s, and still spans two
# sampling periods (sampled refaults come in a burst after each sample)
echo 500 > /sys/module/poolmem/parameters/window_ms

# contention first: a pool busy with mapped memory
pmtest domain-create busy 64M 0 64M pools=p1 >/dev/null
pmtest touch busy 0 64M >/dev/null
pmtest hammer busy 0 64M 120 >/tmp/hammer.busy &
hb=$!
trap 'kill $hb ${hh:-} 2>/dev/null || true' EXIT
pmtest domain-create light 8M 0 8M pools=p0 >/dev/null
sleep 2.5	# > 4 windows of 500 ms: the touches have aged out
check_eq "p1 access factor, memory mapped and busy, no sampling" 0 "$(pool_attr p1 access_factor)"
# a little new activity on p0 (4 chunks placed), then a new domain's first chunk
light() { pmtest punch light 0 8M >/dev/null; pmtest touch light 0 8M >/dev/null; }
first_chunk() {
	pmtest domain-create fresh 2M 0 2M pools=p0,p1 select=smart-idle >/dev/null
	pmtest touch fresh 0 2M >/dev/null
	if [ "$(dom_pool_chunks fresh p0)" = 1 ]; then echo p0; else echo p1; fi
	pmtest domain-destroy fresh >/dev/null
}
light
info "without sampling: access factor p0 $(pool_attr p0 access_factor), p1 $(pool_attr p1 access_factor)"
check_eq "without sampling: smart-idle takes the hammered pool for idle" p1 "$(first_chunk)"
poolctl vm set busy --tiering sample --scan-rate 64M >/dev/null
check_eq "busy tiering" "sample 67108864 500" "$(dom_attr busy tiering)"
wait_for 10 sh -c "[ \$(cat $POOLSYS/p1/accesses) -gt 0 ]" || fail "no sampled accesses on p1"
sleep 1
light
af0=$(pool_attr p0 access_factor) af1=$(pool_attr p1 access_factor)
info "with sampling: p1 accesses $(pool_attr p1 accesses), access factor p0 $af0, p1 $af1"
[ "$af1" -gt "$af0" ] || fail "p1 ($af1) is not busier than p0 ($af0)"
check_eq "with sampling: smart-idle takes the idle pool" p0 "$(first_chunk)"
kill $hb; wait $hb || true
for d in busy light; do pmtest domain-destroy $d >/dev/null; done
echo 1000 > /sys/module/poolmem/parameters/window_ms

# tiering: hot set up from the pool, cold set down
pmtest domain-create hot 192M 64M 192M pools=p0 >/dev/null
pmtest touch hot 0 64M >/dev/null
pmtest touch hot 64M 64M >/dev/null
check_eq "local bytes (cold set)" $((64 * MiB)) "$(dom_attr hot local_bytes)"
check_eq "hot set on p0" 32 "$(dom_pool_chunks hot p0)"
pmtest hammer hot 64M 64M 60 >/tmp/hammer.hot &
hh=$!
# count the chunks of [FROM, TO) MiB that are local (map: hex offset,
# length, phys; pool -1 = local)
local_in() {
	local a=$(($1 * MiB)) b=$(($2 * MiB)) n=0 off len phys pool node s e
	while read -r off len phys pool node; do
		[ "$pool" = -1 ] || continue
		s=$((off > a ? off : a)) e=$((off + len < b ? off + len : b))
		[ $e -gt $s ] && n=$((n + (e - s) / (2 * MiB)))
	done <<EOM
$(pmtest map hot)
EOM
	echo $n
}
( while :; do cat $DOMSYS/hot/local_quota_bytes $DOMSYS/hot/pool_quota_bytes $DOMSYS/hot/local_bytes \
	$DOMSYS/hot/pool_bytes | xargs; sleep 0.2; done ) > /tmp/quota-samples &
qs=$!
t0=$(uptime_s)
poolctl vm set hot --tiering on --scan-rate 64M --hot-threshold 500ms >/dev/null
periods=0
while :; do
	sleep 1
	periods=$((periods + 1))
	up=$(local_in 64 128)
	info "period $periods: hot set local $up/32, cold set local $(local_in 0 64)/32, hot/cold chunks $(cat $DOMSYS/hot/heat)"
	[ $up -ge 29 ] && break
	[ $periods -lt 10 ] || fail "hot set local after 10 periods: $up/32 (need 29)"
done
secs=$(awk -v a=$t0 -v b=$(uptime_s) 'BEGIN { print b - a }')
info "ok: hot set >= 90% local after $periods periods ($secs s)"
down=$((32 - $(local_in 0 64)))
[ $down -ge 29 ] || fail "cold set in the pool: $down/32"
info "ok: cold set in the pool: $down/32"
[ "$(dom_attr hot promotions)" -ge 29 ] || fail "promotions: $(dom_attr hot promotions)"
[ "$(dom_attr hot demotions)" -ge 29 ] || fail "demotions: $(dom_attr hot demotions)"
[ "$(pool_attr p0 promotions)" -ge 29 ] || fail "p0 promotions: $(pool_attr p0 promotions)"
[ "$(pool_attr p0 demotions)" -ge 29 ] || fail "p0 demotions: $(pool_attr p0 demotions)"
[ "$(pool_attr p0 samples)" -gt 0 ] || fail "p0 samples: $(pool_attr p0 samples)"
kill $qs
awk '$3 > $1 || $4 > $2 { print; bad = 1 } END { exit bad }' /tmp/quota-samples ||
	fail "usage above quota during tiering"
info "$(wc -l < /tmp/quota-samples) quota samples, none over"
info "$(poolctl vm show hot | grep tiering)"
scan=$(dom_attr hot tiering_scan_ns)
info "tiering worker CPU: $((scan / 1000000)) ms over $secs s"
poolctl vm set hot --tiering off >/dev/null
check_eq "tiering off" off "$(dom_attr hot tiering | cut -d' ' -f1)"
kill $hh; wait $hh || true
pmtest domain-destroy hot >/dev/null
