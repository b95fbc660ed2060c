// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem pools: registration, statistics and /sys/kernel/poolmem/pools.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/jiffies.h>
#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
#include <linux/slab.h>
#include <linux/sysfs.h>
#include <linux/vmstat.h>

#include "poolmem.h"

/*
 * Protects pm_pools[], pm_domains, pm_domain_ids, pm_domain_names,
 * pm_profiles, the pools' committed, users and overcommit_pct (its sysfs
 * file reads it without the lock), domain names, dead and
 * creation/destruction. Never taken in the fault path; nothing that may
 * fault on domain memory (copy_to_user) runs under it.
 */
DEFINE_MUTEX(pm_lock);
struct pm_pool *pm_pools[POOLMEM_MAX_POOLS];
LIST_HEAD(pm_domains);
DEFINE_XARRAY_ALLOC(pm_domain_ids);
DEFINE_HASHTABLE(pm_domain_names, PM_DOMAIN_NAME_BITS);
/* bit i: pool i is draining (pm_pool.draining); written under pm_lock */
u64 pm_pools_draining;

/* pm_pool.af_lock's lockdep class, named for main.c's lock order */
static struct lock_class_key pm_af_lock_key;

unsigned int pm_window_ms = 1000;
PM_PARAM_UINT_RANGE(window_ms, pm_window_ms, 10, 60000, 0644);
MODULE_PARM_DESC(window_ms, "Length of one access-factor window in milliseconds, 10..60000 (default 1000)");

/*
 * The current access-factor window. 64-bit milliseconds: jiffies_to_msecs()
 * returns 32 bits, which wrap 5 minutes after boot (jiffies start at
 * -300 s) and every 49.7 days, and the windows would run backwards.
 */
u64 pm_epoch(void)
{
	unsigned int ms = max(READ_ONCE(pm_window_ms), 1U);

	return div_u64(jiffies64_to_msecs(get_jiffies_64()), ms);
}

u64 pm_node_present_bytes(int nid)
{
	return (u64)node_present_pages(nid) << PAGE_SHIFT;
}

u64 pm_node_free_bytes(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long pages = 0;
	int z;

	for (z = 0; z < MAX_NR_ZONES; z++)
		pages += zone_page_state(&pgdat->node_zones[z], NR_FREE_PAGES);
	return (u64)pages << PAGE_SHIFT;
}

/* Memory of node @nid outside ZONE_MOVABLE: what can be long-term pinned. */
u64 pm_node_pinnable_bytes(int nid)
{
	pg_data_t *pgdat = NODE_DATA(nid);
	unsigned long pages = 0;
	int z;

	for (z = 0; z < MAX_NR_ZONES; z++)
		if (z != ZONE_MOVABLE)
			pages += READ_ONCE(pgdat->node_zones[z].present_pages);
	return (u64)pages << PAGE_SHIFT;
}

static struct kobject *pm_kobj;		/* /sys/kernel/poolmem */
static struct kobject *pm_pools_kobj;	/* /sys/kernel/poolmem/pools */

/*
 * Has node @nid a CMA area? Chunks must never be in CMA (chunk.c), and a
 * pool's chunks are of the movable class, which CMA serves: such a node
 * (boot memory with cma_pernuma=) can't be a pool.
 */
static bool pm_node_has_cma(int nid)
{
#ifdef CONFIG_CMA
	int z;

	for (z = 0; z < MAX_NR_ZONES; z++)
		if (READ_ONCE(NODE_DATA(nid)->node_zones[z].cma_pages))
			return true;
#endif
	return false;
}

/* Caller holds pm_lock. */
struct pm_pool *pm_pool_find(const char *name)
{
	int i;

	for (i = 0; i < POOLMEM_MAX_POOLS; i++)
		if (pm_pools[i] && !strncmp(pm_pools[i]->name, name, POOLMEM_NAME_MAX))
			return pm_pools[i];
	return NULL;
}

/* The pool on node @nid, or NULL. Caller holds pm_lock. */
struct pm_pool *pm_node_pool(int nid)
{
	int i;

	for (i = 0; i < POOLMEM_MAX_POOLS; i++)
		if (pm_pools[i] && pm_pools[i]->node == nid)
			return pm_pools[i];
	return NULL;
}

/*
 * Admission limit of a pool: capacity * overcommit ratio; for pinnable
 * domains, only the capacity outside ZONE_MOVABLE counts.
 */
u64 pm_pool_limit(const struct pm_pool *p, bool pinnable)
{
	u64 bytes = pinnable ? pm_node_pinnable_bytes(p->node) : pm_node_present_bytes(p->node);

	return div_u64(bytes * p->overcommit_pct, 100);
}

/* Free memory of the pools in @mask; caller holds pm_lock. */
u64 pm_pools_free(u64 mask)
{
	u64 free = 0;

	for (mask &= ~pm_pools_draining; mask; mask &= mask - 1)
		free += pm_node_free_bytes(pm_pools[__ffs64(mask)]->node);
	return free;
}

/* Count @n events (allocations, faults) in the pool's current window. */
void pm_pool_event(struct pm_pool *p, u64 n)
{
	spin_lock(&p->af_lock);
	pm_af_add(&p->af, pm_epoch(), n);
	spin_unlock(&p->af_lock);
}

u64 pm_pool_af(struct pm_pool *p)
{
	u64 v, epoch = pm_epoch();

	spin_lock(&p->af_lock);
	pm_af_advance(&p->af, epoch);
	v = pm_af_value(&p->af, epoch);
	spin_unlock(&p->af_lock);
	return v;
}

void pm_pool_fill_info(struct pm_pool *p, struct poolmem_pool_info *info)
{
	info->id = p->id;
	info->node = p->node;
	info->tier = p->tier;
	info->overcommit_pct = p->overcommit_pct;
	info->capacity_bytes = pm_node_present_bytes(p->node);
	info->free_bytes = pm_node_free_bytes(p->node);
	info->allocated_bytes = atomic64_read(&p->allocated);
	info->committed_bytes = p->committed;
	info->chunks = atomic64_read(&p->chunks);
	info->allocations = atomic64_read(&p->allocations);
	info->faults = atomic64_read(&p->faults);
	info->failures = atomic64_read(&p->failures);
	info->access_factor = pm_pool_af(p);
	info->state = (p->draining ? POOLMEM_POOL_DRAINING : 0) | (p->degraded ? POOLMEM_POOL_DEGRADED : 0);
	info->moved_in = atomic64_read(&p->moved_in);
	info->moved_out = atomic64_read(&p->moved_out);
	info->memory_errors = atomic64_read(&p->mem_errors);
}

/* sysfs: one value per file; see Documentation/ABI/testing/sysfs-kernel-poolmem */

#define to_pool(k) container_of(k, struct pm_pool, kobj)

/* Defines FILE_show() printing one unsigned value of the pool, and its attribute. */
#define POOL_SHOW_U64(file, expr)								\
static ssize_t file##_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)	\
{												\
	struct pm_pool *p = to_pool(kobj);							\
	return sysfs_emit(buf, "%llu\n", (unsigned long long)(expr));				\
}												\
static struct kobj_attribute pool_attr_##file = __ATTR_RO(file);

/*
 * The changing values: one file each, and all of them in stat, in this
 * order (the order is ABI: Documentation/ABI/testing/sysfs-kernel-poolmem).
 */
#define POOL_COUNTERS(X)						\
	X(capacity_bytes, pm_node_present_bytes(p->node))		\
	X(free_bytes, pm_node_free_bytes(p->node))			\
	X(allocated_bytes, atomic64_read(&p->allocated))		\
	X(committed_bytes, READ_ONCE(p->committed))			\
	X(chunks, atomic64_read(&p->chunks))				\
	X(allocations, atomic64_read(&p->allocations))			\
	X(faults, atomic64_read(&p->faults))				\
	X(failures, atomic64_read(&p->failures))			\
	X(access_factor, pm_pool_af(p))					\
	X(moved_in, atomic64_read(&p->moved_in))			\
	X(moved_out, atomic64_read(&p->moved_out))			\
	X(accesses, atomic64_read(&p->accesses))			\
	X(moved_bytes, atomic64_read(&p->moved_bytes))			\
	X(move_retries, atomic64_read(&p->move_retries))		\
	X(move_pins, atomic64_read(&p->move_pins))			\
	X(samples, atomic64_read(&p->samples))				\
	X(promotions, atomic64_read(&p->promotions))			\
	X(demotions, atomic64_read(&p->demotions))			\
	X(zero_reserve_bytes, pm_node_zero_reserve_bytes(p->node))	\
	X(zero_reserve_refills, pm_pool_reserve_stat(p, 0))		\
	X(zero_reserve_hits, pm_pool_reserve_stat(p, 1))		\
	X(zero_reserve_misses, pm_pool_reserve_stat(p, 2))		\
	X(memory_errors, atomic64_read(&p->mem_errors))			\
	X(soft_offlines, atomic64_read(&p->soft_offlines))		\
	X(discarded_bytes, atomic64_read(&p->discarded_bytes))

/* refills, hits or misses (0, 1, 2) of the pool node's zero reserve */
static u64 pm_pool_reserve_stat(struct pm_pool *p, int which)
{
	u64 v[3];

	pm_node_zero_reserve_stats(p->node, &v[0], &v[1], &v[2]);
	return v[which];
}

POOL_SHOW_U64(id, p->id)
POOL_SHOW_U64(zero_reserve_target_bytes, pm_pool_zero_reserve_target(p))
POOL_SHOW_U64(node, p->node)
/* the part of capacity_bytes outside ZONE_MOVABLE (long-term pinnable) */
POOL_SHOW_U64(pinnable_bytes, pm_node_pinnable_bytes(p->node))
POOL_COUNTERS(POOL_SHOW_U64)

#define POOL_STAT_FIELD(file, expr) \
	n += sysfs_emit_at(buf, n, "%s%llu", n ? " " : "", (unsigned long long)(expr));

/*
 * Every changing value in one read, as /sys/block/<dev>/stat does, for
 * monitoring agents that would otherwise open nine files per pool and scrape.
 */
static ssize_t stat_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct pm_pool *p = to_pool(kobj);
	int n = 0;

	POOL_COUNTERS(POOL_STAT_FIELD)
	return n + sysfs_emit_at(buf, n, "\n");
}
static struct kobj_attribute pool_attr_stat = __ATTR_RO(stat);

static ssize_t tier_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", to_pool(kobj)->tier == POOLMEM_TIER_POOL ? "pool" : "local");
}
static struct kobj_attribute pool_attr_tier = __ATTR_RO(tier);

/* "draining" while POOLMEM_POOL_DRAIN empties it, else "online" */
static ssize_t state_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%s\n", READ_ONCE(to_pool(kobj)->draining) ? "draining" : "online");
}
static struct kobj_attribute pool_attr_state = __ATTR_RO(state);

/* The window counts, newest first: "w0 w1 w2 w3". */
static ssize_t window_counts_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct pm_pool *p = to_pool(kobj);
	u64 w[PM_AF_WINDOWS];
	int i, n = 0;

	spin_lock(&p->af_lock);
	pm_af_advance(&p->af, pm_epoch());
	memcpy(w, p->af.win, sizeof(w));
	spin_unlock(&p->af_lock);
	for (i = 0; i < PM_AF_WINDOWS; i++)
		n += sysfs_emit_at(buf, n, "%llu%c", w[i], i == PM_AF_WINDOWS - 1 ? '\n' : ' ');
	return n;
}
static struct kobj_attribute pool_attr_window_counts = __ATTR_RO(window_counts);

/*
 * The zero reserve as configured: "N%" of capacity or a size in bytes
 * (a suffix K, M, G is taken). Written by root; the reserve follows within
 * a second (it grows as fast as the background thread zeroes).
 */
static ssize_t zero_reserve_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct pm_pool *p = to_pool(kobj);
	u64 bytes = READ_ONCE(p->zero_reserve_bytes);

	if (bytes == PM_ZERO_RESERVE_PCT)
		return sysfs_emit(buf, "%u%%\n", READ_ONCE(p->zero_reserve_pct));
	return sysfs_emit(buf, "%llu\n", bytes);
}

static ssize_t zero_reserve_store(struct kobject *kobj, struct kobj_attribute *attr, const char *buf,
				  size_t count)
{
	struct pm_pool *p = to_pool(kobj);
	char s[24], *end;
	size_t n;
	u64 v;

	n = strscpy(s, buf, sizeof(s)) < 0 ? 0 : strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == ' '))
		s[--n] = '\0';
	if (!n)
		return -EINVAL;
	if (s[n - 1] == '%') {
		unsigned int pct;

		s[n - 1] = '\0';
		if (kstrtouint(s, 10, &pct) || pct > 50)
			return -EINVAL;
		WRITE_ONCE(p->zero_reserve_pct, pct);
		WRITE_ONCE(p->zero_reserve_bytes, PM_ZERO_RESERVE_PCT);
	} else {
		v = memparse(s, &end);
		if (*end || v >= PM_ZERO_RESERVE_PCT)
			return -EINVAL;
		WRITE_ONCE(p->zero_reserve_bytes, v);
	}
	pm_zerod_kick();
	return count;
}
static struct kobj_attribute pool_attr_zero_reserve = __ATTR_RW_MODE(zero_reserve, 0644);

static ssize_t overcommit_pct_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%u\n", READ_ONCE(to_pool(kobj)->overcommit_pct));
}

/*
 * Would every domain that may use pool @p still be admitted? Each one's
 * pools must hold, at capacity x overcommit, the pool quotas of all
 * domains that share one of them with it: pm_admit()'s rule for the pool
 * tier, applied again to the domains there are, with @p's new ratio; the
 * domains of one (home node, pool set) are checked at once
 * (pm_commit_overcommitted()). Returns the first domain where it does not
 * hold, @r filled with its figures. Caller holds pm_lock.
 */
static struct pm_domain *pm_pool_overcommitted(const struct pm_pool *p, struct pm_refusal *r)
{
	const struct pm_commit *c = pm_commit_overcommitted(p->id, r);
	struct pm_domain *d;

	if (!c)
		return NULL;
	list_for_each_entry(d, &pm_domains, list)
		if (pm_commit_holds(c, d, r))
			return d;
	/* a bucket with pool quota holds such a domain: refuse all the same */
	WARN_ON_ONCE(1);
	list_for_each_entry(d, &pm_domains, list)
		if (d->pool_mask & BIT_ULL(p->id))
			return d;
	return NULL;
}

/*
 * A live change of the admission ratio. Raising it always holds; lowering
 * it is refused (-ENOSPC, the figures in the log, as a refused domain)
 * when a domain that may use the pool would no longer have been admitted:
 * what is committed stays within what the pools promise.
 */
static ssize_t overcommit_pct_store(struct kobject *kobj, struct kobj_attribute *attr, const char *buf,
				    size_t count)
{
	struct pm_pool *p = to_pool(kobj);
	struct pm_refusal r;
	struct pm_domain *d;
	unsigned int pct, old;

	if (kstrtouint(buf, 10, &pct) || pct < 100 || pct > 1000)
		return -EINVAL;
	mutex_lock(&pm_lock);
	old = p->overcommit_pct;
	WRITE_ONCE(p->overcommit_pct, pct);
	d = pct < old ? pm_pool_overcommitted(p, &r) : NULL;
	if (d) {
		WRITE_ONCE(p->overcommit_pct, old);
		pr_warn_ratelimited("pool %s: overcommit %u%% refused: domain %s's pools would hold %llu MiB%s, %llu MiB is committed there\n",
				    p->name, pct, d->name, r.limit >> 20,
				    r.why == POOLMEM_REFUSED_POOL_PINNABLE ? " outside ZONE_MOVABLE" : "",
				    r.committed >> 20);
	} else if (pct != old) {
		pr_info("pool %s: overcommit %u%% (was %u%%)\n", p->name, pct, old);
	}
	mutex_unlock(&pm_lock);
	return d ? -ENOSPC : count;
}
static struct kobj_attribute pool_attr_overcommit_pct = __ATTR_RW_MODE(overcommit_pct, 0644);

/*
 * What memory errors do to the pool (mf.c): "report" (the default: count
 * and log them), or "drain N" / "drain N/SECONDS": after N errors (hard or
 * soft offlines), all of them within SECONDS if given, the pool is
 * degraded: it takes no new chunks and its chunks move to other pools.
 * Writing it starts the count anew; undrain ends a degraded state.
 */
static ssize_t error_policy_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct pm_pool *p = to_pool(kobj);
	ssize_t n;

	mutex_lock(&pm_lock);
	if (!p->err_limit)
		n = sysfs_emit(buf, "report\n");
	else if (!p->err_period_s)
		n = sysfs_emit(buf, "drain %u\n", p->err_limit);
	else
		n = sysfs_emit(buf, "drain %u/%u\n", p->err_limit, p->err_period_s);
	mutex_unlock(&pm_lock);
	return n;
}

static ssize_t error_policy_store(struct kobject *kobj, struct kobj_attribute *attr, const char *buf,
				  size_t count)
{
	struct pm_pool *p = to_pool(kobj);
	unsigned int limit = 0, period = 0;
	char s[32], *n, *slash;
	size_t len;

	if (strscpy(s, buf, sizeof(s)) < 0)
		return -EINVAL;
	len = strlen(s);
	if (len && s[len - 1] == '\n')
		s[--len] = '\0';
	if (strcmp(s, "report")) {
		if (strncmp(s, "drain ", 6))
			return -EINVAL;
		n = s + 6;
		slash = strchr(n, '/');
		if (slash) {
			*slash++ = '\0';
			if (kstrtouint(slash, 10, &period) || !period)
				return -EINVAL;
		}
		if (kstrtouint(n, 10, &limit) || !limit || limit > PM_ERR_LIMIT_MAX)
			return -EINVAL;
	}
	mutex_lock(&pm_lock);
	p->err_limit = limit;
	p->err_period_s = period;
	p->err_next = 0;
	mutex_unlock(&pm_lock);
	return count;
}
static struct kobj_attribute pool_attr_error_policy = __ATTR_RW_MODE(error_policy, 0644);

static ssize_t degraded_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", READ_ONCE(to_pool(kobj)->degraded));
}
static struct kobj_attribute pool_attr_degraded = __ATTR_RO(degraded);

/*
 * "AF BYTES": the access factor and the bytes allocated that other hosts
 * put on this pool's shared device (poolmem-agent writes the cluster
 * ledger's sums less this host's own); smart idle orders pools by the
 * sum of theirs and ours. "0 0" when the memory is this host's alone.
 */
static ssize_t remote_load_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	struct pm_pool *p = to_pool(kobj);

	return sysfs_emit(buf, "%llu %llu\n", READ_ONCE(p->remote_af), READ_ONCE(p->remote_allocated));
}

static ssize_t remote_load_store(struct kobject *kobj, struct kobj_attribute *attr, const char *buf,
				 size_t count)
{
	struct pm_pool *p = to_pool(kobj);
	char s[48], *second;
	u64 af, bytes;

	/* "AF BYTES", one space between, at most a newline after; no overflow */
	if (strscpy(s, buf, sizeof(s)) < 0)
		return -EINVAL;
	second = strchr(s, ' ');
	if (!second)
		return -EINVAL;
	*second++ = '\0';
	if (kstrtou64(s, 10, &af) || kstrtou64(second, 10, &bytes) || af > (1ULL << 48) || bytes > (1ULL << 60))
		return -EINVAL;
	WRITE_ONCE(p->remote_af, af);
	WRITE_ONCE(p->remote_allocated, bytes);
	return count;
}
static struct kobj_attribute pool_attr_remote_load = __ATTR_RW_MODE(remote_load, 0644);

static struct attribute *pm_pool_attrs[] = {
	&pool_attr_id.attr,
	&pool_attr_node.attr,
	&pool_attr_tier.attr,
	&pool_attr_overcommit_pct.attr,
	&pool_attr_capacity_bytes.attr,
	&pool_attr_pinnable_bytes.attr,
	&pool_attr_free_bytes.attr,
	&pool_attr_allocated_bytes.attr,
	&pool_attr_committed_bytes.attr,
	&pool_attr_chunks.attr,
	&pool_attr_allocations.attr,
	&pool_attr_faults.attr,
	&pool_attr_failures.attr,
	&pool_attr_access_factor.attr,
	&pool_attr_moved_in.attr,
	&pool_attr_moved_out.attr,
	&pool_attr_accesses.attr,
	&pool_attr_moved_bytes.attr,
	&pool_attr_move_retries.attr,
	&pool_attr_move_pins.attr,
	&pool_attr_samples.attr,
	&pool_attr_promotions.attr,
	&pool_attr_demotions.attr,
	&pool_attr_zero_reserve.attr,
	&pool_attr_remote_load.attr,
	&pool_attr_zero_reserve_target_bytes.attr,
	&pool_attr_zero_reserve_bytes.attr,
	&pool_attr_zero_reserve_refills.attr,
	&pool_attr_zero_reserve_hits.attr,
	&pool_attr_zero_reserve_misses.attr,
	&pool_attr_memory_errors.attr,
	&pool_attr_soft_offlines.attr,
	&pool_attr_discarded_bytes.attr,
	&pool_attr_error_policy.attr,
	&pool_attr_degraded.attr,
	&pool_attr_state.attr,
	&pool_attr_window_counts.attr,
	&pool_attr_stat.attr,
	NULL,
};
ATTRIBUTE_GROUPS(pm_pool);

/*
 * Our kobjects (pools', profiles') whose release has not run: module exit
 * waits for them, as a release may come late (CONFIG_DEBUG_KOBJECT_RELEASE
 * delays each by seconds) and its code is the module's.
 */
static atomic_t pm_kobjs_pending = ATOMIC_INIT(0);

/* The last thing a release of ours does. */
static void pm_kobj_released(void)
{
	if (atomic_dec_and_test(&pm_kobjs_pending))
		wake_up_var(&pm_kobjs_pending);
}

static void pm_pool_release(struct kobject *kobj)
{
	kfree(to_pool(kobj));
	pm_kobj_released();
}

static const struct kobj_type pm_pool_ktype = {
	.release = pm_pool_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = pm_pool_groups,
};

int pm_pool_add(struct poolmem_pool_add *arg)
{
	struct pm_domain *d;
	struct pm_pool *p;
	int i, id = -1, ret;

	if (!pm_name_valid(arg->name, POOLMEM_NAME_MAX) || arg->tier != POOLMEM_TIER_POOL)
		return -EINVAL;
	if (arg->overcommit_pct == 0)
		arg->overcommit_pct = 100;
	if (arg->overcommit_pct < 100 || arg->overcommit_pct > 1000)
		return -EINVAL;
	if (arg->node < 0 || arg->node >= MAX_NUMNODES || !node_online(arg->node))
		return -EINVAL;
	if (!node_state(arg->node, N_MEMORY))
		return -ENOMEM;	/* no online memory on that node (yet) */
	if (pm_node_has_cma(arg->node)) {
		pr_info_ratelimited("pool %.*s refused: node %d has a CMA area, which no chunk may take\n",
				    POOLMEM_NAME_MAX, arg->name, arg->node);
		return -EINVAL;
	}

	mutex_lock(&pm_lock);
	/*
	 * A node is either some domains' local tier or a pool, never both:
	 * its memory would be admitted twice, once per tier.
	 */
	ret = -EBUSY;
	list_for_each_entry(d, &pm_domains, list) {
		if (d->home_node == arg->node) {
			pr_info_ratelimited("pool %.*s refused: node %d is the home node of domain %s\n",
					    POOLMEM_NAME_MAX, arg->name, arg->node, d->name);
			goto out_unlock;
		}
	}
	ret = -EEXIST;
	for (i = 0; i < POOLMEM_MAX_POOLS; i++) {
		if (!pm_pools[i]) {
			if (id < 0)
				id = i;
			continue;
		}
		if (pm_pools[i]->node == arg->node ||
		    !strncmp(pm_pools[i]->name, arg->name, POOLMEM_NAME_MAX))
			goto out_unlock;
	}
	ret = -ENOSPC;
	if (id < 0)
		goto out_unlock;

	ret = -ENOMEM;
	p = kzalloc(sizeof(*p), GFP_KERNEL);
	if (!p)
		goto out_unlock;
	p->id = id;
	memcpy(p->name, arg->name, POOLMEM_NAME_MAX);
	p->node = arg->node;
	p->tier = arg->tier;
	p->overcommit_pct = arg->overcommit_pct;
	p->zero_reserve_bytes = PM_ZERO_RESERVE_PCT;
	p->zero_reserve_pct = READ_ONCE(pm_zero_reserve_pct);
	spin_lock_init(&p->af_lock);
	lockdep_set_class_and_name(&p->af_lock, &pm_af_lock_key, "pm_pool.af_lock");
	INIT_WORK(&p->drain_work, pm_pool_drain_workfn);
	p->af.epoch = pm_epoch();
	atomic_inc(&pm_kobjs_pending);	/* from here on, the release frees p */
	ret = kobject_init_and_add(&p->kobj, &pm_pool_ktype, pm_pools_kobj, "%s", p->name);
	if (ret) {
		kobject_put(&p->kobj);	/* frees p */
		goto out_unlock;
	}
	kobject_uevent(&p->kobj, KOBJ_ADD);
	pm_pools[id] = p;
	arg->id = id;
	pm_zerod_kick();
	pr_info("pool %s: node %d, %llu MiB, overcommit %u%%\n", p->name, p->node,
		pm_node_present_bytes(p->node) >> 20, p->overcommit_pct);
	ret = 0;
out_unlock:
	mutex_unlock(&pm_lock);
	return ret;
}

/* Module exit: no domains exist, so no pool has users. */
void pm_pools_remove_all(void)
{
	int i;

	for (i = 0; i < POOLMEM_MAX_POOLS; i++) {
		if (!pm_pools[i])
			continue;
		kobject_del(&pm_pools[i]->kobj);
		kobject_put(&pm_pools[i]->kobj);
		pm_pools[i] = NULL;
	}
}

static ssize_t zero_reserve_nodes_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return pm_zero_reserve_nodes_show(buf);
}
static struct kobj_attribute pm_attr_zero_reserve = __ATTR(zero_reserve, 0444, zero_reserve_nodes_show, NULL);

/* The ioctl ABI this module speaks (POOLMEM_VERSION's answer), for anyone: poolctl --version */
static ssize_t abi_version_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return sysfs_emit(buf, "%d\n", POOLMEM_ABI_VERSION);
}
static struct kobj_attribute pm_attr_abi_version = __ATTR(abi_version, 0444, abi_version_show, NULL);

/* POOLMEM_VM_BIND's bindings still waiting for their directories (fs.c) */
static ssize_t vm_bindings_show(struct kobject *kobj, struct kobj_attribute *attr, char *buf)
{
	return pm_vm_bindings_show(buf);
}
static struct kobj_attribute pm_attr_vm_bindings = __ATTR(vm_bindings, 0400, vm_bindings_show, NULL);

/*
 * Counts that outlive domains (struct pm_counts): the same files host-wide
 * in /sys/kernel/poolmem/ and per profile in profiles/<name>/. Profile
 * names are the operator's, not tenants': world-readable, as pools. Their
 * show functions take no lock: a profile's directory may be removed under
 * pm_lock and the root directory's inode lock (kernfs waits for shows in
 * progress then).
 */
struct pm_counts pm_totals;
static struct kobject *pm_profiles_kobj;

/*
 * The counts of one profile name and their directory profiles/<name>/.
 * The directory stays while something of the name may still count: the
 * profile while it is listed, and each listed domain made from a profile
 * of the name (holders, pm_lock). A profile is often removed while its VMs
 * run, since QEMU unlinks the file it makes in the profile's directory at
 * once; their SIGBUS denials, destruction and discards still count here,
 * and a profile made again under the name takes up the same counts, so a
 * scrape sees counters that only go up. The kobject's references: the
 * directory's own (dropped when the last holder goes) and one per
 * struct pm_profile pointing here (dropped when the profile is freed, in
 * any context: the release only frees).
 */
struct pm_profile_kobj {
	struct kobject kobj;
	struct list_head list;		/* pm_profile_kobjs while in sysfs; pm_lock */
	unsigned int holders;		/* pm_lock */
	struct pm_counts counts;
};

static LIST_HEAD(pm_profile_kobjs);

static struct pm_counts *pm_kobj_counts(struct kobject *kobj)
{
	if (kobj == pm_kobj)
		return &pm_totals;
	return &container_of(kobj, struct pm_profile_kobj, kobj)->counts;
}

#define COUNTS_SHOW(file, field)								\
static ssize_t counts_##file##_show(struct kobject *kobj, struct kobj_attribute *attr,		\
				   char *buf)							\
{												\
	return sysfs_emit(buf, "%lld\n", atomic64_read(&pm_kobj_counts(kobj)->field));	\
}												\
static struct kobj_attribute counts_attr_##file = __ATTR(file, 0444, counts_##file##_show, NULL)

COUNTS_SHOW(sigbus, sigbus);
COUNTS_SHOW(admission_refusals, refusals);
COUNTS_SHOW(domains_created, created);
COUNTS_SHOW(domains_destroyed, destroyed);
COUNTS_SHOW(discarded_bytes, discarded_bytes);

static struct attribute *pm_counts_attrs[] = {
	&counts_attr_sigbus.attr,
	&counts_attr_admission_refusals.attr,
	&counts_attr_domains_created.attr,
	&counts_attr_domains_destroyed.attr,
	&counts_attr_discarded_bytes.attr,
	NULL,
};

static const struct attribute_group pm_counts_group = {
	.attrs = pm_counts_attrs,
};

static const struct attribute_group *pm_profile_groups[] = {
	&pm_counts_group,
	NULL,
};

static void pm_profile_kobj_release(struct kobject *kobj)
{
	kfree(container_of(kobj, struct pm_profile_kobj, kobj));
	pm_kobj_released();
}

static const struct kobj_type pm_profile_ktype = {
	.release = pm_profile_kobj_release,
	.sysfs_ops = &kobj_sysfs_ops,
	.default_groups = pm_profile_groups,
};

/*
 * Give profile @pr its name's counts and directory: those still there from
 * an earlier profile of the name (a removed one whose domains live on), or
 * new ones. pm_profile_create(), under pm_lock, before the profile is
 * listed; the profile holds the directory (pm_profile_sysfs_drop() when
 * it is removed) and a reference (pm_profile_sysfs_put() when freed).
 */
int pm_profile_sysfs_add(struct pm_profile *pr)
{
	struct pm_profile_kobj *pk;
	int ret;

	lockdep_assert_held(&pm_lock);
	list_for_each_entry(pk, &pm_profile_kobjs, list)
		if (!strcmp(kobject_name(&pk->kobj), pr->conf.name))
			goto found;
	pk = pm_should_fail(sizeof(*pk)) ? NULL : kzalloc(sizeof(*pk), GFP_KERNEL);
	if (!pk)
		return -ENOMEM;
	atomic_inc(&pm_kobjs_pending);	/* from here on, the release frees pk */
	ret = kobject_init_and_add(&pk->kobj, &pm_profile_ktype, pm_profiles_kobj, "%s", pr->conf.name);
	if (ret) {
		kobject_put(&pk->kobj);
		return ret;
	}
	list_add_tail(&pk->list, &pm_profile_kobjs);
found:
	pk->holders++;
	kobject_get(&pk->kobj);		/* pr->pk's */
	pr->pk = pk;
	pr->counts = &pk->counts;
	return 0;
}

/*
 * A listed domain made from @pr holds its name's directory (pm_lock). A
 * domain made from a removed profile whose directory went already (the
 * file was opened before the removal and sized after it) counts into the
 * unlisted counts, which nobody reads: the host's counts still have it.
 */
void pm_profile_sysfs_hold(struct pm_profile *pr)
{
	lockdep_assert_held(&pm_lock);
	if (!list_empty(&pr->pk->list))
		pr->pk->holders++;
}

/*
 * @pr was removed, or a listed domain made from it went (pm_lock): the
 * last holder takes the directory away. kobject_del() waits for show
 * functions in progress, which take no lock.
 */
void pm_profile_sysfs_drop(struct pm_profile *pr)
{
	struct pm_profile_kobj *pk = pr->pk;

	lockdep_assert_held(&pm_lock);
	if (list_empty(&pk->list) || --pk->holders)
		return;
	list_del_init(&pk->list);
	kobject_del(&pk->kobj);
	kobject_put(&pk->kobj);		/* the directory's own */
}

/* @pr is freed (any context): its reference on the counts */
void pm_profile_sysfs_put(struct pm_profile *pr)
{
	if (pr->pk)
		kobject_put(&pr->pk->kobj);
}

int pm_pools_sysfs_init(void)
{
	int ret;

	pm_kobj = kobject_create_and_add("poolmem", kernel_kobj);
	if (!pm_kobj)
		return -ENOMEM;
	ret = sysfs_create_file(pm_kobj, &pm_attr_zero_reserve.attr);
	if (ret)
		goto out_put;
	ret = sysfs_create_file(pm_kobj, &pm_attr_abi_version.attr);
	if (ret)
		goto out_put;	/* the files go with the kobject */
	ret = sysfs_create_file(pm_kobj, &pm_attr_vm_bindings.attr);
	if (ret)
		goto out_put;
	ret = sysfs_create_group(pm_kobj, &pm_counts_group);
	if (ret)
		goto out_put;	/* the files go with the kobject */
	ret = -ENOMEM;
	pm_pools_kobj = kobject_create_and_add("pools", pm_kobj);
	if (!pm_pools_kobj)
		goto out_put;
	pm_profiles_kobj = kobject_create_and_add("profiles", pm_kobj);
	if (!pm_profiles_kobj)
		goto out_pools;
	return 0;

out_pools:
	kobject_put(pm_pools_kobj);
out_put:
	kobject_put(pm_kobj);
	return ret;
}

void pm_pools_sysfs_exit(void)
{
	/*
	 * No pool and no profile is left (a profile pins the file system,
	 * which pins the module), but their releases may still be due.
	 */
	wait_var_event(&pm_kobjs_pending, !atomic_read(&pm_kobjs_pending));
	kobject_put(pm_profiles_kobj);
	kobject_put(pm_pools_kobj);
	/* now, not when the last child's delayed release drops pm_kobj */
	sysfs_remove_group(pm_kobj, &pm_counts_group);
	sysfs_remove_file(pm_kobj, &pm_attr_vm_bindings.attr);
	sysfs_remove_file(pm_kobj, &pm_attr_abi_version.attr);
	sysfs_remove_file(pm_kobj, &pm_attr_zero_reserve.attr);
	kobject_put(pm_kobj);
}
