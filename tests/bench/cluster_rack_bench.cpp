// A rack's worth of hosts on the ledger (issue 49): HOSTS agents, each a
// thread running the real client code (Etcd, Ledger, Agent) with an
// in-memory ExtentMemory, against a real three-member etcd on loopback.
// 6 devices of 512 extents; each agent wants 3/4 of its share of every
// device and steps every ttl/3 as poolmem-agent does: renew, reconcile,
// publish its load per device, read the others' load. One target in five
// moves by an extent at each step (claims and releases: churn).
//
// Meanwhile a probe host claims and releases one free extent in a loop
// (the latency a new VM's claim sees under that load), and at the end of
// each point 8 threads claim and release as fast as they can for 3 s (the
// claims per second the ledger holds). etcd's revision and database size
// are read before and after (maintenance/status on the leader).
//
// usage: cluster_rack_bench [SECONDS [HOSTS...] [--compact]]   (default 30 s; 8 16 32 64)
// --compact: the members run with --auto-compaction-mode=periodic and a 10 s
// retention (a rack uses an hour: Documentation/cluster.md), to show the
// database stops growing.
// Prints one line per point, a csv: line per point for the curve, and
// "bench_goal" style lines are left to scripts/bench's caller.
#include <poolmem/agent.hpp>
#include <poolmem/cluster.hpp>
#include <poolmem/error.hpp>

#include "../unit/etcd_server.hpp"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

using namespace poolmem::cluster;
using Clock = std::chrono::steady_clock;
using namespace std::chrono_literals;

namespace {

constexpr unsigned devices = 6, extents = 512;
constexpr int64_t ttl_s = 6; /* steps every 2 s: a rack's hour is compressed threefold against ttl 10 */

struct NullMemory : poolmem::cluster::ExtentMemory {
	void online(const std::string &, unsigned) override {}
	void offline(const std::string &, unsigned) override {}
};

double percentile(std::vector<double> v, double p)
{
	if (v.empty())
		return 0;
	std::sort(v.begin(), v.end());
	return v[std::min(v.size() - 1, static_cast<size_t>(p / 100 * static_cast<double>(v.size())))];
}

struct Status {
	int64_t revision = 0, db_bytes = 0, in_use_bytes = 0;
};

Status leader_status(const poolmem_test::EtcdCluster &cl)
{
	const int lead = cl.leader();
	Etcd e(cl.url(lead >= 0 ? lead : 0), 2000);
	const auto j = e.call("maintenance/status", nlohmann::json::object());
	Status s;
	s.revision = std::stoll(j["header"].value("revision", std::string("0")));
	s.db_bytes = std::stoll(j.value("dbSize", std::string("0")));
	s.in_use_bytes = std::stoll(j.value("dbSizeInUse", std::string("0")));
	return s;
}

struct Point {
	unsigned hosts = 0;
	double claim_p50_ms = 0, claim_p99_ms = 0, claims_per_s = 0;
	double calls_per_host_s = 0, bytes_per_host_s = 0;
	double renews_per_host_s = 0, renew_bytes_per_host_s = 0, range_share = 0;
	double revisions_per_hour = 0, db_bytes_per_hour = 0, in_use_mib = 0;
	unsigned fenced = 0, step_errors = 0, probe_errors = 0, churn_claims = 0;
};

Point run(unsigned hosts, double seconds, const std::vector<std::string> &etcd_flags)
{
	poolmem_test::EtcdCluster cl(3, "/tmp", etcd_flags);
	{
		Etcd e(cl.endpoints(), 5000);
		Ledger l(e);
		for (unsigned d = 0; d < devices; d++)
			l.register_device({"dev" + std::to_string(d), uint64_t{extents} << 27, 128ULL << 20});
	}
	const unsigned want = std::max(1u, extents / hosts * 3 / 4);
	std::atomic<bool> stop{false};
	std::atomic<unsigned> fenced{0}, step_errors{0}, churn{0}, started{0};
	std::atomic<uint64_t> calls{0}, bytes{0}, renew_calls{0}, renew_bytes{0}, range_bytes{0};
	std::vector<std::thread> th;
	for (unsigned h = 0; h < hosts; h++)
		th.emplace_back([&, h] {
			const std::string name = "host" + std::to_string(h);
			Etcd e(cl.endpoints(), 2000);
			Ledger l(e);
			NullMemory m;
			std::map<std::string, unsigned> w;
			for (unsigned d = 0; d < devices; d++)
				w["dev" + std::to_string(d)] = want;
			Agent a(e, l, m, {name, ttl_s, 2, w});
			try {
				a.start();
			} catch (const poolmem::Error &x) {
				std::fprintf(stderr, "%s: start: %s\n", name.c_str(), x.what());
				step_errors++;
				return;
			}
			started++;
			const auto born = Clock::now();
			std::mt19937 rng(h);
			auto next = Clock::now();
			while (!stop) {
				if (Clock::now() >= next) {
					next = Clock::now() + std::chrono::milliseconds(ttl_s * 1000 / 3);
					/* churn: one target in five moves by one extent */
					auto t = a.want();
					for (auto &[dev, n] : t)
						if (rng() % 5 == 0) {
							n = rng() % 2 ? n + 1 : std::max(1u, n - 1);
							churn++;
						}
					a.set_want(t);
					try {
						a.step();
						for (const auto &[dev, n] : t)
							l.publish_load(name, a.lease(), dev, rng() % 1000, uint64_t{n} << 27);
						l.load();
					} catch (const poolmem::Error &x) {
						if (!step_errors++)
							std::fprintf(stderr, "%s: step: %s\n", name.c_str(), x.what());
					}
				}
				a.watchdog();
				if (a.fenced()) {
					fenced++;
					std::fprintf(stderr, "%s: fenced after %.1f s (lease %s, %u rounds without the ledger)\n",
						     name.c_str(), std::chrono::duration<double>(Clock::now() - born).count(),
						     a.lease_lost() ? "lost" : "held", a.unreachable_rounds());
					break;
				}
				std::this_thread::sleep_for(100ms);
			}
			calls += e.calls();
			bytes += e.bytes();
			for (const auto &[path, cb] : e.by_path()) {
				if (path == "lease/keepalive") {
					renew_calls += cb.first;
					renew_bytes += cb.second;
				} else if (path == "kv/range") {
					range_bytes += cb.second;
				}
			}
			try {
				a.stop();
			} catch (const poolmem::Error &) {
			}
		});
	while (started + step_errors < hosts)
		std::this_thread::sleep_for(100ms);
	const Status s0 = leader_status(cl);
	const auto t0 = Clock::now();
	/* the probe: a new claim's latency under the agents' load */
	std::vector<double> lat;
	unsigned probe_errors = 0;
	{
		Etcd e(cl.endpoints(), 5000);
		Ledger l(e);
		const int64_t lease = l.join("probe", 60);
		while (Clock::now() - t0 < std::chrono::duration<double>(seconds)) {
			const auto c0 = Clock::now();
			try {
				const auto got = l.claim_free("probe", lease, "dev" + std::to_string(lat.size() % devices), 1);
				lat.push_back(std::chrono::duration<double, std::milli>(Clock::now() - c0).count());
				for (const auto &x : l.held("probe", lease))
					l.release(x);
				(void)got;
			} catch (const poolmem::Error &x) {
				probe_errors++;
				std::this_thread::sleep_for(50ms);
			}
			e.call("lease/keepalive", {{"ID", std::to_string(lease)}});
			std::this_thread::sleep_for(100ms);
		}
		l.leave("probe", lease);
	}
	const double secs = std::chrono::duration<double>(Clock::now() - t0).count();
	const Status s1 = leader_status(cl);
	/* the ledger's claim throughput, under the same load: 8 clients for 3 s */
	std::atomic<unsigned> burst{0};
	{
		std::vector<std::thread> b;
		const auto b0 = Clock::now();
		for (unsigned k = 0; k < 8; k++)
			b.emplace_back([&, k] {
				Etcd e(cl.endpoints(), 5000);
				Ledger l(e);
				const std::string name = "burst" + std::to_string(k);
				const int64_t lease = l.join(name, 60);
				while (Clock::now() - b0 < 3s) {
					try {
						l.claim_free(name, lease, "dev" + std::to_string(k % devices), 1);
						for (const auto &x : l.held(name, lease))
							l.release(x);
						burst++;
					} catch (const poolmem::Error &) {
					}
				}
				l.leave(name, lease);
			});
		for (auto &t : b)
			t.join();
	}
	stop = true;
	for (auto &t : th)
		t.join();
	Point p;
	p.hosts = hosts;
	p.claim_p50_ms = percentile(lat, 50);
	p.claim_p99_ms = percentile(lat, 99);
	p.claims_per_s = burst / 3.0;
	/* the agents' calls over their whole run, start to stop: per host per second of the probe phase is close */
	p.calls_per_host_s = static_cast<double>(calls) / hosts / (secs + 3);
	p.bytes_per_host_s = static_cast<double>(bytes) / hosts / (secs + 3);
	p.renews_per_host_s = static_cast<double>(renew_calls) / hosts / (secs + 3);
	p.renew_bytes_per_host_s = static_cast<double>(renew_bytes) / hosts / (secs + 3);
	p.range_share = bytes ? static_cast<double>(range_bytes) / static_cast<double>(bytes) : 0;
	p.revisions_per_hour = static_cast<double>(s1.revision - s0.revision) / secs * 3600;
	/*
	 * The history kept, as bbolt's pages in use: the file itself grows in
	 * steps (it doubles, up to 1 GiB at a time), so its size over a short
	 * run says little, and compaction frees pages without shrinking it.
	 */
	p.db_bytes_per_hour = static_cast<double>(s1.in_use_bytes - s0.in_use_bytes) / secs * 3600;
	p.in_use_mib = static_cast<double>(s1.in_use_bytes) / (1 << 20);
	p.fenced = fenced;
	p.step_errors = step_errors;
	p.probe_errors = probe_errors;
	p.churn_claims = churn;
	return p;
}

} // namespace

int main(int argc, char **argv)
{
	const double seconds = argc > 1 ? std::atof(argv[1]) : 30;
	std::vector<unsigned> points;
	/* --compact: the members compact their history as Documentation/cluster.md says a rack should */
	std::vector<std::string> flags;
	for (int i = 2; i < argc; i++) {
		if (std::string(argv[i]) == "--compact")
			flags = {"--auto-compaction-mode=periodic", "--auto-compaction-retention=10s"};
		else
			points.push_back(static_cast<unsigned>(std::atoi(argv[i])));
	}
	if (points.empty())
		points = {8, 16, 32, 64};
	std::printf("csv:cluster-rack:hosts,claim_p50_ms,claim_p99_ms,claims_per_s,calls_per_host_s,bytes_per_host_s,"
		    "revisions_per_hour,in_use_bytes_per_hour,fenced,step_errors,probe_errors\n");
	std::fflush(stdout); /* before etcd's processes fork from this one */
	for (unsigned h : points) {
		const Point p = run(h, seconds, flags);
		std::printf("bench: cluster-rack: %u agents (3 etcd members, %u devices x %u extents, ttl %ld s, "
			    "%.0f s%s): a claim p50 %.1f ms, p99 %.1f ms; the ledger holds %.0f claims/s (8 clients); "
			    "per host %.2f calls/s, %.0f bytes/s (renewals %.2f/s, %.0f bytes/s; reads %.0f%% of the bytes); etcd +%.0f revisions/h, its database's pages in use "
			    "+%.1f MiB/h (%.1f MiB at the end); %u fenced, %u step errors, %u probe errors\n",
			    h, devices, extents, static_cast<long>(ttl_s), seconds,
			    flags.empty() ? ", no compaction" : ", periodic compaction of what is 10 s old", p.claim_p50_ms, p.claim_p99_ms,
			    p.claims_per_s, p.calls_per_host_s, p.bytes_per_host_s, p.renews_per_host_s,
			    p.renew_bytes_per_host_s, p.range_share * 100, p.revisions_per_hour,
			    p.db_bytes_per_hour / (1 << 20), p.in_use_mib, p.fenced, p.step_errors, p.probe_errors);
		std::printf("csv:cluster-rack:%u,%.2f,%.2f,%.0f,%.3f,%.0f,%.0f,%.0f,%u,%u,%u\n", h, p.claim_p50_ms,
			    p.claim_p99_ms, p.claims_per_s, p.calls_per_host_s, p.bytes_per_host_s,
			    p.revisions_per_hour, p.db_bytes_per_hour, p.fenced, p.step_errors, p.probe_errors);
		std::fflush(stdout);
	}
	return 0;
}
