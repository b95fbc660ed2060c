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
 *    access). It also unmaps the chunks of the domain that can't be
 *    pinned and are pinned right now: the pages this same pin took before
 *    the fault are among them (they stay pinned until the round ends), and
 *    mapped they would be pinned again by the retry, which would get its
 *    partial count past the fault and loop as before; unmapped, the retry
 *    faults on its first page and gets nothing.
 *
 *  - A pin of pages that are already mapped (QEMU with prealloc, a buffer
 *    the process wrote first) never faults, so the fault can't see it.
 *    Every PM_PINWATCH_PERIOD, if the kernel took a FOLL_PIN reference on
 *    a node with ZONE_MOVABLE memory since its last look
 *    (NR_FOLL_PIN_ACQUIRED of the node: nothing to do on a host that pins
 *    nothing there), a worker notes the chunks that can't be pinned
 *    and are pinned now, looks again PM_PINWATCH_RELOOK later, and unmaps
 *    those still pinned: a spinning pin holds its pages most of the time,
 *    an O_DIRECT or process_vm_readv pin rarely twice that far apart. The
 *    spinning pin's next round then faults, and fails as above. A short
 *    pin caught twice costs its chunk's users a refault, and nothing else:
 *    the fault maps the chunk again. The looks walk every such chunk of
 *    the domains with chunks on those nodes: on a host busy with O_DIRECT
 *    into domain memory, one walk of their chunk maps per period.
 *
 * Chunks that can be pinned (pinnable domains; local DRAM) never reach
 * either path, and a chunk placed by a fault under PF_MEMALLOC_PIN comes
 * from a kernel zone (the page allocator drops __GFP_MOVABLE and CMA for
 * it), so it can be pinned.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/debugfs.h>
#include <linux/delay.h>
#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/sched.h>
#include <linux/seq_file.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
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

/* Is present chunk @idx in ZONE_MOVABLE and pinned now? Caller holds d->lock. */
static bool pm_chunk_pinned_unpinnable(struct pm_domain *d, u64 idx)
	__must_hold(&d->lock)
{
	struct page **units = &d->units[idx * d->units_per_chunk];
	unsigned int u;

	if (pm_chunk_longterm_ok(d, idx))
		return false;
	for (u = 0; u < d->units_per_chunk; u++)
		if (folio_maybe_dma_pinned(page_folio(units[u])))
			return true;
	return false;
}

/*
 * A fault under FOLL_LONGTERM found chunk @idx of @d (present) in memory
 * that can't be pinned: refuse it, as described above. Caller holds
 * d->lock and the mmap lock.
 */
vm_fault_t pm_fault_longterm(struct pm_domain *d, struct vm_fault *vmf, u64 idx)
	__must_hold(&d->lock)
{
	u64 i;

	pr_warn_ratelimited("domain %s: long-term pin (VFIO, RDMA, io_uring) of offset %#llx by %s[%d] refused: the chunk is in movable memory; make the domain pinnable\n",
			    d->name, idx << d->chunk_shift, current->comm, task_tgid_nr(current));
	for (i = 0; i < d->nr_chunks; i++) {
		/* a multi-TiB domain has a million chunks; d->lock is a mutex */
		if (i % 256 == 255)
			cond_resched();
		if (d->meta[i].present && !d->meta[i].busy && pm_chunk_pinned_unpinnable(d, i))
			pm_chunk_unmap(d, i);
	}
	return VM_FAULT_SIGBUS;
}

/* ---- the watch for pins of pages already mapped ---- */

#define PM_PINWATCH_PERIOD	(HZ / 4)
#define PM_PINWATCH_RELOOK	20	/* ms between the two looks */
#define PM_PINWATCH_MAX		64	/* chunks a domain may have noted per look */

static void pm_pinwatch_fn(struct work_struct *work);
static DECLARE_DELAYED_WORK(pm_pinwatch_work, pm_pinwatch_fn);

/*
 * What the watch costs follows what is pinned where poolmem's unpinnable
 * chunks can be: nodes with ZONE_MOVABLE memory, and on them the kernel's
 * count of FOLL_PIN references taken (NR_FOLL_PIN_ACQUIRED, per node, as
 * the last look left it). A host busy with O_DIRECT into its own page
 * cache or anonymous memory elsewhere costs the watch nothing, and only
 * domains with chunks on a node whose count moved are walked. The watch's
 * own worker alone writes pm_pinwatch_last.
 */
static unsigned long pm_pinwatch_last[MAX_NUMNODES];

static bool pm_pinwatch_any_node;
module_param_named(pinwatch_any_node, pm_pinwatch_any_node, bool, 0644);
MODULE_PARM_DESC(pinwatch_any_node,
		 "The pin watch walks every domain after a pin on any node, as before it looked per node (for comparison; default off)");

/* What the watch did, for debugfs poolmem/pinwatch (bench-pinwatch). */
static atomic64_t pm_pinwatch_looks, pm_pinwatch_walks, pm_pinwatch_chunks, pm_pinwatch_unmaps;

static unsigned long pm_node_pins(int nid)
{
	/* node_page_state() is not exported; this is its read, less the per-CPU deltas */
	return atomic_long_read(&NODE_DATA(nid)->vm_stat[NR_FOLL_PIN_ACQUIRED]);
}

/* The movable nodes whose pin count moved since the last look, in @changed. */
static bool pm_pinwatch_changed(nodemask_t *changed)
{
	int nid;

	nodes_clear(*changed);
	for_each_node_state(nid, N_MEMORY)
		if (pm_node_pins(nid) != pm_pinwatch_last[nid] &&
		    (READ_ONCE(pm_pinwatch_any_node) || populated_zone(&NODE_DATA(nid)->node_zones[ZONE_MOVABLE])))
			node_set(nid, *changed);
	if (READ_ONCE(pm_pinwatch_any_node) && !nodes_empty(*changed))
		nodes_setall(*changed);
	return !nodes_empty(*changed);
}

static void pm_pinwatch_mark(void)
{
	int nid;

	for_each_node_state(nid, N_MEMORY)
		pm_pinwatch_last[nid] = pm_node_pins(nid);
}

/* May @d have chunks on a node of @nodes? Caller holds pm_lock (pm_pools[]). */
static bool pm_domain_on(struct pm_domain *d, const nodemask_t *nodes)
{
	unsigned int i;

	if (d->home_node >= 0 && node_isset(d->home_node, *nodes) && READ_ONCE(d->usage[PM_TIER_LOCAL]))
		return true;
	for (i = 0; i < POOLMEM_MAX_POOLS; i++)
		if (pm_pools[i] && node_isset(pm_pools[i]->node, *nodes) && READ_ONCE(d->chunks_per_pool[i]))
			return true;
	return false;
}

/* A domain held by the watch, and the chunks its first look noted. */
struct pm_pinwatch {
	struct pm_held h;
	unsigned int n;
	u64 idx[PM_PINWATCH_MAX];
};

/* First look: note @w's chunks that can't be pinned and are pinned now. */
static void pm_pinwatch_note(struct pm_pinwatch *w)
{
	struct pm_domain *d = w->h.d;
	u64 idx;

	w->n = 0;
	atomic64_inc(&pm_pinwatch_walks);
	mutex_lock(&d->lock);
	for (idx = 0; idx < d->nr_chunks && w->n < PM_PINWATCH_MAX; idx++) {
		if (idx % 256 == 255) {
			mutex_unlock(&d->lock);
			cond_resched();
			mutex_lock(&d->lock);
		}
		if (!d->meta[idx].present || d->meta[idx].busy)
			continue;
		atomic64_inc(&pm_pinwatch_chunks);
		if (pm_chunk_pinned_unpinnable(d, idx))
			w->idx[w->n++] = idx;
	}
	mutex_unlock(&d->lock);
}

/* Second look: unmap the noted chunks still pinned. Returns how many. */
static unsigned int pm_pinwatch_unmap(struct pm_pinwatch *w)
{
	struct pm_domain *d = w->h.d;
	unsigned int i, n = 0;

	mutex_lock(&d->lock);
	for (i = 0; i < w->n; i++) {
		u64 idx = w->idx[i];

		if (d->meta[idx].present && !d->meta[idx].busy && pm_chunk_pinned_unpinnable(d, idx)) {
			pm_chunk_unmap(d, idx);
			n++;
		}
	}
	mutex_unlock(&d->lock);
	return n;
}

static void pm_pinwatch_fn(struct work_struct *work)
{
	struct pm_pinwatch *w = NULL;
	unsigned int nr = 0, max = 0, i, noted = 0, found = 0;
	struct pm_domain *d;
	nodemask_t changed;

	atomic64_inc(&pm_pinwatch_looks);
	if (!pm_pinwatch_changed(&changed))
		goto out;
	mutex_lock(&pm_lock);
	list_for_each_entry(d, &pm_domains, list)
		if (!d->pinnable && READ_ONCE(d->chunks) && pm_domain_on(d, &changed))
			max++;
	w = max ? kvmalloc_array(max, sizeof(*w), GFP_KERNEL) : NULL;
	list_for_each_entry(d, &pm_domains, list) {
		if (!w || nr == max || d->pinnable || !READ_ONCE(d->chunks) || !pm_domain_on(d, &changed))
			continue;
		w[nr].h.inode = pm_domain_hold(d);
		if (w[nr].h.inode)
			w[nr++].h.d = d;
	}
	mutex_unlock(&pm_lock);
	for (i = 0; i < nr; i++) {
		pm_pinwatch_note(&w[i]);
		noted += w[i].n;
	}
	if (noted)
		msleep(PM_PINWATCH_RELOOK);
	for (i = 0; i < nr; i++) {
		if (w[i].n)
			found += pm_pinwatch_unmap(&w[i]);
		pm_domain_release_held(&w[i].h);
	}
	kvfree(w);
	atomic64_add(found, &pm_pinwatch_unmaps);
	if (found)
		pr_info_ratelimited("%u chunks in movable memory stayed pinned for %u ms: unmapped, so that a long-term pin of them fails\n",
				    found, PM_PINWATCH_RELOOK);
out:
	pm_pinwatch_mark();
	queue_delayed_work(system_unbound_wq, &pm_pinwatch_work, PM_PINWATCH_PERIOD);
}

void pm_pinwatch_start(void)
{
	pm_pinwatch_mark();
	queue_delayed_work(system_unbound_wq, &pm_pinwatch_work, PM_PINWATCH_PERIOD);
}

static int pm_pinwatch_show(struct seq_file *m, void *v)
{
	seq_printf(m, "looks %lld\nwalks %lld\nchunks %lld\nunmaps %lld\n",
		   (long long)atomic64_read(&pm_pinwatch_looks), (long long)atomic64_read(&pm_pinwatch_walks),
		   (long long)atomic64_read(&pm_pinwatch_chunks), (long long)atomic64_read(&pm_pinwatch_unmaps));
	return 0;
}
DEFINE_SHOW_ATTRIBUTE(pm_pinwatch);

/*
 * debugfs poolmem/pinwatch: the watch's looks (every PM_PINWATCH_PERIOD),
 * domain walks, chunks looked at and chunks unmapped, cumulative.
 */
void pm_pinwatch_debugfs(struct dentry *dir)
{
	debugfs_create_file("pinwatch", 0400, dir, NULL, &pm_pinwatch_fops);
}

void pm_pinwatch_stop(void)
{
	cancel_delayed_work_sync(&pm_pinwatch_work);
}
