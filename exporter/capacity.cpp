// capacity: admission headroom (libpoolmem's poolmem::capacity(), the
// kernel's rules): the local tier's limit and commitment on the VMs' home
// node, and for each --capacity.shape how many more VMs of it fit now.
#include "collector.hpp"

#include <poolmem/capacity.hpp>
#include <poolmem/stats.hpp>

#include <limits>
#include <stdexcept>

using prometheus::MetricType;

namespace exporter {

namespace {

class CapacityCollector : public Collector {
public:
	std::string name() const override { return "capacity"; }

	void collect(const Roots &r, std::vector<prometheus::MetricFamily> &out) const override
	{
		if (!poolmem::module_sysfs_present(r.sysfs))
			throw std::runtime_error("poolmem module not loaded");
		Family limit("poolmem_local_admission_limit_bytes",
			     "The local tier's admission limit on the node new VMs are homed on by default (the first with "
			     "CPUs): its present memory times the module parameter local_overcommit_pct.",
			     MetricType::Gauge);
		Family committed("poolmem_local_committed_bytes",
				 "Local quotas of the live domains homed on that node: what counts against the limit.",
				 MetricType::Gauge);
		Family vms("poolmem_capacity_vms",
			   "How many more VMs of the shape (--capacity.shape SIZE/LOCAL, on every pool) admission "
			   "control admits now: the fewer of the local and pool tiers' (poolctl capacity --shape).",
			   MetricType::Gauge);
		const auto base = poolmem::capacity({}, r.sysfs, r.procfs);
		const Labels node = {{"node", std::to_string(base.shape.home_node)}};
		limit.add(node, static_cast<double>(base.local.limit_bytes));
		committed.add(node, static_cast<double>(base.local.committed_bytes));
		for (const auto &text : r.capacity_shapes) {
			const auto shape = poolmem::parse_shape(text); /* checked at start */
			if (!shape)
				continue;
			const auto c = poolmem::capacity(*shape, r.sysfs, r.procfs);
			const uint64_t n = c.fit();
			vms.add({{"shape", text}}, n == std::numeric_limits<uint64_t>::max()
							   ? std::numeric_limits<double>::infinity()
							   : static_cast<double>(n));
		}
		out.push_back(limit.take());
		out.push_back(committed.take());
		if (!vms.empty())
			out.push_back(vms.take());
	}
};

} // namespace

std::unique_ptr<Collector> make_capacity_collector() { return std::make_unique<CapacityCollector>(); }

} // namespace exporter
