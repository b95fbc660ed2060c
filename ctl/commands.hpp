// poolctl: one file per noun; each noun registers its subcommands here.
#pragma once

#include <CLI/CLI.hpp>

#include <poolmem/control.hpp>
#include <poolmem/stats.hpp>

#include <nlohmann/json.hpp>

#include <string>

namespace poolctl {

/// Exit codes scripts can rely on (documented in poolctl(8)).
enum Exit : int {
	EXIT_OK = 0,
	EXIT_FAILED = 1,   ///< the operation failed (message names object and cause)
	EXIT_USAGE = 2,    ///< bad command line or bad value (size, policy, ...)
	EXIT_NOTFOUND = 3, ///< no such pool, domain, device or user
	EXIT_REFUSED = 4,  ///< refused: busy, exists, over capacity, no permission
	EXIT_PARTIAL = 5,  ///< partly done: changed something, then stopped (the message says what is left)
};

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

/// The control device, opened; the first in a run warns (stderr, one line)
/// when the loaded module's ABI is not poolctl's.
poolmem::Control open_control(const GlobalOptions &g);
/// What --version prints: poolctl's release and ABI, and the loaded module's.
std::string version_text(const GlobalOptions &g);

/// Every domain (poolmem::read_domains) from the roots @g names; without
/// @histograms their fault latency histograms are not read (a table that
/// shows none: at 10,000 domains they are 300,000 numbers to parse).
inline std::vector<poolmem::DomainStats> read_domains(const GlobalOptions &g, bool histograms = true)
{
	return poolmem::DomainReader().read(g.sysfs, nullptr, histograms,
					    g.procfs.empty() ? std::nullopt
							     : std::optional<std::filesystem::path>(g.procfs));
}

void setup_node(CLI::App &app, const GlobalOptions &g);
void setup_pool(CLI::App &app, const GlobalOptions &g);
void setup_vm(CLI::App &app, const GlobalOptions &g);
void setup_status(CLI::App &app, const GlobalOptions &g);
void setup_profile(CLI::App &app, const GlobalOptions &g);
void setup_apply(CLI::App &app, const GlobalOptions &g);
void setup_simulate(CLI::App &app, const GlobalOptions &g);
void setup_cluster(CLI::App &app, const GlobalOptions &g);
void setup_libvirt(CLI::App &app, const GlobalOptions &g);
void setup_capacity(CLI::App &app, const GlobalOptions &g);
void setup_autopilot(CLI::App &app, const GlobalOptions &g);

/// Where and how a domain's chunks are placed, and who owns it: the options
/// vm create and profile create share (add_placement_options).
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
/// The QEMU argument for domain NAME's file PATH (see vm.cpp); EXTRA is
/// appended to the backend's properties (",prealloc=on,...").
std::string qemu_argument(const std::string &name, const std::string &path, uint64_t bytes, uint64_t align,
			  const std::string &extra = "");
void print_libvirt_nvdimm(const std::string &path, uint64_t bytes, uint64_t align);

/// What a zNUMA guest is told of the distance between its nodes: the
/// host's, from the home node to the nearest allowed pool's node, and
/// HMAT's access latency and bandwidth of both where the host has them.
struct ZnumaLink {
	int distance = 20;
	bool hmat = false;
	uint64_t latency_ns[2] = {}, bandwidth_mbps[2] = {}; ///< [0] home node, [1] the pool's
};
ZnumaLink znuma_link(const GlobalOptions &g, int home_node, const std::vector<std::string> &pools);

/// NAME is a valid pool, domain or profile name (KIND), or UsageError (exit 2).
void check_name(const std::string &name, const std::string &kind);

/// The option values a domain's geometry came from, as typed (for messages).
struct DomainOptionText {
	std::string size, local, pool, chunk;
};
/// Check a domain request before the kernel sees it: UsageError (exit 2)
/// naming the first rule it breaks, ENOENT for an unknown pool.
void check_domain(const GlobalOptions &g, const poolmem::DomainSpec &s, const DomainOptionText &opt);
/// The checks of --home-node and --pools that a domain and a profile share:
/// UsageError (exit 2) or Error ENOENT (exit 3) naming the option.
void check_placement(const GlobalOptions &g, int home_node, const std::vector<std::string> &pools);

/// The JSON objects of a pool and a domain: one schema wherever they are
/// printed (pool list/show, vm list/show, status, top; Documentation/json.md).
nlohmann::json pool_json(const poolmem::PoolStats &p);
nlohmann::json domain_json(const poolmem::DomainStats &d);
/// Counts that outlive domains (host-wide or a profile's), for status and profile show.
nlohmann::json counts_json(const poolmem::Counts &c);
/// Print J (--json): indented, or on one line (JSON Lines) if COMPACT; with
/// -u every "*_bytes" value becomes a human size string, as daxctl -u does.
void print_json(const GlobalOptions &g, const nlohmann::json &j, bool compact = false);

/// Send the run's audit entry to the journal (poolmem::audit) if the verb
/// changes something: RC is its exit code, ERROR its error line.
void audit_run(CLI::App &app, int argc, char **argv, int rc, const std::string &error);

/// A mutating verb's result: LINE as it is, or with --json (JSON true) the
/// object OBJ (Documentation/json.md, "Results of the verbs that change").
void report(const GlobalOptions &g, bool json, const std::string &line, const nlohmann::json &obj);

/// Size option value: "16G" -> bytes, or UsageError naming OPTION.
uint64_t size_value(const std::string &option, const std::string &text);

} // namespace poolctl
