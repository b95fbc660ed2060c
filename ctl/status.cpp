// poolctl status / top: pools, capacity, allocation, access factor,
// imbalance across pools, per-VM tier usage.
#include "commands.hpp"

#include <uapi/poolmem.h>
#include "table.hpp"

#include <poolmem/size.hpp>
#include <poolmem/stats.hpp>
#include <poolmem/error.hpp>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <chrono>
#include <iostream>
#include <thread>
#include <unistd.h>

namespace poolctl {


namespace {

struct StatusOptions {
	bool json = false;
	double interval = 1.0;
	unsigned iterations = 0; ///< top: 0 = until interrupted
};

/// Imbalance of the last complete window: max - min events across pools.
/// (The current window is still filling: its figure would depend on when
/// it is read.)
uint64_t imbalance(const std::vector<poolmem::PoolStats> &pools)
{
	if (pools.empty())
		return 0;
	uint64_t lo = UINT64_MAX, hi = 0;
	for (const auto &p : pools) {
		uint64_t w = p.window_counts.size() < 2 ? 0 : p.window_counts[1];
		lo = std::min(lo, w);
		hi = std::max(hi, w);
	}
	return hi - lo;
}

void print_status(const GlobalOptions &g, bool json, const std::vector<poolmem::PoolStats> *prev, double dt,
		  bool lines = false)
{
	if (!poolmem::module_sysfs_present(g.sysfs))
		throw poolmem::Error::plain("poolmem", "module not loaded", ENOENT);
	auto pools = poolmem::read_pools(g.sysfs);
	auto doms = read_domains(g, json); /* the tables show no latency */
	const auto counts = poolmem::read_counts(g.sysfs); /* ABI 8 */
	uint64_t cap = 0, alloc = 0;
	for (const auto &p : pools) {
		cap += p.capacity_bytes;
		alloc += p.allocated_bytes;
	}
	if (json) {
		nlohmann::json j = {{"pools", nlohmann::json::array()}, {"domains", nlohmann::json::array()},
				    {"capacity_bytes", cap}, {"allocated_bytes", alloc},
				    {"imbalance", imbalance(pools)}};
		/* the same objects as pool list and vm list --json, plus rates */
		for (const auto &p : pools) {
			nlohmann::json pj = pool_json(p);
			pj["allocations_per_second"] = nullptr;
			if (prev)
				for (const auto &q : *prev)
					if (q.name == p.name && dt > 0)
						pj["allocations_per_second"] =
							static_cast<double>(p.allocations - q.allocations) / dt;
			j["pools"].push_back(pj);
		}
		for (const auto &d : doms)
			j["domains"].push_back(domain_json(d));
		if (counts)
			j["counts"] = counts_json(*counts);
		/* top: JSON Lines, one object per refresh */
		print_json(g, j, lines);
		return;
	}
	std::printf("pools: %zu, capacity %s, allocated %s; domains: %zu; imbalance (max-min events, "
		    "last complete window) %lu\n\n",
		    pools.size(), poolmem::format_size(cap).c_str(), poolmem::format_size(alloc).c_str(), doms.size(),
		    static_cast<unsigned long>(imbalance(pools)));
	if (counts)
		std::printf("since the module was loaded: %lu SIGBUS, %lu domains refused, %lu made, %lu gone, "
			    "%s discarded\n\n",
			    static_cast<unsigned long>(counts->sigbus),
			    static_cast<unsigned long>(counts->admission_refusals),
			    static_cast<unsigned long>(counts->domains_created),
			    static_cast<unsigned long>(counts->domains_destroyed),
			    poolmem::format_size(counts->discarded_bytes).c_str());
	Table t({"POOL", ">NODE", ">CAPACITY", ">ALLOCATED", ">USE%", ">AF", ">ALLOC/S"});
	for (const auto &p : pools) {
		double rate = 0;
		if (prev)
			for (const auto &q : *prev)
				if (q.name == p.name && dt > 0)
					rate = static_cast<double>(p.allocations - q.allocations) / dt;
		char use[16], r[16];
		std::snprintf(use, sizeof(use), "%.0f",
			      p.capacity_bytes ? 100.0 * static_cast<double>(p.allocated_bytes) /
							 static_cast<double>(p.capacity_bytes)
					       : 0.0);
		std::snprintf(r, sizeof(r), prev ? "%.1f" : "-", rate);
		t.row({p.name, std::to_string(p.node), poolmem::format_size(p.capacity_bytes),
		       poolmem::format_size(p.allocated_bytes), use, std::to_string(p.access_factor), r});
	}
	t.print();
	if (!doms.empty()) {
		std::printf("\n");
		Table v({"VM", ">LOCAL", ">POOL", ">SIGBUS"});
		for (const auto &d : doms)
			v.row({d.name,
			       poolmem::format_size(d.local_bytes) + "/" + poolmem::format_size(d.local_quota_bytes),
			       poolmem::format_size(d.pool_bytes) + "/" + poolmem::format_size(d.pool_quota_bytes),
			       std::to_string(d.sigbus)});
		v.print();
	}
}

void run_top(const GlobalOptions &g, const StatusOptions &o)
{
	if (o.interval <= 0)
		throw UsageError("--interval: must be positive");
	std::vector<poolmem::PoolStats> prev;
	auto last = std::chrono::steady_clock::now();
	const bool tty = isatty(STDOUT_FILENO);
	for (unsigned i = 0; o.iterations == 0 || i < o.iterations; i++) {
		auto now = std::chrono::steady_clock::now();
		double dt = std::chrono::duration<double>(now - last).count();
		if (tty && !o.json)
			std::printf("\033[H\033[2J");
		print_status(g, o.json, i ? &prev : nullptr, dt, true);
		std::fflush(stdout);
		prev = poolmem::read_pools(g.sysfs);
		last = now;
		if (o.iterations == 0 || i + 1 < o.iterations)
			std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
	}
}

} // namespace

void setup_status(CLI::App &app, const GlobalOptions &g)
{
	auto so = std::make_shared<StatusOptions>();
	auto *status = app.add_subcommand("status", "pools, capacity, allocation, access factor, imbalance, VMs");
	status->add_flag("--json", so->json, "print JSON");
	status->callback([&g, so] {
		/* a module of another ABI, said where the host is summed up */
		if (const auto m = poolmem::read_module_abi(g.sysfs)) {
			const std::string why = poolmem::abi_mismatch(*m, POOLMEM_ABI_VERSION);
			if (!why.empty())
				std::fprintf(stderr, "poolctl: warning: %s\n", why.c_str());
		}
		print_status(g, so->json, nullptr, 0);
	});

	auto to = std::make_shared<StatusOptions>();
	auto *top = app.add_subcommand("top", "refreshing status with allocation rates");
	top->add_option("--interval", to->interval, "seconds between refreshes (default 1)");
	top->add_option("--iterations", to->iterations, "stop after N refreshes (default: never)");
	top->add_flag("--json", to->json, "print one JSON object per refresh (one per line: JSON Lines)");
	top->callback([&g, to] { run_top(g, *to); });
}

} // namespace poolctl
