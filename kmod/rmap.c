// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem address maps: the forward chunk map of a domain (POOLMEM_MAP),
 * the global reverse map (host PFN -> domain, offset; POOLMEM_MAP_REVERSE)
 * and the memory notifier that moves chunks out of memory going offline.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/maple_tree.h>
#include <linux/memory.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/rcupdate.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "poolmem.h"

/*
 * One 2 MiB unit in the reverse map. The entry outlives the unit's slot in
 * its domain when the chunk is retired, so it names the unit by page and
 * slot: the unit is live in the domain's map iff d->units[slot] == page.
 * Freed after an RCU grace period: lookups read it under rcu_read_lock().
 */
struct pm_rmap_entry {
	struct pm_domain *d;		/* not a reference: see pm_rmap_owner() */
	size_t slot;			/* index in d->units[] */
	struct page *page;
	struct rcu_head rcu;
};

/*
 * PFN range of every allocated unit -> its pm_rmap_entry. Internally
 * locked for writers; in RCU mode, so lookups under rcu_read_lock() never
 * see a tree node freed under them.
 */
static struct maple_tree pm_rmap = MTREE_INIT(pm_rmap, MT_FLAGS_USE_RCU);

/*
 * Chunk allocations under way on each node, between the page allocator
 * handing out a unit and the unit's entry in pm_rmap. The memory notifier
 * refuses to offline a block of a node with allocations in flight: the
 * block may hold a unit pm_rmap does not show yet.
 */
static atomic_t pm_inflight[MAX_NUMNODES];

void pm_inflight_begin(int nid)
{
	atomic_inc(&pm_inflight[nid]);
	/*
	 * Order the count before the allocation takes a page: an offline
	 * that isolated the block after we took it must see the count.
	 * (The zone and pcp locks would order it on x86; this says so.)
	 */
	smp_mb__after_atomic();
}

void pm_inflight_end(int nid)
{
	/* pairs with atomic_read_acquire() in the notifier: entries first */
	smp_mb__before_atomic();
	atomic_dec(&pm_inflight[nid]);
}

int pm_rmap_insert(struct page *unit, struct pm_domain *d, size_t slot)
{
	unsigned long pfn = page_to_pfn(unit);
	struct pm_rmap_entry *e;
	int ret;

	e = pm_should_fail(sizeof(*e)) ? NULL : kmalloc(sizeof(*e), GFP_KERNEL);
	if (!e)
		return -ENOMEM;
	e->d = d;
	e->slot = slot;
	e->page = unit;
	ret = mtree_insert_range(&pm_rmap, pfn, pfn + PM_UNIT_PAGES - 1, e, GFP_KERNEL);
	if (ret)
		kfree(e);
	return ret;
}

void pm_rmap_erase(struct page *unit)
{
	struct pm_rmap_entry *e = mtree_erase(&pm_rmap, page_to_pfn(unit));

	if (e)
		kfree_rcu(e, rcu);
}

/*
 * The listed domain that entry @e names, or NULL. The entry's domain may
 * have been freed: its release frees its chunks (erasing their entries)
 * without pm_lock, then unlists it under pm_lock, so an entry found
 * before the erase may name a domain that is gone, or whose address a
 * new domain now has. Only a pointer found on pm_domains is followed, and
 * callers check that the slot lies inside it. Caller holds pm_lock.
 */
static struct pm_domain *pm_rmap_owner(struct pm_domain *ed)
{
	struct pm_domain *d;

	list_for_each_entry(d, &pm_domains, list)
		if (d == ed)
			return d;
	return NULL;
}

/*
 * The first unit in PFNs [@first, @last] (retired ones included): its
 * page, its domain (not a reference: pm_rmap_live() under pm_lock says
 * whether it still exists) and its slot. False when there is none.
 */
bool pm_rmap_first(unsigned long first, unsigned long last, struct pm_domain **d, size_t *slot,
		   struct page **unit)
{
	unsigned long index = first;
	struct pm_rmap_entry *e;

	rcu_read_lock();
	e = mt_find(&pm_rmap, &index, last);
	if (e) {
		*d = e->d;
		*slot = e->slot;
		*unit = e->page;
	}
	rcu_read_unlock();
	return e;
}

/* @ed if it is still a domain, else NULL. Caller holds pm_lock. */
struct pm_domain *pm_rmap_live(struct pm_domain *ed)
{
	return pm_rmap_owner(ed);
}

/*
 * Which domain holds @pfn in its map, at which offset and in which pool.
 * Units of retired chunks or chunks still being allocated are not found.
 * Caller holds pm_lock.
 */
struct pm_domain *pm_rmap_lookup(u64 pfn, u64 *offset, u32 *pool)
{
	struct pm_rmap_entry *e;
	struct pm_domain *d = NULL, *ed;
	struct page *page = NULL;
	size_t slot = 0, idx;
	bool live;

	rcu_read_lock();
	e = mtree_load(&pm_rmap, pfn);
	if (e) {
		d = e->d;
		slot = e->slot;
		page = e->page;
	}
	rcu_read_unlock();
	ed = d ? pm_rmap_owner(d) : NULL;
	if (!ed || ed->dead)
		return NULL;
	d = ed;
	if (slot >= d->nr_chunks * d->units_per_chunk)
		return NULL;
	idx = slot / d->units_per_chunk;
	mutex_lock(&d->lock);
	live = d->meta[idx].present && d->units[slot] == page;
	if (live) {
		*offset = ((u64)slot << PM_UNIT_SHIFT) + PFN_PHYS(pfn - page_to_pfn(page));
		*pool = d->meta[idx].pool == PM_POOL_NONE ? POOLMEM_POOL_LOCAL : d->meta[idx].pool;
	}
	mutex_unlock(&d->lock);
	return live ? d : NULL;
}

#define PM_MAP_BATCH	1024	/* ranges per POOLMEM_MAP call, at most */

/*
 * Forward chunk map from m->start: ranges contiguous in offset and in
 * physical address on one pool, at most min(m->count, PM_MAP_BATCH) of
 * them. Built in a kernel buffer under d->lock and copied out after it is
 * dropped: the user buffer may itself be a mapping of this domain, whose
 * fault takes d->lock. Caller holds a reference on @d, not pm_lock.
 */
int pm_domain_map(struct pm_domain *d, struct poolmem_map *m)
{
	struct poolmem_map_range __user *out = u64_to_user_ptr(m->ranges);
	u32 max = min_t(u32, m->count, PM_MAP_BATCH);
	struct poolmem_map_range *buf = NULL, r = {};
	u64 off, end = d->size;
	bool open = false;
	u32 nr = 0;
	int ret = 0;

	if (m->nr || m->next || m->start > d->size)
		return -EINVAL;
	if (max) {
		buf = kvmalloc_array(max, sizeof(*buf), GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	mutex_lock(&d->lock);
	for (off = ALIGN_DOWN(m->start, PM_UNIT_BYTES); off < end; off += PM_UNIT_BYTES) {
		u64 idx = off >> d->chunk_shift;
		u64 u = (off & (d->chunk_bytes - 1)) >> PM_UNIT_SHIFT;
		struct page *page;
		u64 phys;
		u32 pool;

		cond_resched();
		if (!d->meta[idx].present) {
			off = ((idx + 1) << d->chunk_shift) - PM_UNIT_BYTES;
			continue;
		}
		page = d->units[idx * d->units_per_chunk + u];
		phys = PFN_PHYS(page_to_pfn(page));
		pool = d->meta[idx].pool == PM_POOL_NONE ? POOLMEM_POOL_LOCAL : d->meta[idx].pool;
		if (open && r.offset + r.length == off && r.phys + r.length == phys && r.pool == pool) {
			r.length += PM_UNIT_BYTES;
			continue;
		}
		if (open) {
			if (nr == max) {
				end = r.offset;	/* continue from this range next time */
				open = false;
				break;
			}
			buf[nr++] = r;
		}
		r.offset = off;
		r.length = PM_UNIT_BYTES;
		r.phys = phys;
		r.pool = pool;
		r.node = page_to_nid(page);
		open = true;
	}
	if (open) {
		if (nr == max)
			end = r.offset;
		else
			buf[nr++] = r;
	}
	mutex_unlock(&d->lock);

	if (nr && copy_to_user(out, buf, nr * sizeof(*buf)))
		ret = -EFAULT;
	kvfree(buf);
	m->nr = nr;
	m->next = min(end, d->size);
	return ret;
}


/*
 * Allocations in flight on @nid when the range's pageblocks were isolated
 * may hold a unit there that pm_rmap does not show yet. New ones can't
 * land in the range (isolated), so the count drains: wait for it to read
 * 0 once, up to about a second, polling. False if it never did.
 */
bool pm_inflight_wait(int nid)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (!atomic_read_acquire(&pm_inflight[nid]))
			return true;
		usleep_range(1000, 2000);
	}
	return false;
}

/* Module exit: no domain is left, so the map is empty. */
void pm_rmap_exit(void)
{
	rcu_barrier();	/* pending kfree_rcu() of entries */
	mtree_destroy(&pm_rmap);
}
