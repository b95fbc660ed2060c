# rig-topologies: cxl2 nvdimm-numa
# rig-debug: core
# THEORY OF OPERATION: no input may oops or WARN the kernel (the rig fails
# the test on any Call Trace/BUG/WARNING in dmesg), and every malformed
# request gets a clean error. First targeted cases with their exact errno,
# then 100k+ ioctls with random commands, sizes, flags, names, pointers and
# huge values: none may create anything.
. /rig/tests/lib/common.sh
pm_pools_up

expect_errno EINVAL pmtest domain-create "" 16M 0 16M
expect_errno EINVAL pmtest domain-create "a/b" 16M 0 16M
expect_errno EINVAL pmtest domain-create control 16M 0 16M
expect_errno EINVAL pmtest domain-create .hidden 16M 0 16M
expect_errno EINVAL pmtest domain-create -x 16M 0 16M
expect_errno EINVAL pmtest domain-create 0123456789012345678901234567890123 16M 0 16M
expect_errno EINVAL pmtest domain-create big 0x7fffffffffe00000 0 0x7fffffffffe00000
expect_errno EINVAL pmtest domain-create ovf 16M 0xffffffffffe00000 0x400000
expect_errno EINVAL pmtest domain-create odd 15M 0 15M
expect_errno EINVAL pmtest domain-create chunk 16M 0 16M chunk=3M
expect_errno EINVAL pmtest domain-create chunk 16M 0 16M chunk=1M
expect_errno EINVAL pmtest domain-create chunk 4G 0 4G chunk=2G
expect_errno EINVAL pmtest domain-create short 16M 2M 2M
expect_errno EINVAL pmtest domain-create node 16M 0 16M home=1000
expect_errno EINVAL pmtest domain-create node 16M 0 16M home=-7
expect_errno EINVAL pmtest domain-create mode 16M 0 16M mode=4755
expect_errno ENOSPC pmtest domain-create huge 64G 0 64G
expect_errno ENOSPC pmtest domain-create hugel 64G 64G 0
expect_errno ENOENT pmtest domain-create nopool 16M 0 16M pools=nosuch
expect_errno ENOENT pmtest domain-destroy nosuch
expect_errno ENOENT pmtest pool-info nosuch
expect_errno ENOENT pmtest rmap 0x1000
expect_errno EEXIST pmtest pool-add again $(pool_attr p0 node)
expect_errno EINVAL pmtest pool-add bad 9999
expect_errno EINVAL pmtest pool-add bad $(pool_attr p1 node) overcommit=50
pmtest domain-create dup 16M 0 16M >/dev/null
expect_errno EEXIST pmtest domain-create dup 16M 0 16M
expect_errno EBUSY pmtest pool-remove p0
pmtest domain-destroy dup >/dev/null

# admission control counts what is committed already
half=$(( $(pool_attr p0 capacity_bytes) / MiB / 4 * 2 ))   # half the pool, in whole chunks
pmtest domain-create a1 ${half}M 0 ${half}M pools=p0 >/dev/null
pmtest domain-create a2 ${half}M 0 ${half}M pools=p0
expect_errno ENOSPC pmtest domain-create a3 ${half}M 0 ${half}M pools=p0
pmtest domain-create a4 ${half}M 0 ${half}M pools=p1 >/dev/null
pmtest domain-destroy a1 >/dev/null
pmtest domain-create a3 ${half}M 0 ${half}M pools=p0 >/dev/null
for d in a2 a3 a4; do pmtest domain-destroy $d >/dev/null; done

# migration ioctls: bad flags, sizes and names get an errno; admission
# applies to live changes as to create
expect_errno ENOENT pmtest drain nosuch
expect_errno ENOENT pmtest set nosuch local=0
expect_errno EINVAL pmtest drain p0 check=1 cancel=1
pmtest domain-create chg 16M 16M 0 >/dev/null
expect_errno EINVAL pmtest set chg local=2M pool=2M		# quotas must cover the size
expect_errno EINVAL pmtest set chg local=3M			# not a chunk multiple
expect_errno EINVAL pmtest set chg local=32M			# above the size
expect_errno EINVAL pmtest set chg flags=0x80
expect_errno EINVAL pmtest set chg flags=0x10 tiering=on scan=0 hot=99999999
fill=$(( $(pool_attr p0 capacity_bytes) / MiB / 2 * 2 - 8 ))	# all of p0 but 8 MiB
pmtest domain-create filler ${fill}M 0 ${fill}M pools=p0 >/dev/null
expect_errno ENOSPC pmtest set chg pool=16M pools=p0	# 16 MiB more on p0: admission refuses
check_eq "chg quotas unchanged" "$((16 * MiB)) 0" "$(dom_attr chg local_quota_bytes) $(dom_attr chg pool_quota_bytes)"
pmtest set chg pool=8M pools=p0 >/dev/null			# 8 MiB fit
check_eq "chg pool quota" $((8 * MiB)) "$(dom_attr chg pool_quota_bytes)"
for d in chg filler; do pmtest domain-destroy $d >/dev/null; done

pmtest fuzz $(pm_scale 120000) 1
check_eq "domains after fuzzing" "" "$(pmtest domain-list | xargs)"
check_eq "pools after fuzzing" "p0 p1" "$(pmtest pool-list | xargs)"
