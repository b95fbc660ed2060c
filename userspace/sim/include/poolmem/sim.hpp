// The placement policy simulator: a discrete-event model of hosts, pools
// and VMs whose placement decisions are made by the kernel module's own
// policy code (kmod/policy/pm_policy.c, linked as it is into poolmem.ko).
//
// Model (Documentation/simulation.md):
//  - each pool, and each host's local DRAM, is one FIFO server: an access
//    waits for the accesses before it, then takes its service time
//    (exponential: M/M/1 under Poisson arrivals, or deterministic: M/D/1),
//    plus a fixed link latency;
//  - a VM touches a growing prefix of its memory (touched fraction over
//    time); the first access to a chunk allocates it, by pm_tier_order()
//    and pm_pool_order() with the pools' access factors (pm_af_*) counted
//    per window, as the module does;
//  - VMs arrive and leave; admission takes a host whose local DRAM holds
//    the local quota and pools whose capacity times the overcommit ratio
//    hold the pool quota; a chunk nobody can hold is a SIGBUS (the VM dies).
//
// Not thread-safe per Simulator; pure functions otherwise. Deterministic:
// the same scenario and seed give the same result, bit for bit.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace poolmem::sim {

struct PoolSpec {
	std::string name;
	uint64_t capacity = 0;	///< bytes
	double service_ns = 50; ///< mean service time of one access
	double latency_ns = 300; ///< link latency, paid by every access
	uint32_t distance = 20;	///< NUMA distance from every host (nearest)
	/// Accesses per second from hosts outside the model (another host's
	/// VMs on a shared device) from external_start_s to external_end_s:
	/// they take the pool's service and count in its Af, as poolmem-agent's
	/// remote_load would give it; their latency is not the model's.
	double external_rate = 0;
	double external_start_s = 0, external_end_s = 1e9;
};

/// One kind of VM in the mix.
struct VmClass {
	std::string name;
	double weight = 1;	///< share of arrivals
	uint64_t size = 0;	///< bytes
	uint32_t local_pct = 25; ///< local quota, % of size (the rest is the pool quota)
	double touch_start = 0.1, touch_end = 0.5; ///< touched fraction at arrival, after the ramp
	double ramp_s = 0;	///< seconds from touch_start to touch_end
	double access_rate = 1e6; ///< accesses per second
	double hot_fraction = 0;  ///< of the touched memory, this part ...
	double hot_share = 0;	  ///< ... takes this share of the accesses
};

/// A burst: some VMs access faster for a while.
struct Phase {
	double start_s = 0, end_s = 0;
	double rate_scale = 1;	   ///< access rate multiplier
	double vm_fraction = 1;	   ///< of the VMs (the first ones by id)
	double arrival_scale = 1;  ///< arrival rate multiplier
};

struct Scenario {
	std::string name;
	uint64_t seed = 1;
	double duration_s = 0.01;
	uint64_t chunk = 4ULL << 20;
	unsigned hosts = 1;
	uint64_t local_per_host = 0; ///< bytes of DRAM per host for VMs
	double local_service_ns = 10, local_latency_ns = 80;
	std::vector<PoolSpec> pools;
	double overcommit = 1.0;      ///< pool commitments up to capacity x this
	double af_window_s = 100e-6;  ///< the module's window_ms
	bool af_counts_accesses = true; ///< Af counts accesses (seed 003), or only allocations
	bool deterministic_service = false; ///< M/D/1 instead of M/M/1
	uint32_t tier_policy = 0, pool_select = 3; ///< PM_TIER_*, PM_SELECT_*
	uint32_t rr_start = 3;        ///< PM_RR_START_*: where round-robin cursors start (the module's: salted)
	unsigned initial_vms = 0;     ///< VMs present at t = 0 (admission permitting)
	double arrival_rate = 0;      ///< more VMs per second (Poisson)
	double lifetime_s = 0;	      ///< mean VM lifetime (exponential); 0: until the end
	std::vector<VmClass> classes;
	std::vector<Phase> phases;
	std::string trace;	      ///< CSV to replay instead of the generator
	double series_step_s = 0;     ///< time series resolution; 0: one Af window
	/// Bounded queues (seed 003's NIC and switch ports): a host has at most
	/// host_credits pool accesses in flight, a pool's port at most
	/// pool_credits queued or in service; a full one holds the access back,
	/// waiting (and counted in its latency), and its host's credit with it.
	bool backpressure = false;
	unsigned host_credits = 16, pool_credits = 32;
	/// Rebalancing between pools (kmod/policy/pm_rebalance.c): every
	/// period_s, pools contended for `periods` checks in a row (Af above
	/// the others' mean by margin_pct) give their hottest chunks to the
	/// least-loaded pool, at most rate_bytes per second of chunks. A move
	/// costs a copy: chunk/64 line reads on the source and writes on the
	/// destination, spread over the move at the rate (copy = false: free
	/// and instant, an upper bound on what rebalancing could gain).
	struct Rebalance {
		bool enabled = false;
		double period_s = 400e-6;
		uint32_t margin_pct = 25, periods = 2;
		uint64_t rate_bytes = 1ULL << 30; ///< per second
		bool copy = true;
	} rebalance;
};

/// Parse a scenario file (TOML); throws std::runtime_error naming the file,
/// the key and the cause.
Scenario load_scenario(const std::string &path);

struct PoolResult {
	std::string name;
	uint64_t accesses = 0, allocations = 0;
	uint64_t allocated_end = 0, allocated_peak = 0; ///< bytes
	double mean_ns = 0;
};

struct Result {
	std::string tier_policy, pool_select;
	uint64_t events = 0, accesses = 0, local_accesses = 0;
	double mean_ns = 0, p50_ns = 0, p99_ns = 0, p999_ns = 0, max_ns = 0;
	double over_1us = 0; ///< fraction of accesses taking 1000 ns or more
	uint64_t chunks_allocated = 0, chunks_freed = 0;
	uint64_t sigbus = 0, enospc = 0;     ///< VMs killed / refused
	uint64_t vms_admitted = 0, vms_max = 0;
	double vms_mean = 0;
	double imbalance_mean = 0;	     ///< max-min accesses per pool per window
	uint64_t imbalance_max = 0;
	std::vector<PoolResult> pools;
	/// time series, one row per step: t, then per pool
	std::vector<double> t;
	std::vector<uint64_t> imbalance;
	std::vector<std::vector<uint64_t>> pool_accesses, pool_af, pool_allocated;
	/// latency CDF: (ns, fraction of accesses at most that)
	std::vector<std::pair<double, double>> cdf;
	uint64_t rebalanced_chunks = 0; ///< moved by rebalancing
	double rebalanced_mib_s = 0;	///< MiB of them per simulated second
	double wall_s = 0; ///< host time the run took
};

/// Run one scenario with its tier policy and pool selection.
Result simulate(const Scenario &s);

/// Names of the policies (the kernel's own tables).
std::string tier_policy_name(uint32_t p);
std::string pool_select_name(uint32_t p);
uint32_t parse_tier_policy_name(const std::string &s);	/// throws std::invalid_argument
uint32_t parse_pool_select_name(const std::string &s);

/// Capacity planning: how many VMs of a mix fit one host, by overcommit.
struct PlanInput {
	uint64_t host_dram = 0, pool_capacity = 0, vm_size = 0;
	uint32_t local_pct = 25;
	double touched_min = 0.3, touched_max = 1.0; ///< each VM's touched fraction, uniform
	std::vector<double> overcommit = {1.0, 1.25, 1.5, 2.0};
	uint64_t seed = 1;
	unsigned trials = 10000;
};

struct PlanRow {
	double overcommit = 1;
	unsigned vms = 0;	 ///< admitted by the module's rules
	double density = 0;	 ///< vms / an all-DRAM host's
	double sigbus_risk = 0;	 ///< P(the touched pool memory exceeds the pool)
	double pool_touched_mean = 0; ///< bytes, mean over trials
};

struct Plan {
	unsigned dram_only_vms = 0;
	std::vector<PlanRow> rows;
};

Plan plan(const PlanInput &in);

/// SHA-256 of kmod/policy/pm_policy.c as built into this library.
const char *policy_source_sha256();
/// SHA-256 of kmod/policy/pm_rebalance.c as built into this library.
const char *rebalance_source_sha256();

} // namespace poolmem::sim
