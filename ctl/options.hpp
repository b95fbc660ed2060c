// poolctl's option groups: the options and parsers several verbs share
// (the global options, --check and --json, placement, tiering, the
// autopilot's bounds, sizes and times), defined once, so that a verb
// that takes one takes it with the same name, help text and checks, and
// its man page and completion say the same (Documentation/man/gen-man.py
// reads --help). Parsers throw UsageError (exit 2) naming the option.
#pragma once

#include <poolmem/control.hpp>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

namespace poolctl {

/// Options every subcommand shares.
struct GlobalOptions {
	std::string sysfs = "/sys"; ///< sysfs root (fixtures in tests)
	/// procfs root for /proc/poolmem/domains; empty: poolmem::procfs_for(sysfs).
	/// A root without the table (--procfs /nonexistent) reads sysfs only.
	std::string procfs;
	std::string control = "/dev/poolmem/control";
	std::string mount = "/run/poolmem"; ///< where the poolmem file system is (mounted on demand)
	bool human = false;                 ///< -u: sizes in --json as "1.5 GiB" strings
	/// With --check (apply's plans): pools the plan registers before this
	/// step. They count as existing, and the kernel's admission, which
	/// needs them, is left to the step itself.
	std::vector<std::string> planned_pools;
};

/// --check, with one wording on every verb that changes something: run the
/// command's checks (ADMISSION: the kernel's admission too) and change
/// nothing.
inline CLI::Option *add_check_flag(CLI::App *verb, bool &flag, bool admission = false)
{
	return verb->add_flag("--check", flag,
			      std::string("run every check the command runs") +
				      (admission ? " (the kernel's admission included)" : "") +
				      " and change nothing: exit 0 and one line if it would succeed, else its error and "
				      "exit code");
}

/// --json on a verb that changes something: the result as one object
/// (WHAT lists its keys; Documentation/json.md).
inline CLI::Option *add_json_flag(CLI::App *verb, bool &flag, const std::string &what)
{
	return verb->add_flag("--json", flag, "print the result as JSON: " + what);
}

/// Thrown for a bad value the parser could not catch (exit code 2).
struct UsageError : std::runtime_error {
	using std::runtime_error::runtime_error;
};

/// --autopilot-min, --autopilot-max, --autopilot-slo (vm create, vm set,
/// profile create): the DRAM autopilot's bounds for a VM or a profile's
/// VMs, kept in poolmem::autopilot::store_path (ctl/autopilot.cpp).
struct AutopilotBoundOptions {
	std::string min, max, slo;
	bool any() const { return !min.empty() || !max.empty() || !slo.empty(); }
};
void add_autopilot_bound_options(CLI::App *cmd, AutopilotBoundOptions &o, const std::string &whose);
/// The bounds as the JSON of a result: {"min", "max", "slo"}, set keys only.
nlohmann::json autopilot_bounds_json(const AutopilotBoundOptions &o);

struct PlacementOptions {
	std::string chunk = "2M";
	std::string tier_policy = "local-first", pool_select = "smart-idle";
	std::vector<std::string> pools;
	int home_node = -1;
	std::string owner, mode;
	bool pinnable = false;
};

/// The parsed values of PlacementOptions (UsageError for a bad one).
struct Placement {
	uint64_t chunk_bytes = 0;
	int tier_policy = 0, pool_select = 0;
	uint32_t uid = 0, gid = 0, mode = 0;
};

/// Add --tier-policy, --pool-select, --pools, --home-node, --chunk, --owner,
/// --mode and --pinnable to CMD; OWNED says what --owner/--mode are of.
void add_placement_options(CLI::App *cmd, PlacementOptions &o, const std::string &owned,
			   const std::string &default_mode);
Placement parse_placement(const PlacementOptions &o);

/// "user[:group]" -> uid, gid (the user's primary group by default).
std::pair<uint32_t, uint32_t> parse_owner(const std::string &owner);
/// An octal permission string ("0660") or UsageError naming OPTION.
uint32_t parse_mode(const std::string &option, const std::string &text);

/// Size option value: "16G" -> bytes, or UsageError naming OPTION.
uint64_t size_value(const std::string &option, const std::string &text);

/// --tiering, --scan-rate, --hot-threshold (vm create and vm set).
struct TieringOptions {
	std::string mode, scan_rate, hot;
};
void add_tiering_options(CLI::App *cmd, TieringOptions &o);
/// The tiering part of a change, if any option of it was given.
void parse_tiering(const TieringOptions &o, poolmem::DomainChange &c);
/// "500ms", "2s", "500" (ms) -> ms, or UsageError naming OPTION.
uint32_t ms_value(const std::string &option, const std::string &text);

/// --rate and --timeout of a verb that moves chunks.
struct MoveOptions {
	std::string rate;	    ///< SIZE per second; empty: as fast as it goes
	std::string timeout = "60"; ///< seconds without progress before giving up
};
void add_move_options(CLI::App *verb, MoveOptions &o);

/// Seconds from "500ms", "90s", "5m", "1h", or a bare number in UNIT_S
/// seconds; nullopt if malformed or negative.
std::optional<double> duration_seconds(const std::string &text, double unit_s);
/// Seconds from "90", "90s", "5m", "1h"; UsageError naming OPTION.
double seconds_value(const std::string &option, const std::string &text);

} // namespace poolctl
