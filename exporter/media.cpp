// media: what the last poolctl pool poison-scan found on the CXL memory
// devices behind pools (/run/poolctl/media-errors.json, written by the scan
// as root: reading a poison list takes CAP_SYS_ADMIN, and a timer or the
// operator runs it). Each poisoned range by memory device, pool and the
// domain whose memory it is. No file: nothing scanned yet, which is no
// failure; a file that does not parse is.
#include "collector.hpp"

#include <nlohmann/json.hpp>

#include <fstream>
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
		std::ifstream f(r.poolctl_state / "media-errors.json");
		if (!f)
			return;
		nlohmann::json j;
		try {
			j = nlohmann::json::parse(f);
		} catch (const nlohmann::json::exception &e) {
			throw std::runtime_error((r.poolctl_state / "media-errors.json").string() + ": " + e.what());
		}
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
		for (Family *fam : {&records, &bytes, &scanned})
			out.push_back(fam->take());
	}
};

} // namespace

std::unique_ptr<Collector> make_media_collector() { return std::make_unique<MediaCollector>(); }

} // namespace exporter
