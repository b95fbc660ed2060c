// pools: one series per registered pool, from /sys/kernel/poolmem/pools.
#include "collector.hpp"

#include <poolmem/stats.hpp>
#include <poolmem/topology.hpp>

#include <fstream>
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
		Family af("poolmem_pool_access_factor", "smart-idle's Af as the kernel computes it: chunk events (allocations, faults, sampled accesses) in the last 4 windows weighted 8,4,2,1; unit: weighted events per window (scales with window_ms), from access_factor.", MetricType::Gauge);
		Family rate("poolmem_pool_access_events_per_second", "Af as a rate: access_factor / (15 x window length), the pool's recent chunk events per second (a steady rate r gives r); independent of window_ms.", MetricType::Gauge);
		Family moved("poolmem_pool_moved_chunks_total", "Chunks migrated into (direction=in) and out of (out) the pool while their domains ran: drain, live quota and pool changes; from moved_in and moved_out.", MetricType::Counter);
		Family accesses("poolmem_pool_sampled_accesses_total", "Accesses to chunks in the pool estimated from sampled refaults (domains with tiering on or sample), from accesses; they count in the access factor.", MetricType::Counter);
		Family moved_bytes("poolmem_pool_moved_bytes_total", "Bytes of chunks migrated into or out of the pool, from moved_bytes.", MetricType::Counter);
		Family put_off("poolmem_pool_move_retries_total", "Moves of chunks off the pool put off because something held a reference for a moment, from move_retries.", MetricType::Counter);
		Family pins("poolmem_pool_move_pins_total", "Moves of chunks off the pool refused because the chunk is long-term pinned, from move_pins.", MetricType::Counter);
		Family psamples("poolmem_pool_tiering_samples_total", "Chunks in the pool unmapped to sample accesses (tiering), from samples.", MetricType::Counter);
		Family tier_moves("poolmem_pool_tier_moves_total", "Chunks moved between the pool and local tiers: direction=promotion (pool to local) and demotion (local to pool), from promotions and demotions.", MetricType::Counter);
		Family memerr("poolmem_pool_memory_errors_total", "Memory errors (poisoned pages) in the pool's memory that poolmem handled: each page is out of use for good, and the data of a domain that held it is lost (poolctl pool events names it). A device with a rising count is failing: drain it. From memory_errors.", MetricType::Counter);
		Family softoff("poolmem_pool_soft_offlines_total", "Pages of the pool soft-offlined (corrected errors past a threshold): their chunks moved elsewhere first, nothing lost, the page out of use for good. From soft_offlines.", MetricType::Counter);
		Family rebalanced("poolmem_pool_rebalanced_chunks_total", "Chunks rebalancing moved off this pool while it was contended (its access factor above the others' by rebalance_margin_pct): hot chunks of smart-idle domains, to the least-loaded pool each may use. From rebalanced_chunks.", MetricType::Counter);
		Family contended("poolmem_pool_contended", "1 while rebalancing finds the pool contended (its access factor above the other pools' mean by rebalance_margin_pct for rebalance_periods checks), else 0; always 0 with rebalancing off (rebalance_rate_mb 0). From contended.", MetricType::Gauge);
		Family discarded("poolmem_pool_discarded_bytes_total", "Bytes of the pool's chunks that domains gave back by discards (QEMU's balloon, free page reporting, virtio-mem: fallocate PUNCH_HOLE, MADV_REMOVE), since the pool was added; outlives the domains. From discarded_bytes.", MetricType::Counter);
		Family degraded("poolmem_pool_degraded", "1 once memory errors passed the pool's error policy (poolctl pool set --on-errors drain --error-threshold N[/PERIOD]): it takes no new chunks and its chunks move off, until poolctl pool undrain; else 0. From degraded.", MetricType::Gauge);
		Family draining("poolmem_pool_draining", "1 while the pool is draining (takes no new chunks; poolctl pool drain), else 0, from state.", MetricType::Gauge);
		Family zr_bytes("poolmem_pool_zero_reserve_bytes", "Memory of the pool's node held pre-zeroed for new chunks (the zero reserve), from zero_reserve_bytes; used memory to the node.", MetricType::Gauge);
		Family zr_target("poolmem_pool_zero_reserve_target_bytes", "What the zero reserve is to hold (its setting; 0 while draining), from zero_reserve_target_bytes.", MetricType::Gauge);
		Family zr_refills("poolmem_pool_zero_reserve_refills_total", "2 MiB units zeroed into the reserve in the background, from zero_reserve_refills.", MetricType::Counter);
		Family zr_taken("poolmem_pool_zero_reserve_units_total", "New chunk units by where their zeroes came from: result=hit (the reserve) or miss (zeroed on the fault path, the reserve empty); hit ratio = rate(result=hit) / rate(both); from zero_reserve_hits and zero_reserve_misses.", MetricType::Counter);
		Family mtier("poolmem_pool_memory_tier", "The kernel's memory tier of the pool's node (memory_tierN under /sys/devices/virtual/memory_tiering; a lower id is a faster tier, and demotion moves cold pages to higher ids). Absent where the kernel has no memory tiers.", MetricType::Gauge);
		Family memmap("poolmem_pool_memmap_bytes", "The memmap (struct pages, 64 bytes per 4 KiB page) of the memory kmem added to the pool's node: where=local is DRAM of the node kmem took it from, where=device the pool memory itself holds (Linux 6.8+ with memory_hotplug.memmap_on_memory and the dax device's memmap_on_memory; poolctl pool online --memmap). Absent for a pool of memory kmem did not add (boot or firmware memory).", MetricType::Gauge);
		Family window("poolmem_pool_window_events", "Allocation and fault events per access-factor window, age 0 = current, from window_counts.", MetricType::Gauge);
		std::vector<std::string> errors;
		/* the window length makes Af a rate; 0 (unknown): no rate */
		double window_s = 0;
		{
			std::ifstream f(r.sysfs / "module/poolmem/parameters/window_ms");
			unsigned long ms = 0;
			if (f >> ms)
				window_s = static_cast<double>(ms) / 1000.0;
		}
		const auto tiers = poolmem::memory_tiers(r.sysfs);
		const auto memmaps = poolmem::kmem_memmap(r.sysfs);
		for (const auto &p : poolmem::read_pools(r.sysfs, &errors)) {
			Labels l{{"pool", p.name}};
			if (auto t = tiers.find(p.node); t != tiers.end())
				mtier.add(l, t->second);
			if (auto m = memmaps.find(p.node); m != memmaps.end()) {
				memmap.add({{"pool", p.name}, {"where", "local"}}, static_cast<double>(m->second.local_bytes));
				memmap.add({{"pool", p.name}, {"where", "device"}}, static_cast<double>(m->second.device_bytes));
			}
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
			if (window_s > 0)
				rate.add(l, static_cast<double>(p.access_factor) / (15.0 * window_s));
			moved.add({{"pool", p.name}, {"direction", "in"}}, static_cast<double>(p.moved_in));
			moved.add({{"pool", p.name}, {"direction", "out"}}, static_cast<double>(p.moved_out));
			draining.add(l, p.state == "draining" ? 1 : 0);
			memerr.add(l, static_cast<double>(p.memory_errors));
			degraded.add(l, p.degraded ? 1 : 0);
			softoff.add(l, static_cast<double>(p.soft_offlines));
			discarded.add(l, static_cast<double>(p.discarded_bytes));
			rebalanced.add(l, static_cast<double>(p.rebalanced_chunks));
			contended.add(l, p.contended ? 1 : 0);
			accesses.add(l, static_cast<double>(p.accesses));
			moved_bytes.add(l, static_cast<double>(p.moved_bytes));
			put_off.add(l, static_cast<double>(p.move_retries));
			pins.add(l, static_cast<double>(p.move_pins));
			psamples.add(l, static_cast<double>(p.samples));
			tier_moves.add({{"pool", p.name}, {"direction", "promotion"}}, static_cast<double>(p.promotions));
			tier_moves.add({{"pool", p.name}, {"direction", "demotion"}}, static_cast<double>(p.demotions));
			zr_bytes.add(l, static_cast<double>(p.zero_reserve_bytes));
			zr_target.add(l, static_cast<double>(p.zero_reserve_target_bytes));
			zr_refills.add(l, static_cast<double>(p.zero_reserve_refills));
			zr_taken.add({{"pool", p.name}, {"result", "hit"}}, static_cast<double>(p.zero_reserve_hits));
			zr_taken.add({{"pool", p.name}, {"result", "miss"}}, static_cast<double>(p.zero_reserve_misses));
			for (size_t i = 0; i < p.window_counts.size(); i++)
				window.add({{"pool", p.name}, {"age", std::to_string(i)}}, static_cast<double>(p.window_counts[i]));
		}
		for (Family *f : {&info, &cap, &pinnable, &alloc, &free_, &committed, &limit, &chunks, &allocs, &faults, &failures, &af, &rate, &moved, &accesses, &moved_bytes, &put_off, &pins, &psamples, &tier_moves, &draining, &memerr, &softoff, &discarded, &rebalanced, &contended, &degraded, &zr_bytes, &zr_target, &zr_refills, &zr_taken, &mtier, &memmap, &window})
			out.push_back(f->take());
		throw_if_partial(errors);
	}
};

} // namespace

std::unique_ptr<Collector> make_pools_collector() { return std::make_unique<PoolsCollector>(); }

} // namespace exporter
