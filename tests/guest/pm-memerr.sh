# rig-topologies: nvdimm-numa
# rig-boot: own (it leaves poisoned pages on p0's node: their blocks can't come back online)
# rig-debug: core
# rig-core: yes (on Linux 6.1 too: memory_failure() differs between the two)
# THEORY OF OPERATION: a memory error in a domain page is taken out of use
# end to end (kmod/mf.c). memory_failure() sets PG_hwpoison and gives up on
# poolmem's units; its verdict reaches poolmem through the
# ras:memory_failure_event tracepoint, and poolmem unmaps the chunk,
# records the offset as lost and keeps the unit out of use for good:
#  1. hard errors (MADV_HWPOISON, hwpoison-inject's corrupt-pfn) on huge
#     and small mappings: reading the page gives SIGBUS BUS_MCEERR_AR at its
#     address, every other page of the domain reads back what was written,
#     the record names the domain (and its id: a domain made again under
#     the name sees only its own records), offset and pool, and the
#     domain's and the pool's memory_errors count it;
#  2. a drain moves the chunk with the lost page: the page still gives the
#     memory error at the same address, the rest is intact;
#  3. the unit with the poisoned page never reaches a new tenant: one that
#     takes all of the pool touches every page without a SIGBUS, and the
#     block holding the unit goes offline (held units are skipped). It
#     can't come online again (EHWPOISON: 6.12 counts the poisoned pages
#     of each block; on 6.1, which forgets them, poolmem refuses), so this
#     test has a boot of its own;
#  4. soft offline (POOLMEM_PAGE_OFFLINE, and the kernel's own
#     soft_offline_page sysfs file, through poolmem's kprobe): the chunk
#     moves, nothing is lost, the page is out of use;
#  5. no warning, BUG or oops in the log;
#  6. an error policy ("drain 2/1h"): the second error in an hour marks
#     the pool degraded, and it drains itself; the lost pages stay lost
#     after the move, the rest is intact; undrain ends it.
. /rig/tests/lib/common.sh
pm_pools_up
modprobe hwpoison_inject 2>/dev/null || true
[ -e /sys/kernel/debug/hwpoison/corrupt-pfn ] || skip "no hwpoison_inject in this kernel"
node=$(pool_attr p0 node)
PAGE=517	# chunk 1 (2 MiB chunks), its sixth page: offset 0x205000

# expect_line OUT PATTERN WHAT
expect_line() { echo "$1" | grep -q "$2" || fail "$3: $1"; }

# ---- 1. hard errors ----
for method in madvise inject; do
	for layout in huge small; do
		e0=$(pool_attr p0 memory_errors)
		pmtest domain-create me 8M 0 8M pools=p0 >/dev/null
		out=$(pmtest memerr me $layout $method $PAGE) || fail "$method/$layout: $out"
		info "$method/$layout: $(echo "$out" | tr '\n' '|')"
		expect_line "$out" "record: kind hard action isolated domain me offset 0x205000 pool p0" \
			"$method/$layout: no record naming the domain, offset and pool"
		expect_line "$out" "page $PAGE: SIGBUS BUS_MCEERR_AR at its address" \
			"$method/$layout: the poisoned page did not give a memory error at its address"
		expect_line "$out" "other pages intact: 2047 of 2047" "$method/$layout: other pages changed"
		check_eq "$method/$layout: domain memory_errors" 1 "$(dom_attr me memory_errors)"
		check_eq "$method/$layout: pool memory_errors" $((e0 + 1)) "$(pool_attr p0 memory_errors)"
		dmesg | grep -q "domain me offset 0x205000: page unmapped, its data lost" ||
			fail "$method/$layout: no log line naming the domain and offset"
		# what an operator reads
		out=$(poolctl vm show me)
		expect_line "$out" "errors  1 page lost to memory errors at 0x205000" "$method/$layout: poolctl vm show"
		out=$(poolctl vm show me --json)
		expect_line "$out" '"memory_error_offsets": \[' "$method/$layout: vm show --json offsets"
		out=$(poolctl pool events --domain me --json)
		expect_line "$out" '"action": "isolated"' "$method/$layout: pool events --json"
		# "me" is made four times here: each sees its own record, by id,
		# and not those of the earlier domains of that name (issue 46)
		check_eq "$method/$layout: records of this me" 1 "$(echo "$out" | grep -c '"seq"')"
		expect_line "$out" "\"domain_id\": $(dom_attr me id)," "$method/$layout: the record's domain id"
		recs=$((${recs:-0} + 1))
		check_eq "$method/$layout: records named me in all" $recs \
			"$(poolctl pool events --json | grep -c '"domain": "me"')"
		expect_line "$out" '"offset": 2117632' "$method/$layout: pool events --json offset"
		out=$(poolctl pool events --pool p0)
		expect_line "$out" "hard  *isolated  *0x[0-9a-f]*  *1  *p0  *me  *0x205000" "$method/$layout: pool events"
		if [ $method/$layout = madvise/huge ]; then	# for the man pages
			poolctl vm show me | sed "s/^/$TEST: example: /"
			poolctl pool events | sed "s/^/$TEST: example: /"
			poolctl pool show p0 | sed "s/^/$TEST: example: /"
		fi
		pmtest domain-destroy me >/dev/null
	done
done

# ---- 2. a drain carries the lost page along ----
pmtest domain-create dr 8M 0 8M pools=p0,p1 >/dev/null
pmtest set dr pools=p0 >/dev/null
out=$(pmtest memerr dr huge inject $PAGE) || fail "drain: $out"
expect_line "$out" "record: kind hard action isolated domain dr offset 0x205000 pool p0" "drain: record"
pmtest set dr pools=p0,p1 >/dev/null
pmtest drain p0 >/dev/null || fail "drain of p0 with a poisoned chunk failed"
check_eq "drain: chunks left on p0" 0 "$(dom_pool_chunks dr p0 || echo 0)"
out=$(pmtest memerr dr huge check $PAGE)
info "after the drain: $(echo "$out" | tr '\n' '|')"
expect_line "$out" "page $PAGE: SIGBUS BUS_MCEERR_AR at its address" "drain: the lost page came back after the move"
expect_line "$out" "other pages intact: 2047 of 2047" "drain: the move changed other pages"
pmtest drain p0 cancel=1 >/dev/null 2>&1 || true
# a whole-chunk discard makes the lost page a hole again
pmtest punch dr 2M 2M >/dev/null || fail "punch of the chunk with the lost page"
pmtest touch dr 2M 2M read=1 >/dev/null || fail "the discarded chunk still gives a memory error"
pmtest domain-destroy dr >/dev/null

# ---- 3. the held unit reaches nobody; its block still goes offline ----
check_eq "p0 allocated after the domains left" 0 "$(pool_attr p0 allocated_bytes)"
free=$(pool_attr p0 free_bytes)
big=$(( (free / 2097152 - 8) * 2 ))M	# all of it but 16 MiB of slack
pmtest domain-create all $big 0 $big pools=p0 >/dev/null || fail "a domain with all of p0 ($big)"
out=$(pmtest touch all 0 $big 2>&1) || fail "the tenant with all of p0 could not touch it all: $out"
echo "$out" | grep -q SIGBUS && fail "the tenant with all of p0 met a poisoned page: $out"
pmtest domain-destroy all >/dev/null
bad=$(dmesg | sed -n 's/.*memory error at PFN \(0x[0-9a-f]*\) (node '"$node"'.*/\1/p' | tail -n 1)
[ -n "$bad" ] || fail "no memory error logged on node $node"
blk=memory$(( bad * 4096 / $(block_bytes) ))
echo offline > $MEMSYS/$blk/state 2>/tmp/err ||
	fail "$blk (holds the poisoned unit at PFN $bad): offline refused: $(cat /tmp/err)"
# 6.12 counts each block's poisoned pages and won't online it again; 6.1
# re-initialises the block's memmap at online, poison flag and all, and
# poolmem's notifier refuses it there (it keeps the PFNs of domain pages
# that took an error)
echo online_movable > $MEMSYS/$blk/state 2>/tmp/err && fail "$blk went online again with a poisoned page in it"
grep -q "hardware error" /tmp/err || fail "$blk: online refused, but not for the poisoned page: $(cat /tmp/err)"
info "$blk stays offline: $(cat /tmp/err)"

# ---- 4. soft offline: nothing lost ----
for method in ioctl sysfs; do
	s0=$(pool_attr p0 soft_offlines)
	pmtest domain-create so 8M 0 8M pools=p0 >/dev/null	# the move stays in p0
	out=$(pmtest memerr so huge $method $PAGE) || fail "soft $method: $out"
	info "soft $method: $(echo "$out" | tr '\n' '|')"
	expect_line "$out" "record: kind soft action moved domain so offset 0x205000 pool p0" "soft $method: record"
	expect_line "$out" "page $PAGE: intact" "soft $method: the page's data was lost"
	expect_line "$out" "other pages intact: 2047 of 2047" "soft $method: other pages changed"
	check_eq "soft $method: pool soft_offlines" $((s0 + 1)) "$(pool_attr p0 soft_offlines)"
	check_eq "soft $method: domain memory_errors" 0 "$(dom_attr so memory_errors)"
	pmtest domain-destroy so >/dev/null
done

# ---- 6. error policy: two errors degrade p1, which drains itself ----
poolctl pool set p1 --on-errors drain --error-threshold 2/1h >/dev/null || fail "pool set --on-errors drain"
check_eq "p1 error_policy" "drain 2/3600" "$(pool_attr p1 error_policy)"
for v in ev1 ev2; do
	pmtest domain-create $v 8M 0 8M pools=p1 >/dev/null
done
out=$(pmtest memerr ev1 huge inject $PAGE) || fail "policy: first error: $out"
check_eq "p1 degraded after one error" 0 "$(pool_attr p1 degraded)"
# ev2's memory is placed on p1 before p0 is allowed: which pool a new
# domain's first chunk takes among several is the placement policy's
# choice (a round-robin cursor starts at a salted place)
pmtest memerr ev2 huge none $PAGE >/dev/null || fail "policy: stamping ev2"
for v in ev1 ev2; do pmtest set $v pools=p1,p0 >/dev/null; done	# somewhere to go
out=$(pmtest memerr ev2 huge inject $PAGE) || fail "policy: second error: $out"
expect_line "$out" "record: kind hard action isolated domain ev2 offset 0x205000 pool p1" "policy: second error not in p1"
wait_for 10 grep -qx 1 $POOLSYS/p1/degraded || fail "p1 not degraded after its second error"
wait_for 30 grep -qx 0 $POOLSYS/p1/allocated_bytes || fail "p1 not drained: $(pool_attr p1 allocated_bytes) bytes left"
check_eq "p1 state" draining "$(pool_attr p1 state)"
poolctl pool show p1 | grep -q "health     DEGRADED" || fail "pool show does not say degraded: $(poolctl pool show p1)"
poolctl pool show p1 | sed "s/^/$TEST: example: /"
poolctl pool list | sed "s/^/$TEST: example: /"
dmesg | grep -q "pool p1: 2 memory errors within the error policy's period: degraded" || fail "no degraded line in the log"
wait_for 10 sh -c 'dmesg | grep -q "pool p1: degraded and drained"' || fail "no drained line in the log"
for v in ev1 ev2; do
	out=$(pmtest memerr $v huge check $PAGE)
	expect_line "$out" "page $PAGE: SIGBUS BUS_MCEERR_AR at its address" "policy: $v's lost page after the drain"
	expect_line "$out" "other pages intact: 2047 of 2047" "policy: $v's data after the drain"
	pmtest domain-destroy $v >/dev/null
done
pmtest drain p1 cancel=1 >/dev/null || fail "undrain of a degraded pool"
check_eq "p1 degraded after undrain" 0 "$(pool_attr p1 degraded)"
poolctl pool set p1 --on-errors report >/dev/null
check_eq "p1 error_policy" report "$(pool_attr p1 error_policy)"

# what the kernel itself said (it gives up on poolmem's pages; see mf.c)
dmesg | grep -E "Memory failure|soft.offline|Soft.offlin|MCE: Killing" | sed 's/^\[[^]]*\] //; s/0x[0-9a-f]*/PFN/g' |
	sort | uniq -c | while read -r line; do info "kernel: $line"; done

# poolctl pool soft-offline: the operator's way, by host address
pmtest domain-create sp 8M 0 8M pools=p0 >/dev/null
pmtest touch sp 0 8M >/dev/null
phys=$(poolctl vm map sp | awk 'NR == 2 { print $(NF - 2) }')
out=$(poolctl pool soft-offline $phys) || fail "poolctl pool soft-offline $phys: $out"
expect_line "$out" "domain sp offset 0x0 moved with its data" "poolctl pool soft-offline"
info "example: # poolctl pool soft-offline $phys"
info "example: $out"
expect_exit 3 "not in a domain.s chunk" poolctl pool soft-offline 0x1000
pmtest domain-destroy sp >/dev/null

# ---- 7. held units leave the managed count (issue 46, item 1) ----
# p1 holds the units of the policy step's two errors. With every domain
# gone, every block of p1's node goes offline: the node's MemTotal must be
# 0 kB, and the system's MemTotal must fall by exactly what the node had.
# Before the fix, 6.12 left 2,044 kB per held unit (its 511 PageOffline
# pages: offline_pages() skips them as already uncounted) in the node's
# and the system's MemTotal for good.
n1=$(pool_attr p1 node)
check_eq "held units: p1 allocated before its node goes offline" 0 "$(pool_attr p1 allocated_bytes)"
[ "$(pool_attr p1 memory_errors)" -ge 1 ] || fail "held units: p1 has no memory error to hold a unit"
node_before=$(node_memtotal_kb $n1)
sys_before=$(awk '/^MemTotal/ { print $2 }' /proc/meminfo)
nb=0
for b in $(node_blocks $n1); do
	[ "$(cat $MEMSYS/$b/state)" = online ] || continue
	echo offline > $MEMSYS/$b/state 2>/tmp/err || fail "held units: $b of node $n1 did not go offline: $(cat /tmp/err)"
	nb=$((nb + 1))
done
node_after=$(node_memtotal_kb $n1)
sys_after=$(awk '/^MemTotal/ { print $2 }' /proc/meminfo)
info "held units: $nb blocks of node $n1 offline; node MemTotal $node_before -> $node_after kB, system $sys_before -> $sys_after kB"
check_eq "held units: node $n1 MemTotal after all its blocks went offline (kB)" 0 "$node_after"
check_eq "held units: the system's MemTotal fell by the node's (kB)" "$node_before" $((sys_before - sys_after))

# ---- 5. a clean log ----
if dmesg | grep -E "WARNING:|BUG:|Oops|general protection"; then
	fail "warnings in the log"
fi
info "ok"
