// poolctl's JSON objects and printing (json.hpp).
#include "json.hpp"
#include "pool.hpp"

#include <poolmem/size.hpp>

#include <cstdio>
#include <iostream>

namespace poolctl {

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

void print_json(const GlobalOptions &g, const nlohmann::json &j, bool compact)
{
	const nlohmann::json &v = g.human ? humanize(j) : j;
	std::cout << (compact ? v.dump() : v.dump(2)) << std::endl;
}

void report(const GlobalOptions &g, bool json, const std::string &line, const nlohmann::json &obj)
{
	if (json)
		print_json(g, obj);
	else
		std::printf("%s\n", line.c_str());
}

/* one schema for a pool wherever it is printed (Documentation/json.md) */
nlohmann::json pool_json(const poolmem::PoolStats &p)
{
	nlohmann::json j = {
		{"name", p.name},
		{"id", p.id},
		{"node", p.node},
		{"tier", p.tier},
		{"overcommit_pct", p.overcommit_pct},
		{"overcommit", static_cast<double>(p.overcommit_pct) / 100},
		{"capacity_bytes", p.capacity_bytes},
		{"pinnable_bytes", p.pinnable_bytes},
		{"free_bytes", p.free_bytes},
		{"allocated_bytes", p.allocated_bytes},
		{"committed_bytes", p.committed_bytes},
		{"chunks", p.chunks},
		{"allocations", p.allocations},
		{"faults", p.faults},
		{"failures", p.failures},
		{"access_factor", p.access_factor},
		{"window_counts", p.window_counts},
		{"state", p.state},
		{"moved_in", p.moved_in},
		{"moved_out", p.moved_out},
		{"moved_bytes", p.moved_bytes},
		{"move_retries", p.move_retries},
		{"move_pins", p.move_pins},
		{"accesses", p.accesses},
		{"samples", p.samples},
		{"promotions", p.promotions},
		{"demotions", p.demotions},
		{"memory_errors", p.memory_errors},
		{"soft_offlines", p.soft_offlines},
		{"discarded_bytes", p.discarded_bytes},
		{"rebalanced_chunks", p.rebalanced_chunks},
		{"contended", p.contended},
		{"error_policy", p.error_policy},
		{"degraded", p.degraded},
		{"zero_reserve",
		 {{"setting", p.zero_reserve},
		  {"target_bytes", p.zero_reserve_target_bytes},
		  {"held_bytes", p.zero_reserve_bytes},
		  {"refills", p.zero_reserve_refills},
		  {"hits", p.zero_reserve_hits},
		  {"misses", p.zero_reserve_misses}}},
	};
	/* always there: null when this host has no onlining record for it */
	j["online"] = nullptr;
	if (auto s = pool_cmd::read_state(p.name))
		j["online"] = {{"blocks_done", s->done}, {"blocks_total", s->total}, {"seconds", s->seconds}, {"state", s->state}};
	return j;
}

/* one schema for a domain wherever it is printed (Documentation/json.md) */
nlohmann::json domain_json(const poolmem::DomainStats &d)
{
	return {
		{"name", d.name},
		{"size_bytes", d.size_bytes},
		{"chunk_bytes", d.chunk_bytes},
		{"local_quota_bytes", d.local_quota_bytes},
		{"pool_quota_bytes", d.pool_quota_bytes},
		{"local_bytes", d.local_bytes},
		{"pool_bytes", d.pool_bytes},
		{"chunks", d.chunks},
		{"faults", d.faults},
		{"sigbus", d.sigbus},
		{"discards", d.discards},
		{"home_node", d.home_node},
		{"pinnable", d.pinnable},
		{"tier_policy", d.tier_policy},
		{"pool_select", d.pool_select},
		{"pool_chunks", d.pool_chunks},
		{"fault_latency_histogram", d.fault_latency_histogram},
		{"retired_chunks", d.retired_chunks},
		{"moves", d.moves},
		{"move_retries", d.move_retries},
		{"move_pins", d.move_pins},
		{"moves_pending_bytes", d.moves_pending_bytes},
		{"revoked_chunks", d.revoked_chunks},
		{"memory_errors", d.memory_errors},
		{"tiering", {{"mode", d.tiering}, {"scan_rate", d.scan_rate}, {"hot_ms", d.hot_ms},
			     {"samples", d.samples}, {"sample_hits", d.sample_hits},
			     {"sample_hits_pool", d.sample_hits_pool}, {"rebalanced_chunks", d.rebalanced_chunks},
			     {"promotions", d.promotions},
			     {"demotions", d.demotions}, {"scan_ns", d.tiering_scan_ns}, {"hot_chunks", d.hot_chunks},
			     {"cold_chunks", d.cold_chunks}}},
		{"profile", d.profile},
		{"file", d.file},
		{"creator", d.creator},
		/* zNUMA windows; null for a domain without */
		{"windows", d.windows.empty() ? nlohmann::json(nullptr) : [&] {
			 nlohmann::json w = nlohmann::json::array();
			 for (const auto &x : d.windows)
				 w.push_back({{"name", x.name},
					      {"file", d.file + "." + x.name},
					      {"base_bytes", x.base},
					      {"size_bytes", x.size},
					      {"touched_bytes", x.name == "local" ? d.local_bytes : d.pool_bytes}});
			 return w;
		 }()},
	};
}

nlohmann::json counts_json(const poolmem::Counts &c)
{
	return {{"sigbus", c.sigbus},
		{"admission_refusals", c.admission_refusals},
		{"domains_created", c.domains_created},
		{"domains_destroyed", c.domains_destroyed},
		{"discarded_bytes", c.discarded_bytes}};
}

} // namespace poolctl
