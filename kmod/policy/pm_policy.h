/* SPDX-License-Identifier: GPL-2.0 */
/*
 * poolmem placement policy: plain C with no kernel headers, compiled into
 * poolmem.ko and into the host unit tests (tests/unit/policy_test.cpp).
 *
 * The caller takes a snapshot of the counters (under its own locks), asks
 * these functions for an order of preference, and tries the candidates in
 * that order: a tier or pool that turns out to be full is skipped, which is
 * how "fall back within quota" works.
 */
#ifndef POOLMEM_POLICY_H
#define POOLMEM_POLICY_H

#ifdef __KERNEL__
#include <linux/types.h>
#else
#include <stdint.h>
typedef uint32_t u32;
typedef uint64_t u64;
typedef int64_t s64;
#endif

#ifdef __cplusplus
extern "C" {
#endif

#define PM_TIER_LOCAL	0
#define PM_TIER_POOL	1
#define PM_NR_TIERS	2

#define PM_TIER_LOCAL_FIRST	0
#define PM_TIER_INTERLEAVE	1
#define PM_TIER_POOL_FIRST	2
#define PM_NR_TIER_POLICIES	3

#define PM_SELECT_ROUND_ROBIN	0
#define PM_SELECT_RANDOM	1
#define PM_SELECT_NEAREST	2
#define PM_SELECT_SMART_IDLE	3
#define PM_NR_POOL_SELECTS	4

#define PM_MAX_POOLS		64
#define PM_NAME_MAX		32	/* with the NUL */

/*
 * These constants are the uapi's (POOLMEM_TIER_*, POOLMEM_*_FIRST,
 * POOLMEM_SELECT_*, POOLMEM_MAX_POOLS, POOLMEM_NAME_MAX); the module
 * ties them together with BUILD_BUG_ON (main.c) and the host unit tests
 * with static_assert, so the policy code needs no uapi header.
 */

/* A domain's geometry: chunk sizes are powers of two in this range. */
#define PM_DOMAIN_CHUNK_MIN	(2ULL << 20)
#define PM_DOMAIN_CHUNK_MAX	(1ULL << 30)
#define PM_DOMAIN_BYTES_MAX	(1ULL << 46)	/* 64 TiB: bounds the chunk map */

/* The first rule a domain's size, chunk size and quotas break. */
enum pm_geometry {
	PM_GEO_OK = 0,
	PM_GEO_CHUNK,		/* chunk not a power of two in [CHUNK_MIN, CHUNK_MAX] */
	PM_GEO_SIZE,		/* size 0 or above PM_DOMAIN_BYTES_MAX */
	PM_GEO_SIZE_ALIGN,	/* size not a multiple of the chunk */
	PM_GEO_QUOTA_ABOVE,	/* a tier's quota above the size */
	PM_GEO_QUOTA_COVER,	/* the quotas together below the size */
	PM_GEO_QUOTA_ALIGN,	/* a quota not a multiple of the chunk */
	PM_NR_GEO
};
extern const char *const pm_geometry_names[PM_NR_GEO];

/*
 * Check a domain of @bytes in chunks of @chunk with @quota per tier, in the
 * order above (the kernel's check at create, and poolctl's before it asks).
 * Quotas are hard and must cover the size, or the VM dies later.
 */
enum pm_geometry pm_domain_geometry(u64 bytes, u64 chunk, const u64 quota[PM_NR_TIERS]);

/* The first rule a profile's chunk size and quotas break. */
enum pm_profile_geometry {
	PM_PGEO_OK = 0,
	PM_PGEO_CHUNK,		/* chunk not a power of two in [CHUNK_MIN, CHUNK_MAX] */
	PM_PGEO_PCT_ABOVE,	/* a tier's percentage above 100 */
	PM_PGEO_PCT_AND_BYTES,	/* a tier's quota both a percentage and bytes */
	PM_PGEO_QUOTA_ALIGN,	/* a tier's bytes not a multiple of the chunk */
	PM_PGEO_QUOTA_MAX,	/* a tier's bytes above PM_DOMAIN_BYTES_MAX */
	PM_PGEO_COVER,		/* percentages alone (no bytes) below 100 */
	PM_PGEO_ZNUMA,		/* znuma: not two percentages adding up to 100, neither 0 */
	PM_NR_PGEO
};
extern const char *const pm_profile_geometry_names[PM_NR_PGEO];

/*
 * Check a profile's geometry: chunks of @chunk (0: PM_DOMAIN_CHUNK_MIN),
 * a quota per tier of @pct percent of a domain's size or of @bytes (one
 * of the two, or neither), @znuma set for a profile of znuma domains, in
 * the order above (the kernel's check at POOLMEM_PROFILE_CREATE, and
 * poolctl's before it asks). *@tier, if not NULL, gets the tier a
 * per-tier rule failed for.
 */
enum pm_profile_geometry pm_profile_geometry(u64 chunk, const u32 pct[PM_NR_TIERS], const u64 bytes[PM_NR_TIERS],
					     int znuma, u32 *tier);

/* Names as poolctl, sysfs and the kernel log print them. */
extern const char *const pm_tier_names[PM_NR_TIERS];		/* "local", "pool" */
extern const char *const pm_tier_policy_names[PM_NR_TIER_POLICIES];
extern const char *const pm_pool_select_names[PM_NR_POOL_SELECTS];

/* Index of @s in @names[0..n), or -1. */
int pm_name_index(const char *const *names, unsigned int n, const char *s);

/*
 * A valid object name (pool, domain, profile): 1 to PM_NAME_MAX - 1 ASCII
 * characters of [A-Za-z0-9_.-], not starting with '.' or '-', not
 * "control". @buf holds @size bytes; everything after the name must be NUL
 * (no hidden bytes in an ioctl argument). Returns 1 or 0.
 */
int pm_name_valid(const char *buf, unsigned int size);

/* Admission arithmetic (bytes). */

/* @bytes * @pct / 100 without overflow for any u64 @bytes. */
u64 pm_pct_of(u64 bytes, u32 pct);

/*
 * A profile's quota for one tier of a domain of @size bytes with chunks of
 * @chunk bytes (a power of two): @pct percent of the size rounded up to
 * whole chunks when @pct is set, else @cap (a byte cap; must be chunk
 * aligned), never more than @size.
 */
u64 pm_profile_quota(u64 size, u64 chunk, u32 pct, u64 cap);

/* A domain's tier counters, in chunks. */
struct pm_tier_view {
	u64 used[PM_NR_TIERS];
	u64 quota[PM_NR_TIERS];
};

/*
 * Fill @order with the tiers that still have quota for one more chunk, most
 * preferred first, and return how many (0: every quota is used up).
 * interleave picks the tier whose used/quota ratio is lower (local on a
 * tie), which spreads chunks in the ratio of the quotas.
 */
unsigned int pm_tier_order(u32 policy, const struct pm_tier_view *t, u32 order[PM_NR_TIERS]);

/*
 * Access factor of a pool (seed 003's "smart idle"): event counts in
 * PM_AF_WINDOWS windows of equal length, win[0] the current one. The value
 * weighs window i by 2^(PM_AF_WINDOWS - 1 - i), so recent activity counts
 * most and an idle pool decays to 0 after PM_AF_WINDOWS windows.
 */
#define PM_AF_WINDOWS	4

struct pm_af {
	u64 win[PM_AF_WINDOWS];
	u64 epoch;		/* window number of win[0] */
};

/*
 * Move the windows forward to window number @epoch. Never backwards, except
 * that an @epoch PM_AF_WINDOWS or more behind restarts the windows empty
 * (the window length changed).
 */
void pm_af_advance(struct pm_af *a, u64 epoch);
/* Count @n events in window @epoch. */
void pm_af_add(struct pm_af *a, u64 epoch, u64 n);
/* The weighted access factor as of window @epoch. */
u64 pm_af_value(const struct pm_af *a, u64 epoch);

/* What pool selection needs to know of one candidate pool. */
struct pm_pool_view {
	u32 id;
	u32 distance;		/* NUMA distance from the domain's home node */
	u64 allocated;		/* bytes held by chunks */
	u64 af;			/* pm_af_value() */
};

/* m = ceil(log2 n), at least 1: how many idle pools smart-idle considers. */
unsigned int pm_smart_idle_m(unsigned int n);

/*
 * Fill @order (n entries) with indexes into @v, most preferred first:
 *  round-robin  v[cursor % n], then the following ones cyclically;
 *  random       v[rnd % n], then cyclically;
 *  nearest      by distance, then id;
 *  smart-idle   the m = ceil(log2 n) pools with the lowest access factor
 *               ordered by least allocated, then the rest by access factor.
 * Ties break on the lower id so the order is deterministic. Returns n, or 0
 * for an unknown policy or n > PM_MAX_POOLS.
 */
unsigned int pm_pool_order(u32 policy, const struct pm_pool_view *v, unsigned int n,
			   u32 cursor, u32 rnd, u32 *order);

/*
 * Where a new domain's round-robin cursor starts (pm_rr_cursor_start()).
 * The module uses PM_RR_START_MODULE; the simulator can run the others:
 *  zero      0 for every domain (the module before ABI 10): every VM's
 *            first pool chunks, its hot ones, go to the same pools;
 *  random    @rnd, a random number per domain;
 *  sequence  @seq, the host's count of domains made before this one:
 *            consecutive VMs start on consecutive pools, but every host
 *            starts at pool 0, so hosts sharing pools collide;
 *  salted    @seq + @salt, the salt a random number drawn once per host
 *            (module load): consecutive VMs spread over the pools and
 *            hosts start at different ones.
 */
enum pm_rr_start { PM_RR_START_ZERO, PM_RR_START_RANDOM, PM_RR_START_SEQUENCE, PM_RR_START_SALTED,
		   PM_NR_RR_STARTS };
#define PM_RR_START_MODULE	PM_RR_START_SALTED
extern const char *const pm_rr_start_names[PM_NR_RR_STARTS];

u32 pm_rr_cursor_start(u32 how, u32 seq, u32 salt, u32 rnd);

#ifdef __cplusplus
}
#endif

#endif /* POOLMEM_POLICY_H */
