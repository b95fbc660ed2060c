// pools: one series per registered pool, from /sys/kernel/poolmem/pools.
#include "collector.hpp"

#include <poolmem/stats.hpp>

#include <stdexcept>

using prometheus::MetricType;

namespace exporter {

namespace {

class PoolsCollector : public Collector {
public:
	std::string name() const override { return "pools"; }

	void collect(const Roots &r, std::vector<prometheus::MetricFamily> &out) const override
	{
		if (!poolmem::module_sysfs_present(r.sysfs))
			throw std::runtime_error("poolmem module not loaded");
		Family info("poolmem_pool_info", "Registered pool: its NUMA node and tier (value 1), from /sys/kernel/poolmem/pools.", MetricType::Gauge);
		Family cap("poolmem_pool_capacity_bytes", "Present memory of the pool's node in bytes, from capacity_bytes.", MetricType::Gauge);
		Family pinnable("poolmem_pool_pinnable_bytes", "Part of the capacity outside ZONE_MOVABLE (onlined normal): what pinnable domains can use, from pinnable_bytes.", MetricType::Gauge);
		Family alloc("poolmem_pool_allocated_bytes", "Bytes of the pool held by domain chunks, from allocated_bytes.", MetricType::Gauge);
		Family free_("poolmem_pool_free_bytes", "Free memory of the pool's node in bytes, from free_bytes.", MetricType::Gauge);
		Family committed("poolmem_pool_committed_bytes", "Pool quotas of the domains allowed on this pool, from committed_bytes.", MetricType::Gauge);
		Family limit("poolmem_pool_admission_limit_bytes", "Capacity times the overcommit ratio: what admission control lets domains commit.", MetricType::Gauge);
		Family chunks("poolmem_pool_chunks", "Domain chunks in the pool, from chunks.", MetricType::Gauge);
		Family allocs("poolmem_pool_allocations_total", "Chunk allocations served by the pool, from allocations.", MetricType::Counter);
		Family faults("poolmem_pool_faults_total", "Page faults served from chunks in the pool, from faults.", MetricType::Counter);
		Family failures("poolmem_pool_failures_total", "Chunk allocations that failed on the pool, from failures.", MetricType::Counter);
		Family af("poolmem_pool_access_factor", "Weighted recent activity of the pool (smart-idle's Af), from access_factor.", MetricType::Gauge);
		Family moved("poolmem_pool_moved_chunks_total", "Chunks migrated into (direction=in) and out of (out) the pool while their domains ran: drain, live quota and pool changes; from moved_in and moved_out.", MetricType::Counter);
		Family accesses("poolmem_pool_sampled_accesses_total", "Accesses to chunks in the pool estimated from sampled refaults (domains with tiering on or sample), from accesses; they count in the access factor.", MetricType::Counter);
		Family draining("poolmem_pool_draining", "1 while the pool is draining (takes no new chunks; poolctl pool drain), else 0, from state.", MetricType::Gauge);
		Family window("poolmem_pool_window_events", "Allocation and fault events per access-factor window, age 0 = current, from window_counts.", MetricType::Gauge);
		for (const auto &p : poolmem::read_pools(r.sysfs)) {
			Labels l{{"pool", p.name}};
			info.add({{"pool", p.name}, {"node", std::to_string(p.node)}, {"tier", p.tier}}, 1);
			cap.add(l, static_cast<double>(p.capacity_bytes));
			pinnable.add(l, static_cast<double>(p.pinnable_bytes));
			alloc.add(l, static_cast<double>(p.allocated_bytes));
			free_.add(l, static_cast<double>(p.free_bytes));
			committed.add(l, static_cast<double>(p.committed_bytes));
			limit.add(l, static_cast<double>(p.capacity_bytes) * static_cast<double>(p.overcommit_pct) / 100.0);
			chunks.add(l, static_cast<double>(p.chunks));
			allocs.add(l, static_cast<double>(p.allocations));
			faults.add(l, static_cast<double>(p.faults));
			failures.add(l, static_cast<double>(p.failures));
			af.add(l, static_cast<double>(p.access_factor));
			moved.add({{"pool", p.name}, {"direction", "in"}}, static_cast<double>(p.moved_in));
			moved.add({{"pool", p.name}, {"direction", "out"}}, static_cast<double>(p.moved_out));
			draining.add(l, p.state == "draining" ? 1 : 0);
			accesses.add(l, static_cast<double>(p.accesses));
			for (size_t i = 0; i < p.window_counts.size(); i++)
				window.add({{"pool", p.name}, {"age", std::to_string(i)}}, static_cast<double>(p.window_counts[i]));
		}
		for (Family *f : {&info, &cap, &pinnable, &alloc, &free_, &committed, &limit, &chunks, &allocs, &faults, &failures, &af, &moved, &accesses, &draining, &window})
			out.push_back(f->take());
	}
};

} // namespace

std::unique_ptr<Collector> make_pools_collector() { return std::make_unique<PoolsCollector>(); }

} // namespace exporter
