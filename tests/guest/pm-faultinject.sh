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
. /rig/tests/lib.sh
D=/sys/kernel/debug/poolmem
F=$D/fail
pm_pools_up
[ -d $F ] || skip "this kernel has no fault injection (make check-debug runs it)"
# whatever happens, no injection outlives this test
no_injection() {
	echo 0 > $F/probability
	echo 0 > $D/fail_mc/probability
	echo 0 > $D/alloc_delay_ms
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

inject() { # DIR PROBABILITY
	echo 0 > $1/verbose
	echo 1 > $1/interval
	echo -1 > $1/times
	echo 0 > $1/space
	echo $2 > $1/probability
}

# ---- 1: poolmem's own allocations ----
inject $F 20
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
	inject /sys/kernel/debug/$k 10
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

# The sections below leave held units behind (each costs its pool 2 MiB):
# they come after the baseline checks above.
modprobe hwpoison_inject 2>/dev/null || [ -e /sys/kernel/debug/hwpoison/corrupt-pfn ] ||
	fail "no hwpoison_inject in this kernel"

# ---- 3: a memory error in a chunk still being allocated (issue 46) ----
# The allocation of a 4 MiB chunk stops for a second after its first unit is
# in the reverse map (alloc_delay_ms), and that unit's sixth page takes a
# memory error meanwhile. The error worker must only record the offset: it
# used to unmap the chunk's every slot, the second still NULL (an oops in
# lock_page()). The fault that completes the chunk then maps it around the
# record: the page gives SIGBUS BUS_MCEERR_AR, the rest is written.
race() { # NAME: a 4 MiB-chunk domain whose first touch meets the error
	pmtest domain-create $1 8M 0 8M chunk=4M pools=p0 >/dev/null
	dmesg -c >/dev/null
	echo 1000 > $D/alloc_delay_ms
	pmtest touch $1 0 4M > /tmp/$1.out 2>&1 &
	tp=$!
	wait_for 10 sh -c "dmesg | grep -q 'alloc_delay: domain $1 slot 0 '" || fail "$1: no delayed allocation"
	pfn=$(dmesg | sed -n "s/.*alloc_delay: domain $1 slot 0 at PFN \(0x[0-9a-f]*\).*/\1/p" | head -n 1)
	# memory_failure() sets PG_hwpoison, emits its verdict and gives up on
	# poolmem's units: the write fails (EBUSY) by design
	echo $((pfn + 5)) > /sys/kernel/debug/hwpoison/corrupt-pfn 2>/dev/null || true
}
race mfa
wait $tp || true	# the touch ends with SIGBUS (exit 3) or not: its output says
echo 0 > $D/alloc_delay_ms
out=$(cat /tmp/mfa.out)
info "allocation met by an error: $out"
echo "$out" | grep -q "SIGBUS at offset 20480 (BUS_MCEERR_AR)" ||
	fail "the page that took the error during its chunk's allocation did not give a memory error: $out"
check_eq "mfa: memory errors" 1 "$(dom_attr mfa memory_errors)"
out=$(pmtest touch mfa 24576 $((4194304 - 24576)) 2>&1) || fail "mfa: the rest of the chunk: $out"
pmtest domain-destroy mfa >/dev/null

# ... and when that allocation then fails (the second unit, once), the
# record goes with the units: the retry's fresh chunk has no lost page
race mfb
echo 1 > $F/times
echo 100 > $F/probability
wait $tp || true	# the touch ends with SIGBUS (exit 3) or not: its output says
no_injection
out=$(cat /tmp/mfb.out)
info "failed allocation met by an error: $out"
echo "$out" | grep -q "touch: 4194304 bytes at 0" ||
	fail "a fresh chunk kept the record of an error in units that went back: $out"
check_eq "mfb: memory errors" 1 "$(dom_attr mfb memory_errors)"
pmtest domain-destroy mfb >/dev/null

# ---- 4: a machine-check-safe read that fails (issue 46) ----
# A chunk zeroed page by page by discards is freed once it reads as
# zeroes (file.c). That read goes through copy_mc_to_kernel(); fail_mc
# makes it report an uncorrectable error, as real poison would: the page
# goes to memory_failure() (and poolmem records it lost), and the chunk
# is not taken for zeroes.
pmtest domain-create mc 4M 0 4M pools=p0 >/dev/null
pmtest fill mc 0 2M 7 >/dev/null
pmtest punch mc 4096 $((2097152 - 4096)) >/dev/null
check_eq "mc: chunks before the last page's discard" 1 "$(dom_attr mc chunks)"
inject $D/fail_mc 100
echo 1 > $D/fail_mc/times
pmtest punch mc 0 4096 >/dev/null
no_injection
wait_for 10 sh -c "[ \"\$(cat $DOMSYS/mc/memory_errors)\" = 1 ]" ||
	fail "mc: the failed read was not reported as a memory error: $(dmesg | tail -n 5)"
check_eq "mc: chunks after the discard whose zero check could not read" 1 "$(dom_attr mc chunks)"
out=$(pmtest touch mc 0 4096 read=1 2>&1) || true	# exit 3: the SIGBUS expected
echo "$out" | grep -q "SIGBUS at offset 0 (BUS_MCEERR_AR)" || fail "mc: the page the read failed on: $out"
info "a failed machine-check-safe read: $(dmesg | grep -m1 'memory error at PFN')"
pmtest domain-destroy mc >/dev/null
