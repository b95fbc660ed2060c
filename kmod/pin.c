// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem and long-term pins (FOLL_LONGTERM: VFIO, RDMA, io_uring fixed
 * buffers, AF_XDP) of chunks that can't be pinned.
 *
 * A chunk of a domain that is not pinnable may sit in ZONE_MOVABLE (pool
 * memory onlined movable): memory the kernel must be able to take back,
 * so it may not be pinned for long (chunks are never in CMA: chunk.c).
 * __gup_longterm_locked() deals with such pages by migrating them first,
 * but it can migrate only LRU and hugetlb folios. For any other page it
 * unpins everything and tries again: forever (6.1 and 6.12 alike), while a
 * fatal signal is all that ends it. QEMU's VFIO setup would hang in it.
 *
 * poolmem makes such a pin fail at once instead, with EFAULT:
 *
 *  - A FOLL_LONGTERM pin runs with PF_MEMALLOC_PIN set
 *    (memalloc_pin_save()) from before its first fault until it returns,
 *    and nothing else sets it. A fault of the domain under it that finds a
 *    chunk that can't be pinned answers VM_FAULT_SIGBUS, which
 *    get_user_pages() turns into -EFAULT (no signal: it was not a user
 *    access). It also unmaps the domain first: pages of other chunks the
 *    same pin took before this one would otherwise be mapped still, the
 *    retry would pin them again and get its partial count past the fault,
 *    and loop as before; now the retry faults on its first page and gets
 *    nothing. That unmap costs the domain's other users a refault each;
 *    it happens only on a pin that fails.
 *
 *  - A pin of pages that are already mapped (QEMU with prealloc, a buffer
 *    the process wrote first) never faults, so the fault can't see it.
 *    Every PM_PINWATCH_PERIOD a worker looks whether the kernel took many
 *    FOLL_PIN references since its last look (NR_FOLL_PIN_ACQUIRED; a
 *    spinning pin takes the whole buffer's pages each round); if so, it
 *    unmaps every chunk that can't be pinned and is pinned now. A spinning
 *    pin's next round then faults, and fails as above. A short-lived pin
 *    (O_DIRECT, process_vm_readv) caught there costs its chunk's users a
 *    refault, and nothing else: the fault maps the chunk again.
 *
 * Chunks that can be pinned (pinnable domains; local DRAM) never reach
 * either path, and a chunk placed by a fault under PF_MEMALLOC_PIN comes
 * from a kernel zone (the page allocator drops __GFP_MOVABLE and CMA for
 * it), so it can be pinned.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/vmstat.h>
#include <linux/workqueue.h>

#include "poolmem.h"

/*
 * Can every unit of present chunk @idx be long-term pinned? As
 * folio_is_longterm_pinnable() says for them: a chunk is never in CMA
 * (chunk.c), and a unit in a kernel zone is never in an isolated pageblock
 * (isolation refuses its block: the unit is not movable), so only
 * ZONE_MOVABLE decides. (folio_is_longterm_pinnable() itself reads the
 * pageblock's migratetype on a kernel with CMA, which a module can't.)
 * Caller holds d->lock.
 */
bool pm_chunk_longterm_ok(struct pm_domain *d, u64 idx)
	__must_hold(&d->lock)
{
	struct page **units = &d->units[idx * d->units_per_chunk];
	unsigned int u;

	for (u = 0; u < d->units_per_chunk; u++)
		if (page_zonenum(units[u]) == ZONE_MOVABLE)
			return false;
	return true;
}

/*
 * A fault under FOLL_LONGTERM found chunk @idx of @d (present) in memory
 * that can't be pinned: refuse it, as described above. Caller holds
 * d->lock and the mmap lock.
 */
vm_fault_t pm_fault_longterm(struct pm_domain *d, struct vm_fault *vmf, u64 idx)
	__must_hold(&d->lock)
{
	struct inode *inode = file_inode(vmf->vma->vm_file);

	pr_warn_ratelimited("domain %s: long-term pin (VFIO, RDMA, io_uring) of offset %#llx by %s[%d] refused: the chunk is in movable memory; make the domain pinnable\n",
			    d->name, idx << d->chunk_shift, current->comm, task_tgid_nr(current));
	/*
	 * Nothing is freed here, so no page lock is needed: a fault that
	 * maps a unit meanwhile only leaves that unit for the next round.
	 */
	unmap_mapping_range(inode->i_mapping, 0, 0, 0);
	return VM_FAULT_SIGBUS;
}

/* ---- the watch for pins of pages already mapped ---- */

#define PM_PINWATCH_PERIOD	(HZ / 4)
/* FOLL_PIN pages taken in a period below which nobody is looked at */
#define PM_PINWATCH_MIN		4096

static void pm_pinwatch_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(pm_pinwatch_work, pm_pinwatch_fn);
static unsigned long pm_pinwatch_last;

/*
 * Unmap the chunks of @d that can't be pinned and are pinned now. The
 * domain and its inode are held. Returns how many.
 */
static unsigned long pm_pinwatch_domain(struct pm_domain *d)
{
	unsigned long n = 0;
	u64 idx;

	mutex_lock(&d->lock);
	for (idx = 0; idx < d->nr_chunks; idx++) {
		struct page **units = &d->units[idx * d->units_per_chunk];
		unsigned int u;

		if (idx % 256 == 255) {
			mutex_unlock(&d->lock);
			cond_resched();
			mutex_lock(&d->lock);
		}
		if (!d->meta[idx].present || d->meta[idx].busy || pm_chunk_longterm_ok(d, idx))
			continue;
		for (u = 0; u < d->units_per_chunk; u++) {
			if (folio_maybe_dma_pinned(page_folio(units[u]))) {
				pm_chunk_unmap(d, idx);
				n++;
				break;
			}
		}
	}
	mutex_unlock(&d->lock);
	return n;
}

static void pm_pinwatch_fn(struct work_struct *work)
{
	unsigned long pins = global_node_page_state(NR_FOLL_PIN_ACQUIRED);
	struct pm_held *held = NULL;
	unsigned int nr = 0, max = 0, i;
	unsigned long found = 0;
	struct pm_domain *d;

	if (pins - pm_pinwatch_last < PM_PINWATCH_MIN)
		goto out;
	mutex_lock(&pm_lock);
	list_for_each_entry(d, &pm_domains, list)
		max++;
	held = max ? kmalloc_array(max, sizeof(*held), GFP_KERNEL) : NULL;
	list_for_each_entry(d, &pm_domains, list) {
		if (!held || d->pinnable || !READ_ONCE(d->chunks))
			continue;
		held[nr].inode = pm_domain_hold(d);
		if (held[nr].inode)
			held[nr++].d = d;
	}
	mutex_unlock(&pm_lock);
	for (i = 0; i < nr; i++) {
		found += pm_pinwatch_domain(held[i].d);
		pm_domain_release_held(&held[i]);
	}
	kfree(held);
	if (found)
		pr_info_ratelimited("%lu chunks in movable memory found pinned: unmapped, so that a long-term pin of them fails\n",
				    found);
out:
	/* the counter after the look: the unmaps' own faults are not pins */
	pm_pinwatch_last = global_node_page_state(NR_FOLL_PIN_ACQUIRED);
	queue_delayed_work(system_unbound_wq, &pm_pinwatch_work, PM_PINWATCH_PERIOD);
}

void pm_pinwatch_start(void)
{
	pm_pinwatch_last = global_node_page_state(NR_FOLL_PIN_ACQUIRED);
	queue_delayed_work(system_unbound_wq, &pm_pinwatch_work, PM_PINWATCH_PERIOD);
}

void pm_pinwatch_stop(void)
{
	cancel_delayed_work_sync(&pm_pinwatch_work);
}
