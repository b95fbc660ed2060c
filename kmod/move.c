// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem's move engine: moving a live chunk to another node while its VM
 * runs, one chunk, a run of them (for drain.c) or an exchange of two (for
 * tiering.c). What is built on it lives above it: pool drain (drain.c),
 * revoke, evacuation and soft offline (offline.c), live changes of a
 * domain's quotas and pools (set.c), hot/cold moves (tiering.c).
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

/*
 * The copy limit (debugfs poolmem/copy_limit, for make bench): the move's
 * own copy, copy_mc_to_kernel() of a whole 2 MiB unit (pm_units_copy()),
 * of MIB of fresh units on node FROM to fresh units on node TO, by
 * THREADS threads (the writer and THREADS - 1 kworkers, as a drain's
 * workers), and nothing else: no chunk map, no unmap, no freeze, no
 * accounting. A drain's speed against it is what its bookkeeping costs.
 * Write "FROM TO MIB THREADS"; read the last run, "FROM TO MIB THREADS NS".
 * pm_copy_limit_lock serializes runs and protects pm_copy_limit_last; it
 * is taken by nothing else.
 */
static DEFINE_MUTEX(pm_copy_limit_lock);
static char pm_copy_limit_last[80];

struct pm_copy_limit {
	struct page **src, **dst;
	unsigned int nr;
	atomic_t next;			/* the next unit to copy */
	int err;			/* -EIO: a copy met a memory error */
};

struct pm_copy_worker {
	struct work_struct work;
	struct pm_copy_limit *cl;
};

static void pm_copy_limit_run(struct pm_copy_limit *cl)
{
	unsigned int u;

	while ((u = (unsigned int)atomic_inc_return(&cl->next) - 1) < cl->nr) {
		if (copy_mc_to_kernel(page_address(cl->dst[u]), page_address(cl->src[u]), PM_UNIT_BYTES))
			WRITE_ONCE(cl->err, -EIO);
		cond_resched();
	}
}

static void pm_copy_limit_work(struct work_struct *work)
{
	pm_copy_limit_run(container_of(work, struct pm_copy_worker, work)->cl);
}

static ssize_t pm_copy_limit_write(struct file *file, const char __user *ubuf, size_t len, loff_t *pos)
{
	const gfp_t gfp = GFP_HIGHUSER_MOVABLE | __GFP_THISNODE | __GFP_COMP | __GFP_NOWARN | __GFP_RETRY_MAYFAIL;
	struct pm_copy_limit cl = {};
	struct pm_copy_worker *w = NULL;
	unsigned int mib, threads, i, nr;
	int from, to;
	ssize_t ret;
	char buf[64];
	u64 t0, ns;

	if (IS_ENABLED(CONFIG_HIGHMEM))
		return -EOPNOTSUPP;	/* page_address() of every unit */
	if (!len || len >= sizeof(buf))
		return -EINVAL;
	if (copy_from_user(buf, ubuf, len))
		return -EFAULT;
	buf[len] = '\0';
	if (sscanf(buf, "%d %d %u %u", &from, &to, &mib, &threads) != 4 ||
	    from < 0 || from >= MAX_NUMNODES || to < 0 || to >= MAX_NUMNODES ||
	    !node_state(from, N_MEMORY) || !node_state(to, N_MEMORY) ||
	    !mib || mib > 16384 || mib % (PM_UNIT_BYTES >> 20) || !threads || threads > 64)
		return -EINVAL;
	nr = mib / (PM_UNIT_BYTES >> 20);
	ret = -ENOMEM;
	cl.src = kvcalloc(nr, sizeof(*cl.src), GFP_KERNEL);
	cl.dst = kvcalloc(nr, sizeof(*cl.dst), GFP_KERNEL);
	if (threads > 1)
		w = kcalloc(threads - 1, sizeof(*w), GFP_KERNEL);
	if (!cl.src || !cl.dst || (threads > 1 && !w))
		goto out;
	for (i = 0; i < nr; i++) {
		cl.src[i] = alloc_pages_node(from, gfp, PM_UNIT_ORDER);
		cl.dst[i] = alloc_pages_node(to, gfp, PM_UNIT_ORDER);
		if (!cl.src[i] || !cl.dst[i])
			goto out;
		/* bytes of its own in each source unit, as a VM's would be */
		memset(page_address(cl.src[i]), 0x5a, PM_UNIT_BYTES);
		if (fatal_signal_pending(current)) {
			ret = -EINTR;
			goto out;
		}
	}
	cl.nr = nr;
	mutex_lock(&pm_copy_limit_lock);
	t0 = ktime_get_ns();
	for (i = 0; i + 1 < threads; i++) {
		w[i].cl = &cl;
		INIT_WORK(&w[i].work, pm_copy_limit_work);
		queue_work(system_unbound_wq, &w[i].work);
	}
	pm_copy_limit_run(&cl);
	for (i = 0; i + 1 < threads; i++)
		flush_work(&w[i].work);
	ns = ktime_get_ns() - t0;
	snprintf(pm_copy_limit_last, sizeof(pm_copy_limit_last), "%d %d %u %u %llu\n", from, to, mib, threads,
		 ns);
	mutex_unlock(&pm_copy_limit_lock);
	ret = cl.err ? cl.err : (ssize_t)len;
out:
	for (i = 0; i < nr && cl.src && cl.dst; i++) {
		if (cl.src[i])
			__free_pages(cl.src[i], PM_UNIT_ORDER);
		if (cl.dst[i])
			__free_pages(cl.dst[i], PM_UNIT_ORDER);
	}
	kvfree(cl.src);
	kvfree(cl.dst);
	kfree(w);
	return ret;
}

static ssize_t pm_copy_limit_read(struct file *file, char __user *ubuf, size_t len, loff_t *pos)
{
	char buf[sizeof(pm_copy_limit_last)];

	mutex_lock(&pm_copy_limit_lock);
	memcpy(buf, pm_copy_limit_last, sizeof(buf));
	mutex_unlock(&pm_copy_limit_lock);
	return simple_read_from_buffer(ubuf, len, pos, buf, strnlen(buf, sizeof(buf)));
}

static const struct file_operations pm_copy_limit_fops = {
	.owner = THIS_MODULE,
	.read = pm_copy_limit_read,
	.write = pm_copy_limit_write,
	.llseek = default_llseek,
};

void pm_move_debugfs(struct dentry *dir)
{
	debugfs_create_file("move_latency", 0600, dir, NULL, &pm_lat_fops);
	debugfs_create_file("copy_limit", 0600, dir, NULL, &pm_copy_limit_fops);
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

		m->n = pm_pool_candidates(d, m->to_mask ? m->to_mask :
					  m->src && !m->stay ? ~BIT_ULL(m->src->id) : ~0ULL, m->ids);
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

int pm_move_freeze(struct pm_domain *d, struct inode *inode, struct pm_move *m)
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
void pm_move_abort(struct pm_domain *d, struct pm_move *m, int ret)
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

struct page **pm_move_arrays(struct pm_domain *d, struct pm_move *m, unsigned int nr)
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
static int pm_chunk_move_one(struct pm_domain *d, struct inode *inode, struct pm_move *m, u8 from, u32 tier)
{
	u64 idx = m->idx;
	unsigned long retire_pfn = m->retire_pfn;
	struct page **arrays;
	bool cross;
	int ret;

	arrays = pm_move_arrays(d, m, 1);
	if (!arrays)
		return -ENOMEM;

	/* 1. reserve the destination in its tier, mark busy */
	mutex_lock(&d->lock);
	ret = pm_move_begin(d, m, from, tier);
	if (ret)
		goto out_unlock;
	/* a soft offline's page must still be in this chunk (not moved meanwhile) */
	if (retire_pfn && !pm_units_have(m->old, d->units_per_chunk, retire_pfn)) {
		pm_chunk_unbusy(d, idx);
		ret = -ENOENT;
		goto out_unlock;
	}
	cross = tier != m->src_tier;
	if (cross && d->usage[tier] + d->chunk_bytes > d->quota[tier]) {
		pm_chunk_unbusy(d, idx);
		ret = -ENOSPC;
		goto out_unlock;
	}
	if (cross)
		d->usage[tier] += d->chunk_bytes;
	mutex_unlock(&d->lock);

	ret = pm_move_alloc(d, m);
	if (ret)
		goto out_abort;
	/* 2., 3. unmap; nobody else may hold a unit */
	ret = pm_move_freeze(d, inode, m);
	if (ret)
		goto out_free_new;
	/* 4. copy, stopping at a poisoned line */
	ret = pm_units_copy(d, idx, m->new, m->old, d->units_per_chunk);
	if (ret) {
		pm_units_unfreeze(m->old, d->units_per_chunk);
		goto out_free_new;
	}
	/* 5. swap; the map and the charge change together under d->lock */
	mutex_lock(&d->lock);
	if (cross) {
		d->usage[m->src_tier] -= d->chunk_bytes;	/* the new tier was charged in 1. */
		pm_quota_settle(d, m->src_tier);
	}
	pm_move_commit(d, m);
	mutex_unlock(&d->lock);
	/* soft offline: the page leaves use with its unit (pm_unit_put()) */
	if (m->retire_pfn)
		SetPageHWPoison(pfn_to_page(m->retire_pfn));
	/* frozen at 0: back to our one reference, and drop it */
	pm_units_unfreeze(m->old, d->units_per_chunk);
	pm_units_free(m->old, d->units_per_chunk);
	kfree(arrays);
	return 0;

out_free_new:
	pm_units_free(m->new, d->units_per_chunk);
out_abort:
	mutex_lock(&d->lock);
	if (cross) {
		/* as in placement: a shrunk tier keeps no room for it */
		d->usage[tier] -= d->chunk_bytes;
		pm_quota_settle(d, tier);
	}
	pm_move_abort(d, m, ret);
out_unlock:
	mutex_unlock(&d->lock);
	kfree(arrays);
	return ret;
}

int pm_chunk_move_how(struct pm_domain *d, struct inode *inode, u64 idx, u8 from, u32 tier,
		      bool stay, unsigned long retire_pfn)
{
	struct pm_move m = { .idx = idx, .stay = stay, .retire_pfn = retire_pfn };

	return pm_chunk_move_one(d, inode, &m, from, tier);
}

/*
 * Move present chunk @idx of @d from pool @from to pool @to, within the
 * pool tier (rebalancing, tiering.c): as pm_chunk_move() to the pool tier,
 * with @to the only candidate (it must be in the domain's pool_mask, not
 * draining, with online memory). Returns as pm_chunk_move() does; -ENOMEM
 * when @to can't take it.
 */
int pm_chunk_move_to(struct pm_domain *d, struct inode *inode, u64 idx, u8 from, u8 to)
{
	struct pm_move m = { .idx = idx, .to_mask = BIT_ULL(to) };

	if (from == PM_POOL_NONE || from == to)
		return -ENOENT;
	return pm_chunk_move_one(d, inode, &m, from, PM_TIER_POOL);
}

int pm_chunk_move(struct pm_domain *d, struct inode *inode, u64 idx, u8 from, u32 tier)
{
	return pm_chunk_move_how(d, inode, idx, from, tier, false, 0);
}

/*
 * Move chunks @idx .. @idx + @n - 1 of @d (@n <= PM_MOVE_RUN), found on
 * pool @from, to other pools of the domain, as pm_chunk_move() would one
 * by one, but with a single unmap_mapping_range() over the run: one mmu
 * notifier invalidation and one TLB flush for all of them instead of one
 * per chunk (6.1's own migration flushes per page). Chunks of the span
 * that are not moved (elsewhere, busy) are unmapped too and fault back in.
 * @res[i] gets each chunk's result, as pm_chunk_move() returns it.
 */
void pm_chunks_move_run(struct pm_domain *d, struct inode *inode, u64 idx, unsigned int n,
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
