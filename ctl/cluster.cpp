// poolctl cluster: the ledger of shared devices on etcd (who may online
// which extent), its status, and confirmed fences.
#include "commands.hpp"
#include "table.hpp"

#include <poolmem/cluster.hpp>
#include <poolmem/error.hpp>
#include <poolmem/size.hpp>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdlib>
#include <map>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace poolctl {

namespace {

struct ClusterOptions {
	std::string etcd, prefix = "/poolmem";
	poolmem::cluster::Etcd::Tls tls; ///< --cacert, --cert, --key (as etcdctl)
};

struct StatusOptions {
	bool json = false;
};

struct RegisterOptions {
	std::string device, size, extent = "128M";
	bool check = false, json = false;
};

struct ClaimOptions {
	std::string device, host, index;
	unsigned count = 0;
	int64_t ttl = 10;
	double hold = 0;
};

struct FenceOptions {
	std::string host, by;
	bool check = false, json = false;
};

std::string endpoint(const ClusterOptions &c)
{
	if (!c.etcd.empty())
		return c.etcd;
	const char *e = std::getenv("POOLMEM_ETCD");
	return e && *e ? e : "http://127.0.0.1:2379";
}

void run_status(const GlobalOptions &g, const ClusterOptions &c, const StatusOptions &o)
{
	poolmem::cluster::Etcd etcd(endpoint(c));
	etcd.set_tls(c.tls);
	poolmem::cluster::Ledger ledger(etcd, c.prefix);
	const auto s = ledger.status();
	const auto load = ledger.load();
	std::map<std::string, std::pair<unsigned, unsigned>> by_dev; // claimed, fencing
	for (const auto &e : s.extents)
		(e.live ? by_dev[e.device].first : by_dev[e.device].second)++;
	if (o.json) {
		nlohmann::json devs = nlohmann::json::array(), ext = nlohmann::json::array(), hosts = nlohmann::json::array();
		for (const auto &d : s.devices) {
			const auto [cl, fe] = by_dev[d.name];
			devs.push_back({{"name", d.name},
					{"size_bytes", d.size_bytes},
					{"extent_bytes", d.extent_bytes},
					{"extents", d.extents()},
					{"claimed", cl},
					{"fencing", fe},
					{"free", d.extents() - cl - fe}});
		}
		for (const auto &e : s.extents)
			ext.push_back({{"device", e.device},
				       {"index", e.index},
				       {"host", e.host},
				       {"state", e.live ? "claimed" : "fencing"},
				       {"lease", std::to_string(e.lease)},
				       {"epoch", e.epoch}});
		for (const auto &h : s.hosts)
			hosts.push_back({{"name", h.name}, {"lease", std::to_string(h.lease)}, {"ttl_seconds", h.ttl}});
		nlohmann::json ld = nlohmann::json::array();
		for (const auto &l : load)
			ld.push_back({{"device", l.device}, {"hosts", l.hosts}, {"access_factor", l.af},
				      {"allocated_bytes", l.allocated_bytes}});
		print_json(g, {{"etcd", endpoint(c)},
			       {"revision", s.revision},
			       {"devices", devs},
			       {"extents", ext},
			       {"hosts", hosts},
			       {"load", ld}});
		return;
	}
	std::printf("ledger %s%s at revision %ld: %zu devices, %zu hosts alive\n", endpoint(c).c_str(), c.prefix.c_str(),
		    static_cast<long>(s.revision), s.devices.size(), s.hosts.size());
	Table t({"DEVICE", ">SIZE", ">EXTENT", ">FREE", ">CLAIMED", ">FENCING"});
	for (const auto &d : s.devices) {
		const auto [cl, fe] = by_dev[d.name];
		t.row({d.name, poolmem::format_size(d.size_bytes), poolmem::format_size(d.extent_bytes),
		       std::to_string(d.extents() - cl - fe), std::to_string(cl), std::to_string(fe)});
	}
	t.print();
	std::map<std::string, std::map<std::string, std::vector<unsigned>>> owners; // host -> device -> indexes
	std::map<std::string, bool> fencing;
	for (const auto &e : s.extents) {
		owners[e.host][e.device].push_back(e.index);
		if (!e.live)
			fencing[e.host] = true;
	}
	if (!s.hosts.empty() || !owners.empty()) {
		Table h({"HOST", "STATE", ">LEASE-TTL", "EXTENTS"});
		std::map<std::string, int64_t> ttl;
		for (const auto &x : s.hosts)
			ttl[x.name] = x.ttl;
		for (const auto &x : s.hosts)
			owners[x.name];
		for (const auto &[host, devs] : owners) {
			std::string list;
			for (const auto &[dev, idx] : devs)
				list += (list.empty() ? "" : " ") + dev + ":" + std::to_string(idx.size());
			const bool alive = ttl.count(host);
			h.row({host, alive && !fencing[host] ? "alive" : alive ? "alive, old claims fencing" : "down: fencing",
			       alive ? std::to_string(ttl[host]) + " s" : "-", list.empty() ? "-" : list});
		}
		h.print();
	}
	if (!load.empty()) {
		Table t2({"DEVICE", ">HOSTS", ">AF", ">ALLOCATED"});
		for (const auto &l : load)
			t2.row({l.device, std::to_string(l.hosts), std::to_string(l.af), poolmem::format_size(l.allocated_bytes)});
		t2.print();
	}
}

void run_register(const GlobalOptions &g, const ClusterOptions &c, const RegisterOptions &o)
{
	poolmem::cluster::Etcd etcd(endpoint(c));
	etcd.set_tls(c.tls);
	poolmem::cluster::Ledger ledger(etcd, c.prefix);
	poolmem::cluster::Device d{o.device, size_value("--size", o.size), size_value("--extent", o.extent)};
	if (!d.extent_bytes || d.size_bytes % d.extent_bytes)
		throw UsageError("--size " + o.size + ": not a whole number of --extent " + o.extent + " extents");
	const bool fresh = ledger.register_device(d, o.check);
	const std::string what = std::to_string(d.extents()) + " extents of " + poolmem::format_size(d.extent_bytes);
	report(g, o.json,
	       d.name + (o.check ? fresh ? ": would be registered, " : ": registered already, the same: "
				 : fresh ? ": registered, " : ": registered already, the same: ") + what,
	       {{"device", d.name}, {"registered", !o.check}, {"new", fresh}, {"size_bytes", d.size_bytes},
		{"extent_bytes", d.extent_bytes}, {"extents", d.extents()}});
}

std::atomic<bool> stop_claim{false};

void run_claim(const ClusterOptions &c, const ClaimOptions &o)
{
	if ((o.count > 0) == !o.index.empty())
		throw UsageError("claim: give --count N or --index I,J,... (one of them)");
	if (o.ttl < 2)
		throw UsageError("--ttl: at least 2 seconds");
	std::vector<unsigned> idx;
	std::stringstream ss(o.index);
	try {
		for (std::string x; std::getline(ss, x, ',');)
			idx.push_back(static_cast<unsigned>(std::stoul(x)));
	} catch (const std::exception &) {
		throw UsageError("--index " + o.index + ": extent numbers, comma-separated");
	}
	const size_t n = o.count ? o.count : idx.size();
	if (n > poolmem::cluster::Ledger::max_claim)
		throw UsageError("claim: at most " + std::to_string(poolmem::cluster::Ledger::max_claim) +
				 " extents at once (one etcd transaction), not " + std::to_string(n));
	poolmem::cluster::Etcd etcd(endpoint(c));
	etcd.set_tls(c.tls);
	poolmem::cluster::Ledger ledger(etcd, c.prefix);
	const int64_t lease = ledger.join(o.host, o.ttl);
	try {
		if (o.count)
			idx = ledger.claim_free(o.host, lease, o.device, o.count);
		else
			ledger.claim(o.host, lease, o.device, idx);
	} catch (...) {
		ledger.leave(o.host, lease);
		throw;
	}
	std::string list;
	for (unsigned i : idx)
		list += (list.empty() ? "" : ",") + std::to_string(i);
	std::printf("%s: %s claimed extents %s of %s (lease %ld)\n", o.host.c_str(), o.host.c_str(), list.c_str(),
		    o.device.c_str(), static_cast<long>(lease));
	std::fflush(stdout);
	/* hold them: renew the lease a third of its TTL apart, until --hold ends or a signal */
	std::signal(SIGINT, [](int) { stop_claim = true; });
	std::signal(SIGTERM, [](int) { stop_claim = true; });
	const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(o.hold > 0 ? o.hold : 1e9);
	auto next = std::chrono::steady_clock::now();
	while (!stop_claim && std::chrono::steady_clock::now() < end) {
		if (std::chrono::steady_clock::now() >= next) {
			if (etcd.lease_keepalive(lease) <= 0)
				throw poolmem::Error::plain(o.host, "lost its lease: its extents are fencing", ESTALE);
			next = std::chrono::steady_clock::now() + std::chrono::seconds(o.ttl) / 3;
		}
		std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	for (const auto &e : ledger.held(o.host, lease))
		ledger.release(e);
	ledger.leave(o.host, lease);
	std::printf("%s: released %zu extents and left\n", o.host.c_str(), idx.size());
}

void run_fence(const GlobalOptions &g, const ClusterOptions &c, const FenceOptions &o)
{
	poolmem::cluster::Etcd etcd(endpoint(c));
	etcd.set_tls(c.tls);
	poolmem::cluster::Ledger ledger(etcd, c.prefix);
	std::string by = o.by;
	if (by.empty()) {
		char h[256] = "";
		gethostname(h, sizeof(h) - 1);
		by = std::string("operator on ") + h;
	}
	if (o.check) {
		/* fence()'s own rule: the host is down (no lease holds hosts/<host>) */
		if (const int64_t lease = ledger.host_lease(o.host))
			throw poolmem::Error::plain(o.host, "is alive (lease " + std::to_string(lease) +
								  " holds the ledger): fence only a host that is down and cut off",
						    EBUSY);
		size_t n = 0;
		for (const auto &e : ledger.status().extents)
			n += e.host == o.host;
		report(g, o.json, o.host + ": fence would go ahead; " + std::to_string(n) + " extents would be free again",
		       {{"host", o.host}, {"fenced", false}, {"by", by}, {"extents", n}});
		return;
	}
	const auto gone = ledger.fence(o.host, by);
	report(g, o.json, o.host + ": fenced by " + by + "; " + std::to_string(gone.size()) + " extents are free again",
	       {{"host", o.host}, {"fenced", true}, {"by", by}, {"extents", gone.size()}});
}

} // namespace

void setup_cluster(CLI::App &app, const GlobalOptions &g)
{
	auto c = std::make_shared<ClusterOptions>();
	auto *cl = app.add_subcommand("cluster", "the ledger of shared devices on etcd: who may online which extent");
	cl->require_subcommand(1);
	cl->add_option("--etcd", c->etcd,
		       "etcd endpoints: one member's URL or several, comma-separated, as etcdctl --endpoints; a call "
		       "goes on to the next member when one does not answer (default $POOLMEM_ETCD or "
		       "http://127.0.0.1:2379)");
	cl->add_option("--cacert", c->tls.cacert, "with an https:// endpoint: the CA that signed etcd's certificate")
		->check(CLI::ExistingFile);
	cl->add_option("--cert", c->tls.cert, "this client's certificate, for an etcd that requires one")
		->check(CLI::ExistingFile);
	cl->add_option("--key", c->tls.key, "the key of --cert")->check(CLI::ExistingFile);
	cl->add_option("--prefix", c->prefix, "key prefix of the ledger (default /poolmem)");

	auto s = std::make_shared<StatusOptions>();
	auto *st = cl->add_subcommand("status", "devices, extents by state and owner, hosts and their leases");
	st->add_flag("--json", s->json, "print JSON");
	st->callback([&g, c, s] { run_status(g, *c, *s); });

	auto r = std::make_shared<RegisterOptions>();
	auto *reg = cl->add_subcommand("register", "register a shared device once, in extents of whole memory blocks");
	reg->add_option("device", r->device, "the device's cluster-wide name (e.g. its serial)")->required();
	reg->add_option("--size", r->size, "its capacity")->required();
	reg->add_option("--extent", r->extent, "extent size, a multiple of the memory block size (default 128M)");
	add_check_flag(reg, r->check);
	add_json_flag(reg, r->json, "device, registered, new (false: the same definition was there), size_bytes, "
				    "extent_bytes, extents");
	reg->callback([&g, c, r] { run_register(g, *c, *r); });

	auto k = std::make_shared<ClaimOptions>();
	auto *claim = cl->add_subcommand("claim", "join as a host, claim extents atomically, hold them, release on exit");
	claim->add_option("device", k->device, "registered device")->required();
	claim->add_option("--host", k->host, "this host's name in the ledger")->required();
	claim->add_option("--count", k->count, "claim this many free extents");
	claim->add_option("--index", k->index, "claim these extents, e.g. 0,1,2");
	claim->add_option("--ttl", k->ttl, "lease TTL in seconds (default 10)");
	claim->add_option("--hold", k->hold, "seconds to hold them (default: until SIGINT/SIGTERM)");
	claim->callback([c, k] { run_claim(*c, *k); });

	auto f = std::make_shared<FenceOptions>();
	auto *fence = cl->add_subcommand("fence", "confirm that a down host is cut off: its fencing extents become free");
	fence->add_option("host", f->host, "the host")->required();
	fence->add_option("--by", f->by, "who confirms (default: the operator on this machine)");
	add_check_flag(fence, f->check);
	add_json_flag(fence, f->json, "host, fenced, by, extents (free again)");
	fence->callback([&g, c, f] { run_fence(g, *c, *f); });
}

} // namespace poolctl
