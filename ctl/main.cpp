// poolctl: the operator's command for poolmem. main() only wires the nouns
// and parses; each noun lives in its own file.
#include "commands.hpp"

#include <cstdio>
#include <exception>

int main(int argc, char **argv)
{
	CLI::App app{"poolctl: manage pooled memory (CXL, DAX, PMem) for VMs", "poolctl"};
	app.require_subcommand(1);
	poolctl::GlobalOptions g;
	app.add_option("--sysfs", g.sysfs, "sysfs root (for testing)")->default_val("/sys");

	poolctl::setup_node(app, g);

	try {
		app.parse(argc, argv);
	} catch (const CLI::ParseError &e) {
		int rc = app.exit(e);
		return rc == 0 ? poolctl::EXIT_OK : poolctl::EXIT_USAGE;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "poolctl: %s\n", e.what());
		return poolctl::EXIT_FAILURE_;
	}
	return poolctl::EXIT_OK;
}
