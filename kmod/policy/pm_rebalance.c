// SPDX-License-Identifier: GPL-2.0
/*
 * Rebalancing between pools: the decision (pm_rebalance.h). Built into
 * poolmem.ko and into the simulator library from this one file.
 */
#include "pm_rebalance.h"

u64 pm_rb_check(const struct pm_rb_params *p, struct pm_rb_pool *pools, unsigned int n)
{
	u64 sum = 0, contended = 0;
	unsigned int i;

	if (n < 2 || n > PM_MAX_POOLS)
		return 0;
	for (i = 0; i < n; i++)
		sum += pools[i].af;
	for (i = 0; i < n; i++) {
		/* af > others' mean * (100 + margin) / 100, in integers: no overflow below 2^50 */
		u64 others = sum - pools[i].af;
		int above = pools[i].af >= p->floor && pools[i].af * 100 * (n - 1) > others * (100 + p->margin_pct);

		pools[i].over = above ? pools[i].over + 1 : 0;
		if (above && pools[i].over >= (p->periods ? p->periods : 1))
			contended |= 1ULL << i;
	}
	return contended;
}

int pm_rb_dest(const struct pm_rb_pool *pools, unsigned int n, u32 src, u64 allowed, u64 contended, u64 heat,
	       u64 chunk)
{
	int best = -1;
	unsigned int i;

	if (!heat || src >= n || n > PM_MAX_POOLS)
		return -1;
	for (i = 0; i < n; i++) {
		if (i == src || !(allowed & (1ULL << i)) || (contended & (1ULL << i)) || pools[i].free < chunk)
			continue;
		if (best < 0 || pools[i].af < pools[best].af)
			best = (int)i;
	}
	/* the move must narrow the gap: af[src] - heat >= af[dst] + heat */
	if (best < 0 || pools[src].af < heat || pools[src].af - heat < pools[best].af + heat)
		return -1;
	return best;
}

void pm_rb_moved(struct pm_rb_pool *pools, u32 src, u32 dst, u64 heat, u64 chunk)
{
	pools[src].af = pools[src].af > heat ? pools[src].af - heat : 0;
	pools[dst].af += heat;
	pools[dst].free = pools[dst].free > chunk ? pools[dst].free - chunk : 0;
	pools[src].free += chunk;
}
