// The exporter's Collectable: runs the enabled collectors on every scrape
// and adds per-collector success and duration plus build info.
#pragma once

#include "collector.hpp"

#include <prometheus/collectable.h>

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
};

} // namespace exporter
