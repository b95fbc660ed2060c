// The DRAM autopilot (issue 50): measure each VM's hot set, untouched
// memory and pool share; decide its local quota with the one decision
// function (kmod/policy/pm_autopilot.c, shared with the simulator); move
// the quotas with vm set's engine, shrinks before grows so that the sum
// of the local quotas stays within the budget at every moment.
//
// Everything here starts from what the kernel reports: the quotas, the
// heat, the counters. The daemon keeps only a short history of hot sets
// (the largest of the recent windows) and the last counters (for rates);
// killed and started again, it goes on from the kernel's figures.
#pragma once

#include <poolmem/control.hpp>
#include <poolmem/stats.hpp>

#include <nlohmann/json.hpp>

#include <cstdint>
#include <deque>
#include <filesystem>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace poolmem::autopilot {

/// A VM's or a profile's bounds and SLO, as written: "PCT%" of the VM's
/// size or a SIZE; empty: not set here.
struct Bounds {
	std::string min, max, slo;
};

/// The autopilot's settings: [autopilot] of /etc/poolmem/poolmem.toml,
/// and the command line over it.
struct Config {
	uint64_t budget = 0;		///< local DRAM for all the VMs' local quotas (required)
	uint64_t headroom = 0;		///< kept out of the budget for VMs starting
	uint64_t rate = 64ULL << 20;	///< bytes of quota change (and moves) per second
	double interval_s = 5;		///< seconds between decisions
	unsigned windows = 6;		///< the hot set is the largest of this many decisions' measures
	uint32_t margin_pct = 10;	///< the hot set's margin
	uint32_t hysteresis_pct = 5;	///< smaller changes wait
	/// reclaim = "eager": every VM down to what it wants at once (DRAM free
	/// for VMs to come); "lazy" (false, the default): shrink only what the
	/// others' grows and the budget need
	bool eager = false;
	Bounds defaults{"0", "100%", ""}; ///< for VMs with no bounds of their own
	std::map<std::string, Bounds> vms, profiles;
};

/// Read [autopilot] of the TOML file PATH (absent file or table: the
/// defaults). Error naming the file, the key and the value on bad input.
Config read_config(const std::filesystem::path &path);
/// The same from TEXT (FILE names it in errors).
Config parse_config(std::string_view text, const std::string &file);

/// Bounds set with poolctl (vm create, vm set, profile create: the
/// --autopilot-min, --autopilot-max and --autopilot-slo options): a TOML
/// file of [vms.NAME] and [profiles.NAME] tables, read over poolmem.toml's
/// [autopilot.vms.NAME] and [autopilot.profiles.NAME] key by key. The
/// daemon reads it at every decision, so a VM created later has its bounds.
inline const std::filesystem::path store_path = "/var/lib/poolmem/autopilot.toml";

enum class Kind { vm, profile };

/// CFG with STORE's bounds over its own (absent file: CFG unchanged).
/// Error naming the file, the line and the key on bad input.
Config with_store(const Config &cfg, const std::filesystem::path &store);

/// Check B alone: each key's syntax and, for a VM of SIZE bytes (0: a
/// profile, whose VMs' sizes are not known yet), min not above max and
/// neither above the size; for a profile, min not above max where both
/// are percentages or both sizes. Error naming WHO and the value.
void check_bounds(const std::string &who, const Bounds &b, uint64_t size);

/// Set NAME's bounds in STORE: B's keys over those stored (all of them
/// with REPLACE), checked together with check_bounds(NAME, ..., SIZE),
/// then written whole and renamed into place under a lock. Returns the
/// bounds now stored. Nothing is written when the check fails.
Bounds store_bounds(const std::filesystem::path &store, Kind kind, const std::string &name, const Bounds &b,
		    uint64_t size, bool replace);
/// Forget NAME's bounds in STORE (none: nothing to do).
void forget_bounds(const std::filesystem::path &store, Kind kind, const std::string &name);

/// "5%" -> 50 per mille; nullopt if malformed or above 100%.
std::optional<uint32_t> parse_permille(std::string_view text);

/// One VM's inputs, decision and why.
struct Vm {
	std::string name, profile;
	uint64_t size = 0, chunk = 0, local_quota = 0, pool_quota = 0, local_bytes = 0;
	uint64_t min = 0, max = 0;
	uint64_t hot = 0;	       ///< the measured hot set (largest of the recent windows)
	uint64_t hot_now = 0;	       ///< this window's measure
	uint64_t untouched = 0;	       ///< never faulted
	uint32_t pool_permille = 0;    ///< sampled accesses from the pool, this window
	uint32_t slo_permille = 0;     ///< 0: none
	std::string fixed;	       ///< why its quota stays: "pinnable", "znuma", "tiering off"; empty: free
	uint64_t want = 0, target = 0;
	std::string reason;	       ///< pm_ap_reason_name(), or fixed's
	bool slo_broken() const { return slo_permille && pool_permille > slo_permille; }
};

/// What the autopilot remembers between decisions: per VM, recent hot
/// sets and the counters of the last reading. Nothing that the kernel
/// does not report again: losing it costs a window of measures.
struct History {
	struct Seen {
		std::deque<uint64_t> hot;
		uint64_t hits = 0, pool_hits = 0;
	};
	std::map<std::string, Seen> vms;
};

/// The decision over DOMAINS (as read_domains() returns them): inputs
/// from each domain and HIST (updated), bounds from CFG, then
/// pm_ap_decide(). Error naming the VM and the rule it breaks (min above
/// max, a budget below the sum of the mins, an SLO out of range, a bound
/// that is no size).
struct Decision {
	std::vector<Vm> vms;
	uint64_t budget = 0;	 ///< the budget less the headroom
	uint64_t step = 0;	 ///< the move budget of this decision
	uint64_t quota_sum = 0, target_sum = 0;
};
Decision decide(const Config &cfg, const std::vector<DomainStats> &domains, History &hist);

/// Quota changes in the order that keeps the sum within the budget:
/// shrinks, then grows. Each: (VM, new local quota, new pool quota).
struct Change {
	std::string name;
	uint64_t from = 0, local = 0, pool = 0;
};
std::vector<Change> plan(const Decision &d);

/// A Vm and a Decision as JSON (poolctl autopilot advise --json, the
/// status file).
nlohmann::json to_json(const Vm &v);
nlohmann::json to_json(const Decision &d);

/// The decision code's identity: pm_autopilot.c's SHA-256, as the
/// simulator prints pm_policy.c's.
const char *decision_source_sha256();

} // namespace poolmem::autopilot
