// Scenario files (TOML): see Documentation/simulation.md for every key.
#include <poolmem/sim.hpp>
#include <poolmem/size.hpp>

#include "policy/pm_policy.h"

#include <toml++/toml.h>

#include <cmath>
#include <filesystem>
#include <set>
#include <stdexcept>

namespace poolmem::sim {

namespace {

struct Reader {
	std::string file;

	[[noreturn]] void bad(const std::string &where, const std::string &why) const
	{
		throw std::runtime_error(file + ": " + where + ": " + why);
	}

	void known(const toml::table &t, const std::string &where, std::set<std::string> keys) const
	{
		for (const auto &[k, v] : t)
			if (!keys.count(std::string(k.str())))
				bad(where.empty() ? std::string(k.str()) : where + "." + std::string(k.str()),
				    "unknown key");
	}

	double num(const toml::table &t, const char *key, const std::string &where, double def, double lo,
		   double hi) const
	{
		const toml::node *n = t.get(key);
		if (!n)
			return def;
		double v;
		if (auto i = n->value_exact<int64_t>())
			v = static_cast<double>(*i);
		else if (auto d = n->value_exact<double>())
			v = *d;
		else
			bad(where + key, "not a number");
		if (!(v >= lo && v <= hi) || std::isnan(v))
			bad(where + key, std::to_string(v) + " is outside " + std::to_string(lo) + ".." + std::to_string(hi));
		return v;
	}

	uint64_t size(const toml::table &t, const char *key, const std::string &where, uint64_t def) const
	{
		const toml::node *n = t.get(key);
		if (!n)
			return def;
		if (auto i = n->value_exact<int64_t>()) {
			if (*i < 0)
				bad(where + key, "negative size");
			return static_cast<uint64_t>(*i);
		}
		auto s = n->value_exact<std::string>();
		if (!s)
			bad(where + key, "not a size (\"4G\", \"256M\" or bytes)");
		auto v = parse_size(*s);
		if (!v)
			bad(where + key, "invalid size '" + *s + "'");
		return *v;
	}

	std::string str(const toml::table &t, const char *key, const std::string &where, const std::string &def) const
	{
		const toml::node *n = t.get(key);
		if (!n)
			return def;
		auto s = n->value_exact<std::string>();
		if (!s)
			bad(where + key, "not a string");
		return *s;
	}

	const toml::table *table(const toml::table &t, const char *key) const
	{
		const toml::node *n = t.get(key);
		if (n && !n->is_table())
			bad(key, "not a table");
		return n ? n->as_table() : nullptr;
	}

	const toml::array *tables(const toml::table &t, const char *key) const
	{
		const toml::node *n = t.get(key);
		if (n && !n->is_array_of_tables())
			bad(key, "not an array of tables ([[" + std::string(key) + "]])");
		return n ? n->as_array() : nullptr;
	}
};

} // namespace

Scenario load_scenario(const std::string &path)
{
	toml::table root;
	try {
		root = toml::parse_file(path);
	} catch (const toml::parse_error &e) {
		throw std::runtime_error(path + ":" + std::to_string(e.source().begin.line) + ": " +
					 std::string(e.description()));
	}
	Reader r{path};
	r.known(root, "", {"name", "seed", "duration_s", "chunk", "hosts", "local_per_host", "overcommit",
			   "tier_policy", "pool_select", "service", "local", "af", "pools", "pool", "vms", "vm",
			   "phase", "trace", "series_step_s", "rr_start", "backpressure", "credits", "rebalance"});
	Scenario s;
	s.name = r.str(root, "name", "", std::filesystem::path(path).stem().string());
	s.seed = static_cast<uint64_t>(r.num(root, "seed", "", 1, 0, 9e15));
	s.duration_s = r.num(root, "duration_s", "", 0.01, 1e-9, 1e6);
	s.chunk = r.size(root, "chunk", "", 4ULL << 20);
	if (!s.chunk || (s.chunk & (s.chunk - 1)))
		r.bad("chunk", "not a power of two");
	s.hosts = static_cast<unsigned>(r.num(root, "hosts", "", 1, 1, 100000));
	s.local_per_host = r.size(root, "local_per_host", "", 0);
	s.overcommit = r.num(root, "overcommit", "", 1, 0.01, 100);
	s.series_step_s = r.num(root, "series_step_s", "", 0, 0, 1e6);
	try {
		s.tier_policy = parse_tier_policy_name(r.str(root, "tier_policy", "", "local-first"));
		s.pool_select = parse_pool_select_name(r.str(root, "pool_select", "", "smart-idle"));
	} catch (const std::invalid_argument &e) {
		r.bad("policy", e.what());
	}
	{
		const std::string rs = r.str(root, "rr_start", "", pm_rr_start_names[PM_RR_START_MODULE]);
		int i = pm_name_index(pm_rr_start_names, PM_NR_RR_STARTS, rs.c_str());
		if (i < 0)
			r.bad("rr_start", "'" + rs + "' is not zero, random, sequence or salted");
		s.rr_start = static_cast<uint32_t>(i);
	}
	const std::string service = r.str(root, "service", "", "exponential");
	if (service != "exponential" && service != "deterministic")
		r.bad("service", "'" + service + "' is not exponential (M/M/1) or deterministic (M/D/1)");
	s.deterministic_service = service == "deterministic";
	if (const auto *l = r.table(root, "local")) {
		r.known(*l, "local", {"service_ns", "latency_ns"});
		s.local_service_ns = r.num(*l, "service_ns", "local.", 10, 0, 1e9);
		s.local_latency_ns = r.num(*l, "latency_ns", "local.", 80, 0, 1e9);
	}
	if (const auto *b = root.get("backpressure")) {
		const auto v = b->value_exact<bool>();
		if (!v)
			r.bad("backpressure", "not true or false");
		s.backpressure = *v;
	}
	if (const auto *c = r.table(root, "credits")) {
		r.known(*c, "credits", {"host", "pool"});
		s.host_credits = static_cast<unsigned>(r.num(*c, "host", "credits.", s.host_credits, 1, 1e6));
		s.pool_credits = static_cast<unsigned>(r.num(*c, "pool", "credits.", s.pool_credits, 1, 1e6));
	}
	if (const auto *rb = r.table(root, "rebalance")) {
		r.known(*rb, "rebalance", {"enabled", "period_s", "margin_pct", "periods", "rate", "copy"});
		auto flag = [&](const char *key, bool def) {
			const auto *n = rb->get(key);
			if (!n)
				return def;
			const auto v = n->value_exact<bool>();
			if (!v)
				r.bad(std::string("rebalance.") + key, "not true or false");
			return *v;
		};
		s.rebalance.enabled = flag("enabled", s.rebalance.enabled);
		s.rebalance.copy = flag("copy", s.rebalance.copy);
		s.rebalance.period_s = r.num(*rb, "period_s", "rebalance.", s.rebalance.period_s, 1e-9, 1e6);
		s.rebalance.margin_pct =
			static_cast<uint32_t>(r.num(*rb, "margin_pct", "rebalance.", s.rebalance.margin_pct, 0, 10000));
		s.rebalance.periods = static_cast<uint32_t>(r.num(*rb, "periods", "rebalance.", s.rebalance.periods, 1, 1e6));
		s.rebalance.rate_bytes = r.size(*rb, "rate", "rebalance.", s.rebalance.rate_bytes);
		if (!s.rebalance.rate_bytes)
			r.bad("rebalance.rate", "must be above 0");
	}
	if (const auto *a = r.table(root, "af")) {
		r.known(*a, "af", {"window_s", "counts"});
		s.af_window_s = r.num(*a, "window_s", "af.", 100e-6, 1e-9, 1e6);
		const std::string c = r.str(*a, "counts", "af.", "accesses");
		if (c != "accesses" && c != "allocations")
			r.bad("af.counts", "'" + c + "' is not accesses or allocations");
		s.af_counts_accesses = c == "accesses";
	}
	auto pool_spec = [&](const toml::table &t, const std::string &where, PoolSpec def) {
		def.capacity = r.size(t, "capacity", where, def.capacity);
		def.service_ns = r.num(t, "service_ns", where, def.service_ns, 0, 1e9);
		def.latency_ns = r.num(t, "latency_ns", where, def.latency_ns, 0, 1e9);
		def.distance = static_cast<uint32_t>(r.num(t, "distance", where, def.distance, 10, 255));
		def.external_rate = r.num(t, "external_rate", where, def.external_rate, 0, 1e12);
		def.external_start_s = r.num(t, "external_start_s", where, def.external_start_s, 0, 1e9);
		def.external_end_s = r.num(t, "external_end_s", where, def.external_end_s, 0, 1e9);
		return def;
	};
	if (const auto *p = r.table(root, "pools")) {
		/* n identical pools */
		r.known(*p, "pools", {"count", "capacity", "service_ns", "latency_ns", "distance", "external_rate",
				      "external_start_s", "external_end_s"});
		const auto n = static_cast<unsigned>(r.num(*p, "count", "pools.", 1, 1, PM_MAX_POOLS));
		const PoolSpec def = pool_spec(*p, "pools.", PoolSpec{});
		for (unsigned i = 0; i < n; i++) {
			PoolSpec q = def;
			q.name = "p" + std::to_string(i);
			s.pools.push_back(q);
		}
	}
	if (const auto *arr = r.tables(root, "pool"))
		for (size_t i = 0; i < arr->size(); i++) {
			const auto &t = *arr->get(i)->as_table();
			const std::string w = "pool[" + std::to_string(i) + "].";
			r.known(t, w.substr(0, w.size() - 1), {"name", "capacity", "service_ns", "latency_ns", "distance",
							       "external_rate", "external_start_s", "external_end_s"});
			PoolSpec q = pool_spec(t, w, PoolSpec{});
			q.name = r.str(t, "name", w, "p" + std::to_string(s.pools.size()));
			s.pools.push_back(q);
		}
	if (s.pools.empty() || s.pools.size() > PM_MAX_POOLS)
		r.bad("pool", "1 to 64 pools ([pools] count = N, or [[pool]] tables)");
	for (const auto &q : s.pools)
		if (q.capacity < s.chunk)
			r.bad("pool " + q.name, "capacity below one chunk");
	if (const auto *v = r.table(root, "vms")) {
		r.known(*v, "vms", {"initial", "arrival_rate", "lifetime_s"});
		s.initial_vms = static_cast<unsigned>(r.num(*v, "initial", "vms.", 0, 0, 1e6));
		s.arrival_rate = r.num(*v, "arrival_rate", "vms.", 0, 0, 1e9);
		s.lifetime_s = r.num(*v, "lifetime_s", "vms.", 0, 0, 1e9);
	}
	if (const auto *arr = r.tables(root, "vm"))
		for (size_t i = 0; i < arr->size(); i++) {
			const auto &t = *arr->get(i)->as_table();
			const std::string w = "vm[" + std::to_string(i) + "].";
			r.known(t, w.substr(0, w.size() - 1),
				{"name", "weight", "size", "local_pct", "touch_start", "touch_end", "ramp_s", "access_rate",
				 "hot_fraction", "hot_share"});
			VmClass c;
			c.name = r.str(t, "name", w, "vm" + std::to_string(i));
			c.weight = r.num(t, "weight", w, 1, 0, 1e9);
			c.size = r.size(t, "size", w, 0);
			if (!c.size || c.size % s.chunk)
				r.bad(w + "size", "must be a nonzero multiple of the chunk size");
			if (c.size / s.chunk > 32767 * 64ULL * 1024)
				r.bad(w + "size", "too many chunks");
			c.local_pct = static_cast<uint32_t>(r.num(t, "local_pct", w, 25, 0, 100));
			c.touch_start = r.num(t, "touch_start", w, 0.1, 0, 1);
			c.touch_end = r.num(t, "touch_end", w, 0.5, 0, 1);
			c.ramp_s = r.num(t, "ramp_s", w, 0, 0, 1e9);
			c.access_rate = r.num(t, "access_rate", w, 1e6, 0, 1e12);
			c.hot_fraction = r.num(t, "hot_fraction", w, 0, 0, 1);
			c.hot_share = r.num(t, "hot_share", w, 0, 0, 1);
			s.classes.push_back(c);
		}
	if (const auto *arr = r.tables(root, "phase"))
		for (size_t i = 0; i < arr->size(); i++) {
			const auto &t = *arr->get(i)->as_table();
			const std::string w = "phase[" + std::to_string(i) + "].";
			r.known(t, w.substr(0, w.size() - 1), {"start_s", "end_s", "rate_scale", "vm_fraction", "arrival_scale"});
			Phase p;
			p.start_s = r.num(t, "start_s", w, 0, 0, 1e9);
			p.end_s = r.num(t, "end_s", w, s.duration_s, 0, 1e9);
			p.rate_scale = r.num(t, "rate_scale", w, 1, 0, 1e6);
			p.vm_fraction = r.num(t, "vm_fraction", w, 1, 0, 1);
			p.arrival_scale = r.num(t, "arrival_scale", w, 1, 0, 1e6);
			s.phases.push_back(p);
		}
	s.trace = r.str(root, "trace", "", "");
	if (!s.trace.empty() && s.trace[0] != '/')
		s.trace = (std::filesystem::path(path).parent_path() / s.trace).string();
	if (s.classes.empty() && s.trace.empty())
		r.bad("vm", "no [[vm]] class and no trace");
	return s;
}

} // namespace poolmem::sim
