/* SPDX-License-Identifier: GPL-2.0 */
/*
 * Rebalancing between pools (issue 51): which pools are contended, and
 * where a hot chunk on one should go. Plain C with no kernel headers, as
 * pm_policy.h: the module's tiering worker, the simulator (poolctl
 * simulate --rebalance) and the unit tests run these functions.
 *
 * Placement (pm_pool_order) sees the pools' load only when a chunk is
 * made. A chunk placed on an idle pool may turn hot there, and a pool can
 * come to hold the hot sets of many VMs, or be loaded by hosts that don't
 * run poolmem; nothing then moves the chunks away. Here, a pool is
 * contended when its access factor (pm_af_value, the units of every Af
 * below) stays above the mean of the other pools' by a margin, for a
 * number of checks in a row, so that a burst shorter than that moves
 * nothing. The caller then takes the hottest chunks there, hottest first,
 * and asks pm_rb_dest() for each: the allowed pool with the lowest Af
 * that is not contended and has room, and only if the move narrows the
 * gap. Since a move never leaves the destination hotter than the source
 * is left, a chunk can't be sent back by the next check (no bouncing),
 * and the moves of one check stop by themselves once the pools are
 * within a chunk's heat of each other. Quotas are not touched: a chunk
 * moves from pool to pool within the domain's pool tier. The rate (chunks
 * per check) is the caller's.
 *
 * A pool's Af lags its load by up to PM_AF_WINDOWS windows: a chunk moved
 * still counts where it was for a while, and not yet where it went. So
 * each pool carries a shift, the Af the recent moves took away (negative)
 * or brought (positive) that the measure does not show yet; every check
 * adds it to the measured Af and then halves it, as the windows' weights
 * (8, 4, 2, 1) hand a moved chunk's accesses over. Without it, the next
 * checks, and every other domain in the same check, would move the same
 * load again and overshoot, and chunks would come back.
 */
#ifndef POOLMEM_REBALANCE_H
#define POOLMEM_REBALANCE_H

#include "pm_policy.h"

#ifdef __cplusplus
extern "C" {
#endif

struct pm_rb_params {
	u32 margin_pct;		/* contended: Af above the others' mean by this percent */
	u32 periods;		/* ... at this many checks in a row (1: at once) */
	u64 floor;		/* an Af below this is never contended (an idle rack's noise) */
};

/* One pool, as a check sees it. */
struct pm_rb_pool {
	u64 af;			/* in: its measured Af; pm_rb_check() adds the shift, pm_rb_moved() the moves */
	u64 free;		/* in: bytes free for chunks */
	u32 over;		/* kept by the caller between checks: checks in a row above the margin */
	s64 shift;		/* kept by the caller between checks: the moves' Af the measure lags */
};

/* Af values are taken at most this (the sums then fit in 64 bits whatever the margin). */
#define PM_RB_AF_MAX	(1ULL << 40)

/*
 * One check of @n pools: adds each pool's @shift to its @af (at most
 * PM_RB_AF_MAX, at least 0) and halves the shift, updates @over, and
 * returns the mask of pools contended now (above the margin for
 * @p->periods checks in a row). Fewer than two pools: none.
 */
u64 pm_rb_check(const struct pm_rb_params *p, struct pm_rb_pool *pools, unsigned int n);

/*
 * Where a chunk of @chunk bytes and @heat (its accesses, weighted as Af
 * weighs them) on pool @src should go: among the pools in @allowed,
 * neither @src nor in @contended, with @chunk bytes free, the one with
 * the lowest Af (the lowest id on a tie). Returns its index, or -1 to
 * leave the chunk: no such pool, or the move would not narrow the gap
 * (it must leave src's Af, less @heat, at least the destination's plus
 * @heat; a chunk of no heat never moves).
 */
int pm_rb_dest(const struct pm_rb_pool *pools, unsigned int n, u32 src, u64 allowed, u64 contended, u64 heat,
	       u64 chunk);

/* After moving such a chunk from @src to @dst: both pools' Af and shift, and room. */
void pm_rb_moved(struct pm_rb_pool *pools, u32 src, u32 dst, u64 heat, u64 chunk);

#ifdef __cplusplus
}
#endif

#endif /* POOLMEM_REBALANCE_H */
