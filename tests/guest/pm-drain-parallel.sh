# rig-topologies: nvdimm-numa
# rig-debug: core
# rig-core: yes
# THEORY OF OPERATION: a drain moves chunks on several workers at once
# (module parameter drain_workers, bounded by the CPUs of the nodes
# involved; issue 33). Shown here, with writers stamping and verifying
# every page of the domain throughout (pmtest stamp: two writer threads,
# a process_vm_readv checker where the kernel has it):
#  1. one drain call of a 256 MiB domain's 128 chunks, p0 -> p1, runs on
#     as many workers as the guest has CPUs (the pool nodes have none:
#     their nearest CPUs are node 0's), and moves every chunk exactly once
#     (p0 moved_out, p1 moved_in, one copy sample per 2 MiB unit);
#  2. with drain_workers 1 the drain back p1 -> p0 runs on one worker;
#  3. no writer or checker ever sees a wrong byte, and p0 is empty after 1;
#  4. a signal in the middle of a drain of 1 GiB (256 MiB on the debug
#     kernel; pmtest sends it once a quarter has left) stops it: the call
#     returns EINTR within 2 s, every chunk is whole on p0 or p1, no
#     kworker moves one after the return, and the next call drains the
#     rest with every byte intact.
. /rig/tests/lib/common.sh
pm_pools_up
cpus=$(nproc)
[ "$cpus" -ge 2 ] || skip "one CPU: a drain has one worker"
P=/sys/module/poolmem/parameters
LAT=/sys/kernel/debug/poolmem/move_latency
w0=$(cat $P/drain_workers)
workers=$w0
[ "$workers" -le "$cpus" ] || workers=$cpus
[ "$workers" -ge 2 ] || fail "drain_workers is $w0: expected a default of at least 2"

pmtest domain-create dp 256M 0 256M pools=p0 >/dev/null
rm -f /tmp/dp-done
pmtest stamp dp 120 threads=2 until=/tmp/dp-done > /tmp/stamp.dp 2>&1 &
sp=$!
placed() { [ "$(dom_attr dp chunks)" = 128 ]; }
wait_for 60 placed || fail "dp not placed: $(dom_attr dp chunks) chunks"
sleep 1	# a stamp pass over all of it

# drains p$1 -> p$2 with drain_workers $3; checks the log line and the counts
drain() {
	local from=p$1 to=p$2 w=$3 mark out0 in0 out
	echo $3 > $P/drain_workers
	pmtest set dp pools=p0,p1 >/dev/null
	mark=$(dmesg | wc -l)
	out0=$(pool_attr $from moved_out) in0=$(pool_attr $to moved_in)
	echo 0 > $LAT
	out=$(pmtest drain $from) || fail "drain $from: $out"
	dmesg | tail -n +$((mark + 1)) | grep -q "poolmem: pool $from: draining 256 MiB, $w worker" ||
		fail "drain $from: no 'draining 256 MiB, $w worker(s)' line: $(dmesg | tail -n +$((mark + 1)) | grep draining)"
	check_eq "$from chunks after its drain" 0 "$(pool_attr $from chunks)"
	check_eq "dp chunks on $to" 128 "$(dom_pool_chunks dp $to)"
	check_eq "$from moved_out by the drain" 128 "$(( $(pool_attr $from moved_out) - out0 ))"
	check_eq "$to moved_in by the drain" 128 "$(( $(pool_attr $to moved_in) - in0 ))"
	check_eq "2 MiB copies by the drain" 128 "$(awk '$1 == "copy_unit_ns" { print $2 }' $LAT)"
	info "drain $from -> $to on $w worker(s): $(echo "$out" | tail -n 1)"
	pmtest drain $from cancel=1 >/dev/null
}
drain 0 1 $workers
drain 1 0 1
echo $w0 > $P/drain_workers

touch /tmp/dp-done
wait $sp || fail "stamp: $(cat /tmp/stamp.dp)"
grep -q "wrong_bytes=0 " /tmp/stamp.dp || fail "stamp: $(cat /tmp/stamp.dp)"
info "$(tail -n 1 /tmp/stamp.dp)"
pmtest domain-destroy dp >/dev/null

# 4. A signal during one drain call, sent by pmtest's watcher once a
# quarter of the pool has left (so it meets the drain half way at any
# speed): the call returns EINTR soon, every chunk is on p0 or p1, and the
# kworkers stop with the caller (p0's count holds still after the return).
qm=1024	# MiB; the debug kernel (KASAN under TCG) copies several times slower
case "$(uname -r)" in *-pmdbg) qm=256 ;; esac
pmtest domain-create dq ${qm}M 0 ${qm}M pools=p0 >/dev/null
pmtest fill dq 0 ${qm}M 0x5a >/dev/null
pmtest set dq pools=p0,p1 >/dev/null
out=$(pmtest drain p0 interrupt=1 2>&1) || fail "interrupted drain: $out"
left=$(dom_pool_chunks dq p0); left=${left:-0}
moved=$(dom_pool_chunks dq p1); moved=${moved:-0}
check_eq "dq chunks on p0 and p1 after the signal" $((qm / 2)) $((left + moved))
[ "$left" -gt 0 ] && [ "$moved" -gt 0 ] || fail "the signal did not stop the drain half way: $moved chunks on p1, $left on p0; $out"
us=$(echo "$out" | sed -n 's/^drain: interrupted after \([0-9]*\) us$/\1/p')
# a stop waits at most for one run per worker: drain_batch chunks each
[ -n "$us" ] && [ "$us" -lt 2000000 ] || fail "the interrupted drain took long to return: $out"
sleep 0.5
check_eq "dq chunks on p0 after the workers stopped" $left "$(dom_pool_chunks dq p0)"
info "signal after a quarter: returned after $us us, $moved chunks on p1, $left left on p0"
out=$(pmtest drain p0) || fail "drain after the signal: $out"
check_eq "p0 chunks after the rest drained" 0 "$(pool_attr p0 chunks)"
pmtest expect dq 0 ${qm}M 0x5a >/dev/null || fail "dq: bytes changed by the interrupted drain"
pmtest drain p0 cancel=1 >/dev/null
pmtest domain-destroy dq >/dev/null

# the copy limit (debugfs, make bench's): bad input is refused with
# EINVAL, and a run copies between two nodes by two threads
CL=/sys/kernel/debug/poolmem/copy_limit
n0=$(pool_attr p0 node) n1=$(pool_attr p1 node)
for bad in "x" "$n0 $n1 3 1" "$n0 $n1 0 1" "$n0 $n1 64 0" "$n0 $n1 64 65" "-1 $n1 64 1" "$n0 4096 64 1" "$n0 $n1 99999 1"; do
	err=$( (echo "$bad" > $CL) 2>&1) && fail "copy_limit took '$bad'"
	case $err in *"Invalid argument"*) ;; *) fail "copy_limit '$bad': $err" ;; esac
done
echo "$n0 $n1 64 2" > $CL || fail "copy_limit $n0 $n1 64 2 refused"
set -- $(cat $CL)
check_eq "copy_limit's last run" "$n0 $n1 64 2" "$1 $2 $3 $4"
[ "$5" -gt 0 ] || fail "copy_limit took no time: $*"
info "copy_limit: 64 MiB node $n0 -> $n1 by 2 threads in $5 ns"
info "pass"
