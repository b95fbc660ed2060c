// SPDX-License-Identifier: GPL-2.0
/*
 * Pool drain (POOLMEM_POOL_DRAIN): every chunk of a pool moves to the
 * domains' other pools (or, if allowed, their local tier) while their VMs
 * run, by up to drain_workers threads, each moving its own runs of chunks
 * with the move engine (move.c); then a drained pool's removal
 * (POOLMEM_POOL_REMOVE) and its detach from the domains allowed there.
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
 * Chunks a drain moves per unmap (1..PM_MOVE_RUN). More means fewer TLB
 * flushes and mmu-notifier rounds, and a longer wait for a vCPU that
 * touches the last chunk of a run (it waits for the copies before it).
 */
static unsigned int pm_drain_batch = 2;
PM_PARAM_UINT_RANGE(drain_batch, pm_drain_batch, 1, PM_MOVE_RUN, 0644);
MODULE_PARM_DESC(drain_batch, "Chunks a drain unmaps at once, 1..16 (default 2): fewer TLB flushes vs a longer stall");

/*
 * Drain pre-check, under pm_lock: every domain's chunks on @p must fit in
 * its other pools' free memory, or, with POOLMEM_DRAIN_ALLOW_LOCAL, in what
 * is left of its local quota (and its home node's free memory); all of
 * them together must fit the free memory of every pool they may go to.
 * A pool-to-pool move keeps the chunk in the pool tier, so pool quotas do
 * not change. Logs a line per domain that doesn't fit; fills the first.
 */
static int pm_drain_check(struct pm_pool *p, struct pm_drain_req *a)
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
	struct pm_drain_req *a;		/* moved_bytes, busy_chunks, blocker* */
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
	struct pm_drain_req *a = dr->a;
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
	struct pm_drain_req *a = dr->a;
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

/* POOLMEM_DRAIN_CANCEL: @p takes chunks again. Caller holds pm_lock. */
static int pm_drain_cancel(struct pm_pool *p)
	__must_hold(&pm_lock)
{
	/* revoked memory still online may be another host's: it stays revoked */
	if (p->revoked && node_state(p->node, N_MEMORY)) {
		pr_info("pool %s: revoked, and memory of node %d is still online: offline it first\n",
			p->name, p->node);
		return -EBUSY;
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
	return 0;
}

/*
 * POOLMEM_DRAIN_REVOKE: @p's memory is no longer ours to read; no chunk
 * moves, each goes when the block under it goes offline (offline.c).
 * Caller holds pm_lock.
 */
static int pm_drain_revoke(struct pm_pool *p)
	__must_hold(&pm_lock)
{
	struct pm_domain *d;

	/*
	 * A block of a kernel zone holding a chunk fails isolation
	 * before the notifier is asked (its units are not movable):
	 * its revoke could never happen. Only ZONE_MOVABLE memory.
	 */
	if (pm_node_pinnable_bytes(p->node)) {
		pr_info("pool %s: can't revoke memory onlined to a kernel zone (node %d): online shared memory movable\n",
			p->name, p->node);
		return -EOPNOTSUPP;
	}
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
	return 0;
}

/*
 * Run drain @dr with the caller and @workers - 1 kworkers of @w (none if
 * @w is NULL) near node @nid; returns the first error. pm_lock not held.
 */
static int pm_drain_workers_run(struct pm_drain *dr, struct pm_drain_worker *w, unsigned int workers, int nid)
{
	unsigned int i;

	/*
	 * The caller is the first worker; the others are kworkers near the
	 * pool's memory, which see no signal: the caller's stops them
	 * after their current run, in its own runs (pm_drain_run()) and
	 * while it waits for theirs.
	 */
	atomic_set(&dr->running, workers - 1);
	init_waitqueue_head(&dr->done);
	for (i = 0; i < workers - 1; i++) {
		w[i].dr = dr;
		INIT_WORK(&w[i].work, pm_drain_work);
		queue_work_node(nid, pm_drain_wq, &w[i].work);
	}
	pm_drain_run(dr, true);
	if (wait_event_interruptible(dr->done, !atomic_read(&dr->running))) {
		mutex_lock(&dr->lock);
		if (!dr->err)
			dr->err = -EINTR;
		mutex_unlock(&dr->lock);
		wait_event(dr->done, !atomic_read(&dr->running));
	}
	/* each has woken or will wake dr->done last: let the functions return */
	for (i = 0; i < workers - 1; i++)
		flush_work(&w[i].work);
	return dr->err;
}

/*
 * Pool @name's draining ends (@revoke false: POOLMEM_DRAIN_CANCEL) or it
 * is revoked (POOLMEM_DRAIN_REVOKE); *@remaining: what is still allocated
 * there. The caller has checked the name.
 */
static int pm_pool_mark(const char *name, bool revoke, u64 *remaining)
{
	struct pm_pool *p;
	int ret;

	mutex_lock(&pm_lock);
	p = pm_pool_find(name);
	if (!p) {
		mutex_unlock(&pm_lock);
		return -ENOENT;
	}
	ret = revoke ? pm_drain_revoke(p) : pm_drain_cancel(p);
	*remaining = atomic64_read(&p->allocated);
	mutex_unlock(&pm_lock);
	return ret;
}

int pm_pool_undrain(const char *name, u64 *remaining)
{
	return pm_pool_mark(name, false, remaining);
}

int pm_pool_revoke(const char *name, u64 *remaining)
{
	return pm_pool_mark(name, true, remaining);
}

/*
 * Drain pool @name (POOLMEM_POOL_DRAIN, and a degraded pool's drain in
 * mf.c): @a->flags (POOLMEM_DRAIN_CHECK, POOLMEM_DRAIN_ALLOW_LOCAL) and
 * @a->max_bytes in, the rest out. The caller has checked the name and the
 * flags; undrain and revoke are pm_pool_undrain() and pm_pool_revoke().
 */
int pm_pool_drain(const char *name, struct pm_drain_req *a)
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

	mutex_lock(&pm_lock);
	p = pm_pool_find(name);
	if (!p) {
		mutex_unlock(&pm_lock);
		return -ENOENT;
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

	mutex_init(&dr.lock);
	dr.p = p;
	dr.held = held;
	dr.nr = nr;
	ret = pm_drain_workers_run(&dr, w, workers, nid);
	kfree(w);
	mutex_destroy(&dr.lock);
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
		/* a pool that takes the id starts uncontended */
		WRITE_ONCE(pm_pools_contended, pm_pools_contended & ~BIT_ULL(p->id));
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
