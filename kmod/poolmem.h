/* SPDX-License-Identifier: GPL-2.0 */
/*
 * poolmem internals shared by the module's files. See main.c for how the
 * module works and for the lock order.
 */
#ifndef POOLMEM_INTERNAL_H
#define POOLMEM_INTERNAL_H

#include <linux/atomic.h>
#include <linux/cdev.h>
#include <linux/device.h>
#include <linux/fs.h>
#include <linux/kobject.h>
#include <linux/maple_tree.h>
#include <linux/mutex.h>
#include <linux/spinlock.h>
#include <linux/types.h>

#include <uapi/poolmem.h>

#include "policy/pm_policy.h"

/* Chunks are built of 2 MiB units, each one compound buddy allocation. */
#define PM_UNIT_ORDER		(21 - PAGE_SHIFT)
#define PM_UNIT_PAGES		(1UL << PM_UNIT_ORDER)
#define PM_UNIT_BYTES		(PAGE_SIZE << PM_UNIT_ORDER)
#define PM_CHUNK_MIN		PM_UNIT_BYTES
#define PM_CHUNK_MAX		(1ULL << 30)
#define PM_HIST_BUCKETS		40	/* log2 ns: bucket i counts [2^i, 2^(i+1)) */
#define PM_MAX_DOMAINS		1024	/* minors of domain devices */
#define PM_POOL_NONE		0xff	/* chunk_meta.pool of a local chunk */

/* A registered pool: a NUMA node of far memory. */
struct pm_pool {
	u32 id;				/* index in pm_pools[] and bit in pool masks */
	char name[POOLMEM_NAME_MAX];
	int node;
	u32 tier;			/* POOLMEM_TIER_POOL */
	u32 overcommit_pct;		/* admission: capacity * pct / 100 */
	u64 committed;			/* pool quotas of live domains allowed here; pm_lock */
	u32 users;			/* live domains allowed here; pm_lock */
	atomic64_t allocated;		/* bytes in chunks */
	atomic64_t chunks;
	atomic64_t allocations;
	atomic64_t faults;
	atomic64_t failures;
	/* Protects af. Taken in the fault path: never sleep under it. */
	spinlock_t af_lock;
	struct pm_af af;
	struct kobject kobj;		/* /sys/kernel/poolmem/pools/<name> */
};

/* Per-chunk placement, 4 bytes so large domains stay cheap. */
struct pm_chunk_meta {
	u8 present;
	u8 tier;
	u8 pool;			/* pool id, or PM_POOL_NONE */
	u8 busy;			/* a fault is allocating it, d->lock dropped */
};

/* A VM's memory: /dev/poolmem/<name>. */
struct pm_domain {
	char name[POOLMEM_NAME_MAX];
	u64 size;			/* bytes, chunk multiple */
	u64 chunk_bytes;
	unsigned int chunk_shift;
	unsigned int units_per_chunk;
	u64 nr_chunks;
	u64 quota[PM_NR_TIERS];		/* bytes */
	u64 pool_mask;			/* pools chunks may come from */
	int home_node;
	u32 tier_policy;
	u32 pool_select;
	kuid_t uid;
	kgid_t gid;
	umode_t mode;
	bool pinnable;			/* POOLMEM_DOMAIN_PINNABLE */
	bool dead;			/* destroyed: no new opens; pm_lock */
	struct list_head list;		/* pm_domains; pm_lock */

	/*
	 * Protects the chunk map (units, meta), usage, chunks_per_pool,
	 * rr_cursor and the per-domain counters below. Held for placement
	 * decisions and, for small mappings, page table updates in the fault
	 * path, but not while a chunk is allocated and zeroed: that chunk is
	 * marked busy (other faults on it wait for it, wait_var_event on its
	 * meta) and its bytes are reserved in usage, so quotas stay hard.
	 * Taken after pm_lock, never before it, and before the page lock of
	 * a unit.
	 */
	struct mutex lock;
	struct page **units;		/* nr_chunks * units_per_chunk; NULL = absent */
	struct pm_chunk_meta *meta;	/* nr_chunks */
	struct page **batch;		/* PM_UNIT_PAGES pointers for vm_insert_pages */
	/* scratch space of pm_chunk_place(), too big for the stack */
	struct pm_pool_view views[POOLMEM_MAX_POOLS];
	u32 order[POOLMEM_MAX_POOLS];
	u64 usage[PM_NR_TIERS];		/* bytes */
	u64 chunks;
	u64 chunks_per_pool[POOLMEM_MAX_POOLS];
	u32 rr_cursor;
	u64 faults;
	u64 sigbus;
	u64 discards;
	atomic64_t hist[PM_HIST_BUCKETS];
	atomic64_t fault_ns;		/* sum of fault latencies (histogram sum) */

	/*
	 * Every open file's f_mapping: one address space for all mappings of
	 * the domain, whichever device inode was opened, so hole punching
	 * can unmap them all. An anonymous inode of pm_mnt.
	 */
	struct inode *inode;
	struct cdev cdev;
	struct device dev;		/* lifetime: the last put frees the domain */
};

/* main.c */
extern struct mutex pm_lock;
extern struct pm_pool *pm_pools[POOLMEM_MAX_POOLS];
extern struct list_head pm_domains;
extern struct maple_tree pm_rmap;
extern atomic_t pm_inflight;
extern struct class *pm_class;
extern struct vfsmount *pm_mnt;
extern dev_t pm_devt;
extern unsigned int pm_window_ms;
extern unsigned int pm_local_overcommit_pct;

int pm_name_valid(const char *name);
u64 pm_epoch(void);
u64 pm_node_present_bytes(int nid);
u64 pm_node_pinnable_bytes(int nid);
u64 pm_node_free_bytes(int nid);

/* pool.c */
struct pm_pool *pm_pool_find(const char *name);
int pm_pool_add(struct poolmem_pool_add *arg);
int pm_pool_remove(const char *name);
void pm_pool_fill_info(struct pm_pool *p, struct poolmem_pool_info *info);
u64 pm_pool_limit(const struct pm_pool *p, bool pinnable);
void pm_pool_event(struct pm_pool *p, u64 n);
u64 pm_pool_af(struct pm_pool *p);
int pm_pools_sysfs_init(void);
void pm_pools_sysfs_exit(void);
void pm_pools_remove_all(void);

/* domain.c */
struct pm_domain *pm_domain_find(const char *name);
int pm_domain_create(const struct poolmem_domain_create *arg);
int pm_domain_destroy(const char *name);
void pm_domain_fill_info(struct pm_domain *d, struct poolmem_domain_info *info);
int pm_domain_map(struct pm_domain *d, struct poolmem_map *m);
struct pm_domain *pm_rmap_lookup(u64 pfn, u64 *offset, u32 *pool);
const char *pm_rmap_entry_owner(void *entry, u64 *offset);
extern const struct attribute_group *pm_domain_groups[];

#endif /* POOLMEM_INTERNAL_H */
