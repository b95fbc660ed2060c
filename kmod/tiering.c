// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem tiering: access sampling by refault, and hot/cold moves between
 * a domain's tiers.
 *
 * Which chunks does a VM use? Accessed bits can't tell us: under KVM the
 * guest's accesses set the bits of the EPT/NPT, and clearing those needs
 * mmu_notifier_clear_young(), which 6.1 does not export; under TCG they
 * land in the host page tables. Refaults tell us in both cases: each
 * period a worker unmaps a random sample of present chunks and notes the
 * time. A chunk faulted in again within hot_ms is hot; one still not
 * faulted in after pm_cold_periods periods is cold. Every sampled refault
 * of a pool chunk also counts as accesses of its pool (weighted by how
 * sparse the sample is) in the pool's access factor, so smart-idle sees
 * pools kept busy by memory that is already mapped.
 *
 * With tiering on, the worker then moves chunks, at most scan_rate bytes
 * a second, always within the quotas: hot pool chunks into free local
 * quota; when the local quota is full and hot chunks wait in the pool, a
 * cold local chunk goes to the pool first (or, when the pool quota is
 * full too, the two are exchanged: each tier's usage stays the same).
 *
 * The work item runs on system_unbound_wq while the domain's file exists:
 * the domain's eviction cancels it before its inode goes. Its state is
 * under d->lock.
 *
 * Rebalancing between pools (issue 51; off unless rebalance_rate_mb is
 * set). Placement sees the pools' load only when a chunk is made; a
 * chunk placed on a pool that was idle may turn hot there, or the pool
 * may become busy with other hosts' load (remote_load). A module-wide
 * check, every rebalance_period_ms, feeds each pool's access factor (its
 * own and remote_load's) to pm_rb_check() (policy/pm_rebalance.c, which
 * the simulator runs too): a pool whose Af stays above the others' mean
 * by rebalance_margin_pct for rebalance_periods checks in a row is
 * contended. Each smart-idle domain's tiering worker (tiering sample or
 * on) then moves its hot chunks off contended pools, each to the pool
 * pm_rb_dest() names: the coolest allowed pool that is not contended and
 * has room, only if the move narrows the gap, so a chunk never bounces
 * back. Within the pool tier: no quota changes. All domains share one
 * budget of rebalance_rate_mb MiB a second. The module, not a daemon,
 * does it because the inputs (sampled heat per chunk, the pools' Af) and
 * the move engine are here, and the tiering worker already runs each
 * period: no per-chunk ioctl, and a second walk of the chunk map only
 * while a pool the domain uses is contended.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/ktime.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/random.h>
#include <linux/slab.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "poolmem.h"
#include "policy/pm_rebalance.h"

static unsigned int pm_tier_period_ms = 1000;
PM_PARAM_UINT_RANGE(tiering_period_ms, pm_tier_period_ms, 10, 60000, 0644);
MODULE_PARM_DESC(tiering_period_ms, "Tiering scan period in ms, 10..60000 (default 1000)");

static unsigned int pm_cold_periods = 3;
PM_PARAM_UINT_RANGE(tiering_cold_periods, pm_cold_periods, 1, 1000, 0644);
MODULE_PARM_DESC(tiering_cold_periods,
		 "Periods without a refault after which a sampled chunk is cold, 1..1000 (default 3)");

static unsigned int pm_rb_rate_mb;
PM_PARAM_UINT_RANGE(rebalance_rate_mb, pm_rb_rate_mb, 0, 65536, 0644);
MODULE_PARM_DESC(rebalance_rate_mb,
		 "Rebalancing between pools: MiB a second of hot chunks moved off contended pools, all domains "
		 "together, 0..65536 (default 0: off)");

static unsigned int pm_rb_period_ms = 1000;
PM_PARAM_UINT_RANGE(rebalance_period_ms, pm_rb_period_ms, 10, 60000, 0644);
MODULE_PARM_DESC(rebalance_period_ms, "Rebalancing: ms between checks of the pools' load, 10..60000 (default 1000)");

static unsigned int pm_rb_margin_pct = 25;
PM_PARAM_UINT_RANGE(rebalance_margin_pct, pm_rb_margin_pct, 0, 1000, 0644);
MODULE_PARM_DESC(rebalance_margin_pct,
		 "Rebalancing: a pool is contended when its access factor is this percent above the other pools' "
		 "mean, 0..1000 (default 25)");

static unsigned int pm_rb_periods = 3;
PM_PARAM_UINT_RANGE(rebalance_periods, pm_rb_periods, 1, 1000, 0644);
MODULE_PARM_DESC(rebalance_periods, "Rebalancing: ... for this many checks in a row, 1..1000 (default 3)");

static unsigned int pm_rb_floor = 256;
PM_PARAM_UINT_RANGE(rebalance_af_floor, pm_rb_floor, 0, 1U << 30, 0644);
MODULE_PARM_DESC(rebalance_af_floor, "Rebalancing: an access factor below this is never contended (default 256)");

/*
 * The check's result: pools contended now (pm_pools_contended, pool.c),
 * and the bytes the domains' workers may still move this period, taken
 * atomically.
 */
static atomic64_t pm_rb_budget;
static unsigned long pm_rb_last;	/* jiffies of the last check; the check work's alone */
static void pm_rb_workfn(struct work_struct *work);
static DECLARE_DELAYED_WORK(pm_rb_work, pm_rb_workfn);

static unsigned long pm_rb_period(void)
{
	return msecs_to_jiffies(clamp(READ_ONCE(pm_rb_period_ms), 10U, 60000U));
}

/* A pool's Af as smart idle sees it: its own and what other hosts put on its device. */
static u64 pm_rb_pool_af(struct pm_pool *p)
{
	return pm_pool_af(p) + READ_ONCE(p->remote_af);
}

/*
 * The budget is a token bucket: @rate bytes a second since the last check,
 * up to twice a period's worth, or one chunk of the largest size (so that
 * a domain of big chunks can move at all, at the rate on average). While
 * no pool is contended it keeps at most a period's worth: no burst when a
 * pool becomes contended after a quiet hour.
 */
static void pm_rb_refill(u64 rate, bool contended)
{
	u64 elapsed = jiffies_to_msecs(jiffies - pm_rb_last);
	u64 period = div_u64(rate * jiffies_to_msecs(pm_rb_period()), MSEC_PER_SEC);
	u64 cap = contended ? max_t(u64, 2 * period, PM_DOMAIN_CHUNK_MAX) : period;
	s64 have = atomic64_read(&pm_rb_budget), want;

	pm_rb_last = jiffies;
	/* at most a minute counts: rate (< 2^37) times 60000 ms stays below 2^53 */
	want = clamp_t(s64, have + div_u64(rate * min_t(u64, elapsed, 60000), MSEC_PER_SEC), 0, cap);
	/* moves may take from it meanwhile: add the difference, not a new value */
	atomic64_add(want - have, &pm_rb_budget);
}

/*
 * The module-wide check, every rebalance_period_ms: which pools are
 * contended, and the budget. Draining and revoked pools take part with
 * their load (they are still pools the others compare with) but are never
 * contended: their chunks leave anyway. Under pm_lock (the registry):
 * pm_pool.rb_over is written here only; pm_pool.rb_shift is added to by
 * the domains' moves (atomically, under their d->lock) and halved here.
 * With rebalancing off, the state starts again: nothing is contended, no
 * budget, no count of checks or moves carried into the next time on.
 */
static void pm_rb_workfn(struct work_struct *work)
{
	struct pm_rb_params prm = {
		.margin_pct = READ_ONCE(pm_rb_margin_pct),
		.periods = READ_ONCE(pm_rb_periods),
		.floor = READ_ONCE(pm_rb_floor),
	};
	u64 rate = (u64)READ_ONCE(pm_rb_rate_mb) << 20, contended = 0, mask;
	struct pm_rb_pool *rb = rate ? kmalloc_array(POOLMEM_MAX_POOLS, sizeof(*rb), GFP_KERNEL) : NULL;
	s64 was[POOLMEM_MAX_POOLS];
	u8 ids[POOLMEM_MAX_POOLS];
	unsigned int n = 0, i;

	mutex_lock(&pm_lock);
	for (i = 0; i < POOLMEM_MAX_POOLS; i++) {
		struct pm_pool *p = pm_pools[i];

		if (!p)
			continue;
		if (!rb) {
			p->rb_over = 0;
			atomic64_set(&p->rb_shift, 0);
			continue;
		}
		ids[n] = i;
		rb[n].af = pm_rb_pool_af(p);
		rb[n].free = pm_node_free_bytes(p->node);
		rb[n].over = p->rb_over;
		rb[n].shift = atomic64_read(&p->rb_shift);
		was[n] = rb[n].shift;
		n++;
	}
	if (rb) {
		mask = pm_rb_check(&prm, rb, n);
		for (i = 0; i < n; i++) {
			struct pm_pool *p = pm_pools[ids[i]];

			p->rb_over = rb[i].over;
			/* the halving, not a new value: a move may have added meanwhile */
			atomic64_sub(was[i] - rb[i].shift, &p->rb_shift);
			if (mask & BIT_ULL(i) && !(READ_ONCE(pm_pools_draining) & BIT_ULL(ids[i])) &&
			    !READ_ONCE(p->revoked))
				contended |= BIT_ULL(ids[i]);
		}
	}
	WRITE_ONCE(pm_pools_contended, contended);
	mutex_unlock(&pm_lock);
	kfree(rb);
	if (rate)
		pm_rb_refill(rate, contended);
	else
		atomic64_set(&pm_rb_budget, 0);
	queue_delayed_work(system_unbound_wq, &pm_rb_work, pm_rb_period());
}

void pm_rebalance_start(void)
{
	pm_rb_last = jiffies;
	queue_delayed_work(system_unbound_wq, &pm_rb_work, pm_rb_period());
}

void pm_rebalance_stop(void)
{
	cancel_delayed_work_sync(&pm_rb_work);
}

u64 pm_rebalance_contended(void)
{
	return READ_ONCE(pm_pools_contended);
}

/* Take @bytes of the budget if it holds them: true, else false (none taken). */
static bool pm_rb_take(u64 bytes)
{
	s64 have = atomic64_read(&pm_rb_budget);

	do {
		if (have < (s64)bytes)
			return false;
	} while (!atomic64_try_cmpxchg(&pm_rb_budget, &have, have - bytes));
	return true;
}

static unsigned long pm_tier_period(void)
{
	return msecs_to_jiffies(clamp(READ_ONCE(pm_tier_period_ms), 10U, 60000U));
}

/*
 * Chunks a walk under d->lock looks at before it lets go of the lock for a
 * moment: a fault (a vCPU) waits at most that long behind the worker, and
 * the worker yields the CPU. 256 2 MiB chunks are half a GiB of domain.
 */
#define PM_TIER_WALK_BATCH	256
/*
 * Hot and cold chunks a period gathers to move, at most: the candidate
 * arrays stay small (2 x 8 KiB) whatever scan_rate asks for.
 */
#define PM_TIER_MOVE_MAX	1024

/* Let go of d->lock every PM_TIER_WALK_BATCH chunks of a walk at @i. */
static void pm_tier_walk_yield(struct pm_domain *d, u64 i)
	__must_hold(&d->lock)
{
	if (i % PM_TIER_WALK_BATCH != PM_TIER_WALK_BATCH - 1)
		return;
	mutex_unlock(&d->lock);
	cond_resched();
	mutex_lock(&d->lock);
}

/*
 * A refault of chunk @idx (present, not busy): if it was unmapped for
 * sampling, it is hot when it came back within hot_ms, and its pool @p
 * (NULL: local) counts the access. Caller holds d->lock.
 */
void pm_heat_refault(struct pm_domain *d, u64 idx, struct pm_pool *p)
	__must_hold(&d->lock)
{
	struct pm_heat *h = &d->heat[idx];
	unsigned long age;

	if (!h->sampled)
		return;
	age = (u32)jiffies - h->at;
	h->sampled = 0;
	h->hot = age <= msecs_to_jiffies(d->hot_ms);
	h->cold = 0;
	d->hits++;
	if (p) {
		d->pool_hits++;
		atomic64_add(d->access_weight, &p->accesses);
		pm_pool_event(p, d->access_weight);
	}
}

/* Unmap @n random present chunks for sampling. Caller holds d->lock. */
static void pm_tier_sample(struct pm_domain *d, u64 n)
	__must_hold(&d->lock)
{
	u64 start = get_random_u64() % d->nr_chunks, i, taken = 0;

	for (i = 0; i < d->nr_chunks && taken < n; i++) {
		u64 idx = (start + i) % d->nr_chunks;
		struct pm_heat *h = &d->heat[idx];

		pm_tier_walk_yield(d, i);
		if (!d->meta[idx].present || d->meta[idx].busy || h->sampled)
			continue;
		pm_chunk_unmap(d, idx);
		if (d->meta[idx].pool != PM_POOL_NONE)
			atomic64_inc(&pm_pools[d->meta[idx].pool]->samples);
		h->sampled = 1;
		h->at = (u32)jiffies;
		d->samples++;
		taken++;
	}
}

/*
 * Age the samples, and gather up to @n hot pool chunks (@promo) and cold
 * local chunks (@demo). Returns how many present chunks there are. Caller
 * holds d->lock, which the walk lets go of now and then: the chunks
 * gathered are candidates, and a move looks at each again under the lock.
 */
static u64 pm_tier_scan(struct pm_domain *d, u64 n, u64 *promo, u64 *np, u64 *demo, u64 *nd)
	__must_hold(&d->lock)
{
	unsigned long cold = pm_tier_period() * max(READ_ONCE(pm_cold_periods), 1U);
	u64 idx, present = 0;

	*np = *nd = 0;
	for (idx = 0; idx < d->nr_chunks; idx++) {
		struct pm_heat *h = &d->heat[idx];
		struct pm_chunk_meta *meta = &d->meta[idx];

		pm_tier_walk_yield(d, idx);
		if (!meta->present)
			continue;
		present++;
		if (h->sampled && (u32)jiffies - h->at >= cold) {
			h->cold = 1;
			h->hot = 0;
		}
		if (meta->busy)
			continue;
		if (meta->tier == PM_TIER_POOL && h->hot && *np < n)
			promo[(*np)++] = idx;
		else if (meta->tier == PM_TIER_LOCAL && h->cold && *nd < n)
			demo[(*nd)++] = idx;
	}
	return present;
}

/*
 * Promote the hot pool chunks @promo into the local tier, making room by
 * demoting (or exchanging with) the cold local chunks @demo. At most @n
 * chunks move. d->lock not held.
 */
static void pm_tier_move(struct pm_domain *d, u64 *promo, u64 np, u64 *demo, u64 nd, u64 n)
{
	struct inode *inode = d->inode;	/* valid: eviction cancels this work first */
	u64 i, j = 0, moved = 0;

	for (i = 0; i < np && moved < n; i++) {
		u8 from = READ_ONCE(d->meta[promo[i]].pool);
		int ret = pm_chunk_move(d, inode, promo[i], from, PM_TIER_LOCAL);

		if (ret == -ENOSPC && j < nd) {
			/* local is full: a cold chunk makes room, or trades places */
			ret = pm_chunk_move(d, inode, demo[j], PM_POOL_NONE, PM_TIER_POOL);
			if (!ret) {
				mutex_lock(&d->lock);
				d->demotions++;
				mutex_unlock(&d->lock);
				moved++;
				ret = pm_chunk_move(d, inode, promo[i], from, PM_TIER_LOCAL);
			} else if (ret == -ENOSPC) {
				ret = pm_chunk_exchange(d, inode, demo[j], promo[i], from);
				if (!ret) {
					mutex_lock(&d->lock);
					d->demotions++;
					mutex_unlock(&d->lock);
					moved++;
				}
			}
			j++;
		}
		if (!ret) {
			mutex_lock(&d->lock);
			d->promotions++;
			mutex_unlock(&d->lock);
			moved++;
		}
		cond_resched();
	}
}

/*
 * Gather up to @n hot chunks of @d on the pools of @contended into @cand.
 * Caller holds d->lock (the walk lets go of it now and then).
 */
static u64 pm_rb_gather(struct pm_domain *d, u64 contended, u64 *cand, u64 n)
	__must_hold(&d->lock)
{
	u64 idx, k = 0;

	for (idx = 0; idx < d->nr_chunks && k < n; idx++) {
		struct pm_chunk_meta *meta = &d->meta[idx];

		pm_tier_walk_yield(d, idx);
		if (meta->present && !meta->busy && meta->tier == PM_TIER_POOL && d->heat[idx].hot &&
		    meta->pool != PM_POOL_NONE && (contended & BIT_ULL(meta->pool)))
			cand[k++] = idx;
	}
	return k;
}

/*
 * The pools @d may use, as pm_rb_dest() sees them, indexed by pool id
 * (the others: no room, never chosen): the Af with the shift of the moves
 * the Af does not show yet (other domains' too). Caller holds d->lock: a
 * pool in its pool_mask stays registered.
 */
static void pm_rb_views(struct pm_domain *d, struct pm_rb_pool *rb)
	__must_hold(&d->lock)
{
	u64 m;

	memset(rb, 0, POOLMEM_MAX_POOLS * sizeof(*rb));
	for (m = d->pool_mask; m; m &= m - 1) {
		struct pm_pool *p = pm_pools[__ffs64(m)];

		s64 af = (s64)min_t(u64, pm_rb_pool_af(p), PM_RB_AF_MAX) + atomic64_read(&p->rb_shift);

		rb[p->id].af = af > 0 ? af : 0;
		rb[p->id].free = node_state(p->node, N_MEMORY) ? pm_node_free_bytes(p->node) : 0;
	}
}

/*
 * Rebalancing, in @d's tiering worker: its hot chunks on contended pools
 * move, hottest first (all hot chunks are alike to sampling), where
 * pm_rb_dest() says, within the module-wide budget; at most @n, the
 * tiering's own cap per period, into @cand. A chunk's heat is what its
 * sampled refault added to its pool's Af: the domain's access weight, at
 * the current window's weight. Each move shifts both pools' Af for the
 * other domains and the next checks (pm_pool.rb_shift). Stops when
 * tiering is turned off (the domain's eviction waits for this work).
 * d->lock not held.
 */
static void pm_rb_domain(struct pm_domain *d, u64 *cand, u64 n)
{
	struct inode *inode = d->inode;	/* valid: eviction cancels this work first */
	u64 contended = pm_rebalance_contended(), k, i, heat, allowed;
	struct pm_rb_pool *rb;

	if (!contended || !READ_ONCE(pm_rb_rate_mb) || atomic64_read(&pm_rb_budget) <= 0)
		return;
	rb = kmalloc_array(POOLMEM_MAX_POOLS, sizeof(*rb), GFP_KERNEL);
	if (!rb)
		return;
	mutex_lock(&d->lock);
	if (d->pool_select != PM_SELECT_SMART_IDLE || !(contended & d->pool_mask)) {
		mutex_unlock(&d->lock);
		kfree(rb);
		return;
	}
	k = pm_rb_gather(d, contended, cand, n);
	pm_rb_views(d, rb);
	heat = d->access_weight << (PM_AF_WINDOWS - 1);
	mutex_unlock(&d->lock);

	for (i = 0; i < k; i++) {
		u8 from = READ_ONCE(d->meta[cand[i]].pool);
		int dst, ret;

		if (from == PM_POOL_NONE || !(contended & BIT_ULL(from)))
			continue;
		allowed = READ_ONCE(d->pool_mask) & ~READ_ONCE(pm_pools_draining);
		dst = pm_rb_dest(rb, POOLMEM_MAX_POOLS, from, allowed, contended, heat, d->chunk_bytes);
		if (dst < 0)
			continue;
		if (!pm_rb_take(d->chunk_bytes))
			break;
		ret = pm_chunk_move_to(d, inode, cand[i], from, dst);
		if (ret) {
			atomic64_add(d->chunk_bytes, &pm_rb_budget);
			/* no room after all: not that pool again this time */
			if (ret == -ENOMEM)
				rb[dst].free = 0;
			continue;
		}
		pm_rb_moved(rb, from, dst, heat, d->chunk_bytes);
		mutex_lock(&d->lock);
		d->rebalanced++;
		/* in the mask (so registered): count it there, and shift both Afs */
		if (d->pool_mask & BIT_ULL(from)) {
			atomic64_inc(&pm_pools[from]->rebalanced);
			atomic64_sub(heat, &pm_pools[from]->rb_shift);
		}
		if (d->pool_mask & BIT_ULL(dst))
			atomic64_add(heat, &pm_pools[dst]->rb_shift);
		mutex_unlock(&d->lock);
		if (READ_ONCE(d->tier_mode) == POOLMEM_TIERING_OFF)
			break;
		cond_resched();
	}
	kfree(rb);
}

static void pm_tier_workfn(struct work_struct *work)
{
	struct pm_domain *d = container_of(to_delayed_work(work), struct pm_domain, tier_work);
	u64 t0 = ktime_get_ns(), n, nm, np = 0, nd = 0, present;
	u64 *promo = NULL, *demo;
	u32 mode;

	mutex_lock(&d->lock);
	mode = d->tier_mode;
	/*
	 * Chunks per period: sampled, and moved at most. scan_rate is at
	 * most POOLMEM_SCAN_RATE_MAX (2^40) and a period at most 60000 ms
	 * (< 2^16): the product fits.
	 */
	n = max_t(u64, div_u64(d->scan_rate * jiffies_to_msecs(pm_tier_period()), MSEC_PER_SEC) >>
		  d->chunk_shift, 1);
	n = min(n, d->nr_chunks);
	nm = min_t(u64, n, PM_TIER_MOVE_MAX);
	mutex_unlock(&d->lock);
	if (mode == POOLMEM_TIERING_OFF)
		return;

	promo = kmalloc_array(2 * nm, sizeof(*promo), GFP_KERNEL);
	if (promo) {
		demo = promo + nm;
		mutex_lock(&d->lock);
		present = pm_tier_scan(d, nm, promo, &np, demo, &nd);
		/* a sampled refault stands for the accesses of the chunks not sampled */
		d->access_weight = max_t(u64, div64_u64(present, n), 1);
		mutex_unlock(&d->lock);
		if (mode == POOLMEM_TIERING_ON && np)
			pm_tier_move(d, promo, np, demo, nd, nm);
		pm_rb_domain(d, promo, nm);
		kfree(promo);
	}

	mutex_lock(&d->lock);
	pm_tier_sample(d, n);
	d->scan_ns += ktime_get_ns() - t0;
	if (d->tier_mode != POOLMEM_TIERING_OFF)
		queue_delayed_work(system_unbound_wq, &d->tier_work, pm_tier_period());
	mutex_unlock(&d->lock);
}

/*
 * Set @d's tiering: @mode (POOLMEM_TIERING_*), @scan_rate bytes a second
 * (0: keep; at least one chunk a period), refaults within @hot_ms (0:
 * keep) make a chunk hot. Process context, no lock held. 0 or -ENOMEM.
 */
int pm_tier_set(struct pm_domain *d, u32 mode, u64 scan_rate, u32 hot_ms)
{
	struct pm_heat *heat = NULL;

	if (scan_rate > POOLMEM_SCAN_RATE_MAX)
		return -EINVAL;

	if (mode != POOLMEM_TIERING_OFF && !READ_ONCE(d->heat)) {
		heat = kvcalloc(d->nr_chunks, sizeof(*heat), GFP_KERNEL_ACCOUNT);
		if (!heat)
			return -ENOMEM;
	}
	mutex_lock(&d->lock);
	if (heat && !d->heat) {
		/* the work exists from the first time tiering is on: d->heat says so */
		INIT_DELAYED_WORK(&d->tier_work, pm_tier_workfn);
		d->heat = heat;
		heat = NULL;
	}
	d->tier_mode = mode;
	if (scan_rate)
		d->scan_rate = scan_rate;
	if (hot_ms)
		d->hot_ms = hot_ms;
	if (mode != POOLMEM_TIERING_OFF)
		mod_delayed_work(system_unbound_wq, &d->tier_work, 0);
	mutex_unlock(&d->lock);
	kvfree(heat);
	/* never on before: no work to cancel (it was never initialised) */
	if (mode == POOLMEM_TIERING_OFF && READ_ONCE(d->heat))
		cancel_delayed_work_sync(&d->tier_work);
	return 0;
}

/*
 * The domain's file is going: no more tiering. Process context, no lock
 * held. Nothing sets tiering meanwhile: POOLMEM_DOMAIN_SET holds the inode.
 */
void pm_tier_stop(struct pm_domain *d)
{
	bool was_on;

	mutex_lock(&d->lock);
	d->tier_mode = POOLMEM_TIERING_OFF;
	was_on = d->heat;
	mutex_unlock(&d->lock);
	if (was_on)
		cancel_delayed_work_sync(&d->tier_work);
}
