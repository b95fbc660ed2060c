// media: what the last poolctl pool poison-scan found on the CXL memory
// devices behind pools (/run/poolctl/media-errors.json, written by the scan
// as root: reading a poison list takes CAP_SYS_ADMIN, and a timer or the
// operator runs it). Each poisoned range by memory device, pool and the
// domain whose memory it is. No file: nothing scanned yet, which is no
// failure; a file that does not parse is.
#include "collector.hpp"

#include <nlohmann/json.hpp>

#include <map>
#include <tuple>

using prometheus::MetricType;

namespace exporter {

namespace {

class MediaCollector : public Collector {
public:
	std::string name() const override { return "media"; }

	void collect(const Roots &r, std::vector<prometheus::MetricFamily> &out) const override
	{
		auto file = read_state_file(r.poolctl_state / "media-errors.json");
		if (!file)
			return;
		nlohmann::json j = std::move(*file);
		Family records("poolmem_cxl_poison_records", "Poisoned ranges on each CXL memory device behind a pool, as the device's poison list said at the last poolctl pool poison-scan, by the domain whose memory holds them (domain=\"\" for none): the scan takes their pages out of use (memory errors: poolmem_domain_memory_errors_total). From /run/poolctl/media-errors.json.", MetricType::Gauge);
		Family bytes("poolmem_cxl_poison_bytes", "Bytes of those ranges.", MetricType::Gauge);
		Family scanned("poolmem_cxl_poison_scan_timestamp_seconds", "When poolctl pool poison-scan last read the poison lists.", MetricType::Gauge);
		std::map<std::tuple<std::string, std::string, std::string>, std::pair<double, double>> by;
		/* every scanned memdev, poisoned or not, so that a clean device reads 0 */
		if (j.contains("memdevs") && j["memdevs"].is_object())
			for (auto it = j["memdevs"].begin(); it != j["memdevs"].end(); ++it)
				by[{it.key(), it.value().is_string() ? it.value().get<std::string>() : "", ""}];
		if (!j.contains("records") || !j["records"].is_array())
			throw std::runtime_error((r.poolctl_state / "media-errors.json").string() + ": no records");
		for (const auto &rec : j["records"]) {
			const auto str = [&](const char *k) {
				return rec.contains(k) && rec[k].is_string() ? rec[k].get<std::string>() : std::string();
			};
			auto &v = by[{str("memdev"), str("pool"), str("domain")}];
			v.first += 1;
			v.second += rec.value("length", 0.0);
		}
		for (const auto &[k, v] : by) {
			const Labels l{{"memdev", std::get<0>(k)}, {"pool", std::get<1>(k)}, {"domain", std::get<2>(k)}};
			records.add(l, v.first);
			bytes.add(l, v.second);
		}
		scanned.add({}, j.value("time", 0.0));
		/* Get Health Info, per memdev: null where the device did not give it */
		Family hsup("poolmem_cxl_health_supported", "1 when the CXL memory device answered Get Health Info at the last poolctl pool poison-scan (QEMU's emulation does not), else 0.", MetricType::Gauge);
		Family hstat("poolmem_cxl_health_status", "The device's health status flags (status=maintenance_needed, performance_degraded, hw_replacement_needed): 1 when set.", MetricType::Gauge);
		Family media("poolmem_cxl_media_status", "Always 1: the device's media status (normal, not-ready, persistence-lost, data-lost, ...).", MetricType::Gauge);
		Family temp("poolmem_cxl_temperature_celsius", "The device's temperature, where it reports one.", MetricType::Gauge);
		Family life("poolmem_cxl_life_used_ratio", "Share of the device's rated life used, where it reports one.", MetricType::Gauge);
		Family dirty("poolmem_cxl_dirty_shutdowns_total", "Shutdowns the device counted as dirty (data may not have been saved).", MetricType::Counter);
		Family corr("poolmem_cxl_corrected_errors_total", "Corrected errors the device counted (kind=volatile, persistent).", MetricType::Counter);
		if (j.contains("health") && j["health"].is_object()) {
			const auto &mds = j["memdevs"];
			for (auto it = j["health"].begin(); it != j["health"].end(); ++it) {
				const std::string pool = mds.is_object() && mds.contains(it.key()) && mds[it.key()].is_string()
								 ? mds[it.key()].get<std::string>()
								 : "";
				const Labels l{{"memdev", it.key()}, {"pool", pool}};
				const auto &h = it.value();
				hsup.add(l, h.is_object() ? 1 : 0);
				if (!h.is_object())
					continue;
				for (const char *k : {"maintenance_needed", "performance_degraded", "hw_replacement_needed"})
					hstat.add({{"memdev", it.key()}, {"pool", pool}, {"status", k}}, h.value(k, false) ? 1 : 0);
				media.add({{"memdev", it.key()}, {"pool", pool}, {"status", h.value("media", std::string("other"))}}, 1);
				if (h.contains("temperature_c") && h["temperature_c"].is_number())
					temp.add(l, h["temperature_c"].get<double>());
				if (h.contains("life_used_pct") && h["life_used_pct"].is_number())
					life.add(l, h["life_used_pct"].get<double>() / 100.0);
				dirty.add(l, h.value("dirty_shutdowns", 0.0));
				corr.add({{"memdev", it.key()}, {"pool", pool}, {"kind", "volatile"}}, h.value("volatile_errors", 0.0));
				corr.add({{"memdev", it.key()}, {"pool", pool}, {"kind", "persistent"}}, h.value("pmem_errors", 0.0));
			}
		}
		/* event records the devices reported, counted by the scans since boot */
		Family events("poolmem_cxl_events_total", "Event records the CXL device reported (type=general_media, dram, memory_module: media errors it found, DRAM and module events), as the kernel logged them between poolctl pool poison-scan runs, counted from the first scan after boot.", MetricType::Counter);
		if (j.contains("events") && j["events"].is_object()) {
			const auto &mds = j["memdevs"];
			for (auto it = j["events"].begin(); it != j["events"].end(); ++it) {
				if (!it.value().is_object())
					continue;
				const std::string pool = mds.is_object() && mds.contains(it.key()) && mds[it.key()].is_string()
								 ? mds[it.key()].get<std::string>()
								 : "";
				for (auto t = it.value().begin(); t != it.value().end(); ++t)
					if (t.value().is_number())
						events.add({{"memdev", it.key()}, {"pool", pool}, {"type", t.key()}},
							   t.value().get<double>());
			}
		}
		for (Family *fam : {&records, &bytes, &scanned, &hsup, &hstat, &media, &temp, &life, &dirty, &corr, &events})
			if (!fam->empty())
				out.push_back(fam->take());
	}
};

} // namespace

std::unique_ptr<Collector> make_media_collector() { return std::make_unique<MediaCollector>(); }

} // namespace exporter
