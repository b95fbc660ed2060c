// SPDX-License-Identifier: GPL-2.0
/*
 * POOLMEM_DOMAIN_SET: a live domain's quotas, pools, policies and tiering
 * change, and the chunks that can't stay where they are move (move.c).
 * The steps: check the arguments; the domain as it would be, checked as at
 * creation; admission again; room for what must move; apply; move; tiering.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/bitops.h>
#include <linux/delay.h>
#include <linux/mm.h>
#include <linux/sched/signal.h>
#include <linux/string.h>

#include "poolmem.h"

/*
 * Does @d still hold chunks where its settings say they can't stay (a
 * tier's usage above its committed quota, chunks on pools outside its
 * pool_mask)? Caller holds d->lock.
 */
static bool pm_set_pending(struct pm_domain *d)
	__must_hold(&d->lock)
{
	return d->usage[PM_TIER_LOCAL] > d->committed[PM_TIER_LOCAL] ||
	       d->usage[PM_TIER_POOL] > d->committed[PM_TIER_POOL] || pm_domain_outside_bytes(d);
}


/*
 * How well chunk @idx suits leaving tier @tier for the other in a shrink:
 * 2 best, 0 worst. Once tiering has sampled the domain, a shrunk local
 * tier gives up its cold chunks first and its hot ones last, and a shrunk
 * pool tier sends its hot chunks to local first: a quota lowered under a
 * running VM (vm set, the DRAM autopilot) keeps the hot set where it is
 * instead of moving it away for tiering to move back. Without heat every
 * chunk suits. Caller holds d->lock.
 */
static unsigned int pm_set_fit(struct pm_domain *d, u64 idx, u32 tier)
	__must_hold(&d->lock)
{
	const struct pm_heat *h;

	if (!d->heat)
		return 2;
	h = &d->heat[idx];
	if (h->hot)
		return tier == PM_TIER_LOCAL ? 0 : 2;
	if (h->cold)
		return tier == PM_TIER_LOCAL ? 2 : 0;
	return 1;
}

/*
 * Move the chunks of @h that must leave after POOLMEM_DOMAIN_SET: those on
 * pools outside the pool_mask (to the pools left), and chunks of a tier
 * whose usage exceeds its committed quota (to the other tier). The
 * targets are read from the domain each time, so that of two concurrent
 * changes the later one wins. A tier being shrunk keeps a quota of its
 * usage, lowered as its chunks leave (pm_quota_settle()): nothing new
 * lands there meanwhile, and usage never exceeds the quota. Chunks
 * referenced for a moment are retried over about a second. When only
 * retired chunks (discarded, still referenced elsewhere) are left in the
 * way, they can't move but will go by themselves, and the quota settles
 * then: done. A shrink's walks go from the chunks best suited to leave
 * (pm_set_fit()) to any. With POOLMEM_SET_STEP it returns 0 once
 * move_bytes more have moved. Returns 0 or the error that stopped it.
 */
static int pm_set_move(struct pm_held *h, struct pm_set_req *a)
{
	const u64 stop = (a->flags & POOLMEM_SET_STEP) ? a->moved_bytes + a->move_bytes : U64_MAX;
	struct pm_domain *d = h->d;
	unsigned int pass = 0, fit = 2;
	bool pending;
	u64 idx;
	int ret;

	while (pass < 50) {
		bool movable = false, passed_over = false;

		for (idx = 0; idx < d->nr_chunks; idx++) {
			struct pm_chunk_meta *meta = &d->meta[idx];
			bool move = false;
			u32 tier = 0;
			u8 from = 0;

			if (!(idx & 1023))
				cond_resched();
			mutex_lock(&d->lock);
			pending = pm_set_pending(d);
			if (pending && meta->present) {
				from = meta->pool;
				tier = meta->tier;
				if (d->usage[tier] > d->committed[tier]) {
					/* shrink: to the other tier, the best suited first */
					move = pm_set_fit(d, idx, tier) >= fit;
					passed_over = !move;
					tier = !tier;
				} else if (from != PM_POOL_NONE && !(d->pool_mask & BIT_ULL(from))) {
					move = true;	/* off a pool taken out of the mask */
				}
			}
			mutex_unlock(&d->lock);
			if (!pending)
				return 0;
			if (!move)
				continue;
			if (a->moved_bytes >= stop)
				return 0;	/* this step's share moved */
			movable = true;
			if (signal_pending(current))
				return -EINTR;
			ret = pm_chunk_move(d, h->inode, idx, from, tier);
			if (!ret)
				a->moved_bytes += d->chunk_bytes;
			else if (ret != -EAGAIN && ret != -EINPROGRESS && ret != -ENOENT)
				return ret;
			cond_resched();
		}
		if (passed_over && fit) {
			fit--;	/* the next walk takes chunks less suited too */
			continue;
		}
		if (!movable)
			return 0;	/* only retired chunks in the way */
		msleep(20);	/* chunks still referenced or busy: give them a moment */
		pass++;
	}
	return -EAGAIN;
}

/*
 * The domain @d as @a would make it, in @c (as POOLMEM_DOMAIN_CREATE
 * takes it), and the pools its pool quota may use in @mask; checked as at
 * creation. Caller holds pm_lock. 0, -EINVAL or -ENOSPC (a pool quota and
 * no pool).
 */
static int pm_set_proposal(struct pm_domain *d, const struct pm_set_req *a,
			   struct pm_domain_spec *c, u64 *mask)
{
	u64 registered = 0;
	int i;

	/*
	 * zNUMA windows are the quotas, and a window's chunks stay in its
	 * tier: the guest was told which node is which.
	 */
	if (d->znuma && (a->flags & (POOLMEM_SET_QUOTA | POOLMEM_SET_TIER_POLICY) ||
			 (a->flags & POOLMEM_SET_TIERING && a->tiering != POOLMEM_TIERING_OFF))) {
		pr_warn_ratelimited("domain %s: set refused: a znuma domain's windows (quotas, tier policy) are fixed and it has no tiering\n",
				    d->name);
		return -EINVAL;
	}
	for (i = 0; i < POOLMEM_MAX_POOLS; i++)
		if (pm_pools[i])
			registered |= BIT_ULL(i);

	memset(c, 0, sizeof(*c));
	memcpy(c->name, d->name, POOLMEM_NAME_MAX);
	c->flags = d->pinnable ? POOLMEM_DOMAIN_PINNABLE : 0;
	c->bytes = d->size;
	c->chunk_bytes = d->chunk_bytes;
	c->home_node = d->home_node;
	mutex_lock(&d->lock);
	/* the quotas as committed: a shrink in progress shows larger ones */
	memcpy(c->quota, d->committed, sizeof(c->quota));
	c->pool_mask = d->pool_mask;
	c->tier_policy = d->tier_policy;
	c->pool_select = d->pool_select;
	mutex_unlock(&d->lock);
	if (a->flags & POOLMEM_SET_QUOTA)
		memcpy(c->quota, a->quota, sizeof(c->quota));
	if (a->flags & POOLMEM_SET_POOL_MASK)
		c->pool_mask = a->pool_mask;
	if (a->flags & POOLMEM_SET_TIER_POLICY)
		c->tier_policy = a->tier_policy;
	if (a->flags & POOLMEM_SET_POOL_SELECT)
		c->pool_select = a->pool_select;
	if (c->quota[0] > c->bytes || c->quota[1] > c->bytes || c->quota[0] + c->quota[1] < c->bytes ||
	    (c->quota[0] | c->quota[1]) & (c->chunk_bytes - 1) ||
	    c->tier_policy >= POOLMEM_NR_TIER_POLICIES || c->pool_select >= POOLMEM_NR_POOL_SELECTS ||
	    c->pool_mask & ~registered) {
		pr_info_ratelimited("POOLMEM_DOMAIN_SET: domain %s: quotas must be chunk multiples, each at most the size and together at least it; policies and pools must exist\n",
				    d->name);
		return -EINVAL;
	}
	*mask = c->quota[PM_TIER_POOL] ? (c->pool_mask ? c->pool_mask : registered) : 0;
	if (c->quota[PM_TIER_POOL] && !*mask) {
		pr_info_ratelimited("POOLMEM_DOMAIN_SET: domain %s: a pool quota but no pool registered\n",
				    d->name);
		return -ENOSPC;
	}
	return 0;
}

/*
 * What must move for @c (to the pools of @mask, or to the home node) has
 * to fit where it may go: -ENOSPC with the figures in @a otherwise.
 * Caller holds pm_lock.
 */
static int pm_set_room(struct pm_domain *d, const struct pm_domain_spec *c, u64 mask,
		       struct pm_set_req *a)
{
	u64 to_pools, to_local, room;
	bool pools;
	int i;

	mutex_lock(&d->lock);
	to_local = d->usage[PM_TIER_POOL] > c->quota[PM_TIER_POOL] ?
		   d->usage[PM_TIER_POOL] - c->quota[PM_TIER_POOL] : 0;
	to_pools = d->usage[PM_TIER_LOCAL] > c->quota[PM_TIER_LOCAL] ?
		   d->usage[PM_TIER_LOCAL] - c->quota[PM_TIER_LOCAL] : 0;
	for (i = 0; i < POOLMEM_MAX_POOLS; i++)
		if (!(mask & BIT_ULL(i)))
			to_pools += d->chunks_per_pool[i] * d->chunk_bytes;
	to_pools = to_pools > to_local ? to_pools - to_local : 0; /* going local anyway */
	mutex_unlock(&d->lock);
	room = pm_pools_free(mask);
	if (to_pools <= room && to_local <= pm_node_free_bytes(d->home_node))
		return 0;
	pools = to_pools > room;
	a->need_bytes = pools ? to_pools : to_local;
	a->room_bytes = pools ? room : pm_node_free_bytes(d->home_node);
	pr_info("POOLMEM_DOMAIN_SET: domain %s: %llu MiB must move to %s, which %s %llu MiB free\n",
		d->name, a->need_bytes >> 20, pools ? "its pools" : "its home node",
		pools ? "have" : "has", a->room_bytes >> 20);
	return -ENOSPC;
}

/*
 * Make @c the domain's settings: the pools' commitment moves, the
 * policies change at once, a tier's quota comes down to @c's as its
 * chunks leave (pm_quota_settle()). Returns whether chunks must move.
 * Caller holds pm_lock.
 */
/* Whether @c changes what @d commits (its admission bucket). Caller holds pm_lock. */
static bool pm_set_recommits(const struct pm_domain *d, const struct pm_domain_spec *c, u64 mask)
{
	return memcmp(d->committed, c->quota, sizeof(d->committed)) || d->pool_mask != mask;
}

static bool pm_set_apply(struct pm_domain *d, const struct pm_domain_spec *c, u64 mask,
			 struct pm_commit **spare)
{
	bool pending, recommit = pm_set_recommits(d, c, mask);
	u64 m, removed;
	int t;

	if (recommit)
		pm_commit_del(d);
	for (m = d->pool_mask; m; m &= m - 1) {
		pm_pools[__ffs64(m)]->users--;
		pm_pools[__ffs64(m)]->committed -= d->committed[PM_TIER_POOL];
	}
	for (m = mask; m; m &= m - 1) {
		pm_pools[__ffs64(m)]->users++;
		pm_pools[__ffs64(m)]->committed += c->quota[PM_TIER_POOL];
	}
	removed = d->pool_mask & ~mask;
	mutex_lock(&d->lock);
	memcpy(d->committed, c->quota, sizeof(d->committed));
	d->pool_mask = mask;
	d->tier_policy = c->tier_policy;
	d->pool_select = c->pool_select;
	for (t = 0; t < PM_NR_TIERS; t++)
		d->quota[t] = max(c->quota[t], d->usage[t]);
	pending = pm_set_pending(d);
	mutex_unlock(&d->lock);
	if (recommit) {
		pm_commit_add(d, spare);
		pm_commit_verify();
	}
	/*
	 * A chunk being placed or moved may be on its way to a pool just
	 * taken out of the mask, which nothing else keeps registered now.
	 */
	if (removed)
		pm_domain_quiesce(d);
	pr_info("domain %s: quota local %llu MiB pool %llu MiB, %u pools, %s, %s\n", d->name,
		c->quota[0] >> 20, c->quota[1] >> 20, (unsigned int)hweight64(mask),
		pm_tier_policy_names[c->tier_policy], pm_pool_select_names[c->pool_select]);
	return pending;
}

/*
 * Move what must move of the held domain @h (at most a step with
 * POOLMEM_SET_STEP), then say in @a how much is left. Returns 0 or the
 * error that stopped the moves.
 */
static int pm_set_finish(struct pm_held *h, struct pm_set_req *a, bool pending)
{
	struct pm_domain *d = h->d;
	int ret;

	ret = pending ? pm_set_move(h, a) : 0;
	mutex_lock(&d->lock);
	a->remaining_bytes = pm_domain_moves_pending(d);
	mutex_unlock(&d->lock);
	if (ret)
		pr_info("domain %s: settings applied, but chunks could not all move (%d); tiers stay at their usage until done\n",
			d->name, ret);
	return ret;
}

/*
 * POOLMEM_SET_STEP alone: go on with the moves an earlier change left.
 * Nothing is checked again: the settings are those already applied.
 */
static int pm_set_resume(struct pm_set_req *a)
{
	struct pm_held h = {};
	bool pending;
	int ret;

	mutex_lock(&pm_lock);
	h.d = pm_domain_find_live(a->name);
	if (h.d)
		h.inode = pm_domain_hold(h.d);
	mutex_unlock(&pm_lock);
	if (!h.d)
		return -ENOENT;
	if (!h.inode)
		return 0;	/* its file is being evicted: nothing left to move */
	mutex_lock(&h.d->lock);
	pending = pm_set_pending(h.d);
	mutex_unlock(&h.d->lock);
	ret = pm_set_finish(&h, a, pending);
	pm_domain_release_held(&h);
	return ret;
}

/*
 * POOLMEM_DOMAIN_SET on the live domain @a->name. Returns 0 once the
 * settings apply and every chunk that had to move did (or, with
 * POOLMEM_SET_STEP, a step's worth: remaining_bytes says what is left);
 * -EINVAL, -ENOENT, -ENOSPC (admission, or no room for what must move: @a
 * says how much) before anything changed; or, after the settings applied,
 * the error that stopped the moves (the tiers then stay at their usage
 * until done).
 */
int pm_domain_set(struct pm_set_req *a)
{
	struct pm_domain_spec c;
	struct pm_commit *spare = NULL;
	struct pm_held h = {};
	struct pm_domain *d;
	bool pending;
	u64 mask;
	int ret;

	if (a->flags == POOLMEM_SET_STEP)
		return pm_set_resume(a);
	mutex_lock(&pm_lock);
	d = pm_domain_find_live(a->name);
	ret = d ? pm_set_proposal(d, a, &c, &mask) : -ENOENT;
	/* admission again only if quotas or pools change */
	if (!ret && (a->flags & (POOLMEM_SET_QUOTA | POOLMEM_SET_POOL_MASK)))
		ret = pm_admit(&c, mask, d, "POOLMEM_DOMAIN_SET", NULL);
	if (!ret)
		ret = pm_set_room(d, &c, mask, a);
	/* in case the domain's new (node, pools) bucket is new: nothing can fail once applying */
	if (!ret && !(a->flags & POOLMEM_SET_CHECK) && pm_set_recommits(d, &c, mask)) {
		spare = pm_commit_alloc();
		ret = spare ? 0 : -ENOMEM;
	}
	if (ret || (a->flags & POOLMEM_SET_CHECK)) {
		mutex_unlock(&pm_lock);
		return ret;	/* POOLMEM_SET_CHECK: it would apply now */
	}
	pending = pm_set_apply(d, &c, mask, &spare);
	h.d = d;
	h.inode = pm_domain_hold(d);
	mutex_unlock(&pm_lock);
	kfree(spare);
	if (!h.inode)
		return 0;	/* its file is being evicted: nothing left to move */

	ret = pm_set_finish(&h, a, pending);
	/* the tiering worker runs only while the file exists: it is held here */
	if (!ret && (a->flags & POOLMEM_SET_TIERING))
		ret = pm_tier_set(d, a->tiering, a->scan_rate, a->hot_ms);
	pm_domain_release_held(&h);
	return ret;
}
