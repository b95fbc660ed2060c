// poolctl pool: the subcommands' wiring, and list, show and set.
#include "pool.hpp"
#include "table.hpp"
#include <poolmem/chain.hpp>
#include <poolmem/control.hpp>
#include <poolmem/cxl.hpp>
#include <poolmem/dax.hpp>
#include <poolmem/error.hpp>
#include <poolmem/kmod.hpp>
#include <poolmem/size.hpp>
#include <poolmem/stats.hpp>
#include <poolmem/topology.hpp>
#include <nlohmann/json.hpp>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <fcntl.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

namespace poolctl {

using namespace pool_cmd;

namespace pool_cmd {

std::vector<poolmem::PoolStats> pools_or_throw(const GlobalOptions &g)
{
	if (!poolmem::module_sysfs_present(g.sysfs))
		throw poolmem::Error::plain("poolmem", "module not loaded (poolctl pool online loads it)", ENOENT);
	return poolmem::read_pools(g.sysfs);
}

poolmem::PoolStats pool_or_throw(const GlobalOptions &g, const std::string &name)
{
	pools_or_throw(g);
	auto p = poolmem::read_pool(g.sysfs, name);
	if (!p)
		throw poolmem::Error::plain(name, "no such pool", ENOENT);
	return *p;
}

} // namespace pool_cmd


namespace pool_cmd {

/// "drain 3/86400" -> "drain after 3 within 86400 s"
std::string describe_error_policy(const std::string &policy)
{
	unsigned n = 0, secs = 0;
	if (std::sscanf(policy.c_str(), "drain %u/%u", &n, &secs) == 2)
		return "drain after " + poolmem::plural(n, "error") + " within " + std::to_string(secs) + " s";
	if (std::sscanf(policy.c_str(), "drain %u", &n) == 1)
		return "drain after " + poolmem::plural(n, "error");
	return policy.empty() ? "report" : policy + " (count and log)";
}

void run_list(const GlobalOptions &g, bool json)
{
	auto pools = pools_or_throw(g);
	if (json) {
		nlohmann::json out = nlohmann::json::array();
		for (const auto &p : pools)
			out.push_back(pool_json(p));
		print_json(g, out);
		return;
	}
	Table t({"NAME", ">ID", ">NODE", ">CAPACITY", ">PINNABLE", ">ALLOCATED", ">FREE", ">CHUNKS", ">AF", ">FAILURES", "STATE", "ONLINE"});
	for (const auto &p : pools) {
		auto s = read_state(p.name);
		std::string online = s ? (s->state == "running" ? std::to_string(s->done) + "/" + std::to_string(s->total)
								: s->state)
				       : "-";
		t.row({p.name, std::to_string(p.id), std::to_string(p.node), poolmem::format_size(p.capacity_bytes),
		       poolmem::format_size(p.pinnable_bytes), poolmem::format_size(p.allocated_bytes),
		       poolmem::format_size(p.free_bytes),
		       std::to_string(p.chunks), std::to_string(p.access_factor), std::to_string(p.failures),
		       p.degraded ? "degraded" : p.state, online});
	}
	t.print();
}

/// Domains holding chunks in POOL: name -> chunks.
std::map<std::string, uint64_t> holders(const GlobalOptions &g, const std::string &pool)
{
	std::map<std::string, uint64_t> out;
	for (const auto &d : read_domains(g)) {
		auto it = d.pool_chunks.find(pool);
		if (it != d.pool_chunks.end() && it->second)
			out[d.name] = it->second;
	}
	return out;
}


void run_show(const GlobalOptions &g, const NameOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	auto h = holders(g, p.name);
	const auto chain = poolmem::device_chain(p.node);
	const auto tiers = poolmem::memory_tiers(g.sysfs);
	const auto memmaps = poolmem::kmem_memmap(g.sysfs);
	if (o.json) {
		auto j = pool_json(p);
		j["domains"] = h;
		if (auto m = memmaps.find(p.node); m != memmaps.end())
			j["memmap"] = {{"local_bytes", m->second.local_bytes}, {"device_bytes", m->second.device_bytes}};
		j["zones"] = poolmem::node_zones(g.sysfs, p.node);
		if (auto t = tiers.find(p.node); t != tiers.end())
			j["memory_tier"] = t->second;
		j["devices"] = nlohmann::json::array();
		for (const auto &c : chain) {
			nlohmann::json mem = nlohmann::json::array();
			for (const auto &m : c.memdevs)
				mem.push_back({{"name", m.name}, {"serial", m.serial}, {"host", m.host}});
			j["devices"].push_back({{"dax", c.dax}, {"resource", c.resource}, {"size_bytes", c.size},
						{"bus", c.bus}, {"region", c.region}, {"memdevs", mem}});
		}
		print_json(g, j);
		return;
	}
	std::printf("pool %s (id %u): node %d, tier %s, overcommit %s, %s\n", p.name.c_str(), p.id, p.node,
		    p.tier.c_str(), poolmem::format_overcommit(static_cast<uint32_t>(p.overcommit_pct)).c_str(),
		    p.state == "draining" ? "draining (takes no new chunks)" : p.state.c_str());
	std::printf("  capacity   %s (%s pinnable: onlined normal)\n  allocated  %s in %s\n"
		    "  free       %s\n  committed  %s\n",
		    poolmem::format_size(p.capacity_bytes).c_str(), poolmem::format_size(p.pinnable_bytes).c_str(),
		    poolmem::format_size(p.allocated_bytes).c_str(),
		    poolmem::plural(p.chunks, "chunk").c_str(), poolmem::format_size(p.free_bytes).c_str(),
		    poolmem::format_size(p.committed_bytes).c_str());
	std::printf("  activity   %lu allocations, %lu faults, %lu failures; access factor %lu (windows",
		    static_cast<unsigned long>(p.allocations), static_cast<unsigned long>(p.faults),
		    static_cast<unsigned long>(p.failures), static_cast<unsigned long>(p.access_factor));
	for (auto w : p.window_counts)
		std::printf(" %lu", static_cast<unsigned long>(w));
	std::printf(")\n");
	std::printf("  migration  %lu chunks in, %lu out (%s); %lu put off (referenced), %lu refused (pinned)\n",
		    static_cast<unsigned long>(p.moved_in), static_cast<unsigned long>(p.moved_out),
		    poolmem::format_size(p.moved_bytes).c_str(), static_cast<unsigned long>(p.move_retries),
		    static_cast<unsigned long>(p.move_pins));
	std::printf("  tiering    %lu samples, %lu accesses estimated; %lu chunks promoted to local, %lu demoted here\n",
		    static_cast<unsigned long>(p.samples), static_cast<unsigned long>(p.accesses),
		    static_cast<unsigned long>(p.promotions), static_cast<unsigned long>(p.demotions));
	{
		const uint64_t taken = p.zero_reserve_hits + p.zero_reserve_misses;
		std::printf("  zero       %s of %s held pre-zeroed (setting %s); %s zeroed ahead, %lu of %lu new units "
			    "taken from it (%.0f%%)\n",
			    poolmem::format_size(p.zero_reserve_bytes).c_str(),
			    poolmem::format_size(p.zero_reserve_target_bytes).c_str(),
			    p.zero_reserve.empty() ? "?" : p.zero_reserve.c_str(),
			    poolmem::format_size(p.zero_reserve_refills << 21).c_str(),
			    static_cast<unsigned long>(p.zero_reserve_hits), static_cast<unsigned long>(taken),
			    taken ? 100.0 * static_cast<double>(p.zero_reserve_hits) / static_cast<double>(taken) : 0.0);
	}
	std::printf("  health     %s; on memory errors: %s\n",
		    p.degraded ? "DEGRADED: memory errors past its threshold, draining for good (undrain ends it)"
			       : "ok",
		    describe_error_policy(p.error_policy).c_str());
	if (p.memory_errors || p.soft_offlines)
		std::printf("  errors     %s (pages out of use; the data of a domain that held one is lost), %lu "
			    "soft-offlined (moved off first): poolctl pool events --pool %s\n",
			    poolmem::plural(p.memory_errors, "memory error").c_str(),
			    static_cast<unsigned long>(p.soft_offlines), p.name.c_str());
	else
		std::printf("  errors     none\n");
	if (auto s = read_state(p.name))
		std::printf("  onlining   %u/%u blocks, %.2f s, %s\n", s->done, s->total, s->seconds, s->state.c_str());
	std::string zones;
	for (const auto &[zone, n] : poolmem::node_zones(g.sysfs, p.node))
		zones += (zones.empty() ? "" : ", ") + poolmem::plural(n, "block") + " " + zone;
	std::printf("  zone       %s\n", zones.empty() ? "no block online" : zones.c_str());
	if (auto t = tiers.find(p.node); t != tiers.end()) {
		/* DRAM's tier: that of the nodes with CPUs (the lowest of them) */
		int dram = -1;
		for (const auto &n : poolmem::read_topology(g.sysfs).nodes)
			if (auto d = tiers.find(n.id); n.has_cpus() && d != tiers.end() && (dram < 0 || d->second < dram))
				dram = d->second;
		std::printf("  memory tier %d (%s)\n", t->second,
			    dram < 0		   ? "no node with CPUs in a tier"
			    : t->second > dram ? ("below DRAM's " + std::to_string(dram)).c_str()
			    : t->second == dram
				    ? "DRAM's own: the kernel's demotion and promotion can't tell it from DRAM"
				    : ("above DRAM's " + std::to_string(dram)).c_str());
	}
	if (auto m = memmaps.find(p.node); m != memmaps.end())
		std::printf("  memmap     %s in local DRAM, %s on the pool memory\n",
			    poolmem::format_size(m->second.local_bytes).c_str(),
			    poolmem::format_size(m->second.device_bytes).c_str());
	if (fs::exists(added_marker(p.name)))
		std::printf("  device     node %d registered as it was (pool add --node)\n", p.node);
	for (const auto &c : chain) {
		std::printf("  device     %s (%s at 0x%lx)", c.dax.c_str(), poolmem::format_size(c.size).c_str(),
			    static_cast<unsigned long>(c.resource));
		if (!c.region.empty())
			std::printf(" <- %s %s", c.bus.c_str(), c.region.c_str());
		std::printf("\n");
		for (const auto &m : c.memdevs)
			std::printf("  memdev     %s serial %s%s%s\n", m.name.c_str(), m.serial.empty() ? "-" : m.serial.c_str(),
				    m.host.empty() ? "" : " at ", m.host.c_str());
	}
	for (const auto &[dom, chunks] : h)
		std::printf("  domain     %s: %s\n", dom.c_str(), poolmem::plural(chunks, "chunk").c_str());
}

/*
 * poolctl pool set NAME --zero-reserve SIZE|PCT: how much of the pool's
 * memory is kept zeroed ahead for new chunks (0 = off).
 */
/// A pool setting's result: WHAT names it in the error.
void check_set(const std::string &pool, int err, const char *what)
{
	if (err)
		throw poolmem::Error(pool, what, err);
}

uint32_t overcommit_pct(const std::string &value)
{
	const auto pct = poolmem::parse_overcommit(value);
	if (!pct)
		throw UsageError("--overcommit " + value + ": a ratio from 1 to 10 (e.g. 1.5), or a percentage from "
								 "100% to 1000%");
	return *pct;
}

/// --error-threshold: "3" -> {3, 0}, "3/24h" -> {3, 86400}: the kernel's
/// error_policy threshold and period.
std::pair<unsigned, uint32_t> error_threshold(const std::string &t)
{
	const auto bad = [&] {
		return UsageError("--error-threshold " + t + ": N or N/PERIOD, N from 1 to 64, PERIOD like 30s, 10m, "
								   "24h or 7d");
	};
	const auto slash = t.find('/');
	const std::string n = t.substr(0, slash);
	if (n.empty() || n.find_first_not_of("0123456789") != std::string::npos || n.size() > 2 ||
	    std::stoul(n) < 1 || std::stoul(n) > 64)
		throw bad();
	const unsigned count = static_cast<unsigned>(std::stoul(n));
	if (slash == std::string::npos)
		return {count, 0};
	std::string per = t.substr(slash + 1);
	uint64_t mult = 1;
	if (!per.empty()) {
		switch (per.back()) {
		case 's': mult = 1; per.pop_back(); break;
		case 'm': mult = 60; per.pop_back(); break;
		case 'h': mult = 3600; per.pop_back(); break;
		case 'd': mult = 86400; per.pop_back(); break;
		default: break;
		}
	}
	if (per.empty() || per.size() > 6 || per.find_first_not_of("0123456789") != std::string::npos)
		throw bad();
	const uint64_t secs = std::stoull(per) * mult;
	if (!secs || secs > 0xffffffffULL)
		throw bad();
	return {count, static_cast<uint32_t>(secs)};
}

void run_set(const GlobalOptions &g, const SetOptions &o)
{
	auto p = pool_or_throw(g, o.name);
	if (o.zero_reserve.empty() && o.on_errors.empty() && o.error_threshold.empty() && o.overcommit.empty())
		throw UsageError("pool set: nothing to set (--overcommit RATIO, --zero-reserve SIZE|PCT, --on-errors "
				 "report|drain)");
	const uint32_t pct = o.overcommit.empty() ? 0 : overcommit_pct(o.overcommit);
	if (!o.error_threshold.empty() && o.on_errors != "drain")
		throw UsageError("--error-threshold goes with --on-errors drain");
	if (o.on_errors == "drain" && o.error_threshold.empty())
		throw UsageError("--on-errors drain needs --error-threshold N[/PERIOD]");
	if (o.check) {
		/*
		 * The kernel's rule for this pool's own commitment; it also re-runs
		 * admission of domains spread over several pools, which only the
		 * write itself can do (then refused with the same message).
		 */
		if (pct && p.committed_bytes > p.capacity_bytes * pct / 100)
			throw poolmem::Error::plain(
				p.name,
				"cannot lower the overcommit to " + poolmem::format_overcommit(pct) + ": its domains commit " +
					poolmem::format_size(p.committed_bytes) + " of pool memory, " +
					poolmem::format_size(p.capacity_bytes * pct / 100) +
					" at that ratio (with the other pools they may use: see the kernel log)",
				ENOSPC);
		if (!o.zero_reserve.empty() && o.zero_reserve.back() != '%' &&
		    size_value("--zero-reserve", o.zero_reserve) > p.capacity_bytes)
			throw UsageError("--zero-reserve " + o.zero_reserve + ": above the pool's capacity " +
					 poolmem::format_size(p.capacity_bytes));
		report(g, o.json, p.name + ": would change", {{"name", p.name}, {"changed", false}, {"pool", pool_json(p)}});
		return;
	}
	/* with --json, one object at the end: the pool as it is then */
	auto say = [&](const char *fmt, auto... args) {
		if (!o.json)
			std::printf(fmt, args...);
	};
	auto done = [&] {
		if (o.json)
			print_json(g, {{"name", o.name}, {"changed", true}, {"pool", pool_json(pool_or_throw(g, o.name))}});
	};
	if (pct) {
		try {
			check_set(p.name, poolmem::set_pool_overcommit(g.sysfs, p.name, pct), "cannot set the overcommit");
		} catch (const poolmem::Error &e) {
			if (e.code() != ENOSPC)
				throw;
			throw poolmem::Error::plain(
				p.name,
				"cannot lower the overcommit to " + poolmem::format_overcommit(pct) + ": its domains commit " +
					poolmem::format_size(p.committed_bytes) + " of pool memory, " +
					poolmem::format_size(p.capacity_bytes * pct / 100) +
					" at that ratio (with the other pools they may use: see the kernel log)",
				ENOSPC);
		}
		say("%s: overcommit %s (admits %s; %s committed)\n", p.name.c_str(),
			    poolmem::format_overcommit(pct).c_str(),
			    poolmem::format_size(p.capacity_bytes * pct / 100).c_str(),
			    poolmem::format_size(p.committed_bytes).c_str());
	}
	if (!o.on_errors.empty()) {
		const bool drain = o.on_errors != "report";
		const auto [count, period] = drain ? error_threshold(o.error_threshold) : std::pair<unsigned, uint32_t>{};
		check_set(p.name, poolmem::set_pool_error_policy(g.sysfs, p.name, drain, count, period),
			  "cannot set the memory error policy");
		auto now = pool_or_throw(g, o.name);
		say("%s: on memory errors: %s\n", p.name.c_str(), describe_error_policy(now.error_policy).c_str());
	}
	if (o.zero_reserve.empty())
		return done();
	const std::string &value = o.zero_reserve;
	const bool percent = value.back() == '%';
	uint64_t amount = 0;
	if (percent) {
		unsigned long pct = 0;
		size_t pos = 0;
		try {
			pct = std::stoul(value.substr(0, value.size() - 1), &pos);
		} catch (const std::exception &) {
			pos = std::string::npos;
		}
		if (pos != value.size() - 1 || pct > 50)
			throw UsageError("--zero-reserve " + o.zero_reserve + ": a percentage from 0% to 50%, or a size");
		amount = pct;
	} else {
		amount = size_value("--zero-reserve", value);
		if (amount > p.capacity_bytes)
			throw UsageError("--zero-reserve " + o.zero_reserve + ": above the pool's capacity " +
					 poolmem::format_size(p.capacity_bytes));
	}
	check_set(p.name, poolmem::set_pool_zero_reserve(g.sysfs, p.name, amount, percent), "cannot set the zero reserve");
	auto now = pool_or_throw(g, o.name);
	say("%s: zero reserve %s (%s); it fills in the background on idle CPU\n", p.name.c_str(),
		    now.zero_reserve.c_str(), poolmem::format_size(now.zero_reserve_target_bytes).c_str());
	done();
}

} // namespace pool_cmd

void setup_pool(CLI::App &app, const GlobalOptions &g)
{
	auto *pool = app.add_subcommand("pool", "pools: far memory registered with poolmem");
	pool->require_subcommand(1);

	auto on = std::make_shared<OnlineOptions>();
	auto *online = pool->add_subcommand("online", "online a dax device's memory and register it as a pool, "
						      "or online an offlined pool again");
	online->add_option("device", on->dax, "dax device (e.g. dax0.0), or a pool to online again");
	online->add_option("--cxl", on->cxl, "CXL memdev(s) to interleave into a new region (e.g. mem0)")
		->delimiter(',');
	online->add_option("--size", on->size, "with --cxl: the region's size (default: the memdevs' persistent capacity)");
	online->add_option("--name", on->name, "pool name (default: the device name)");
	online->add_option("--zone", on->zone, "movable (default: can be unplugged, not pinned) or normal")
		->check(CLI::IsMember({"movable", "normal"}));
	online->add_flag("--async", on->async, "return once --first is online; finish in the background");
	online->add_option("--first", on->first, "with --async: how much to online synchronously (default 1G)");
	online->add_flag("--force", on->force,
			 "no effect (kept for scripts: poolctl no longer races the kernel's auto-onlining)");
	online->add_option("--overcommit", on->overcommit,
			   "admission limit: capacity x this ratio, 1 to 10 (e.g. 1.5, or 150%; default 1)");
	online->add_option("--memmap", on->memmap,
			   "where the struct pages go: device (the pool memory holds them; 6.8+, booted with "
			   "memory_hotplug.memmap_on_memory=1), local (DRAM, 16 MiB per GiB), auto (default: device "
			   "where the kernel can)")
		->check(CLI::IsMember({"auto", "local", "device"}));
	add_check_flag(online, on->check);
	online->add_flag("--json", on->json,
			 "print the result as JSON: device, region, node, zone, blocks online of the total, seconds, "
			 "memmap, background");
	online->callback([&g, on] { run_online(g, *on); });

	auto ad = std::make_shared<AddOptions>();
	auto *add = pool->add_subcommand("add", "register a node whose memory is online already as a pool");
	add->add_option("name", ad->name, "pool name")->required();
	add->add_option("--node", ad->node, "NUMA node (CPU-less: CXL, HBM or firmware-onlined memory)")->required();
	add->add_option("--overcommit", ad->overcommit,
			"admission limit: capacity x this ratio, 1 to 10 (e.g. 1.5, or 150%; default 1)");
	add->add_flag("--force", ad->force, "register a node with CPUs too");
	add_check_flag(add, ad->check);
	add_json_flag(add, ad->json, "name, registered, node, online_bytes");
	add->callback([&g, ad] { run_add(g, *ad); });

	auto lo = std::make_shared<NameOptions>();
	auto *list = pool->add_subcommand("list", "list pools");
	list->add_flag("--json", lo->json, "print JSON");
	list->callback([&g, lo] { run_list(g, lo->json); });

	auto so = std::make_shared<NameOptions>();
	auto *show = pool->add_subcommand("show", "show one pool, its activity and the domains in it");
	show->add_option("name", so->name, "pool")->required();
	show->add_flag("--json", so->json, "print JSON");
	show->callback([&g, so] { run_show(g, *so); });

	auto oo = std::make_shared<NameOptions>();
	auto *off = pool->add_subcommand("offline", "offline a pool's memory (refused while chunks live there)");
	off->add_option("name", oo->name, "pool")->required();
	add_check_flag(off, oo->check);
	add_json_flag(off, oo->json, "name, offlined, node, blocks");
	off->callback([&g, oo] { run_offline(g, *oo); });

	auto dro = std::make_shared<DrainOptions>();
	auto *drain = pool->add_subcommand("drain", "move every chunk off a pool while its VMs run (then offline, remove)");
	drain->add_option("name", dro->name, "pool")->required();
	drain->add_flag("--offline", dro->offline, "offline the pool's memory once it is empty");
	drain->add_flag("--allow-local", dro->allow_local,
			"let chunks that fit no other pool move to their domain's local quota");
	add_move_options(drain, dro->moves);
	drain->add_flag("--check", dro->check, "only check that the pool's chunks fit elsewhere");
	drain->add_flag("--json", dro->json,
			"print the result as JSON: moved and remaining bytes, seconds, blocks offlined");
	drain->callback([&g, dro] { run_drain(g, *dro); });

	auto uo = std::make_shared<NameOptions>();
	auto *undrain = pool->add_subcommand("undrain", "end draining: the pool takes chunks again");
	undrain->add_option("name", uo->name, "pool")->required();
	add_check_flag(undrain, uo->check);
	add_json_flag(undrain, uo->json, "name, undrained, state");
	undrain->callback([&g, uo] { run_undrain(g, *uo); });

	auto se = std::make_shared<SetOptions>();
	auto *set = pool->add_subcommand("set", "change a pool's settings while it runs");
	set->add_option("name", se->name, "pool")->required();
	set->add_option("--overcommit", se->overcommit,
			"a new admission limit, capacity x this ratio (1.5, or 150%): a decrease below what the "
			"pool's domains commit is refused");
	set->add_option("--zero-reserve", se->zero_reserve,
			"memory kept zeroed ahead for new chunks: a size or a percentage of capacity (0 = off; default 1%)");
	set->add_option("--on-errors", se->on_errors,
			"what memory errors in the pool do: report (default: count and log) or drain (past "
			"--error-threshold: degraded, takes no new chunks, its chunks move off)")
		->check(CLI::IsMember({"report", "drain"}));
	set->add_option("--error-threshold", se->error_threshold,
			"with --on-errors drain: N errors (1..64), or N within PERIOD (e.g. 3/24h)");
	add_check_flag(set, se->check);
	add_json_flag(set, se->json, "name, changed, and the pool as pool show --json");
	set->callback([&g, se] { run_set(g, *se); });

	auto ev = std::make_shared<EventsOptions>();
	auto *events = pool->add_subcommand("events", "list the memory errors poolmem handled: time, address, pool, "
							"domain and offset");
	events->add_option("--pool", ev->pool, "only this pool's");
	events->add_option("--domain", ev->domain, "only this domain's (by its id: not those of an earlier domain of that name)");
	events->add_flag("--json", ev->json, "print JSON");
	events->callback([&g, ev] { run_events(g, *ev); });

	auto ps = std::make_shared<PoisonScanOptions>();
	auto *scan = pool->add_subcommand("poison-scan", "read the poison lists of the CXL devices behind pools, name "
							 "the VMs hit and take those pages out of use");
	scan->add_option("name", ps->name, "one pool (default: every pool on CXL memory)");
	scan->add_flag("!--no-offline", ps->offline, "only list: leave the poisoned pages in use");
	scan->add_flag("--json", ps->json, "print JSON");
	scan->add_flag("--check", ps->check, "the same as --no-offline (the other verbs' word for it)");
	scan->callback([&g, ps] {
		ps->offline = ps->offline && !ps->check;
		run_poison_scan(g, *ps);
	});

	auto sof = std::make_shared<SoftOfflineOptions>();
	auto *soft = pool->add_subcommand("soft-offline", "take a page out of use (corrected errors): its chunk "
							  "moves with its data first");
	soft->add_option("address", sof->address, "host physical address of the page (e.g. 0x188405000)")->required();
	add_check_flag(soft, sof->check);
	add_json_flag(soft, sof->json, "phys, offlined, domain and offset (null: no domain's page)");
	soft->callback([&g, sof] { run_soft_offline(g, *sof); });

	auto ro = std::make_shared<NameOptions>();
	auto *rm = pool->add_subcommand("remove", "unregister a pool, offline it and hand the device back to devdax");
	rm->add_option("name", ro->name, "pool")->required();
	add_check_flag(rm, ro->check);
	add_json_flag(rm, ro->json, "name, removed, node, offlined_blocks, devices (handed back to devdax)");
	rm->callback([&g, ro] { run_remove(g, *ro); });
}

} // namespace poolctl
