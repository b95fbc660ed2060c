// poolctl: the operator's command for poolmem. main() only wires the nouns
// and parses; each noun lives in its own file.
#include "commands.hpp"

#include <poolmem/error.hpp>
#include <poolmem/size.hpp>

#include <uapi/poolmem.h>

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <exception>

namespace poolctl {

uint64_t size_value(const std::string &option, const std::string &text)
{
	auto v = poolmem::parse_size(text);
	if (!v)
		throw UsageError(option + ": invalid size '" + text + "' (use e.g. 512M, 16G)");
	return *v;
}

static int exit_code(int err)
{
	switch (err) {
	case ENOENT:
	case ENODEV:
		return EXIT_NOTFOUND;
	case EBUSY:
	case EEXIST:
	case ENOTEMPTY:
	case ENOSPC:
	case EPERM:
	case EACCES:
		return EXIT_REFUSED;
	default:
		return EXIT_FAILED;
	}
}

namespace {

nlohmann::json humanize(const nlohmann::json &j)
{
	if (j.is_array()) {
		nlohmann::json out = nlohmann::json::array();
		for (const auto &v : j)
			out.push_back(humanize(v));
		return out;
	}
	if (!j.is_object())
		return j;
	nlohmann::json out = nlohmann::json::object();
	for (auto it = j.begin(); it != j.end(); ++it) {
		const std::string &k = it.key();
		if (k.size() > 6 && k.compare(k.size() - 6, 6, "_bytes") == 0 && it->is_number_unsigned())
			out[k] = poolmem::format_size(it->get<uint64_t>());
		else
			out[k] = humanize(*it);
	}
	return out;
}

} // namespace

void print_json(const GlobalOptions &g, const nlohmann::json &j, bool compact)
{
	const nlohmann::json &v = g.human ? humanize(j) : j;
	std::cout << (compact ? v.dump() : v.dump(2)) << std::endl;
}

} // namespace poolctl

int main(int argc, char **argv)
{
	CLI::App app{"poolctl: pooled memory (CXL, DAX, PMem) for VMs with per-tier quotas", "poolctl"};
	app.require_subcommand(1);
	app.set_version_flag("--version", "poolctl " POOLMEM_RELEASE " (kernel ABI " +
						  std::to_string(POOLMEM_ABI_VERSION) + ")");
	poolctl::GlobalOptions g;
	app.add_option("--sysfs", g.sysfs, "sysfs root (for testing)")->default_val("/sys");
	app.add_option("--control", g.control, "control device")->default_val("/dev/poolmem/control");
	app.add_flag("-u,--human", g.human, "with --json: sizes (keys ending in _bytes) as human strings, as daxctl -u");
	app.add_option("--mount", g.mount, "poolmem file system mount point (mounted when missing)")
		->default_val("/run/poolmem");

	poolctl::setup_node(app, g);
	poolctl::setup_pool(app, g);
	poolctl::setup_vm(app, g);
	poolctl::setup_status(app, g);
	poolctl::setup_profile(app, g);
	poolctl::setup_apply(app, g);
	poolctl::setup_simulate(app, g);
	poolctl::setup_cluster(app, g);

	try {
		app.parse(argc, argv);
	} catch (const CLI::CallForHelp &e) {
		return app.exit(e);
	} catch (const CLI::CallForAllHelp &e) {
		return app.exit(e);
	} catch (const CLI::CallForVersion &e) {
		return app.exit(e);
	} catch (const CLI::ParseError &e) {
		/* one line, as every other error: CLI11 would add a second */
		std::fprintf(stderr, "poolctl: %s (see poolctl --help)\n", e.what());
		return poolctl::EXIT_USAGE;
	} catch (const poolctl::UsageError &e) {
		std::fprintf(stderr, "poolctl: %s\n", e.what());
		return poolctl::EXIT_USAGE;
	} catch (const poolmem::Error &e) {
		std::fprintf(stderr, "poolctl: %s\n", e.what());
		return poolctl::exit_code(e.code());
	} catch (const std::exception &e) {
		std::fprintf(stderr, "poolctl: %s\n", e.what());
		return poolctl::EXIT_FAILED;
	}
	return poolctl::EXIT_OK;
}
