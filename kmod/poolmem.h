/* SPDX-License-Identifier: GPL-2.0 */
/*
 * poolmem internals shared by the module's files. See main.c for how the
 * module works and for the lock order.
 */
#ifndef POOLMEM_INTERNAL_H
#define POOLMEM_INTERNAL_H

#include <linux/atomic.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/hashtable.h>
#include <linux/kobject.h>
#include <linux/kref.h>
#include <linux/maple_tree.h>
#include <linux/mm.h>
#include <linux/moduleparam.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>
#include <linux/workqueue.h>
#include <linux/xarray.h>

#include <uapi/poolmem.h>

#include "compat.h"
#include "policy/pm_policy.h"

/* Chunks are built of 2 MiB units, each one compound buddy allocation. */
#define PM_UNIT_ORDER		(21 - PAGE_SHIFT)
#define PM_UNIT_PAGES		(1UL << PM_UNIT_ORDER)
#define PM_UNIT_BYTES		(PAGE_SIZE << PM_UNIT_ORDER)
#define PM_UNIT_SHIFT		(PAGE_SHIFT + PM_UNIT_ORDER)
#define PM_CHUNK_MIN		PM_UNIT_BYTES
#define PM_CHUNK_MAX		PM_DOMAIN_CHUNK_MAX
#define PM_DOMAIN_MAX_BYTES	PM_DOMAIN_BYTES_MAX
#define PM_HIST_BUCKETS		40	/* log2 ns: bucket i counts [2^i, 2^(i+1)) */
#define PM_POOL_NONE		0xff	/* chunk_meta.pool of a local chunk */

/* A registered pool: a NUMA node of far memory. */
#define PM_ERR_LIMIT_MAX	64	/* most errors an error_policy may wait for */

struct pm_pool {
	u32 id;				/* index in pm_pools[] and bit in pool masks */
	char name[POOLMEM_NAME_MAX];
	int node;
	u32 tier;			/* POOLMEM_TIER_POOL */
	u32 overcommit_pct;		/* admission: capacity * pct / 100 */
	u64 committed;			/* pool quotas of live domains allowed here; pm_lock */
	u32 users;			/* live domains allowed here; pm_lock */
	atomic64_t allocated;		/* bytes in chunks (retired ones included) */
	atomic64_t chunks;
	atomic64_t allocations;
	atomic64_t faults;
	atomic64_t failures;
	atomic64_t moved_in;		/* chunks migrated here */
	atomic64_t moved_out;		/* chunks migrated away */
	atomic64_t accesses;		/* estimated from sampled refaults (tiering.c) */
	atomic64_t moved_bytes;		/* migrated here or away, bytes */
	atomic64_t move_retries;	/* moves off this pool put off: referenced */
	atomic64_t move_pins;		/* moves off this pool refused: pinned */
	atomic64_t samples;		/* chunks here unmapped for sampling */
	atomic64_t promotions;		/* chunks moved from here to a local tier */
	atomic64_t demotions;		/* chunks moved from a local tier to here */
	atomic64_t mem_errors;		/* memory errors in its memory (mf.c) */
	atomic64_t soft_offlines;	/* pages soft-offlined (mf.c) */
	atomic64_t discarded_bytes;	/* chunks here given back by discards, bytes */
	atomic64_t rebalanced;		/* chunks moved away by rebalancing (tiering.c) */
	u32 rb_over;			/* rebalancing checks in a row above the margin; pm_lock */
	/*
	 * Af that rebalancing's recent moves took away (negative) or brought,
	 * which the measured Af does not show yet (pm_rebalance.h): added to
	 * by the moves under the moving domain's d->lock, halved by the check
	 * under pm_lock; atomic, as the two don't exclude each other.
	 */
	atomic64_t rb_shift;
	/*
	 * Memory error policy (mf.c; sysfs error_policy): after err_limit
	 * errors (0: report only), all within err_period_s seconds (0: any
	 * time), the pool is degraded: draining, and drain_work moves its
	 * chunks off. err_times is a ring of the last err_limit errors'
	 * times (boot seconds); err_next counts errors since the policy was
	 * set. All under pm_lock; degraded is read with READ_ONCE.
	 */
	u32 err_limit, err_period_s, err_next;
	u64 err_times[PM_ERR_LIMIT_MAX];
	bool degraded;
	struct work_struct drain_work;	/* holds a reference on kobj while queued */
	/*
	 * Draining (POOLMEM_POOL_DRAIN): placement and migration take no new
	 * chunks here. Written under pm_lock with pm_pools_draining.
	 */
	bool draining;
	/*
	 * Revoked (POOLMEM_DRAIN_REVOKE): draining, and memory offline of
	 * its node drops the chunks there instead of refusing. Written under
	 * pm_lock with draining; read by the memory notifier under pm_lock.
	 */
	bool revoked;
	/*
	 * Load other hosts put on this pool's shared device (its access
	 * factor and bytes allocated there, summed over the cluster ledger
	 * by poolmem-agent): smart idle adds them to the pool's own. Written
	 * by root through sysfs (remote_load), read with READ_ONCE; the two
	 * are advisory and not updated together.
	 */
	u64 remote_af, remote_allocated;
	/*
	 * Zero reserve (reserve.c): bytes, or PM_ZERO_RESERVE_PCT to keep
	 * zero_reserve_pct % of capacity. Written by the sysfs store alone;
	 * read with READ_ONCE.
	 */
	u64 zero_reserve_bytes;
	u32 zero_reserve_pct;
	/* Protects af. Taken in the fault path: never sleep under it. */
	spinlock_t af_lock;
	struct pm_af af;
	struct kobject kobj;		/* /sys/kernel/poolmem/pools/<name> */
};

/* Per-chunk placement, 5 bytes so large domains stay cheap. */
struct pm_chunk_meta {
	u8 present;
	u8 tier;
	u8 pool;			/* pool id, or PM_POOL_NONE */
	u8 busy;			/* PM_BUSY_*: d->lock dropped, others wait */
	u8 lost;			/* revoked: a touch is a memory error until discarded */
	u8 poison;			/* has offsets in d->poison (mf.c) */
	u16 zeroed;			/* pages zeroed by partial discards since the last look (file.c) */
};				/* 8 bytes, nr_chunks of them per domain */

/*
 * What a busy chunk is waiting for. Faults, discards and other movers wait
 * for busy to clear (wait_var_event on the chunk's meta); d->busy_chunks
 * counts busy chunks, so that a pool can be detached from a domain once
 * nothing of the domain is being placed (it might be placed there).
 */
#define PM_BUSY_ALLOC		1	/* being allocated: not present yet */
#define PM_BUSY_MOVE		2	/* present, being migrated */

/* Per-chunk sampling state of a domain with tiering (tiering.c); d->lock. */
struct pm_heat {
	u32 at;				/* jiffies when unmapped for sampling */
	u8 sampled;			/* unmapped for sampling, not faulted in since */
	u8 hot;				/* refaulted within hot_ms at its last sample */
	u8 cold;			/* not refaulted for pm_cold_periods periods */
	u8 pad;
};

/*
 * Counts that outlive domains: a domain's own counters (sysfs.c) go with
 * its sysfs directory when its VM ends, before a scrape may have seen
 * them. Host-wide in pm_totals (/sys/kernel/poolmem/), per profile name
 * in /sys/kernel/poolmem/profiles/<name>/ (pool.c: as long as a profile
 * of that name or a domain made from one lives). Atomic: counted under
 * whichever lock the event happens (the domain's, pm_lock, or none), read
 * without locks.
 */
struct pm_counts {
	atomic64_t sigbus;		/* faults denied: no memory within quota */
	atomic64_t refusals;		/* domains admission refused (-ENOSPC) */
	atomic64_t created;		/* domains admitted */
	atomic64_t destroyed;		/* admitted domains whose memory went back */
	atomic64_t discarded_bytes;	/* chunks given back by discards, bytes */
};

extern struct pm_counts pm_totals;

/* Count @n events of @field host-wide and for profile @pr (may be NULL). */
#define pm_count(pr, field, n) do {					\
	struct pm_profile *__pr = (pr);					\
	s64 __n = (n);							\
									\
	atomic64_add(__n, &pm_totals.field);				\
	if (__pr)							\
		atomic64_add(__n, &__pr->counts->field);		\
} while (0)

/*
 * A profile: the quotas and policies of domains created as files in its
 * directory (and the directory's subdirectories). Immutable once created;
 * reference counted: its directories and its domains hold references.
 * Its counts are its name's (struct pm_profile_kobj, pool.c): a domain
 * that outlives the profile's directory (QEMU's file is unlinked at once,
 * so the directory can go while VMs run) still counts there, and a
 * profile made again under the name meanwhile continues those counts.
 */
struct pm_profile {
	struct kref ref;
	struct poolmem_profile conf;	/* as created: name, quotas, policies */
	struct list_head list;		/* pm_profiles while its directory exists; pm_lock */
	atomic64_t domains;		/* live domains made from it */
	/*
	 * Its name's counts and their directory /sys/kernel/poolmem/profiles/
	 * <name>/ (pool.c), found or made before the profile is listed; the
	 * profile holds a reference on it until it is freed.
	 */
	struct pm_profile_kobj *pk;
	struct pm_counts *counts;	/* &pk->counts */
};

/*
 * A VM's memory: a regular file of the poolmem file system. A named domain
 * (POOLMEM_DOMAIN_CREATE) is <mount>/<name>; a profile domain is a file
 * somebody created in a profile directory and sized with ftruncate(), named
 * "<profile>.<inode number>" in sysfs and listings.
 */
struct pm_domain {
	char name[POOLMEM_NAME_MAX];
	u64 size;			/* bytes, chunk multiple */
	u64 chunk_bytes;
	unsigned int chunk_shift;
	unsigned int units_per_chunk;
	u64 nr_chunks;
	/*
	 * Hard limits, bytes; d->lock. While POOLMEM_DOMAIN_SET shrinks a
	 * tier, its quota is max(new quota, usage), lowered as chunks leave.
	 */
	u64 quota[PM_NR_TIERS];
	/*
	 * The quotas admission counts (a POOLMEM_DOMAIN_SET's at once);
	 * written under pm_lock and d->lock. A quota above its committed
	 * value (a tier being shrunk) comes down as usage does:
	 * pm_quota_settle().
	 */
	u64 committed[PM_NR_TIERS];
	/* pools chunks may come from; written under pm_lock and d->lock */
	u64 pool_mask;
	int home_node;
	u32 tier_policy;
	u32 pool_select;
	bool pinnable;			/* POOLMEM_DOMAIN_PINNABLE */
	/*
	 * POOLMEM_DOMAIN_ZNUMA: chunks below win_split are local, the rest
	 * pool; both fixed for life (see pm_domain_window()).
	 */
	bool znuma;
	u64 win_split;
	struct pm_profile *profile;	/* the profile it was made from, or NULL */
	char *path;			/* file's path in the file system at creation */
	pid_t creator;			/* tgid that created (sized) it */
	char creator_comm[TASK_COMM_LEN];
	/*
	 * The domain's file. Valid until the inode is evicted, which sets
	 * dead and clears this under pm_lock first: whoever finds the domain
	 * alive under pm_lock may use it until pm_lock is dropped.
	 */
	struct inode *inode;
	bool dead;			/* unlinked (named) or evicted: not listed; pm_lock */
	bool registered;		/* sysfs device added; pm_lock */
	struct list_head list;		/* pm_domains; pm_lock */
	u32 id;				/* in pm_domain_ids while listed; pm_lock; never 0 */
	struct hlist_node hnode;	/* pm_domain_names while listed; pm_lock */
	/*
	 * pm_linger_list (chunk.c) while, evicted, it holds a shared chunk
	 * that has no retire record yet; pm_retired_lock.
	 */
	struct list_head linger;

	/*
	 * Protects the chunk map (units, meta), usage, chunks, retired,
	 * chunks_per_pool, rr_cursor and the per-domain counters below.
	 * Held for placement decisions and, for small mappings, page table
	 * updates in the fault path, but not while a chunk is allocated and
	 * zeroed: that chunk is marked busy (other faults on it wait for it,
	 * wait_var_event on its meta) and its bytes are reserved in usage,
	 * so quotas stay hard. Taken after pm_lock, never before it, and
	 * before the page lock of a unit. Nothing that faults on domain
	 * memory (copy_to_user) may run under it.
	 */
	struct mutex lock;
	struct page **units;		/* nr_chunks * units_per_chunk; NULL = absent */
	struct pm_chunk_meta *meta;	/* nr_chunks */
	u64 usage[PM_NR_TIERS];		/* bytes, retired chunks included */
	u64 chunks;			/* present in the map */
	u64 retired;			/* discarded but still referenced, still charged */
	u32 chunks_per_pool[POOLMEM_MAX_POOLS];	/* a domain has at most 2^25 chunks */
	u32 rr_cursor;
	u64 busy_chunks;		/* chunks with meta.busy set (PM_BUSY_*) */
	u64 moves;			/* chunks migrated */
	u64 move_retries;		/* migrations put off: short-lived references */
	u64 move_pins;			/* migrations refused: long-term pins */
	u64 revoked;			/* chunks dropped with a revoked pool's memory */
	/*
	 * Offsets lost to memory errors (mf.c): page index -> xa_mk_value(
	 * POOLMEM_MEMERR_*). Written under d->lock (and by a move's copy of
	 * a busy chunk, which only adds); read under d->lock or RCU. An
	 * entry stays until its chunk is discarded whole.
	 */
	struct xarray poison;
	u64 mem_errors;			/* pages lost to memory errors */
	/* tiering (tiering.c); d->lock */
	u32 tier_mode;			/* POOLMEM_TIERING_* */
	u32 hot_ms;			/* a refault within this makes a chunk hot */
	u64 scan_rate;			/* bytes sampled, and at most moved, per second */
	u64 access_weight;		/* accesses a sampled refault stands for */
	struct pm_heat *heat;		/* nr_chunks entries, once tiering was on */
	struct delayed_work tier_work;
	u64 samples, hits, promotions, demotions;
	u64 pool_hits;			/* of hits, refaults of pool chunks */
	u64 rebalanced;			/* chunks moved off contended pools */
	u64 scan_ns;			/* CPU time of the tiering worker */
	u64 faults;
	u64 sigbus;
	u64 discards;
	atomic64_t hist[PM_HIST_BUCKETS];
	atomic64_t fault_ns;		/* sum of fault latencies (histogram sum) */

	/* lifetime: the last put frees the domain (pm_domain_release) */
	struct device dev;		/* /sys/class/poolmem/<name> */
};

#define to_domain(dev) container_of(dev, struct pm_domain, dev)

/*
 * What a regular file of the poolmem file system is (its inode's
 * i_private): a named domain (profile NULL), or a file in a profile
 * directory, whose domain appears when ftruncate() sizes it.
 */
/* zNUMA window of a name of a domain's inode: see pm_dentry_window() */
enum pm_window { PM_WIN_WHOLE, PM_WIN_LOCAL, PM_WIN_POOL, PM_NR_WIN };

struct pm_file {
	struct pm_profile *profile;	/* a reference, or NULL */
	/*
	 * Set once, with smp_store_release() after the domain is complete,
	 * under the inode lock; read with smp_load_acquire(). The file owns
	 * one reference on the domain (dropped at eviction).
	 */
	struct pm_domain *d;
	/*
	 * A znuma domain's window names (the names' own references), set
	 * at creation and cleared when the domain's name is unlinked; both
	 * under the root directory's lock.
	 */
	struct dentry *win[PM_NR_WIN];
	/*
	 * A znuma profile's local window waiting for its pool window: the
	 * thread group that sized it, whose next file in the same directory
	 * becomes the pool window (pm_create()). A reference, set before @d
	 * is published, taken away under the directory's lock by the join,
	 * or dropped at eviction.
	 */
	struct pid *partner;
	/*
	 * The VM its directory was bound to (POOLMEM_VM_BIND), copied at
	 * creation; "" when none. Names the domain (pm_file_make_domain()).
	 */
	char vm[POOLMEM_NAME_MAX];
};

/*
 * A directory below a profile directory (its inode's i_private; the root
 * has none): the profile its files' domains get, and the VM it was bound
 * to. Both set at mkdir and never changed.
 */
struct pm_dir {
	struct pm_profile *profile;	/* a reference */
	char vm[POOLMEM_NAME_MAX];	/* "" unless bound */
};

/*
 * zNUMA windows (POOLMEM_DOMAIN_ZNUMA). A window file is another name of
 * the domain's inode, told apart by its dentry's d_fsdata: PM_WIN_WHOLE
 * (NULL) for the domain's own name, PM_WIN_LOCAL or PM_WIN_POOL. One
 * inode means one address space: unmap_mapping_range() on the domain
 * reaches every mapping, whichever name it was made through (pm_mmap()
 * maps a window as the whole file at the window's offset).
 *
 * A named domain has all three names from birth. A znuma profile's domain
 * has no name of its own: the file that made it becomes its local window
 * (d_fsdata set once, after the domain is published), and the pool window
 * joins as a second link made by pm_create().
 */
extern const char *const pm_window_suffix[PM_NR_WIN];

static inline enum pm_window pm_dentry_window(const struct dentry *dentry)
{
	return (enum pm_window)(unsigned long)READ_ONCE(dentry->d_fsdata);
}

/* Bytes [*base, *base + *size) of @d that window @w shows. */
static inline void pm_domain_window(const struct pm_domain *d, enum pm_window w, u64 *base, u64 *size)
{
	*base = w == PM_WIN_POOL ? d->win_split : 0;
	*size = w == PM_WIN_LOCAL ? d->win_split : d->size - *base;
}

/*
 * Has unit @unit (its head page) a hardware-poisoned page? memory_failure()
 * sets PG_hwpoison on the page and then gives up on our units (not LRU, not
 * movable, not splittable), so the flag is all that says so.
 */
static inline bool pm_unit_poisoned(struct page *unit)
{
	unsigned long i;

	if (!IS_ENABLED(CONFIG_MEMORY_FAILURE))
		return false;
	for (i = 0; i < PM_UNIT_PAGES; i++)
		if (PageHWPoison(unit + i))
			return true;
	return false;
}

/* d->poison values: found by a move's copy, not yet counted; counted (mf.c) */
#define PM_POISON_SEEN		1
#define PM_POISON_COUNTED	2

/*
 * Is the page at offset @off of chunk @idx lost to a memory error (mf.c)?
 * Caller holds d->lock.
 */
static inline bool pm_poison_at(struct pm_domain *d, u64 idx, u64 off)
{
	return d->meta[idx].poison && xa_load(&d->poison, off >> PAGE_SHIFT);
}

/* Any offset lost in [@off, @off + @len)? RCU-safe: no lock needed. */
static inline bool pm_poison_in(struct pm_domain *d, u64 off, u64 len)
{
	unsigned long index = off >> PAGE_SHIFT;

	return xa_find(&d->poison, &index, (off + len - 1) >> PAGE_SHIFT, XA_PRESENT);
}

/* pool.c: the registries (pm_lock), pools, node figures */
extern struct mutex pm_lock;
extern struct pm_pool *pm_pools[POOLMEM_MAX_POOLS];
extern struct list_head pm_domains;
/*
 * Every listed domain by id (the lowest free at its admission): where a
 * reader of /proc/poolmem/domains resumes. Written under pm_lock, with
 * pm_domains.
 */
extern struct xarray pm_domain_ids;
/* Every listed domain by name (pm_domain_find()); pm_lock. */
#define PM_DOMAIN_NAME_BITS	12
extern struct hlist_head pm_domain_names[1 << PM_DOMAIN_NAME_BITS];
/* domain.c */
extern struct list_head pm_profiles;
extern struct class *pm_class;
/*
 * A writable module parameter that refuses values outside [@lo, @hi] with
 * -EINVAL (a bad write must not reach the arithmetic that uses it).
 */
#define PM_PARAM_UINT_RANGE(name, var, lo, hi, perm)					\
static int pm_param_set_##name(const char *val, const struct kernel_param *kp)		\
{											\
	return param_set_uint_minmax(val, kp, lo, hi);					\
}											\
static const struct kernel_param_ops pm_param_ops_##name = {				\
	.set = pm_param_set_##name,							\
	.get = param_get_uint,								\
};											\
module_param_cb(name, &pm_param_ops_##name, &var, perm);				\
__MODULE_PARM_TYPE(name, "uint")

/* reserve.c: pre-zeroed units per node */
#define PM_ZERO_RESERVE_PCT	U64_MAX
extern unsigned int pm_zero_reserve_pct;
int pm_reserve_init(void);
void pm_reserve_stop(void);
void pm_reserve_exit(void);
struct page *pm_reserve_take(int nid, bool pinnable);
void pm_reserve_offline(int nid, unsigned long start_pfn, unsigned long nr_pages);
void pm_reserve_online(int nid);
void pm_zerod_kick(void);
u64 pm_pool_zero_reserve_target(struct pm_pool *p);
u64 pm_node_zero_reserve_bytes(int nid);
void pm_node_zero_reserve_stats(int nid, u64 *refills, u64 *hits, u64 *misses);
ssize_t pm_zero_reserve_nodes_show(char *buf);

/* fault.c: fault injection (CONFIG_FAULT_INJECTION) */
bool pm_should_fail(size_t size);
bool pm_should_fail_mc(void);
bool pm_inject_hold_busy(void);
void pm_inject_alloc_delay(struct pm_domain *d, size_t slot, struct page *unit);
void pm_fault_debugfs(struct dentry *dir);

/* ctl.c: /dev/poolmem/control */
int pm_ctl_init(void);
void pm_ctl_exit(void);

/* bind.c: bindings of directories to come (POOLMEM_VM_BIND) */
int pm_vm_bind(const struct poolmem_bind *b);
ssize_t pm_vm_bindings_show(char *buf);
int pm_bind_take(struct dentry *dentry, struct pm_dir *pd);
void pm_binds_exit(void);

/* poolsys.c: pool add, the pools' and the module's sysfs files */
int pm_pool_add(struct poolmem_pool_add *arg);
int pm_poolsys_init(void);
void pm_poolsys_exit(void);

/* pool.c: pools, node figures, access-factor windows, the sysfs tree */
extern unsigned int pm_window_ms;
extern u64 pm_pools_draining;
extern u64 pm_pools_contended;
u64 pm_epoch(void);
u64 pm_node_present_bytes(int nid);
u64 pm_node_pinnable_bytes(int nid);
u64 pm_node_free_bytes(int nid);
u64 pm_pools_free(u64 mask);
struct pm_pool *pm_pool_find(const char *name);
struct pm_pool *pm_node_pool(int nid);
void pm_pool_fill_info(struct pm_pool *p, struct poolmem_pool_info *info);
u64 pm_pool_limit(const struct pm_pool *p, bool pinnable);
void pm_pool_event(struct pm_pool *p, u64 n);
u64 pm_pool_af(struct pm_pool *p);
int pm_pools_sysfs_init(void);
void pm_pools_sysfs_exit(void);
struct kobject *pm_sysfs_root(void);
struct kobject *pm_sysfs_pools(void);
void pm_kobj_pending_add(void);
void pm_kobj_released(void);
int pm_profile_sysfs_add(struct pm_profile *pr);
void pm_profile_sysfs_hold(struct pm_profile *pr);
void pm_profile_sysfs_drop(struct pm_profile *pr);
void pm_profile_sysfs_put(struct pm_profile *pr);
void pm_pools_remove_all(void);

/* domain.c: lifetime and admission */
extern unsigned int pm_local_overcommit_pct;
int pm_first_cpu_node(void);
struct pm_profile *pm_profile_find(const char *name);
void pm_profile_put(struct pm_profile *pr);
struct pm_domain *pm_domain_find(const char *name);
/*
 * A domain as asked for: by POOLMEM_DOMAIN_CREATE (ctl.c checks the uapi
 * struct's size, reserved and out fields and copies the rest here), by a
 * profile's file (pm_profile_fill_create()), or as a POOLMEM_DOMAIN_SET
 * proposal. No internal caller builds a uapi struct.
 */
struct pm_domain_spec {
	char name[POOLMEM_NAME_MAX];
	u32 flags;			/* POOLMEM_DOMAIN_* */
	u64 bytes;			/* size of the domain file, chunk multiple */
	u64 chunk_bytes;		/* 0 = 2 MiB (pm_domain_new() fills it in) */
	u64 quota[PM_NR_TIERS];		/* hard limits */
	u64 pool_mask;			/* allowed pool ids; 0 = every pool */
	int home_node;			/* NUMA_NO_NODE = first node with CPUs */
	u32 tier_policy;		/* enum poolmem_tier_policy */
	u32 pool_select;		/* enum poolmem_pool_select */
};

/* Which admission limit refused a domain, and its figures (for the caller). */
struct pm_refusal {
	u32 why;		/* enum poolmem_refusal */
	u64 committed;		/* held by the other domains against the limit */
	u64 limit;
	int node;		/* the home node the request resolved to */
};

struct pm_domain *pm_domain_new(const struct pm_domain_spec *arg,
				struct pm_profile *profile, const char *why,
				struct pm_refusal *refusal);
int pm_domain_register(struct pm_domain *d, struct inode *inode, const char *path);
void pm_domain_unpublish(struct pm_domain *d);
void pm_domain_abandon(struct pm_domain *d);
struct pm_domain *pm_domain_find_live(const char *name);
void pm_domain_unlink(struct pm_domain *d);
void pm_domain_evict(struct pm_domain *d);
void pm_domain_fill_info(struct pm_domain *d, struct poolmem_domain_info *info);
/* A domain and its file, held for work done with pm_lock dropped. */
struct pm_held {
	struct pm_domain *d;
	struct inode *inode;
};
struct inode *pm_domain_hold(struct pm_domain *d);
void pm_domain_exit_sb(void);
void pm_domain_release_held(struct pm_held *h);
int pm_admit(const struct pm_domain_spec *a, u64 mask, const struct pm_domain *self,
	     const char *why, struct pm_refusal *refusal);
/* what domains commit, per (home node, pool set): pm_admit()'s figures */
struct pm_commit;
struct pm_commit *pm_commit_alloc(void);
void pm_commit_add(const struct pm_domain *d, struct pm_commit **spare);
void pm_commit_del(const struct pm_domain *d);
void pm_commit_drop_pool(unsigned int id);
void pm_commit_verify(void);
const struct pm_commit *pm_commit_overcommitted(unsigned int id, struct pm_refusal *r);
bool pm_commit_holds(const struct pm_commit *c, const struct pm_domain *d, const struct pm_refusal *r);
int pm_profile_fill_create(const struct pm_profile *pr, u64 size,
			   struct pm_domain_spec *a, const char *why);

/* chunk.c: placement, allocation, free, retired chunks */
void pm_poison_forget(struct pm_domain *d, u64 idx);
int pm_chunk_place(struct pm_domain *d, u64 idx);
void pm_chunk_unmap(struct pm_domain *d, u64 idx);
void pm_units_unmap(struct pm_domain *d, struct inode *inode, u64 idx, struct page **units);
#define PM_ALLOC_ZERO	(1u << 0)	/* zero the units (a new chunk, not a move's copy) */
#define PM_ALLOC_RETRY	(1u << 1)	/* the last try: reclaim hard (__GFP_RETRY_MAYFAIL) */
#define PM_ALLOC_LOCAL	(1u << 2)	/* the local tier's: never in CMA (chunk.c) */
int pm_units_alloc(struct pm_domain *d, size_t first, int nid, struct page **out,
		   unsigned int flags);
void pm_units_free(struct page **units, unsigned int nr);
unsigned int pm_pool_candidates(struct pm_domain *d, u64 mask, u8 *ids);
void pm_chunk_busy(struct pm_domain *d, u64 idx, u8 why);
void pm_quota_settle(struct pm_domain *d, u32 tier);
u64 pm_domain_outside_bytes(struct pm_domain *d);	/* caller holds d->lock */
u64 pm_domain_moves_pending(struct pm_domain *d);	/* caller holds d->lock */
void pm_chunk_unbusy(struct pm_domain *d, u64 idx);
int pm_chunk_wait(struct pm_domain *d, u64 idx);
void pm_domain_quiesce(struct pm_domain *d);
bool pm_chunk_discard(struct pm_domain *d, u64 idx);
void pm_chunk_lose(struct pm_domain *d, u64 idx);
void pm_chunk_free(struct pm_domain *d, u64 idx);
bool pm_units_shared(struct page **units, unsigned int nr);
struct page *pm_page_at(struct pm_domain *d, u64 off);
struct pm_pool *pm_chunk_pool(struct pm_domain *d, u64 idx);
void pm_chunk_retire_shared(struct pm_domain *d);
void pm_retired_reap_wait(struct pm_domain *d);
int pm_chunk_init(void);
void pm_chunk_exit(void);

/* move.c: the move engine (moving live chunks), for the files above it */
#define PM_MOVE_RUN	16	/* most chunks of a run: one unmap, one TLB flush */
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
	u64 to_mask;			/* to a pool of these only (rebalancing); 0: any */
};

int pm_chunk_move(struct pm_domain *d, struct inode *inode, u64 idx, u8 from, u32 tier);
int pm_chunk_move_how(struct pm_domain *d, struct inode *inode, u64 idx, u8 from, u32 tier,
		      bool stay, unsigned long retire_pfn);
void pm_chunks_move_run(struct pm_domain *d, struct inode *inode, u64 idx, unsigned int n,
			u8 from, int *res);
int pm_chunk_exchange(struct pm_domain *d, struct inode *inode, u64 lidx, u64 pidx, u8 from);
int pm_chunk_move_to(struct pm_domain *d, struct inode *inode, u64 idx, u8 from, u8 to);
int pm_move_freeze(struct pm_domain *d, struct inode *inode, struct pm_move *m);
void pm_move_abort(struct pm_domain *d, struct pm_move *m, int ret);
struct page **pm_move_arrays(struct pm_domain *d, struct pm_move *m, unsigned int nr);
void pm_move_wait_done(u64 ns);
void pm_move_debugfs(struct dentry *dir);

/* drain.c: pool drain, a drained pool's detach and removal */
int pm_pool_remove(const char *name);
/*
 * A drain call (pm_pool_drain()): what POOLMEM_POOL_DRAIN asks and answers,
 * without the uapi's size, name and reserved fields, so that internal
 * callers pass no uapi struct.
 */
struct pm_drain_req {
	u32 flags;			/* POOLMEM_DRAIN_CHECK, _ALLOW_LOCAL */
	u64 max_bytes;			/* move at most this much; 0 = all */
	/* out */
	u64 moved_bytes, remaining_bytes, busy_chunks;
	char blocker[POOLMEM_NAME_MAX];	/* the domain that stopped the drain */
	u64 blocker_offset, need_bytes, room_bytes;
};
int pm_pool_drain(const char *name, struct pm_drain_req *a);
int pm_pool_undrain(const char *name, u64 *remaining);
int pm_pool_revoke(const char *name, u64 *remaining);
int pm_drain_init(void);
void pm_drain_exit(void);
int pm_pool_detach(struct pm_pool *p);

/* offline.c: revoke, evacuation for offline, soft offline */
int pm_revoke_range(int nid, unsigned long start_pfn, unsigned long last_pfn);
int pm_evacuate_range(int nid, unsigned long start_pfn, unsigned long last_pfn);
int pm_chunk_soft_offline(struct pm_domain *d, struct inode *inode, size_t slot, struct page *unit,
			  unsigned long pfn);

/* rmap.c, for offline.c */
bool pm_rmap_first(unsigned long first, unsigned long last, struct pm_domain **d, size_t *slot,
		   struct page **unit);
struct pm_domain *pm_rmap_live(struct pm_domain *ed);

/* pin.c: long-term pins of chunks that can't be pinned */
bool pm_chunk_longterm_ok(struct pm_domain *d, u64 idx);
vm_fault_t pm_fault_longterm(struct pm_domain *d, struct vm_fault *vmf, u64 idx);
void pm_pinwatch_start(void);
void pm_pinwatch_stop(void);
void pm_pinwatch_debugfs(struct dentry *dir);

/* tiering.c: rebalancing between pools */
void pm_rebalance_start(void);
void pm_rebalance_stop(void);
u64 pm_rebalance_contended(void);	/* pool ids contended now */

/* set.c: POOLMEM_DOMAIN_SET */
/*
 * A POOLMEM_DOMAIN_SET request, checked by ctl.c: the uapi's fields
 * without its size. In: flags (POOLMEM_SET_*) and the settings they name,
 * move_bytes with POOLMEM_SET_STEP; out: the rest.
 */
struct pm_set_req {
	u32 flags;
	char name[POOLMEM_NAME_MAX];
	u64 quota[PM_NR_TIERS];
	u64 pool_mask;
	u32 tier_policy, pool_select;
	u32 tiering, hot_ms;
	u64 scan_rate, move_bytes;
	u64 moved_bytes, need_bytes, room_bytes, remaining_bytes;	/* out */
};
int pm_domain_set(struct pm_set_req *a);

/* tiering.c: access sampling by refault, hot/cold moves */
int pm_tier_set(struct pm_domain *d, u32 mode, u64 scan_rate, u32 hot_ms);
void pm_tier_stop(struct pm_domain *d);
void pm_heat_refault(struct pm_domain *d, u64 idx, struct pm_pool *p);

/* file.c: the domain file's operations and fault */
extern const struct file_operations pm_domain_fops;
int pm_discard(struct pm_domain *d, u64 offset, u64 len);

/* fs.c: the poolmem file system */
extern const struct inode_operations pm_domain_iops;
int pm_fs_init(void);
void pm_fs_exit(void);
int pm_fs_create_domain(struct pm_domain *d, umode_t mode, kuid_t uid, kgid_t gid);
int pm_fs_remove(const char *name, bool dir);
int pm_profile_create(const struct poolmem_profile *conf);

/* rmap.c: chunk map, reverse map, memory offline notifier */
int pm_rmap_insert(struct page *unit, struct pm_domain *d, size_t slot);
void pm_rmap_erase(struct page *unit);
void pm_inflight_begin(int nid);
void pm_inflight_end(int nid);
int pm_domain_map(struct pm_domain *d, struct poolmem_map *m);
struct pm_domain *pm_rmap_lookup(u64 pfn, u64 *offset, u32 *pool);
bool pm_inflight_wait(int nid);
void pm_rmap_exit(void);

/* hotplug.c: the memory notifier */
int pm_hotplug_init(void);
void pm_hotplug_exit(void);

/* mf.c: memory errors */
int pm_mf_init(void);
void pm_mf_exit(void);
bool pm_poison_mark(struct pm_domain *d, u64 idx, struct page **units);
int pm_mf_errors(struct poolmem_memory_errors *a);
bool pm_mf_range_poisoned(unsigned long first, unsigned long last, unsigned long *pfn);
int pm_mf_soft_offline(struct poolmem_page_offline *a);
void pm_pool_drain_workfn(struct work_struct *work);

/* unit.c: units held out of use for good (poisoned, revoked) */
void pm_unit_put(struct page *unit);
void pm_unit_hold(struct page *unit);
void pm_held_add_frozen(struct page *unit);
int pm_held_going_offline(unsigned long first, unsigned long last);
void pm_held_cancel_offline(unsigned long first, unsigned long last);
void pm_held_offline(unsigned long first, unsigned long last);
void pm_held_exit(void);
int pm_page_mc_failed(struct page *page);
bool pm_page_zero_mc(struct page *page, void *buf);

/* sysfs.c: /sys/class/poolmem/<name>/ and /proc/poolmem/ */
void pm_domain_ownership(pm_class_dev_t *dev, kuid_t *uid, kgid_t *gid);
extern const struct attribute_group *pm_domain_groups[];
int pm_proc_init(void);
void pm_proc_exit(void);

#endif /* POOLMEM_INTERNAL_H */
