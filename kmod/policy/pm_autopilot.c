// SPDX-License-Identifier: GPL-2.0
/*
 * The DRAM autopilot's decision (pm_autopilot.h). Plain C, no allocation,
 * no floating point; O(n) in the VMs. Shares are computed in 2 MiB
 * granules (the smallest chunk), so that a product of two byte counts of
 * up to 64 TiB each stays within 64 bits.
 */
#include "pm_autopilot.h"

#define PM_AP_GRANULE	PM_DOMAIN_CHUNK_MIN

static u64 pm_ap_min(u64 a, u64 b) { return a < b ? a : b; }
static u64 pm_ap_max(u64 a, u64 b) { return a > b ? a : b; }
static u64 pm_ap_round_up(u64 v, u64 c) { return (v + c - 1) & ~(c - 1); }
static u64 pm_ap_round_down(u64 v, u64 c) { return v & ~(c - 1); }
static u64 pm_ap_diff(u64 a, u64 b) { return a > b ? a - b : b - a; }

/* @a * @b / @c in granules (@a, @b <= @c), back in bytes */
static u64 pm_ap_share(u64 a, u64 b, u64 c)
{
	a /= PM_AP_GRANULE;
	b /= PM_AP_GRANULE;
	c /= PM_AP_GRANULE;
	return c ? a * b / c * PM_AP_GRANULE : 0;
}

static int pm_ap_fixed(const struct pm_ap_vm *v) { return !!(v->flags & PM_AP_F_FIXED); }

/* what the VM would get with DRAM to spare, and why */
static void pm_ap_want(const struct pm_ap_host *h, struct pm_ap_vm *v)
{
	u64 touched = v->size > v->untouched ? v->size - v->untouched : 0;
	u64 hot = pm_ap_min(v->hot, touched);
	u64 want = hot + hot / 100 * h->margin_pct;

	v->reason = PM_AP_HOT;
	if (v->slo_permille && v->pool_permille > v->slo_permille && v->local_used + v->chunk >= v->local_quota) {
		/* the quota is full and the hot set undercounts: grow past it */
		u64 grown = v->local_quota + pm_ap_max(v->chunk, v->local_quota / 8);

		if (grown > want) {
			want = grown;
			v->reason = PM_AP_SLO;
		}
	}
	want = pm_ap_round_up(want, v->chunk);
	if (want < v->min) {
		want = v->min;
		v->reason = PM_AP_MIN;
	} else if (want > v->max) {
		want = v->max;
		v->reason = PM_AP_MAX;
	}
	v->want = want;
}

/* a change of @v's quota small enough to wait */
static int pm_ap_small(const struct pm_ap_host *h, const struct pm_ap_vm *v)
{
	u64 delta = pm_ap_diff(v->target, v->local_quota);

	return !pm_ap_fixed(v) && delta && delta < pm_ap_max(v->chunk, v->local_quota / 100 * h->hysteresis_pct) &&
	       v->local_quota >= v->min && v->local_quota <= v->max;
}

/*
 * Small changes wait, unless the quota is outside [min, max]: the grows
 * first (holding one frees budget), then the shrinks while the sum still
 * fits (holding one keeps DRAM the budget may need elsewhere).
 */
static void pm_ap_hold(const struct pm_ap_host *h, struct pm_ap_vm *vms, unsigned int n)
{
	u64 sum = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		struct pm_ap_vm *v = &vms[i];

		if (v->target > v->local_quota && pm_ap_small(h, v)) {
			v->target = v->local_quota;
			v->reason = PM_AP_HOLD;
		}
		sum += v->target;
	}
	for (i = 0; i < n; i++) {
		struct pm_ap_vm *v = &vms[i];

		if (v->target < v->local_quota && pm_ap_small(h, v) &&
		    sum + (v->local_quota - v->target) <= h->budget) {
			sum += v->local_quota - v->target;
			v->target = v->local_quota;
			v->reason = PM_AP_HOLD;
		}
	}
}

/*
 * Lazy reclaim: the budget the targets leave over goes back to the VMs
 * that would shrink, each in proportion to its shrink (all of it when the
 * budget has room for every one), so that a VM gives up only what the
 * others' grows and the budget need.
 */
static void pm_ap_lazy(const struct pm_ap_host *h, struct pm_ap_vm *vms, unsigned int n)
{
	u64 sum = 0, shrink = 0, spare;
	unsigned int i;

	for (i = 0; i < n; i++) {
		sum += vms[i].target;
		if (!pm_ap_fixed(&vms[i]) && vms[i].target < vms[i].local_quota && vms[i].local_quota <= vms[i].max)
			shrink += vms[i].local_quota - vms[i].target;
	}
	if (!shrink || sum >= h->budget)
		return;
	spare = h->budget - sum;
	for (i = 0; i < n; i++) {
		struct pm_ap_vm *v = &vms[i];
		u64 give;

		if (pm_ap_fixed(v) || v->target >= v->local_quota || v->local_quota > v->max)
			continue;
		give = v->local_quota - v->target;
		if (spare < shrink)
			give = pm_ap_round_down(pm_ap_share(give, spare, shrink), v->chunk);
		if (give) {
			v->target += give;
			v->reason = PM_AP_KEEP;
		}
	}
}

/*
 * At most @h->step bytes of change in all: every change scaled by the
 * same factor, grows rounded down and shrinks up to their chunk. Each
 * share is rounded down to a granule on its own, so the shrinks' parts
 * may add up to less than the grows' (three shrinks of one granule get
 * none, a grow of three gets one): the grows then give back what the sum
 * has above the budget.
 */
static void pm_ap_rate(const struct pm_ap_host *h, struct pm_ap_vm *vms, unsigned int n)
{
	u64 total = 0;
	unsigned int i;

	for (i = 0; i < n; i++)
		if (!pm_ap_fixed(&vms[i]))
			total += pm_ap_diff(vms[i].target, vms[i].local_quota);
	if (!h->step || total <= h->step)
		return;
	for (i = 0; i < n; i++) {
		struct pm_ap_vm *v = &vms[i];
		u64 delta = pm_ap_diff(v->target, v->local_quota);
		u64 part = pm_ap_share(delta, h->step, total);
		u64 to;

		if (pm_ap_fixed(v) || !delta)
			continue;
		if (v->target > v->local_quota)
			to = v->local_quota + pm_ap_round_down(part, v->chunk);
		else
			to = v->local_quota - pm_ap_min(delta, pm_ap_round_up(part, v->chunk));
		if (to != v->target) {
			v->target = to;
			v->reason = PM_AP_RATE;
		}
	}
	for (i = 0, total = 0; i < n; i++)
		total += vms[i].target;
	for (i = 0; i < n && total > h->budget; i++) {
		struct pm_ap_vm *v = &vms[i];
		u64 cut;

		if (pm_ap_fixed(v) || v->target <= v->local_quota)
			continue;
		cut = pm_ap_min(pm_ap_round_up(total - h->budget, v->chunk), v->target - v->local_quota);
		v->target -= cut;
		total -= cut;
	}
}

enum pm_ap_error pm_ap_decide(const struct pm_ap_host *h, struct pm_ap_vm *vms, unsigned int n,
			      unsigned int *bad)
{
	u64 floor = 0, sum_want = 0, deficit = 0;
	unsigned int i;

	for (i = 0; i < n; i++) {
		const struct pm_ap_vm *v = &vms[i];

		*bad = i;
		if (!v->chunk || (v->chunk & (v->chunk - 1)) || v->min > v->max || v->max > v->size)
			return PM_AP_ERR_BOUNDS;
		if (v->slo_permille > 1000)
			return PM_AP_ERR_SLO;
		floor += pm_ap_fixed(v) ? v->local_quota : v->min;
	}
	*bad = n;
	if (floor > h->budget)
		return PM_AP_ERR_BUDGET;

	for (i = 0; i < n; i++) {
		struct pm_ap_vm *v = &vms[i];

		if (pm_ap_fixed(v)) {
			v->want = v->target = v->local_quota;
			v->reason = PM_AP_FIXED;
		} else {
			pm_ap_want(h, v);
			v->target = v->want;
			deficit += v->want - v->min;
		}
		sum_want += v->want;
	}
	if (sum_want > h->budget) {
		/* every VM its min, the rest shared by what each wants beyond it */
		u64 rest = h->budget - floor;

		for (i = 0; i < n; i++) {
			struct pm_ap_vm *v = &vms[i];

			if (pm_ap_fixed(v))
				continue;
			v->target = v->min + pm_ap_round_down(pm_ap_share(v->want - v->min, rest, deficit), v->chunk);
			if (v->target < v->want)
				v->reason = PM_AP_BUDGET;
		}
	}
	if (!h->eager)
		pm_ap_lazy(h, vms, n);
	pm_ap_hold(h, vms, n);
	pm_ap_rate(h, vms, n);
	return PM_AP_OK;
}

const char *pm_ap_reason_name(u32 reason)
{
	static const char *const names[PM_AP_NR_REASONS] = {
		[PM_AP_HOT] = "hot-set",  [PM_AP_SLO] = "slo",	  [PM_AP_MIN] = "min",
		[PM_AP_MAX] = "max",	  [PM_AP_BUDGET] = "budget", [PM_AP_HOLD] = "hold",
		[PM_AP_RATE] = "rate",	  [PM_AP_FIXED] = "fixed",  [PM_AP_KEEP] = "keep",
	};

	return reason < PM_AP_NR_REASONS ? names[reason] : "?";
}
