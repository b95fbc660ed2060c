// poolctl: one file per noun; each noun registers its subcommands here.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

namespace poolctl {

/// Exit codes scripts can rely on (documented in poolctl(8)).
enum Exit : int {
	EXIT_OK = 0,
	EXIT_FAILURE_ = 1, ///< the operation failed (message names object and cause)
	EXIT_USAGE = 2,    ///< bad command line
};

/// Options every subcommand shares.
struct GlobalOptions {
	std::string sysfs = "/sys"; ///< sysfs root (fixtures in tests)
};

void setup_node(CLI::App &app, const GlobalOptions &g);

} // namespace poolctl
