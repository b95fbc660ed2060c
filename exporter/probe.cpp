// probe: a loaded-latency probe per pool, in the manner of Intel MLC's idle
// and loaded latency: a dependent-load pointer chase over a buffer bound to
// the pool's node and larger than the last-level cache, so that every load
// misses and waits for the memory. Under load from the VMs on that pool the
// latency rises; that is the contention an operator wants to see.
//
// A background thread probes every pool for --probe.duration each
// --probe.interval (the scrape never waits for it) and keeps a histogram per
// pool; --once probes once, synchronously. The buffers come out of the
// pools' memory (--probe.size each, kept between rounds so that a round
// costs no page faults).
#include "collector.hpp"

#include <poolmem/stats.hpp>

#include <numa.h>
#include <numaif.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cmath>
#include <condition_variable>
#include <cstdio>
#include <fstream>
#include <map>
#include <mutex>
#include <random>
#include <thread>

using prometheus::MetricType;

namespace exporter {

/* upper bounds of the latency histogram, in seconds (per dependent load) */
const std::vector<double> probe_buckets = {50e-9,  75e-9,  100e-9, 150e-9, 200e-9, 300e-9,
					   500e-9, 750e-9, 1e-6,   2e-6,   5e-6};

void chase_init(void **lines, size_t n, size_t stride_words, uint64_t seed)
{
	/*
	 * Sattolo's shuffle: one cycle through every line, in an order the
	 * prefetchers can't follow.
	 */
	std::vector<size_t> order(n);
	for (size_t i = 0; i < n; i++)
		order[i] = i;
	std::mt19937_64 rng(seed);
	for (size_t i = n - 1; i > 0; i--) {
		std::uniform_int_distribution<size_t> d(0, i - 1);
		std::swap(order[i], order[d(rng)]);
	}
	for (size_t i = 0; i < n; i++)
		lines[order[i] * stride_words] = &lines[order[(i + 1) % n] * stride_words];
}

void **chase(void **p, size_t steps)
{
	for (size_t i = 0; i < steps; i++)
		p = static_cast<void **>(*p);
	return p;
}

namespace {

constexpr size_t line_bytes = 64, stride = line_bytes / sizeof(void *);

/// 2 x the last-level cache (at least 32 MiB, at most 256 MiB).
size_t default_probe_size()
{
	uint64_t llc = 0;
	for (int i = 0; i < 8; i++) {
		std::ifstream f("/sys/devices/system/cpu/cpu0/cache/index" + std::to_string(i) + "/size");
		std::string s;
		if (!(f >> s))
			continue;
		uint64_t v = std::strtoull(s.c_str(), nullptr, 10);
		if (s.back() == 'K')
			v <<= 10;
		else if (s.back() == 'M')
			v <<= 20;
		llc = std::max(llc, v);
	}
	return std::clamp<uint64_t>(2 * llc, 32ULL << 20, 256ULL << 20);
}

struct Target {
	int node = -1;
	void **buf = nullptr;
	size_t bytes = 0;
	std::vector<uint64_t> counts = std::vector<uint64_t>(probe_buckets.size() + 1);
	uint64_t samples = 0;
	double sum = 0;
	uint64_t failures = 0;
	unsigned skipped = 0; ///< rounds left out since the last failure
	std::string error;    ///< last failure, logged once
};

class Prober {
public:
	~Prober()
	{
		{
			std::lock_guard lock(mu_);
			stop_ = true;
		}
		cv_.notify_all();
		if (thread_.joinable())
			thread_.join();
		for (auto &[name, t] : targets_)
			if (t.buf)
				numa_free(t.buf, t.bytes);
	}

	/// Start the background rounds (once); with roots.probe.once, run
	/// one round now instead.
	void ensure_running(const Roots &r)
	{
		std::lock_guard lock(start_mu_);
		if (r.probe.once) {
			if (!ran_once_)
				round(r);
			ran_once_ = true;
			return;
		}
		if (!thread_.joinable())
			thread_ = std::thread([this, r] { loop(r); });
	}

	/// A copy of every target's figures, for a scrape.
	std::map<std::string, Target> snapshot()
	{
		std::lock_guard lock(mu_);
		std::map<std::string, Target> out;
		for (const auto &[name, t] : targets_) {
			Target c;
			c.node = t.node;
			c.counts = t.counts;
			c.samples = t.samples;
			c.sum = t.sum;
			c.failures = t.failures;
			out.emplace(name, std::move(c));
		}
		return out;
	}

private:
	void loop(const Roots &r)
	{
		std::unique_lock lock(mu_);
		while (!stop_) {
			lock.unlock();
			round(r);
			lock.lock();
			cv_.wait_for(lock, std::chrono::duration<double>(r.probe.interval_s), [this] { return stop_; });
		}
	}

	/* a buffer of BYTES on NODE, its lines chained; nullptr + error */
	static void **make_buffer(int node, size_t bytes, std::string &error)
	{
		/*
		 * libnuma falls back to any node when the binding fails, and
		 * the buffer would be touched in full for nothing: only a node
		 * with online memory and the room to spare is asked.
		 */
		long long free_b = 0;
		if (node < 0 || node > numa_max_node() || !numa_bitmask_isbitset(numa_all_nodes_ptr, node) ||
		    numa_node_size64(node, &free_b) <= 0) {
			error = "node " + std::to_string(node) + " has no online memory";
			return nullptr;
		}
		if (free_b < static_cast<long long>(2 * bytes)) {
			error = "node " + std::to_string(node) + " has " + std::to_string(free_b >> 20) +
				" MiB free, too little for a " + std::to_string(bytes >> 20) + " MiB probe buffer";
			return nullptr;
		}
		void *p = numa_alloc_onnode(bytes, node);
		if (!p) {
			error = "cannot allocate " + std::to_string(bytes >> 20) + " MiB on node " + std::to_string(node);
			return nullptr;
		}
		auto **lines = static_cast<void **>(p);
		const size_t n = bytes / line_bytes;
		chase_init(lines, n, stride, static_cast<uint64_t>(node) * 7919 + bytes);
		/*
		 * Walk the cycle once, checking every link before following
		 * it: memory that does not read back what was written (seen
		 * with QEMU 7.2's emulated CXL windows under TCG, which drop
		 * 8-byte stores) must fail the probe, not crash the exporter.
		 */
		void **q = lines;
		for (size_t i = 0; i < n; i++) {
			void **next = static_cast<void **>(*q);
			const auto off = reinterpret_cast<uintptr_t>(next) - reinterpret_cast<uintptr_t>(lines);
			if (reinterpret_cast<uintptr_t>(next) < reinterpret_cast<uintptr_t>(lines) || off >= bytes ||
			    off % line_bytes) {
				error = "memory on node " + std::to_string(node) + " does not read back what was written";
				numa_free(p, bytes);
				return nullptr;
			}
			q = next;
		}
		if (q != lines) {
			error = "memory on node " + std::to_string(node) + " does not read back what was written";
			numa_free(p, bytes);
			return nullptr;
		}
		/* every page now touched: check it landed where it was bound */
		int where = -1;
		if (get_mempolicy(&where, nullptr, 0, p, MPOL_F_NODE | MPOL_F_ADDR) || where != node) {
			error = "buffer for node " + std::to_string(node) + " landed on node " + std::to_string(where);
			numa_free(p, bytes);
			return nullptr;
		}
		return lines;
	}

	void round(const Roots &r)
	{
		if (numa_available() < 0)
			return;
		std::vector<poolmem::PoolStats> pools;
		try {
			pools = poolmem::read_pools(r.sysfs);
		} catch (const std::exception &) {
			return;
		}
		const size_t bytes = r.probe.size_bytes ? r.probe.size_bytes : default_probe_size();
		for (const auto &p : pools) {
			Target *t;
			{
				std::lock_guard lock(mu_);
				t = &targets_[p.name];
				if (t->node != p.node && t->buf) { /* a new pool of that name */
					numa_free(t->buf, t->bytes);
					t->buf = nullptr;
				}
				t->node = p.node;
			}
			std::string error;
			/* a pool that failed is tried again every 6th round only */
			if (!t->buf && t->failures && (++t->skipped % 6) != 0)
				continue;
			if (!t->buf) {
				void **b = make_buffer(p.node, bytes, error);
				std::lock_guard lock(mu_);
				if (!b) {
					t->failures++;
					if (error != t->error)
						std::fprintf(stderr, "poolmem-exporter: probe %s: %s\n", p.name.c_str(), error.c_str());
					t->error = error;
					continue;
				}
				t->buf = b;
				t->bytes = bytes;
				t->error.clear();
			}
			/* the chase itself, unlocked: batches of dependent loads, timed */
			std::vector<double> ns;
			const auto end = std::chrono::steady_clock::now() +
					 std::chrono::microseconds(static_cast<int64_t>(r.probe.duration_ms * 1000));
			void **q = t->buf;
			constexpr size_t batch = 512;
			while (std::chrono::steady_clock::now() < end) {
				const auto t0 = std::chrono::steady_clock::now();
				q = chase(q, batch);
				const auto t1 = std::chrono::steady_clock::now();
				ns.push_back(std::chrono::duration<double, std::nano>(t1 - t0).count() / batch);
			}
			asm volatile("" : : "r"(q) : "memory");
			std::lock_guard lock(mu_);
			for (double v : ns) {
				const double s = v * 1e-9;
				size_t b = 0;
				while (b < probe_buckets.size() && s > probe_buckets[b])
					b++;
				t->counts[b]++;
				t->samples++;
				t->sum += s;
			}
		}
		/* pools gone: their buffers go back */
		std::lock_guard lock(mu_);
		for (auto it = targets_.begin(); it != targets_.end();) {
			bool live = std::any_of(pools.begin(), pools.end(), [&](const auto &p) { return p.name == it->first; });
			if (!live) {
				if (it->second.buf)
					numa_free(it->second.buf, it->second.bytes);
				it = targets_.erase(it);
			} else {
				++it;
			}
		}
	}

	std::mutex start_mu_;
	bool ran_once_ = false;
	std::mutex mu_; ///< protects targets_' figures and stop_
	std::condition_variable cv_;
	bool stop_ = false;
	/* std::map: a Target's address stays put while the round works on it */
	std::map<std::string, Target> targets_;
	std::thread thread_;
};

class ProbeCollector : public Collector {
public:
	std::string name() const override { return "probe"; }

	void collect(const Roots &r, std::vector<prometheus::MetricFamily> &out) const override
	{
		if (!poolmem::module_sysfs_present(r.sysfs))
			throw std::runtime_error("poolmem module not loaded");
		if (numa_available() < 0)
			throw std::runtime_error("no NUMA support (libnuma: numa_available)");
		prober_.ensure_running(r);
		Family lat("poolmem_pool_probe_latency_seconds", "Latency of one dependent load (pointer chase) over a buffer on the pool's node larger than the last-level cache, probed for --probe.duration every --probe.interval: it rises with the load on the pool.", MetricType::Histogram);
		Family fail("poolmem_pool_probe_failures_total", "Probe rounds that could not run on the pool (no memory for the buffer on its node, or the buffer not on it).", MetricType::Counter);
		for (const auto &[pool, t] : prober_.snapshot()) {
			std::vector<std::pair<double, uint64_t>> cum;
			uint64_t c = 0;
			for (size_t b = 0; b < probe_buckets.size(); b++) {
				c += t.counts[b];
				cum.push_back({probe_buckets[b], c});
			}
			cum.push_back({INFINITY, t.samples});
			lat.add_histogram({{"pool", pool}}, cum, t.samples, t.sum);
			fail.add({{"pool", pool}}, static_cast<double>(t.failures));
		}
		out.push_back(lat.take());
		out.push_back(fail.take());
	}

private:
	mutable Prober prober_;
};

} // namespace

std::unique_ptr<Collector> make_probe_collector() { return std::make_unique<ProbeCollector>(); }

} // namespace exporter
