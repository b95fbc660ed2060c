# rig-topologies: cxl2
# rig-boot: own
# The newcomer's demo (make demo), kept in the cxl2 suite so it cannot rot:
# two emulated CXL memory expanders become two pools with one poolctl
# command each, two VMs get per-tier quotas, a QEMU-like program touches
# their memory, and poolctl and the exporter show where it all went.
. /rig/tests/lib/common.sh
wait_for 20 cxl_pmem_ready || fail "CXL devices not ready"
say() { echo; echo "### $*"; }

say "before: the guest has DRAM on node 0 and two raw CXL memory devices"
poolctl node list
ls /sys/bus/cxl/devices | grep '^mem' | xargs echo "CXL memdevs:"

say "poolctl pool online --cxl mem0 --name cxl0 ; poolctl pool online --cxl mem1 --name cxl1"
poolctl pool online --cxl mem0 --name cxl0 2>/dev/null
poolctl pool online --cxl mem1 --name cxl1 2>/dev/null
poolctl pool list

say "poolctl vm create web1 --size 256M --local 64M --pool 192M --tier-policy local-first --pool-select smart-idle"
poolctl vm create web1 --size 256M --local 64M --pool 192M --tier-policy local-first --pool-select smart-idle
say "poolctl vm create db1 --size 128M --pool 128M --tier-policy pool-first --pool-select round-robin"
poolctl vm create db1 --size 128M --pool 128M --tier-policy pool-first --pool-select round-robin

say "a QEMU-like program touches 200M of web1 and all of db1"
pmtest touch web1 0 200M
pmtest touch db1 0 128M

say "poolctl status"
poolctl status
say "poolctl vm show web1"
poolctl vm show web1
say "poolctl vm map db1 (first ranges)"
poolctl vm map db1 | head -n 6

say "poolmem-exporter: a few of the metrics Prometheus scrapes"
poolmem-exporter --once > /tmp/demo.prom 2> /tmp/demo.err
grep -E '^poolmem_(pool_allocated_bytes|domain_usage_bytes|pool_access_factor|pool_memory_tier)' /tmp/demo.prom
say "poolmem-exporter's loaded-latency probe: one dependent load at a time on each pool's memory"
for p in cxl0 cxl1; do
	c=$(awk -v k="poolmem_pool_probe_latency_seconds_count{pool=\"$p\"}" '$1 == k { print $2 }' /tmp/demo.prom)
	s=$(awk -v k="poolmem_pool_probe_latency_seconds_sum{pool=\"$p\"}" '$1 == k { print $2 }' /tmp/demo.prom)
	[ -n "$c" ] && [ "${c%.*}" -gt 0 ] || fail "$p: no probe figures: $(cat /tmp/demo.err)"
	awk -v p=$p -v c="$c" -v s="$s" 'BEGIN { printf "%s: %d loads probed, mean %.0f ns per load (emulated CXL memory under TCG)\n", p, c, s / c * 1e9 }'
done
! grep -q "does not read back" /tmp/demo.err || fail "probe: $(cat /tmp/demo.err)"

check_eq "web1 local quota filled first" $((64 * MiB)) "$(dom_attr web1 local_bytes)"
check_eq "db1 all in pools" $((128 * MiB)) "$(dom_attr db1 pool_bytes)"
poolctl vm destroy web1 >/dev/null
poolctl vm destroy db1 >/dev/null
