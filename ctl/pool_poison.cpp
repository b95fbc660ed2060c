// poolctl pool poison-scan: read the poison lists of the CXL memory devices
// behind pools (the kernel's trigger_poison_list, whose records come as
// cxl:cxl_poison trace events, as for cxl list --media-errors), name the
// pool, domain and offset of each poisoned address through poolmem's
// reverse map, and take those pages out of use before anything consumes
// them (hard_offline_page: memory_failure(), which poolmem then handles).
// The result also goes to /run/poolctl/media-errors.json for the exporter.
#include "pool.hpp"
#include "table.hpp"
#include <poolmem/chain.hpp>
#include <poolmem/cxl.hpp>
#include <poolmem/poison.hpp>
#include <poolmem/control.hpp>
#include <poolmem/error.hpp>
#include <poolmem/size.hpp>
#include <nlohmann/json.hpp>
#include <chrono>
#include <cerrno>
#include <cstring>
#include <cstdio>
#include <fstream>
#include <set>
#include <sstream>
#include <thread>
#include <fcntl.h>
#include <grp.h>
#include <sys/stat.h>
#include <unistd.h>

namespace poolctl::pool_cmd {

namespace {

constexpr uint64_t no_hpa = poolmem::cxl_no_hpa;
constexpr uint64_t page_size = 4096;
const fs::path media_errors_file = state_dir / "media-errors.json";

struct PoisonRecord : poolmem::CxlPoisonRecord {
	PoisonRecord(const poolmem::CxlPoisonRecord &r) : poolmem::CxlPoisonRecord(r) {}
	std::string pool;   ///< the pool whose memdev listed it
	std::string domain; ///< "" when no domain holds it
	uint64_t offset = 0;
	std::string action; ///< what became of its pages: isolated, unused, ... or "" (not offlined)
};

std::string hex(uint64_t v)
{
	char buf[24];
	std::snprintf(buf, sizeof(buf), "0x%lx", static_cast<unsigned long>(v));
	return buf;
}

/// Poolmem's record for PHYS since sequence number FROM: its action, or "".
std::string wait_record(poolmem::Control &ctl, uint64_t phys, uint64_t from)
{
	for (int i = 0; i < 100; i++) {
		for (const auto &e : ctl.memory_errors(from).errors)
			if (e.phys == (phys & ~(page_size - 1)))
				return e.action;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	return "";
}

nlohmann::json record_json(const PoisonRecord &r)
{
	const auto opt = [](const std::string &s) { return s.empty() ? nlohmann::json(nullptr) : nlohmann::json(s); };
	return {{"memdev", r.memdev},
		{"region", opt(r.region)},
		{"dpa", r.dpa},
		{"length", r.length},
		{"hpa", r.hpa == no_hpa ? nlohmann::json(nullptr) : nlohmann::json(r.hpa)},
		{"pool", r.pool},
		{"domain", opt(r.domain)},
		{"offset", r.domain.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.offset)},
		{"source", r.source},
		{"action", opt(r.action)}};
}

/// For the exporter: what the last scan found, and when
/// (/run/poolctl/media-errors.json, root and group poolmem).
void save_media_state(const nlohmann::json &doc)
{
	fs::create_directories(state_dir);
	const fs::path tmp = media_errors_file.string() + ".tmp";
	std::ofstream f(tmp);
	f << doc.dump() << "\n";
	f.close();
	/* tenants' names: root and the exporter's group, as sysfs shows them */
	fs::permissions(tmp, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
	if (const struct group *gr = ::getgrnam("poolmem"); gr && ::chown(tmp.c_str(), 0, gr->gr_gid))
		std::fprintf(stderr, "poolctl: warning: %s: cannot give it to group poolmem: %s (the exporter "
				     "will not read it)\n",
			     media_errors_file.c_str(), std::strerror(errno));
	fs::rename(tmp, media_errors_file);
}

uint64_t now_seconds()
{
	return static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::seconds>(
					     std::chrono::system_clock::now().time_since_epoch())
					     .count());
}

} // namespace

void run_poison_scan(const GlobalOptions &g, const PoisonScanOptions &o)
{
	std::vector<poolmem::PoolStats> pools;
	if (o.name.empty())
		pools = pools_or_throw(g);
	else
		pools.push_back(pool_or_throw(g, o.name));
	/* memdev -> pool, for the CXL pools */
	std::map<std::string, std::string> memdevs;
	for (const auto &p : pools)
		for (const auto &c : poolmem::device_chain(p.node))
			if (c.bus == "cxl")
				for (const auto &m : c.memdevs)
					memdevs[m.name] = p.name;
	if (memdevs.empty()) {
		/*
		 * Nothing to scan is still a scan (the timer ran): its time
		 * tells the exporter, and PoolmemPoisonScanMissing, that the
		 * scan runs on this host.
		 */
		if (o.name.empty())
			save_media_state({{"time", now_seconds()}, {"memdevs", nlohmann::json::object()},
					  {"records", nlohmann::json::array()}, {"health", nlohmann::json::object()},
					  {"events", nlohmann::json::object()}});
		throw poolmem::Error::plain(o.name.empty() ? "poolmem" : o.name, "no pool on CXL memory devices", ENOENT);
	}

	std::vector<PoisonRecord> recs;
	{
		std::vector<std::string> names;
		for (const auto &[md, pool] : memdevs)
			names.push_back(md);
		for (const auto &c : poolmem::cxl_read_poison(g.sysfs, names)) {
			PoisonRecord r(c);
			if (auto it = memdevs.find(r.memdev); it != memdevs.end())
				r.pool = it->second;
			recs.push_back(r);
		}
	}

	poolmem::Control ctl = open_control(g);
	for (auto &r : recs) {
		if (r.hpa == no_hpa || !r.length)
			continue;
		if (auto hit = ctl.reverse(r.hpa)) {
			r.domain = hit->domain;
			r.offset = hit->offset;
		}
		if (!o.offline)
			continue;
		/* each page of it out of use: memory_failure(), which poolmem handles for its own */
		for (uint64_t a = r.hpa & ~(page_size - 1); a < r.hpa + r.length; a += page_size) {
			const uint64_t from = ctl.memory_errors().total;
			const int err = poolmem::hard_offline_page(a);
			/* poolmem's pages: the kernel gives up (EBUSY) and poolmem takes over */
			std::string action = wait_record(ctl, a, from);
			if (action.empty())
				action = err == 0 ? "offlined" : err == EHWPOISON ? "poisoned-already" : "failed";
			r.action = action;
		}
	}

	/* the devices' own view of their health (Get Health Info), where they give it */
	nlohmann::json health = nlohmann::json::object();
	for (const auto &[md, pool] : memdevs) {
		const auto h = poolmem::cxl_health(md);
		if (!h.supported) {
			health[md] = nullptr;
			continue;
		}
		health[md] = {{"maintenance_needed", h.maintenance_needed},
			      {"performance_degraded", h.performance_degraded},
			      {"hw_replacement_needed", h.hw_replacement_needed},
			      {"media", h.media},
			      {"temperature_c", h.temperature_c < 0 ? nlohmann::json(nullptr) : nlohmann::json(h.temperature_c)},
			      {"life_used_pct", h.life_used_pct < 0 ? nlohmann::json(nullptr) : nlohmann::json(h.life_used_pct)},
			      {"dirty_shutdowns", h.dirty_shutdowns},
			      {"volatile_errors", h.volatile_errors},
			      {"pmem_errors", h.pmem_errors}};
		if (h.maintenance_needed || h.performance_degraded || h.hw_replacement_needed || h.media != "normal")
			std::fprintf(stderr, "poolctl: %s (pool %s): health:%s%s%s media %s\n", md.c_str(), pool.c_str(),
				     h.maintenance_needed ? " maintenance needed" : "",
				     h.performance_degraded ? " performance degraded" : "",
				     h.hw_replacement_needed ? " replace the device" : "", h.media.c_str());
	}

	/* event records since the last scan, added to the counts the last scan left */
	nlohmann::json events = nlohmann::json::object();
	{
		std::ifstream prev(media_errors_file);
		nlohmann::json pj = nlohmann::json::parse(prev, nullptr, false);
		if (!pj.is_discarded() && pj.contains("events") && pj["events"].is_object())
			events = pj["events"];
	}
	for (const auto &[md, byType] : poolmem::cxl_read_events()) {
		auto &m = events[md];
		if (!m.is_object())
			m = nlohmann::json::object();
		for (const auto &[type, n] : byType)
			m[type] = (m.contains(type) && m[type].is_number_unsigned() ? m[type].get<uint64_t>() : 0) + n;
	}

	const auto now = now_seconds();
	nlohmann::json out = nlohmann::json::array();
	for (const auto &r : recs)
		out.push_back(record_json(r));
	save_media_state({{"time", now}, {"memdevs", memdevs}, {"records", out}, {"health", health},
			  {"events", events}});
	if (o.json) {
		print_json(g, out);
		return;
	}
	Table t({"MEMDEV", "DPA", ">LENGTH", "HOST-PHYS", "POOL", "DOMAIN", "OFFSET", "SOURCE", "ACTION"});
	for (const auto &r : recs)
		t.row({r.memdev, hex(r.dpa), std::to_string(r.length), r.hpa == no_hpa ? "-" : hex(r.hpa),
		       r.pool.empty() ? "-" : r.pool, r.domain.empty() ? "-" : r.domain,
		       r.domain.empty() ? "-" : hex(r.offset), r.source, r.action.empty() ? "-" : r.action});
	if (recs.empty())
		std::printf("no poison on %s\n", poolmem::plural(memdevs.size(), "memory device").c_str());
	else
		t.print();
}

} // namespace poolctl::pool_cmd
