// pmcluster: the two-guest cluster rig's coordination (tests/guest/
// cluster-node.sh, scripts/rig/cluster2): keys under /rig/ in the same etcd
// the ledger lives in, through poolmem's own etcd client.
//
//   pmcluster URL put KEY VALUE
//   pmcluster URL get KEY                  prints the value; exit 1 if absent
//   pmcluster URL wait KEY SECONDS         until KEY exists; prints its value
//   pmcluster URL barrier DIR ME N SECONDS put DIR/ME, then wait until DIR
//                                          has N keys
// Exit 1 on a timeout, 2 on usage; etcd briefly unreachable is retried.
#include <poolmem/cluster.hpp>
#include <poolmem/error.hpp>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

using poolmem::cluster::Etcd;
using poolmem::cluster::Txn;

namespace {

using Clock = std::chrono::steady_clock;

template <class F> auto retry(Clock::time_point until, F f) -> decltype(f())
{
	for (;;) {
		try {
			return f();
		} catch (const poolmem::Error &e) {
			if (Clock::now() >= until)
				throw;
			std::this_thread::sleep_for(std::chrono::milliseconds(200));
		}
	}
}

void put(Etcd &e, const std::string &k, const std::string &v)
{
	Txn t;
	t.put(k, v);
	e.call("kv/txn", {{"compare", t.compare}, {"success", t.success}, {"failure", t.failure}});
}

} // namespace

int main(int argc, char **argv)
{
	if (argc < 4) {
		std::fprintf(stderr, "usage: pmcluster URL put|get|wait|barrier ...\n");
		return 2;
	}
	const std::string cmd = argv[2];
	try {
		Etcd e(argv[1], 2000);
		if (cmd == "put" && argc == 5) {
			retry(Clock::now() + std::chrono::seconds(30), [&] {
				put(e, argv[3], argv[4]);
				return 0;
			});
			return 0;
		}
		if (cmd == "get" && argc == 4) {
			const auto kv = retry(Clock::now() + std::chrono::seconds(30), [&] { return e.range(argv[3]); });
			if (kv.empty())
				return 1;
			std::printf("%s\n", kv[0].value.c_str());
			return 0;
		}
		const bool barrier = cmd == "barrier" && argc == 7;
		if ((cmd == "wait" && argc == 5) || barrier) {
			const std::string key = barrier ? std::string(argv[3]) + "/" : argv[3];
			const size_t n = barrier ? std::strtoul(argv[5], nullptr, 10) : 1;
			const auto until = Clock::now() + std::chrono::seconds(std::atoi(argv[barrier ? 6 : 4]));
			if (barrier)
				retry(until, [&] {
					put(e, key + argv[4], "1");
					return 0;
				});
			for (;;) {
				const auto kv = retry(until, [&] { return e.range(key, barrier); });
				if (kv.size() >= n) {
					if (!barrier)
						std::printf("%s\n", kv[0].value.c_str());
					return 0;
				}
				if (Clock::now() >= until) {
					std::fprintf(stderr, "pmcluster: %s: %zu of %zu after the timeout\n", key.c_str(),
						     kv.size(), n);
					return 1;
				}
				std::this_thread::sleep_for(std::chrono::milliseconds(50));
			}
		}
	} catch (const std::exception &ex) {
		std::fprintf(stderr, "pmcluster: %s\n", ex.what());
		return 1;
	}
	std::fprintf(stderr, "usage: pmcluster URL put|get|wait|barrier ...\n");
	return 2;
}
