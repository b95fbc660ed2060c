// SPDX-License-Identifier: GPL-2.0
/*
 * The zero reserve: per node, a few 2 MiB units taken from the buddy
 * allocator and zeroed ahead of time by a background thread, so that the
 * fault that places a chunk maps memory instead of clearing it. Pool nodes
 * keep the share their pool is configured with (zero_reserve in the pool's
 * sysfs directory, 1% of capacity by default); nodes with CPUs, the local
 * tier, keep local_zero_reserve_mb.
 *
 * A unit in the reserve is zeroed after the page allocator gave it out,
 * and while it waits there nobody maps it and nobody holds a reference to
 * it but the reserve: what a tenant gets from it is zeros, whatever the
 * previous owner of the memory wrote (init_on_alloc=0 included).
 *
 * Reserve memory is used memory to the node (it is allocated), is shown
 * apart (zero_reserve_bytes), and is given back:
 *  - under memory pressure, by a NUMA-aware shrinker, which also holds the
 *    refill off for a while;
 *  - to memory offline: MEM_GOING_OFFLINE frees the units in the range
 *    (the block's pageblocks are isolated then, so no refill lands there
 *    again). That works in ZONE_MOVABLE, where pool memory is onlined by
 *    default: there the kernel's isolation takes any page. In a kernel
 *    zone, isolation refuses a block holding a unit (allocated, not on
 *    the LRU) before the notifier runs, so whoever offlines such memory
 *    empties the reserve first (poolctl pool offline and remove do: they
 *    set zero_reserve to 0 and wait);
 *  - when the target drops (pool drain, pool remove, a smaller setting);
 *  - at module unload.
 * Admission does not see the reserve at all: it counts quotas against
 * capacity, and a reserve unit serves a fault as free memory would.
 *
 * The refill runs in a kthread at nice 19 (SCHED_IDLE is not available to
 * modules since 5.9) and takes free memory only: only while the node's
 * free pages are above its zones' high watermarks by a unit, with no
 * direct reclaim, no kswapd wake-up and no memory reserves, so it never
 * pushes anything else out of a node to fill its reserve; and not while
 * the node's memory is coming online (pm_reserve_online()). No unit is in
 * a CMA pageblock (alloc_contig_range() has no notifier to ask for it):
 * pool nodes have no CMA, and a local node's units are allocated as local
 * chunks are (chunk.c). A unit with a hardware-poisoned page is never
 * handed out nor freed again: it stays out of use, as the buddy allocator
 * would keep it.
 *
 * Locks:
 *  - pm_reserve.lock (spinlock) protects the unit list and nr. Taken in
 *    the fault path; nothing under it sleeps or allocates.
 *  - pm_reserve.offline_sem: a refill holds it for read from allocation to
 *    insertion, and a trim (the shrinker, the thread's trim to target)
 *    from taking the list to putting back what it keeps; MEM_GOING_OFFLINE
 *    takes it for write, so that no unit is on its way into the list, or
 *    out of it and back, while the units in the range are freed: a trim
 *    holds the whole list for a moment, and an offline that found it
 *    empty then would leave units inside the range, which
 *    offline_pages() can neither free nor move (it retries until a
 *    signal). The refill and the shrinker only trylock it (the shrinker
 *    runs in reclaim, which the hotplug path may be waiting on), and
 *    nothing under it allocates with reclaim, so it waits on nothing the
 *    memory hotplug path holds.
 *  - pm_lock (mutex) is taken by the thread alone, to read the pools'
 *    settings; never with a reserve lock held.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/freezer.h>
#include <linux/gfp.h>
#include <linux/highmem.h>
#include <linux/kthread.h>
#include <linux/memory.h>
#include <linux/mm.h>
#include <linux/nodemask.h>
#include <linux/sched.h>
#include <linux/shrinker.h>
#include <linux/slab.h>
#include <linux/wait.h>

#include "poolmem.h"

struct pm_reserve {
	spinlock_t lock;
	bool local;			/* the local tier's node: units never in CMA */
	struct list_head units;		/* head pages, linked by page->lru */
	unsigned long nr;		/* units on the list */
	unsigned long target;		/* units wanted; 0: the reserve is off */
	struct rw_semaphore offline_sem;
	unsigned long hold_until;	/* jiffies: no refill before (pressure, no free memory, onlining) */
	atomic64_t refills;		/* units zeroed into the reserve */
	atomic64_t hits;		/* chunk units taken from it */
	atomic64_t misses;		/* chunk units zeroed on the fault path: it was empty */
};

static struct pm_reserve *pm_reserves;	/* nr_node_ids of them */

unsigned int pm_zero_reserve_pct = 1;
PM_PARAM_UINT_RANGE(zero_reserve_pct, pm_zero_reserve_pct, 0, 50, 0644);
MODULE_PARM_DESC(zero_reserve_pct,
		 "Zero reserve of a pool added from now on, % of its capacity, 0..50 (default 1; 0 = off)");

static unsigned int pm_local_zero_reserve_mb = 64;
PM_PARAM_UINT_RANGE(local_zero_reserve_mb, pm_local_zero_reserve_mb, 0, 65536, 0644);
MODULE_PARM_DESC(local_zero_reserve_mb,
		 "Zero reserve of each node with CPUs (the local tier), MiB, 0..65536 (default 64; 0 = off)");

static struct task_struct *pm_zerod;
static DECLARE_WAIT_QUEUE_HEAD(pm_zerod_wait);
static atomic_t pm_zerod_kicked = ATOMIC_INIT(0);

/* Something changed (a unit taken or freed, a target): look again. */
void pm_zerod_kick(void)
{
	/* the flag before the wake-up: the thread tests it after it queues itself */
	atomic_set(&pm_zerod_kicked, 1);
	wake_up_interruptible(&pm_zerod_wait);
}

/*
 * Memory came online on @nid: no refill there for PM_RESERVE_SETTLE.
 * Memory is onlined a block at a time (poolctl pool online, and with
 * --async the rest in the background, in pieces), and each block raises
 * the target; zeroing towards it meanwhile takes the CPU and the memory
 * bandwidth that the onlining needs. Measured in the rig (TCG, two
 * vCPUs, an 8 GiB dax_hmem device onlined whole, then registered): with
 * the refill starting at registration the onlining ran at 35 GiB/s, with
 * the reserve off at 53 (daxctl: 49). So the reserve waits until the
 * node's capacity has stopped changing for this long; it fills then.
 * Called from the memory notifier (MEM_ONLINE, hotplug lock held): a
 * store, nothing else.
 */
#define PM_RESERVE_SETTLE (HZ / 2)

void pm_reserve_online(int nid)
{
	struct pm_reserve *r;
	unsigned long until = jiffies + PM_RESERVE_SETTLE;

	if (!pm_reserves)
		return;
	r = &pm_reserves[nid];
	/* never shortens a longer hold (the shrinker's); a lost race only moves it by a jiffy */
	if (time_before(READ_ONCE(r->hold_until), until))
		WRITE_ONCE(r->hold_until, until);
}

/* Bytes of a pool's reserve as configured: bytes, or % of its capacity. */
u64 pm_pool_zero_reserve_target(struct pm_pool *p)
{
	u64 bytes = READ_ONCE(p->zero_reserve_bytes), present = pm_node_present_bytes(p->node);

	if (READ_ONCE(p->draining))
		return 0;
	if (bytes == PM_ZERO_RESERVE_PCT)
		bytes = div_u64(present * READ_ONCE(p->zero_reserve_pct), 100);
	/* never more than half the node: the rest is for chunks and the kernel */
	return round_down(min(bytes, present / 2), PM_UNIT_BYTES);
}

u64 pm_node_zero_reserve_bytes(int nid)
{
	return pm_reserves ? (u64)READ_ONCE(pm_reserves[nid].nr) << PM_UNIT_SHIFT : 0;
}

void pm_node_zero_reserve_stats(int nid, u64 *refills, u64 *hits, u64 *misses)
{
	struct pm_reserve *r = &pm_reserves[nid];

	*refills = atomic64_read(&r->refills);
	*hits = atomic64_read(&r->hits);
	*misses = atomic64_read(&r->misses);
}

/*
 * /sys/kernel/poolmem/zero_reserve: one line per node that keeps or holds
 * a reserve, pools' and the local tier's alike:
 * "NODE TARGET_BYTES BYTES REFILLS HITS MISSES".
 */
ssize_t pm_zero_reserve_nodes_show(char *buf)
{
	int nid, n = 0;

	if (!pm_reserves)	/* module init: the file is there before the reserve */
		return 0;
	for_each_node_state(nid, N_MEMORY) {
		struct pm_reserve *r = &pm_reserves[nid];
		unsigned long target = READ_ONCE(r->target), nr = READ_ONCE(r->nr);

		if (!target && !nr && !atomic64_read(&r->refills))
			continue;
		n += sysfs_emit_at(buf, n, "%d %llu %llu %lld %lld %lld\n", nid, (u64)target << PM_UNIT_SHIFT,
				   (u64)nr << PM_UNIT_SHIFT, atomic64_read(&r->refills), atomic64_read(&r->hits),
				   atomic64_read(&r->misses));
	}
	return n;
}

/* Targets of every node with memory: its pool's, or the local tier's. */
static void pm_reserve_update_targets(void)
{
	int nid;

	mutex_lock(&pm_lock);
	for_each_node_state(nid, N_MEMORY) {
		struct pm_pool *p = pm_node_pool(nid);
		u64 bytes;

		if (p)
			bytes = pm_pool_zero_reserve_target(p);
		else if (node_state(nid, N_CPU))
			bytes = min((u64)READ_ONCE(pm_local_zero_reserve_mb) << 20, pm_node_present_bytes(nid) / 2);
		else
			bytes = 0;	/* neither a pool nor a home node */
		WRITE_ONCE(pm_reserves[nid].local, !p);
		WRITE_ONCE(pm_reserves[nid].target, bytes >> PM_UNIT_SHIFT);
	}
	mutex_unlock(&pm_lock);
}


/*
 * A zeroed unit for a new chunk on @nid, or NULL. Counts a hit or, when
 * the node keeps a reserve, a miss (the caller zeroes on the fault path).
 * @pinnable: the unit will be long-term pinned (a pinnable domain's, or
 * taken under FOLL_LONGTERM), so only a unit outside ZONE_MOVABLE will do.
 * Without CMA the zone decides, as pm_chunk_longterm_ok() says (with
 * CMA, see below). Only the first unit is looked
 * at: a node onlined all to a kernel zone (the pinnable pools) serves
 * every one, a node of both zones serves them when a kernel-zone unit is
 * at the head, and a miss only costs the zeroing on the fault path.
 * Process context: a unit found with a poisoned page is held, which may sleep.
 */
struct page *pm_reserve_take(int nid, bool pinnable)
{
	struct pm_reserve *r = &pm_reserves[nid];
	struct page *page;

	if (!READ_ONCE(r->target) && !READ_ONCE(r->nr))
		return NULL;
	/*
	 * On a kernel with CMA, a pool node whose memory was there at boot
	 * may have CMA areas (hugetlb_cma= reserves on every node), and its
	 * reserve units are of the movable class: they may sit there. Only a
	 * local node's units (never in CMA) serve a long-term pin then.
	 */
	if (pinnable && IS_ENABLED(CONFIG_CMA) && !READ_ONCE(r->local))
		return NULL;
again:
	spin_lock(&r->lock);
	page = list_first_entry_or_null(&r->units, struct page, lru);
	if (page && pinnable && page_zonenum(page) == ZONE_MOVABLE) {
		/* not the reserve's to serve: neither a hit nor a miss */
		spin_unlock(&r->lock);
		return NULL;
	}
	if (page) {
		/* leaves lru poisoned, as a page fresh from the buddy lists is */
		list_del(&page->lru);
		r->nr--;
	}
	spin_unlock(&r->lock);
	if (page && pm_unit_poisoned(page)) {
		pr_warn_ratelimited("zero reserve unit at PFN %#lx on node %d has a poisoned page: held out of use\n",
				    page_to_pfn(page), nid);
		pm_unit_hold(page);
		goto again;
	}
	atomic64_inc(page ? &r->hits : &r->misses);
	pm_zerod_kick();
	return page;
}

/*
 * Free up to @max units of @nid's reserve whose PFN is in [@lo, @hi). The
 * list is taken whole and sorted outside the lock (it may be long: a
 * fault must not wait behind the walk), and what stays goes back at its
 * head, where the oldest units were. Caller holds offline_sem (for read,
 * or for write in an offline), or is module exit: while the list is out,
 * it must look empty to nobody who relies on it being complete.
 */
static unsigned long pm_reserve_release(int nid, unsigned long max, unsigned long lo, unsigned long hi)
{
	struct pm_reserve *r = &pm_reserves[nid];
	struct page *page, *tmp;
	unsigned long n = 0;
	LIST_HEAD(all);
	LIST_HEAD(freed);

	spin_lock(&r->lock);
	list_splice_init(&r->units, &all);
	r->nr = 0;
	spin_unlock(&r->lock);
	list_for_each_entry_safe(page, tmp, &all, lru) {
		unsigned long pfn = page_to_pfn(page);

		if (n == max)
			break;
		if (pfn < lo || pfn >= hi)
			continue;
		list_move(&page->lru, &freed);
		n++;
	}
	if (!list_empty(&all)) {
		unsigned long kept = 0;

		list_for_each_entry(page, &all, lru)
			kept++;
		spin_lock(&r->lock);
		list_splice(&all, &r->units);
		r->nr += kept;
		spin_unlock(&r->lock);
	}
	list_for_each_entry_safe(page, tmp, &freed, lru) {
		list_del(&page->lru);
		pm_unit_put(page);	/* one with a poisoned page: out of use for good */
	}
	return n;
}

/* Free pages of @nid above its zones' high watermarks, in pages (0 if none). */
static unsigned long pm_node_free_above_high(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long free = 0, high = 0;
	int z;

	for (z = 0; z < MAX_NR_ZONES; z++) {
		struct zone *zone = &pgdat->node_zones[z];

		if (!populated_zone(zone))
			continue;
		free += zone_page_state(zone, NR_FREE_PAGES);
		high += high_wmark_pages(zone);
	}
	return free > high ? free - high : 0;
}

/* Zero one unit into @nid's reserve; false if no free memory was there. */
static bool pm_reserve_refill_one(int nid)
{
	struct pm_reserve *r = &pm_reserves[nid];
	/*
	 * Free memory only: no direct reclaim, no kswapd, no OOM, no
	 * warning. A local node's units serve local chunks: on a kernel with
	 * CMA they are allocated as those are (chunk.c), never from CMA.
	 */
	gfp_t gfp = ((IS_ENABLED(CONFIG_CMA) && READ_ONCE(r->local) ? GFP_HIGHUSER : GFP_HIGHUSER_MOVABLE) &
		     ~__GFP_RECLAIM) | __GFP_THISNODE | __GFP_COMP | __GFP_NOWARN | __GFP_NOMEMALLOC;
	struct page *page;
	unsigned long i;

	if (!node_online(nid) || pm_node_free_above_high(nid) < 2 * PM_UNIT_PAGES)
		return false;	/* not without taking what the node needs */
	if (!down_read_trylock(&r->offline_sem))
		return false;	/* an offline is releasing units on this node */
	page = pm_should_fail(PM_UNIT_BYTES) ? NULL : alloc_pages_node(nid, gfp, PM_UNIT_ORDER);
	if (!page) {
		up_read(&r->offline_sem);
		return false;
	}
	for (i = 0; i < PM_UNIT_PAGES; i++) {
		clear_highpage(page + i);
		if ((i & 63) == 63)
			cond_resched();
	}
	/* the lock orders the zeroes before the unit is seen on the list */
	spin_lock(&r->lock);
	list_add_tail(&page->lru, &r->units);
	r->nr++;
	spin_unlock(&r->lock);
	up_read(&r->offline_sem);
	atomic64_inc(&r->refills);
	return true;
}

static int pm_zerod_fn(void *unused)
{
	set_user_nice(current, MAX_NICE);
	set_freezable();
	while (!kthread_should_stop()) {
		bool more = false;
		int nid;

		try_to_freeze();	/* zeroing a large target takes longer than a suspend waits */
		pm_reserve_update_targets();
		for_each_node_state(nid, N_MEMORY) {
			struct pm_reserve *r = &pm_reserves[nid];
			unsigned long target = READ_ONCE(r->target), nr = READ_ONCE(r->nr);

			if (nr > target) {
				/* may wait for an offline's release: it holds no lock of ours */
				down_read(&r->offline_sem);
				pm_reserve_release(nid, nr - target, 0, ULONG_MAX);
				up_read(&r->offline_sem);
			} else if (nr < target && time_after_eq(jiffies, READ_ONCE(r->hold_until))) {
				if (pm_reserve_refill_one(nid))
					more = true;
				else	/* no free memory there now: not before a second */
					WRITE_ONCE(r->hold_until, jiffies + HZ);
			}
			if (kthread_should_stop())
				break;
			cond_resched();
		}
		if (more)
			continue;
		/* also every second: capacity grows as blocks come online, holds expire */
		wait_event_freezable_timeout(pm_zerod_wait,
					     kthread_should_stop() || atomic_xchg(&pm_zerod_kicked, 0), HZ);
	}
	return 0;
}

/*
 * MEM_GOING_OFFLINE of [@start_pfn, +@nr_pages) on @nid: free the reserve's
 * units there, after any refill in flight has put its unit on the list.
 */
void pm_reserve_offline(int nid, unsigned long start_pfn, unsigned long nr_pages)
{
	struct pm_reserve *r;
	unsigned long n;

	if (!pm_reserves)
		return;
	r = &pm_reserves[nid];
	down_write(&r->offline_sem);
	n = pm_reserve_release(nid, ULONG_MAX, start_pfn, start_pfn + nr_pages);
	up_write(&r->offline_sem);
	if (n)
		pr_info("memory offline of PFNs %#lx-%#lx: %lu zero reserve units given back\n", start_pfn,
			start_pfn + nr_pages - 1, n);
}

static unsigned long pm_reserve_count(struct shrinker *s, struct shrink_control *sc)
{
	unsigned long nr = READ_ONCE(pm_reserves[sc->nid].nr);

	return nr ? nr << PM_UNIT_ORDER : SHRINK_EMPTY;
}

static unsigned long pm_reserve_scan(struct shrinker *s, struct shrink_control *sc)
{
	struct pm_reserve *r = &pm_reserves[sc->nid];
	unsigned long n;

	/* the node is short of memory: no refill for two seconds */
	WRITE_ONCE(r->hold_until, jiffies + 2 * HZ);
	/* an offline is releasing this node's units: it frees memory too */
	if (!down_read_trylock(&r->offline_sem))
		return SHRINK_STOP;
	n = pm_reserve_release(sc->nid, DIV_ROUND_UP(sc->nr_to_scan, PM_UNIT_PAGES), 0, ULONG_MAX);
	up_read(&r->offline_sem);
	/* a unit is 512 pages: say so, or reclaim would ask 4x what it needed */
	sc->nr_scanned = n << PM_UNIT_ORDER;
	return n ? n << PM_UNIT_ORDER : SHRINK_STOP;
}

static struct shrinker *pm_reserve_shrinker;

/* lockdep classes of every node's reserve, named for main.c's lock order */
static struct lock_class_key pm_reserve_lock_key, pm_offline_sem_key;

int pm_reserve_init(void)
{
	int nid, ret;

	pm_reserves = kcalloc(nr_node_ids, sizeof(*pm_reserves), GFP_KERNEL);
	if (!pm_reserves)
		return -ENOMEM;
	for (nid = 0; nid < nr_node_ids; nid++) {
		struct pm_reserve *r = &pm_reserves[nid];

		spin_lock_init(&r->lock);
		lockdep_set_class_and_name(&r->lock, &pm_reserve_lock_key, "pm_reserve.lock");
		INIT_LIST_HEAD(&r->units);
		init_rwsem(&r->offline_sem);
		lockdep_set_class_and_name(&r->offline_sem, &pm_offline_sem_key, "pm_reserve.offline_sem");
		r->hold_until = jiffies;
	}
	/* seeks 0: zeroed memory is cheap to make again, so it goes first */
	pm_reserve_shrinker = pm_shrinker_create(pm_reserve_count, pm_reserve_scan, 0,
						 SHRINKER_NUMA_AWARE, "poolmem-zero-reserve");
	if (IS_ERR(pm_reserve_shrinker)) {
		ret = PTR_ERR(pm_reserve_shrinker);
		goto out_free;
	}
	pm_zerod = kthread_run(pm_zerod_fn, NULL, "poolmem_zerod");
	if (IS_ERR(pm_zerod)) {
		ret = PTR_ERR(pm_zerod);
		goto out_shrinker;
	}
	return 0;

out_shrinker:
	pm_shrinker_destroy(pm_reserve_shrinker);
out_free:
	kfree(pm_reserves);
	pm_reserves = NULL;
	return ret;
}

/* Module exit, first part: nothing refills or shrinks the reserve any more. */
void pm_reserve_stop(void)
{
	kthread_stop(pm_zerod);
	pm_shrinker_destroy(pm_reserve_shrinker);
}

/*
 * Module exit, last part: after the sysfs files that read the reserve
 * (pools' and /sys/kernel/poolmem's) are gone, and readers with them.
 */
void pm_reserve_exit(void)
{
	int nid;

	if (!pm_reserves)
		return;
	for (nid = 0; nid < nr_node_ids; nid++)
		pm_reserve_release(nid, ULONG_MAX, 0, ULONG_MAX);
	kfree(pm_reserves);
	pm_reserves = NULL;
}
