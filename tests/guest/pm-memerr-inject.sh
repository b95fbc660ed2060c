# rig-topologies: nvdimm-numa
# rig-boot: own (it leaves poisoned pages on p0's node: their blocks can't come back online)
# rig-debug: core
# THEORY OF OPERATION: memory errors where TCG can't make them, by the
# module's fault injection (debug kernel; /sys/kernel/debug/poolmem):
#  3. alloc_delay_ms holds a chunk allocation half done while its first
#     unit takes a memory error (hwpoison-inject's corrupt-pfn): the error
#     worker records the offset without touching the chunk's other slots,
#     and the completed chunk gives the memory error at that page alone;
#     when the allocation's try then fails, the record goes with its units;
#  4. fail_mc makes the zero check's machine-check-safe read report an
#     uncorrectable error: the page goes to memory_failure() and the chunk
#     is kept, not taken for zeroes;
#  5. hold_busy keeps a poisoned unit referenced when it is held: its
#     block's offline is refused at once (no loop in offline_pages()),
#     and goes through once the reference is gone and the unit frozen.
# Needs CONFIG_FAULT_INJECTION: skipped on Debian's kernels.
. /rig/tests/lib/common.sh
D=/sys/kernel/debug/poolmem
F=$D/fail
pm_pools_up
[ -d $F ] || skip "this kernel has no fault injection (the debug kernel runs it)"
no_injection() {
	echo 0 > $F/probability
	echo N > $F/task-filter
	echo 0 > $D/fail_mc/probability
	echo 0 > $D/alloc_delay_ms
	echo N > $D/hold_busy
}
trap no_injection EXIT
modprobe hwpoison_inject 2>/dev/null || [ -e /sys/kernel/debug/hwpoison/corrupt-pfn ] ||
	fail "no hwpoison_inject in this kernel"

# ---- 3: a memory error in a chunk still being allocated (issue 46) ----
# The allocation of a 4 MiB chunk stops after its first unit is in the
# reverse map (alloc_delay_ms), and that unit's sixth page takes a memory
# error meanwhile. The error worker must only record the offset: it used to
# unmap the chunk's every slot, the second still NULL (an oops in
# lock_page()). The fault that completes the chunk then maps it around the
# record: the page gives SIGBUS BUS_MCEERR_AR, the rest is written.
# The stop is long (5 s) because what follows it must land inside it: on
# the debug kernel under TCG, seeing the stop in dmesg and injecting once
# took over a second, and the second unit was allocated before the failure
# below was armed. in_time() checks that, then ends the stops.
race() { # NAME [ENV=VALUE]: a 4 MiB-chunk domain whose first touch meets the error
	pmtest domain-create $1 8M 0 8M chunk=4M pools=p0 >/dev/null
	dmesg -c >/dev/null
	echo 5000 > $D/alloc_delay_ms
	env ${2:-} pmtest touch $1 0 4M > /tmp/$1.out 2>&1 &
	tp=$!
	wait_for 10 sh -c "dmesg | grep -q 'alloc_delay: domain $1 slot 0 '" || fail "$1: no delayed allocation"
	pfn=$(dmesg | sed -n "s/.*alloc_delay: domain $1 slot 0 at PFN \(0x[0-9a-f]*\).*/\1/p" | head -n 1)
	# memory_failure() sets PG_hwpoison, emits its verdict and gives up on
	# poolmem's units: the write fails (EBUSY) by design
	echo $((pfn + 5)) > /sys/kernel/debug/hwpoison/corrupt-pfn 2>/dev/null || true
}
# in_time NAME: the chunk's second unit was not allocated yet, so the race
# was set up within the first unit's stop; then the stops end
in_time() {
	! dmesg | grep -q "alloc_delay: domain $1 slot 1 " ||
		fail "$1: the test lost its race: the chunk's second unit was allocated before the error was injected and the failure armed"
	echo 0 > $D/alloc_delay_ms
}
race mfa
in_time mfa
wait $tp || true	# the touch ends with SIGBUS (exit 3) or not: its output says
out=$(cat /tmp/mfa.out)
info "allocation met by an error: $out"
echo "$out" | grep -q "SIGBUS at offset 20480 (BUS_MCEERR_AR)" ||
	fail "the page that took the error during its chunk's allocation did not give a memory error: $out"
check_eq "mfa: memory errors" 1 "$(dom_attr mfa memory_errors)"
out=$(pmtest touch mfa 24576 $((4194304 - 24576)) 2>&1) || fail "mfa: the rest of the chunk: $out"
pmtest domain-destroy mfa >/dev/null

# ... and when that allocation then fails (the second unit, once), the
# record goes with the units: the retry's fresh chunk has no lost page
# The failure is aimed at the touching task alone (task-filter: the zero
# reserve's refill must not take it), once, quietly (fault_inject: verbose
# 0; a stack dump would fail the test).
echo Y > $F/task-filter
race mfb PMTEST_MAKE_IT_FAIL=1
fault_inject $F 100
echo 1 > $F/times
in_time mfb
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
fault_inject $D/fail_mc 100
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

# ---- 5: a held unit still referenced when its block goes offline (issue 46) ----
# hold_busy makes a poisoned unit look referenced by someone else (a PFN
# walker's lasting reference): it is held with poolmem's reference, not
# frozen. Its block's offline is refused at once, naming it, instead of
# looping in offline_pages(); once the reference "goes", the retry
# freezes it within a moment and the same offline goes through.
echo Y > $D/hold_busy
pmtest domain-create hb 4M 0 4M pools=p0 >/dev/null
out=$(pmtest memerr hb huge inject 5) || fail "hb: $out"
dmesg -c >/dev/null
pmtest domain-destroy hb >/dev/null
wait_for 10 sh -c "dmesg | grep -q 'has a poisoned page and is still referenced'" ||
	fail "hb: the poisoned unit was not held as still referenced: $(dmesg | tail -n 5)"
pfn=$(dmesg | sed -n 's/.*unit at PFN \(0x[0-9a-f]*\) has a poisoned page and is still referenced.*/\1/p' | tail -n 1)
bs=$((0x$(cat /sys/devices/system/memory/block_size_bytes)))
blk=/sys/devices/system/memory/memory$((pfn * 4096 / bs))
echo offline > $blk/state 2>/dev/null && fail "hb: the block of a held unit still referenced went offline"
dmesg | grep -q "refused: held unit at PFN $pfn .*still referenced" ||
	fail "hb: no line naming the held unit: $(dmesg | tail -n 5)"
echo N > $D/hold_busy
wait_for 5 sh -c "dmesg | grep -q 'held unit at PFN $pfn: the last other reference went'" ||
	fail "hb: the held unit was not frozen once its reference went"
echo offline > $blk/state || fail "hb: its block did not go offline after the reference went"
info "held unit at PFN $pfn: offline refused while referenced, done once the reference went"
