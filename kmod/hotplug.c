// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem and memory hotplug: the memory notifier. Memory going offline
 * loses its chunks to other memory (offline.c: pm_evacuate_range()), or,
 * on a revoked pool's node, has them dropped (pm_revoke_range()); its zero
 * reserve units are given back; memory coming online holds the reserve's
 * refill back for a moment.
 *
 * The notifier runs under the memory hotplug lock, and virtio_mem's shows
 * what a notifier should be: cheap. Each piece of MEM_GOING_OFFLINE here
 * does what can't be done anywhere else, and why:
 *  - the zero reserve's units in the range are freed: they are allocated
 *    pages offline_pages() can neither free nor move, and only now is the
 *    range isolated, so that no refill lands there again;
 *  - the wait for allocations in flight (at most a second): a unit taken
 *    before the isolation may not be in the reverse map yet;
 *  - the chunks' moves (or drops, on a revoked pool) with their unmaps,
 *    mmu notifiers, copies and short sleeps: offline_pages() migrates the
 *    range's movable pages right after this notifier, in this same context
 *    and with the same kind of work, and then loops until the range is
 *    free; the chunks must be gone by then, and the offline is synchronous,
 *    so this can't be deferred to a worker. The sleeps are bounded (about
 *    half a second per chunk that can't move yet) and a signal ends them,
 *    as it ends offline_pages()'s own loop;
 *  - iput() of a domain's inode held for a move may evict a domain that
 *    was unlinked meanwhile: its chunks go back to the page allocator,
 *    which takes no hotplug lock.
 *  - last, the held units in the range (unit.c): one still referenced
 *    refuses the offline at once, where offline_pages() would loop on it,
 *    and the managed page count is made what the offline expects.
 * MEM_ONLINE, MEM_OFFLINE and MEM_CANCEL_OFFLINE only store or unlink;
 * MEM_GOING_ONLINE refuses a block with a page that took a memory error in
 * a domain's use, which Linux 6.1 would online again as sound.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/memory.h>
#include <linux/mm.h>
#include <linux/mutex.h>
#include <linux/notifier.h>

#include "poolmem.h"

/* Whether node @nid's pool was revoked (POOLMEM_DRAIN_REVOKE). Caller holds pm_lock. */
static bool pm_node_revoked(int nid)
{
	unsigned int i;

	for (i = 0; i < POOLMEM_MAX_POOLS; i++)
		if (pm_pools[i] && pm_pools[i]->node == nid && READ_ONCE(pm_pools[i]->revoked))
			return true;
	return false;
}

/*
 * Memory of a node going offline (MEM_GOING_OFFLINE). Called by the
 * memory hotplug core with the hotplug lock held, after the block's
 * pageblocks were isolated (no new allocation can land there), right
 * before offline_pages() migrates the range's movable pages. Chunks
 * there (they are of the movable class, and this is the ZONE_MOVABLE
 * memory they may be allocated from) are moved out by poolmem itself,
 * which the kernel's migration can't do (pm_evacuate_range()); on the
 * node of a revoked pool they are dropped instead (pm_revoke_range()).
 * Either refuses the offline, with -EBUSY and a log line naming the
 * domain, only for a chunk that truly can't go. Both take pm_lock, d->lock,
 * the file's i_mmap_rwsem (unmap) and the mmu notifiers under the hotplug
 * lock, as offline_pages()'s own migration does, so none of those may be
 * held by anyone who waits for memory hotplug (nothing in poolmem does).
 * Memory onlined to a kernel zone never gets here with a chunk in it:
 * isolation refuses a block holding pages that are not movable first
 * (pinnable domains' chunks live there).
 */
static int pm_memory_callback(struct notifier_block *nb, unsigned long action, void *arg)
{
	struct memory_notify *mn = arg;
	unsigned long last = mn->start_pfn + mn->nr_pages - 1;
	struct pm_domain *ed;
	struct page *unit;
	bool revoked;
	size_t slot;
	int nid, ret;

	/*
	 * The range's node comes from its struct pages, which are initialised
	 * only between move_pfn_range_to_zone() (before MEM_GOING_ONLINE) and
	 * remove_pfn_range_from_zone() (after MEM_OFFLINE). Since 6.9 the
	 * chain also carries MEM_PREPARE_ONLINE and MEM_FINISH_OFFLINE, sent
	 * outside that window for every block (memory_block_online() and
	 * _offline()): DEBUG_VM's poisoned memmap stops pfn_to_nid() there.
	 * Only the events below are ours, and they all come inside it.
	 */
	if (action == MEM_GOING_ONLINE) {
		unsigned long bad;

		/*
		 * 6.12 refuses a block with poisoned pages itself (its
		 * nr_hwpoison); 6.1 forgot the poison when the block went
		 * offline, and would hand the page out again
		 */
		if (!pm_mf_range_poisoned(mn->start_pfn, last, &bad))
			return NOTIFY_OK;
		pr_warn("memory online of PFNs %#lx-%#lx refused: PFN %#lx took a memory error in a domain's use\n",
			mn->start_pfn, last, bad);
		return notifier_from_errno(-EHWPOISON);
	}
	if (action == MEM_CANCEL_OFFLINE) {
		/* held units there stay held, and out of the managed count */
		pm_held_cancel_offline(mn->start_pfn, last);
		return NOTIFY_OK;
	}
	if (action != MEM_ONLINE && action != MEM_OFFLINE && action != MEM_GOING_OFFLINE)
		return NOTIFY_OK;
	nid = pfn_to_nid(mn->start_pfn);

	if (action == MEM_ONLINE) {
		/* the node is growing: its zero reserve waits for the onlining to end */
		pm_reserve_online(nid);
		return NOTIFY_OK;
	}
	if (action == MEM_OFFLINE) {
		/* held units there went with the block */
		pm_held_offline(mn->start_pfn, last);
		return NOTIFY_OK;
	}
	/* MEM_GOING_OFFLINE: zero reserve units there are free memory to the offline */
	pm_reserve_offline(nid, mn->start_pfn, mn->nr_pages);
	if (!pm_inflight_wait(nid)) {
		pr_info("memory offline of PFNs %#lx-%#lx refused: chunk allocations in flight on node %d for a second\n",
			mn->start_pfn, last, nid);
		return notifier_from_errno(-EBUSY);
	}
	if (pm_rmap_first(mn->start_pfn, last, &ed, &slot, &unit)) {
		mutex_lock(&pm_lock);
		revoked = pm_node_revoked(nid);
		mutex_unlock(&pm_lock);
		if (revoked)
			/* the memory is no longer ours: its chunks go instead of the offline */
			ret = pm_revoke_range(nid, mn->start_pfn, last);
		else
			ret = pm_evacuate_range(nid, mn->start_pfn, last);
		if (ret)
			return notifier_from_errno(ret);
	}
	/* last: the chunks' moves and revokes may have held units there */
	return notifier_from_errno(pm_held_going_offline(mn->start_pfn, last));
}

static struct notifier_block pm_memory_nb = {
	.notifier_call = pm_memory_callback,
	/* before kmem and others act on MEM_GOING_OFFLINE */
	.priority = 100,
};

int pm_hotplug_init(void)
{
	return register_memory_notifier(&pm_memory_nb);
}

void pm_hotplug_exit(void)
{
	unregister_memory_notifier(&pm_memory_nb);
}
