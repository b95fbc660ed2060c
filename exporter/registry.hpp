// The exporter's Collectable: runs the enabled collectors on every scrape
// and adds per-collector success and duration plus build info.
#pragma once

#include "collector.hpp"

#include <prometheus/collectable.h>

#include <chrono>
#include <map>
#include <mutex>
#include <set>

namespace exporter {

class Registry : public prometheus::Collectable {
public:
	/// ENABLED: collector names to run (unknown names are the caller's error).
	Registry(Roots roots, const std::set<std::string> &enabled);
	std::vector<prometheus::MetricFamily> Collect() const override;

private:
	Roots roots_;
	std::vector<std::unique_ptr<Collector>> collectors_;

	/*
	 * A collector's error line is logged once, then at most every 10
	 * minutes while it repeats, with how often it came meanwhile: with the
	 * module unloaded every scrape fails the same way.
	 */
	void log(const std::string &collector, const std::string &line) const;
	struct Logged {
		std::chrono::steady_clock::time_point last;
		unsigned more = 0;
	};
	mutable std::mutex log_mu_;
	mutable std::map<std::string, Logged> logged_;
};

} // namespace exporter
