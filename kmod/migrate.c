// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem chunk migration: moving a live chunk to another node while its
 * VM runs, and what is built on it: pool drain (POOLMEM_POOL_DRAIN) and
 * live changes of a domain's quotas and pools (POOLMEM_DOMAIN_SET).
 *
 * The kernel can't move these pages for us. They are not on the LRU, and
 * Linux 6.1's migration core never unmaps non-LRU movable pages from user
 * page tables (migrate_pages() hands them to ->migrate_page() while they
 * are still mapped), so movable_operations would copy memory that a vCPU
 * keeps writing. poolmem owns the pages and every mapping of them (they
 * are all mappings of the domain's file), so it moves them itself:
 *
 * 1. reserve the destination: a chunk changing tiers is charged to its new
 *    tier before anything else (within that tier's quota), so a quota holds
 *    at every instant; allocate the destination units (not zeroed: every
 *    byte is copied over before anyone can see them);
 * 2. mark the chunk busy (faults and discards of it wait, pm_fault_busy()),
 *    then unmap it from every mapping of the file: unmap_mapping_range()
 *    fires the mmu notifiers, so KVM's EPT/NPT entries go as well;
 * 3. page_ref_freeze(unit, 1) proves that nobody else holds a unit: with
 *    no mapping left and busy keeping faults out, only get_user_pages
 *    references taken before the unmap can remain. Short-lived ones
 *    (O_DIRECT, vhost, KVM's own gup) are waited for briefly, then the move
 *    is put off (-EAGAIN) and the chunk mapped again on demand; long-term
 *    pins (FOLL_PIN: VFIO, RDMA, io_uring fixed buffers) refuse it (-EBUSY);
 * 4. copy with copy_mc_to_kernel(), so that an uncorrectable error in the
 *    source aborts the move (-EIO) instead of taking the host down;
 * 5. swap the units in the chunk map under d->lock, move the charge, free
 *    the old units and wake the waiters.
 *
 * The chunk is unmapped from step 2 to step 5: a vCPU touching it waits
 * for one copy of the chunk (see Documentation/performance.md).
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

/*
 * page_ref_freeze() attempts before a move is put off (-EAGAIN), with
 * sleeps doubling from usleep_range(50, 100) between them: 3 sleeps,
 * 0.35-0.7 ms in all ...
 */
#define PM_MOVE_FREEZE_TRIES	4
/* ... and before a pinned chunk is taken for long-term pinned: 7 sleeps, 6.35-12.7 ms */
#define PM_MOVE_PIN_TRIES	8
/* a revoke outwaits a short-lived reference for about this many 10 ms sleeps */
#define PM_REVOKE_TRIES		10

/*
 * Move latency, as a vCPU sees it (debugfs poolmem/move_latency, for
 * make bench): the last PM_LAT_SAMPLES copies of one unit and waits of a
 * fault on a busy chunk, in ns. Reading prints their percentiles and sum; writing
 * anything clears both. Recording takes no lock: a slot is claimed with
 * atomic_inc_return() and the u64 stored with WRITE_ONCE(); a reader racing
 * with a writer may count a slot whose sample is not stored yet (it reads
 * 0 or the old sample), and a clear racing with writers may keep or lose a
 * sample. Both only blur a benchmark figure, never a decision: nothing in
 * the module reads these samples.
 */
#define PM_LAT_SAMPLES		4096

struct pm_lat {
	atomic_t n;			/* samples stored since the last clear */
	u64 ns[PM_LAT_SAMPLES];		/* ring: sample k in slot k % PM_LAT_SAMPLES */
};

static struct pm_lat pm_lat_copy, pm_lat_wait;

static void pm_lat_add(struct pm_lat *l, u64 ns)
{
	unsigned int i = (unsigned int)atomic_inc_return(&l->n) - 1;

	WRITE_ONCE(l->ns[i % PM_LAT_SAMPLES], ns);
}

/* a fault waited @ns for a chunk being moved (file.c) */
void pm_move_wait_done(u64 ns)
{
	pm_lat_add(&pm_lat_wait, ns);
}

static int pm_lat_cmp(const void *a, const void *b)
{
	u64 x = *(const u64 *)a, y = *(const u64 *)b;

	return x < y ? -1 : x > y;
}

static void pm_lat_show_one(struct seq_file *m, const char *what, struct pm_lat *l, u64 *buf)
{
	unsigned int n = min_t(unsigned int, (unsigned int)atomic_read(&l->n), PM_LAT_SAMPLES), i;
	u64 sum = 0;

	for (i = 0; i < n; i++) {
		buf[i] = READ_ONCE(l->ns[i]);
		sum += buf[i];
	}
	sort(buf, n, sizeof(*buf), pm_lat_cmp, NULL);
	seq_printf(m, "%s %u", what, n);
	if (n)
		seq_printf(m, " p50 %llu p90 %llu p99 %llu max %llu sum %llu", buf[n / 2],
			   buf[n * 9 / 10], buf[n * 99 / 100], buf[n - 1], sum);
	seq_putc(m, '\n');
}

static int pm_lat_show(struct seq_file *m, void *v)
{
	u64 *buf = kvmalloc_array(PM_LAT_SAMPLES, sizeof(*buf), GFP_KERNEL);

	if (!buf)
		return -ENOMEM;
	pm_lat_show_one(m, "copy_unit_ns", &pm_lat_copy, buf);
	pm_lat_show_one(m, "fault_wait_ns", &pm_lat_wait, buf);
	kvfree(buf);
	return 0;
}

static int pm_lat_open(struct inode *inode, struct file *file)
{
	return single_open(file, pm_lat_show, NULL);
}

static ssize_t pm_lat_write(struct file *file, const char __user *buf, size_t len, loff_t *pos)
{
	atomic_set(&pm_lat_copy.n, 0);
	atomic_set(&pm_lat_wait.n, 0);
	return len;
}

static const struct file_operations pm_lat_fops = {
	.owner = THIS_MODULE,
	.open = pm_lat_open,
	.read = seq_read,
	.llseek = seq_lseek,
	.write = pm_lat_write,
	.release = single_release,
};

void pm_move_debugfs(struct dentry *dir)
{
	debugfs_create_file("move_latency", 0600, dir, NULL, &pm_lat_fops);
}

static bool pm_units_freeze(struct page **units, unsigned int nr)
{
	unsigned int u;

	for (u = 0; u < nr; u++) {
		if (!page_ref_freeze(units[u], 1)) {
			while (u--)
				page_ref_unfreeze(units[u], 1);
			return false;
		}
	}
	return true;
}

static void pm_units_unfreeze(struct page **units, unsigned int nr)
{
	unsigned int u;

	for (u = 0; u < nr; u++)
		page_ref_unfreeze(units[u], 1);
}

/* A long-term (FOLL_PIN) pin on a unit: it will not go away soon. */
static bool pm_units_pinned(struct page **units, unsigned int nr)
{
	unsigned int u;

	for (u = 0; u < nr; u++)
		if (folio_maybe_dma_pinned(page_folio(units[u])))
			return true;
	return false;
}

/*
 * Copy units @src of chunk @idx of @d to @dst; -EIO on an uncorrectable
 * memory error in @src, -ENOMEM when a lost page can't be recorded. Pages
 * lost to memory errors are not copied: a poisoned page (PG_hwpoison:
 * memory_failure() was here, maybe before mf.c heard of it) is recorded
 * lost now, and a recorded one gets zeros in its place, which no fault
 * maps (pm_poison_at()). Without highmem a clean unit is contiguous in the
 * direct map: one copy_mc_to_kernel() of 2 MiB (its fast string copy)
 * instead of 512. The chunk is busy: the records only grow meanwhile.
 */
static int pm_units_copy(struct pm_domain *d, u64 idx, struct page **dst, struct page **src,
			 unsigned int nr)
{
	u64 off = idx << d->chunk_shift;
	unsigned int u, i;

	for (u = 0; u < nr; u++, off += PM_UNIT_BYTES) {
		bool bad = pm_unit_poisoned(src[u]) || pm_poison_in(d, off, PM_UNIT_BYTES);

		if (!bad && !IS_ENABLED(CONFIG_HIGHMEM)) {
			u64 t0 = ktime_get_ns();

			unsigned long left = copy_mc_to_kernel(page_address(dst[u]), page_address(src[u]),
							       PM_UNIT_BYTES);

			if (left)
				return pm_page_mc_failed(src[u] + ((PM_UNIT_BYTES - left) >> PAGE_SHIFT));
			pm_lat_add(&pm_lat_copy, ktime_get_ns() - t0);
			cond_resched();
			continue;
		}
		for (i = 0; i < PM_UNIT_PAGES; i++) {
			unsigned long pgidx = (off >> PAGE_SHIFT) + i;
			unsigned long left;
			void *to, *from;

			if (bad && (PageHWPoison(src[u] + i) || xa_load(&d->poison, pgidx))) {
				/* mf.c counts it when memory_failure()'s verdict reaches it */
				if (xa_err(xa_cmpxchg(&d->poison, pgidx, NULL, xa_mk_value(PM_POISON_SEEN),
						      GFP_KERNEL)))
					return -ENOMEM;
				clear_highpage(dst[u] + i);
				continue;
			}
			to = kmap_local_page(dst[u] + i);
			from = kmap_local_page(src[u] + i);
			left = copy_mc_to_kernel(to, from, PAGE_SIZE);
			kunmap_local(from);
			kunmap_local(to);
			if (left)
				return pm_page_mc_failed(src[u] + i);
		}
		cond_resched();
	}
	return 0;
}

/* Is @pfn in one of @units? */
static bool pm_units_have(struct page **units, unsigned int nr, unsigned long pfn)
{
	unsigned int u;

	for (u = 0; u < nr; u++)
		if (pfn - page_to_pfn(units[u]) < PM_UNIT_PAGES)
			return true;
	return false;
}

/* One chunk's move: where from, where to, its old and new units. */
struct pm_move {
	u64 idx;
	bool stay;			/* an offline's: the source's pool (last) or node may take it */
	u32 src_tier, tier;
	struct pm_pool *src, *dst;	/* NULL: local */
	unsigned int n;			/* candidate pools in ids[] */
	u8 ids[POOLMEM_MAX_POOLS];
	struct page **old, **new;	/* units_per_chunk each */
	unsigned long retire_pfn;	/* a soft offline's page: poisoned once moved off */
};

/*
 * Take chunk @m->idx, found on pool @from (PM_POOL_NONE: the local tier),
 * for a move to tier @tier: mark it busy and pick the destination pools
 * (for the pool tier: the domain's pool selection, its own pool and
 * draining pools excluded). Quotas are the caller's. Caller holds d->lock.
 * Returns 0, -ENOENT (not there to move: absent, elsewhere, or local to
 * local), -EINPROGRESS (busy: being placed or moved by someone else) or
 * -ENOMEM (no pool to go to).
 */
static int pm_move_begin(struct pm_domain *d, struct pm_move *m, u8 from, u32 tier)
	__must_hold(&d->lock)
{
	struct pm_chunk_meta *meta = &d->meta[m->idx];

	if (!meta->present || meta->pool != from)
		return -ENOENT;
	if (meta->busy)
		return -EINPROGRESS;
	m->src_tier = meta->tier;
	m->src = pm_chunk_pool(d, m->idx);
	/* revoked memory may be another host's: never copied to a tenant */
	if (m->src && READ_ONCE(m->src->revoked))
		return -ENOENT;
	m->tier = tier;
	m->dst = NULL;
	m->n = 1;
	if (tier == PM_TIER_POOL) {
		unsigned int i;

		m->n = pm_pool_candidates(d, m->src && !m->stay ? ~BIT_ULL(m->src->id) : ~0ULL, m->ids);
		if (!m->n)
			return -ENOMEM;
		/*
		 * Staying (an offline): the chunk's own pool last. Tools
		 * offline a device block by block, and the next block is
		 * likely the one a chunk would go to: each would be copied
		 * once per block. Its own pool (other blocks of its node)
		 * takes it only when no other pool can.
		 */
		for (i = 0; m->stay && m->src && i + 1 < m->n; i++) {
			if (m->ids[i] == m->src->id) {
				memmove(&m->ids[i], &m->ids[i + 1], m->n - i - 1);
				m->ids[m->n - 1] = m->src->id;
				break;
			}
		}
	} else if (m->src_tier == PM_TIER_LOCAL && !m->stay) {
		return -ENOENT;
	}
	pm_chunk_busy(d, m->idx, PM_BUSY_MOVE);
	memcpy(m->old, &d->units[m->idx * d->units_per_chunk], d->units_per_chunk * sizeof(*m->old));
	return 0;
}

/* Allocate the destination units (d->lock not held). 0 or -ENOMEM. */
static int pm_move_alloc(struct pm_domain *d, struct pm_move *m)
{
	size_t first = m->idx * d->units_per_chunk;
	unsigned int i;
	int ret = -ENOMEM;

	/* an offline waits on it: reclaim in earnest, as offline_pages() does */
	unsigned int flags = m->stay ? PM_ALLOC_RETRY : 0;

	if (m->tier == PM_TIER_LOCAL)
		return pm_units_alloc(d, first, d->home_node, m->new, flags | PM_ALLOC_LOCAL);
	for (i = 0; i < m->n && ret; i++) {
		/* registered while in pool_mask and the chunk is busy */
		m->dst = pm_pools[m->ids[i]];
		ret = pm_units_alloc(d, first, m->dst->node, m->new, flags);
		if (ret)
			atomic64_inc(&m->dst->failures);
	}
	return ret;
}

/*
 * Freeze the units of the (unmapped) chunk, after pm_move_freeze() unmaps
 * it, or after a run's unmap: 0 when nobody else holds them,
 * -EBUSY when one is long-term pinned, -EAGAIN when short-lived references
 * stayed. On failure the units are not frozen.
 */
static int pm_move_hold(struct pm_domain *d, struct pm_move *m)
{
	unsigned int try;

	for (try = 0; !pm_units_freeze(m->old, d->units_per_chunk); try++) {
		/*
		 * A FOLL_PIN pin carries no mark of being long-term: a
		 * process_vm_readv() or O_DIRECT pin is as much a pin as a
		 * VFIO one. A pin still there after 6-13 ms of retries is
		 * taken for long-term.
		 */
		bool pinned = pm_units_pinned(m->old, d->units_per_chunk);

		if (try + 1 >= (pinned ? PM_MOVE_PIN_TRIES : PM_MOVE_FREEZE_TRIES))
			return pinned ? -EBUSY : -EAGAIN;
		usleep_range(50 << try, 100 << try);
	}
	return 0;
}

static int pm_move_freeze(struct pm_domain *d, struct inode *inode, struct pm_move *m)
{
	/* out of every page table (and KVM's, by the mmu notifiers) */
	pm_units_unmap(d, inode, m->idx, m->old);
	return pm_move_hold(d, m);
}

/*
 * The chunk's new units take the old ones' place in the map, and its
 * charge moves from pool to pool (tier usage is the caller's). Caller
 * holds d->lock; the old units are the caller's to free after.
 */
static void pm_move_commit(struct pm_domain *d, struct pm_move *m)
	__must_hold(&d->lock)
{
	struct pm_chunk_meta *meta = &d->meta[m->idx];

	memcpy(&d->units[m->idx * d->units_per_chunk], m->new, d->units_per_chunk * sizeof(*m->new));
	if (m->src) {
		d->chunks_per_pool[m->src->id]--;
		atomic64_sub(d->chunk_bytes, &m->src->allocated);
		atomic64_dec(&m->src->chunks);
		atomic64_inc(&m->src->moved_out);
		atomic64_add(d->chunk_bytes, &m->src->moved_bytes);
		if (m->tier == PM_TIER_LOCAL)
			atomic64_inc(&m->src->promotions);
	}
	if (m->dst) {
		d->chunks_per_pool[m->dst->id]++;
		atomic64_add(d->chunk_bytes, &m->dst->allocated);
		atomic64_inc(&m->dst->chunks);
		atomic64_inc(&m->dst->moved_in);
		atomic64_add(d->chunk_bytes, &m->dst->moved_bytes);
		if (m->src_tier == PM_TIER_LOCAL)
			atomic64_inc(&m->dst->demotions);
	}
	meta->tier = m->tier;
	meta->pool = m->dst ? m->dst->id : PM_POOL_NONE;
	/* the copy found a poisoned page nobody had recorded yet */
	if (!meta->poison && pm_poison_in(d, m->idx << d->chunk_shift, d->chunk_bytes))
		meta->poison = 1;
	d->moves++;
	pm_chunk_unbusy(d, m->idx);
}

/* Count a failed move's cause; the chunk stays where it was. Caller holds d->lock. */
static void pm_move_abort(struct pm_domain *d, struct pm_move *m, int ret)
	__must_hold(&d->lock)
{
	if (ret == -EAGAIN) {
		d->move_retries++;
		if (m->src)
			atomic64_inc(&m->src->move_retries);
	} else if (ret == -EBUSY) {
		d->move_pins++;
		if (m->src)
			atomic64_inc(&m->src->move_pins);
	}
	/* a copy that found a poisoned page before it failed recorded it */
	if (!d->meta[m->idx].poison && pm_poison_in(d, m->idx << d->chunk_shift, d->chunk_bytes))
		d->meta[m->idx].poison = 1;
	/* unmapped or not, the chunk is intact where it was: faults map it again */
	pm_chunk_unbusy(d, m->idx);
}

static struct page **pm_move_arrays(struct pm_domain *d, struct pm_move *m, unsigned int nr)
{
	struct page **a = kmalloc_array(2 * nr * d->units_per_chunk, sizeof(*a), GFP_KERNEL);
	unsigned int i;

	for (i = 0; a && i < nr; i++) {
		m[i].old = a + 2 * i * d->units_per_chunk;
		m[i].new = m[i].old + d->units_per_chunk;
	}
	return a;
}

/*
 * Move present chunk @idx of @d, found on pool @from (PM_POOL_NONE: the
 * local tier), to tier @tier: for the pool tier, to the best pool of the
 * domain's pool selection other than its own (draining pools excluded);
 * for the local tier, to the home node. @inode is the domain's file, held
 * by the caller. Process context, d->lock not held.
 *
 * Returns 0 when moved; -ENOENT when the chunk is not there to move
 * (absent or elsewhere); -EINPROGRESS when it is busy (someone else is
 * at it); -ENOSPC when @tier
 * has no quota left; -ENOMEM when no allowed node can supply it; -EAGAIN
 * when short-lived references kept it (try later); -EBUSY when it is
 * long-term pinned; -EIO on a memory error in it.
 */
static int pm_chunk_move_how(struct pm_domain *d, struct inode *inode, u64 idx, u8 from, u32 tier,
			     bool stay, unsigned long retire_pfn)
{
	struct pm_move m = { .idx = idx, .stay = stay, .retire_pfn = retire_pfn };
	struct page **arrays;
	bool cross;
	int ret;

	arrays = pm_move_arrays(d, &m, 1);
	if (!arrays)
		return -ENOMEM;

	/* 1. reserve the destination in its tier, mark busy */
	mutex_lock(&d->lock);
	ret = pm_move_begin(d, &m, from, tier);
	if (ret)
		goto out_unlock;
	/* a soft offline's page must still be in this chunk (not moved meanwhile) */
	if (retire_pfn && !pm_units_have(m.old, d->units_per_chunk, retire_pfn)) {
		pm_chunk_unbusy(d, idx);
		ret = -ENOENT;
		goto out_unlock;
	}
	cross = tier != m.src_tier;
	if (cross && d->usage[tier] + d->chunk_bytes > d->quota[tier]) {
		pm_chunk_unbusy(d, idx);
		ret = -ENOSPC;
		goto out_unlock;
	}
	if (cross)
		d->usage[tier] += d->chunk_bytes;
	mutex_unlock(&d->lock);

	ret = pm_move_alloc(d, &m);
	if (ret)
		goto out_abort;
	/* 2., 3. unmap; nobody else may hold a unit */
	ret = pm_move_freeze(d, inode, &m);
	if (ret)
		goto out_free_new;
	/* 4. copy, stopping at a poisoned line */
	ret = pm_units_copy(d, idx, m.new, m.old, d->units_per_chunk);
	if (ret) {
		pm_units_unfreeze(m.old, d->units_per_chunk);
		goto out_free_new;
	}
	/* 5. swap; the map and the charge change together under d->lock */
	mutex_lock(&d->lock);
	if (cross) {
		d->usage[m.src_tier] -= d->chunk_bytes;	/* the new tier was charged in 1. */
		pm_quota_settle(d, m.src_tier);
	}
	pm_move_commit(d, &m);
	mutex_unlock(&d->lock);
	/* soft offline: the page leaves use with its unit (pm_unit_put()) */
	if (m.retire_pfn)
		SetPageHWPoison(pfn_to_page(m.retire_pfn));
	/* frozen at 0: back to our one reference, and drop it */
	pm_units_unfreeze(m.old, d->units_per_chunk);
	pm_units_free(m.old, d->units_per_chunk);
	kfree(arrays);
	return 0;

out_free_new:
	pm_units_free(m.new, d->units_per_chunk);
out_abort:
	mutex_lock(&d->lock);
	if (cross) {
		/* as in placement: a shrunk tier keeps no room for it */
		d->usage[tier] -= d->chunk_bytes;
		pm_quota_settle(d, tier);
	}
	pm_move_abort(d, &m, ret);
out_unlock:
	mutex_unlock(&d->lock);
	kfree(arrays);
	return ret;
}

int pm_chunk_move(struct pm_domain *d, struct inode *inode, u64 idx, u8 from, u32 tier)
{
	return pm_chunk_move_how(d, inode, idx, from, tier, false, 0);
}

#define PM_MOVE_RUN	16	/* most chunks of a run: one unmap, one TLB flush */

/*
 * Chunks a drain moves per unmap (1..PM_MOVE_RUN). More means fewer TLB
 * flushes and mmu-notifier rounds, and a longer wait for a vCPU that
 * touches the last chunk of a run (it waits for the copies before it).
 */
static unsigned int pm_drain_batch = 2;
PM_PARAM_UINT_RANGE(drain_batch, pm_drain_batch, 1, PM_MOVE_RUN, 0644);
MODULE_PARM_DESC(drain_batch, "Chunks a drain unmaps at once, 1..16 (default 2): fewer TLB flushes vs a longer stall");

/*
 * Move chunks @idx .. @idx + @n - 1 of @d (@n <= PM_MOVE_RUN), found on
 * pool @from, to other pools of the domain, as pm_chunk_move() would one
 * by one, but with a single unmap_mapping_range() over the run: one mmu
 * notifier invalidation and one TLB flush for all of them instead of one
 * per chunk (6.1's own migration flushes per page). Chunks of the span
 * that are not moved (elsewhere, busy) are unmapped too and fault back in.
 * @res[i] gets each chunk's result, as pm_chunk_move() returns it.
 */
static void pm_chunks_move_run(struct pm_domain *d, struct inode *inode, u64 idx, unsigned int n,
			       u8 from, int *res)
{
	bool began[PM_MOVE_RUN], got[PM_MOVE_RUN];	/* busy; destination allocated */
	unsigned int upc = d->units_per_chunk, i, u, lo = n, hi = 0;
	struct page **arrays = NULL;
	struct pm_move *m;

	m = kcalloc(n, sizeof(*m), GFP_KERNEL);
	if (m)
		arrays = pm_move_arrays(d, m, n);
	for (i = 0; i < n; i++) {
		res[i] = arrays ? 0 : -ENOMEM;
		began[i] = got[i] = false;
	}
	if (!arrays) {
		kfree(m);
		return;
	}
	mutex_lock(&d->lock);
	for (i = 0; i < n; i++) {
		m[i].idx = idx + i;
		res[i] = pm_move_begin(d, &m[i], from, PM_TIER_POOL);
		began[i] = !res[i];
	}
	mutex_unlock(&d->lock);
	for (i = 0; i < n; i++) {
		if (began[i])
			res[i] = pm_move_alloc(d, &m[i]);
		got[i] = began[i] && !res[i];
		if (!res[i]) {
			lo = min(lo, i);
			hi = i;
		}
	}

	/* one unmap for the run: the page locks wait out PMD installs, as in pm_units_unmap() */
	if (lo <= hi) {
		for (i = lo; i <= hi; i++)
			for (u = 0; !res[i] && u < upc; u++)
				lock_page(m[i].old[u]);
		unmap_mapping_range(inode->i_mapping, (idx + lo) << d->chunk_shift,
				    (u64)(hi - lo + 1) << d->chunk_shift, 1);
		for (i = lo; i <= hi; i++)
			for (u = 0; !res[i] && u < upc; u++)
				unlock_page(m[i].old[u]);
	}
	/*
	 * Each chunk is switched and its waiters woken as soon as it is
	 * copied: a vCPU waits for the copies up to its chunk's, not for
	 * the whole run.
	 */
	for (i = 0; i < n; i++) {
		if (!res[i]) {
			res[i] = pm_move_hold(d, &m[i]);
			if (!res[i]) {
				res[i] = pm_units_copy(d, m[i].idx, m[i].new, m[i].old, upc);
				if (res[i])
					pm_units_unfreeze(m[i].old, upc);
			}
		}
		if (!began[i])
			continue;
		mutex_lock(&d->lock);
		if (!res[i])
			pm_move_commit(d, &m[i]);
		else
			pm_move_abort(d, &m[i], res[i]);
		mutex_unlock(&d->lock);
		if (!res[i]) {
			pm_units_unfreeze(m[i].old, upc);
			pm_units_free(m[i].old, upc);
		} else if (got[i]) {
			pm_units_free(m[i].new, upc);	/* referenced, pinned, or a memory error */
		}
	}
	kfree(arrays);
	kfree(m);
}

/*
 * Exchange local chunk @lidx with pool chunk @pidx (found on pool @from):
 * the first goes to the pool tier, the second to the home node, and both
 * tiers' usage stays as it is, so this works when both quotas are full (a
 * move would need room in one of them). Both chunks are busy and unmapped
 * for the time of two copies. Returns as pm_chunk_move() does.
 */
int pm_chunk_exchange(struct pm_domain *d, struct inode *inode, u64 lidx, u64 pidx, u8 from)
{
	struct pm_move m[2] = { { .idx = lidx }, { .idx = pidx } };
	unsigned int upc = d->units_per_chunk, i;
	struct page **arrays;
	int ret;

	if (lidx == pidx)
		return -EINVAL;
	arrays = pm_move_arrays(d, m, 2);
	if (!arrays)
		return -ENOMEM;
	mutex_lock(&d->lock);
	ret = pm_move_begin(d, &m[0], PM_POOL_NONE, PM_TIER_POOL);
	if (ret)
		goto out_unlock;
	ret = pm_move_begin(d, &m[1], from, PM_TIER_LOCAL);
	if (ret) {
		pm_chunk_unbusy(d, lidx);
		goto out_unlock;
	}
	mutex_unlock(&d->lock);

	ret = pm_move_alloc(d, &m[0]);
	if (ret)
		goto out_abort;
	ret = pm_move_alloc(d, &m[1]);
	if (ret)
		goto out_free0;
	ret = pm_move_freeze(d, inode, &m[0]);
	if (ret)
		goto out_free1;
	ret = pm_move_freeze(d, inode, &m[1]);
	if (ret)
		goto out_unfreeze0;
	ret = pm_units_copy(d, lidx, m[0].new, m[0].old, upc) ?:
	      pm_units_copy(d, pidx, m[1].new, m[1].old, upc);
	if (ret)
		goto out_unfreeze1;
	mutex_lock(&d->lock);
	pm_move_commit(d, &m[0]);
	pm_move_commit(d, &m[1]);
	mutex_unlock(&d->lock);
	for (i = 0; i < 2; i++) {
		pm_units_unfreeze(m[i].old, upc);
		pm_units_free(m[i].old, upc);
	}
	kfree(arrays);
	return 0;

out_unfreeze1:
	pm_units_unfreeze(m[1].old, upc);
out_unfreeze0:
	pm_units_unfreeze(m[0].old, upc);
out_free1:
	pm_units_free(m[1].new, upc);
out_free0:
	pm_units_free(m[0].new, upc);
out_abort:
	mutex_lock(&d->lock);
	pm_move_abort(d, &m[0], ret);
	pm_move_abort(d, &m[1], ret);
out_unlock:
	mutex_unlock(&d->lock);
	kfree(arrays);
	return ret;
}

/* A domain with its file held, for work done with pm_lock dropped. */

/*
 * Drain pre-check, under pm_lock: every domain's chunks on @p must fit in
 * its other pools' free memory, or, with POOLMEM_DRAIN_ALLOW_LOCAL, in what
 * is left of its local quota (and its home node's free memory); all of
 * them together must fit the free memory of every pool they may go to.
 * A pool-to-pool move keeps the chunk in the pool tier, so pool quotas do
 * not change. Logs a line per domain that doesn't fit; fills the first.
 */
static int pm_drain_check(struct pm_pool *p, struct poolmem_pool_drain *a)
{
	u64 need_all = 0, local_all = 0, others = 0;
	struct pm_domain *d;
	int ret = 0;

	list_for_each_entry(d, &pm_domains, list) {
		u64 need, room, local = 0, mask;

		mutex_lock(&d->lock);
		need = d->chunks_per_pool[p->id] * d->chunk_bytes;
		mask = d->pool_mask & ~BIT_ULL(p->id);
		if (a->flags & POOLMEM_DRAIN_ALLOW_LOCAL && !d->znuma)
			local = min(d->quota[PM_TIER_LOCAL] - d->usage[PM_TIER_LOCAL],
				    pm_node_free_bytes(d->home_node));
		mutex_unlock(&d->lock);
		if (!need)
			continue;
		room = pm_pools_free(mask);
		need_all += need;
		local_all += min(need, local);
		others |= mask;
		if (need <= room + local)
			continue;
		pr_info("drain of pool %s: domain %s holds %llu MiB there; its other pools have %llu MiB free%s%llu MiB\n",
			p->name, d->name, need >> 20, room >> 20,
			a->flags & POOLMEM_DRAIN_ALLOW_LOCAL ? ", its local quota and home node " :
			", local tier not allowed: ", local >> 20);
		if (!ret) {
			memcpy(a->blocker, d->name, POOLMEM_NAME_MAX);
			a->need_bytes = need;
			a->room_bytes = room + local;
			ret = -ENOSPC;
		}
	}
	if (!ret && need_all > pm_pools_free(others) + local_all) {
		pr_info("drain of pool %s: its domains hold %llu MiB there; the pools they may use have %llu MiB free, their local tiers %llu MiB\n",
			p->name, need_all >> 20, pm_pools_free(others) >> 20, local_all >> 20);
		a->need_bytes = need_all;
		a->room_bytes = pm_pools_free(others) + local_all;
		ret = -ENOSPC;
	}
	return ret;
}

#define PM_DRAIN_WORKERS_MAX	64

/*
 * Workers a drain copies with, at most: the ioctl's caller and up to
 * drain_workers - 1 kworkers, no more than the CPUs of the nodes involved
 * (pm_drain_cpus()). Each moves its own runs of drain_batch chunks; a
 * fault waits for the copies of its own run only, so more workers do not
 * lengthen a stall.
 */
static unsigned int pm_drain_workers = 8;
PM_PARAM_UINT_RANGE(drain_workers, pm_drain_workers, 1, PM_DRAIN_WORKERS_MAX, 0644);
MODULE_PARM_DESC(drain_workers, "Most threads a drain copies with, 1..64 (default 8), bounded by the CPUs of the nodes involved");

/*
 * One drain's shared state. Workers claim runs of chunks from the cursor
 * (held[di], chunk idx) and add their results. lock (a mutex: a claim may
 * glance over many absent chunks, and it yields meanwhile) protects the
 * cursor, claimed, err and the results in *a; no other lock is taken
 * under it, and the moves run without it.
 */
struct pm_drain {
	struct mutex lock;
	struct pm_pool *p;
	struct poolmem_pool_drain *a;	/* moved_bytes, busy_chunks, blocker* */
	struct pm_held *held;
	unsigned int nr, di;
	u64 idx;
	u64 claimed;			/* bytes of claimed runs not yet counted in a->moved_bytes */
	int err;			/* the first error: every worker stops */
	atomic_t running;		/* kworkers not done; the last wakes done */
	wait_queue_head_t done;
};

struct pm_drain_worker {
	struct work_struct work;
	struct pm_drain *dr;
};

/*
 * Claim the next run of chunks on the pool (a glance without d->lock: the
 * moves look again) within the call's budget: *h and *idx, and the number
 * of chunks (0: nothing left, or an error stopped the drain). The glance
 * over a mostly absent chunk map yields every 1,024 chunks with dr->lock
 * held: the others wait on a mutex meanwhile, which is why it is one.
 */
static unsigned int pm_drain_claim(struct pm_drain *dr, struct pm_held **h, u64 *idx)
{
	struct poolmem_pool_drain *a = dr->a;
	struct pm_pool *p = dr->p;
	unsigned int n = 0, batch = clamp(READ_ONCE(pm_drain_batch), 1U, (unsigned int)PM_MOVE_RUN);

	mutex_lock(&dr->lock);
	while (!dr->err && dr->di < dr->nr) {
		struct pm_domain *d = dr->held[dr->di].d;
		u64 done = a->moved_bytes + dr->claimed;

		/*
		 * Emptied and removed meanwhile (its id may be another pool's
		 * now): nothing left to do. The reference keeps @p itself.
		 */
		if (READ_ONCE(pm_pools[p->id]) != p) {
			dr->di = dr->nr;
			break;
		}
		if (dr->idx >= d->nr_chunks || !READ_ONCE(d->chunks_per_pool[p->id])) {
			dr->di++;
			dr->idx = 0;
			continue;
		}
		if (!(dr->idx & 1023))
			cond_resched();
		while (n < batch && dr->idx + n < d->nr_chunks &&
		       READ_ONCE(d->meta[dr->idx + n].present) &&
		       READ_ONCE(d->meta[dr->idx + n].pool) == p->id &&
		       (!a->max_bytes || done + ((u64)(n + 1) << d->chunk_shift) <= a->max_bytes ||
			(!n && done < a->max_bytes)))
			n++;
		if (n) {
			*h = &dr->held[dr->di];
			*idx = dr->idx;
			dr->idx += n;
			dr->claimed += (u64)n << d->chunk_shift;
			break;
		}
		if (a->max_bytes && done >= a->max_bytes) {
			/*
			 * Spent: the drain ends. Only claimed: those runs may
			 * fail (a chunk referenced for a moment), and their
			 * workers claim again after counting them, so the
			 * cursor stays for them; this worker is done.
			 */
			if (a->moved_bytes >= a->max_bytes)
				dr->di = dr->nr;
			break;
		}
		dr->idx++;
	}
	mutex_unlock(&dr->lock);
	return n;
}

/*
 * Count a run's results (@res[i] for chunks @idx + i of @h's domain) and
 * keep the first error, which stops the drain.
 */
static void pm_drain_account(struct pm_drain *dr, struct pm_held *h, u64 idx, unsigned int n,
			     const int *res)
{
	struct poolmem_pool_drain *a = dr->a;
	struct pm_domain *d = h->d;
	unsigned int i;

	mutex_lock(&dr->lock);
	dr->claimed -= (u64)n << d->chunk_shift;
	for (i = 0; i < n; i++) {
		int ret = res[i];

		switch (ret) {
		case 0:
			a->moved_bytes += d->chunk_bytes;
			continue;
		case -ENOENT:		/* gone */
			continue;
		case -EINPROGRESS:	/* being placed or moved: next call */
		case -EAGAIN:		/* referenced for a moment: next call */
			a->busy_chunks++;
			continue;
		case -ENOMEM:
			ret = -ENOSPC;
			break;
		}
		if (dr->err)
			continue;
		dr->err = ret;
		memcpy(a->blocker, d->name, POOLMEM_NAME_MAX);
		a->blocker_offset = (idx + i) << d->chunk_shift;
		if (ret == -EBUSY)
			pr_info("drain of pool %s: domain %s offset %#llx is long-term pinned\n",
				dr->p->name, d->name, a->blocker_offset);
		else if (ret == -EIO)
			pr_warn("drain of pool %s: domain %s offset %#llx has a memory error: not moved\n",
				dr->p->name, d->name, a->blocker_offset);
		else if (ret == -ENOSPC)
			pr_info("drain of pool %s: no room for domain %s offset %#llx elsewhere\n",
				dr->p->name, d->name, a->blocker_offset);
	}
	mutex_unlock(&dr->lock);
}

/*
 * Move runs until none is left, the budget is spent or a worker met an
 * error. The caller's worker also stops on a signal (-EINTR) when work is
 * left, which stops the kworkers after their current run. The first error
 * recorded is the one returned and logged; what other workers meet
 * meanwhile is not (the next call meets it again).
 */
static void pm_drain_run(struct pm_drain *dr, bool caller)
{
	u8 from = dr->p->id;
	int res[PM_MOVE_RUN];
	struct pm_held *h;
	unsigned int n, i;
	u64 idx;

	for (;;) {
		n = pm_drain_claim(dr, &h, &idx);
		if (!n)
			break;
		/* a signal with work left: hand the run back, and stop everyone */
		if (caller && signal_pending(current)) {
			mutex_lock(&dr->lock);
			dr->claimed -= (u64)n << h->d->chunk_shift;
			if (!dr->err)
				dr->err = -EINTR;
			mutex_unlock(&dr->lock);
			break;
		}
		pm_chunks_move_run(h->d, h->inode, idx, n, from, res);
		/* never into a znuma domain's local window: it is full by design */
		for (i = 0; i < n; i++)
			if (res[i] == -ENOMEM && (dr->a->flags & POOLMEM_DRAIN_ALLOW_LOCAL) && !h->d->znuma)
				res[i] = pm_chunk_move(h->d, h->inode, idx + i, from, PM_TIER_LOCAL);
		pm_drain_account(dr, h, idx, n, res);
		cond_resched();
	}
}

/*
 * The drain's kworkers. WQ_SYSFS: /sys/devices/virtual/workqueue/
 * poolmem_drain/{cpumask,nice} let an operator keep them off the CPUs
 * that run vCPUs, or below them in priority (the caller's own share is
 * its process's: taskset and nice it alike).
 */
static struct workqueue_struct *pm_drain_wq;

int pm_drain_init(void)
{
	pm_drain_wq = alloc_workqueue("poolmem_drain", WQ_UNBOUND | WQ_SYSFS, 0);
	return pm_drain_wq ? 0 : -ENOMEM;
}

/*
 * Module exit: the control file is gone and mf.c has stopped (the drains of
 * its degraded pools with it), so no drain runs.
 */
void pm_drain_exit(void)
{
	destroy_workqueue(pm_drain_wq);
}

static void pm_drain_work(struct work_struct *work)
{
	struct pm_drain_worker *w = container_of(work, struct pm_drain_worker, work);
	struct pm_drain *dr = w->dr;

	pm_drain_run(dr, false);
	/* ordered after the run's results; the caller flushes this work after */
	if (atomic_dec_and_test(&dr->running))
		wake_up(&dr->done);
}

/*
 * The CPUs near the memory a drain copies: those of pool @p's node and of
 * every node its domains may move chunks to. A node without CPUs (CXL and
 * other memory-only nodes) counts with the CPUs of the nearest node that
 * has some. *@nid becomes the node the kworkers are queued on: the one
 * nearest to @p's (an unbound workqueue starts them there: on the node's
 * CPUs on 6.1, in its cache domain by default on 6.12, which prefers but
 * does not bind). Caller holds pm_lock (the pools stay).
 */
static unsigned int pm_drain_cpus(struct pm_pool *p, u64 mask, bool local, nodemask_t *homes,
				  int *nid)
{
	nodemask_t nodes = NODE_MASK_NONE;
	cpumask_var_t cpus;
	unsigned int i, n;
	int node, near;

	node_set(p->node, nodes);
	for (i = 0; i < POOLMEM_MAX_POOLS; i++)
		if ((mask & BIT_ULL(i)) && pm_pools[i])
			node_set(pm_pools[i]->node, nodes);
	if (local)
		nodes_or(nodes, nodes, *homes);
	if (!zalloc_cpumask_var(&cpus, GFP_KERNEL)) {
		*nid = NUMA_NO_NODE;
		return 1;
	}
	*nid = NUMA_NO_NODE;
	for_each_node_mask(node, nodes) {
		int c, best = INT_MAX;

		near = NUMA_NO_NODE;
		for_each_node_state(c, N_CPU) {
			if (node_distance(node, c) < best) {
				best = node_distance(node, c);
				near = c;
			}
		}
		if (near == NUMA_NO_NODE)
			continue;
		cpumask_or(cpus, cpus, cpumask_of_node(near));
		if (node == p->node)
			*nid = near;
	}
	cpumask_and(cpus, cpus, cpu_online_mask);
	n = cpumask_weight(cpus);
	free_cpumask_var(cpus);
	return max(n, 1U);
}

int pm_pool_drain(struct poolmem_pool_drain *a)
{
	struct pm_drain dr = { .a = a };
	struct pm_drain_worker *w = NULL;
	unsigned int nr = 0, max = 0, i, workers;
	nodemask_t homes = NODE_MASK_NONE;
	struct pm_held *held = NULL;
	struct pm_domain *d;
	struct pm_pool *p;
	u64 mask = 0;
	bool started;
	int ret = 0, nid;

	if (!pm_name_valid(a->name, POOLMEM_NAME_MAX) ||
	    memchr_inv(a->blocker, 0, sizeof(a->blocker)) || a->moved_bytes ||
	    a->remaining_bytes || a->busy_chunks || a->blocker_offset || a->need_bytes ||
	    a->room_bytes || hweight32(a->flags & (POOLMEM_DRAIN_CHECK | POOLMEM_DRAIN_CANCEL)) > 1 ||
	    ((a->flags & POOLMEM_DRAIN_REVOKE) && a->flags != POOLMEM_DRAIN_REVOKE))
		return -EINVAL;

	mutex_lock(&pm_lock);
	p = pm_pool_find(a->name);
	if (!p) {
		mutex_unlock(&pm_lock);
		return -ENOENT;
	}
	if (a->flags & POOLMEM_DRAIN_CANCEL) {
		/* revoked memory still online may be another host's: it stays revoked */
		if (p->revoked && node_state(p->node, N_MEMORY)) {
			pr_info("pool %s: revoked, and memory of node %d is still online: offline it first\n",
				p->name, p->node);
			ret = -EBUSY;
			goto out_unlock;
		}
		if (p->draining)
			pr_info("pool %s: draining cancelled\n", p->name);
		if (p->degraded)
			pr_info("pool %s: no longer degraded: it takes chunks again\n", p->name);
		WRITE_ONCE(p->degraded, false);
		p->err_next = 0;	/* its error policy counts anew */
		WRITE_ONCE(p->revoked, false);
		WRITE_ONCE(p->draining, false);
		WRITE_ONCE(pm_pools_draining, pm_pools_draining & ~BIT_ULL(p->id));
		pm_zerod_kick();	/* its zero reserve fills again */
		goto out_unlock;
	}
	if (a->flags & POOLMEM_DRAIN_REVOKE) {
		/*
		 * A block of a kernel zone holding a chunk fails isolation
		 * before the notifier is asked (its units are not movable):
		 * its revoke could never happen. Only ZONE_MOVABLE memory.
		 */
		if (pm_node_pinnable_bytes(p->node)) {
			pr_info("pool %s: can't revoke memory onlined to a kernel zone (node %d): online shared memory movable\n",
				p->name, p->node);
			ret = -EOPNOTSUPP;
			goto out_unlock;
		}
		/* no chunk moves: each goes when the block under it goes offline */
		if (!p->revoked)
			pr_warn("pool %s: revoked: offlining its memory drops the %llu MiB of chunks there\n",
				p->name, atomic64_read(&p->allocated) >> 20);
		WRITE_ONCE(p->revoked, true);
		WRITE_ONCE(p->draining, true);
		WRITE_ONCE(pm_pools_draining, pm_pools_draining | BIT_ULL(p->id));
		pm_zerod_kick();
		/*
		 * Placements and moves that chose this pool, or began a copy
		 * off it, before it was marked: let them end, so that none
		 * copies off it after this returns. A domain with chunks
		 * here whose pool_mask no longer has the pool (a
		 * POOLMEM_DOMAIN_SET just took it away) is moving them off
		 * it: it is waited for too.
		 */
		list_for_each_entry(d, &pm_domains, list)
			if ((d->pool_mask & BIT_ULL(p->id)) || READ_ONCE(d->chunks_per_pool[p->id]))
				pm_domain_quiesce(d);
		goto out_unlock;
	}
	ret = pm_drain_check(p, a);
	if (ret || (a->flags & POOLMEM_DRAIN_CHECK))
		goto out_unlock;
	started = !p->draining;
	WRITE_ONCE(p->draining, true);
	WRITE_ONCE(pm_pools_draining, pm_pools_draining | BIT_ULL(p->id));
	pm_zerod_kick();	/* a draining pool keeps no zero reserve */

	/* hold every domain with chunks there, then move with pm_lock dropped */
	list_for_each_entry(d, &pm_domains, list)
		max++;
	held = max ? kvmalloc_array(max, sizeof(*held), GFP_KERNEL) : NULL;
	ret = -ENOMEM;
	if (max && !held)
		goto out_unlock;
	ret = 0;
	list_for_each_entry(d, &pm_domains, list) {
		if (!READ_ONCE(d->chunks_per_pool[p->id]))
			continue;
		held[nr].inode = pm_domain_hold(d);
		if (!held[nr].inode)
			continue;
		held[nr++].d = d;
		mask |= READ_ONCE(d->pool_mask);
		if (!d->znuma)
			node_set(d->home_node, homes);
	}
	workers = min(READ_ONCE(pm_drain_workers),
		      pm_drain_cpus(p, mask & ~BIT_ULL(p->id), a->flags & POOLMEM_DRAIN_ALLOW_LOCAL,
				    &homes, &nid));
	if (workers > 1 && nr)
		w = kcalloc(workers - 1, sizeof(*w), GFP_KERNEL);
	if (!w)
		workers = 1;	/* the caller alone */
	if (started)
		pr_info("pool %s: draining %llu MiB, %u worker%s\n", p->name,
			atomic64_read(&p->allocated) >> 20, workers, workers > 1 ? "s" : "");
	/* the pool stays: it is removed only when no chunk is left on it */
	kobject_get(&p->kobj);
	mutex_unlock(&pm_lock);

	/*
	 * The caller is the first worker; the others are kworkers near the
	 * pool's memory, which see no signal: the caller's stops them
	 * after their current run, in its own runs (pm_drain_run()) and
	 * while it waits for theirs.
	 */
	mutex_init(&dr.lock);
	dr.p = p;
	dr.held = held;
	dr.nr = nr;
	atomic_set(&dr.running, workers - 1);
	init_waitqueue_head(&dr.done);
	for (i = 0; i < workers - 1; i++) {
		w[i].dr = &dr;
		INIT_WORK(&w[i].work, pm_drain_work);
		queue_work_node(nid, pm_drain_wq, &w[i].work);
	}
	pm_drain_run(&dr, true);
	if (wait_event_interruptible(dr.done, !atomic_read(&dr.running))) {
		mutex_lock(&dr.lock);
		if (!dr.err)
			dr.err = -EINTR;
		mutex_unlock(&dr.lock);
		wait_event(dr.done, !atomic_read(&dr.running));
	}
	/* each has woken or will wake dr.done last: let the functions return */
	for (i = 0; i < workers - 1; i++)
		flush_work(&w[i].work);
	kfree(w);
	mutex_destroy(&dr.lock);
	ret = dr.err;
	for (i = 0; i < nr; i++)
		pm_domain_release_held(&held[i]);
	kvfree(held);
	a->remaining_bytes = atomic64_read(&p->allocated);
	kobject_put(&p->kobj);
	return ret;

out_unlock:
	a->remaining_bytes = atomic64_read(&p->allocated);
	mutex_unlock(&pm_lock);
	return ret;
}

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

/*
 * Pool @p, drained, is being removed: take it out of the pool_mask of
 * every domain allowed there, with their commitment on it, and wait until
 * no chunk of those domains is being placed or moved (one might be on its
 * way to @p). Caller holds pm_lock and has seen no chunk on @p. Returns
 * -EBUSY if a chunk landed there meanwhile.
 */
int pm_pool_detach(struct pm_pool *p)
{
	struct pm_domain *d;

	list_for_each_entry(d, &pm_domains, list) {
		if (!(d->pool_mask & BIT_ULL(p->id)))
			continue;
		mutex_lock(&d->lock);
		d->pool_mask &= ~BIT_ULL(p->id);
		mutex_unlock(&d->lock);
		p->users--;
		p->committed -= d->committed[PM_TIER_POOL];
		if (d->committed[PM_TIER_POOL] && !d->pool_mask)
			pr_warn("domain %s: pool %s removed, no pool left for its pool quota\n",
				d->name, p->name);
		pm_domain_quiesce(d);
	}
	pm_commit_drop_pool(p->id);
	return atomic64_read(&p->chunks) ? -EBUSY : 0;
}

/*
 * POOLMEM_POOL_REMOVE: a pool with no chunk left, and no domain that may
 * still allocate there (drained first), leaves the registry.
 */
int pm_pool_remove(const char *name)
{
	struct pm_pool *p;
	int ret = 0;

	mutex_lock(&pm_lock);
	p = pm_pool_find(name);
	if (!p) {
		ret = -ENOENT;
	} else if (atomic64_read(&p->chunks) || (p->users && !p->draining)) {
		/* chunks still live here, or domains may allocate here */
		ret = -EBUSY;
	} else if (p->users && pm_pool_detach(p)) {
		ret = -EBUSY;	/* a chunk landed meanwhile: drain again */
	} else {
		WRITE_ONCE(pm_pools_draining, pm_pools_draining & ~BIT_ULL(p->id));
		pm_pools[p->id] = NULL;
		pm_zerod_kick();	/* the node keeps no zero reserve now */
	}
	mutex_unlock(&pm_lock);
	/*
	 * Unregistered, so no one else finds it; its sysfs directory goes
	 * after pm_lock is dropped: kobject_del() waits for shows in progress,
	 * and error_policy's takes pm_lock.
	 */
	if (!ret) {
		kobject_del(&p->kobj);
		kobject_put(&p->kobj);
	}
	return ret;
}
