// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem domains: lifetime and admission control.
 *
 * A domain is created (pm_domain_new: checked, admitted, listed), then
 * given its file and sysfs directory (pm_domain_register). The file's inode
 * owns one reference; retired chunks and sysfs or ioctl readers take more.
 * Unlinking a named domain, or evicting any domain's inode, unlists it;
 * the last reference returns its memory and its admission commitment
 * (pm_domain_release).
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/cred.h>
#include <linux/log2.h>
#include <linux/mm.h>
#include <linux/module.h>
#include <linux/nodemask.h>
#include <linux/random.h>
#include <linux/sched.h>
#include <linux/slab.h>
#include <linux/stringhash.h>
#include <linux/vmalloc.h>
#include <linux/workqueue.h>

#include "poolmem.h"

struct class *pm_class;
/* profiles whose directory exists (fs.c); pm_lock */
LIST_HEAD(pm_profiles);

/*
 * The next domain id to try (pm_lock). Ids are handed out cyclically from
 * 1 (xa_alloc_cyclic), not lowest-free first: a memory error record keeps
 * the id of the domain that lost the page, and a domain made later under
 * the same name must not be taken for it (it has another id until the
 * 32-bit counter wraps).
 */
static u32 pm_domain_next_id = 1;

/* pm_domain.lock's lockdep class: one for all domains (main.c's order) */
static struct lock_class_key pm_domain_lock_key;

/*
 * Read without pm_lock by admission, which holds it: a write that races
 * with an admission decides whether that one domain sees the old or the
 * new limit, as with any later write.
 */
unsigned int pm_local_overcommit_pct = 100;
PM_PARAM_UINT_RANGE(local_overcommit_pct, pm_local_overcommit_pct, 1, 1000, 0644);
MODULE_PARM_DESC(local_overcommit_pct,
		 "Local-tier admission limit: home node memory * pct / 100, 1..1000 (default 100)");

/* The default home node: the first node with CPUs and memory. */
int pm_first_cpu_node(void)
{
	int nid;

	for_each_node_state(nid, N_CPU)
		if (node_state(nid, N_MEMORY))
			return nid;
	return NUMA_NO_NODE;
}

/* ---- profiles: references and lookup (their directories are fs.c's) ---- */

/* any context: the last reference may go in an inode's eviction */
static void pm_profile_free(struct kref *ref)
{
	struct pm_profile *pr = container_of(ref, struct pm_profile, ref);

	pm_profile_sysfs_put(pr);
	kfree(pr);
}

void pm_profile_put(struct pm_profile *pr)
{
	kref_put(&pr->ref, pm_profile_free);
}

/* Caller holds pm_lock. Only profiles whose directory exists are found. */
struct pm_profile *pm_profile_find(const char *name)
{
	struct pm_profile *pr;

	list_for_each_entry(pr, &pm_profiles, list)
		if (!strncmp(pr->conf.name, name, POOLMEM_NAME_MAX))
			return pr;
	return NULL;
}

static u32 pm_name_hash(const char *name)
{
	return full_name_hash(NULL, name, strnlen(name, POOLMEM_NAME_MAX));
}

/*
 * Caller holds pm_lock. Dead domains are not found; domains still being
 * made (no file yet) are, so their names stay taken.
 */
struct pm_domain *pm_domain_find(const char *name)
{
	struct pm_domain *d;

	hash_for_each_possible(pm_domain_names, d, hnode, pm_name_hash(name))
		if (!d->dead && !strncmp(d->name, name, POOLMEM_NAME_MAX))
			return d;
	return NULL;
}

/* As pm_domain_find(), only domains complete with their file (d->inode valid). */
struct pm_domain *pm_domain_find_live(const char *name)
{
	struct pm_domain *d = pm_domain_find(name);

	return d && d->registered ? d : NULL;
}

/*
 * What the listed domains commit, summed per (home node, pool set): the
 * figures of admission without a walk of every domain. A host runs
 * thousands of domains from a handful of profiles, so there are few
 * buckets, and pm_admit() adds those up. A listed domain counts in the
 * bucket of its home node and pool_mask with its committed quotas; whoever
 * changes those takes it out first and puts it back after
 * (pm_commit_del(), pm_commit_add()), under pm_lock, which protects the
 * buckets. Debug kernels (CONFIG_DEBUG_VM) check the sums against a walk.
 */
struct pm_commit {
	struct list_head list;		/* pm_commits */
	int node;			/* home node */
	u64 mask;			/* pool_mask */
	u64 local, pin_local;		/* committed local quotas; of pinnable domains */
	u64 pool, pin_pool;		/* committed pool quotas; of pinnable domains */
	unsigned long domains;
};

static LIST_HEAD(pm_commits);

/* A bucket for pm_commit_add() to use if it needs a new one; NULL if no memory. */
struct pm_commit *pm_commit_alloc(void)
{
	return pm_should_fail(sizeof(struct pm_commit)) ? NULL :
	       kzalloc(sizeof(struct pm_commit), GFP_KERNEL);
}

static struct pm_commit *pm_commit_find(int node, u64 mask)
{
	struct pm_commit *c;

	list_for_each_entry(c, &pm_commits, list)
		if (c->node == node && c->mask == mask)
			return c;
	return NULL;
}

/* Add (@sign 1) or take away (-1) what @d commits to bucket @c. */
static void pm_commit_count(struct pm_commit *c, const struct pm_domain *d, int sign)
{
	u64 local = d->committed[PM_TIER_LOCAL], pool = d->committed[PM_TIER_POOL];

	c->local += sign * local;
	c->pool += sign * pool;
	if (d->pinnable) {
		c->pin_local += sign * local;
		c->pin_pool += sign * pool;
	}
	c->domains += sign;
}

/*
 * Walk every domain and compare with the buckets (debug kernels only: it
 * is the O(domains) walk the buckets replace).
 */
void pm_commit_verify(void)
{
	struct pm_commit *c, sum;
	struct pm_domain *d;

	unsigned long listed = 0, counted = 0;

	if (!IS_ENABLED(CONFIG_DEBUG_VM))
		return;
	lockdep_assert_held(&pm_lock);
	list_for_each_entry(d, &pm_domains, list)
		listed++;
	list_for_each_entry(c, &pm_commits, list)
		counted += c->domains;
	WARN_ONCE(listed != counted, "poolmem: committed quotas of %lu domains in buckets, %lu listed\n",
		  counted, listed);
	list_for_each_entry(c, &pm_commits, list) {
		memset(&sum, 0, sizeof(sum));
		list_for_each_entry(d, &pm_domains, list)
			if (d->home_node == c->node && d->pool_mask == c->mask)
				pm_commit_count(&sum, d, 1);
		WARN_ONCE(sum.local != c->local || sum.pin_local != c->pin_local || sum.pool != c->pool ||
			  sum.pin_pool != c->pin_pool || sum.domains != c->domains || !c->domains,
			  "poolmem: committed quotas of node %d pools %#llx: %lu domains, walk %lu\n",
			  c->node, c->mask, c->domains, sum.domains);
	}
}

/*
 * Count @d (listed, or being listed) in its bucket: an existing one, or
 * *@spare, which then belongs to the list (*@spare set to NULL); a new
 * bucket needs a spare. Caller holds pm_lock.
 */
void pm_commit_add(const struct pm_domain *d, struct pm_commit **spare)
{
	struct pm_commit *c;

	lockdep_assert_held(&pm_lock);
	c = pm_commit_find(d->home_node, d->pool_mask);

	if (!c) {
		c = *spare;
		*spare = NULL;
		c->node = d->home_node;
		c->mask = d->pool_mask;
		list_add_tail(&c->list, &pm_commits);
	}
	pm_commit_count(c, d, 1);
}

/* Take @d out of its bucket, freed when empty. Caller holds pm_lock. */
void pm_commit_del(const struct pm_domain *d)
{
	struct pm_commit *c;

	lockdep_assert_held(&pm_lock);
	c = pm_commit_find(d->home_node, d->pool_mask);

	if (WARN_ON_ONCE(!c))
		return;
	pm_commit_count(c, d, -1);
	if (!c->domains) {
		list_del(&c->list);
		kfree(c);
	}
}

/*
 * Pool @id left the pool_mask of every domain (pm_pool_detach()): the
 * buckets' masks too, merging those that become one. Needs no memory.
 * Caller holds pm_lock.
 */
void pm_commit_drop_pool(unsigned int id)
{
	struct pm_commit *c, *o, *tmp;

	list_for_each_entry(c, &pm_commits, list)
		c->mask &= ~BIT_ULL(id);
	list_for_each_entry(c, &pm_commits, list) {
		o = list_next_entry(c, list);
		list_for_each_entry_safe_from(o, tmp, &pm_commits, list) {
			if (o->node != c->node || o->mask != c->mask)
				continue;
			c->local += o->local;
			c->pin_local += o->pin_local;
			c->pool += o->pool;
			c->pin_pool += o->pin_pool;
			c->domains += o->domains;
			list_del(&o->list);
			kfree(o);
		}
	}
	pm_commit_verify();
}

/*
 * The first pool set, among those whose domains commit pool quota and
 * may use pool @id, that holds (at the pools' limits of now) less than
 * the pool quotas of every domain sharing a pool with it: pm_admit()'s
 * rule for the pool tier applied again. Fills @r with its figures. NULL
 * if all hold. Caller holds pm_lock.
 */
const struct pm_commit *pm_commit_overcommitted(unsigned int id, struct pm_refusal *r)
{
	struct pm_commit *c, *o;
	u64 m;

	list_for_each_entry(c, &pm_commits, list) {
		u64 pool = 0, pin_pool = 0, limit = 0, pin_limit = 0;

		if (!(c->mask & BIT_ULL(id)) || !c->pool)
			continue;
		list_for_each_entry(o, &pm_commits, list) {
			if (o->mask & c->mask) {
				pool += o->pool;
				pin_pool += o->pin_pool;
			}
		}
		for (m = c->mask; m; m &= m - 1) {
			limit += pm_pool_limit(pm_pools[__ffs64(m)], false);
			pin_limit += pm_pool_limit(pm_pools[__ffs64(m)], true);
		}
		if (pool > limit) {
			*r = (struct pm_refusal){ POOLMEM_REFUSED_POOL, pool, limit };
			return c;
		}
		/* a pinnable domain with pool quota here: its chunks stay outside ZONE_MOVABLE */
		if (c->pin_pool && pin_pool > pin_limit) {
			*r = (struct pm_refusal){ POOLMEM_REFUSED_POOL_PINNABLE, pin_pool, pin_limit };
			return c;
		}
	}
	return NULL;
}

/* Whether @d counts in bucket @c (and, for a pinnable refusal, is pinnable with pool quota). */
bool pm_commit_holds(const struct pm_commit *c, const struct pm_domain *d, const struct pm_refusal *r)
{
	return d->home_node == c->node && d->pool_mask == c->mask && d->committed[PM_TIER_POOL] &&
	       (r->why != POOLMEM_REFUSED_POOL_PINNABLE || d->pinnable);
}

/*
 * The last reference is gone: no file, no mapping, no retired chunk, no
 * sysfs reader. Return every chunk, the admission commitment, the profile
 * and the module reference. Process context, pm_lock not held.
 */
static void pm_domain_release(struct device *dev)
{
	struct pm_domain *d = to_domain(dev);
	bool listed = !list_empty(&d->list);
	u64 idx, mask;

	if (d->meta) {
		for (idx = 0; idx < d->nr_chunks; idx++) {
			if (d->meta[idx].present)
				pm_chunk_free(d, idx);
			cond_resched();	/* multi-TiB domains have a million chunks */
		}
	}

	if (listed) {
		mutex_lock(&pm_lock);
		for (mask = d->pool_mask; mask; mask &= mask - 1) {
			struct pm_pool *p = pm_pools[__ffs64(mask)];

			p->users--;
			p->committed -= d->committed[PM_TIER_POOL];
		}
		pm_commit_del(d);
		list_del(&d->list);
		hash_del(&d->hnode);
		pm_commit_verify();
		xa_erase(&pm_domain_ids, d->id);
		/* counted before the profile's counts may go from sysfs */
		pm_count(d->profile, destroyed, 1);
		if (d->profile)
			pm_profile_sysfs_drop(d->profile);
		mutex_unlock(&pm_lock);
		pr_info("domain %s: memory returned\n", d->name);
	}
	if (d->profile) {
		atomic64_dec(&d->profile->domains);
		pm_profile_put(d->profile);
	}
	kfree(d->path);
	kvfree(d->heat);
	kvfree(d->units);
	kvfree(d->meta);
	xa_destroy(&d->poison);
	kfree(d);
	module_put(THIS_MODULE);
}

static const struct device_type pm_domain_type = {
	.name = "poolmem_domain",
	.release = pm_domain_release,
};

/* Admission limit of the local tier on node @nid, as pm_pool_limit() for pools. */
static u64 pm_local_limit(int nid, bool pinnable)
{
	u64 bytes = pinnable ? pm_node_pinnable_bytes(nid) : pm_node_present_bytes(nid);

	return pm_pct_of(bytes, READ_ONCE(pm_local_overcommit_pct));
}

/*
 * Admission control, under pm_lock: the new domain's quotas must fit.
 * Local: the local quotas of all domains homed on the node must fit its
 * memory * local_overcommit_pct. Pools: over the set S of pools the domain
 * may use, the pool quotas of every domain allowed on any pool of S plus
 * the new one must fit the sum of S's limits (capacity * overcommit). A
 * pinnable domain must also fit with the other pinnable domains into the
 * memory outside ZONE_MOVABLE, the only memory its chunks can come from.
 * A refusal is logged with the figures, naming @name and @why (who asked).
 * @self, when not NULL, is a live domain whose settings @a would replace
 * (POOLMEM_DOMAIN_SET): its current quotas are left out of the sums.
 */
int pm_admit(const struct pm_domain_spec *a, u64 mask, const struct pm_domain *self,
	     const char *why, struct pm_refusal *refusal)
{
	bool pin = a->flags & POOLMEM_DOMAIN_PINNABLE;
	u64 local = a->quota[PM_TIER_LOCAL], pool = a->quota[PM_TIER_POOL];
	u64 pin_local = local, pin_pool = pool, limit = 0, pin_limit = 0, lim;
	struct pm_refusal r = { .why = POOLMEM_REFUSED_NONE };
	struct pm_commit *c, mine = {};
	u64 m;

	list_for_each_entry(c, &pm_commits, list) {
		if (c->node == a->home_node) {
			local += c->local;
			pin_local += c->pin_local;
		}
		if (c->mask & mask) {
			pool += c->pool;
			pin_pool += c->pin_pool;
		}
	}
	/* @self's present settings count in its bucket: not against the new ones */
	if (self) {
		pm_commit_count(&mine, self, 1);
		if (self->home_node == a->home_node) {
			local -= mine.local;
			pin_local -= mine.pin_local;
		}
		if (self->pool_mask & mask) {
			pool -= mine.pool;
			pin_pool -= mine.pin_pool;
		}
	}
	lim = pm_local_limit(a->home_node, false);
	if (local > lim) {
		r = (struct pm_refusal){ POOLMEM_REFUSED_LOCAL, local - a->quota[PM_TIER_LOCAL], lim };
		pr_warn_ratelimited("%s: domain %s refused: local quota %llu MiB + %llu MiB committed on node %d exceeds %llu MiB (node memory x %u%%)\n",
			why, a->name, a->quota[PM_TIER_LOCAL] >> 20, r.committed >> 20,
			a->home_node, lim >> 20, READ_ONCE(pm_local_overcommit_pct));
		goto refused;
	}
	if (pin && a->quota[PM_TIER_LOCAL]) {
		lim = pm_local_limit(a->home_node, true);
		if (pin_local > lim) {
			r = (struct pm_refusal){ POOLMEM_REFUSED_LOCAL_PINNABLE,
						 pin_local - a->quota[PM_TIER_LOCAL], lim };
			pr_warn_ratelimited("%s: domain %s refused: pinnable local quota %llu MiB + %llu MiB committed exceeds %llu MiB of node %d outside ZONE_MOVABLE\n",
				why, a->name, a->quota[PM_TIER_LOCAL] >> 20, r.committed >> 20,
				lim >> 20, a->home_node);
			goto refused;
		}
	}
	if (!a->quota[PM_TIER_POOL])
		return 0;
	for (m = mask; m; m &= m - 1) {
		const struct pm_pool *p = pm_pools[__ffs64(m)];

		limit += pm_pool_limit(p, false);
		if (pin)
			pin_limit += pm_pool_limit(p, true);
	}
	if (pool > limit) {
		r = (struct pm_refusal){ POOLMEM_REFUSED_POOL, pool - a->quota[PM_TIER_POOL], limit };
		pr_warn_ratelimited("%s: domain %s refused: pool quota %llu MiB + %llu MiB committed exceeds %llu MiB (capacity x overcommit of %u allowed pools)\n",
			why, a->name, a->quota[PM_TIER_POOL] >> 20, r.committed >> 20,
			limit >> 20, (unsigned int)hweight64(mask));
		goto refused;
	}
	if (pin && pin_pool > pin_limit) {
		r = (struct pm_refusal){ POOLMEM_REFUSED_POOL_PINNABLE,
					 pin_pool - a->quota[PM_TIER_POOL], pin_limit };
		pr_warn_ratelimited("%s: domain %s refused: pinnable pool quota %llu MiB + %llu MiB committed exceeds %llu MiB of pool memory outside ZONE_MOVABLE\n",
			why, a->name, a->quota[PM_TIER_POOL] >> 20, r.committed >> 20,
			pin_limit >> 20);
		goto refused;
	}
	return 0;

refused:
	if (refusal) {
		*refusal = r;
		refusal->node = a->home_node;
	}
	return -ENOSPC;
}

/*
 * Check and complete a create request (defaults filled in). Returns NULL,
 * or which check failed, for the one log line a refusal gets (-EINVAL).
 * What depends on the registered pools is checked under pm_lock later.
 */
static const char *pm_domain_check(struct pm_domain_spec *a)
{
	enum pm_geometry geo;

	if (!pm_name_valid(a->name, POOLMEM_NAME_MAX))
		return "invalid name";
	if (a->chunk_bytes == 0)
		a->chunk_bytes = PM_CHUNK_MIN;
	geo = pm_domain_geometry(a->bytes, a->chunk_bytes, a->quota);
	if (geo != PM_GEO_OK)
		return pm_geometry_names[geo];
	if (a->tier_policy >= POOLMEM_NR_TIER_POLICIES)
		return "unknown tier policy";
	if (a->pool_select >= POOLMEM_NR_POOL_SELECTS)
		return "unknown pool selection";
	/* the windows are the tiers' quotas: they must split the size exactly */
	if ((a->flags & POOLMEM_DOMAIN_ZNUMA) &&
	    (!a->quota[PM_TIER_LOCAL] || !a->quota[PM_TIER_POOL] ||
	     a->quota[PM_TIER_LOCAL] + a->quota[PM_TIER_POOL] != a->bytes))
		return "znuma: the local and pool quotas must add up to the size, neither 0";
	if (a->home_node == NUMA_NO_NODE)
		a->home_node = pm_first_cpu_node();
	if (a->home_node < 0 || a->home_node >= MAX_NUMNODES || !node_online(a->home_node) ||
	    !node_state(a->home_node, N_MEMORY))
		return "home node offline or without memory";
	return NULL;
}

/*
 * The create request for a domain made from profile @pr by a file sized
 * @size bytes. The name is left for the caller.
 *
 * In a znuma profile that file is the local window: the domain is @size
 * plus a pool window in the ratio of the profile's percentages, which
 * must come out exact and a multiple of the chunk size (-EINVAL, with
 * the reason in @why's log line, otherwise).
 */
int pm_profile_fill_create(const struct pm_profile *pr, u64 size, struct pm_domain_spec *a,
			   const char *why)
{
	const struct poolmem_profile *c = &pr->conf;
	u64 chunk = c->chunk_bytes ? c->chunk_bytes : PM_CHUNK_MIN;
	u64 pool;
	int t;

	memset(a, 0, sizeof(*a));
	a->flags = c->flags;
	a->bytes = size;
	a->chunk_bytes = chunk;
	if (c->flags & POOLMEM_DOMAIN_ZNUMA) {
		/* both percentages nonzero and <= 100 (pm_profile_check()) */
		if (size > PM_DOMAIN_MAX_BYTES ||
		    size * c->quota_pct[PM_TIER_POOL] % c->quota_pct[PM_TIER_LOCAL]) {
			pr_warn("%s: a local window of %llu bytes has no exact %u%% pool window\n",
				why, size, c->quota_pct[PM_TIER_POOL]);
			return -EINVAL;
		}
		pool = size * c->quota_pct[PM_TIER_POOL] / c->quota_pct[PM_TIER_LOCAL];
		if (pool & (chunk - 1) || size + pool > PM_DOMAIN_MAX_BYTES) {
			pr_warn("%s: a local window of %llu bytes gives a pool window of %llu, not a multiple of the chunk size %llu or too large\n",
				why, size, pool, chunk);
			return -EINVAL;
		}
		a->bytes = size + pool;
		a->quota[PM_TIER_LOCAL] = size;
		a->quota[PM_TIER_POOL] = pool;
		goto policies;
	}
	for (t = 0; t < PM_NR_TIERS; t++)
		a->quota[t] = pm_profile_quota(size, chunk, c->quota_pct[t], c->quota_bytes[t]);
policies:
	a->pool_mask = c->pool_mask;
	a->home_node = c->home_node;
	a->tier_policy = c->tier_policy;
	a->pool_select = c->pool_select;
	return 0;
}

/*
 * A new domain from @arg: checked, admitted (pm_lock), listed, committed.
 * @profile (may be NULL) gets a reference for the domain. @why names the
 * requester in log lines. Returns the domain, holding one reference for
 * the caller (to be handed to the domain's file by pm_domain_register(),
 * or dropped by pm_domain_abandon()), or an ERR_PTR: -EINVAL for a bad
 * request, -EEXIST for a name in use, -ENOSPC when it does not fit. With
 * POOLMEM_DOMAIN_CHECK in @arg's flags nothing is made: NULL if it would
 * be, and a refusal is not counted.
 */
/*
 * The round-robin cursor's start (pm_rr_cursor_start(), PM_RR_START_MODULE):
 * this host's count of domains made, plus a salt drawn once per module load
 * so that hosts sharing pools start on different ones. With every cursor
 * at 0, every VM's first pool chunks (its hot ones) share the same pools:
 * the simulator's round-robin p99 grew 25-100 fold on three seeds of eight
 * (Documentation/simulation.md).
 */
static atomic_t pm_domain_seq = ATOMIC_INIT(0);
static u32 pm_rr_salt;

static u32 pm_domain_rr_start(void)
{
	get_random_once(&pm_rr_salt, sizeof(pm_rr_salt));
	return pm_rr_cursor_start(PM_RR_START_MODULE, (u32)atomic_inc_return(&pm_domain_seq) - 1,
				  pm_rr_salt, get_random_u32());
}

/* A new domain's struct, filled from @a (checked); NULL without memory. */
static struct pm_domain *pm_domain_alloc(const struct pm_domain_spec *a)
{
	struct pm_domain *d = pm_should_fail(sizeof(*d)) ? NULL : kzalloc(sizeof(*d), GFP_KERNEL);

	if (!d)
		return NULL;
	INIT_LIST_HEAD(&d->list);
	INIT_LIST_HEAD(&d->linger);
	mutex_init(&d->lock);
	/* a name of its own in lockdep's reports and /proc/lockdep */
	lockdep_set_class_and_name(&d->lock, &pm_domain_lock_key, "pm_domain.lock");
	xa_init(&d->poison);
	memcpy(d->name, a->name, POOLMEM_NAME_MAX);
	d->size = a->bytes;
	d->chunk_bytes = a->chunk_bytes;
	d->chunk_shift = ilog2(a->chunk_bytes);
	d->units_per_chunk = a->chunk_bytes >> PM_UNIT_SHIFT;
	d->nr_chunks = a->bytes >> d->chunk_shift;
	d->quota[PM_TIER_LOCAL] = a->quota[PM_TIER_LOCAL];
	d->quota[PM_TIER_POOL] = a->quota[PM_TIER_POOL];
	memcpy(d->committed, d->quota, sizeof(d->committed));
	d->home_node = a->home_node;
	d->tier_policy = a->tier_policy;
	d->pool_select = a->pool_select;
	d->pinnable = a->flags & POOLMEM_DOMAIN_PINNABLE;
	d->znuma = a->flags & POOLMEM_DOMAIN_ZNUMA;
	d->win_split = d->znuma ? a->quota[PM_TIER_LOCAL] : 0;
	d->creator = task_tgid_vnr(current);
	d->hot_ms = 500;
	d->scan_rate = 64 << 20;
	d->access_weight = 1;
	get_task_comm(d->creator_comm, current);
	return d;
}

/* The ids of the registered pools. Caller holds pm_lock. */
static u64 pm_pools_registered(void)
	__must_hold(&pm_lock)
{
	u64 mask = 0;
	int i;

	for (i = 0; i < POOLMEM_MAX_POOLS; i++)
		if (pm_pools[i])
			mask |= BIT_ULL(i);
	return mask;
}

/*
 * The pools new domain @d may use: @a's allowed pools (each must be
 * registered), or every pool; none without a pool quota. Sets
 * d->pool_mask; caller holds pm_lock. -EINVAL for an allowed pool not
 * registered or a home node that is a pool's; -ENOSPC (a refusal) for a
 * pool quota with no pool.
 */
static int pm_domain_pools(struct pm_domain *d, const struct pm_domain_spec *a, const char *why,
			   struct pm_refusal *refusal)
	__must_hold(&pm_lock)
{
	u64 mask = pm_pools_registered();
	const char *bad = a->pool_mask & ~mask ? "an allowed pool is not registered" :
			  pm_node_pool(a->home_node) ? "home node is a pool's node" : NULL;

	if (bad) {
		pr_info_ratelimited("%s: domain %s refused: %s\n", why, d->name, bad);
		return -EINVAL;
	}
	if (a->pool_mask)
		mask = a->pool_mask;
	if (a->quota[PM_TIER_POOL] && !mask) {
		if (refusal)
			*refusal = (struct pm_refusal){ .why = POOLMEM_REFUSED_NO_POOL };
		pr_warn_ratelimited("%s: domain %s refused: a pool quota of %llu MiB but no pool registered\n",
			why, d->name, a->quota[PM_TIER_POOL] >> 20);
		return -ENOSPC;
	}
	d->pool_mask = a->quota[PM_TIER_POOL] ? mask : 0;
	return 0;
}

/*
 * List admitted domain @d: its id, its round-robin start, its pools'
 * users and commitment, its commit bucket (*@spare if a new one is
 * needed), the lists and the name hash. Caller holds pm_lock. Returns 0
 * or -ENOMEM (no id), with nothing changed.
 */
static int pm_domain_enlist(struct pm_domain *d, struct pm_commit **spare)
	__must_hold(&pm_lock)
{
	int ret;
	u64 m;

	ret = pm_should_fail(0) ? -ENOMEM :
	      xa_alloc_cyclic(&pm_domain_ids, &d->id, d, XA_LIMIT(1, U32_MAX), &pm_domain_next_id,
			      GFP_KERNEL);
	if (ret < 0)
		return ret;
	/* (1: the ids wrapped) */
	/* counted only for domains made: a check or a refusal moves no cursor */
	d->rr_cursor = pm_domain_rr_start();
	for (m = d->pool_mask; m; m &= m - 1) {
		struct pm_pool *p = pm_pools[__ffs64(m)];

		p->users++;
		p->committed += d->committed[PM_TIER_POOL];
	}
	pm_commit_add(d, spare);
	list_add_tail(&d->list, &pm_domains);
	hash_add(pm_domain_names, &d->hnode, pm_name_hash(d->name));
	if (d->profile)
		pm_profile_sysfs_hold(d->profile);
	pm_commit_verify();
	return 0;
}

struct pm_domain *pm_domain_new(const struct pm_domain_spec *arg,
				struct pm_profile *profile, const char *why,
				struct pm_refusal *refusal)
{
	struct pm_domain_spec a = *arg;
	bool check = a.flags & POOLMEM_DOMAIN_CHECK;
	struct pm_commit *spare = NULL;
	const char *bad;
	struct pm_domain *d;
	u64 mask;
	int ret;

	bad = pm_domain_check(&a);
	if (bad) {
		/* %.*s: an invalid name may lack its NUL */
		pr_info_ratelimited("%s: domain %.*s refused: %s\n", why,
				    (int)strnlen(a.name, POOLMEM_NAME_MAX), a.name, bad);
		return ERR_PTR(-EINVAL);
	}

	d = pm_domain_alloc(&a);
	if (!d)
		return ERR_PTR(-ENOMEM);

	if (!try_module_get(THIS_MODULE)) {
		kfree(d);
		return ERR_PTR(-ENODEV);
	}
	if (profile) {
		kref_get(&profile->ref);
		atomic64_inc(&profile->domains);
		d->profile = profile;
	}
	/* from here on, put_device() undoes everything (pm_domain_release) */
	device_initialize(&d->dev);
	d->dev.class = pm_class;
	d->dev.type = &pm_domain_type;
	d->dev.groups = pm_domain_groups;
	ret = dev_set_name(&d->dev, "%s", d->name);
	if (ret)
		goto out_put;

	/*
	 * A first look at admission before the chunk map is allocated (up to
	 * 8 bytes per 2 MiB): whoever may create files in a profile directory
	 * must not make the kernel allocate for requests that can't fit. The
	 * decision is taken again below, with the map allocated.
	 */
	mutex_lock(&pm_lock);
	mask = pm_pools_registered();
	ret = pm_admit(&a, a.quota[PM_TIER_POOL] ? (a.pool_mask ? a.pool_mask & mask : mask) : 0,
		       NULL, why, refusal);
	mutex_unlock(&pm_lock);
	if (ret)
		goto out_put;

	ret = -ENOMEM;
	if (check)
		goto decide;	/* no maps: nothing will be made */
	d->units = kvcalloc(d->nr_chunks * d->units_per_chunk, sizeof(*d->units), GFP_KERNEL_ACCOUNT);
	d->meta = kvcalloc(d->nr_chunks, sizeof(*d->meta), GFP_KERNEL_ACCOUNT);
	spare = pm_commit_alloc();	/* in case its (node, pools) bucket is new */
	if (!d->units || !d->meta || !spare || pm_should_fail(d->nr_chunks))
		goto out_put;

decide:
	mutex_lock(&pm_lock);
	ret = -EEXIST;
	if (pm_domain_find(d->name) || pm_profile_find(d->name))
		goto out_unlock;
	ret = pm_domain_pools(d, &a, why, refusal);
	if (ret)
		goto out_unlock;
	ret = pm_admit(&a, d->pool_mask, NULL, why, refusal);
	if (ret || check)
		goto out_unlock;	/* a check that passed: 0 */
	ret = pm_domain_enlist(d, &spare);
	if (ret)
		goto out_unlock;
	mutex_unlock(&pm_lock);
	kfree(spare);
	pm_count(profile, created, 1);
	return d;

out_unlock:
	mutex_unlock(&pm_lock);
out_put:
	kfree(spare);
	if (ret == -ENOSPC && !check)
		pm_count(profile, refusals, 1);
	put_device(&d->dev);
	return ret ? ERR_PTR(ret) : NULL;
}

/*
 * Give domain @d its file @inode (@path in the file system, NULL for
 * "/<name>") and its sysfs directory. The caller's reference now belongs to
 * the inode (dropped by pm_domain_evict()). Caller holds the inode's lock.
 */
int pm_domain_register(struct pm_domain *d, struct inode *inode, const char *path)
{
	int ret;

	if (pm_should_fail(0))
		return -ENOMEM;
	d->path = path ? kstrdup(path, GFP_KERNEL) : kasprintf(GFP_KERNEL, "/%s", d->name);
	if (!d->path)
		return -ENOMEM;
	mutex_lock(&pm_lock);
	d->inode = inode;
	ret = device_add(&d->dev);
	if (!ret)
		d->registered = true;
	mutex_unlock(&pm_lock);
	if (ret)
		return ret;
	pr_info("domain %s: %llu MiB, chunk %llu KiB, quota local %llu MiB pool %llu MiB, home node %d%s%s%s (%s[%d])\n",
		d->name, d->size >> 20, d->chunk_bytes >> 10, d->quota[PM_TIER_LOCAL] >> 20,
		d->quota[PM_TIER_POOL] >> 20, d->home_node, d->pinnable ? ", pinnable" : "",
		d->profile ? ", profile " : "", d->profile ? d->profile->conf.name : "",
		d->creator_comm, d->creator);
	return 0;
}

/*
 * Take a domain that is not to get (or keep) its file out of sight: dead,
 * no inode, no sysfs directory. The caller may then drop the inode.
 */
void pm_domain_unpublish(struct pm_domain *d)
{
	mutex_lock(&pm_lock);
	d->dead = true;
	d->inode = NULL;
	if (d->registered)
		device_del(&d->dev);
	d->registered = false;
	mutex_unlock(&pm_lock);
}

/* Undo pm_domain_new() for a domain that never got its file. */
void pm_domain_abandon(struct pm_domain *d)
{
	pm_domain_unpublish(d);
	put_device(&d->dev);
}

/* Unlist @d: no longer found by name, no sysfs directory. Caller holds pm_lock. */
static void pm_domain_unlist(struct pm_domain *d)
{
	d->dead = true;
	if (d->registered) {
		/* sysfs readers take d->lock only: no deadlock draining them here */
		device_del(&d->dev);
		d->registered = false;
	}
}

/*
 * A named domain's file was unlinked (destroy): the name is free again at
 * once; open files and mappings keep working, and the memory goes back
 * when the last of them is gone (pm_domain_evict).
 */
void pm_domain_unlink(struct pm_domain *d)
{
	mutex_lock(&pm_lock);
	pm_domain_unlist(d);
	mutex_unlock(&pm_lock);
	pr_info("domain %s: destroyed\n", d->name);
}

/*
 * The domain's inode is being evicted: no open file, no mapping, no name
 * left. Drop the inode's reference; retired chunks may keep the domain
 * (and its charge) a little longer. Process context.
 */
void pm_domain_evict(struct pm_domain *d)
{
	pm_chunk_retire_shared(d);
	mutex_lock(&pm_lock);
	pm_domain_unlist(d);
	d->inode = NULL;
	mutex_unlock(&pm_lock);
	put_device(&d->dev);
}

/*
 * Active superblock references that pm_domain_hold() could not drop under
 * pm_lock, and the worker that drops them (there is one superblock:
 * get_tree_single()). Flushed at module exit (pm_domain_exit_sb()).
 */
static atomic_t pm_sb_puts = ATOMIC_INIT(0);
static struct super_block *pm_sb_put_sb;

static void pm_sb_put_workfn(struct work_struct *work)
{
	while (atomic_add_unless(&pm_sb_puts, -1, 0))
		deactivate_super(READ_ONCE(pm_sb_put_sb));
}
static DECLARE_WORK(pm_sb_put_work, pm_sb_put_workfn);

/* Module exit, before the file system is unregistered. */
void pm_domain_exit_sb(void)
{
	flush_work(&pm_sb_put_work);
}

/*
 * Hold @d and its file (for migration, the pin watch, the error worker):
 * NULL when the file is already being evicted (its chunks are on their
 * way out anyway), or its superblock is being shut down. igrab() alone
 * does not keep the superblock: with every mount gone (a lazy umount) the
 * last fput() of the file would run kill_litter_super() under the holder,
 * "Busy inodes after unmount" and a use-after-free at its iput(). So an
 * active reference is taken first, as the VFS's own long-lived holders do.
 * Caller holds pm_lock, so d->inode is valid if set.
 */
struct inode *pm_domain_hold(struct pm_domain *d)
{
	struct super_block *sb = d->inode ? d->inode->i_sb : NULL;
	struct inode *inode;

	if (!sb || !atomic_inc_not_zero(&sb->s_active))
		return NULL;
	inode = igrab(d->inode);
	if (!inode) {
		/*
		 * Being evicted. Ours may be the last active reference by
		 * now, and deactivate_super() can't run under pm_lock (the
		 * shutdown evicts domains, which takes it): that one goes to
		 * a worker.
		 */
		if (!atomic_add_unless(&sb->s_active, -1, 1)) {
			WRITE_ONCE(pm_sb_put_sb, sb);
			/* the worker that sees the count sees the superblock */
			smp_mb__before_atomic();
			atomic_inc(&pm_sb_puts);
			schedule_work(&pm_sb_put_work);
		}
		return NULL;
	}
	get_device(&d->dev);
	return inode;
}

/*
 * Process context, no lock held: iput() may evict the domain's inode, and
 * deactivate_super() may shut the file system down (it takes s_umount).
 */
void pm_domain_release_held(struct pm_held *h)
{
	struct super_block *sb = h->inode->i_sb;

	iput(h->inode);
	deactivate_super(sb);
	put_device(&h->d->dev);
}

/* Caller holds pm_lock and found @d alive, so its inode is valid. */
void pm_domain_fill_info(struct pm_domain *d, struct poolmem_domain_info *info)
{
	info->bytes = d->size;
	info->chunk_bytes = d->chunk_bytes;
	info->pool_mask = d->pool_mask;
	info->home_node = d->home_node;
	info->tier_policy = d->tier_policy;
	info->pool_select = d->pool_select;
	info->uid = from_kuid_munged(current_user_ns(), d->inode->i_uid);
	info->gid = from_kgid_munged(current_user_ns(), d->inode->i_gid);
	info->mode = d->inode->i_mode & 0777;
	info->domain_flags = (d->pinnable ? POOLMEM_DOMAIN_PINNABLE : 0) |
			     (d->znuma ? POOLMEM_DOMAIN_ZNUMA : 0);
	mutex_lock(&d->lock);
	memcpy(info->quota, d->quota, sizeof(info->quota));
	memcpy(info->usage, d->usage, sizeof(info->usage));
	info->chunks = d->chunks;
	info->faults = d->faults;
	info->sigbus = d->sigbus;
	info->discards = d->discards;
	info->retired_chunks = d->retired;
	info->moves = d->moves;
	info->memory_errors = d->mem_errors;
	mutex_unlock(&d->lock);
}
