// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem pools in sysfs: adding a pool (POOLMEM_POOL_ADD), its directory
 * /sys/kernel/poolmem/pools/<name> with its attributes, and the module's
 * own files in /sys/kernel/poolmem. The files that change admission
 * (overcommit_pct), the zero reserve (zero_reserve) or what a memory
 * error does (error_policy) call down into the files that own those
 * rules; pool.c keeps the registry and the directories these hang in.
 */
#define pr_fmt(fmt) KBUILD_MODNAME ": " fmt

#include <linux/mm.h>
#include <linux/mmzone.h>
#include <linux/nodemask.h>
#include <linux/slab.h>
#include <linux/sysfs.h>

#include "poolmem.h"

/* pm_pool.af_lock's lockdep class, named for main.c's lock order */
static struct lock_class_key pm_af_lock_key;

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
	X(discarded_bytes, atomic64_read(&p->discarded_bytes))		\
	X(rebalanced_chunks, atomic64_read(&p->rebalanced))

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
/* 1 while rebalancing finds the pool contended (tiering.c) */
POOL_SHOW_U64(contended, !!(pm_rebalance_contended() & BIT_ULL(p->id)))
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
	&pool_attr_rebalanced_chunks.attr,
	&pool_attr_contended.attr,
	&pool_attr_error_policy.attr,
	&pool_attr_degraded.attr,
	&pool_attr_state.attr,
	&pool_attr_window_counts.attr,
	&pool_attr_stat.attr,
	NULL,
};
ATTRIBUTE_GROUPS(pm_pool);

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

/* POOLMEM_POOL_ADD: a node's online memory becomes pool @arg->name */
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
	pm_kobj_pending_add();	/* from here on, the release frees p */
	ret = kobject_init_and_add(&p->kobj, &pm_pool_ktype, pm_sysfs_pools(), "%s", p->name);
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

static struct attribute *pm_root_attrs[] = {
	&pm_attr_zero_reserve.attr,
	&pm_attr_abi_version.attr,
	&pm_attr_vm_bindings.attr,
	NULL,
};

static const struct attribute_group pm_root_group = {
	.attrs = pm_root_attrs,
};

/* After pm_pools_sysfs_init(): the files in /sys/kernel/poolmem itself. */
int pm_poolsys_init(void)
{
	return sysfs_create_group(pm_sysfs_root(), &pm_root_group);
}

/* Before pm_pools_sysfs_exit(). */
void pm_poolsys_exit(void)
{
	sysfs_remove_group(pm_sysfs_root(), &pm_root_group);
}
