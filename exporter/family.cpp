#include "collector.hpp"

#include <fstream>

namespace exporter {

std::optional<nlohmann::json> read_state_file(const std::filesystem::path &path)
{
	std::ifstream f(path);
	if (!f)
		return std::nullopt;
	try {
		return nlohmann::json::parse(f);
	} catch (const nlohmann::json::exception &e) {
		throw std::runtime_error(path.string() + ": " + e.what());
	}
}

Family::Family(std::string name, std::string help, prometheus::MetricType type)
{
	f_.name = std::move(name);
	f_.help = std::move(help);
	f_.type = type;
}

static std::vector<prometheus::ClientMetric::Label> to_labels(const Labels &labels)
{
	std::vector<prometheus::ClientMetric::Label> out;
	for (const auto &[k, v] : labels)
		out.push_back({k, v});
	return out;
}

Family &Family::add(const Labels &labels, double value)
{
	prometheus::ClientMetric m;
	m.label = to_labels(labels);
	switch (f_.type) {
	case prometheus::MetricType::Counter:
		m.counter.value = value;
		break;
	default:
		m.gauge.value = value;
		break;
	}
	f_.metric.push_back(std::move(m));
	return *this;
}

Family &Family::add_histogram(const Labels &labels, const std::vector<std::pair<double, uint64_t>> &cumulative,
			      uint64_t count, double sum)
{
	prometheus::ClientMetric m;
	m.label = to_labels(labels);
	m.histogram.sample_count = count;
	m.histogram.sample_sum = sum;
	for (const auto &[le, c] : cumulative)
		m.histogram.bucket.push_back({c, le});
	f_.metric.push_back(std::move(m));
	return *this;
}

std::vector<std::unique_ptr<Collector>> all_collectors()
{
	std::vector<std::unique_ptr<Collector>> v;
	v.push_back(make_module_collector());
	v.push_back(make_pools_collector());
	v.push_back(make_domains_collector());
	v.push_back(make_nodes_collector());
	v.push_back(make_probe_collector());
	v.push_back(make_resctrl_collector());
	v.push_back(make_cluster_collector());
	v.push_back(make_media_collector());
	v.push_back(make_autopilot_collector());
	v.push_back(make_capacity_collector());
	return v;
}

} // namespace exporter
