// poolctl: the operator's command for poolmem. main() only wires the nouns
// and parses; each noun lives in its own file.
#include "commands.hpp"
#include "moves.hpp"

#include <poolmem/audit.hpp>
#include <poolmem/error.hpp>
#include <poolmem/size.hpp>

#include <uapi/poolmem.h>

#include <cerrno>
#include <cstdio>
#include <iostream>
#include <exception>
#include <set>

namespace poolctl {


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

/*
 * The word of the command line where a command was due that names none
 * ("poolctl frob", "poolctl vm creat x"), as "'creat' is not a command of
 * poolctl vm (create, destroy, ...)"), or where the command line ends
 * before one ("'vm' needs a command (...)"); empty otherwise. CLI11
 * only says "A subcommand is required".
 */
std::string unknown_command(CLI::App &app, int argc, char **argv)
{
	CLI::App *cur = &app;
	std::string path = app.get_name();
	auto commands = [](CLI::App *at) {
		std::string names;
		for (const CLI::App *s : at->get_subcommands([](CLI::App *) { return true; }))
			names += (names.empty() ? "" : ", ") + s->get_name();
		return names;
	};
	for (int i = 1; i < argc; i++) {
		const std::string a = argv[i];
		if (a == "--")
			break;
		if (a.size() > 1 && a[0] == '-') {
			/* an option: skip its value, unless given as --name=value */
			const std::string name = a.substr(0, a.find('='));
			for (CLI::App *at = cur; at; at = at->get_parent()) {
				const CLI::Option *opt = at->get_option_no_throw(name);
				if (!opt)
					continue;
				if (opt->get_items_expected_max() > 0 && a.find('=') == std::string::npos)
					i++;
				break;
			}
			continue;
		}
		auto subs = cur->get_subcommands([&](CLI::App *s) { return s->check_name(a); });
		if (subs.empty()) {
			if (cur->get_require_subcommand_min() == 0)
				return "";
			return "'" + a + "' is not a command of " + path + " (" + commands(cur) + ")";
		}
		cur = subs.front();
		path += " " + a;
	}
	/* "poolctl vm": a command is due */
	if (cur->get_require_subcommand_min() > 0)
		return (cur == &app ? "a command is needed" : "'" + path.substr(app.get_name().size() + 1) +
								  "' needs a command") +
		       std::string(" (") + commands(cur) + ")";
	return "";
}

} // namespace

std::string version_text(const GlobalOptions &g)
{
	std::string s = "poolctl " POOLMEM_RELEASE " (kernel ABI " + std::to_string(POOLMEM_ABI_VERSION) + ")\n";
	if (const auto m = poolmem::read_module_abi(g.sysfs)) {
		const std::string why = poolmem::abi_mismatch(*m, POOLMEM_ABI_VERSION);
		s += "module: kernel ABI " + std::to_string(*m) + (why.empty() ? "" : " (" + why + ")");
	} else if (poolmem::module_sysfs_present(g.sysfs)) {
		s += "module: loaded, older than kernel ABI 9 (" +
		     poolmem::abi_mismatch(8, POOLMEM_ABI_VERSION) + ")";
	} else {
		s += "module: not loaded";
	}
	return s;
}

poolmem::Control open_control(const GlobalOptions &g)
{
	poolmem::Control ctl(g.control);
	/* once per run: apply runs its steps as processes of their own */
	static bool checked;
	if (!checked) {
		checked = true;
		const std::string why = poolmem::abi_mismatch(ctl.abi_version(), POOLMEM_ABI_VERSION);
		if (!why.empty())
			std::fprintf(stderr, "poolctl: warning: %s\n", why.c_str());
	}
	return ctl;
}


/*
 * The audit trail: one journal entry for each run of a verb that changes
 * something (not for --check, --dry-run or a usage error: nothing
 * changed), with what it was run on, by whom and how it ended.
 */
void audit_run(CLI::App &app, int argc, char **argv, int rc, const std::string &error)
{
	static const std::set<std::string> changing = {
		"pool online", "pool add",	   "pool offline",     "pool remove",	 "pool drain",
		"pool undrain", "pool set",	   "pool soft-offline", "pool poison-scan", "vm create",
		"vm set",	"vm destroy",	   "profile create",   "profile remove",   "apply",
		"cluster register", "cluster fence"};
	std::string verb;
	CLI::App *leaf = &app;
	for (;;) {
		auto subs = leaf->get_subcommands();
		if (subs.empty())
			break;
		leaf = subs.front();
		verb += (verb.empty() ? "" : " ") + leaf->get_name();
	}
	if (!changing.count(verb))
		return;
	for (const char *f : {"--check", "--dry-run", "--no-offline"})
		if (const CLI::Option *o = leaf->get_option_no_throw(f); o && o->count())
			return;
	auto value = [&](const char *name) {
		const CLI::Option *o = leaf->get_option_no_throw(name);
		return o && o->count() ? o->as<std::string>() : std::string();
	};
	poolmem::AuditEntry e;
	e.tool = "poolctl";
	e.verb = verb;
	const std::string noun = verb.substr(0, verb.find(' '));
	const std::string object = !value("--name").empty() ? value("--name") : value("name");
	if (noun == "pool")
		e.pool = verb == "pool online" && object.empty() ? value("device") : object;
	else if (noun == "vm")
		e.domain = object;
	else if (noun == "profile")
		e.profile = object;
	else if (verb == "cluster fence")
		e.host = value("host");
	e.exit_code = rc;
	e.result = rc == EXIT_OK	 ? "ok"
		   : rc == EXIT_NOTFOUND ? "notfound"
		   : rc == EXIT_REFUSED	 ? "refused"
		   : rc == EXIT_PARTIAL	 ? "partial"
					 : "failed";
	e.error = error;
	e.argv.assign(argv, argv + argc);
	e.argv[0] = "poolctl";
	poolmem::audit(e);
}


} // namespace poolctl

int main(int argc, char **argv)
{
	CLI::App app{"poolctl: pooled memory (CXL, DAX, PMem) for VMs with per-tier quotas", "poolctl"};
	app.require_subcommand(1);
	/* global options after the command too: poolctl pool list --json -u */
	app.fallthrough();
	poolctl::GlobalOptions g;
	app.add_option("--sysfs", g.sysfs, "sysfs root (for testing)")->default_val("/sys");
	/* the table of every domain, /proc/poolmem/domains; tests point it elsewhere */
	app.add_option("--procfs", g.procfs)->group("");
	app.add_option("--control", g.control, "control device")->default_val("/dev/poolmem/control");
	app.add_flag("-u,--human", g.human, "with --json: sizes (keys ending in _bytes) as human strings, as daxctl -u");
	app.add_option("--mount", g.mount, "poolmem file system mount point (mounted when missing)")
		->default_val("/run/poolmem");
	/* poolctl apply's, for the --check of a step after pools it registers */
	app.add_option("--planned-pools", g.planned_pools)->delimiter(',')->group("");
	/* after --sysfs: option callbacks run in the order they were added */
	app.set_version_flag("--version", [&g] { return poolctl::version_text(g); },
			     "poolctl's version and kernel ABI, and the loaded module's");

	poolctl::setup_node(app, g);
	poolctl::setup_pool(app, g);
	poolctl::setup_vm(app, g);
	poolctl::setup_status(app, g);
	poolctl::setup_profile(app, g);
	poolctl::setup_apply(app, g);
	poolctl::setup_simulate(app, g);
	poolctl::setup_cluster(app, g);
	poolctl::setup_libvirt(app, g);
	poolctl::setup_capacity(app, g);
	poolctl::setup_autopilot(app, g);

	int rc = poolctl::EXIT_OK;
	std::string error;
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
		std::string why = poolctl::unknown_command(app, argc, argv);
		std::fprintf(stderr, "poolctl: %s (see poolctl --help)\n", why.empty() ? e.what() : why.c_str());
		return poolctl::EXIT_USAGE;
	} catch (const poolctl::UsageError &e) {
		std::fprintf(stderr, "poolctl: %s\n", e.what());
		return poolctl::EXIT_USAGE;
	} catch (const poolctl::PartialError &e) {
		/* --json: what was done, for the script; the error on stderr as always */
		if (!e.json.is_null())
			poolctl::print_json(g, e.json);
		std::fprintf(stderr, "poolctl: %s\n", e.what());
		rc = poolctl::EXIT_PARTIAL;
		error = e.what();
	} catch (const poolmem::Error &e) {
		std::fprintf(stderr, "poolctl: %s\n", e.what());
		rc = poolctl::exit_code(e.code());
		error = e.what();
	} catch (const std::exception &e) {
		std::fprintf(stderr, "poolctl: %s\n", e.what());
		rc = poolctl::EXIT_FAILED;
		error = e.what();
	}
	poolctl::audit_run(app, argc, argv, rc, error);
	return rc;
}
