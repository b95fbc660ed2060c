# rig-topologies: cxl2
# rig-boot: own
# THEORY OF OPERATION: "poolctl pool online --cxl MEMDEV" starts from a raw
# CXL memdev: it creates the pmem region (libcxl), the devdax namespace
# (libndctl), goes to system-ram (libdaxctl), onlines and registers the pool,
# without running cxl, ndctl or daxctl. The second device goes the devdax
# way. Bad memdevs and a memdev with no capacity left fail cleanly and leave
# no region behind.
. /rig/tests/lib/common.sh
pm_load
pm_clean
wait_for 20 cxl_pmem_ready || fail "cxl_pmem not ready"
regions() { ls /sys/bus/cxl/devices | grep -c '^region' || true; }

expect_exit 3 "^poolctl: mem9: no such CXL memdev" poolctl pool online --cxl mem9
expect_exit 2 "not both" poolctl pool online dax0.0 --cxl mem0
check_eq "regions after failures" 0 "$(regions)"

# --size: a region of part of the device (checked first, nothing left on refusal)
expect_exit 2 "^poolctl: --size 300M: must be a multiple of 256.0 MiB" poolctl pool online --cxl mem0 --size 300M
expect_exit 4 "^poolctl: mem0: region size 4096 MiB: the memdevs have 2048 MiB of persistent capacity" \
	poolctl pool online --cxl mem0 --size 4G --name big
check_eq "regions after refused sizes" 0 "$(regions)"
out=$(poolctl pool online --cxl mem0 --name c0 --size 1G)
echo "$out"
echo "$out" | grep -qE "^mem0: region region[0-9]+ \(1.0 GiB\) -> devdax dax[0-9.]+$" || fail "region line: $out"
echo "$out" | grep -qE "^c0: onlined [67] blocks \([0-9.]+ [MG]iB\) of dax[0-9.]+ on node [0-9]+" || fail "summary: $out"
check_eq "regions" 1 "$(regions)"
n0=$(pool_attr c0 node)
check_eq "c0: blocks online" "$(node_blocks $n0 | wc -l)" "$(online_node_blocks $n0)"
check_eq "c0 region size" $((1 << 30)) "$(printf '%d' "$(cat /sys/bus/cxl/devices/$(ls /sys/bus/cxl/devices | grep '^region' | head -n1)/size)")"

# mem0 has 1 GiB left: more is refused (6.1's memdev also has no second
# endpoint decoder; 6.12's has), and nothing may be left behind
expect_exit 4 "^poolctl: mem0: region size 2048 MiB: the memdevs have 1024 MiB of persistent capacity free" \
	poolctl pool online --cxl mem0 --size 2G --name again
check_eq "regions after refused online" 1 "$(regions)"
expect_exit 4 "^poolctl: c0: cannot register pool: a pool of that name exists" poolctl pool online --cxl mem1 --name c0
check_eq "regions after duplicate name" 1 "$(regions)"

# the other device the devdax way
dax=""
for d in $(make_devdax); do
	if [ "$(basename $(readlink /sys/bus/dax/devices/$d/driver))" = device_dax ]; then dax=$d; fi
done
[ -n "$dax" ] || fail "no devdax device for the second memdev"
poolctl pool online $dax --name c1
check_eq "pools" "c0 c1" "$(ls $POOLSYS | xargs)"

poolctl vm create v --size 32M --pool 32M --pool-select round-robin >/dev/null
pmtest touch v 0 32M >/dev/null
check_eq "chunks spread over both CXL pools" "8 8" "$(dom_pool_chunks v c0) $(dom_pool_chunks v c1)"
poolctl vm destroy v >/dev/null
poolctl pool remove c0
poolctl pool remove c1
