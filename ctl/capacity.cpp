// poolctl capacity: what admission control lets this host take now, per
// tier and pool, and how many more VMs of a shape fit (libpoolmem's
// poolmem::capacity(), the kernel's rules).
#include "commands.hpp"
#include "table.hpp"

#include <poolmem/capacity.hpp>
#include <poolmem/error.hpp>
#include <poolmem/size.hpp>

#include <cstdio>
#include <limits>

namespace poolctl {

namespace {

struct CapacityOptions {
	std::string shape;
	std::vector<std::string> pools;
	int home_node = -1;
	bool json = false;
};

constexpr uint64_t any = std::numeric_limits<uint64_t>::max();

nlohmann::json fits_json(bool shaped, uint64_t n)
{
	return !shaped || n == any ? nlohmann::json(nullptr) : nlohmann::json(n);
}

nlohmann::json headroom_json(const poolmem::Headroom &h)
{
	return {{"limit_bytes", h.limit_bytes}, {"committed_bytes", h.committed_bytes}, {"headroom_bytes", h.headroom_bytes()}};
}

void run_capacity(const GlobalOptions &g, const CapacityOptions &o)
{
	poolmem::Shape shape;
	const bool shaped = !o.shape.empty();
	if (shaped) {
		auto s = poolmem::parse_shape(o.shape);
		if (!s)
			throw UsageError("--shape: invalid shape '" + o.shape +
					 "' (SIZE/LOCAL: 16G/25%, 16G/4G, or SIZE alone for all pool; whole 2 MiB chunks)");
		shape = *s;
	}
	shape.pools = o.pools;
	shape.home_node = o.home_node;
	const auto c = poolmem::capacity(shape, g.sysfs, g.procfs);
	const auto &s = c.shape;
	std::string pools;
	for (const auto &p : s.pools)
		pools += (pools.empty() ? "" : ",") + p;

	if (o.json) {
		auto local = headroom_json(c.local);
		local["node"] = s.home_node;
		local["fits"] = fits_json(shaped, c.fit_local);
		auto pool = headroom_json(c.pool);
		pool["pools"] = s.pools;
		pool["fits"] = fits_json(shaped, c.fit_pool);
		nlohmann::json each = nlohmann::json::array();
		for (const auto &p : c.pools) {
			auto j = headroom_json(p.pool);
			j["name"] = p.name;
			j["node"] = p.node;
			j["fits"] = fits_json(shaped, s.pool_bytes() ? p.pool.fits(s.pool_bytes()) : any);
			each.push_back(j);
		}
		nlohmann::json shape_json = nullptr;
		if (shaped)
			shape_json = {{"size_bytes", s.bytes}, {"local_bytes", s.local_bytes}, {"pool_bytes", s.pool_bytes()}};
		print_json(g, {{"shape", shape_json},
			       {"local", local},
			       {"pool", pool},
			       {"pools", each},
			       {"fits", fits_json(shaped, c.fit())}});
		return;
	}
	auto fits = [&](uint64_t n) { return !shaped ? "-" : n == any ? "any" : std::to_string(n); };
	if (shaped)
		std::printf("shape %s: local %s on node %d, pool %s on %s\n", poolmem::format_size(s.bytes).c_str(),
			    poolmem::format_size(s.local_bytes).c_str(), s.home_node,
			    poolmem::format_size(s.pool_bytes()).c_str(), pools.empty() ? "no pool" : pools.c_str());
	Table t({"TIER", "WHERE", ">LIMIT", ">COMMITTED", ">HEADROOM", ">FITS"});
	auto row = [&](const std::string &tier, const std::string &where, const poolmem::Headroom &h, uint64_t n) {
		t.row({tier, where, poolmem::format_size(h.limit_bytes), poolmem::format_size(h.committed_bytes),
		       poolmem::format_size(h.headroom_bytes()), fits(n)});
	};
	row("local", "node " + std::to_string(s.home_node), c.local, c.fit_local);
	for (const auto &p : c.pools)
		row("pool", p.name, p.pool, s.pool_bytes() ? p.pool.fits(s.pool_bytes()) : any);
	if (s.pools.size() > 1)
		row("pool", pools, c.pool, c.fit_pool);
	t.print();
	if (shaped)
		std::printf("%s more VMs of this shape fit now (admission control; the %s tier is the limit)\n",
			    fits(c.fit()).c_str(), c.fit_local <= c.fit_pool ? "local" : "pool");
}

} // namespace

void setup_capacity(CLI::App &app, const GlobalOptions &g)
{
	auto o = std::make_shared<CapacityOptions>();
	auto *cap = app.add_subcommand("capacity", "what admission control lets this host take now, per tier and pool, "
						   "and how many more VMs of a shape fit");
	cap->add_option("--shape", o->shape,
			"a VM: SIZE/LOCAL, LOCAL a percentage of SIZE or a size (16G/25%, 16G/4G), or SIZE alone "
			"(all pool)")
		->type_name("SHAPE");
	cap->add_option("--pools", o->pools, "the pools the VMs may use (default: every pool)")->delimiter(',');
	cap->add_option("--home-node", o->home_node, "the VMs' home node (default: the first node with CPUs)");
	cap->add_flag("--json", o->json, "print JSON");
	cap->callback([&g, o] { run_capacity(g, *o); });
}

} // namespace poolctl
