// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem memory errors: a hardware-poisoned page of a domain.
 *
 * memory_failure() can't take a domain page out of use. Our units are
 * compound pages on no LRU list, with no page cache mapping behind them:
 * get_hwpoison_page() refuses them ("unhandlable page", or "get hwpoison
 * page: Ignored" on 6.12), and when the caller already holds a reference
 * (MADV_HWPOISON) try_to_split_thp_page() can't split them ("unsplit thp").
 * Either way it has set PG_hwpoison on the page first, and leaves the page
 * mapped. So poolmem does the rest itself, as shmem's and hugetlbfs's
 * error_remove_folio() and the core's unmap would:
 *
 *  - it hears of the error through memory_failure()'s verdict, the
 *    ras:memory_failure_event tracepoint in action_result(), which every
 *    call that reaches one of our pages emits after setting PG_hwpoison.
 *    The probe only queues the PFN; pm_mf_workfn() does the work;
 *  - the worker finds the page's domain and offset in the reverse map and
 *    records the offset as lost (d->poison), marks the unit
 *    PG_has_hwpoisoned so that no PMD maps it again, and unmaps the chunk
 *    from every mapping (KVM's too, through the mmu notifiers);
 *  - from then on a fault on that offset is VM_FAULT_HWPOISON: SIGBUS with
 *    BUS_MCEERR_AR and the address, which QEMU turns into a machine check
 *    in the guest. The chunk's other pages map page by page;
 *  - a move of the chunk (drain, tiering, offline) copies all but the lost
 *    pages. The record goes with the offset: the guest meets the error at
 *    the same address on the new memory;
 *  - discarding the whole chunk forgets its records: a hole reads as zeros
 *    again, as after punching a hole over a poisoned shmem page;
 *  - the unit never returns to the page allocator: when its chunk is freed
 *    or moved it is held (pm_unit_hold()) until its block goes offline.
 *    That costs 2 MiB per error, as a poisoned hugetlbfs page does on 6.1.
 *
 * A soft offline (corrected errors past a threshold) moves the chunk off
 * the page with its data and holds the old unit the same way. The kernel's
 * soft_offline_page() refuses our pages as it refuses any non-LRU large
 * page, and has no tracepoint; a kprobe on it (soft_offline_hook) queues
 * the PFN for the same move, so the kernel's own callers (the sysfs file,
 * the CEC, GHES, MADV_SOFT_OFFLINE) reach it. POOLMEM_PAGE_OFFLINE is
 * the direct way, with a result.
 *
 * What a module can't change: the kernel's verdict for our pages stays
 * "Ignored" or "Failed" in the log (poolmem's line after it says what was
 * done), and HardwareCorrupted in /proc/meminfo counts only what
 * memory_failure() counted. The first consumption of an error nobody had
 * reported yet (a machine check in user mode) ends in kill_me_maybe():
 * memory_failure() fails, so the task gets "Memory error not recovered"
 * and a SIGBUS without an address, before poolmem hears of the error; a
 * later one finds PG_hwpoison set and gets BUS_MCEERR_AR.
 *
 * Locks: pm_mf_fifo_lock (raw spinlock; the tracepoint runs with
 * preemption off) protects the hard errors' FIFO; the soft offline
 * requests take no lock (the kprobe may run NMI-like); pm_mf_lock (mutex)
 * protects the error log. Neither is held while taking another lock. The worker takes pm_lock, then d->lock, as
 * everyone does.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/delay.h>
#include <linux/irq_work.h>
#include <linux/kfifo.h>
#include <linux/kprobes.h>
#include <linux/mm.h>
#include <linux/slab.h>
#include <linux/timekeeping.h>
#include <linux/tracepoint.h>
#include <linux/uaccess.h>
#include <linux/vmalloc.h>

#include "poolmem.h"

static bool pm_soft_offline_hook = true;
module_param_named(soft_offline_hook, pm_soft_offline_hook, bool, 0444);
MODULE_PARM_DESC(soft_offline_hook,
		 "Soft offline a domain page that the kernel's soft_offline_page() was asked to (kprobe; default on)");

/* PFNs of hard errors from the tracepoint, for the worker */
#define PM_MF_FIFO	256
static DEFINE_KFIFO(pm_mf_hard, unsigned long, PM_MF_FIFO);
/* raw: the tracepoint runs with preemption off, where PREEMPT_RT's spinlocks sleep */
static DEFINE_RAW_SPINLOCK(pm_mf_fifo_lock);
static atomic_t pm_mf_dropped = ATOMIC_INIT(0);
static void pm_mf_workfn(struct work_struct *work);
static DECLARE_WORK(pm_mf_work, pm_mf_workfn);

/*
 * Soft offline requests from the kprobe on soft_offline_page(). Its handler
 * runs with preemption off, and, for a breakpoint (int3) probe, in an
 * NMI-like context (x86 enters it with irqentry_nmi_enter()), where no
 * lock may be taken and no work queued. So a request takes a free slot
 * here with cmpxchg (PFN + 1; 0 is free), and an irq_work, which may be
 * queued from NMI, queues the worker from a hard interrupt. A request that
 * finds no free slot is dropped and counted.
 */
#define PM_MF_SOFT_SLOTS	64
static unsigned long pm_mf_soft_slots[PM_MF_SOFT_SLOTS];
static void pm_mf_soft_kick(struct irq_work *iw);
static struct irq_work pm_mf_soft_iw = IRQ_WORK_INIT(pm_mf_soft_kick);
static struct workqueue_struct *pm_mf_wq;	/* pm_mf_work and the pools' drain_work */

/* The last POOLMEM_MEMORY_ERRORS_KEPT errors, by sequence number; pm_mf_lock. */
static struct poolmem_memory_error pm_mf_log[POOLMEM_MEMORY_ERRORS_KEPT];
static u64 pm_mf_seq;
static DEFINE_MUTEX(pm_mf_lock);

/*
 * PFNs of domain pages that took a memory error (hard, or soft offlined),
 * for as long as the module is loaded: Linux 6.1 forgets a page's poison
 * when its block goes offline and onlines the block again as if sound;
 * the memory notifier refuses such an online (pm_mf_range_poisoned()).
 * The XArray's own lock.
 */
static DEFINE_XARRAY(pm_mf_bad_pfns);

static struct tracepoint *pm_mf_tp;
static struct kprobe pm_mf_kp = { .symbol_name = "soft_offline_page" };
static bool pm_mf_kp_on;

/* The unit @pfn lies in, if it is poolmem's; any context. */
static bool pm_mf_ours(unsigned long pfn)
{
	struct pm_domain *d;
	struct page *unit;
	size_t slot;

	return pfn_valid(pfn) && pm_rmap_first(pfn, pfn, &d, &slot, &unit);
}

/* A hard error at @pfn, from the tracepoint (preemption off, not NMI). */
static void pm_mf_queue_hard(unsigned long pfn)
{
	unsigned long flags;
	unsigned int in;

	raw_spin_lock_irqsave(&pm_mf_fifo_lock, flags);
	in = kfifo_in(&pm_mf_hard, &pfn, 1);
	raw_spin_unlock_irqrestore(&pm_mf_fifo_lock, flags);
	if (!in)
		atomic_inc(&pm_mf_dropped);
	queue_work(pm_mf_wq, &pm_mf_work);
}

/* A soft offline request for @pfn, from the kprobe: NMI-safe (see above). */
static void pm_mf_queue_soft(unsigned long pfn)
{
	unsigned int i;

	for (i = 0; i < PM_MF_SOFT_SLOTS; i++)
		if (!READ_ONCE(pm_mf_soft_slots[i]) && !cmpxchg(&pm_mf_soft_slots[i], 0, pfn + 1))
			break;
	if (i == PM_MF_SOFT_SLOTS)
		atomic_inc(&pm_mf_dropped);
	irq_work_queue(&pm_mf_soft_iw);
}

static void pm_mf_soft_kick(struct irq_work *iw)
{
	queue_work(pm_mf_wq, &pm_mf_work);
}

static bool pm_mf_take(bool soft, unsigned long *pfn)
{
	unsigned long flags, v;
	unsigned int i, out;

	if (soft) {
		for (i = 0; i < PM_MF_SOFT_SLOTS; i++) {
			v = READ_ONCE(pm_mf_soft_slots[i]);
			if (v && cmpxchg(&pm_mf_soft_slots[i], v, 0) == v) {
				*pfn = v - 1;
				return true;
			}
		}
		return false;
	}
	raw_spin_lock_irqsave(&pm_mf_fifo_lock, flags);
	out = kfifo_out(&pm_mf_hard, pfn, 1);
	raw_spin_unlock_irqrestore(&pm_mf_fifo_lock, flags);
	return out;
}

/*
 * ras:memory_failure_event, at the end of every memory_failure() that got
 * as far as a verdict, with mf_mutex held and preemption off.
 */
static void pm_mf_probe(void *data, unsigned long pfn, int type, int result)
{
	if (pm_mf_ours(pfn))
		pm_mf_queue_hard(pfn);
}

/*
 * soft_offline_page(pfn, flags), on entry: see the comment at the top.
 * Preemption off, maybe NMI-like: the reverse map's lookup is RCU, the
 * queue lockless.
 */
static int pm_mf_soft_pre(struct kprobe *kp, struct pt_regs *regs)
{
	unsigned long pfn = regs_get_kernel_argument(regs, 0);

	if (pm_mf_ours(pfn))
		pm_mf_queue_soft(pfn);
	return 0;
}

static void pm_mf_log_add(struct poolmem_memory_error *e)
{
	mutex_lock(&pm_mf_lock);
	e->seq = pm_mf_seq++;
	e->time_ns = ktime_get_real_ns();
	pm_mf_log[e->seq % POOLMEM_MEMORY_ERRORS_KEPT] = *e;
	mutex_unlock(&pm_mf_lock);
}

/*
 * Count an error in @p against its error policy: past the threshold the
 * pool is degraded, takes no new chunks and drains (pm_pool_drain_workfn()).
 * Caller holds pm_lock.
 */
static void pm_pool_error(struct pm_pool *p)
{
	u64 now = ktime_get_boottime_seconds(), oldest;
	u32 n = p->err_limit;

	if (!n || p->degraded)
		return;
	p->err_times[p->err_next % n] = now;
	p->err_next++;
	if (p->err_next < n)
		return;
	oldest = p->err_times[p->err_next % n];	/* the oldest of the last n */
	if (p->err_period_s && now - oldest > p->err_period_s)
		return;
	WRITE_ONCE(p->degraded, true);
	WRITE_ONCE(p->draining, true);
	WRITE_ONCE(pm_pools_draining, pm_pools_draining | BIT_ULL(p->id));
	pm_zerod_kick();	/* a draining pool keeps no zero reserve */
	pr_crit("pool %s: %u memory errors%s: degraded, takes no new chunks; draining %llu MiB\n", p->name, n,
		p->err_period_s ? " within the error policy's period" : "", atomic64_read(&p->allocated) >> 20);
	kobject_get(&p->kobj);
	if (!queue_work(pm_mf_wq, &p->drain_work))
		kobject_put(&p->kobj);
}

/*
 * A degraded pool's drain, as poolctl pool drain does it: call after call
 * until nothing is left, retrying chunks that were busy for up to a minute.
 * Drops the reference pm_pool_error() took.
 */
void pm_pool_drain_workfn(struct work_struct *work)
{
	struct pm_pool *p = container_of(work, struct pm_pool, drain_work);
	struct pm_drain_req a = {};
	unsigned int tries;
	u64 moved = 0;
	int ret;

	for (tries = 0; tries < 60; tries++) {
		bool ours;

		/* still this pool under its name: not removed, nor another made since */
		mutex_lock(&pm_lock);
		ours = pm_pools[p->id] == p;
		mutex_unlock(&pm_lock);
		if (!ours) {
			ret = -ENOENT;
			break;
		}
		memset(&a, 0, sizeof(a));
		ret = pm_pool_drain(p->name, &a);
		moved += a.moved_bytes;
		if (ret || !a.remaining_bytes || !READ_ONCE(p->degraded))
			break;
		msleep(1000);	/* referenced chunks: the next call retries them */
	}
	if (!ret && !a.remaining_bytes)
		pr_warn("pool %s: degraded and drained: %llu MiB moved off, none left; remove it (poolctl pool remove %s)\n",
			p->name, moved >> 20, p->name);
	else
		pr_err("pool %s: degraded, but its drain stopped with %llu MiB left (%d%s%.*s): poolctl pool drain %s\n",
		       p->name, a.remaining_bytes >> 20, ret, a.blocker[0] ? ", domain " : "",
		       POOLMEM_NAME_MAX, a.blocker, p->name);
	kobject_put(&p->kobj);
}

/* Count error @e in its pool (hard, or a soft offline that was done). */
static void pm_mf_count(const struct poolmem_memory_error *e)
{
	struct pm_pool *p;

	mutex_lock(&pm_lock);
	p = pm_node_pool(e->node);
	if (p) {
		atomic64_inc(e->kind == POOLMEM_MEMERR_SOFT ? &p->soft_offlines : &p->mem_errors);
		pm_pool_error(p);
	}
	mutex_unlock(&pm_lock);
}

/*
 * Who holds @pfn: its domain (held: h->inode set) and the unit's slot, and
 * the pool of its node in @e. False when
 * it is in no unit of ours any more (freed: the page allocator keeps a
 * poisoned page out of use itself).
 */
static bool pm_mf_find(unsigned long pfn, bool soft, struct poolmem_memory_error *e, struct pm_held *h,
		       size_t *slot, struct page **unit)
{
	struct pm_domain *ed;
	struct pm_pool *p;

	memset(h, 0, sizeof(*h));
	if (!pm_rmap_first(pfn, pfn, &ed, slot, unit))
		return false;
	e->phys = PFN_PHYS(pfn);
	e->node = page_to_nid(*unit);
	e->kind = soft ? POOLMEM_MEMERR_SOFT : POOLMEM_MEMERR_HARD;
	mutex_lock(&pm_lock);
	p = pm_node_pool(e->node);
	if (p)
		strscpy(e->pool, p->name, sizeof(e->pool));
	/* unlinked but still mapped counts: only eviction stops the hold */
	h->d = pm_rmap_live(ed);
	h->inode = h->d ? pm_domain_hold(h->d) : NULL;
	if (h->inode) {
		strscpy(e->domain, h->d->name, sizeof(e->domain));
		e->domain_id = h->d->id;
		e->offset = ((u64)*slot << PM_UNIT_SHIFT) + PFN_PHYS(pfn - page_to_pfn(*unit));
	}
	mutex_unlock(&pm_lock);
	return true;
}

/*
 * A hard error at @pfn: take the page out of the domain's use (see the top
 * of this file). Process context, no lock held.
 */
static void pm_mf_hard_one(unsigned long pfn)
{
	struct poolmem_memory_error e = { .action = POOLMEM_MEMERR_UNUSED };
	struct page *page = pfn_to_online_page(pfn);
	struct pm_domain *d;
	struct page *unit;
	struct pm_held h;
	size_t slot;

	/* gone offline meanwhile, or cleared again: filtered (hwpoison_filter) or unpoisoned */
	if (!page || !PageHWPoison(page) || !pm_mf_find(pfn, false, &e, &h, &slot, &unit))
		return;
	xa_store(&pm_mf_bad_pfns, pfn, xa_mk_value(1), GFP_KERNEL);	/* best effort */
	d = h.d;
	if (h.inode && slot < d->nr_chunks * d->units_per_chunk) {
		u64 idx = slot / d->units_per_chunk;
		unsigned long pgidx = e.offset >> PAGE_SHIFT;
		void *counted = xa_mk_value(PM_POISON_COUNTED);
		void *old;

		mutex_lock(&d->lock);
		old = xa_load(&d->poison, pgidx);
		if (old == counted) {
			/* memory_failure() again on the same page: said already */
			mutex_unlock(&d->lock);
			pm_domain_release_held(&h);
			return;
		}
		/* READ_ONCE: an allocation fills its slots without d->lock (chunk.c) */
		if (READ_ONCE(d->units[slot]) == unit) {
			/*
			 * In the map, the old units of a move under way (in it
			 * until commit), or a chunk still being allocated,
			 * whose slots fill one by one without d->lock and may
			 * go back if the try fails: nothing maps that one yet,
			 * and it is left alone (a failed try forgets the
			 * record, and its units' free holds this one).
			 */
			bool placing = !d->meta[idx].present || d->meta[idx].busy == PM_BUSY_ALLOC;

			if (xa_err(xa_store(&d->poison, pgidx, counted, GFP_KERNEL))) {
				/* the page is still never mapped (PG_hwpoison), but a move loses that */
				e.action = POOLMEM_MEMERR_FAILED;
			} else {
				e.action = POOLMEM_MEMERR_ISOLATED;
				d->meta[idx].poison = 1;
			}
			d->mem_errors++;
			/*
			 * No PMD may map the unit again: the core maps it page
			 * by page (do_set_pmd() backs off). Unmapped even while
			 * a move is under way: it may not have unmapped it yet,
			 * and may yet fail and leave it in place. A unit that
			 * took over the offset later gets the flag at its first
			 * fault (pm_fault_page()); the fault that completes a
			 * chunk being placed maps it around the record
			 * (pm_poison_at()).
			 */
			SetPageHasHWPoisoned(unit);
			if (!placing)
				pm_units_unmap(d, h.inode, idx, &d->units[idx * d->units_per_chunk]);
		} else if (old) {
			/* a move copied around it already (pm_units_copy()): lost all the same */
			xa_store(&d->poison, pgidx, counted, GFP_KERNEL);
			e.action = POOLMEM_MEMERR_ISOLATED;
			d->mem_errors++;
		}
		mutex_unlock(&d->lock);
	}
	if (h.inode)
		pm_domain_release_held(&h);
	pm_mf_count(&e);
	pm_mf_log_add(&e);
	if (e.action == POOLMEM_MEMERR_UNUSED)
		pr_warn("memory error at PFN %#lx (node %d%s%s): in no domain's use, kept out of use\n", pfn,
			e.node, e.pool[0] ? ", pool " : "", e.pool);
	else
		pr_warn("memory error at PFN %#lx (node %d%s%s): domain %s offset %#llx: %s; an access there gets a memory error (SIGBUS) until the range is discarded\n",
			pfn, e.node, e.pool[0] ? ", pool " : "", e.pool, e.domain, e.offset,
			e.action == POOLMEM_MEMERR_ISOLATED ? "page unmapped, its data lost" :
			"no memory to record it: page unmapped, but a move of its chunk may show zeros there");
}

/*
 * Soft offline of @pfn: move its chunk with its data, then hold the old
 * unit with the page poisoned. Fills @e; returns 0 or an errno
 * (pm_chunk_soft_offline()). Process context, no lock held.
 */
static int pm_mf_soft_one(unsigned long pfn, struct poolmem_memory_error *e)
{
	struct page *page = pfn_to_online_page(pfn);
	struct page *unit;
	struct pm_held h;
	size_t slot;
	int ret;

	/* queued earlier: its memory may have gone offline meanwhile */
	if (!page)
		return -ENOENT;
	if (PageHWPoison(page))
		return 0;	/* as the kernel's soft_offline_page(): nothing to do */
	if (!pm_mf_find(pfn, true, e, &h, &slot, &unit))
		return -ENOENT;
	if (!h.inode)
		return -ENOENT;	/* its domain is being freed: the unit goes with it */
	/* a freed domain's entry whose address a smaller domain now has */
	ret = slot < h.d->nr_chunks * h.d->units_per_chunk ?
		      pm_chunk_soft_offline(h.d, h.inode, slot, unit, pfn) : -ENOENT;
	pm_domain_release_held(&h);
	e->action = ret ? POOLMEM_MEMERR_FAILED : POOLMEM_MEMERR_MOVED;
	if (!ret) {
		xa_store(&pm_mf_bad_pfns, pfn, xa_mk_value(1), GFP_KERNEL);	/* best effort */
		pm_mf_count(e);
	}
	pm_mf_log_add(e);
	if (ret)
		pr_warn("soft offline of PFN %#lx (domain %s offset %#llx): its chunk could not move (%d): page left in use\n",
			pfn, e->domain, e->offset, ret);
	else
		pr_info("soft offline of PFN %#lx (domain %s offset %#llx): chunk moved, nothing lost; page out of use\n",
			pfn, e->domain, e->offset);
	return ret;
}

static void pm_mf_workfn(struct work_struct *work)
{
	unsigned long pfn;
	int lost;

	while (pm_mf_take(false, &pfn))
		pm_mf_hard_one(pfn);
	while (pm_mf_take(true, &pfn)) {
		struct poolmem_memory_error e = {};

		pm_mf_soft_one(pfn, &e);
		/* hard errors come first */
		while (pm_mf_take(false, &pfn))
			pm_mf_hard_one(pfn);
	}
	lost = atomic_xchg(&pm_mf_dropped, 0);
	if (lost)
		pr_err("%d memory error reports came faster than they could be handled and were dropped: their pages are never mapped, but stay mapped where they are\n",
		       lost);
}

/* POOLMEM_MEMORY_ERRORS */
int pm_mf_errors(struct poolmem_memory_errors *a)
{
	struct poolmem_memory_error *buf = NULL;
	u64 first, seq;
	u32 n = 0, i;

	if (a->nr || a->next || a->total || a->reserved[0] || a->reserved[1])
		return -EINVAL;
	if (a->count) {
		buf = kvmalloc_array(min_t(u32, a->count, POOLMEM_MEMORY_ERRORS_KEPT), sizeof(*buf),
				     GFP_KERNEL);
		if (!buf)
			return -ENOMEM;
	}
	mutex_lock(&pm_mf_lock);
	seq = pm_mf_seq;
	first = max_t(u64, a->from, seq > POOLMEM_MEMORY_ERRORS_KEPT ? seq - POOLMEM_MEMORY_ERRORS_KEPT : 0);
	if (first < seq)
		n = min_t(u64, min_t(u32, a->count, POOLMEM_MEMORY_ERRORS_KEPT), seq - first);
	for (i = 0; i < n; i++)
		buf[i] = pm_mf_log[(first + i) % POOLMEM_MEMORY_ERRORS_KEPT];
	mutex_unlock(&pm_mf_lock);
	if (n && copy_to_user(u64_to_user_ptr(a->errors), buf, n * sizeof(*buf))) {
		kvfree(buf);
		return -EFAULT;
	}
	kvfree(buf);
	a->nr = n;
	a->next = n ? first + n : max(a->from, first);
	a->total = seq;
	return 0;
}

/* POOLMEM_PAGE_OFFLINE */
int pm_mf_soft_offline(struct poolmem_page_offline *a)
{
	struct poolmem_memory_error e = {};
	unsigned long pfn = PHYS_PFN(a->phys);
	int ret;

	if (a->reserved32 || a->reserved[0] || a->reserved[1] || a->offset || a->pool ||
	    memchr_inv(a->name, 0, sizeof(a->name)))
		return -EINVAL;
	if (!IS_ENABLED(CONFIG_MEMORY_FAILURE))
		return -EOPNOTSUPP;
	if (!pm_mf_ours(pfn))
		return -ENOENT;
	ret = pm_mf_soft_one(pfn, &e);
	if (ret)
		return ret;
	memcpy(a->name, e.domain, sizeof(a->name));
	a->offset = e.offset;
	a->pool = POOLMEM_POOL_LOCAL;
	if (e.pool[0]) {
		struct pm_pool *p;

		mutex_lock(&pm_lock);
		p = pm_pool_find(e.pool);
		if (p)
			a->pool = p->id;
		mutex_unlock(&pm_lock);
	}
	return 0;
}

static void pm_mf_find_tp(struct tracepoint *tp, void *priv)
{
	if (!strcmp(tp->name, "memory_failure_event"))
		*(struct tracepoint **)priv = tp;
}

int pm_mf_init(void)
{
	int ret;

	pm_mf_wq = alloc_workqueue("poolmem_mf", WQ_UNBOUND, 0);
	if (!pm_mf_wq)
		return -ENOMEM;
	if (!IS_ENABLED(CONFIG_MEMORY_FAILURE))
		return 0;
	for_each_kernel_tracepoint(pm_mf_find_tp, &pm_mf_tp);
	if (!pm_mf_tp) {
		pr_warn("no ras:memory_failure_event tracepoint (CONFIG_RAS off?): memory errors in domain pages stay mapped\n");
	} else {
		ret = tracepoint_probe_register(pm_mf_tp, pm_mf_probe, NULL);
		if (ret) {
			pr_err("memory_failure_event: can't register a probe (%d)\n", ret);
			pm_mf_tp = NULL;
			destroy_workqueue(pm_mf_wq);
			return ret;
		}
	}
	if (pm_soft_offline_hook) {
		pm_mf_kp.pre_handler = pm_mf_soft_pre;
		ret = register_kprobe(&pm_mf_kp);
		if (ret)
			pr_warn("soft_offline_page: no kprobe (%d): soft offline of domain pages only through POOLMEM_PAGE_OFFLINE\n",
				ret);
		pm_mf_kp_on = !ret;
	}
	return 0;
}

void pm_mf_exit(void)
{
	if (pm_mf_kp_on)
		unregister_kprobe(&pm_mf_kp);
	irq_work_sync(&pm_mf_soft_iw);	/* its handler queues the worker */
	if (pm_mf_tp) {
		tracepoint_probe_unregister(pm_mf_tp, pm_mf_probe, NULL);
		tracepoint_synchronize_unregister();
	}
	/*
	 * No probe queues work after this. What was queued runs to the end
	 * (the error worker, and drains it started, each holding its pool):
	 * destroy_workqueue() waits for them.
	 */
	destroy_workqueue(pm_mf_wq);
	xa_destroy(&pm_mf_bad_pfns);
}

/*
 * Did a page in PFNs [@first, @last] take a memory error while it was a
 * domain's? Its first such PFN in @pfn. The memory notifier asks on
 * MEM_GOING_ONLINE.
 */
bool pm_mf_range_poisoned(unsigned long first, unsigned long last, unsigned long *pfn)
{
	unsigned long index = first;

	if (!xa_find(&pm_mf_bad_pfns, &index, last, XA_PRESENT))
		return false;
	*pfn = index;
	return true;
}
