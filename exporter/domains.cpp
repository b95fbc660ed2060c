// domains: per-VM tier usage and quota, faults, denials, discards and the
// fault latency histogram, from /proc/poolmem/domains (and
// domain_histograms), or /sys/class/poolmem/<domain> with an older module.
#include "collector.hpp"

#include <poolmem/stats.hpp>

#include <stdexcept>

#include <cmath>

using prometheus::MetricType;

namespace exporter {

namespace {

class DomainsCollector : public Collector {
public:
	std::string name() const override { return "domains"; }

	void collect(const Roots &r, std::vector<prometheus::MetricFamily> &out) const override
	{
		if (!poolmem::module_sysfs_present(r.sysfs))
			throw std::runtime_error("poolmem module not loaded");
		Family info("poolmem_domain_info", "Always 1: the domain's profile (empty for a named domain), its file under the poolmem mount, tier policy, pool selection, home node and whether it is pinnable.", MetricType::Gauge);
		Family chunk("poolmem_domain_chunk_bytes", "The domain's chunk size: poolmem_domain_pool_chunks times this is bytes, from chunk_bytes.", MetricType::Gauge);
		Family size("poolmem_domain_size_bytes", "Size of the domain's file, from size_bytes.", MetricType::Gauge);
		Family retired("poolmem_domain_retired_chunks", "Chunks discarded while still referenced elsewhere (pipe, io_uring, O_DIRECT), still charged, from retired_chunks.", MetricType::Gauge);
		Family quota("poolmem_domain_quota_bytes", "Hard quota of the domain per tier, from local_quota_bytes and pool_quota_bytes.", MetricType::Gauge);
		Family usage("poolmem_domain_usage_bytes", "Bytes of the domain per tier, from local_bytes and pool_bytes.", MetricType::Gauge);
		Family chunks("poolmem_domain_pool_chunks", "Chunks of the domain per pool (pools holding none are left out), from pool_chunks.", MetricType::Gauge);
		Family faults("poolmem_domain_faults_total", "Faults on the domain's mappings handled by poolmem, from faults.", MetricType::Counter);
		Family sigbus("poolmem_domain_sigbus_total", "Faults refused with SIGBUS: no memory left within quota, from sigbus.", MetricType::Counter);
		Family discards("poolmem_domain_discards_total", "Chunks returned to their pools by discard, from discards.", MetricType::Counter);
		Family moves("poolmem_domain_moves_total", "Chunks of the domain migrated to another node while it ran (drain, live changes), from moves.", MetricType::Counter);
		Family move_retries("poolmem_domain_move_retries_total", "Chunk migrations put off because something held a reference for a moment (O_DIRECT, KVM or vhost get_user_pages), from move_retries.", MetricType::Counter);
		Family move_pins("poolmem_domain_move_pins_total", "Chunk migrations refused because the chunk is long-term pinned (VFIO, RDMA, io_uring fixed buffers), from move_pins.", MetricType::Counter);
		Family revoked("poolmem_domain_revoked_chunks_total", "Chunks the domain lost because the memory under them was revoked (a pool whose claim on a shared device may be gone) and went offline: touching them is a memory error (SIGBUS BUS_MCEERR_AR) until discarded. From revoked_chunks.", MetricType::Counter);
		Family memerr("poolmem_domain_memory_errors_total", "Pages of the domain lost to memory errors (a poisoned page: unmapped, its data gone; touching it is a memory error, SIGBUS BUS_MCEERR_AR, until its chunk is discarded). poolctl pool events lists them with their offsets. From memory_errors.", MetricType::Counter);
		Family tiering("poolmem_domain_tiering_info", "Always 1: the domain's tiering mode (off, sample, on), from tiering.", MetricType::Gauge);
		Family samples("poolmem_domain_tiering_samples_total", "Chunks unmapped to sample accesses (tiering), from samples.", MetricType::Counter);
		Family hits("poolmem_domain_tiering_sample_hits_total", "Sampled chunks faulted in again (accessed), from sample_hits.", MetricType::Counter);
		Family pool_hits("poolmem_domain_tiering_sample_hits_pool_total", "Of the sampled chunks faulted in again, those in the pool tier, from sample_hits_pool: its rate over sample_hits' is the share of the VM's accesses served from pool memory.", MetricType::Counter);
		Family rebalanced("poolmem_domain_rebalanced_chunks_total", "The domain's hot chunks rebalancing moved off contended pools, from rebalanced_chunks.", MetricType::Counter);
		Family tmoves("poolmem_domain_tiering_moves_total", "Chunks tiering moved: direction=promotion (hot, pool to local) and demotion (cold, local to pool); from promotions and demotions.", MetricType::Counter);
		Family scan("poolmem_domain_tiering_scan_seconds_total", "CPU time of the domain's tiering worker, from tiering_scan_ns.", MetricType::Counter);
		Family heat("poolmem_domain_chunks_by_heat", "Chunks the last samples found hot and cold (heat=hot|cold), from heat.", MetricType::Gauge);
		Family lat("poolmem_domain_fault_latency_seconds", "Time poolmem took to handle a fault (allocate and map a chunk), from fault_latency_histogram (log2 ns buckets).", MetricType::Histogram);
		Family wsize("poolmem_domain_window_bytes", "Size of each zNUMA window of the domain (window=local|pool; files <name>.local and <name>.pool, the guest's NUMA nodes 0 and 1), from windows. Only znuma domains.", MetricType::Gauge);
		Family wtouched("poolmem_domain_window_touched_bytes", "Bytes of each zNUMA window the guest has touched (poolmem allocates a chunk at its first touch; discards give it back): the pool window's is Pond's measure of how much far memory a VM really uses; its rate is the first-touch rate. From local_bytes and pool_bytes of znuma domains.", MetricType::Gauge);
		std::vector<std::string> errors;
		for (const auto &d : reader_.read(r.sysfs, &errors, r.domain_histograms, r.procfs)) {
			Labels l{{"domain", d.name}};
			info.add({{"domain", d.name}, {"profile", d.profile}, {"file", d.file}, {"tier_policy", d.tier_policy},
				  {"pool_select", d.pool_select}, {"home_node", std::to_string(d.home_node)},
				  {"pinnable", d.pinnable ? "true" : "false"}},
				 1);
			chunk.add(l, static_cast<double>(d.chunk_bytes));
			size.add(l, static_cast<double>(d.size_bytes));
			retired.add(l, static_cast<double>(d.retired_chunks));
			quota.add({{"domain", d.name}, {"tier", "local"}}, static_cast<double>(d.local_quota_bytes));
			quota.add({{"domain", d.name}, {"tier", "pool"}}, static_cast<double>(d.pool_quota_bytes));
			usage.add({{"domain", d.name}, {"tier", "local"}}, static_cast<double>(d.local_bytes));
			usage.add({{"domain", d.name}, {"tier", "pool"}}, static_cast<double>(d.pool_bytes));
			/* only pools that hold chunks: domains x pools would be a
			 * cardinality problem on large hosts */
			for (const auto &[pool, n] : d.pool_chunks)
				if (n)
					chunks.add({{"domain", d.name}, {"pool", pool}}, static_cast<double>(n));
			faults.add(l, static_cast<double>(d.faults));
			sigbus.add(l, static_cast<double>(d.sigbus));
			discards.add(l, static_cast<double>(d.discards));
			moves.add(l, static_cast<double>(d.moves));
			move_retries.add(l, static_cast<double>(d.move_retries));
			move_pins.add(l, static_cast<double>(d.move_pins));
			revoked.add(l, static_cast<double>(d.revoked_chunks));
			memerr.add(l, static_cast<double>(d.memory_errors));
			tiering.add({{"domain", d.name}, {"mode", d.tiering}}, 1);
			samples.add(l, static_cast<double>(d.samples));
			hits.add(l, static_cast<double>(d.sample_hits));
			pool_hits.add(l, static_cast<double>(d.sample_hits_pool));
			rebalanced.add(l, static_cast<double>(d.rebalanced_chunks));
			tmoves.add({{"domain", d.name}, {"direction", "promotion"}}, static_cast<double>(d.promotions));
			tmoves.add({{"domain", d.name}, {"direction", "demotion"}}, static_cast<double>(d.demotions));
			scan.add(l, static_cast<double>(d.tiering_scan_ns) * 1e-9);
			heat.add({{"domain", d.name}, {"heat", "hot"}}, static_cast<double>(d.hot_chunks));
			heat.add({{"domain", d.name}, {"heat", "cold"}}, static_cast<double>(d.cold_chunks));
			for (const auto &w : d.windows) {
				wsize.add({{"domain", d.name}, {"window", w.name}}, static_cast<double>(w.size));
				wtouched.add({{"domain", d.name}, {"window", w.name}},
					     static_cast<double>(w.name == "local" ? d.local_bytes : d.pool_bytes));
			}
			/*
			 * Kernel bucket i holds [2^i, 2^(i+1)) ns, so the cumulative
			 * count up to 2^(i+1) ns is exact. Exported: every 4x from
			 * ~1 us (2^10 ns) to ~17 s (2^34 ns), then +Inf: 14 series
			 * per domain instead of 40.
			 */
			if (!r.domain_histograms)
				continue;
			std::vector<std::pair<double, uint64_t>> cum;
			uint64_t total = 0;
			const auto &h = d.fault_latency_histogram;
			for (size_t i = 0; i < h.size(); i++) {
				total += h[i];
				const size_t le_log2 = i + 1;
				if (le_log2 >= 10 && le_log2 <= 34 && le_log2 % 2 == 0)
					cum.push_back({static_cast<double>(1ULL << le_log2) / 1e9, total});
			}
			cum.push_back({INFINITY, total});
			lat.add_histogram(l, cum, total, static_cast<double>(d.fault_latency_sum_ns) * 1e-9);
		}
		for (Family *f : {&info, &size, &chunk, &quota, &usage, &chunks, &retired, &faults, &sigbus, &discards, &moves, &move_retries, &move_pins, &revoked, &memerr, &tiering, &samples, &hits, &pool_hits, &rebalanced, &tmoves, &scan, &heat, &lat, &wsize, &wtouched})
			if (f != &lat || r.domain_histograms)
				out.push_back(f->take());
		throw_if_partial(errors);
	}

private:
	/* keeps what a domain never changes from one scrape to the next */
	mutable poolmem::DomainReader reader_;
};

} // namespace

std::unique_ptr<Collector> make_domains_collector() { return std::make_unique<DomainsCollector>(); }

} // namespace exporter
