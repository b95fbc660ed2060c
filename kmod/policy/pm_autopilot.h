/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The DRAM autopilot's decision (issue 50): from each VM's measurements
 * and the host's local DRAM budget, the local quota each VM should have.
 * Plain C with no kernel headers, as pm_policy.h: the daemon (poolctl
 * autopilot), the simulator and the unit tests run this one function.
 *
 * Each VM wants its hot set in local DRAM, with a margin, within its min
 * and max; one whose share of accesses from the pool breaks its SLO while
 * its local quota is full wants more than its measured hot set says (the
 * measure undercounts; with room left, the pool share is tiering still
 * moving the hot set in, which more quota would not speed up). When the
 * wants do not fit the budget, every VM gets its min and the rest of the
 * budget is shared in proportion to what each wants beyond its min. A
 * VM that wants less than it has gives back only what the others' grows
 * and the budget need (lazy, the default: DRAM nobody asks for stays
 * where it is, so an idle VM's next burst finds its data local), or all
 * of it at once (eager: the DRAM is free for VMs to come). Small
 * changes wait (hysteresis), and one decision changes the quotas by at
 * most the move budget, every VM's change scaled alike, so a change goes
 * in steps the daemon can move at its rate. The sum of the targets never
 * exceeds the budget, no target leaves [min, max], and a VM marked fixed
 * (pinned, zNUMA) keeps its quota.
 */
#ifndef POOLMEM_AUTOPILOT_H
#define POOLMEM_AUTOPILOT_H

#include "pm_policy.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Why a VM's target is what it is (pm_ap_vm.reason). */
enum pm_ap_reason {
	PM_AP_HOT = 0,		/* its hot set (with the margin) */
	PM_AP_SLO,		/* more than the hot set: its pool share breaks the SLO */
	PM_AP_MIN,		/* its min: the hot set is smaller */
	PM_AP_MAX,		/* its max: the hot set is larger */
	PM_AP_BUDGET,		/* less than it wants: the budget is shared */
	PM_AP_HOLD,		/* its quota: the change is within the hysteresis */
	PM_AP_RATE,		/* a step toward the target: the move budget */
	PM_AP_FIXED,		/* its quota: pinned or zNUMA, never moved */
	PM_AP_KEEP,		/* more than it wants: nobody needs the rest (lazy reclaim) */
	PM_AP_NR_REASONS
};

#define PM_AP_F_FIXED	(1U << 0)	/* pinned or zNUMA: the quota stays */

/* One VM: inputs, then what the decision fills in. Bytes unless said. */
struct pm_ap_vm {
	u64 size;		/* guest RAM */
	u64 min, max;		/* local quota bounds: min <= max <= size */
	u64 local_quota;	/* the quota now */
	u64 chunk;		/* the domain's chunk size: targets are multiples */
	u64 hot;		/* the measured hot set (largest of the recent windows) */
	u64 untouched;		/* never faulted: needs no DRAM */
	u64 local_used;		/* local bytes in use: more quota helps the SLO only when it is full */
	u32 pool_permille;	/* sampled accesses to pool memory, per mille */
	u32 slo_permille;	/* at most this many per mille from the pool; 0: none */
	u32 flags;		/* PM_AP_F_* */
	/* out */
	u64 want;		/* what it would get with DRAM to spare */
	u64 target;		/* the quota to set now */
	u32 reason;		/* enum pm_ap_reason */
};

/* The host's side of a decision. */
struct pm_ap_host {
	u64 budget;		/* local DRAM for all the VMs' quotas (headroom already out) */
	u64 step;		/* most bytes the quotas change by in all, this decision; 0: no limit */
	u32 margin_pct;		/* the hot set's margin, percent (e.g. 10) */
	u32 hysteresis_pct;	/* a change below this share of the quota, and below one chunk, waits */
	u32 eager;		/* 1: every VM down to what it wants at once; 0: shrink only as grows need */
};

/* What pm_ap_decide() refused, for the caller's one-line error. */
enum pm_ap_error {
	PM_AP_OK = 0,
	PM_AP_ERR_BOUNDS,	/* a VM's min > max, max > size, or chunk not a power of two */
	PM_AP_ERR_SLO,		/* a VM's SLO above 1000 per mille */
	PM_AP_ERR_BUDGET,	/* the budget is below the sum of the mins (and fixed quotas) */
};

/*
 * Decide every VM's target. Returns PM_AP_OK, or the first rule the input
 * breaks, with *@bad the index of the VM that breaks it (n for the
 * budget); nothing is filled in then.
 */
enum pm_ap_error pm_ap_decide(const struct pm_ap_host *h, struct pm_ap_vm *vms, unsigned int n,
			      unsigned int *bad);

/* The reason's name: "hot-set", "slo", "min", ... */
const char *pm_ap_reason_name(u32 reason);

#ifdef __cplusplus
}
#endif

#endif /* POOLMEM_AUTOPILOT_H */
