# rig-topologies: nvdimm-numa
# rig-debug: core
# rig-order: last
# THEORY OF OPERATION: kmod/main.c documents one lock order. Lockdep (the
# debug kernel's CONFIG_PROVE_LOCKING) records every dependency the boot's
# other tests made: /proc/lockdep lists, under each lock class, the
# classes taken while it was held ("-> [key] NAME", distance one). This
# test runs after the others of its boot and checks that graph against
# the documented order, so the documentation can't drift from the code:
#  1. every edge between two classes of ORDER below goes down the list
#     (lockdep itself only reports a cycle, not a wrong document);
#  2. pm_held_lock and pm_reserve.offline_sem take nothing of poolmem's
#     under them, and pm_pool.af_lock nothing at all;
#  3. the edges that main.c names were seen, so a rename of a class or a
#     boot whose tests reached nothing fails rather than passes empty.
# Needs lockdep: skipped on Debian's kernels (tests/skips.allowed), run by
# make check's debug job.
. /rig/tests/lib/common.sh
L=/proc/lockdep
[ -r $L ] || skip "this kernel has no lockdep (make check's debug job runs it)"
grep -q '^ -> ' $L || skip "lockdep lists no dependencies (CONFIG_PROVE_LOCKING is off)"
# edges "A -> B" (B taken while A held), distance one
awk '/^[0-9a-f]/ { c = $0; sub(/^[0-9a-f]+ FD: *[0-9]+ BD: *[0-9]+ [^:]*: /, "", c) }
     /^ -> / { d = $0; sub(/^ -> \[[0-9a-f]*\] /, "", d); print c " -> " d }' $L | sort -u > /tmp/lockdep.edges
info "$(wc -l < /tmp/lockdep.edges) dependencies recorded"

# poolmem's part of the graph, for the log
grep -E '(^| )(pm_|\(pm_)' /tmp/lockdep.edges | grep -vE ' -> (&____s|&c->lock|&n->list_lock|&obj_hash|&object->lock|kmemleak|pool_lock|kfence|quarantine|batched_entropy|rcu_|&rq->|&base->lock|tk_core|&rcu_state|&cfs_rq|key#|pcpu_lock|percpu_counters|pgd_lock|&meta->lock|krc.lock|fs_reclaim|\(console_sem\)|&sem->wait_lock|&k->list_lock|&lock->wait_lock)' |
	sed "s/^/$TEST: /"

# The documented order (kmod/main.c, "Lock order"): a rank per class, outer
# locks lower. An edge between two ranked classes must go to a higher rank;
# classes of one rank are never held together. Unranked classes (the
# core's) are not judged. The patterns match lockdep's class names.
awk -F' -> ' -v T="$TEST" '
function rank(c) {
	if (c == "mem_hotplug_lock") return 10
	if (c == "(memory_chain).rwsem") return 20
	if (c ~ /^&sb->s_type->i_mutex_key/) return 30	# VFS inode locks
	if (c == "pm_lock" || c ~ /^&mm->mmap_lock/ || c == "pm_reserve.offline_sem") return 40
	if (c == "pm_domain.lock") return 50
	if (c == "(pm_rmap).ma_lock" || c == "pm_retired_lock") return 60
	if (c == "pm_pool.af_lock" || c == "pm_reserve.lock") return 70
	if (c == "pm_held_lock" || c == "pm_mf_lock" || c == "pm_mf_fifo_lock" || c == "pm_bind_lock") return 90
	return 0
}
{
	ra = rank($1); rb = rank($2)
	if (!ra || !rb) next
	# mmap_lock/1 under mmap_lock (fork, exec: a second mm) belongs to the core
	if ($1 ~ /^&mm->mmap_lock/ && $2 ~ /^&mm->mmap_lock/) next
	# a directory inode lock, then the inode lock of a file in it (VFS)
	if ($1 ~ /^&sb->s_type->i_mutex_key/ && $2 ~ /^&sb->s_type->i_mutex_key/) next
	if (ra >= rb) { print T ": " $1 " -> " $2 ": against the documented order (rank " ra ", then " rb ")"; bad++ }
}
END { exit bad > 0 }' /tmp/lockdep.edges || fail "dependencies against kmod/main.c's lock order (above)"

# what must have been seen, or the check above judged nothing
for e in 'pm_lock -> pm_pool.af_lock' '&mm->mmap_lock -> pm_domain.lock' '(memory_chain).rwsem -> pm_reserve.offline_sem' \
	 'pm_domain.lock -> pm_pool.af_lock' 'pm_reserve.offline_sem -> pm_reserve.lock' \
	 'mem_hotplug_lock -> (memory_chain).rwsem'; do
	grep -qxF "$e" /tmp/lockdep.edges || fail "lockdep recorded no '$e': a class renamed, or the boot's tests reached less"
done
grep -q '^&sb->s_type->i_mutex_key[^ ]* -> pm_lock$' /tmp/lockdep.edges || fail "lockdep recorded no inode lock -> pm_lock"
