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

	u64 margin = p->margin_pct < 1000 ? p->margin_pct : 1000;

	if (n < 2 || n > PM_MAX_POOLS)
		return 0;
	for (i = 0; i < n; i++) {
		s64 af = (s64)(pools[i].af < PM_RB_AF_MAX ? pools[i].af : PM_RB_AF_MAX) + pools[i].shift;

		pools[i].af = af < 0 ? 0 : (u64)af < PM_RB_AF_MAX ? (u64)af : PM_RB_AF_MAX;
		pools[i].shift /= 2;
		sum += pools[i].af;
	}
	for (i = 0; i < n; i++) {
		/*
		 * af > others' mean * (100 + margin) / 100, in integers: af and
		 * others at most 2^40 and 2^46, the factors at most 6,300 and
		 * 1,100: both sides below 2^58
		 */
		u64 others = sum - pools[i].af;
		int above = pools[i].af >= p->floor && pools[i].af * 100 * (n - 1) > others * (100 + margin);

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
	pools[src].shift -= (s64)heat;
	pools[dst].shift += (s64)heat;
	pools[dst].free = pools[dst].free > chunk ? pools[dst].free - chunk : 0;
	pools[src].free += chunk;
}
