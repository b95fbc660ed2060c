#include "registry.hpp"

#include <chrono>
#include <cstdio>

#ifndef POOLMEM_VERSION
#define POOLMEM_VERSION "unknown"
#endif

using prometheus::MetricType;

namespace exporter {

Registry::Registry(Roots roots, const std::set<std::string> &enabled) : roots_(std::move(roots))
{
	for (auto &c : all_collectors())
		if (enabled.count(c->name()))
			collectors_.push_back(std::move(c));
}

std::vector<prometheus::MetricFamily> Registry::Collect() const
{
	std::vector<prometheus::MetricFamily> out;
	Family ok("poolmem_scrape_collector_success", "Whether a collector succeeded (1) or failed (0) in this scrape.", MetricType::Gauge);
	Family dur("poolmem_scrape_collector_duration_seconds", "How long a collector took in this scrape.", MetricType::Gauge);
	for (const auto &c : collectors_) {
		auto t0 = std::chrono::steady_clock::now();
		std::vector<prometheus::MetricFamily> mine;
		bool success = true;
		try {
			c->collect(roots_, mine);
		} catch (const std::exception &e) {
			success = false;
			std::fprintf(stderr, "poolmem-exporter: collector %s: %s\n", c->name().c_str(), e.what());
		}
		double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		if (success)
			for (auto &f : mine)
				out.push_back(std::move(f));
		ok.add({{"collector", c->name()}}, success ? 1 : 0);
		dur.add({{"collector", c->name()}}, secs);
	}
	out.push_back(ok.take());
	out.push_back(dur.take());
	Family build("poolmem_exporter_build_info", "poolmem-exporter build information (value 1).", MetricType::Gauge);
	build.add({{"version", POOLMEM_VERSION}, {"compiler", __VERSION__}}, 1);
	out.push_back(build.take());
	return out;
}

} // namespace exporter
