// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem chunks: placement by the domain's policies, allocation (in a
 * kworker when the faulting task's cpuset excludes the node), free, and
 * retired chunks (discarded while still referenced).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/completion.h>
#include <linux/cpuset.h>
#include <linux/gfp.h>
#include <linux/local_lock.h>
#include <linux/mm.h>
#include <linux/pagemap.h>
#include <linux/percpu.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/sched/mm.h>
#include <linux/slab.h>
#include <linux/topology.h>
#include <linux/wait_bit.h>
#include <linux/workqueue.h>

#include "poolmem.h"

/* ---- units: 2 MiB compound buddy allocations ---- */

/*
 * CMA pageblocks lend their memory to movable allocations and take it back
 * with alloc_contig_range(), which must migrate what it finds there; a
 * chunk can't be migrated by it, so a chunk in CMA would make cma_alloc()
 * fail for good. Nothing tells a module where CMA pageblocks are
 * (get_pfnblock_flags_mask() is not exported: is_migrate_cma_page() and
 * folio_is_longterm_pinnable() don't link in a module on a kernel with
 * CONFIG_CMA), and no GFP flag keeps a movable allocation out of CMA
 * alone. CMA areas are carved from boot memory, never from memory that
 * kmem hot-adds, so pool nodes have none; the local tier's DRAM may. So on
 * a kernel with CMA the local tier's units (PM_ALLOC_LOCAL) are allocated
 * without __GFP_MOVABLE: never from CMA, and so never from ZONE_MOVABLE
 * either (a movablecore= boot or a DIMM onlined movable serves no local
 * chunk there). Debian's kernels have no CMA.
 */
static bool pm_local_nocma(unsigned int flags)
{
	return IS_ENABLED(CONFIG_CMA) && (flags & PM_ALLOC_LOCAL);
}

static struct page *pm_unit_alloc(int nid, bool pinnable, unsigned int flags)
{
	/*
	 * Movable class, so onlined-movable pool memory can serve it, unless
	 * the domain must be long-term pinnable: then kernel zones only.
	 * Zeroed, because the previous owner may have been another tenant
	 * (a migration destination is not: every byte of it is copied over
	 * before anyone can see it). No OOM killer and no warning: a full
	 * node is an ordinary event here. Compound, so that a PMD can map
	 * the unit whole and get_user_pages takes its references on the head.
	 * A first try reclaims lightly (__GFP_NORETRY), so that placement
	 * falls back to the next pool or tier quickly; the last try before a
	 * fault would fail (PM_ALLOC_RETRY) reclaims and compacts in earnest
	 * (__GFP_RETRY_MAYFAIL: still no OOM killer).
	 */
	gfp_t gfp = (pinnable || pm_local_nocma(flags) ? GFP_HIGHUSER : GFP_HIGHUSER_MOVABLE) |
		    __GFP_THISNODE | __GFP_COMP | __GFP_NOWARN;

	gfp |= flags & PM_ALLOC_RETRY ? __GFP_RETRY_MAYFAIL : __GFP_NORETRY;
	struct page *page;

	if (flags & PM_ALLOC_ZERO)
		gfp |= __GFP_ZERO;
	if (pm_should_fail(PM_UNIT_BYTES))
		return NULL;
	/*
	 * A new chunk's unit comes zeroed from the node's zero reserve when
	 * it has one. For a pinnable domain, and while the task is long-term
	 * pinning (FOLL_LONGTERM sets PF_MEMALLOC_PIN, under which the page
	 * allocator avoids ZONE_MOVABLE and CMA), only a unit outside
	 * ZONE_MOVABLE: GUP can neither pin nor migrate one there (it would
	 * retry forever). A reserve unit has its node's class (reserve.c:
	 * movable, but non-movable on a local node of a kernel with CMA);
	 * pinned in a kernel zone it is, as any unit there, a compound page
	 * off the LRU, which compaction skips and which an offline of its
	 * block meets in the memory notifier (hotplug.c) first.
	 */
	if (flags & PM_ALLOC_ZERO) {
		page = pm_reserve_take(nid, pinnable || (current->flags & PF_MEMALLOC_PIN));
		if (page)
			return page;
	}
	return alloc_pages_node(nid, gfp, PM_UNIT_ORDER);
}

/*
 * Chunk @idx was discarded whole: its lost pages are a hole again (the
 * records mf.c made go with the chunk). Caller holds d->lock.
 */
void pm_poison_forget(struct pm_domain *d, u64 idx)
{
	unsigned long index;
	void *entry;

	/* a failed move's copy may have recorded a page without setting the flag */
	if (!d->meta[idx].poison && !pm_poison_in(d, idx << d->chunk_shift, d->chunk_bytes))
		return;
	xa_for_each_range(&d->poison, index, entry, (idx << d->chunk_shift) >> PAGE_SHIFT,
			  (((idx + 1) << d->chunk_shift) >> PAGE_SHIFT) - 1)
		xa_erase(&d->poison, index);
	d->meta[idx].poison = 0;
}

/* Drop units that are in the reverse map but in no mapping and no slot. */
void pm_units_free(struct page **units, unsigned int nr)
{
	unsigned int u;

	for (u = 0; u < nr; u++) {
		pm_rmap_erase(units[u]);
		pm_unit_put(units[u]);
		units[u] = NULL;
	}
	if (nr)
		pm_zerod_kick();	/* memory came back: the reserve may refill */
}

/*
 * Allocate the units of a chunk from node @nid into @out and record them
 * in the reverse map as slots @first.. of the domain (they are live only
 * once the slots hold them). The caller has marked the chunk busy and need
 * not hold d->lock. Returns 0 or -ENOMEM.
 */
static int pm_units_alloc_here(struct pm_domain *d, size_t first, int nid, struct page **out,
			       unsigned int flags)
{
	unsigned int u;

	for (u = 0; u < d->units_per_chunk; u++) {
		struct page *page;
		int err;

		/*
		 * In flight from the page allocator to the reverse map, one
		 * unit at a time: an offline waits for the count to read 0
		 * (pm_inflight_wait()), which a domain faulting all the time
		 * on the node would otherwise rarely let it see.
		 */
		pm_inflight_begin(nid);
		page = pm_unit_alloc(nid, d->pinnable, flags);
		/*
		 * In its slot before the reverse map finds it: the error
		 * worker matches what the reverse map says against the slot
		 * (mf.c), under d->lock, which this store does not take.
		 */
		if (page)
			WRITE_ONCE(out[u], page);
		err = page ? pm_rmap_insert(page, d, first + u) : -ENOMEM;
		if (err && page) {
			WRITE_ONCE(out[u], NULL);
			put_page(page);
		}
		pm_inflight_end(nid);
		if (err)
			break;
		/*
		 * The unit's file offset, as a page cache folio carries it:
		 * since 6.12.y finish_fault() maps a folio with a PMD only
		 * when folio_next_index() lies within i_size, and a unit
		 * would otherwise keep whatever index its last user left.
		 */
		page->index = (pgoff_t)(first + u) << PM_UNIT_ORDER;
		pm_inject_alloc_delay(d, first + u, page);
	}
	if (u < d->units_per_chunk)
		pm_units_free(out, u);
	return u < d->units_per_chunk ? -ENOMEM : 0;
}

/*
 * Allocation on behalf of a task whose cpuset excludes the node. In task
 * context the page allocator confines every allocation to the task's
 * cpuset (__GFP_HARDWALL, whatever node or nodemask is asked for), and a
 * QEMU that libvirt confined with <numatune mode='strict'> would never get
 * pool memory although admission granted it. Placement is the domain's
 * policy, not the task's: an unbound kworker, in the root cpuset, does the
 * allocation, and the fault waits for it.
 */
struct pm_alloc_work {
	struct work_struct work;
	struct pm_domain *d;
	size_t first;
	struct page **out;
	int nid;
	unsigned int flags;	/* PM_ALLOC_* */
	bool pin;		/* the faulting task was long-term pinning */
	int ret;
	struct completion done;
};

/*
 * The allocating workqueue: unbound (any CPU, the root cpuset) and with a
 * rescuer, since a fault waits on it and the allocation may need reclaim.
 */
static struct workqueue_struct *pm_alloc_wq;

static void pm_alloc_workfn(struct work_struct *work)
{
	struct pm_alloc_work *w = container_of(work, struct pm_alloc_work, work);
	unsigned int pin = 0;

	/* keep the pinning task's rule: no ZONE_MOVABLE for FOLL_LONGTERM */
	if (w->pin)
		pin = memalloc_pin_save();
	w->ret = pm_units_alloc_here(w->d, w->first, w->nid, w->out, w->flags);
	if (w->pin)
		memalloc_pin_restore(pin);
	complete(&w->done);
}

/*
 * Allocate a chunk's units from node @nid into @out (@flags: PM_ALLOC_ZERO
 * to zero them, PM_ALLOC_RETRY to reclaim hard), recorded in the reverse
 * map as slots @first..; see pm_units_alloc_here().
 */
int pm_units_alloc(struct pm_domain *d, size_t first, int nid, struct page **out,
		   unsigned int flags)
{
	struct pm_alloc_work w;

	/*
	 * A pool node whose memory was all offlined (the node goes offline
	 * with its last block removed) is not asked: __GFP_THISNODE on an
	 * offline node warns with a stack dump on every try.
	 */
	if (!node_online(nid) || !node_state(nid, N_MEMORY))
		return -ENOMEM;
	/*
	 * Without cpusets in use, every task's mems_allowed holds every node
	 * with memory (the root cpuset follows memory hotplug).
	 */
	if (node_isset(nid, cpuset_current_mems_allowed))
		return pm_units_alloc_here(d, first, nid, out, flags);

	w.d = d;
	w.first = first;
	w.out = out;
	w.nid = nid;
	w.flags = flags;
	w.pin = current->flags & PF_MEMALLOC_PIN;
	init_completion(&w.done);
	INIT_WORK_ONSTACK(&w.work, pm_alloc_workfn);
	queue_work_node(nid, pm_alloc_wq, &w.work);
	/* bounded: the allocation never waits for the OOM killer */
	wait_for_completion(&w.done);
	destroy_work_on_stack(&w.work);
	return w.ret;
}

static int pm_chunk_alloc_node(struct pm_domain *d, u64 idx, int nid, unsigned int flags)
{
	size_t first = idx * d->units_per_chunk;

	return pm_units_alloc(d, first, nid, &d->units[first], PM_ALLOC_ZERO | flags);
}

static void pm_chunk_charge(struct pm_domain *d, u64 idx, u32 tier, struct pm_pool *p)
{
	d->meta[idx].present = 1;
	d->meta[idx].tier = tier;
	d->meta[idx].pool = p ? p->id : PM_POOL_NONE;
	d->usage[tier] += d->chunk_bytes;
	d->chunks++;
	if (p) {
		d->chunks_per_pool[p->id]++;
		atomic64_add(d->chunk_bytes, &p->allocated);
		atomic64_inc(&p->chunks);
		atomic64_inc(&p->allocations);
		pm_pool_event(p, 1);
	}
}

struct pm_pool *pm_chunk_pool(struct pm_domain *d, u64 idx)
{
	u8 pool = d->meta[idx].pool;

	return pool == PM_POOL_NONE ? NULL : pm_pools[pool];
}

/* Uncharge a chunk of @tier on pool @p (NULL: local) that left the domain. */
static void pm_chunk_uncharge(struct pm_domain *d, u32 tier, struct pm_pool *p)
{
	d->usage[tier] -= d->chunk_bytes;
	pm_quota_settle(d, tier);
	if (p) {
		d->chunks_per_pool[p->id]--;
		atomic64_sub(d->chunk_bytes, &p->allocated);
		atomic64_dec(&p->chunks);
	}
}

/*
 * Free chunk @idx (present, and unmapped from the domain's file by the
 * caller) and uncharge it. Caller holds d->lock, or is the domain's
 * release with no other user left.
 */
void pm_chunk_free(struct pm_domain *d, u64 idx)
{
	pm_units_free(&d->units[idx * d->units_per_chunk], d->units_per_chunk);
	pm_chunk_uncharge(d, d->meta[idx].tier, pm_chunk_pool(d, idx));
	d->chunks--;
	d->meta[idx].present = 0;
	d->meta[idx].zeroed = 0;
}

/*
 * Chunk @idx (present, unmapped and frozen by the caller, its units the
 * caller's to free) was revoked with its pool's memory: uncharge it and
 * mark it lost. Caller holds d->lock.
 */
void pm_chunk_lose(struct pm_domain *d, u64 idx)
{
	pm_chunk_uncharge(d, d->meta[idx].tier, pm_chunk_pool(d, idx));
	d->chunks--;
	d->meta[idx].present = 0;
	d->meta[idx].zeroed = 0;
	d->meta[idx].lost = 1;
	d->revoked++;
	memset(&d->units[idx * d->units_per_chunk], 0, d->units_per_chunk * sizeof(*d->units));
	if (d->heat)
		memset(&d->heat[idx], 0, sizeof(*d->heat));
}

/*
 * A try to allocate chunk @idx failed and gave its units back: the memory
 * errors the error worker recorded in them (mf.c: a chunk being allocated
 * gets a record only) went with them, and the next try's fresh units must
 * not fault as lost. d->lock not held; the chunk is busy.
 */
static void pm_chunk_alloc_forget(struct pm_domain *d, u64 idx)
{
	mutex_lock(&d->lock);
	pm_poison_forget(d, idx);
	mutex_unlock(&d->lock);
}

/*
 * Allocate chunk @idx on the first of @n candidate nodes (pools @ids, or
 * the home node when @ids is NULL) that can supply it, with d->lock
 * dropped: allocating and zeroing 2 MiB takes long, and other faults of
 * the domain (other vCPUs) must not queue behind it. The caller has
 * reserved the chunk's bytes in usage[@tier] and marked it busy. Returns
 * the pool used (NULL: home node) in @pool, or -ENOMEM.
 */
static int pm_chunk_alloc_unlocked(struct pm_domain *d, u64 idx, const u8 *ids, unsigned int n,
				   unsigned int flags, struct pm_pool **pool)
	__must_hold(&d->lock)
{
	unsigned int i;
	int ret = -ENOMEM;

	mutex_unlock(&d->lock);
	if (!ids) {
		*pool = NULL;
		ret = pm_chunk_alloc_node(d, idx, d->home_node, flags | PM_ALLOC_LOCAL);
		if (ret)
			pm_chunk_alloc_forget(d, idx);
	} else {
		for (i = 0; i < n && ret; i++) {
			/* pools can't go away while this domain may use them */
			struct pm_pool *p = pm_pools[ids[i]];

			*pool = p;
			ret = pm_chunk_alloc_node(d, idx, p->node, flags);
			if (ret) {
				atomic64_inc(&p->failures);
				pm_chunk_alloc_forget(d, idx);
			}
		}
	}
	mutex_lock(&d->lock);
	return ret;
}

/*
 * The policy's scratch space, too big for the stack (1.8 KiB) and, in
 * every domain, 1.8 KiB of each: per CPU, under a local lock (preemption
 * off; on PREEMPT_RT a per-CPU lock, under which af_lock and
 * get_random_u32()'s locks may sleep). Allocated at init: as a static
 * per-CPU variable it would take a fifth of the 8 KiB every module shares.
 */
struct pm_place_scratch {
	local_lock_t lock;
	struct pm_pool_view views[POOLMEM_MAX_POOLS];
	u32 order[POOLMEM_MAX_POOLS];
};
static struct pm_place_scratch __percpu *pm_place_scratch;

/*
 * The pools of @mask (a subset of the domain's pool_mask) a pool-tier
 * chunk may come from, in pool-selection order, into @ids; returns how
 * many. Draining pools and pools without online memory take no new
 * chunks. Only what the policy reads is gathered: the access factor takes
 * each pool's af_lock. Caller holds d->lock (a pool stays registered
 * while it is in the domain's pool_mask and the chunk busy).
 */
unsigned int pm_pool_candidates(struct pm_domain *d, u64 mask, u8 *ids)
{
	struct pm_place_scratch *s;
	struct pm_pool_view *views;
	unsigned int n = 0, i;

	local_lock(&pm_place_scratch->lock);
	s = this_cpu_ptr(pm_place_scratch);
	views = s->views;

	for (mask &= d->pool_mask & ~READ_ONCE(pm_pools_draining); mask; mask &= mask - 1) {
		struct pm_pool *p = pm_pools[__ffs64(mask)];

		/* all its memory offlined: nothing to ask it for */
		if (!node_state(p->node, N_MEMORY))
			continue;
		views[n].id = p->id;
		views[n].distance = d->pool_select == PM_SELECT_NEAREST ?
				    node_distance(d->home_node, p->node) : 0;
		views[n].allocated = atomic64_read(&p->allocated);
		views[n].af = 0;
		if (d->pool_select == PM_SELECT_SMART_IDLE) {
			/* a shared device: what other hosts put on it counts too */
			views[n].allocated += READ_ONCE(p->remote_allocated);
			views[n].af = pm_pool_af(p) + READ_ONCE(p->remote_af);
		}
		n++;
	}
	n = pm_pool_order(d->pool_select, views, n, d->rr_cursor,
			  d->pool_select == PM_SELECT_RANDOM ? get_random_u32() : 0, s->order);
	for (i = 0; i < n; i++)
		ids[i] = views[s->order[i]].id;
	local_unlock(&pm_place_scratch->lock);
	return n;
}

/*
 * A tier being shrunk (POOLMEM_DOMAIN_SET) keeps a quota of its usage
 * until chunks leave it; as they do, the quota comes down to the committed
 * value, so that nothing new lands there meanwhile and a shrink left
 * unfinished (a pinned chunk) still ends when the guest lets memory go.
 * Caller holds d->lock.
 */
void pm_quota_settle(struct pm_domain *d, u32 tier)
	__must_hold(&d->lock)
{
	if (d->quota[tier] > d->committed[tier])
		d->quota[tier] = max(d->committed[tier], d->usage[tier]);
}

/*
 * Mark chunk @idx busy (@why: PM_BUSY_*): whoever else wants it waits in
 * pm_chunk_wait() until pm_chunk_unbusy(). Caller holds d->lock.
 */
void pm_chunk_busy(struct pm_domain *d, u64 idx, u8 why)
	__must_hold(&d->lock)
{
	WARN_ON_ONCE(d->meta[idx].busy);
	WRITE_ONCE(d->meta[idx].busy, why);
	d->busy_chunks++;
}

void pm_chunk_unbusy(struct pm_domain *d, u64 idx)
	__must_hold(&d->lock)
{
	struct pm_chunk_meta *meta = &d->meta[idx];

	/*
	 * Waiters sleep in wait_var_event(): they queue themselves, then
	 * test busy. The store to busy must be visible before wake_up_var()
	 * looks for waiters (waitqueue_active() takes no lock), or a waiter
	 * that tested busy just before is not woken: a lost wakeup. The full
	 * barrier pairs with the one in prepare_to_wait_event()
	 * (set_current_state()).
	 */
	WRITE_ONCE(meta->busy, 0);
	d->busy_chunks--;
	smp_mb();
	wake_up_var(meta);
}

/*
 * Wait until every chunk of @d that is busy now is done: after a pool left
 * the domain's pool_mask (under d->lock), only placements and moves that
 * began before may still be taking a chunk there. Later ones may be waited
 * for too; each is bounded. Caller does not hold d->lock; pm_lock may be
 * held (neither placement nor migration takes it).
 */
void pm_domain_quiesce(struct pm_domain *d)
{
	u64 idx;

	mutex_lock(&d->lock);
	for (idx = 0; d->busy_chunks && idx < d->nr_chunks; idx++) {
		struct pm_chunk_meta *meta = &d->meta[idx];

		if (!meta->busy)
			continue;
		mutex_unlock(&d->lock);
		wait_var_event(meta, !READ_ONCE(meta->busy));
		mutex_lock(&d->lock);
	}
	mutex_unlock(&d->lock);
}

/*
 * Wait until chunk @idx is not busy. Caller holds d->lock, which is
 * dropped while waiting. Killable: a vCPU thread must never be stuck here
 * for good. Returns 0, or -EINTR when a fatal signal ended the wait.
 */
int pm_chunk_wait(struct pm_domain *d, u64 idx)
	__must_hold(&d->lock)
{
	struct pm_chunk_meta *meta = &d->meta[idx];

	while (meta->busy) {
		int killed;

		mutex_unlock(&d->lock);
		killed = wait_var_event_killable(meta, !READ_ONCE(meta->busy));
		mutex_lock(&d->lock);
		if (killed)
			return -EINTR;
	}
	return 0;
}

/*
 * Make chunk @idx present: place it by the domain's policies (tiers in
 * tier-policy order, within a tier pools in pool-selection order; a node
 * that can't supply the chunk is skipped: fall back within quota), or
 * wait for the fault already placing it. Caller holds d->lock, which is
 * dropped while the chunk is allocated or waited for. Returns 0, -ENOMEM
 * when no tier with quota left can supply it, or -EINTR when a fatal
 * signal ended the wait.
 */
int pm_chunk_place(struct pm_domain *d, u64 idx)
	__must_hold(&d->lock)
{
	struct pm_chunk_meta *meta = &d->meta[idx];
	u8 ids[POOLMEM_MAX_POOLS];
	struct pm_tier_view tv;
	u32 tiers[PM_NR_TIERS];
	struct pm_pool *p;
	unsigned int nt, t, n, round;

	if (pm_chunk_wait(d, idx))
		return -EINTR;
	if (meta->present)
		return 0;
	/* its memory was revoked: no silent zeros in its place (pm_chunk_lose) */
	if (meta->lost)
		return -EHWPOISON;

	for (t = 0; t < PM_NR_TIERS; t++) {
		tv.used[t] = d->usage[t] >> d->chunk_shift;
		tv.quota[t] = d->quota[t] >> d->chunk_shift;
	}
	if (d->znuma) {
		/* a window's chunks come from its tier alone */
		tiers[0] = (idx << d->chunk_shift) < d->win_split ? PM_TIER_LOCAL : PM_TIER_POOL;
		nt = tv.used[tiers[0]] < tv.quota[tiers[0]];
	} else {
		nt = pm_tier_order(d->tier_policy, &tv, tiers);
	}

	/*
	 * Two rounds: first every candidate with light reclaim, so that a
	 * full node costs little when another can serve; then, before the
	 * fault fails with SIGBUS, every candidate again reclaiming hard:
	 * page cache on a pool node is no reason to kill a VM.
	 */
	for (round = 0; round < 2; round++) {
		for (t = 0; t < nt; t++) {
			u32 tier = tiers[t];
			int ret;

			/* the lock was dropped for the tier before: look again */
			if (d->usage[tier] + d->chunk_bytes > d->quota[tier])
				continue;
			n = tier == PM_TIER_POOL ? pm_pool_candidates(d, ~0ULL, ids) : 1;
			if (!n)
				continue;
			d->usage[tier] += d->chunk_bytes;	/* reserved while unlocked */
			pm_chunk_busy(d, idx, PM_BUSY_ALLOC);
			ret = pm_chunk_alloc_unlocked(d, idx, tier == PM_TIER_POOL ? ids : NULL, n,
						      round ? PM_ALLOC_RETRY : 0, &p);
			d->usage[tier] -= d->chunk_bytes;
			if (!ret) {
				pm_chunk_charge(d, idx, tier, p);
				if (p)
					d->rr_cursor++;
			} else {
				/*
				 * The reservation is given back: a tier that
				 * POOLMEM_DOMAIN_SET shrank meanwhile keeps
				 * no room for it (its quota held the
				 * reserved bytes as usage).
				 */
				pm_quota_settle(d, tier);
			}
			pm_chunk_unbusy(d, idx);
			if (!ret)
				return 0;
		}
		if (fatal_signal_pending(current))
			break;
	}
	return -ENOMEM;
}

/* The page at byte @off of the domain; its chunk must be present. */
struct page *pm_page_at(struct pm_domain *d, u64 off)
{
	u64 idx = off >> d->chunk_shift, in = off & (d->chunk_bytes - 1);

	return d->units[idx * d->units_per_chunk + (in >> PM_UNIT_SHIFT)] +
	       ((in & (PM_UNIT_BYTES - 1)) >> PAGE_SHIFT);
}

/*
 * Remove chunk @idx from every mapping of the domain's file so it can be
 * freed. A fault that took a unit's page lock under d->lock may still be
 * installing its PMD: wait for it, then zap. Caller holds d->lock; the
 * domain's file is open (the caller came through it), so d->inode is
 * valid.
 */
void pm_chunk_unmap(struct pm_domain *d, u64 idx)
{
	pm_units_unmap(d, d->inode, idx, &d->units[idx * d->units_per_chunk]);
}

/*
 * Remove chunk @idx, whose units are @units, from every mapping of the
 * domain's file @inode. Either d->lock is held, or the chunk is busy (no
 * fault can map it again) and the caller holds a reference on @inode.
 * This fires the mmu notifiers: KVM drops its EPT/NPT entries too.
 */
void pm_units_unmap(struct pm_domain *d, struct inode *inode, u64 idx, struct page **units)
{
	unsigned int u;

	for (u = 0; u < d->units_per_chunk; u++)
		lock_page(units[u]);
	unmap_mapping_range(inode->i_mapping, idx << d->chunk_shift, d->chunk_bytes, 1);
	for (u = 0; u < d->units_per_chunk; u++)
		unlock_page(units[u]);
}

/* ---- retired chunks ---- */

/*
 * A chunk discarded while something else still held a reference to its
 * pages: a pipe after vmsplice(), an io_uring fixed buffer, O_DIRECT in
 * flight, a long-term pin. Freeing our reference would hand the memory back
 * to its node only when they let go, but uncharging it now would let a
 * tenant hold any amount of memory outside its quota (discard, refault,
 * repeat). So it leaves the domain's map (the offset is placed anew on the
 * next touch) but stays charged to the domain's tier and pool and in the
 * reverse map (an offline of its block is refused) until pm_retired_work() sees that
 * ours is the last reference.
 */
struct pm_retired {
	struct list_head node;		/* pm_retired_list; pm_retired_lock */
	struct pm_domain *d;		/* holds a reference (get_device) */
	u32 tier;
	struct pm_pool *pool;		/* NULL: local */
	unsigned int nr;
	struct page *units[];
};

/*
 * Protects pm_retired_list and pm_linger_list. A spinlock: nothing sleeps
 * under it.
 */
static DEFINE_SPINLOCK(pm_retired_lock);
static LIST_HEAD(pm_retired_list);
/*
 * Evicted domains that still hold a shared chunk in their map: there was
 * no memory for its retire record (pm_chunk_retire_shared()). Each holds
 * a reference on its domain; the reaper retries the records.
 */
static LIST_HEAD(pm_linger_list);
static bool pm_retire_shared_locked(struct pm_domain *d);
static void pm_retired_workfn(struct work_struct *work);
static DECLARE_DELAYED_WORK(pm_retired_work, pm_retired_workfn);
#define PM_RETIRED_POLL		msecs_to_jiffies(100)

/* Does anything but the domain hold a reference to a unit of these? */
bool pm_units_shared(struct page **units, unsigned int nr)
{
	unsigned int u;

	for (u = 0; u < nr; u++)
		if (page_count(units[u]) != 1)
			return true;
	return false;
}

/*
 * Lingering domains: try their records again. A domain whose shared chunks
 * are all retired now (or no longer shared) leaves the list and drops its
 * reference; its release frees the rest. Returns whether any stays.
 */
static bool pm_linger_retry(void)
{
	struct pm_domain *d, *tmp;
	LIST_HEAD(linger);
	bool left;

	spin_lock(&pm_retired_lock);
	list_splice_init(&pm_linger_list, &linger);
	spin_unlock(&pm_retired_lock);
	list_for_each_entry_safe(d, tmp, &linger, linger) {
		mutex_lock(&d->lock);
		left = pm_retire_shared_locked(d);
		mutex_unlock(&d->lock);
		if (left)
			continue;
		list_del_init(&d->linger);
		put_device(&d->dev);
	}
	spin_lock(&pm_retired_lock);
	list_splice_tail(&linger, &pm_linger_list);
	left = !list_empty(&pm_linger_list);
	spin_unlock(&pm_retired_lock);
	return left;
}

static void pm_retired_workfn(struct work_struct *work)
{
	struct pm_retired *r, *tmp;
	LIST_HEAD(done);
	bool more;

	more = pm_linger_retry();
	spin_lock(&pm_retired_lock);
	list_for_each_entry_safe(r, tmp, &pm_retired_list, node)
		if (!pm_units_shared(r->units, r->nr))
			list_move(&r->node, &done);
	more |= !list_empty(&pm_retired_list);
	spin_unlock(&pm_retired_lock);

	/*
	 * Unmapped and unreferenced: nobody can take a new reference (no
	 * page table, page cache or map entry leads to these pages), except
	 * speculative get_page_unless_zero() of pfn walkers, which give it
	 * back without looking further.
	 */
	list_for_each_entry_safe(r, tmp, &done, node) {
		struct pm_domain *d = r->d;
		unsigned int u;

		for (u = 0; u < r->nr; u++) {
			pm_rmap_erase(r->units[u]);
			pm_unit_put(r->units[u]);
		}
		mutex_lock(&d->lock);
		pm_chunk_uncharge(d, r->tier, r->pool);
		d->retired--;
		mutex_unlock(&d->lock);
		kfree(r);
		put_device(&d->dev);
	}
	if (more)
		schedule_delayed_work(&pm_retired_work, PM_RETIRED_POLL);
}

/*
 * Retire present chunk @idx (unmapped by the caller). Caller holds d->lock.
 * Returns -ENOMEM when there is no memory for the record: the chunk then
 * stays in the map.
 */
static int pm_chunk_retire(struct pm_domain *d, u64 idx)
{
	struct page **slot = &d->units[idx * d->units_per_chunk];
	struct pm_retired *r;
	unsigned int u;

	r = pm_should_fail(0) ? NULL : kmalloc(struct_size(r, units, d->units_per_chunk), GFP_KERNEL);
	if (!r)
		return -ENOMEM;
	r->d = d;
	r->tier = d->meta[idx].tier;
	r->pool = pm_chunk_pool(d, idx);
	r->nr = d->units_per_chunk;
	for (u = 0; u < r->nr; u++) {
		/* the reverse map keeps naming the domain: it finds units by page */
		r->units[u] = slot[u];
		slot[u] = NULL;
	}
	get_device(&d->dev);
	d->meta[idx].present = 0;
	d->meta[idx].zeroed = 0;
	d->chunks--;
	d->retired++;
	spin_lock(&pm_retired_lock);
	list_add_tail(&r->node, &pm_retired_list);
	spin_unlock(&pm_retired_lock);
	schedule_delayed_work(&pm_retired_work, PM_RETIRED_POLL);
	return 0;
}

/*
 * Discard present chunk @idx: unmap it from every mapping, then free it,
 * or retire it when something still holds its pages. If even that fails
 * (no memory for the record), zero it in place: the tenant's data is gone
 * either way and the chunk stays charged. Returns whether the chunk left
 * the domain's map (freed, or retired to be freed with its last
 * reference). Caller holds d->lock.
 */
bool pm_chunk_discard(struct pm_domain *d, u64 idx)
{
	struct page **slot = &d->units[idx * d->units_per_chunk];
	unsigned int u, i;

	pm_chunk_unmap(d, idx);
	/* lost pages are a hole again, as the rest */
	pm_poison_forget(d, idx);
	if (!pm_units_shared(slot, d->units_per_chunk)) {
		pm_chunk_free(d, idx);
		return true;
	}
	if (!pm_chunk_retire(d, idx))
		return true;
	for (u = 0; u < d->units_per_chunk; u++)
		for (i = 0; i < PM_UNIT_PAGES; i++)
			if (!PageHWPoison(slot[u] + i))
				clear_highpage(slot[u] + i);
	return false;
}

/*
 * Retire the present chunks of @d that something else still references.
 * Returns true if one is left in the map: no memory for its record.
 * Caller holds d->lock.
 */
static bool pm_retire_shared_locked(struct pm_domain *d)
	__must_hold(&d->lock)
{
	bool left = false;
	u64 idx;

	for (idx = 0; idx < d->nr_chunks; idx++) {
		cond_resched();
		if (d->meta[idx].present &&
		    pm_units_shared(&d->units[idx * d->units_per_chunk], d->units_per_chunk) &&
		    pm_chunk_retire(d, idx))
			left = true;
	}
	return left;
}

/*
 * The domain's file is gone (no mapping is left), but pages of its chunks
 * may still be referenced elsewhere (a pipe, an RDMA or io_uring
 * registration): retire those, so they stay charged, listed and in the
 * reverse map until they are really free, instead of being uncharged by
 * the domain's release.
 *
 * A chunk without memory for its record must not reach the release, which
 * would free it while referenced: uncharged, out of the reverse map, its
 * memory another tenant's while the pipe still reads it. So the domain
 * then lingers: it takes a reference, kept on pm_linger_list (its own
 * list node, nothing to allocate), and the reaper retries the records
 * until every shared chunk has one. Process context, d->lock not held.
 */
void pm_chunk_retire_shared(struct pm_domain *d)
{
	bool left;

	mutex_lock(&d->lock);
	left = pm_retire_shared_locked(d);
	mutex_unlock(&d->lock);
	if (!left)
		return;
	pr_warn_ratelimited("domain %s: no memory to retire a shared chunk at eviction: held until there is\n",
			    d->name);
	get_device(&d->dev);
	spin_lock(&pm_retired_lock);
	list_add_tail(&d->linger, &pm_linger_list);
	spin_unlock(&pm_retired_lock);
	schedule_delayed_work(&pm_retired_work, PM_RETIRED_POLL);
}

/*
 * A fault found its quota used up while @d has retired chunks: their
 * other users (a KVM or O_DIRECT reference that is about to go) may be
 * letting go. Run the reaper now and a few more times over ~100 ms before
 * the fault gives up; quotas stay hard. Caller does not hold d->lock.
 */
void pm_retired_reap_wait(struct pm_domain *d)
{
	u64 before = READ_ONCE(d->retired);
	int i;

	for (i = 0; i < 10 && !fatal_signal_pending(current); i++) {
		mod_delayed_work(system_wq, &pm_retired_work, 0);
		flush_delayed_work(&pm_retired_work);
		if (READ_ONCE(d->retired) < before)
			return;
		schedule_timeout_killable(msecs_to_jiffies(10));
	}
}

int pm_chunk_init(void)
{
	int cpu;

	pm_place_scratch = alloc_percpu(struct pm_place_scratch);
	if (!pm_place_scratch)
		return -ENOMEM;
	for_each_possible_cpu(cpu)
		local_lock_init(&per_cpu_ptr(pm_place_scratch, cpu)->lock);
	pm_alloc_wq = alloc_workqueue("poolmem_alloc", WQ_UNBOUND | WQ_MEM_RECLAIM, 0);
	if (!pm_alloc_wq) {
		free_percpu(pm_place_scratch);
		return -ENOMEM;
	}
	return 0;
}

/* Module exit: no domain is left, so no chunk is retired. */
void pm_chunk_exit(void)
{
	cancel_delayed_work_sync(&pm_retired_work);
	WARN_ON(!list_empty(&pm_retired_list) || !list_empty(&pm_linger_list));
	destroy_workqueue(pm_alloc_wq);
	free_percpu(pm_place_scratch);
}

/* Bytes of @d's chunks on pools outside its pool_mask. Caller holds d->lock. */
u64 pm_domain_outside_bytes(struct pm_domain *d)
{
	u64 n = 0;
	int i;

	for (i = 0; i < POOLMEM_MAX_POOLS; i++)
		if (!(d->pool_mask & BIT_ULL(i)))
			n += d->chunks_per_pool[i];
	return n * d->chunk_bytes;
}

/*
 * Bytes of @d that must still move (POOLMEM_DOMAIN_SET's remaining_bytes):
 * the local tier's excess, and the larger of the pool tier's excess and
 * what lies on pools outside the mask, since one move can settle both. A
 * lower bound: set.c's moves may meet an excess chunk that is not outside
 * first. Caller holds d->lock.
 */
u64 pm_domain_moves_pending(struct pm_domain *d)
	__must_hold(&d->lock)
{
	u64 over_local = 0, over_pool = 0;

	if (d->usage[PM_TIER_LOCAL] > d->committed[PM_TIER_LOCAL])
		over_local = d->usage[PM_TIER_LOCAL] - d->committed[PM_TIER_LOCAL];
	if (d->usage[PM_TIER_POOL] > d->committed[PM_TIER_POOL])
		over_pool = d->usage[PM_TIER_POOL] - d->committed[PM_TIER_POOL];
	return over_local + max(over_pool, pm_domain_outside_bytes(d));
}
