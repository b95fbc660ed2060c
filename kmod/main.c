// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem: hot-plugged pooled memory (CXL expanders, DAX/PMem devices
 * onlined as system RAM) for VMs, with hard per-tier quotas.
 *
 * How it works
 * ------------
 * A *pool* is a NUMA node of far memory that the administrator registers
 * through /dev/poolmem/control (normally a CPU-less node that kmem created).
 * A *domain* is one VM's memory: a regular file of the poolmem file system
 * (fs.c; mounted at /run/poolmem), which QEMU maps MAP_SHARED as guest RAM
 * (memory-backend-file,mem-path=/run/poolmem/<name>,share=on,align=2M), as
 * it maps a file of hugetlbfs. Domains are made two ways: by name through
 * the control device (domain.c), or by QEMU or libvirt themselves, as files
 * created in a *profile* directory and sized with ftruncate(), which is
 * when admission control runs.
 *
 * A domain is cut into chunks (2 MiB by default, up to 1 GiB). Nothing is
 * allocated at creation; the first touch of a chunk faults (file.c), and
 * placement (chunk.c) picks a tier (the local DRAM of the domain's home
 * node, or the pools) by the domain's tier policy and a pool by its
 * pool-selection policy (policy/pm_policy.c, plain C shared with userspace),
 * allocates the chunk zeroed with __GFP_THISNODE from that node, charges it
 * to the tier, and maps it. Where a domain's chunks come from is the
 * operator's policy for that domain: a faulting task whose cpuset excludes
 * the chosen node has the chunk allocated for it by a kworker.
 *
 * A chunk is made of 2 MiB compound units. In a mapping whose addresses
 * and file offsets agree modulo 2 MiB (QEMU's with align=2M, and any
 * mapping whose address the kernel picks), the touched unit is mapped with
 * one PMD, as a THP of the page cache would be, so a 2 MiB chunk costs one
 * fault and one page-table entry; in any other mapping the whole chunk is
 * mapped at once with vm_insert_pages(). Pages are ordinary struct pages,
 * so get_user_pages() works on domain memory (KVM, vhost, O_DIRECT). Quotas
 * are hard: a chunk never lands in a tier whose quota is used up. When no
 * tier within quota can supply memory, the fault gets SIGBUS and the
 * domain's sigbus counter and a rate-limited log line say so. Faults of one
 * domain run in parallel (a VM's vCPUs): the domain lock covers placement
 * and mapping, not the allocation and zeroing of a chunk, whose bytes are
 * reserved in its tier's usage meanwhile; a fault on a chunk being
 * allocated waits for it, so it is allocated once. Pinnable domains
 * (POOLMEM_DOMAIN_PINNABLE) take chunks only from kernel zones, so VFIO and
 * RDMA can long-term pin them.
 *
 * Admission control refuses (-ENOSPC, with the figures in the log) quotas
 * that do not fit the pools' capacity times their overcommit ratio, or the
 * home node's memory for the local tier.
 *
 * fallocate(PUNCH_HOLE|KEEP_SIZE) and MADV_REMOVE on a domain file (QEMU's
 * discard: balloon, free page reporting, virtio-mem, postcopy) unmap whole
 * chunks from every mapping and return them to their node; partial chunks
 * are zeroed. A chunk still referenced elsewhere after the unmap (a pipe
 * after vmsplice, an io_uring fixed buffer, O_DIRECT in flight) is
 * *retired*: it leaves the domain's map but stays charged to the domain and
 * in the reverse map until a worker sees the last other reference gone.
 *
 * Every chunk is recorded in the domain's chunk map (forward: offset ->
 * pages) and in the global reverse map (rmap.c, a maple tree keyed by PFN
 * range), which answers "which domain owns this host physical address" and
 * which chunks lie in a memory block going offline. Chunks are of the
 * movable class, so they may come from ZONE_MOVABLE, whose promise is that
 * its memory can go offline; but for two kinds (chunk.c), allocated
 * without __GFP_MOVABLE and so only from kernel zones: those of a
 * long-term pinnable domain, and on a kernel with CONFIG_CMA the local
 * tier's, whose node may have CMA pageblocks a module can't tell apart
 * (Debian's kernels have no CMA). The zone a chunk is in, not its class,
 * decides what offline does with it (hotplug.c, unit.c): the kernel's
 * migration can't move chunks
 * (neither LRU nor movable_ops pages), so the memory notifier (hotplug.c)
 * moves them out itself, with poolmem's migration engine, and refuses the
 * offline only for a chunk that truly can't move: long-term pinned,
 * retired and still referenced, poisoned, or with nowhere to go within its
 * domain's quotas and pools. A long-term pin (FOLL_LONGTERM) of a chunk in
 * ZONE_MOVABLE, which the kernel would retry forever, fails with EFAULT
 * (pin.c). No chunk is ever in CMA (chunk.c).
 *
 * Unlinking a named domain's file (or POOLMEM_DOMAIN_DESTROY) removes it
 * from listings at once; its memory is freed when the last open file and
 * mapping go away, as for any unlinked file. A profile domain lives exactly
 * as long as its inode: QEMU's mem-path=DIR unlinks its file at once, so
 * the domain ends with QEMU, however QEMU ends. Each live domain and
 * profile pins the module, so rmmod fails while any exists.
 *
 * Chunks move while their VM runs (move.c): to empty a pool before its
 * memory goes offline (drain), and when a live domain's quotas or pools
 * change. A chunk being moved is busy, as one being allocated is, and
 * faults on it wait (dropping the mmap lock where the fault allows).
 *
 * Kernels: one source builds for Debian 12's Linux 6.1 and the 6.12 LTS.
 * Interfaces that differ live in compat.h alone; what 6.12 changed
 * underneath, and what poolmem does about each change, is in
 * Documentation/kernels.md.
 *
 * Files, with calls running down this list: a file calls only files below
 * it (tests/kmod/layers.py checks the built objects against this list;
 * an upward call must be listed, with its reason, in
 * tests/kmod/layers.allowed, which is empty):
 *   main.c (this: init and exit), ctl.c (control ioctls), set.c
 *   (POOLMEM_DOMAIN_SET), poolsys.c (pool add, the pools' and the module's
 *   sysfs files), fs.c (the file system and profile directories), bind.c
 *   (POOLMEM_VM_BIND's directories to come), file.c (file operations and
 *   fault), pin.c (long-term pins), hotplug.c (the memory notifier), mf.c
 *   (memory errors), tiering.c (access sampling, hot/cold moves,
 *   rebalancing between pools), drain.c
 *   (pool drain, a drained pool's removal), offline.c (revoke, evacuation
 *   for offline, soft offline), move.c (the move engine: a chunk, a run,
 *   an exchange), domain.c (lifetime, admission, profile references),
 *   sysfs.c (domain attributes), chunk.c (placement, allocation, free,
 *   retired chunks, a discarded chunk's poison records), rmap.c (chunk
 *   map, reverse map, allocations in flight), reserve.c (the zero
 *   reserve), pool.c (the registries under pm_lock, pools, node figures,
 *   the sysfs tree and profile counts), unit.c (a 2 MiB unit's put and
 *   hold, the held list; machine-check-safe reads of tenant pages),
 *   fault.c (fault injection), policy/ (plain C shared with userspace).
 *
 * Lock order, outermost first. tests/guest/pm-lockorder.sh checks it on
 * the debug kernel against the dependencies lockdep recorded in a boot of
 * the other tests (the ranks there are these levels); locks of one level
 * are never held together.
 *  1. The memory hotplug lock, then the memory notifier chain's rwsem:
 *     the notifier (hotplug.c) runs under both and takes pm_lock,
 *     pm_domain.lock, what a move takes, pm_reserve.offline_sem (for
 *     write) and pm_held_lock. Nothing in poolmem waits for memory
 *     hotplug holding a lock of its own.
 *  2. VFS inode locks: a directory's (create, mkdir, unlink, rmdir; the
 *     control device takes the root's the same way), then a domain file's
 *     (ftruncate).
 *  3. pm_lock; or a task's mmap_lock; or pm_reserve.offline_sem. pm_lock
 *     and mmap_lock are never held together: no fault, ->mmap() or
 *     get_user_pages() path takes pm_lock, and nothing under pm_lock
 *     takes mmap_lock or touches user memory (listings copy out after
 *     unlocking, and a seq_file's start/stop hold pm_lock only around its
 *     show calls, not around the copy to user space). offline_sem is
 *     taken for read by the reserve's thread and, trylocked, by reclaim
 *     (the shrinker); under it only the reserve's spinlock and the page
 *     allocator.
 *  4. pm_domain.lock: under pm_lock, or under the faulting task's
 *     mmap_lock (read) that the core holds.
 *  5. The core's page locks, i_mmap_rwsem and page table locks (to unmap
 *     a chunk), the reverse map's maple tree lock, pm_retired_lock.
 *  6. pm_pool.af_lock and pm_reserve.lock (spinlocks).
 *  7. Innermost, taken anywhere: pm_held_lock (unit.c; under it only
 *     page_offline_begin()'s rwsem), pm_mf_lock and the error FIFO's raw
 *     spinlock (mf.c), pm_bind_lock (bind.c).
 * Busy chunks: the fault path sleeps on a busy chunk with pm_domain.lock
 * dropped, inside the mmap_lock (read) the core holds. Whoever holds a
 * chunk busy takes neither pm_lock nor an inode lock, and takes no
 * mmap_lock: placement runs inside a fault, so it holds the faulting
 * task's for read, which it already had; migration holds none. So
 * waiting for a busy chunk is safe under pm_lock, and under an mmap_lock
 * held for read (a writer of the same mm can't be waiting: the placement
 * holds it for read). Such waits last one allocation or one copy of a
 * chunk.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/module.h>

#include "poolmem.h"

/*
 * /sys/kernel/debug/poolmem: debugging and benchmark aids (fault injection
 * where the kernel has it, move latency samples). Their failure is not
 * fatal: debugfs calls take and return error pointers.
 */
static struct dentry *pm_debugfs;

static void pm_debugfs_init(void)
{
	pm_debugfs = debugfs_create_dir("poolmem", NULL);
	pm_fault_debugfs(pm_debugfs);
	pm_move_debugfs(pm_debugfs);
	pm_pinwatch_debugfs(pm_debugfs);
}

/* The policy library keeps its own copies of the uapi constants. */
static void __init pm_check_constants(void)
{
	BUILD_BUG_ON(PM_TIER_LOCAL != POOLMEM_TIER_LOCAL);
	BUILD_BUG_ON(PM_TIER_POOL != POOLMEM_TIER_POOL);
	BUILD_BUG_ON(PM_NR_TIERS != POOLMEM_NR_TIERS);
	BUILD_BUG_ON(PM_TIER_LOCAL_FIRST != POOLMEM_TIER_LOCAL_FIRST);
	BUILD_BUG_ON(PM_TIER_INTERLEAVE != POOLMEM_TIER_INTERLEAVE);
	BUILD_BUG_ON(PM_TIER_POOL_FIRST != POOLMEM_TIER_POOL_FIRST);
	BUILD_BUG_ON(PM_NR_TIER_POLICIES != POOLMEM_NR_TIER_POLICIES);
	BUILD_BUG_ON(PM_SELECT_ROUND_ROBIN != POOLMEM_SELECT_ROUND_ROBIN);
	BUILD_BUG_ON(PM_SELECT_RANDOM != POOLMEM_SELECT_RANDOM);
	BUILD_BUG_ON(PM_SELECT_NEAREST != POOLMEM_SELECT_NEAREST);
	BUILD_BUG_ON(PM_SELECT_SMART_IDLE != POOLMEM_SELECT_SMART_IDLE);
	BUILD_BUG_ON(PM_NR_POOL_SELECTS != POOLMEM_NR_POOL_SELECTS);
	BUILD_BUG_ON(PM_MAX_POOLS != POOLMEM_MAX_POOLS);
	BUILD_BUG_ON(PM_NAME_MAX != POOLMEM_NAME_MAX);
	BUILD_BUG_ON(PM_DOMAIN_CHUNK_MIN != PM_UNIT_BYTES);
	BUILD_BUG_ON(POOLMEM_MAX_POOLS > PM_POOL_NONE);
	/* pm_domain.chunks_per_pool[] counts in u32 */
	BUILD_BUG_ON(PM_DOMAIN_BYTES_MAX / PM_DOMAIN_CHUNK_MIN > U32_MAX);
}

static int __init pm_init(void)
{
	int ret;

	pm_check_constants();
	pm_class = pm_class_create("poolmem");
	if (IS_ERR(pm_class))
		return PTR_ERR(pm_class);
	pm_class->get_ownership = pm_domain_ownership;

	ret = pm_pools_sysfs_init();
	if (ret)
		goto out_destroy_class;

	ret = pm_poolsys_init();
	if (ret)
		goto out_pools_sysfs;

	ret = pm_reserve_init();
	if (ret)
		goto out_poolsys;

	ret = pm_chunk_init();
	if (ret)
		goto out_reserve;

	ret = pm_drain_init();
	if (ret)
		goto out_chunk;

	ret = pm_hotplug_init();
	if (ret)
		goto out_drain;

	ret = pm_mf_init();
	if (ret)
		goto out_rmap;

	ret = pm_fs_init();
	if (ret)
		goto out_mf;

	ret = pm_proc_init();
	if (ret)
		goto out_fs;

	ret = pm_ctl_init();
	if (ret)
		goto out_proc;
	pm_debugfs_init();	/* debugging aids only: their failure is not fatal */
	pm_pinwatch_start();
	pm_rebalance_start();

	pr_info("ABI %d ready: /dev/poolmem/control, file system \"poolmem\"\n", POOLMEM_ABI_VERSION);
	return 0;

out_proc:
	pm_proc_exit();
out_fs:
	pm_fs_exit();
out_mf:
	pm_mf_exit();
out_rmap:
	pm_hotplug_exit();
	pm_rmap_exit();
out_drain:
	pm_drain_exit();
out_chunk:
	pm_chunk_exit();
out_reserve:
	pm_reserve_stop();
out_poolsys:
	pm_poolsys_exit();
out_pools_sysfs:
	pm_pools_sysfs_exit();
	pm_reserve_exit();	/* after the files that read it; nothing if it never started */
out_destroy_class:
	class_destroy(pm_class);
	return ret;
}

/*
 * Only reachable with no domain, profile or mount left: each holds a
 * module reference.
 */
static void __exit pm_exit(void)
{
	pm_domain_exit_sb();	/* a superblock reference being dropped: its worker is ours */
	pm_rebalance_stop();	/* its work reads the pools */
	pm_pinwatch_stop();
	debugfs_remove_recursive(pm_debugfs);
	pm_ctl_exit();
	pm_proc_exit();
	pm_fs_exit();
	pm_mf_exit();		/* no error worker, nor a degraded pool's drain, runs after this */
	pm_hotplug_exit();	/* no memory notifier calls into the reserve after this */
	pm_rmap_exit();
	pm_drain_exit();
	pm_chunk_exit();
	pm_reserve_stop();	/* its thread reads the pools */
	pm_pools_remove_all();
	pm_poolsys_exit();
	pm_pools_sysfs_exit();
	pm_reserve_exit();	/* the files that read it are gone */
	pm_held_exit();		/* after the reserve, which holds its poisoned units there */
	class_destroy(pm_class);
}

module_init(pm_init);
module_exit(pm_exit);
MODULE_DESCRIPTION("Pooled memory (CXL, DAX, PMem) for VMs with per-tier quotas");
MODULE_LICENSE("GPL");
/* the release (CMake's project version, dkms.conf's: tests/version-consistency.sh) */
MODULE_VERSION("0.2.0");
