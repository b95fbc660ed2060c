// The DRAM autopilot replayed (poolctl simulate autopilot): a time-stepped
// model of one host's VMs whose active sets change over time, with local
// quotas set by three policies side by side:
//  - all-local: every VM's quota is its size (DRAM alone);
//  - best static: every VM's quota fixed, chosen in hindsight as the
//    smallest that meets the SLO at every step of this very run;
//  - autopilot: pm_ap_decide() (kmod/policy/pm_autopilot.c, the code the
//    daemon runs) every interval, from the hot set measured the interval
//    before (the largest of the recent windows) and the pool share.
//
// Each step: a VM's accesses are uniform over its active set; tiering
// keeps min(quota, active) of it local, moving at most tier_rate bytes a
// step toward that; the rest is served from the pool. The pool share of
// a step is (active - local part) / active, and a step is an SLO
// violation when it exceeds the SLO. Deterministic per seed.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace poolmem::sim {

/// What the VMs run (Documentation/simulation.md, "The DRAM autopilot").
enum class ApWorkload {
	Stream50,	///< seed 000: STREAM on 50% of the VM's memory, in bursts with idle gaps
	Stream80,	///< seed 000: the same on 80%
	Seed003,	///< seed 003's mix: lbm, fotonik, fft, fmm (active sets from the paper's apps)
};

struct ApSimInput {
	ApWorkload workload = ApWorkload::Stream50;
	uint64_t vm_size = 16ULL << 30;
	uint64_t dram = 112ULL << 30;	 ///< the host's DRAM for VMs (the budget)
	unsigned vms = 0;		 ///< 0: the curve, 1 VM to max_vms
	unsigned max_vms = 20;
	uint32_t slo_permille = 50;	 ///< a step above this pool share violates
	double interval_s = 5;
	unsigned steps = 720;		 ///< one hour of 5 s decisions
	uint64_t rate = 256ULL << 20;	 ///< the autopilot's move budget, bytes per second
	uint64_t tier_rate = 512ULL << 20; ///< tiering's promotions, bytes per second
	unsigned windows = 6;
	uint32_t margin_pct = 10, hysteresis_pct = 5;
	bool eager = false;		 ///< the decision's reclaim (pm_ap_host.eager)
	uint64_t seed = 1;
};

/// One policy on one number of VMs.
struct ApPolicyResult {
	std::string policy;	       ///< "all-local", "best-static", "autopilot"
	bool fits = false;	       ///< the quotas fit the DRAM (all-local, best static) at every step
	double violations = 0;	       ///< share of VM-steps above the SLO
	double worst_vm_share = 0;     ///< the largest of the VMs' pool shares over the run (the SLO's test)
	double pool_share = 0;	       ///< share of all accesses served from the pool
	uint64_t dram_peak = 0;	       ///< the most local quota in use at once
	double moved_mib = 0;	       ///< quota moves and tiering promotions, MiB
};

struct ApSimRow {
	unsigned vms = 0;
	std::vector<ApPolicyResult> policies;
};

struct ApSimResult {
	std::vector<ApSimRow> rows;
	/// VMs that fit the DRAM with every VM's pool share over the run within
	/// the SLO (Pond's test: a VM's slowdown over its life), per policy
	unsigned fit_all_local = 0, fit_best_static = 0, fit_autopilot = 0;
	/// DRAM each policy needs for the SLO at need_vms VMs (--vms, or the
	/// all-local fit when it is a curve)
	unsigned need_vms = 0;
	uint64_t need_all_local = 0, need_best_static = 0, need_autopilot = 0;
};

ApSimResult simulate_autopilot(const ApSimInput &in);

ApWorkload parse_ap_workload(const std::string &s); ///< throws std::invalid_argument
std::string ap_workload_name(ApWorkload w);

/// pm_autopilot.c's SHA-256, as built in.
const char *autopilot_source_sha256();

} // namespace poolmem::sim
