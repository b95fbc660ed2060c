# rig-topologies: nvdimm-numa
# rig-debug: core
# THEORY OF OPERATION: every allocation path of poolmem fails sometimes, and
# each failure is a clean error: no oops (the rig fails the test on any
# kernel report), no leak (kmemleak after the boot; pools empty and pool
# nodes back at their baseline here), and only the errors the ABI names.
#  1. poolmem's own fault attribute (/sys/kernel/debug/poolmem/fail, in
#     front of every allocation the module makes) at 20%: domain and
#     profile create, ftruncate of profile files, faults (a failed chunk
#     allocation is SIGBUS plus the domain's sigbus counter), discard,
#     map and info, and pmfuzz for 20 s;
#  1b. a chunk a pipe holds when its domain is evicted, with every
#     allocation failing (no retire record): it stays charged until the
#     pipe lets go;
#  2. the kernel's failslab and fail_page_alloc at 10%, aimed at the test's
#     own processes (task-filter, /proc/self/make-it-fail): the VFS and the
#     page allocator fail under poolmem's calls too.
# Needs CONFIG_FAULT_INJECTION: skipped on Debian's kernel, run by
# make check-debug.
. /rig/tests/lib/common.sh
D=/sys/kernel/debug/poolmem
F=$D/fail
pm_pools_up
[ -d $F ] || skip "this kernel has no fault injection (make check-debug runs it)"
# whatever happens, no injection outlives this test
no_injection() {
	echo 0 > $F/probability
	for k in failslab fail_page_alloc; do echo 0 > /sys/kernel/debug/$k/probability; done
}
trap no_injection EXIT
n1=$(pool_attr p0 node) n2=$(pool_attr p1 node)
b1=$(node_free_kb $n1) b2=$(node_free_kb $n2)

# only these answers are allowed; anything else fails the test
ok_errno() { # CMD...: run, allow success, ENOMEM, ENOSPC, SIGBUS (exit 3)
	local out rc=0
	out=$("$@" 2>&1) || rc=$?
	[ $rc -eq 0 ] && return 0
	[ $rc -eq 3 ] && echo "$out" | grep -q SIGBUS && return 0
	echo "$out" | grep -qE ': (ENOMEM|ENOSPC) ' && return 0
	fail "'$*': exit $rc: $out"
}


# ---- 1: poolmem's own allocations ----
fault_inject $F 20
for i in $(seq 1 30); do
	ok_errno pmtest domain-create fi$i 8M 4M 4M tier=interleave
done
echo 0 > $F/probability	# listing is not under test here
made=$(pmtest domain-list | xargs)
echo 20 > $F/probability
info "domains made under injection: $(echo $made | wc -w) of 30"
sig=0
for d in $made; do
	ok_errno pmtest touch $d 0 8M
	ok_errno pmtest punch $d 0 2M
	ok_errno pmtest domain-info $d
	ok_errno pmtest map $d
	sig=$((sig + $(dom_attr $d sigbus)))
done
info "faults answered with SIGBUS (counted in sigbus): $sig"
echo 0 > $F/probability
poolctl profile create fip --local 50% --pool 50% >/dev/null
echo 20 > $F/probability
for i in $(seq 1 20); do
	ok_errno pmtest create-file /run/poolmem/fip/f$i
	[ -e /run/poolmem/fip/f$i ] || continue
	truncate -s 8M /run/poolmem/fip/f$i 2>/tmp/err || grep -qE 'Cannot allocate memory|No space left' /tmp/err ||
		fail "ftruncate: $(cat /tmp/err)"
done
info "profile domains made under injection: $(ls $DOMSYS | grep -c '^fip\.' || true)"
# pmfuzz alone: its leak checks compare the pools and nodes before and after
# its run, and its drains would move the chunks of domains left here
echo 0 > $F/probability
rm -rf /run/poolmem/fip	# profile domains go with their files
for d in $(pmtest domain-list); do pmtest domain-destroy $d >/dev/null; done
check_eq "no domain left (poolmem's injection)" "" "$(pmtest domain-list | xargs)"
echo 20 > $F/probability
pmfuzz $(date +%s) 20 2 2 || fail "pmfuzz under fault injection"
echo 0 > $F/probability

# a chunk a pipe still holds when its domain's inode is evicted, with no
# memory for its retire record: it stays charged (the domain lingers and
# the reaper retries the record) until the pipe lets go; before the fix
# the release freed it, uncharged, while the pipe still read it
pmtest domain-create fev 4M 0 4M pools=p0 >/dev/null
out=$(pmtest splice-evict fev p0 $F)
info "$out"
base=$(echo "$out" | sed -n 's/.*allocated \([0-9]*\) bytes before, \([0-9]*\) after.*/\1/p')
held=$(echo "$out" | sed -n 's/.*allocated \([0-9]*\) bytes before, \([0-9]*\) after.*/\2/p')
[ -n "$held" ] && [ "$held" -ge $((base + 2097152)) ] ||
	fail "a chunk held by a pipe was uncharged at eviction (retire record failed): $out"
echo "$out" | grep -q "after the pipe closed: $base bytes" ||
	fail "the chunk was not freed after the pipe closed: $out"

# ---- 2: the kernel's slab and page allocator, for our processes only ----
for k in failslab fail_page_alloc; do
	fault_inject /sys/kernel/debug/$k 10
	echo Y > /sys/kernel/debug/$k/task-filter
done
echo N > /sys/kernel/debug/failslab/ignore-gfp-wait
echo N > /sys/kernel/debug/fail_page_alloc/ignore-gfp-wait
echo N > /sys/kernel/debug/fail_page_alloc/ignore-gfp-highmem
echo 0 > /sys/kernel/debug/fail_page_alloc/min-order
failing() { PMTEST_MAKE_IT_FAIL=1 "$@"; }
for i in $(seq 1 20); do
	ok_errno failing pmtest domain-create fk$i 8M 4M 4M
	if [ -d $DOMSYS/fk$i ]; then
		ok_errno failing pmtest touch fk$i 0 8M
		ok_errno failing pmtest punch fk$i 0 4M
	fi
done
no_injection
for d in $(pmtest domain-list); do pmtest domain-destroy $d >/dev/null; done

check_eq "pools empty" "0 0" "$(pool_attr p0 allocated_bytes) $(pool_attr p1 allocated_bytes)"
for n in "$n1:$b1" "$n2:$b2"; do
	node=${n%%:*} base=${n#*:} now=$(node_free_kb ${n%%:*})
	info "node $node free: baseline $base kB, now $now kB"
	[ $((base - now)) -le 1024 ] || fail "node $node lost $((base - now)) kB"
done

