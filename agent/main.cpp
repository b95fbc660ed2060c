// poolmem-agent: this host's side of the cluster ledger (Documentation/
// cluster.md). It onlines exactly the extents of shared devices the ledger
// gives it, as pool memory, renews its lease, fences itself before the
// lease could run out when etcd can't be reached, and publishes its
// pools' load for cluster-wide smart idle.
//
//   poolmem-agent [--config /etc/poolmem/agent.toml]
//
// SIGHUP reloads the configuration's targets ("want"): the next step claims
// up to them or gives the surplus back (offline, then release). Any other
// change needs a restart, and a reload that makes one is refused (logged).
// SIGTERM keeps the memory for the next start (on_stop = "keep"), which takes
// the lease over or reclaims the extents; "poolmem-agent release" gives it back.
//
// The configuration (TOML):
//   etcd = "http://127.0.0.1:2379"    prefix = "/poolmem"
//   endpoints = ["http://10.0.0.1:2379", "http://10.0.0.2:2379", ...]
//                                     instead of etcd: every member of the
//                                     cluster; a call goes on to the next
//                                     when one does not answer
//   host = "h1"                       (default: the host name)
//   ttl_s = 10                        fence_margin_s = 3
//   state = "/run/poolmem-agent/state.json" where the agent writes what it holds
//                                     after every step ("" for nowhere)
//   [[device]]
//   name = "dcd0"                     its name in the ledger (registered)
//   dax = "dax0.0"                    this host's dax device of that memory
//   pool = "shared0"                  the pool its onlined extents form
//   want = 4                          extents to hold
//   zone = "movable"                  (the only one: see Documentation/cluster.md)
#include <poolmem/audit.hpp>
#include <poolmem/agent.hpp>
#include <poolmem/cluster.hpp>
#include <poolmem/control.hpp>
#include <poolmem/extents.hpp>
#include <poolmem/dax.hpp>
#include <poolmem/error.hpp>
#include <poolmem/stats.hpp>

#include <CLI/CLI.hpp>
#include <toml++/toml.h>

#include <algorithm>
#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <fcntl.h>
#include <filesystem>
#include <fstream>
#include <map>
#include <sys/file.h>
#include <sys/stat.h>
#include <thread>
#include <unistd.h>

namespace {

struct DeviceConf {
	std::string name, dax, pool, zone = "movable";
	unsigned want = 0;
};

struct Conf {
	std::string etcd = "http://127.0.0.1:2379", prefix = "/poolmem", host, sysfs = "/sys",
		    control = "/dev/poolmem/control", state = "/run/poolmem-agent/state.json";
	poolmem::cluster::Etcd::Tls tls; ///< etcd_cacert, etcd_cert, etcd_key
	int64_t ttl_s = 10;
	double fence_margin_s = 3;
	/// SIGTERM: keep the memory online for the next life (systemctl restart,
	/// an upgrade) or release it (offline, give back, leave)
	bool release_on_stop = false;
	/// past the self-fence deadline without etcd: keep the memory online
	/// (reclaimed when etcd answers) or offline it (the default)
	bool keep_through_outage = false;
	std::vector<DeviceConf> devices;
};

/// An invalid configuration (exit 2, as a bad command line).
struct BadConf : std::runtime_error {
	using std::runtime_error::runtime_error;
};

[[noreturn]] void bad(const std::string &file, const std::string &key, const std::string &why)
{
	throw BadConf(file + ": " + key + ": " + why);
}

/// A configuration file that is not there (exit 3, as poolctl's "not found").
struct NoFile : std::runtime_error {
	using std::runtime_error::runtime_error;
};

Conf load(const std::string &file)
{
	toml::table t;
	if (std::error_code ec; !std::filesystem::exists(file, ec))
		throw NoFile(file + ": no such file");
	try {
		t = toml::parse_file(file);
	} catch (const toml::parse_error &e) {
		throw BadConf(file + ":" + std::to_string(e.source().begin.line) + ": " +
			      std::string(e.description()));
	}
	Conf c;
	for (const auto &[k, v] : t) {
		const std::string key(k.str());
		if (key == "etcd_cacert" || key == "etcd_cert" || key == "etcd_key") {
			/* TLS to an https:// etcd, as etcdctl's --cacert, --cert, --key */
			auto s = v.value<std::string>();
			if (!s || s->empty())
				bad(file, key, "a file name");
			if (std::error_code ec; !std::filesystem::exists(*s, ec))
				throw NoFile(file + ": " + key + ": " + *s + ": no such file");
			(key == "etcd_cacert" ? c.tls.cacert : key == "etcd_cert" ? c.tls.cert : c.tls.key) = *s;
		} else if (key == "endpoints") {
			/* several members of one etcd cluster, as etcdctl --endpoints */
			const auto *a = v.as_array();
			if (!a || a->empty())
				bad(file, key, "a list of etcd URLs, e.g. [\"http://10.0.0.1:2379\", \"http://10.0.0.2:2379\"]");
			std::string all;
			for (const auto &e : *a) {
				auto s = e.value<std::string>();
				if (!s || s->empty() || s->find(',') != std::string::npos)
					bad(file, key, "each an etcd URL");
				all += (all.empty() ? "" : ",") + *s;
			}
			c.etcd = all;
		} else if (key == "etcd" || key == "prefix" || key == "host" || key == "sysfs" || key == "control" ||
		    key == "state") {
			auto s = v.value<std::string>();
			if (!s)
				bad(file, key, "not a string");
			(key == "etcd"	   ? c.etcd
			 : key == "prefix" ? c.prefix
			 : key == "host"   ? c.host
			 : key == "sysfs"  ? c.sysfs
			 : key == "state"  ? c.state
					   : c.control) = *s;
		} else if (key == "on_stop") {
			auto s = v.value<std::string>();
			if (!s || (*s != "keep" && *s != "release"))
				bad(file, key, "keep (the default: the memory stays online for a restart) or release");
			c.release_on_stop = *s == "release";
		} else if (key == "on_outage") {
			auto s = v.value<std::string>();
			if (!s || (*s != "keep" && *s != "offline"))
				bad(file, key, "offline (the default: self-fence before the lease can run out) or keep");
			c.keep_through_outage = *s == "keep";
		} else if (key == "ttl_s") {
			auto i = v.value<int64_t>();
			if (!i || *i < 2 || *i > 3600)
				bad(file, key, "2 to 3600 seconds");
			c.ttl_s = *i;
		} else if (key == "fence_margin_s") {
			auto d = v.value<double>();
			if (!d || *d <= 0)
				bad(file, key, "seconds above 0");
			c.fence_margin_s = *d;
		} else if (key == "device") {
			const auto *arr = v.as_array();
			if (!arr || !arr->is_array_of_tables())
				bad(file, key, "not [[device]] tables");
			for (const auto &n : *arr) {
				DeviceConf d;
				for (const auto &[dk, dv] : *n.as_table()) {
					const std::string k2(dk.str());
					if (k2 == "want") {
						auto i = dv.value<int64_t>();
						if (!i || *i < 0)
							bad(file, "device." + k2, "a count");
						d.want = static_cast<unsigned>(*i);
						continue;
					}
					auto s = dv.value<std::string>();
					if (!s)
						bad(file, "device." + k2, "not a string");
					if (k2 == "name")
						d.name = *s;
					else if (k2 == "dax")
						d.dax = *s;
					else if (k2 == "pool")
						d.pool = *s;
					else if (k2 == "zone" && *s == "movable")
						d.zone = *s;
					else
						bad(file, "device." + k2,
						    k2 == "zone" ? "only \"movable\": memory in a kernel zone could not be "
								   "revoked after a lost lease (Documentation/cluster.md)"
								 : "unknown key");
				}
				if (d.name.empty() || d.dax.empty() || d.pool.empty())
					bad(file, "device", "needs name, dax and pool");
				c.devices.push_back(d);
			}
		} else {
			bad(file, key, "unknown key");
		}
	}
	/* the agent fences itself fence_margin_s before its lease runs out */
	if (c.fence_margin_s >= static_cast<double>(c.ttl_s)) {
		char why[128];
		std::snprintf(why, sizeof(why), "%g s is not below ttl_s (%lld s): the agent would fence itself at once",
			      c.fence_margin_s, static_cast<long long>(c.ttl_s));
		bad(file, "fence_margin_s", why);
	}
	if (c.tls.cert.empty() != c.tls.key.empty())
		bad(file, c.tls.cert.empty() ? "etcd_cert" : "etcd_key",
		    c.tls.cert.empty() ? "needed with etcd_key" : "needed with etcd_cert");
	if (!(c.tls.cacert.empty() && c.tls.cert.empty()))
		for (size_t at = 0; at <= c.etcd.size();) {
			const size_t comma = std::min(c.etcd.find(',', at), c.etcd.size());
			const std::string e = c.etcd.substr(at, comma - at);
			if (e.rfind("https://", 0) != 0)
				bad(file, "etcd", "TLS files are given, so an https:// endpoint (not " + e + ")");
			at = comma + 1;
		}
	if (c.host.empty()) {
		char h[256] = "";
		gethostname(h, sizeof(h) - 1);
		c.host = h;
	}
	return c;
}

volatile std::sig_atomic_t stopping = 0, reload = 0;

/*
 * What a reload may change: the targets. Everything else (endpoint, host
 * name, lease, devices and their dax devices and pools) is this life's and
 * needs a restart; a reload that changes it is refused as a whole.
 */
std::string reload_refusal(const Conf &a, const Conf &b)
{
	if (a.etcd != b.etcd || a.prefix != b.prefix || a.host != b.host || a.ttl_s != b.ttl_s ||
	    a.fence_margin_s != b.fence_margin_s || a.sysfs != b.sysfs || a.control != b.control || a.state != b.state)
		return "only the devices' \"want\" can change without a restart";
	if (a.devices.size() != b.devices.size())
		return "devices added or removed: restart the agent";
	for (size_t i = 0; i < a.devices.size(); i++) {
		const auto &x = a.devices[i], &y = b.devices[i];
		if (x.name != y.name || x.dax != y.dax || x.pool != y.pool || x.zone != y.zone)
			return "device " + x.name + " changed: only \"want\" can change without a restart";
	}
	return "";
}

/* STATE: what this life holds, for operators and the exporter; written whole, then renamed */
unsigned settled_generation;

void write_state(const Conf &c, const poolmem::cluster::Agent &agent, unsigned generation)
{
	if (c.state.empty())
		return;
	nlohmann::json j;
	j["host"] = c.host;
	j["lease"] = agent.lease();
	j["fenced"] = agent.fenced();
	j["generation"] = generation;
	j["settled_steps"] = agent.settled_steps();
	j["settled_generation"] = settled_generation;
	j["unreachable_rounds"] = agent.unreachable_rounds();
	j["want"] = agent.want();
	auto &ex = j["extents"] = nlohmann::json::array();
	for (const auto &[dev, idx] : agent.online())
		ex.push_back({{"device", dev}, {"index", idx}});
	const std::string tmp = c.state + ".tmp";
	const auto slash = c.state.rfind('/');
	if (slash != std::string::npos && slash > 0)
		mkdir(c.state.substr(0, slash).c_str(), 0755);
	FILE *f = std::fopen(tmp.c_str(), "w");
	if (!f) {
		static bool said;
		if (!said)
			std::fprintf(stderr, "poolmem-agent: %s: %s (not written)\n", tmp.c_str(), std::strerror(errno));
		said = true;
		return;
	}
	const std::string text = j.dump() + "\n";
	const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
	if (std::fclose(f) != 0 || !ok || std::rename(tmp.c_str(), c.state.c_str()) != 0)
		std::fprintf(stderr, "poolmem-agent: %s: %s\n", c.state.c_str(), std::strerror(errno));
}

/* Run F; a poolmem error is logged (once while it repeats) and the loop goes on. */
template <class F> void guarded(F f)
{
	static std::string last;
	try {
		f();
		last.clear();
	} catch (const poolmem::Error &e) {
		if (e.what() != last)
			std::fprintf(stderr, "poolmem-agent: %s (retrying)\n", e.what());
		last = e.what();
	}
}

/*
 * The pool's remote_load: the load other hosts put on its shared device.
 * Returns what happened, in words, for the log: the agent says it when it
 * changes, so that a refused store or a missing pool is seen.
 */
std::string write_remote_load(const Conf &c, const std::string &pool, uint64_t af, uint64_t bytes)
{
	const int err = poolmem::set_pool_remote_load(c.sysfs, pool, af, bytes);
	if (err == ENOENT || err == EACCES)
		return "pool " + pool + ": cannot write remote_load: " + std::strerror(err);
	if (err)
		return "pool " + pool + ": remote_load refused '" + std::to_string(af) + " " + std::to_string(bytes) + "': " + std::strerror(err);
	return "pool " + pool + ": other hosts' load is af " + std::to_string(af) + ", " + std::to_string(bytes) +
	       " bytes";
}

/* The lease of this host's last life, from its state file; 0 if none. */
int64_t previous_lease(const Conf &c)
{
	if (c.state.empty())
		return 0;
	std::ifstream f(c.state);
	if (!f)
		return 0;
	const auto j = nlohmann::json::parse(f, nullptr, false);
	if (!j.is_object() || j.value("host", "") != c.host || !j.contains("lease") || !j["lease"].is_number_integer())
		return 0;
	return j["lease"].get<int64_t>();
}

std::string holding(const poolmem::cluster::Agent &agent)
{
	std::string s;
	for (const auto &[dev, idx] : agent.online())
		s += (s.empty() ? "" : " ") + dev + ":" + std::to_string(idx);
	return s.empty() ? "nothing" : s;
}

} // namespace

/* The agent's changes to the host in the audit trail (poolmem::audit). */
static void audit(const std::string &host, const std::string &verb, const std::string &what)
{
	poolmem::AuditEntry e;
	e.tool = "poolmem-agent";
	e.verb = verb;
	e.host = host;
	e.result = "ok";
	e.detail = what;
	poolmem::audit(e);
}

int main(int argc, char **argv)
{
	CLI::App app{"poolmem-agent: this host's side of the shared-device ledger on etcd"};
	std::string config = "/etc/poolmem/agent.toml";
	app.add_option("--config", config, "configuration file (TOML)");
	auto *release = app.add_subcommand(
		"release", "give this host's memory back: take over the last life's lease (or join), offline every "
			   "extent, release them and leave the ledger; for a host leaving the cluster");
	app.set_version_flag("--version", "poolmem-agent " POOLMEM_RELEASE);
	try {
		app.parse(argc, argv);
	} catch (const CLI::CallForHelp &e) {
		return app.exit(e);
	} catch (const CLI::CallForVersion &e) {
		return app.exit(e);
	} catch (const CLI::ParseError &e) {
		/* one line, and poolctl's exit code for a bad command line */
		std::fprintf(stderr, "poolmem-agent: %s (see poolmem-agent --help)\n", e.what());
		return 2;
	}
	try {
		const Conf c = load(config);
		/*
		 * One agent per host and state file: a second one (a manual run,
		 * poolmem-agent release beside the service) would take the live
		 * lease over and manage the same extents. The lock goes with the
		 * process, however it ends.
		 */
		if (!c.state.empty()) {
			const auto slash = c.state.rfind('/');
			if (slash != std::string::npos && slash > 0)
				mkdir(c.state.substr(0, slash).c_str(), 0755);
			const std::string lock = c.state + ".lock";
			const int fd = ::open(lock.c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0600);
			if (fd < 0)
				throw poolmem::Error(lock, "cannot open", errno);
			if (flock(fd, LOCK_EX | LOCK_NB) != 0)
				throw poolmem::Error::plain(lock, "another poolmem-agent runs with this state file (stop it first)",
							    EBUSY);
		}
		poolmem::cluster::Etcd etcd(c.etcd, 2000);
		etcd.set_tls(c.tls);
		poolmem::cluster::Ledger ledger(etcd, c.prefix);
		std::vector<poolmem::cluster::ExtentDevice> devices;
		for (const auto &d : c.devices)
			devices.push_back({d.name, d.dax, d.pool,
					   d.zone == "normal" ? poolmem::Zone::normal : poolmem::Zone::movable});
		poolmem::cluster::DaxExtentMemory mem(c.sysfs, c.control, devices, ledger, [](const std::string &line) {
			std::fprintf(stderr, "poolmem-agent: %s\n", line.c_str());
		});
		poolmem::cluster::AgentConfig ac;
		ac.host = c.host;
		ac.ttl_s = c.ttl_s;
		ac.fence_margin_s = c.fence_margin_s;
		for (const auto &d : c.devices)
			ac.want[d.name] = d.want;
		ac.previous_lease = previous_lease(c);
		ac.keep_through_outage = c.keep_through_outage;
		poolmem::cluster::Agent agent(etcd, ledger, mem, ac);
		struct sigaction sa {};
		sa.sa_handler = [](int sig) {
			if (sig == SIGHUP)
				reload = 1;
			else
				stopping = 1;
		};
		sigemptyset(&sa.sa_mask);
		for (int sig : {SIGTERM, SIGINT, SIGHUP})
			sigaction(sig, &sa, nullptr);
		agent.start();
		if (release->parsed()) {
			agent.stop();
			write_state(c, agent, 0);
			std::printf("poolmem-agent: %s: every extent offline and released, left the ledger\n",
				    c.host.c_str());
			audit(c.host, "release", "every extent offline and released");
			return 0;
		}
		unsigned generation = 1;
		settled_generation = generation;
		std::printf("poolmem-agent: %s %s (lease %ld), holding %s", c.host.c_str(),
			    agent.took_over_lease() ? "took over its last life's lease" : "joined",
			    static_cast<long>(agent.lease()), holding(agent).c_str());
		if (agent.kept() || agent.dropped())
			std::printf("; of its last life's extents %u kept online, %u offlined (fenced or changed since)",
				    agent.kept(), agent.dropped());
		std::printf("\n");
		audit(c.host, agent.took_over_lease() ? "take over" : "join", "holding " + holding(agent));
		std::string member = etcd.endpoint();
		if (etcd.endpoints().size() > 1)
			std::printf("poolmem-agent: %s: etcd member %s answers (%zu endpoints)\n", c.host.c_str(),
				    member.c_str(), etcd.endpoints().size());
		std::fflush(stdout);
		write_state(c, agent, generation);
		bool was_fenced = false;
		int64_t lease_said = agent.lease();
		std::string held = holding(agent);
		std::map<std::string, std::string> remote_said; /* per device: the last remote_load line logged */
		std::string publish_failed;			 /* the last publish error logged */
		while (!stopping) {
			const auto next = std::chrono::steady_clock::now() +
					  std::chrono::milliseconds(std::max<int64_t>(c.ttl_s * 1000 / 3 - 200, 300));
			if (reload) {
				reload = 0;
				try {
					const Conf n = load(config);
					const auto why = reload_refusal(c, n);
					if (!why.empty())
						throw std::runtime_error(why);
					std::map<std::string, unsigned> want;
					for (const auto &d : n.devices)
						want[d.name] = d.want;
					agent.set_want(want);
					generation++;
					std::printf("poolmem-agent: %s: reloaded %s\n", c.host.c_str(), config.c_str());
				} catch (const std::exception &e) {
					std::fprintf(stderr, "poolmem-agent: reload refused, keeping the running configuration: %s\n",
						     e.what());
				}
				std::fflush(stdout);
			}
			const unsigned settled = agent.settled_steps();
			/* memory that refuses to go offline: say so, and try again next step */
			guarded([&] { agent.step(); });
			if (etcd.endpoint() != member) {
				std::printf("poolmem-agent: %s: etcd member %s did not answer: %s answers now (failover %lu)\n",
					    c.host.c_str(), member.c_str(), etcd.endpoint().c_str(),
					    static_cast<unsigned long>(etcd.failovers()));
				std::fflush(stdout);
				member = etcd.endpoint();
			}
			if (agent.settled_steps() != settled)
				settled_generation = generation; /* this configuration's targets are met, or nothing is free */
			if (agent.fenced() != was_fenced) {
				std::printf(!agent.fenced()     ? "poolmem-agent: %s: back in the ledger (lease %ld)\n"
					    : agent.lease_lost() ? "poolmem-agent: %s: lease %ld is gone (paused past its TTL?): "
								   "fenced itself, every extent offline; its claims are stale\n"
								 : "poolmem-agent: %s: ledger unreachable: fenced itself, every extent offline\n",
					    c.host.c_str(), static_cast<long>(agent.lease()));
				std::fflush(stdout);
				was_fenced = agent.fenced();
			}
			if (agent.lease() != lease_said && !agent.fenced() && c.keep_through_outage && !was_fenced) {
				/* on_outage = keep: the lease ran out while etcd was away, and was replaced */
				std::printf("poolmem-agent: %s: new lease %ld (the last ran out while etcd was out of reach); "
					    "of its extents %u kept online, %u offlined (fenced or changed since)\n",
					    c.host.c_str(), static_cast<long>(agent.lease()), agent.kept(), agent.dropped());
				std::fflush(stdout);
			}
			lease_said = agent.lease();
			if (holding(agent) != held) {
				held = holding(agent);
				std::printf("poolmem-agent: %s: holding %s\n", c.host.c_str(), held.c_str());
				std::fflush(stdout);
			}
			write_state(c, agent, generation);
			if (!agent.fenced()) {
				/*
				 * A hung etcd must not hold us past the self-fence
				 * deadline: each call gets what is left of it, less
				 * 200 ms, and none is made with 300 ms or less left.
				 */
				auto budget = [&] {
					const long left = static_cast<long>(agent.time_left().count());
					if (left <= 300)
						throw poolmem::Error::plain(c.host, "too close to the self-fence deadline", ETIME);
					etcd.set_timeout_ms(std::min<long>(2000, left - 200));
				};
				try {
					const auto pools = poolmem::read_pools(c.sysfs);
					std::map<std::string, std::pair<uint64_t, uint64_t>> own;
					for (const auto &d : c.devices)
						for (const auto &p : pools)
							if (p.name == d.pool) {
								budget();
								ledger.publish_load(c.host, agent.lease(), d.name, p.access_factor,
										    p.allocated_bytes);
								own[d.name] = {p.access_factor, p.allocated_bytes};
							}
					for (const auto &d : c.devices)
						if (!own.count(d.name) && remote_said[d.name] != "") {
							remote_said[d.name] = "";
							std::printf("poolmem-agent: %s: %s: pool %s is not there; its remote "
								    "load waits for it\n",
								    c.host.c_str(), d.name.c_str(), d.pool.c_str());
							std::fflush(stdout);
						}
					/* the others' load on each device, for the module's smart idle */
					budget();
					for (const auto &l : ledger.load())
						for (const auto &d : c.devices) {
							if (d.name != l.device || !own.count(d.name))
								continue;
							const std::string said = write_remote_load(
								c, d.pool, l.af - std::min(l.af, own[d.name].first),
								l.allocated_bytes - std::min(l.allocated_bytes, own[d.name].second));
							if (remote_said[d.name] != said) {
								remote_said[d.name] = said;
								std::printf("poolmem-agent: %s: %s: %s\n", c.host.c_str(),
									    d.name.c_str(), said.c_str());
								std::fflush(stdout);
							}
						}
					publish_failed.clear();
				} catch (const poolmem::Error &e) {
					/* the ledger went away between the step and here: say it once */
					if (publish_failed != e.what()) {
						publish_failed = e.what();
						std::fprintf(stderr, "poolmem-agent: %s: cannot publish or read the load: %s\n",
							     c.host.c_str(), e.what());
					}
				}
				etcd.set_timeout_ms(2000);
			}
			while (!stopping && !reload && std::chrono::steady_clock::now() < next) {
				std::this_thread::sleep_for(std::chrono::milliseconds(50));
				const bool before = agent.fenced();
				guarded([&] { agent.watchdog(); });
				if (agent.fenced() != before) {
					write_state(c, agent, generation);
					std::printf("poolmem-agent: %s: lease about to run out: fenced itself, every extent offline\n",
						    c.host.c_str());
					audit(c.host, "self-fence", "lease about to run out: every extent offline");
					std::fflush(stdout);
					was_fenced = true;
					held = holding(agent);
				}
			}
		}
		write_state(c, agent, generation);
		if (c.release_on_stop || agent.fenced()) {
			agent.stop();
			write_state(c, agent, generation);
			std::printf("poolmem-agent: %s: every extent offline and released\n", c.host.c_str());
			audit(c.host, "stop", "every extent offline and released");
		} else {
			/*
			 * on_stop = "keep": the memory stays online and claimed, the
			 * lease runs on until its TTL; the next life takes it over
			 * (or, later, reclaims the extents while unfenced). A host that
			 * never comes back: its extents turn fencing, never free
			 * without a fence (Documentation/cluster.md).
			 */
			std::printf("poolmem-agent: %s: stopped, %s kept online under lease %ld for the next start "
				    "(poolmem-agent release gives them back)\n",
				    c.host.c_str(), holding(agent).c_str(), static_cast<long>(agent.lease()));
			audit(c.host, "stop", holding(agent) + " kept online for the next start");
		}
	} catch (const NoFile &e) {
		std::fprintf(stderr, "poolmem-agent: %s\n", e.what());
		return 3;
	} catch (const BadConf &e) {
		std::fprintf(stderr, "poolmem-agent: %s\n", e.what());
		return 2;
	} catch (const std::exception &e) {
		std::fprintf(stderr, "poolmem-agent: %s\n", e.what());
		return 1;
	}
	return 0;
}
