# rig-topologies: nvdimm-numa
# rig-env: RIG_NVDIMM_SIZE=3G
# Benchmark (make bench): live migration into poolmem (issue 31), side by
# side in one rig run. Debian's QEMU inside the rig: a source guest
# (tests/guest/bios/pattern-bios.S: it writes every page of its 1 GiB, then
# waits) on anonymous memory of node 0 migrates over 127.0.0.1 (multifd, 2
# channels, no bandwidth cap) to a destination QEMU whose RAM is
#   domain   a poolmem domain on pool p0, its zero reserve off;
#   anon     anonymous memory bound to p0's node (numactl --membind);
#   reserve  a poolmem domain on p0 with a full zero reserve (1 GiB);
# in rounds that interleave the three (the source resumes between moves,
# its memory unchanged, so every move carries the same 1 GiB). QMP's
# total-time and downtime of each move; medians, and the ratios to anon.
# Nested TCG: only the ratios mean anything.
. /rig/tests/lib/common.sh
ip link set lo up
pm_pools_up
pm_warm_pool p0
node=$(pool_attr p0 node)
ROUNDS=${BENCH_ROUNDS:-5}
MIB=1024
SIZE=$((MIB * MiB))
RAM="-machine memory-backend=ram0 -m ${MIB}M"
reserve() { pool_attr p0 zero_reserve_bytes; }
at_target() { [ "$(reserve)" = "$(pool_attr p0 zero_reserve_target_bytes)" ]; }
set_reserve() {
	poolctl pool set p0 --zero-reserve "$1" >/dev/null
	wait_for 300 at_target || fail "p0's reserve did not reach $1: $(reserve)"
}
qmp() { local s=$1; shift; pmtest qmp "$s" "$@"; }
has_qmp() { [ -S "$1" ] && qmp "$1" '{"execute":"query-status"}'; }
field() { echo "$1" | sed -n "s/.*\"$2\": \\([0-9]*\\).*/\\1/p"; }
CAPS='{"execute":"migrate-set-capabilities","arguments":{"capabilities":[{"capability":"multifd","state":true}]}}'

pmtest domain-create bm ${MIB}M 0 ${MIB}M tier=pool-first pools=p0 >/dev/null
rm -f /tmp/src.qmp
# shellcheck disable=SC2086
numactl --membind=0 sh -c '. /rig/tests/lib/common.sh; pm_qemu "$@"' sh /tmp/src.con \
	-object memory-backend-ram,id=ram0,size=$SIZE $RAM -qmp unix:/tmp/src.qmp,server=on,wait=off >/tmp/src.err 2>&1 &
spid=$!
wait_for 600 grep -q D /tmp/src.con || fail "the source guest did not fill its RAM: $(cat /tmp/src.err)"
# QEMU's default cap of 128 MiB/s would be all a move measures
qmp /tmp/src.qmp "$CAPS" '{"execute":"migrate-set-parameters","arguments":{"max-bandwidth":107374182400}}' >/dev/null

# move KIND: one migration of the source to a new destination; prints
# "total_ms downtime_ms"
move() {
	local kind=$1 dpid out i pre=
	rm -f /tmp/dst.qmp
	case $kind in
	anon) pre="numactl --membind=$node" obj="-object memory-backend-ram,id=ram0,size=$SIZE" ;;
	*) obj="-object memory-backend-file,id=ram0,mem-path=/run/poolmem/bm,size=$SIZE,share=on,align=2097152" ;;
	esac
	# shellcheck disable=SC2086
	$pre sh -c '. /rig/tests/lib/common.sh; pm_qemu "$@"' sh /tmp/dst.con $obj $RAM \
		-qmp unix:/tmp/dst.qmp,server=on,wait=off -incoming defer >/tmp/dst.err 2>&1 &
	dpid=$!
	wait_for 60 has_qmp /tmp/dst.qmp || fail "destination ($kind): $(cat /tmp/dst.err)"
	qmp /tmp/dst.qmp "$CAPS" '{"execute":"migrate-incoming","arguments":{"uri":"tcp:127.0.0.1:4444"}}' >/dev/null ||
		fail "destination ($kind): migrate-incoming"
	qmp /tmp/src.qmp '{"execute":"migrate","arguments":{"uri":"tcp:127.0.0.1:4444"}}' >/dev/null ||
		fail "migrate ($kind)"
	for i in $(seq 2400); do
		out=$(qmp /tmp/src.qmp '{"execute":"query-migrate"}')
		case $out in *'"status": "completed"'*) break ;; *'"status": "failed"'*) fail "move ($kind): $out" ;; esac
		sleep 0.25
	done
	[ "$kind" = anon ] || [ "$(dom_attr bm pool_bytes)" = $SIZE ] ||
		fail "the domain holds $(dom_attr bm pool_bytes) after the move, not $SIZE"
	kill -9 $dpid
	wait $dpid 2>/dev/null || true
	qmp /tmp/src.qmp '{"execute":"cont"}' >/dev/null
	echo "$(field "$out" total-time) $(field "$out" downtime)"
}

echo "== live migration of a 1 GiB guest (every page written) into each kind of memory, $ROUNDS rounds (ms)"
: >/tmp/blm.res
for r in $(seq 1 $ROUNDS); do
	line="bench: round $r:"
	for kind in domain anon reserve; do
		[ $kind = reserve ] && set_reserve ${MIB}M || set_reserve 0
		v=$(move $kind)
		set -- $v
		echo "$kind $1 $2" >>/tmp/blm.res
		line="$line $kind $1 ms (downtime $2),"
		pmtest punch bm 0 ${MIB}M >/dev/null
	done
	echo "${line%,}"
done
set_reserve 0
kill -9 $spid
wait $spid 2>/dev/null || true
pmtest domain-destroy bm >/dev/null
awk '{ t[$1] = t[$1] " " $2; d[$1] = d[$1] " " $3 }
function med(s,   n, v, i, j, x) {
	n = split(s, v, " ")
	for (i = 2; i <= n; i++) { x = v[i]; for (j = i - 1; j > 0 && v[j] > x; j--) v[j + 1] = v[j]; v[j + 1] = x }
	return n % 2 ? v[(n + 1) / 2] : (v[n / 2] + v[n / 2 + 1]) / 2
}
END {
	for (k in t) { mt[k] = med(t[k]); md[k] = med(d[k]) }
	printf "bench: medians: domain %d ms (downtime %d), anon %d ms (downtime %d), domain from a full reserve %d ms (downtime %d)\n", mt["domain"], md["domain"], mt["anon"], md["anon"], mt["reserve"], md["reserve"]
	printf "bench: migration time / anon: domain %.2f, domain from a full reserve %.2f; downtime / anon: domain %.2f, reserve %.2f\n", mt["domain"] / mt["anon"], mt["reserve"] / mt["anon"], md["domain"] / (md["anon"] ? md["anon"] : 1), md["reserve"] / (md["anon"] ? md["anon"] : 1)
	# the goal for make bench, in the format of bench_goal: not slower than into anonymous memory
	printf "goal:live-migration-vs-anon|live migration of a 1 GiB guest into a domain, time / into anonymous memory (median)|<=|1|%.2f|||x\n", mt["domain"] / mt["anon"]
}' /tmp/blm.res
