// SPDX-License-Identifier: GPL-2.0
/*
 * Chunks on memory going away, moved or given up with the move engine
 * (move.c): revoke (a shared device's memory no longer ours: its chunks
 * are dropped unread), evacuation of a range going offline (hotplug.c),
 * and soft offline of a page (mf.c).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/highmem.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/page_ref.h>
#include <linux/pagemap.h>
#include <linux/sched/signal.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/sort.h>
#include <linux/uaccess.h>
#include <linux/wait.h>

#include "poolmem.h"

/* a revoke outwaits a short-lived reference for about this many 10 ms sleeps */
#define PM_REVOKE_TRIES		10

/*
 * Revoke the chunk of @d whose unit @slot is @unit (as the reverse map
 * said; @slot is within the domain): the memory under it is no longer this host's (its pool was
 * revoked, and a block of it is going offline). Unmapped and frozen as
 * for a move; then dropped unread: by now it may hold another host's data,
 * which a copy would show this domain. The chunk is lost from then on
 * (pm_chunk_lose) and its units to the held list (unit.c). Process context,
 * d->lock not held. Returns 0; -ENOENT when @unit is not the chunk's (a
 * retired chunk, still referenced, or a move's old units about to be
 * freed); -EINPROGRESS when busy; -EAGAIN or -EBUSY when referenced or
 * pinned; -ENOMEM.
 */
static int pm_chunk_revoke(struct pm_domain *d, struct inode *inode, size_t slot, struct page *unit)
{
	u64 idx = slot / d->units_per_chunk;
	struct pm_move m = { .idx = idx };
	struct page **arrays = pm_move_arrays(d, &m, 1);
	struct pm_chunk_meta *meta = &d->meta[idx];
	unsigned int u, nr = d->units_per_chunk;
	bool ours = false;
	int ret = -ENOMEM;

	if (!arrays)
		return ret;
	mutex_lock(&d->lock);
	ours = meta->present && d->units[slot] == unit;
	ret = meta->busy ? -EINPROGRESS : !ours ? -ENOENT : 0;
	if (ret)
		goto out_unlock;
	m.src_tier = meta->tier;
	m.src = pm_chunk_pool(d, idx);
	pm_chunk_busy(d, idx, PM_BUSY_MOVE);
	memcpy(m.old, &d->units[idx * nr], nr * sizeof(*m.old));
	mutex_unlock(&d->lock);

	ret = pm_move_freeze(d, inode, &m);
	mutex_lock(&d->lock);
	if (ret) {
		pm_move_abort(d, &m, ret);
		goto out_unlock;
	}
	/* lost before the waiters wake: a fault after this gets the memory error */
	pm_chunk_lose(d, idx);
	pm_chunk_unbusy(d, idx);
	mutex_unlock(&d->lock);
	/* frozen at 0 they stay; offline takes them as they are (unit.c) */
	for (u = 0; u < nr; u++) {
		pm_rmap_erase(m.old[u]);
		pm_held_add_frozen(m.old[u]);
	}
	kfree(arrays);
	return 0;

out_unlock:
	mutex_unlock(&d->lock);
	kfree(arrays);
	return ret;
}

/*
 * MEM_GOING_OFFLINE of PFNs [@start_pfn, @last_pfn] on node @nid, whose
 * pool was revoked: revoke every domain chunk with a unit there
 * (pm_chunk_revoke()). Called by the memory notifier with the hotplug lock
 * held and the range's pageblocks isolated. Returns 0 when no chunk is
 * left there, or -EBUSY: a chunk in use that the revoke can't take
 * (pinned, referenced, being placed or moved, retired), logged, and the
 * offline is refused as it would be without the revoke. Lock order as the
 * notifier's: hotplug lock, then pm_lock, then d->lock; no lock held here.
 * The units go to the held list (unit.c), which offline skips.
 */
int pm_revoke_range(int nid, unsigned long start_pfn, unsigned long last_pfn)
{
	unsigned long revoked = 0;
	unsigned int tries;
	int ret = 0;

	for (;;) {
		struct pm_domain *d;
		struct page *unit;
		struct pm_held h;
		size_t slot;
		u64 idx;

		if (!pm_rmap_first(start_pfn, last_pfn, &d, &slot, &unit))
			break;
		mutex_lock(&pm_lock);
		d = pm_rmap_live(d);
		/* unlinked but still mapped counts: only eviction stops the hold */
		h.d = d;
		h.inode = d ? pm_domain_hold(d) : NULL;
		mutex_unlock(&pm_lock);
		if (!h.inode) {
			pr_info("memory offline of PFNs %#lx-%#lx: a domain being freed still has chunks there\n",
				start_pfn, last_pfn);
			ret = -EBUSY;
			break;
		}
		/* the domain's address may be another's by now: the slot must be in it */
		if (slot >= d->nr_chunks * d->units_per_chunk) {
			pm_domain_release_held(&h);
			ret = -EBUSY;
			break;
		}
		idx = slot / d->units_per_chunk;
		ret = pm_chunk_revoke(d, h.inode, slot, unit);
		/*
		 * A short-lived reference (a fault that mapped the chunk again
		 * before it was marked busy, a get_user_pages() in progress)
		 * goes away by itself, and the memory is no longer this host's:
		 * refusing the offline for it would leave it in use. Try again,
		 * unmapping again each time, for about PM_REVOKE_TRIES * 10 ms.
		 * Sleeping is fine here: offline_pages() sleeps under the same
		 * hotplug lock, and no poolmem lock is held.
		 */
		for (tries = 0; ret == -EAGAIN && tries < PM_REVOKE_TRIES; tries++) {
			msleep(10);
			ret = pm_chunk_revoke(d, h.inode, slot, unit);
		}
		if (ret)
			pr_warn("memory offline of PFNs %#lx-%#lx: domain %s offset %#llx can't be revoked (%s): offline refused\n",
				start_pfn, last_pfn, d->name, idx << d->chunk_shift,
				ret == -EBUSY ? "long-term pinned" :
				ret == -ENOENT ? "discarded but still referenced, or being moved" :
				ret == -EINPROGRESS ? "being placed or moved" :
				ret == -ENOMEM ? "out of memory" : "referenced");
		pm_domain_release_held(&h);
		if (ret) {
			ret = -EBUSY;
			break;
		}
		revoked++;
		cond_resched();
	}
	if (revoked)
		pr_warn("memory offline of PFNs %#lx-%#lx on node %d: %lu chunks revoked, their domains lost them\n",
			start_pfn, last_pfn, nid, revoked);
	return ret;
}

/*
 * Tries of a chunk an offline can't take yet (busy, referenced for a
 * moment, a move's old units about to be freed), 10 ms apart: about half
 * a second before the offline is refused for it.
 */
#define PM_EVACUATE_TRIES	50

/*
 * Move the chunk of @d whose unit @slot is @unit out of a range going
 * offline (its pageblocks are isolated: no allocation lands there). Where
 * to, in order: the same tier, for a pool chunk the domain's other pools
 * in pool-selection order, then its own pool (other blocks of its node),
 * for a local chunk its home node; then, but for a znuma domain, the
 * other tier, if its quota has room. Process context, d->lock not held. Returns as pm_chunk_move(),
 * and -ENOENT when @unit is not the chunk's (retired, still referenced, or
 * a move's old units about to be freed).
 */
static int pm_chunk_evacuate(struct pm_domain *d, struct inode *inode, size_t slot, struct page *unit,
			     unsigned long retire_pfn)
{
	u64 idx = slot / d->units_per_chunk;
	bool ours, busy;
	u32 tier;
	u8 from;
	int ret;

	mutex_lock(&d->lock);
	ours = d->meta[idx].present && d->units[slot] == unit;
	busy = d->meta[idx].busy;
	from = d->meta[idx].pool;
	tier = d->meta[idx].tier;
	mutex_unlock(&d->lock);
	if (busy)
		return -EINPROGRESS;
	if (!ours)
		return -ENOENT;
	ret = pm_chunk_move_how(d, inode, idx, from, tier, true, retire_pfn);
	/* a znuma window's chunks stay in its tier: the guest was told which node is which */
	if (ret == -ENOMEM && !d->znuma)
		ret = pm_chunk_move_how(d, inode, idx, from,
					tier == PM_TIER_POOL ? PM_TIER_LOCAL : PM_TIER_POOL, false, retire_pfn);
	return ret;
}

static const char *pm_evacuate_why(int ret)
{
	switch (ret) {
	case -EBUSY:
		return "long-term pinned";
	case -ENOENT:
		return "discarded but still referenced";
	case -EINPROGRESS:
		return "being placed or moved";
	case -EAGAIN:
		return "referenced";
	case -EIO:
		return "a memory error in it";
	case -ENOSPC:
	case -ENOMEM:
		return "no memory within the domain's quotas and pools";
	default:
		return "error";
	}
}

/*
 * MEM_GOING_OFFLINE of PFNs [@start_pfn, @last_pfn] on node @nid: move
 * every domain chunk with a unit there somewhere else (pm_chunk_evacuate()),
 * as offline_pages() migrates the movable pages of the range right after
 * this notifier: the promise of ZONE_MOVABLE, where chunks may be
 * allocated because they are of the movable class, is that its memory can
 * go. The kernel's own migration can't take a chunk (neither LRU nor
 * movable_ops), so poolmem keeps the promise here, with its own engine:
 * unmap, freeze, copy, remap on fault, quotas kept.
 *
 * This runs under the hotplug lock, as the kernel's own migration of the
 * range does, and does the same kind of work: allocation (no reclaim of
 * the range: it is isolated), unmapping through the mmu notifiers, copies,
 * short sleeps. No poolmem lock is held here, and nothing in poolmem waits
 * for memory hotplug while holding one of the locks this takes (pm_lock,
 * d->lock, page locks, i_mmap_rwsem).
 *
 * Returns 0 when no chunk is left there, or -EBUSY: a chunk that truly
 * can't move (long-term pinned, retired and still referenced, poisoned,
 * nowhere to go within its quotas), logged with its domain and offset;
 * the offline is refused, and what moved stays moved.
 */
int pm_evacuate_range(int nid, unsigned long start_pfn, unsigned long last_pfn)
{
	struct page *last_unit = NULL;
	unsigned long moved = 0;
	unsigned int tries = 0;
	int ret = 0;

	for (;;) {
		struct pm_domain *d;
		struct page *unit;
		struct pm_held h;
		size_t slot;

		if (!pm_rmap_first(start_pfn, last_pfn, &d, &slot, &unit))
			break;
		if (unit != last_unit)
			tries = 0;
		last_unit = unit;
		mutex_lock(&pm_lock);
		d = pm_rmap_live(d);
		h.d = d;
		h.inode = d ? pm_domain_hold(d) : NULL;
		mutex_unlock(&pm_lock);
		if (!h.inode || slot >= d->nr_chunks * d->units_per_chunk) {
			/* a domain being freed: its chunks are on their way out */
			if (h.inode)
				pm_domain_release_held(&h);
			ret = -ENOENT;
		} else {
			ret = pm_chunk_evacuate(d, h.inode, slot, unit, 0);
			/*
			 * A pin that outlasts a move's 6-13 ms (-EBUSY) may
			 * still be a slow O_DIRECT: it gets the same budget.
			 */
			bool passing = ret == -ENOENT || ret == -EINPROGRESS || ret == -EAGAIN ||
				       ret == -EBUSY;

			if (ret && (!passing || tries + 1 >= PM_EVACUATE_TRIES))
				pr_warn("memory offline of PFNs %#lx-%#lx: domain %s offset %#llx can't move (%s): offline refused\n",
					start_pfn, last_pfn, d->name,
					(u64)(slot / d->units_per_chunk) << d->chunk_shift,
					pm_evacuate_why(ret));
			pm_domain_release_held(&h);
		}
		if (!ret) {
			moved++;
			cond_resched();
			continue;
		}
		if (ret == -ENOENT || ret == -EINPROGRESS || ret == -EAGAIN || ret == -EBUSY) {
			/* as offline_pages() itself: a signal ends the wait */
			if (signal_pending(current)) {
				ret = -EINTR;
				break;
			}
			if (++tries < PM_EVACUATE_TRIES) {
				msleep(10);
				continue;
			}
			if (!h.inode)
				pr_warn("memory offline of PFNs %#lx-%#lx: a domain being freed still has chunks there: offline refused\n",
					start_pfn, last_pfn);
		}
		ret = -EBUSY;
		break;
	}
	if (moved)
		pr_info("memory offline of PFNs %#lx-%#lx on node %d: %lu chunks moved out%s\n",
			start_pfn, last_pfn, nid, moved, ret ? ", then refused" : "");
	return ret;
}

/*
 * Soft offline of @pfn in unit @slot (@unit, as the reverse map said) of
 * @d: move its chunk elsewhere with its data, as an offline would, and
 * poison the page, which then leaves use with its old unit. Waits out
 * short-lived references and other movers for up to half a second.
 * Returns as pm_chunk_evacuate(). Process context, d->lock not held.
 */
int pm_chunk_soft_offline(struct pm_domain *d, struct inode *inode, size_t slot, struct page *unit,
			  unsigned long pfn)
{
	unsigned int tries;
	int ret;

	for (tries = 0;; tries++) {
		ret = pm_chunk_evacuate(d, inode, slot, unit, pfn);
		if ((ret != -EAGAIN && ret != -EINPROGRESS) || tries >= PM_EVACUATE_TRIES)
			return ret;
		if (msleep_interruptible(10))
			return -EINTR;
	}
}
