# rig-topologies: nvdimm-numa
# Benchmark (make bench): what the pin watch costs (kmod/pin.c, issue 46).
# Every quarter second the watch asks whether the kernel took FOLL_PIN
# references since its last look, and if so walks the chunk maps of the
# domains that may hold unpinnable chunks. It used to ask the whole host:
# any O_DIRECT on the host (a cache=none guest's disk, a backup) made it
# walk every domain four times a second. Now it asks the nodes with
# ZONE_MOVABLE memory, and walks the domains with chunks there.
#
# Two domains on p0 (512 MiB idle, 64 MiB whose pages a checker writes to
# and reads from a ram disk with O_DIRECT: poolmem's own memory pinned), and
# a process doing O_DIRECT from anonymous memory on node 0 (the host's own
# disk I/O). Each phase 10 s, with the watch as it is and with
# pinwatch_any_node=1 (the watch before: any node), side by side in one
# boot: walks, chunks looked at and chunks unmapped per second
# (debugfs poolmem/pinwatch).
. /rig/tests/lib/common.sh
pm_pools_up
modprobe brd rd_nr=2 rd_size=65536 || fail "brd"
W=/sys/kernel/debug/poolmem/pinwatch
P=/sys/module/poolmem/parameters/pinwatch_any_node
[ -r $W ] || fail "no debugfs poolmem/pinwatch"
pw_stat() { awk -v k=$1 '$1 == k { print $2 }' $W; }
pmtest domain-create idle 512M 0 512M pools=p0 >/dev/null
pmtest touch idle 0 512M >/dev/null
pmtest domain-create dio 64M 0 64M pools=p0 >/dev/null
pmtest touch dio 0 64M >/dev/null
SECS=10

# phase NAME CMD...: run CMD (SECS seconds) and print what the watch did meanwhile
phase() {
	local name=$1 w0 c0 u0 t0 dt out
	shift
	w0=$(pw_stat walks) c0=$(pw_stat chunks) u0=$(pw_stat unmaps) t0=$(uptime_s)
	out=$("$@" 2>&1) || fail "$name: $out"
	dt=$(awk -v a="$t0" -v b="$(uptime_s)" 'BEGIN { print b - a }')
	awk -v n="$name" -v w=$(($(pw_stat walks) - w0)) -v c=$(($(pw_stat chunks) - c0)) \
		-v u=$(($(pw_stat unmaps) - u0)) -v t="$dt" -v o="$(echo "$out" | tail -n 1)" \
		'BEGIN { printf "bench: %s: %.1f walks/s, %.0f chunks looked at/s, %.2f unmaps/s (%s)\n", n, w / t, c / t, u / t, o
			 printf "csv:pinwatch.csv:%s,%.2f,%.1f,%.3f\n", n, w / t, c / t, u / t }'
	echo "$(($(pw_stat walks) - w0)) $dt"
}

echo "csv:pinwatch.csv:phase,walks_per_s,chunks_per_s,unmaps_per_s"
for any in 0 1; do
	echo $any > $P
	v=new; [ $any = 1 ] && v=any-node
	phase "$v quiet" sleep $SECS | grep -v '^[0-9]' || true
	host=$(phase "$v host O_DIRECT" pmtest odirect /dev/ram1 $SECS)
	echo "$host" | grep -v '^[0-9]'
	eval "host_$any=\$(echo \"\$host\" | tail -n 1)"
	phase "$v domain O_DIRECT" pmtest stamp dio $SECS blockdev=/dev/ram0 | grep -v '^[0-9]'
done
echo 0 > $P
# the host's own O_DIRECT: walks per second, now and before
set -- $host_0
now=$(awk -v w=$1 -v t=$2 'BEGIN { printf "%.2f", w / t }')
set -- $host_1
before=$(awk -v w=$1 -v t=$2 'BEGIN { printf "%.2f", w / t }')
echo "bench: the host's own O_DIRECT: $now walks/s now, $before with the watch as it was"
bench_goal pinwatch-host-odirect '<=' 0.1 "$now" "" "" "/s" \
	"pin watch walks per second while only the host's own memory is pinned (O_DIRECT from anonymous memory)"
for d in idle dio; do pmtest domain-destroy $d >/dev/null; done
