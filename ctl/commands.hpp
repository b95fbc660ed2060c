// poolctl: one file per noun; each noun registers its subcommands here.
#pragma once

#include <CLI/CLI.hpp>

#include <poolmem/control.hpp>
#include <poolmem/stats.hpp>

#include <nlohmann/json.hpp>

#include <string>

#include "json.hpp"
#include "options.hpp"

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

/// Send the run's audit entry to the journal (poolmem::audit) if the verb
/// changes something: RC is its exit code, ERROR its error line.
void audit_run(CLI::App &app, int argc, char **argv, int rc, const std::string &error);

} // namespace poolctl
