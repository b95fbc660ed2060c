// poolctl pool events, pool soft-offline: memory errors in pooled memory,
// as the module handled them (kmod/mf.c), and a soft offline by address.
#include "pool.hpp"
#include "table.hpp"
#include <poolmem/control.hpp>
#include <poolmem/error.hpp>
#include <poolmem/size.hpp>
#include <poolmem/stats.hpp>
#include <nlohmann/json.hpp>
#include <cstdio>
#include <ctime>

namespace poolctl::pool_cmd {

namespace {

/// "2026-12-02T18:40:11Z" for a CLOCK_REALTIME time in ns
std::string utc(uint64_t ns)
{
	const time_t t = static_cast<time_t>(ns / 1000000000ULL);
	struct tm tm {};
	char buf[32];
	gmtime_r(&t, &tm);
	std::strftime(buf, sizeof(buf), "%Y-%m-%dT%H:%M:%SZ", &tm);
	return buf;
}

std::string hex(uint64_t v)
{
	char buf[24];
	std::snprintf(buf, sizeof(buf), "0x%lx", static_cast<unsigned long>(v));
	return buf;
}

} // namespace

nlohmann::json memory_error_json(const poolmem::MemoryError &e)
{
	return {{"seq", e.seq},
		{"time", utc(e.time_ns)},
		{"time_ns", e.time_ns},
		{"kind", e.kind},
		{"action", e.action},
		{"phys", e.phys},
		{"node", e.node},
		{"pool", e.pool.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.pool)},
		{"domain", e.domain.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.domain)},
		{"domain_id", e.domain_id ? nlohmann::json(e.domain_id) : nlohmann::json(nullptr)},
		{"offset", e.domain.empty() ? nlohmann::json(nullptr) : nlohmann::json(e.offset)}};
}

void run_events(const GlobalOptions &g, const EventsOptions &o)
{
	poolmem::Control ctl = open_control(g);
	auto r = ctl.memory_errors();
	/*
	 * --domain NAME: the records of the domain that has that name now, by
	 * its id (a domain made again under an old name is another domain: the
	 * pages the old one lost are not its). With no such domain now, or a
	 * module older than ABI 12 (ids 0), every record under that name.
	 */
	uint32_t id = 0;
	if (!o.domain.empty())
		if (const auto d = poolmem::read_domain(g.sysfs, o.domain))
			id = d->id;
	auto ours = [&](const poolmem::MemoryError &e) {
		if (o.domain.empty())
			return true;
		if (id && e.domain_id)
			return e.domain_id == id;
		return e.domain == o.domain;
	};
	std::vector<poolmem::MemoryError> shown;
	for (const auto &e : r.errors)
		if ((o.pool.empty() || e.pool == o.pool) && ours(e))
			shown.push_back(e);
	if (o.json) {
		nlohmann::json out = nlohmann::json::array();
		for (const auto &e : shown)
			out.push_back(memory_error_json(e));
		print_json(g, out);
		return;
	}
	if (r.total > r.errors.size())
		std::fprintf(stderr, "poolctl: %lu older memory errors are no longer kept (the module keeps %u)\n",
			     static_cast<unsigned long>(r.total - r.errors.size()), r.kept);
	Table t({"TIME", "KIND", "ACTION", "HOST-PHYS", ">NODE", "POOL", "DOMAIN", "OFFSET"});
	for (const auto &e : shown)
		t.row({utc(e.time_ns), e.kind, e.action, hex(e.phys), std::to_string(e.node),
		       e.pool.empty() ? "-" : e.pool, e.domain.empty() ? "-" : e.domain,
		       e.domain.empty() ? "-" : hex(e.offset)});
	t.print();
}

void run_soft_offline(const GlobalOptions &g, const SoftOfflineOptions &o)
{
	uint64_t phys = 0;
	try {
		size_t used = 0;
		phys = std::stoull(o.address, &used, 0);
		if (used != o.address.size())
			throw std::invalid_argument("junk");
	} catch (const std::exception &) {
		throw poolmem::Error::plain(o.address, "not a host physical address (e.g. 0x188405000)", EINVAL);
	}
	poolmem::Control ctl = open_control(g);
	auto result = [&](bool offlined, const poolmem::ReverseHit &hit) {
		return nlohmann::json{{"phys", phys},
				      {"offlined", offlined},
				      {"domain", hit.domain.empty() ? nlohmann::json(nullptr) : nlohmann::json(hit.domain)},
				      {"offset", hit.domain.empty() ? nlohmann::json(nullptr) : nlohmann::json(hit.offset)}};
	};
	if (o.check) {
		/* the kernel's own check is the page's domain: soft offline takes only those */
		const auto hit = ctl.reverse(phys);
		if (!hit)
			throw poolmem::Error::plain("page " + hex(phys), "not in a domain's chunk", ENOENT);
		report(g, o.json,
		       "page " + hex(phys) + ": would move domain " + hit->domain + " offset " + hex(hit->offset) +
			       " with its data and take the page out of use",
		       result(false, *hit));
		return;
	}
	auto hit = ctl.page_offline(phys);
	if (hit.domain.empty())
		report(g, o.json, "page " + hex(phys) + ": poisoned already, nothing to do", result(true, hit));
	else
		report(g, o.json,
		       "page " + hex(phys) + ": domain " + hit.domain + " offset " + hex(hit.offset) +
			       " moved with its data; the page is out of use",
		       result(true, hit));
}

} // namespace poolctl::pool_cmd
