# rig-topologies: nvdimm-numa
# rig-boot: own
# THEORY OF OPERATION: the kernel items an operator meets (issue 13), each
# checked where it shows:
#  1. a refused create (domain or profile) names the failed check in one
#     kernel log line, and
#     poolctl prints admission's figures (asked, left, limit, committed);
#  2. module parameters refuse values out of range (no overflow);
#  3. a node is a home node or a pool, never both (either order refused);
#  4. a pool whose memory was all offlined is not tried any more (no
#     failures counted, no "allocation from offline node" dump);
#  5. domain sysfs attributes are root's (and stats_gid's), not everyone's
#  6. a live pool's overcommit changes (poolctl pool set --overcommit): a
#     decrease below what its domains commit is refused with the figures
#     (the module loaded again with stats_gid=1000: that group reads them);
#  6. the last try of a placement reclaims: a pool node full of clean page
#     cache still gives a pool-only VM its memory (no SIGBUS);
#  7. poolctl pool poison-scan with no pool on CXL memory exits 3 and still
#     records the scan's time for the exporter.
# Own boot: it offlines a pool node's memory.
. /rig/tests/lib/common.sh
pm_pools_up
n0=$(pool_attr p0 node)
n1=$(pool_attr p1 node)
klog_has() { dmesg | grep -qE "$1" || fail "no kernel log line matching '$1': $(dmesg | tail -n 3)"; }

# --- 1. the kernel names the check; poolctl gives figures ---
expect_errno EINVAL pmtest domain-create odd 15M 0 15M
klog_has "POOLMEM_DOMAIN_CREATE: domain odd refused: size not a multiple of the chunk size"
expect_errno EINVAL pmtest domain-create over 16M 32M 0
klog_has "domain over refused: a tier quota above the size"
expect_errno EINVAL pmtest domain-create short 16M 2M 2M
klog_has "domain short refused: quotas do not cover the size"
expect_errno EINVAL pmtest domain-create nonode 16M 16M 0 home=1000
klog_has "domain nonode refused: home node offline or without memory"
expect_errno EINVAL pmtest profile-create podd 3M 100%
klog_has "POOLMEM_PROFILE_CREATE: profile podd refused: quota not a multiple of the chunk size"
expect_errno EINVAL pmtest profile-create pthin 20% 30%
klog_has "profile pthin refused: quotas do not cover 100% of a size"
expect_errno EINVAL pmtest profile-create pmode 0 100% mode=1777
klog_has "profile pmode refused: mode has bits beyond 0777"
expect_exit 4 "^poolctl: huge: cannot create domain: pool tier on every pool asks 64.0 GiB, [0-9.]+ [MG]iB left of [0-9.]+ [MG]iB \(0 B committed to other domains\); the limit is capacity x overcommit$" \
	poolctl vm create huge --size 64G --pool 64G
expect_exit 4 "^poolctl: hugel: cannot create domain: local tier on node 0 asks 64.0 GiB, .* left of .*local_overcommit_pct$" \
	poolctl vm create hugel --size 64G --local 64G
poolctl vm create held --size 512M --pool 512M --pools p0 >/dev/null
expect_exit 4 "^poolctl: more: cannot create domain: pool tier on pools p0 asks 2.0 GiB, .* \(512.0 MiB committed to other domains\)" \
	poolctl vm create more --size 2G --pool 2G --pools p0
poolctl vm destroy held >/dev/null

# --- 2. module parameters in range ---
P=/sys/module/poolmem/parameters
for bad in "local_overcommit_pct 0" "local_overcommit_pct 1001" "local_overcommit_pct 18446744073709551615" \
	"local_overcommit_pct -1" "window_ms 0" "window_ms 9" "drain_batch 0" "drain_batch 17" \
	"drain_workers 0" "drain_workers 65" \
	"tiering_period_ms 0" "tiering_cold_periods 0"; do
	set -- $bad
	before=$(cat $P/$1)
	if echo $2 > $P/$1 2>/dev/null; then
		fail "$1 = $2 accepted (now $(cat $P/$1))"
	fi
	check_eq "$1 unchanged after writing $2" "$before" "$(cat $P/$1)"
done
echo 150 > $P/local_overcommit_pct || fail "local_overcommit_pct 150 refused"
check_eq "local_overcommit_pct" 150 "$(cat $P/local_overcommit_pct)"
echo 100 > $P/local_overcommit_pct
check_eq "stats_gid read-only" "-r--r--r--" "$(ls -l $P/stats_gid | cut -c1-10)"

# --- 3. home node or pool node, not both ---
pmtest domain-create homed 16M 16M 0 >/dev/null	# home: the first node with CPUs
home=$(dom_attr homed home_node)
expect_errno EBUSY pmtest pool-add dram $home
klog_has "pool dram refused: node $home is the home node of domain homed"
pmtest domain-destroy homed >/dev/null
expect_errno EINVAL pmtest domain-create onpool 16M 16M 0 home=$n0
klog_has "domain onpool refused: home node is a pool's node"
expect_exit 2 "^poolctl: --home-node $n0: it is pool p0's node" poolctl vm create onpool --size 16M --local 16M --home-node $n0

# --- 4. a pool without memory is skipped ---
poolctl pool offline p1 >/dev/null || fail "pool offline p1"
check_eq "node $n1 memory after offline" 0 "$(node_memtotal_kb $n1)"
f0=$(pool_attr p1 failures)
dmesg -c >/dev/null
pmtest domain-create rr 32M 0 32M pools=p0,p1 select=round-robin >/dev/null
pmtest touch rr 0 32M >/dev/null || fail "touch with an empty pool in the mask"
check_eq "rr sigbus" 0 "$(dom_attr rr sigbus)"
check_eq "rr chunks on p0" 16 "$(dom_pool_chunks rr p0)"
check_eq "p1 failures (not tried)" "$f0" "$(pool_attr p1 failures)"
dmesg | grep -q "allocation from offline node" && fail "allocation from offline node: $(dmesg | tail -n 5)"
pmtest domain-destroy rr >/dev/null
online_node_blocks $n1 >/dev/null

# --- 5. domain attributes are not world-readable ---
pmtest domain-create priv 16M 16M 0 >/dev/null
check_eq "stat mode" "-r--r-----" "$(ls -l $DOMSYS/priv/stat | cut -c1-10)"
check_eq "fault_latency_histogram owner" "0 0" "$(stat -L -c '%u %g' $DOMSYS/priv/fault_latency_histogram)"
expect_exit 1 "Permission denied" pmtest run-as 65534 65534 cat $DOMSYS/priv/creator
pmtest domain-destroy priv >/dev/null

# --- 6. page cache on the pool node does not cost a VM its memory ---
# Clean page cache bound to the pool node: a sparse file read through (its
# holes come in as zeroed page-cache pages; the block device stays small).
if ! grep -qw ext4 /proc/filesystems && ! modprobe ext4 2>/dev/null; then
	# the rig's debug kernel has no ext4 (nor a sizable brd)
	info "part 6 skipped: no ext4 in this kernel"
else
modprobe brd rd_nr=1 rd_size=65536 || fail "brd"
mke2fs -q /dev/ram0 >/dev/null || fail "mke2fs"
mkdir -p /mnt/cache && mount -t ext4 /dev/ram0 /mnt/cache || fail "mount"
truncate -s 4G /mnt/cache/sparse
free0=$(node_free_kb $n0)
pmtest cache-fill $n0 /mnt/cache/sparse $(( free0 / 1024 + 256 )) || fail "cache-fill"
info "node $n0: free $(node_free_kb $n0) kB after filling (was $free0 kB); $(grep FilePages $NODESYS/node$n0/meminfo)"
[ "$(node_free_kb $n0)" -lt 65536 ] || fail "node $n0 still has $(node_free_kb $n0) kB free: page cache did not fill it"
pmtest domain-create full 256M 0 256M pools=p0 >/dev/null
pmtest touch full 0 256M >/dev/null || fail "touch over page cache: $(dmesg | tail -n 3)"
check_eq "full sigbus" 0 "$(dom_attr full sigbus)"
check_eq "full chunks on p0" 128 "$(dom_pool_chunks full p0)"
pmtest domain-destroy full >/dev/null
umount /mnt/cache
rmmod brd
fi

# --- 5b. stats_gid: the group that may read domain attributes ---
pm_clean
umount /run/poolmem 2>/dev/null || true
rmmod poolmem || fail "rmmod poolmem: $(lsmod | grep poolmem)"
modprobe poolmem stats_gid=1000 || fail "modprobe poolmem stats_gid=1000"
check_eq "stats_gid" 1000 "$(cat /sys/module/poolmem/parameters/stats_gid)"
pmtest domain-create grp 16M 16M 0 >/dev/null
check_eq "domain attribute owner with stats_gid" "0 1000" "$(stat -L -c '%u %g' $DOMSYS/grp/stat)"
pmtest run-as 1000 1000 cat $DOMSYS/grp/stat >/dev/null || fail "group 1000 can't read the domain's stat"
expect_exit 1 "Permission denied" pmtest run-as 65534 65534 cat $DOMSYS/grp/stat
pmtest domain-destroy grp >/dev/null

# ---- 6. the overcommit of a live pool (poolctl pool set --overcommit) ----
# raised, a domain over the pool's capacity is admitted; lowered below what
# it commits, refused with the figures, the ratio unchanged; then lowered
# as far as it holds, and back to 1 once the domain is gone
pm_pools_up	# the module was reloaded (5b)
cap=$(($(pool_attr p0 capacity_bytes) / MiB))
big=$((cap * 13 / 10 / 2 * 2))
expect_exit 4 "^poolctl: oc: cannot create domain: pool tier on pools p0 asks" poolctl vm create oc --size ${big}M --pool ${big}M --pools p0
out=$(poolctl pool set p0 --overcommit 1.5)
echo "$out" | grep -qE "^p0: overcommit 1.5 \(admits [0-9.]+ [MG]iB; 0 B committed\)$" || fail "pool set --overcommit 1.5 said: $out"
check_eq "p0 overcommit_pct" 150 "$(pool_attr p0 overcommit_pct)"
poolctl vm create oc --size ${big}M --pool ${big}M --pools p0 >/dev/null
dmesg -c >/dev/null
expect_exit 4 "^poolctl: p0: cannot lower the overcommit to 1.2: its domains commit [0-9.]+ GiB of pool memory, [0-9.]+ GiB at that ratio" \
	poolctl pool set p0 --overcommit 1.2
dmesg | grep -q "pool p0: overcommit 120% refused: domain oc's pools would hold [0-9]* MiB, $big MiB is committed there" ||
	fail "no kernel line for the refused overcommit: $(dmesg | tail -n 3)"
check_eq "p0 overcommit_pct after the refusal" 150 "$(pool_attr p0 overcommit_pct)"
poolctl pool set p0 --overcommit 140% >/dev/null
check_eq "p0 overcommit_pct (140%: holds ${big} of ${cap} MiB)" 140 "$(pool_attr p0 overcommit_pct)"
expect_exit 2 "^poolctl: --overcommit 150: a ratio from 1 to 10" poolctl pool set p0 --overcommit 150
poolctl vm destroy oc >/dev/null
poolctl pool set p0 --overcommit 1 >/dev/null
check_eq "p0 overcommit_pct after the domain left" 100 "$(pool_attr p0 overcommit_pct)"
check_eq "pool show's overcommit" "1.0" "$(poolctl pool show p0 --json | tr -d ' \n' | sed 's/.*"overcommit":\([0-9.]*\).*/\1/')"

# --- 7. the poison scan where no pool is on CXL memory ---
# Nothing to scan still records the scan's time, so that the exporter's
# poolmem_cxl_poison_scan_timestamp_seconds shows the timer runs here
# (PoolmemPoisonScanMissing fires on a host with pools and no scan).
rm -f /run/poolctl/media-errors.json
expect_exit 3 "^poolctl: poolmem: no pool on CXL memory devices" poolctl pool poison-scan
grep -q '"time":[0-9]' /run/poolctl/media-errors.json || fail "the scan with nothing to scan left no time: $(cat /run/poolctl/media-errors.json 2>&1)"
out=$(poolmem-exporter --once --no-collector.probe 2>&1 | grep '^poolmem_cxl_poison_scan_timestamp_seconds ') ||
	fail "the exporter shows no scan time"
info "scan with no CXL pool: exit 3, $out"
info "pass"
