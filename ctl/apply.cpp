// poolctl apply / export: the host's pools, profiles and named domains as a
// file (/etc/poolmem/poolmem.toml, read with toml++), made true at boot by
// poolmem-apply.service before libvirt starts.
//
// apply compares the file with the host and prints a plan: the poolctl
// commands (and chown/chmod) that make the host match, one per line, as an
// operator would type them. Then it checks every step: each poolctl step
// runs as itself with --check (every check the command runs, the kernel's
// admission included, nothing changed), so that a failure is the command's
// own message and exit code. Steps on domains and profiles wait for the
// pools the plan registers, and are checked once they exist. --dry-run
// stops there; otherwise nothing runs unless every check passed, and the
// steps run in order through this very binary, stopping at the first that
// still fails with what was applied and what was not. Running it again
// plans nothing, or what was left. What can't
// change in place (a domain's size, a profile's quotas) is reported as a
// conflict and left; a pool's overcommit changes live (pool set); objects the file does not name are
// left alone.
#include "commands.hpp"
#include "moves.hpp"

#include <poolmem/chain.hpp>
#include <poolmem/control.hpp>
#include <poolmem/error.hpp>
#include <poolmem/size.hpp>
#include <poolmem/stats.hpp>
#include <poolmem/topology.hpp>

#include <toml++/toml.h>

#include <algorithm>
#include <cmath>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <sstream>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <grp.h>
#include <iostream>
#include <pwd.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

namespace poolctl {

namespace fs = std::filesystem;

namespace {

const char *const default_config = "/etc/poolmem/poolmem.toml";

struct ApplyOptions {
	std::string config = default_config;
	bool dry_run = false;
	bool json = false; ///< the plan and what became of each step, as one object
};

struct ExportOptions {
	std::string output; ///< empty: standard output
};

/// One step of a plan: what it does, in words, and the command that does it.
struct Step {
	std::string what;
	std::vector<std::string> argv; ///< argv[0] "poolctl" runs this binary
};

struct Plan {
	std::vector<Step> steps;
	std::vector<std::string> conflicts, unmanaged;
};

/// A config error: "FILE:LINE: TABLE: cause" (exit 2).
[[noreturn]] void bad(const std::string &file, const toml::node &n, const std::string &where, const std::string &why)
{
	throw UsageError(file + ":" + std::to_string(n.source().begin.line) + ": " + where + ": " + why);
}

/// The table's keys must be among KNOWN (a typo must not be ignored).
void known_keys(const std::string &file, const toml::table &t, const std::string &where,
		std::initializer_list<const char *> known)
{
	for (const auto &[k, v] : t) {
		bool ok = false;
		for (const char *n : known)
			ok = ok || k.str() == n;
		if (!ok)
			bad(file, v, where, "unknown key '" + std::string(k.str()) + "'");
	}
}

std::optional<std::string> str(const std::string &file, const toml::table &t, const char *key, const std::string &where)
{
	const toml::node *n = t.get(key);
	if (!n)
		return std::nullopt;
	if (auto s = n->value<std::string>())
		return *s;
	if (auto i = n->value<int64_t>())
		return std::to_string(*i);
	bad(file, *n, where, std::string(key) + ": a string expected");
}

/*
 * A pool's overcommit, as a ratio poolctl takes: 1.5 or "150%" in the file;
 * an integer from 100 to 1000 is the percent of files written before the
 * ratio (it reads as that percent). Default 1.
 */
std::string overcommit(const std::string &file, const toml::table &t, const std::string &where)
{
	const toml::node *n = t.get("overcommit");
	if (!n)
		return "1";
	std::string v;
	if (auto s = n->value_exact<std::string>())
		v = *s;
	else if (auto i = n->value_exact<int64_t>())
		v = *i >= 100 ? std::to_string(*i) + "%" : std::to_string(*i);
	else if (auto d = n->value_exact<double>())
		v = poolmem::format_overcommit(static_cast<uint32_t>(*d * 100 + 0.5));
	const auto pct = v.empty() ? std::nullopt : poolmem::parse_overcommit(v);
	if (!pct || (n->is_floating_point() && std::abs(*n->value<double>() * 100 - *pct) > 1e-6))
		bad(file, *n, where, "overcommit: a ratio from 1 to 10 (1.5) or a percentage (\"150%\")");
	return poolmem::format_overcommit(*pct);
}

std::optional<bool> boolean(const std::string &file, const toml::table &t, const char *key, const std::string &where)
{
	const toml::node *n = t.get(key);
	if (!n)
		return std::nullopt;
	if (auto b = n->value<bool>())
		return *b;
	bad(file, *n, where, std::string(key) + ": true or false expected");
}

std::vector<std::string> list(const std::string &file, const toml::table &t, const char *key, const std::string &where)
{
	std::vector<std::string> out;
	const toml::node *n = t.get(key);
	if (!n)
		return out;
	const toml::array *a = n->as_array();
	if (!a)
		bad(file, *n, where, std::string(key) + ": an array of strings expected");
	for (const auto &e : *a) {
		auto s = e.value<std::string>();
		if (!s)
			bad(file, e, where, std::string(key) + ": an array of strings expected");
		out.push_back(*s);
	}
	return out;
}

std::string join(const std::vector<std::string> &v, const char *sep = ",")
{
	std::string s;
	for (const auto &e : v)
		s += (s.empty() ? "" : sep) + e;
	return s;
}

/// Pool names -> mask, as the kernel keeps it (ids of registered pools).
uint64_t mask_of(const std::vector<std::string> &names, const std::vector<poolmem::PoolStats> &pools)
{
	uint64_t m = 0;
	for (const auto &n : names)
		for (const auto &p : pools)
			if (p.name == n)
				m |= 1ULL << p.id;
	return m;
}

/* ---- pools ---- */

void plan_pools(const std::string &file, const toml::table &root, const GlobalOptions &g, Plan &plan)
{
	const bool loaded = poolmem::module_sysfs_present(g.sysfs);
	const auto have = loaded ? poolmem::read_pools(g.sysfs) : std::vector<poolmem::PoolStats>{};
	const toml::table *pools = root["pools"].as_table();
	std::set<std::string> named;
	if (pools) {
		for (const auto &[key, node] : *pools) {
			const std::string name(key.str()), where = "pools." + name;
			const toml::table *t = node.as_table();
			if (!t)
				bad(file, node, where, "a table expected");
			known_keys(file, *t, where, {"device", "cxl", "node", "zone", "overcommit"});
			check_name(name, "pool");
			named.insert(name);
			const auto dev = str(file, *t, "device", where);
			const auto cxl = list(file, *t, "cxl", where);
			const auto nodev = str(file, *t, "node", where);
			const std::string zone = str(file, *t, "zone", where).value_or("movable");
			const std::string over = overcommit(file, *t, where);
			if ((dev ? 1 : 0) + (cxl.empty() ? 0 : 1) + (nodev ? 1 : 0) != 1)
				bad(file, node, where, "give exactly one of device, cxl or node");
			if (zone != "movable" && zone != "normal")
				bad(file, node, where, "zone: movable or normal");
			const poolmem::PoolStats *p = nullptr;
			for (const auto &h : have)
				if (h.name == name)
					p = &h;
			if (!p) {
				if (nodev)
					plan.steps.push_back({"+ pool " + name + ": register node " + *nodev,
							      {"poolctl", "pool", "add", name, "--node", *nodev, "--overcommit", over}});
				else if (dev)
					plan.steps.push_back({"+ pool " + name + ": online " + *dev,
							      {"poolctl", "pool", "online", *dev, "--name", name, "--zone", zone,
							       "--overcommit", over}});
				else
					plan.steps.push_back({"+ pool " + name + ": region over " + join(cxl),
							      {"poolctl", "pool", "online", "--cxl", join(cxl), "--name", name,
							       "--zone", zone, "--overcommit", over}});
				continue;
			}
			if (poolmem::parse_overcommit(over) != p->overcommit_pct)
				plan.steps.push_back({"~ pool " + name + ": overcommit " +
							      poolmem::format_overcommit(static_cast<uint32_t>(p->overcommit_pct)) +
							      " -> " + over,
						      {"poolctl", "pool", "set", name, "--overcommit", over}});
			if (nodev && std::to_string(p->node) != *nodev)
				plan.conflicts.push_back("pool " + name + ": on node " + std::to_string(p->node) +
							 ", configured node " + *nodev);
			/* offlined (pool offline): online again */
			const auto zones = poolmem::node_zones(g.sysfs, p->node);
			const poolmem::Topology topo = poolmem::read_topology(g.sysfs);
			const poolmem::Node *n = topo.node(p->node);
			unsigned online = 0;
			for (const auto &[z, c] : zones)
				online += c;
			if (!nodev && n && online < n->blocks.size())
				plan.steps.push_back({"~ pool " + name + ": online " +
							      poolmem::plural(n->blocks.size() - online, "offline block") + " again",
						      {"poolctl", "pool", "online", name, "--zone", zone}});
		}
	}
	for (const auto &h : have)
		if (!named.count(h.name))
			plan.unmanaged.push_back("pool " + h.name);
}

/* ---- profiles ---- */

std::string quota_arg(const poolmem::ProfileQuota &q)
{
	return q.pct ? std::to_string(q.pct) + "%" : std::to_string(q.bytes >> 20) + "M";
}

void placement_args(const std::string &file, const toml::table &t, const std::string &where, std::vector<std::string> &a)
{
	for (const char *k : {"chunk", "tier_policy", "pool_select", "home_node", "owner", "mode"})
		if (auto v = str(file, t, k, where)) {
			std::string opt = std::string("--") + k;
			std::replace(opt.begin(), opt.end(), '_', '-');
			a.push_back(opt);
			a.push_back(*v);
		}
	if (auto pools = list(file, t, "pools", where); !pools.empty()) {
		a.push_back("--pools");
		a.push_back(join(pools));
	}
	if (boolean(file, t, "pinnable", where).value_or(false))
		a.push_back("--pinnable");
}

void plan_profiles(const std::string &file, const toml::table &root,
		   std::optional<poolmem::Control> &ctl, Plan &plan)
{
	const toml::table *profiles = root["profiles"].as_table();
	std::vector<std::string> have = ctl ? ctl->profile_names() : std::vector<std::string>{};
	std::set<std::string> named;
	if (profiles) {
		for (const auto &[key, node] : *profiles) {
			const std::string name(key.str()), where = "profiles." + name;
			const toml::table *t = node.as_table();
			if (!t)
				bad(file, node, where, "a table expected");
			known_keys(file, *t, where,
				   {"local", "pool", "chunk", "tier_policy", "pool_select", "pools", "home_node", "owner",
				    "mode", "pinnable"});
			check_name(name, "profile");
			named.insert(name);
			std::vector<std::string> a{"poolctl", "profile", "create", name};
			for (const char *k : {"local", "pool"})
				if (auto v = str(file, *t, k, where)) {
					a.push_back(std::string("--") + k);
					a.push_back(*v);
				}
			placement_args(file, *t, where, a);
			if (std::find(have.begin(), have.end(), name) == have.end()) {
				plan.steps.push_back({"+ profile " + name, a});
				continue;
			}
			/* in place, only what can be compared: quotas and policies */
			const auto info = ctl->profile_info(name);
			const std::string lq = str(file, *t, "local", where).value_or("0");
			const std::string pq = str(file, *t, "pool", where).value_or("0");
			auto same = [](const poolmem::ProfileQuota &q, const std::string &text) {
				if (!text.empty() && text.back() == '%')
					return q.pct && std::to_string(q.pct) + "%" == text;
				auto b = poolmem::parse_size(text);
				return !q.pct && b && *b == q.bytes;
			};
			if (!same(info.spec.local, lq) || !same(info.spec.pool, pq))
				plan.conflicts.push_back("profile " + name + ": quotas local " + quota_arg(info.spec.local) +
							 " pool " + quota_arg(info.spec.pool) + ", configured " + lq + " " +
							 pq + " (profile remove when empty, then apply)");
		}
	}
	for (const auto &h : have)
		if (!named.count(h))
			plan.unmanaged.push_back("profile " + h);
}

/* ---- named domains ---- */

void plan_domains(const std::string &file, const toml::table &root, const GlobalOptions &g,
		  std::optional<poolmem::Control> &ctl, Plan &plan)
{
	const toml::table *doms = root["domains"].as_table();
	const bool loaded = poolmem::module_sysfs_present(g.sysfs);
	const auto have = loaded ? read_domains(g) : std::vector<poolmem::DomainStats>{};
	const auto pools = loaded ? poolmem::read_pools(g.sysfs) : std::vector<poolmem::PoolStats>{};
	std::set<std::string> named;
	if (doms) {
		for (const auto &[key, node] : *doms) {
			const std::string name(key.str()), where = "domains." + name;
			const toml::table *t = node.as_table();
			if (!t)
				bad(file, node, where, "a table expected");
			known_keys(file, *t, where,
				   {"size", "local", "pool", "chunk", "tier_policy", "pool_select", "pools", "home_node",
				    "owner", "mode", "pinnable", "tiering", "scan_rate", "hot_threshold"});
			check_name(name, "domain");
			named.insert(name);
			const auto size = str(file, *t, "size", where);
			if (!size)
				bad(file, node, where, "size is required");
			const poolmem::DomainStats *d = nullptr;
			for (const auto &h : have)
				if (h.name == name && h.profile.empty())
					d = &h;
			if (!d) {
				std::vector<std::string> a{"poolctl", "vm", "create", name, "--size", *size};
				for (const char *k : {"local", "pool"})
					if (auto v = str(file, *t, k, where)) {
						a.push_back(std::string("--") + k);
						a.push_back(*v);
					}
				placement_args(file, *t, where, a);
				for (const char *k : {"tiering", "scan_rate", "hot_threshold"})
					if (auto v = str(file, *t, k, where)) {
						std::string opt = std::string("--") + k;
						std::replace(opt.begin(), opt.end(), '_', '-');
						a.push_back(opt);
						a.push_back(*v);
					}
				plan.steps.push_back({"+ domain " + name + ": " + *size, a});
				continue;
			}
			/* what can't change in place */
			auto bytes = [&](const char *k, uint64_t def) {
				auto v = str(file, *t, k, where);
				if (!v)
					return def;
				auto b = poolmem::parse_size(*v);
				if (!b)
					bad(file, node, where, std::string(k) + ": invalid size '" + *v + "'");
				return *b;
			};
			if (bytes("size", 0) != d->size_bytes)
				plan.conflicts.push_back("domain " + name + ": size " + poolmem::format_size(d->size_bytes) +
							 ", configured " + *size + " (a domain is not resized)");
			if (bytes("chunk", 2ULL << 20) != d->chunk_bytes)
				plan.conflicts.push_back("domain " + name + ": chunk " + poolmem::format_size(d->chunk_bytes) +
							 " differs from the configured one");
			/* what vm set changes while the VM runs */
			std::vector<std::string> a{"poolctl", "vm", "set", name};
			std::vector<std::string> what;
			const uint64_t lq = bytes("local", 0), pq = bytes("pool", 0);
			if (lq != d->local_quota_bytes || pq != d->pool_quota_bytes) {
				a.insert(a.end(), {"--local", std::to_string(lq >> 20) + "M", "--pool", std::to_string(pq >> 20) + "M"});
				what.push_back("quotas " + poolmem::format_size(d->local_quota_bytes) + "/" +
					       poolmem::format_size(d->pool_quota_bytes) + " -> " + poolmem::format_size(lq) + "/" +
					       poolmem::format_size(pq));
			}
			for (const auto &[k, cur] : {std::pair<const char *, std::string>{"tier_policy", d->tier_policy},
						     {"pool_select", d->pool_select}, {"tiering", d->tiering}}) {
				auto v = str(file, *t, k, where);
				if (v && *v != cur) {
					std::string opt = std::string("--") + k;
					std::replace(opt.begin(), opt.end(), '_', '-');
					a.insert(a.end(), {opt, *v});
					what.push_back(std::string(k) + " " + cur + " -> " + *v);
				}
			}
			if (auto want = list(file, *t, "pools", where); !want.empty() && ctl) {
				const auto info = ctl->domain_info(name);
				if (mask_of(want, pools) != info.pool_mask) {
					a.insert(a.end(), {"--pools", join(want)});
					what.push_back("pools -> " + join(want));
				}
			}
			if (!what.empty())
				plan.steps.push_back({"~ domain " + name + ": " + join(what, ", "), a});
			/* owner and mode of the file */
			struct stat st;
			const std::string path = g.mount + d->file;
			if (::stat(path.c_str(), &st) == 0) {
				if (auto m = str(file, *t, "mode", where)) {
					const uint32_t want = parse_mode("mode", *m);
					if ((st.st_mode & 07777) != want)
						plan.steps.push_back({"~ domain " + name + ": mode " + *m, {"chmod", *m, path}});
				}
				if (auto o = str(file, *t, "owner", where)) {
					auto [uid, gid] = parse_owner(*o);
					if (st.st_uid != uid || st.st_gid != gid)
						plan.steps.push_back({"~ domain " + name + ": owner " + *o,
								      {"chown", std::to_string(uid) + ":" + std::to_string(gid), path}});
				}
			}
		}
	}
	for (const auto &h : have)
		if (h.profile.empty() && !named.count(h.name))
			plan.unmanaged.push_back("domain " + h.name);
}

std::string quoted(const std::vector<std::string> &argv)
{
	std::string s;
	for (const auto &a : argv) {
		const bool plain = a.find_first_of(" '\"$\\") == std::string::npos && !a.empty();
		s += (s.empty() ? "" : " ") + (plain ? a : "'" + a + "'");
	}
	return s;
}

/// Run ARGV ("poolctl" is this binary); its exit status. QUIET: its
/// standard output goes to /dev/null (errors still reach standard error).
int run(const std::vector<std::string> &argv, const GlobalOptions &g, bool quiet = false, std::string *errors = nullptr)
{
	std::vector<std::string> full = argv;
	if (full[0] == "poolctl") {
		full[0] = "/proc/self/exe";
		full.insert(full.begin() + 1, {"--sysfs", g.sysfs, "--control", g.control, "--mount", g.mount});
	}
	std::fflush(stdout);
	int pipefd[2] = {-1, -1};
	if (errors && pipe2(pipefd, O_CLOEXEC))
		throw poolmem::Error("apply", "cannot make a pipe", errno);
	pid_t pid = fork();
	if (pid < 0)
		throw poolmem::Error("apply", "cannot fork", errno);
	if (pid == 0) {
		std::vector<char *> av;
		for (auto &a : full)
			av.push_back(a.data());
		av.push_back(nullptr);
		if (quiet) {
			int null = open("/dev/null", O_WRONLY);
			if (null >= 0)
				dup2(null, STDOUT_FILENO);
		}
		/* --json: the step's error goes into the object */
		if (errors)
			dup2(pipefd[1], STDERR_FILENO);
		execvp(av[0], av.data());
		std::fprintf(stderr, "poolctl: %s: cannot run: %s\n", full[0].c_str(), std::strerror(errno));
		_exit(127);
	}
	if (errors) {
		::close(pipefd[1]);
		char buf[4096];
		ssize_t n;
		while ((n = ::read(pipefd[0], buf, sizeof(buf))) > 0 || (n < 0 && errno == EINTR))
			if (n > 0)
				errors->append(buf, static_cast<size_t>(n));
		::close(pipefd[0]);
		while (!errors->empty() && errors->back() == '\n')
			errors->pop_back();
	}
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_FAILED;
}

/// Fail as a step's own exit code RC would: 2 usage, 3 not found, 4 refused,
/// else 1; PARTIAL (steps were applied): exit 5.
[[noreturn]] void fail_as(int rc, const std::string &object, const std::string &message, bool partial = false)
{
	std::fflush(stdout); /* the plan and the x lines before the error */
	if (partial)
		throw PartialError(object, message, EIO);
	if (rc == EXIT_USAGE)
		throw UsageError(object + ": " + message);
	throw poolmem::Error::plain(object, message, rc == EXIT_REFUSED ? EBUSY : rc == EXIT_NOTFOUND ? ENOENT : EIO);
}

/*
 * The checks of a plan's steps: each poolctl step run as itself with
 * --check. Steps on domains and profiles wait while the plan registers
 * pools (they may name them, and admission counts their capacity).
 */
struct Checks {
	const Plan &plan;
	const GlobalOptions &g;
	bool new_pools = false;
	bool quiet = false; ///< --json: no "x step" lines
	std::vector<bool> done;
	std::vector<int> rcs; ///< each step's check: -1 not run (yet), else its exit code
	std::vector<std::string> errors; ///< with quiet: what each failed check said

	Checks(const Plan &p, const GlobalOptions &gg) : plan(p), g(gg), done(p.steps.size()), rcs(p.steps.size(), -1), errors(p.steps.size())
	{
		for (const auto &s : plan.steps)
			if (s.argv[0] == "poolctl" && s.argv[1] == "pool" && s.what.rfind("+ pool", 0) == 0) {
				new_pools = true;
				/* "+ pool NAME: ..." */
				const std::string name = s.what.substr(7, s.what.find(':') - 7);
				planned += (planned.empty() ? "" : ",") + name;
			}
	}
	std::string planned; ///< the pools the plan registers, comma-separated
	bool waits(size_t i) const
	{
		const auto &a = plan.steps[i].argv;
		return new_pools && a[0] == "poolctl" && (a[1] == "vm" || a[1] == "profile");
	}
	/*
	 * Check every step (FINAL false: the steps that wait for new pools
	 * with those pools taken as planned, their admission left for later),
	 * or (FINAL true) the waiting steps once the pools exist. Prints a
	 * line per failure (the command printed its own error above it);
	 * returns the first failure's exit code, or 0.
	 */
	int run_checks(bool final, size_t &passed, size_t &failed)
	{
		int first = 0;
		for (size_t i = 0; i < plan.steps.size(); i++) {
			const auto &s = plan.steps[i];
			if (done[i] || (final && !waits(i)))
				continue;
			done[i] = final || !waits(i);
			if (s.argv[0] != "poolctl")
				continue; /* chown, chmod: nothing to check ahead */
			std::vector<std::string> argv = s.argv;
			if (!final && waits(i))
				argv.insert(argv.begin() + 1, {"--planned-pools", planned});
			argv.push_back("--check");
			const int rc = run(argv, g, true, quiet ? &errors[i] : nullptr);
			rcs[i] = rc;
			if (!rc) {
				passed++;
				continue;
			}
			if (!quiet)
				std::printf("x step %zu (%s) would fail with exit code %d\n", i + 1, s.what.c_str(), rc);
			failed++;
			if (!first)
				first = rc;
		}
		return first;
	}
};

void run_apply(const GlobalOptions &g, const ApplyOptions &o)
{
	toml::table root;
	try {
		root = toml::parse_file(o.config);
	} catch (const toml::parse_error &e) {
		const auto &src = e.source();
		if (!fs::exists(o.config))
			throw poolmem::Error::plain(o.config, "no such file", ENOENT);
		throw UsageError(o.config + ":" + std::to_string(src.begin.line) + ": " + std::string(e.description()));
	}
	known_keys(o.config, root, "top level", {"pools", "profiles", "domains", "autopilot"});

	Plan plan;
	/* pools first: profiles and domains name them */
	plan_pools(o.config, root, g, plan);
	std::optional<poolmem::Control> ctl;
	if (poolmem::module_sysfs_present(g.sysfs) && fs::exists(g.control))
		ctl.emplace(open_control(g));
	plan_profiles(o.config, root, ctl, plan);
	plan_domains(o.config, root, g, ctl, plan);

	if (!o.json) {
		for (const auto &c : plan.conflicts)
			std::printf("! %s\n", c.c_str());
		for (const auto &u : plan.unmanaged)
			std::printf("= %s: not in %s, left as it is\n", u.c_str(), o.config.c_str());
		if (plan.steps.empty()) {
			std::printf("%s: the host matches; nothing to do\n", o.config.c_str());
		} else {
			std::printf("%s: %s\n", o.config.c_str(), poolmem::plural(plan.steps.size(), "step").c_str());
			for (const auto &s : plan.steps)
				std::printf("%s\n    %s\n", s.what.c_str(), quoted(s.argv).c_str());
		}
	}
	Checks checks(plan, g);
	checks.quiet = o.json;
	std::vector<int> run_rcs(plan.steps.size(), -1); /* each step's exit code once run */
	/* --json: the plan, each step's check and run, Documentation/json.md */
	auto print_result = [&] {
		if (!o.json)
			return;
		nlohmann::json steps = nlohmann::json::array();
		for (size_t i = 0; i < plan.steps.size(); i++) {
			const auto &s = plan.steps[i];
			const int crc = checks.rcs[i], rrc = run_rcs[i];
			steps.push_back({{"what", s.what},
					 {"command", s.argv},
					 {"waits_for_pools", checks.waits(i)},
					 {"check", s.argv[0] != "poolctl" ? "none" : crc < 0 ? "pending" : crc ? "failed" : "passed"},
					 {"check_exit_code", crc < 0 ? nlohmann::json(nullptr) : nlohmann::json(crc)},
					 {"check_error", crc > 0 ? nlohmann::json(checks.errors[i]) : nlohmann::json(nullptr)},
					 {"applied", rrc == 0},
					 {"exit_code", rrc < 0 ? nlohmann::json(nullptr) : nlohmann::json(rrc)}});
		}
		print_json(g, {{"config", o.config},
			       {"applied", !o.dry_run && std::all_of(run_rcs.begin(), run_rcs.end(),
									  [](int rc) { return rc == 0; })},
			       {"steps", steps},
			       {"conflicts", plan.conflicts},
			       {"unmanaged", plan.unmanaged}});
	};
	size_t passed = 0, failed = 0, waiting = 0;
	for (size_t i = 0; i < plan.steps.size(); i++)
		waiting += checks.waits(i);
	if (int rc = checks.run_checks(false, passed, failed); rc || !plan.steps.empty()) {
		if (!o.json)
			std::printf("checks: %zu passed, %zu failed%s\n", passed, failed,
				    waiting ? ("; the admission of " + poolmem::plural(waiting, "step") +
					       " on domains and profiles is checked once the pools this plan registers "
					       "exist")
							.c_str()
					    : "");
		if (rc) {
			print_result();
			fail_as(rc, o.config, poolmem::plural(failed, "step") + " would fail (" +
						      (o.json ? "steps[].check" : "x lines above") + "); nothing applied");
		}
	}
	if (!o.dry_run) {
		/* what is done, for the message when a later step fails */
		auto applied = [&](size_t i) {
			return i ? "steps 1-" + std::to_string(i) + " applied, " : std::string("nothing applied, ");
		};
		for (size_t i = 0; i < plan.steps.size(); i++) {
			if (checks.waits(i) && !checks.done[i]) {
				size_t p2 = 0, f2 = 0;
				if (int rc = checks.run_checks(true, p2, f2)) {
					print_result();
					fail_as(rc, o.config,
						poolmem::plural(f2, "step") + " would fail (" +
							(o.json ? "steps[].check" : "x lines above") + "): " + applied(i) +
							std::to_string(i + 1) + "-" + std::to_string(plan.steps.size()) +
							" not (run apply again once fixed)",
						i > 0);
				}
			}
			const int rc = run(plan.steps[i].argv, g, o.json);	/* its error stays on stderr */
			run_rcs[i] = rc;
			if (rc) {
				print_result();
				fail_as(rc, o.config,
					"step " + std::to_string(i + 1) + " (" + plan.steps[i].what + ") failed with exit code " +
						std::to_string(rc) + ": " + applied(i) + std::to_string(i + 1) + "-" +
						std::to_string(plan.steps.size()) + " not (run apply again once fixed)",
					i > 0);
			}
		}
	}
	print_result();
	if (!plan.conflicts.empty())
		throw poolmem::Error::plain(o.config, poolmem::plural(plan.conflicts.size(), "conflict") +
							     " left (lines starting with !)",
					    EBUSY);
}

/* ---- export ---- */

void run_export(const GlobalOptions &g, const ExportOptions &o)
{
	if (!poolmem::module_sysfs_present(g.sysfs))
		throw poolmem::Error::plain("poolmem", "module not loaded: nothing to export", ENOENT);
	const auto pools = poolmem::read_pools(g.sysfs);
	auto pool_names = [&](uint64_t mask, bool all_if_every) {
		toml::array a;
		uint64_t every = 0;
		for (const auto &p : pools)
			every |= 1ULL << p.id;
		if (all_if_every && (mask == every || !mask))
			return a;
		for (const auto &p : pools)
			if (mask & (1ULL << p.id))
				a.push_back(p.name);
		return a;
	};
	auto owner = [](uint32_t uid, uint32_t gid) {
		const passwd *pw = getpwuid(uid);
		const group *gr = getgrgid(gid);
		return (pw ? std::string(pw->pw_name) : std::to_string(uid)) + ":" +
		       (gr ? std::string(gr->gr_name) : std::to_string(gid));
	};
	auto mib = [](uint64_t b) { return b % (1ULL << 30) == 0 ? std::to_string(b >> 30) + "G" : std::to_string(b >> 20) + "M"; };
	char mode[8];

	toml::table root, tp, tpr, td;
	for (const auto &p : pools) {
		toml::table t;
		const auto chain = poolmem::device_chain(p.node);
		if (!chain.empty())
			t.insert("device", chain[0].dax);
		else
			t.insert("node", p.node);
		const auto zones = poolmem::node_zones(g.sysfs, p.node);
		t.insert("zone", zones.count("Normal") && !zones.count("Movable") ? "normal" : "movable");
		/* a ratio: a whole one as an integer, else a float (1.5) */
		if (p.overcommit_pct % 100)
			t.insert("overcommit", static_cast<double>(p.overcommit_pct) / 100);
		else
			t.insert("overcommit", static_cast<int64_t>(p.overcommit_pct / 100));
		tp.insert(p.name, std::move(t));
	}
	poolmem::Control ctl = open_control(g);
	for (const auto &name : ctl.profile_names()) {
		const auto info = ctl.profile_info(name);
		toml::table t;
		t.insert("local", quota_arg(info.spec.local));
		t.insert("pool", quota_arg(info.spec.pool));
		if (info.spec.chunk_bytes)
			t.insert("chunk", mib(info.spec.chunk_bytes));
		t.insert("tier_policy", poolmem::to_string(info.spec.tier_policy));
		t.insert("pool_select", poolmem::to_string(info.spec.pool_select));
		if (auto a = pool_names(info.pool_mask, true); !a.empty())
			t.insert("pools", std::move(a));
		if (info.spec.home_node >= 0)
			t.insert("home_node", info.spec.home_node);
		t.insert("owner", owner(info.spec.uid, info.spec.gid));
		std::snprintf(mode, sizeof(mode), "%04o", info.spec.mode);
		t.insert("mode", std::string(mode));
		if (info.spec.pinnable)
			t.insert("pinnable", true);
		tpr.insert(name, std::move(t));
	}
	for (const auto &d : read_domains(g)) {
		if (!d.profile.empty())
			continue; /* made by QEMU or libvirt in a profile directory */
		const auto info = ctl.domain_info(d.name);
		toml::table t;
		t.insert("size", mib(d.size_bytes));
		t.insert("local", mib(d.local_quota_bytes));
		t.insert("pool", mib(d.pool_quota_bytes));
		if (d.chunk_bytes != (2ULL << 20))
			t.insert("chunk", mib(d.chunk_bytes));
		t.insert("tier_policy", d.tier_policy);
		t.insert("pool_select", d.pool_select);
		if (auto a = pool_names(info.pool_mask, true); !a.empty())
			t.insert("pools", std::move(a));
		t.insert("home_node", d.home_node);
		t.insert("owner", owner(info.uid, info.gid));
		std::snprintf(mode, sizeof(mode), "%04o", info.mode & 07777);
		t.insert("mode", std::string(mode));
		if (d.pinnable)
			t.insert("pinnable", true);
		if (d.tiering != "off")
			t.insert("tiering", d.tiering);
		td.insert(d.name, std::move(t));
	}
	root.insert("pools", std::move(tp));
	root.insert("profiles", std::move(tpr));
	root.insert("domains", std::move(td));

	std::ostringstream out;
	out << "# poolmem host state, written by poolctl export; poolctl apply makes a host match it.\n"
	    << toml::toml_formatter(root, toml::toml_formatter::default_flags & ~toml::format_flags::indentation)
	    << '\n';
	if (o.output.empty()) {
		std::cout << out.str();
		return;
	}
	const std::string tmp = o.output + ".tmp";
	{
		std::ofstream f(tmp);
		if (!(f << out.str()))
			throw poolmem::Error(tmp, "cannot write", errno ? errno : EIO);
	}
	fs::rename(tmp, o.output);
	std::fprintf(stderr, "%s: written\n", o.output.c_str());
}

} // namespace

void setup_apply(CLI::App &app, const GlobalOptions &g)
{
	auto ao = std::make_shared<ApplyOptions>();
	auto *apply = app.add_subcommand("apply", "make the host's pools, profiles and named domains match a file");
	apply->add_option("--config", ao->config, std::string("the file (default ") + default_config + ")");
	apply->add_flag("--dry-run", ao->dry_run, "print the plan, change nothing");
	apply->add_flag("--check", ao->dry_run, "the same as --dry-run (the other verbs' word for it)");
	apply->add_flag("--json", ao->json,
			"print the plan as JSON: each step's command, its check and whether it was applied");
	apply->callback([&g, ao] { run_apply(g, *ao); });

	auto eo = std::make_shared<ExportOptions>();
	auto *exp = app.add_subcommand("export", "write the host's pools, profiles and named domains as a file for apply");
	exp->add_option("--output,-o", eo->output, "file to write (default: standard output)");
	exp->callback([&g, eo] { run_export(g, *eo); });
}

} // namespace poolctl
