#include "registry.hpp"


#include <chrono>
#include <cstdio>
#include <future>
#include <sstream>

#ifndef POOLMEM_VERSION
#define POOLMEM_VERSION "unknown"
#endif
#ifndef POOLMEM_ABI
#define POOLMEM_ABI "unknown"
#endif

using prometheus::MetricType;

namespace exporter {

void throw_if_partial(const std::vector<std::string> &errors)
{
	if (errors.empty())
		return;
	std::string all;
	for (const auto &e : errors)
		all += (all.empty() ? "" : "\n") + e;
	throw PartialError(all);
}

Registry::Registry(Roots roots, const std::set<std::string> &enabled) : roots_(std::move(roots))
{
	for (auto &c : all_collectors())
		if (enabled.count(c->name()))
			collectors_.push_back(std::move(c));
}

void Registry::log(const std::string &collector, const std::string &line) const
{
	const auto now = std::chrono::steady_clock::now();
	std::lock_guard lock(log_mu_);
	auto [it, fresh] = logged_.try_emplace(collector + ": " + line);
	Logged &l = it->second;
	if (!fresh && now - l.last < std::chrono::minutes(10)) {
		l.more++;
		return;
	}
	if (l.more)
		std::fprintf(stderr, "poolmem-exporter: collector %s: %s (%u more times since it was last logged)\n",
			     collector.c_str(), line.c_str(), l.more);
	else
		std::fprintf(stderr, "poolmem-exporter: collector %s: %s\n", collector.c_str(), line.c_str());
	l.last = now;
	l.more = 0;
}

std::vector<prometheus::MetricFamily> Registry::Collect() const
{
	std::vector<prometheus::MetricFamily> out;
	Family ok("poolmem_scrape_collector_success", "Whether a collector succeeded (1) or failed (0) in this scrape.", MetricType::Gauge);
	Family dur("poolmem_scrape_collector_duration_seconds", "How long a collector took in this scrape.", MetricType::Gauge);
	/* collectors run concurrently, as node_exporter's do; output order
	 * stays the collectors' order */
	struct Result {
		std::vector<prometheus::MetricFamily> families;
		bool success = true;
		double seconds = 0;
	};
	std::vector<std::future<Result>> running;
	for (const auto &c : collectors_) {
		running.push_back(std::async(std::launch::async, [this, &c] {
			Result r;
			auto t0 = std::chrono::steady_clock::now();
			try {
				c->collect(roots_, r.families);
			} catch (const PartialError &e) {
				/* what could be read stays; the rest is named */
				r.success = false;
				std::istringstream lines(e.what());
				for (std::string line; std::getline(lines, line);)
					log(c->name(), line);
			} catch (const std::exception &e) {
				r.success = false;
				r.families.clear();
				log(c->name(), e.what());
			}
			r.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
			return r;
		}));
	}
	for (size_t i = 0; i < collectors_.size(); i++) {
		Result r = running[i].get();
		for (auto &f : r.families)
			out.push_back(std::move(f));
		ok.add({{"collector", collectors_[i]->name()}}, r.success ? 1 : 0);
		dur.add({{"collector", collectors_[i]->name()}}, r.seconds);
	}
	out.push_back(ok.take());
	out.push_back(dur.take());
	Family build("poolmem_exporter_build_info", "poolmem-exporter build information (value 1).", MetricType::Gauge);
	build.add({{"version", POOLMEM_VERSION}, {"abi", POOLMEM_ABI}, {"compiler", __VERSION__}}, 1);
	out.push_back(build.take());
	return out;
}

} // namespace exporter
