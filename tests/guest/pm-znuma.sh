# rig-topologies: nvdimm-numa
# rig-debug: core
# rig-core: yes (on Linux 6.1 too: window lookups and the page-cache index the 6.12 fault path checks)
# THEORY OF OPERATION: zNUMA windows (issue 17). A domain made with
# "poolctl vm create --znuma" is one domain whose local and pool quotas are
# two more files, NAME.local and NAME.pool, each starting at offset 0 of its
# window and as large as it. The test checks, from outside the files:
#  1. poolctl prints two memory backends and -numa arguments that follow
#     the host (the distance from node 0 to p0's node, and its HMAT read
#     latency, as sysfs gives them); the backends are ranges of the domain
#     file (offset=) for a QEMU that takes offset=, the window files for
#     one that does not (QEMU 7.2), and poolctl says which it printed for;
#  2. the files: sizes (stat and lseek), one inode with three names;
#  3. placement by window: touching NAME.pool takes pool memory only (the
#     domain's pool bytes and the pool node's used memory grow by as much),
#     NAME.local local memory only; quotas stay exact per window, and a
#     mapping past a window's end is refused;
#  4. discards through a window reach only that window: fallocate at window
#     offsets and MADV_REMOVE of a window mapping (pmtest qemu), while a
#     pattern in the other window stays;
#  5. a drain moves the pool window's chunks to another pool, never into
#     the local window, with the data;
#  6. what stays fixed: quota and tier-policy changes and tiering are
#     refused; a window can't be unlinked alone; destroying the domain
#     removes its windows; names clash both ways.
. /rig/tests/lib/common.sh
pm_pools_up
MiB=1048576
n0=$(pool_attr p0 node)
dist=$(awk -v n=$n0 '{ print $(n + 1) }' $NODESYS/node0/distance)
lat=$(cat $NODESYS/node$n0/access0/initiators/read_latency)

# --- 1. the QEMU arguments ---
# For a QEMU with memory-backend-file's offset= (8.1; the rig's QEMU says
# so in its help) the windows are two ranges of the domain's file; for one
# without (--qemu names a binary that is not there: poolctl prints what
# QEMU 7.2 takes) they are the window files.
out=$(poolctl vm create zo --size 4M --local 2M --pool 2M --znuma --pools p0 --qemu /nonexistent/qemu 2>/tmp/zo.err) ||
	fail "vm create --znuma --qemu /nonexistent/qemu: $out"
grep -q "arguments for no /nonexistent/qemu found: for QEMU 7.2 and later" /tmp/zo.err ||
	fail "poolctl did not say what it printed for: $(cat /tmp/zo.err)"
for want in "mem-path=$PMFS/zo.local,size=$((2 * MiB))," "mem-path=$PMFS/zo.pool,size=$((2 * MiB)),"; do
	case "$out" in *"$want"*) ;; *) fail "vm create --znuma for QEMU 7.2: no '$want' in: $out" ;; esac
done
poolctl vm destroy zo >/dev/null
if qemu-system-x86_64 -object memory-backend-file,help | grep -q '^  offset='; then
	win_local="mem-path=$PMFS/zn,offset=0" win_pool="mem-path=$PMFS/zn,offset=$((32 * MiB))"
else
	win_local="mem-path=$PMFS/zn.local" win_pool="mem-path=$PMFS/zn.pool"
fi
out=$(poolctl vm create zn --size 64M --local 32M --pool 32M --znuma --pools p0 --vcpus 2) ||
	fail "vm create --znuma: $out"
path=$(echo "$out" | sed -n 1p) args=$(echo "$out" | sed -n 2p)
check_eq "domain path" "$PMFS/zn" "$path"
for want in "memory-backend-file,id=mem-zn-local,$win_local,size=$((32 * MiB)),share=on,align=2097152" \
	"memory-backend-file,id=mem-zn-pool,$win_pool,size=$((32 * MiB)),share=on,align=2097152" \
	"-smp 2 -m 64M" "-numa node,nodeid=0,cpus=0-1,memdev=mem-zn-local,initiator=0" \
	"-numa node,nodeid=1,memdev=mem-zn-pool,initiator=0" "-numa dist,src=0,dst=1,val=$dist" "-machine hmat=on" \
	"-numa hmat-lb,initiator=0,target=1,hierarchy=memory,data-type=access-latency,latency=$lat"; do
	case " $args " in
	*" $want"*) ;;
	*) fail "vm create --znuma: no '$want' in: $args" ;;
	esac
done
info "ok: QEMU arguments: $args"
check_eq "sysfs windows" "local 0 $((32 * MiB)) pool $((32 * MiB)) $((32 * MiB))" "$(dom_attr zn windows | xargs)"

# --- 2. the files ---
check_eq "zn.local size" $((32 * MiB)) "$(stat -c %s $PMFS/zn.local)"
check_eq "zn.pool size" $((32 * MiB)) "$(stat -c %s $PMFS/zn.pool)"
check_eq "zn size" $((64 * MiB)) "$(stat -c %s $PMFS/zn)"
check_eq "one inode, three names" "3 $(stat -c %i $PMFS/zn) $(stat -c %i $PMFS/zn)" \
	"$(stat -c %h $PMFS/zn.pool) $(stat -c %i $PMFS/zn.local) $(stat -c %i $PMFS/zn.pool)"

# --- 3. placement by window, quotas ---
used0=$(node_used_kb $n0)
pmtest touch zn.pool 0 32M >/dev/null || fail "touch zn.pool"
check_eq "pool window: pool bytes" $((32 * MiB)) "$(dom_attr zn pool_bytes)"
check_eq "pool window: no local bytes" 0 "$(dom_attr zn local_bytes)"
check_eq "pool window: p0 allocated" $((32 * MiB)) "$(pool_attr p0 allocated_bytes)"
grow=$(($(node_used_kb $n0) - used0))
[ $grow -ge $((30 * 1024)) ] && [ $grow -le $((34 * 1024)) ] ||
	fail "node $n0 used memory grew by $grow kB for a 32 MiB pool window"
check_eq "pool window: st_blocks" $((32 * MiB / 512)) "$(stat -c %b $PMFS/zn.pool)"
pmtest fill zn.local 0 32M 0x5a >/dev/null || fail "fill zn.local"
check_eq "local window: local bytes" $((32 * MiB)) "$(dom_attr zn local_bytes)"
check_eq "local window: pool bytes unchanged" $((32 * MiB)) "$(dom_attr zn pool_bytes)"
check_eq "local window: st_blocks" $((32 * MiB / 512)) "$(stat -c %b $PMFS/zn.local)"
# the whole file sees the windows back to back
pmtest expect zn 0 32M 0x5a >/dev/null || fail "zn's first half is not zn.local"
pmtest expect zn 32M 1 1 >/dev/null || fail "zn's second half is not zn.pool (touch wrote 1)"
truncate -s 32M $PMFS/zn.pool || fail "ftruncate of zn.pool to its own size refused"
truncate -s 16M $PMFS/zn.pool 2>/dev/null && fail "ftruncate of zn.pool to another size accepted"
check_eq "zn.pool size after truncates" $((32 * MiB)) "$(stat -c %s $PMFS/zn.pool)"
pmtest mmap-beyond zn.pool >/dev/null 2>&1 && fail "mmap past zn.pool's end accepted"
pmtest mmap-beyond zn.local >/dev/null 2>&1 && fail "mmap past zn.local's end accepted"
info "ok: mappings past a window's end refused"

# --- 4. discards stay in their window ---
pmtest qemu zn.pool >/dev/null || fail "pmtest qemu zn.pool (fallocate, MADV_REMOVE through the window)"
pmtest expect zn.local 0 32M 0x5a >/dev/null || fail "a discard through zn.pool reached zn.local"
pmtest punch zn.pool 0 32M >/dev/null || fail "punch zn.pool"
check_eq "punched pool window: pool bytes" 0 "$(dom_attr zn pool_bytes)"
check_eq "punched pool window: local bytes kept" $((32 * MiB)) "$(dom_attr zn local_bytes)"
pmtest punch zn.local 32M 4M >/dev/null || fail "punch past zn.local's end: expected a no-op"
check_eq "punch past the window's end: local bytes kept" $((32 * MiB)) "$(dom_attr zn local_bytes)"

# --- 5. a drain keeps the pool window in pools ---
pmtest fill zn.pool 0 32M 0x3c >/dev/null || fail "fill zn.pool"
check_eq "before drain: p0 chunks" 16 "$(dom_pool_chunks zn p0)"
poolctl vm set zn --pools p0,p1 >/dev/null || fail "vm set --pools p0,p1"
poolctl pool drain p0 --allow-local >/dev/null 2>&1 || fail "drain p0"
check_eq "after drain: p1 chunks" 16 "$(dom_pool_chunks zn p1)"
check_eq "after drain: local bytes (the local window only)" $((32 * MiB)) "$(dom_attr zn local_bytes)"
pmtest expect zn.pool 0 32M 0x3c >/dev/null || fail "zn.pool lost its data in the drain"
pmtest expect zn.local 0 32M 0x5a >/dev/null || fail "zn.local lost its data in the drain"
poolctl pool undrain p0 >/dev/null || fail "undrain p0"

# --- 6. what stays fixed ---
expect_exit 2 "windows are fixed" poolctl vm set zn --local 16M --pool 48M
expect_exit 2 "windows are fixed" poolctl vm set zn --tier-policy interleave
expect_exit 2 "windows are fixed" poolctl vm set zn --tiering on
# the kernel's own check, past poolctl's
expect_errno EINVAL pmtest set zn local=16M pool=48M
dmesg | grep -q "domain zn: set refused: a znuma domain" || fail "no log line for the refused set"
expect_errno EINVAL pmtest set zn tier=interleave
expect_exit 2 "must equal --size" poolctl vm create zb --size 64M --local 32M --pool 48M --znuma
expect_exit 2 "no --tiering" poolctl vm create zb --size 64M --local 32M --pool 32M --znuma --tiering on
rm $PMFS/zn.pool 2>/dev/null && fail "unlinking a window alone succeeded"
[ -e $PMFS/zn.pool ] || fail "zn.pool gone after a refused unlink"
expect_exit 4 "exists" poolctl vm create zn.local --size 4M --local 4M
pmtest domain-create zc.pool 4M 4M 0 >/dev/null || fail "domain zc.pool"
expect_exit 4 "NAME.local or NAME.pool, exists" poolctl vm create zc --size 4M --local 2M --pool 2M --znuma
pmtest domain-destroy zc.pool >/dev/null
poolctl vm show zn | grep -q "window  $PMFS/zn.pool: 32.0 MiB at 32.0 MiB" || fail "vm show: $(poolctl vm show zn)"
poolctl vm show zn --json | grep -q '"file": "/zn.pool"' || fail "vm show --json: windows"
poolctl vm destroy zn >/dev/null || fail "vm destroy zn"
[ -e $PMFS/zn.local ] || [ -e $PMFS/zn.pool ] || [ -e $PMFS/zn ] && fail "names left after destroy: $(ls $PMFS)"
info "ok: destroy removed zn, zn.local and zn.pool"
wait_for 10 sh -c "[ \$(cat $POOLSYS/p1/allocated_bytes) = 0 ]" || fail "p1 still holds $(pool_attr p1 allocated_bytes)"
