// Claim throughput of the cluster ledger (issue 15): HOSTS simulated hosts
// x DEVICES shared devices against one etcd on loopback, the agents'
// protocol without QEMU: each host joins (a lease), then claims its own
// extent of every device, one transaction each, from CLIENTS connections.
// Then the same hosts race for the extents of one device (claim_free).
// usage: cluster_bench [HOSTS [DEVICES [CLIENTS]]]
#include <poolmem/cluster.hpp>
#include <poolmem/error.hpp>

#include "../unit/etcd_server.hpp"

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

using namespace poolmem::cluster;

int main(int argc, char **argv)
{
	const unsigned hosts = argc > 1 ? std::atoi(argv[1]) : 1000, devices = argc > 2 ? std::atoi(argv[2]) : 64,
		       clients = argc > 3 ? std::atoi(argv[3]) : 16;
	poolmem_test::EtcdServer srv;
	{
		Etcd e(srv.url());
		Ledger l(e);
		for (unsigned d = 0; d < devices; d++)
			l.register_device({"dev" + std::to_string(d), uint64_t{hosts} << 27, 128ULL << 20});
		l.register_device({"shared", uint64_t{hosts} << 27, 128ULL << 20});
	}
	std::atomic<unsigned> next{0}, failures{0};
	std::atomic<uint64_t> claims{0};
	auto t0 = std::chrono::steady_clock::now();
	std::vector<std::thread> th;
	std::vector<int64_t> leases(hosts);
	for (unsigned c = 0; c < clients; c++)
		th.emplace_back([&] {
			Etcd e(srv.url(), 30000);
			Ledger l(e);
			for (unsigned h; (h = next++) < hosts;) {
				const std::string name = "host" + std::to_string(h);
				leases[h] = l.join(name, 600);
				for (unsigned d = 0; d < devices; d++) {
					try {
						l.claim(name, leases[h], "dev" + std::to_string(d), {h});
						claims++;
					} catch (const poolmem::Error &x) {
						std::fprintf(stderr, "%s\n", x.what());
						failures++;
					}
				}
			}
		});
	for (auto &t : th)
		t.join();
	const double t1 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	std::printf("bench: cluster: %u hosts x %u devices: %lu claims (one transaction each) in %.2f s from %u "
		    "clients = %.0f claims/s, %u failed\n",
		    hosts, devices, static_cast<unsigned long>(claims.load()), t1, clients, claims / t1, failures.load());
	/* contended: every host takes one free extent of the same device */
	next = 0;
	std::atomic<uint64_t> got{0}, tries{0};
	th.clear();
	t0 = std::chrono::steady_clock::now();
	for (unsigned c = 0; c < clients; c++)
		th.emplace_back([&] {
			Etcd e(srv.url(), 30000);
			Ledger l(e);
			for (unsigned h; (h = next++) < hosts;) {
				try {
					l.claim_free("host" + std::to_string(h), leases[h], "shared", 1);
					got++;
				} catch (const poolmem::Error &x) {
					std::fprintf(stderr, "%s\n", x.what());
					failures++;
				}
			}
		});
	for (auto &t : th)
		t.join();
	const double t2 = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
	std::printf("bench: cluster: %u hosts racing for one device's extents: %lu claims in %.2f s = %.0f claims/s\n",
		    hosts, static_cast<unsigned long>(got.load()), t2, got / t2);
	return failures ? 1 : 0;
}
