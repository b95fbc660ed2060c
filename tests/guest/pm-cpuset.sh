# rig-topologies: nvdimm-numa
# THEORY OF OPERATION: where a domain's chunks come from is the operator's
# policy for the domain, not the faulting task's cpuset. libvirt confines
# QEMU with <numatune mode='strict' nodeset='0'> (cpuset.mems=0); the page
# allocator confines every allocation of such a task to node 0, so a
# pool-first domain got no pool memory and SIGBUSed although admission had
# granted it. Both pmtest and Debian's QEMU fault a pool-only domain from a
# cgroup with cpuset.mems=0 and must get all of it from the pools.
. /rig/tests/lib/common.sh
pm_pools_up
CG=/sys/fs/cgroup
grep -q " $CG cgroup2 " /proc/mounts || { mkdir -p $CG; mount -t cgroup2 none $CG; }
grep -qw cpuset $CG/cgroup.controllers || skip "no cpuset controller"
echo +cpuset > $CG/cgroup.subtree_control
mkdir -p $CG/vm
echo 0 > $CG/vm/cpuset.mems
check_eq "cgroup cpuset.mems" 0 "$(cat $CG/vm/cpuset.mems.effective)"
in_cg() { sh -c 'echo $$ > /sys/fs/cgroup/vm/cgroup.procs && exec "$@"' sh "$@"; }

pmtest domain-create cs 32M 0 32M tier=pool-first >/dev/null
in_cg pmtest touch cs 0 32M
check_eq "cs pool bytes" $((32 * MiB)) "$(dom_attr cs pool_bytes)"
check_eq "cs SIGBUS" 0 "$(dom_attr cs sigbus)"
pmtest domain-destroy cs >/dev/null

arg=$(poolctl vm create csq --size 64M --pool 64M --tier-policy pool-first | sed -n 2p)
# shellcheck disable=SC2086
in_cg sh -c '. /rig/tests/lib/common.sh; pm_qemu /tmp/con-cs "$@"' sh $arg > /tmp/qemu-cs.log 2>&1 &
qpid=$!
wait_for 240 grep -q D /tmp/con-cs || fail "QEMU in cpuset.mems=0 did not run: $(cat /tmp/qemu-cs.log)"
check_eq "QEMU's domain: pool bytes" $((64 * MiB)) "$(dom_attr csq pool_bytes)"
pmtest guest-check /run/poolmem/csq
rc=0
wait $qpid || rc=$?
check_eq "QEMU exit status" $PM_QEMU_GUEST_EXIT $rc
poolctl vm destroy csq >/dev/null
rmdir $CG/vm
