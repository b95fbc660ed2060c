// The poison scan and its state file (media.hpp).
#include <poolmem/media.hpp>

#include <poolmem/chain.hpp>
#include <poolmem/cxl.hpp>
#include <poolmem/error.hpp>

#include <chrono>
#include <cstring>
#include <fstream>
#include <thread>

#include <grp.h>
#include <unistd.h>

namespace fs = std::filesystem;

namespace poolmem {

namespace {

constexpr uint64_t page_size = 4096;

/* Poolmem's record for PHYS since sequence number FROM: its action, or "". */
std::string wait_record(Control &ctl, uint64_t phys, uint64_t from)
{
	for (int i = 0; i < 100; i++) {
		for (const auto &e : ctl.memory_errors(from).errors)
			if (e.phys == (phys & ~(page_size - 1)))
				return e.action;
		std::this_thread::sleep_for(std::chrono::milliseconds(10));
	}
	return "";
}

/* Each page of R out of use: memory_failure(), which poolmem handles for its own. */
void offline_finding(Control &ctl, PoisonFinding &r)
{
	for (uint64_t a = r.hpa & ~(page_size - 1); a < r.hpa + r.length; a += page_size) {
		const uint64_t from = ctl.memory_errors().total;
		const int err = hard_offline_page(a);
		/* poolmem's pages: the kernel gives up (EBUSY) and poolmem takes over */
		std::string action = wait_record(ctl, a, from);
		if (action.empty())
			action = err == 0 ? "offlined" : err == EHWPOISON ? "poisoned-already" : "failed";
		r.action = action;
	}
}

nlohmann::json health_json(const std::string &md, const std::string &pool,
			   const std::function<void(const std::string &)> &warn)
{
	const auto h = cxl_health(md);
	if (!h.supported)
		return nullptr;
	const auto opt = [](int v) { return v < 0 ? nlohmann::json(nullptr) : nlohmann::json(v); };
	if (warn && (h.maintenance_needed || h.performance_degraded || h.hw_replacement_needed || h.media != "normal"))
		warn(md + " (pool " + pool + "): health:" + (h.maintenance_needed ? " maintenance needed" : "") +
		     (h.performance_degraded ? " performance degraded" : "") +
		     (h.hw_replacement_needed ? " replace the device" : "") + " media " + h.media);
	return {{"maintenance_needed", h.maintenance_needed},
		{"performance_degraded", h.performance_degraded},
		{"hw_replacement_needed", h.hw_replacement_needed},
		{"media", h.media},
		{"temperature_c", opt(h.temperature_c)},
		{"life_used_pct", opt(h.life_used_pct)},
		{"dirty_shutdowns", h.dirty_shutdowns},
		{"volatile_errors", h.volatile_errors},
		{"pmem_errors", h.pmem_errors}};
}

uint64_t now_seconds()
{
	return static_cast<uint64_t>(
		std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
			.count());
}

std::string str(const nlohmann::json &j, const char *k)
{
	return j.contains(k) && j[k].is_string() ? j[k].get<std::string>() : std::string();
}

} // namespace

std::map<std::string, std::string> cxl_memdevs(const std::vector<PoolStats> &pools)
{
	std::map<std::string, std::string> out;
	for (const auto &p : pools)
		for (const auto &c : device_chain(p.node))
			if (c.bus == "cxl")
				for (const auto &m : c.memdevs)
					out[m.name] = p.name;
	return out;
}

MediaScan scan_media(Control &ctl, const fs::path &sysfs, const std::map<std::string, std::string> &memdevs,
		     bool offline, const std::optional<MediaScan> &previous,
		     const std::function<void(const std::string &)> &warn)
{
	MediaScan s;
	s.memdevs = memdevs;
	if (!memdevs.empty()) {
		std::vector<std::string> names;
		for (const auto &[md, pool] : memdevs)
			names.push_back(md);
		for (const auto &c : cxl_read_poison(sysfs, names)) {
			PoisonFinding r(c);
			if (auto it = memdevs.find(r.memdev); it != memdevs.end())
				r.pool = it->second;
			s.records.push_back(r);
		}
	}
	for (auto &r : s.records) {
		if (r.hpa == cxl_no_hpa || !r.length)
			continue;
		if (auto hit = ctl.reverse(r.hpa)) {
			r.domain = hit->domain;
			r.offset = hit->offset;
		}
		if (offline)
			offline_finding(ctl, r);
	}
	/* the devices' own view of their health (Get Health Info), where they give it */
	for (const auto &[md, pool] : memdevs)
		s.health[md] = health_json(md, pool, warn);
	/* event records since the last scan, added to the counts it left */
	if (previous)
		s.events = previous->events;
	if (!memdevs.empty())
		for (const auto &[md, by_type] : cxl_read_events()) {
			auto &m = s.events[md];
			if (!m.is_object())
				m = nlohmann::json::object();
			for (const auto &[type, n] : by_type)
				m[type] = (m.contains(type) && m[type].is_number_unsigned() ? m[type].get<uint64_t>() : 0) + n;
		}
	s.time = now_seconds();
	return s;
}

nlohmann::json to_json(const PoisonFinding &r)
{
	const auto opt = [](const std::string &v) { return v.empty() ? nlohmann::json(nullptr) : nlohmann::json(v); };
	return {{"memdev", r.memdev},
		{"region", opt(r.region)},
		{"dpa", r.dpa},
		{"length", r.length},
		{"hpa", r.hpa == cxl_no_hpa ? nlohmann::json(nullptr) : nlohmann::json(r.hpa)},
		{"pool", r.pool},
		{"domain", opt(r.domain)},
		{"offset", r.domain.empty() ? nlohmann::json(nullptr) : nlohmann::json(r.offset)},
		{"source", r.source},
		{"action", opt(r.action)}};
}

nlohmann::json to_json(const MediaScan &s)
{
	nlohmann::json records = nlohmann::json::array();
	for (const auto &r : s.records)
		records.push_back(to_json(r));
	return {{"time", s.time}, {"memdevs", s.memdevs}, {"records", records}, {"health", s.health}, {"events", s.events}};
}

namespace {

MediaScan media_scan_from(const nlohmann::json &j)
{
	MediaScan s;
	s.time = j.value("time", uint64_t{0});
	if (j.contains("memdevs") && j["memdevs"].is_object())
		for (auto it = j["memdevs"].begin(); it != j["memdevs"].end(); ++it)
			s.memdevs[it.key()] = it.value().is_string() ? it.value().get<std::string>() : "";
	if (j.contains("records") && j["records"].is_array())
		for (const auto &rec : j["records"]) {
			CxlPoisonRecord c;
			c.memdev = str(rec, "memdev");
			c.region = str(rec, "region");
			c.source = str(rec, "source");
			c.dpa = rec.value("dpa", uint64_t{0});
			c.length = rec.value("length", uint64_t{0});
			c.hpa = rec.contains("hpa") && rec["hpa"].is_number_unsigned() ? rec["hpa"].get<uint64_t>()
										: cxl_no_hpa;
			PoisonFinding r(c);
			r.pool = str(rec, "pool");
			r.domain = str(rec, "domain");
			r.offset = rec.contains("offset") && rec["offset"].is_number_unsigned()
					   ? rec["offset"].get<uint64_t>()
					   : 0;
			r.action = str(rec, "action");
			s.records.push_back(r);
		}
	if (j.contains("health") && j["health"].is_object())
		s.health = j["health"];
	if (j.contains("events") && j["events"].is_object())
		s.events = j["events"];
	return s;
}

} // namespace

std::optional<MediaScan> read_media_state(const fs::path &file)
{
	std::ifstream in(file);
	if (!in)
		return std::nullopt;
	const nlohmann::json j = nlohmann::json::parse(in, nullptr, false);
	if (j.is_discarded() || !j.is_object())
		return std::nullopt;
	try {
		return media_scan_from(j);
	} catch (const nlohmann::json::exception &) {
		return std::nullopt; /* a field of the wrong type: as a file that does not parse */
	}
}

void write_media_state(const MediaScan &s, const fs::path &file, const std::function<void(const std::string &)> &warn)
{
	fs::create_directories(file.parent_path());
	const fs::path tmp = file.string() + ".tmp";
	{
		std::ofstream f(tmp);
		f << to_json(s).dump() << "\n";
		if (!f.flush())
			throw Error(tmp.string(), "cannot write", errno ? errno : EIO);
	}
	/* tenants' names: root and the exporter's group, as sysfs shows them */
	fs::permissions(tmp, fs::perms::owner_read | fs::perms::owner_write | fs::perms::group_read);
	if (const struct group *gr = ::getgrnam("poolmem"); gr && ::chown(tmp.c_str(), 0, gr->gr_gid) && warn)
		warn(file.string() + ": cannot give it to group poolmem: " + std::strerror(errno) +
		     " (the exporter will not read it)");
	fs::rename(tmp, file);
}

} // namespace poolmem
