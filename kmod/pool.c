// SPDX-License-Identifier: GPL-2.0
/*
 * poolmem's registries under pm_lock (pools, domains, profiles), pools'
 * node figures and access factors, and the sysfs tree they hang in:
 * /sys/kernel/poolmem, pools/ (whose directories poolsys.c adds) and
 * profiles/ with the counts that outlive domains.
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
/*
 * bit i: rebalancing found pool i contended at its last check
 * (tiering.c); written under pm_lock, by the check and by the pool's
 * removal, so that a pool taking the id is not contended before its
 * first check. Read with READ_ONCE.
 */
u64 pm_pools_contended;

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

/* /sys/kernel/poolmem and its pools/, between pm_pools_sysfs_init() and _exit() */
struct kobject *pm_sysfs_root(void)
{
	return pm_kobj;
}

struct kobject *pm_sysfs_pools(void)
{
	return pm_pools_kobj;
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

/*
 * Our kobjects (pools', profiles') whose release has not run: module exit
 * waits for them, as a release may come late (CONFIG_DEBUG_KOBJECT_RELEASE
 * delays each by seconds) and its code is the module's.
 */
static atomic_t pm_kobjs_pending = ATOMIC_INIT(0);

/* Before a kobject of ours is initialized: its release is now due. */
void pm_kobj_pending_add(void)
{
	atomic_inc(&pm_kobjs_pending);
}

/* The last thing a release of ours does. */
void pm_kobj_released(void)
{
	if (atomic_dec_and_test(&pm_kobjs_pending))
		wake_up_var(&pm_kobjs_pending);
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
	pm_kobj_pending_add();	/* from here on, the release frees pk */
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
	kobject_put(pm_kobj);
}
