// poolctl autopilot: local DRAM where each VM's hot set is (issue 50).
//
// advise prints what the decision (kmod/policy/pm_autopilot.c, through
// libpoolmem's autopilot) would do now; run applies it every interval
// with vm set's engine (POOLMEM_DOMAIN_SET in steps), shrinks before
// grows, logging each decision with its inputs to stdout (the journal,
// under poolmem-autopilot.service) and each change to the audit trail;
// status reads what run last wrote. Everything it acts on is read from
// the kernel each time: a run killed mid-move leaves the kernel's quotas
// consistent (a shrink in progress keeps the tier at its usage), and the
// next run finishes those moves first.
#include "commands.hpp"
#include "moves.hpp"
#include "table.hpp"

#include <poolmem/audit.hpp>
#include <poolmem/autopilot.hpp>
#include <poolmem/error.hpp>
#include <poolmem/size.hpp>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>
#include <thread>
#include <unistd.h>

namespace poolctl {

namespace ap = poolmem::autopilot;
namespace fs = std::filesystem;



namespace {

const char *const default_config = "/etc/poolmem/poolmem.toml";
const char *const default_state = "/run/poolmem-autopilot/status.json";

/// What every autopilot verb reads: the file, and the command line over it.
struct ApOptions {
	std::string config = default_config;
	std::string budget, headroom, rate, interval, slo, min, max, reclaim;
	int margin = -1, hysteresis = -1;
	bool json = false;
};

struct RunOptions : ApOptions {
	std::string state = default_state;
	std::string duration; ///< stop after this long (tests); empty: until SIGTERM
};

struct AdviseOptions : ApOptions {
	std::string window; ///< measure over this long; empty: counters since creation
};

struct StatusOptions {
	std::string state = default_state;
	bool json = false;
};

void add_ap_options(CLI::App *cmd, ApOptions &o)
{
	cmd->add_option("--config", o.config, "the file with [autopilot] (default /etc/poolmem/poolmem.toml)");
	cmd->add_option("--budget", o.budget, "local DRAM for all the VMs' local quotas (SIZE)");
	cmd->add_option("--headroom", o.headroom, "kept out of the budget for VMs starting (SIZE, default 0)");
	cmd->add_option("--rate", o.rate, "quota change and chunk moves per second, at most (SIZE, default 64M)");
	cmd->add_option("--interval", o.interval, "time between decisions (default 5s)");
	cmd->add_option("--slo", o.slo, "default SLO: at most PCT% of a VM's sampled accesses from the pool");
	cmd->add_option("--min", o.min, "default local quota floor: PCT% of a VM's size or SIZE (default 0)");
	cmd->add_option("--max", o.max, "default local quota ceiling: PCT% or SIZE (default 100%)");
	cmd->add_option("--reclaim", o.reclaim,
			"lazy: a VM gives back only what others' grows need (default); eager: down to its hot set at once")
		->check(CLI::IsMember({"lazy", "eager"}));
	cmd->add_option("--margin", o.margin, "percent added to the hot set (default 10)")->check(CLI::Range(0, 100));
	cmd->add_option("--hysteresis", o.hysteresis, "changes below this percent of the quota wait (default 5)")
		->check(CLI::Range(0, 100));
}

/// The file's settings with the command line's over them; UsageError for
/// a bad value, naming the option.
ap::Config config_of(const ApOptions &o)
{
	ap::Config c = ap::read_config(o.config);
	auto size = [](const char *opt, const std::string &v, uint64_t &to) {
		if (v.empty())
			return;
		const auto b = poolmem::parse_size(v);
		if (!b)
			throw UsageError(std::string(opt) + ": invalid size '" + v + "'");
		to = *b;
	};
	size("--budget", o.budget, c.budget);
	size("--headroom", o.headroom, c.headroom);
	size("--rate", o.rate, c.rate);
	if (!o.rate.empty() && !c.rate)
		throw UsageError("--rate: must be above 0");
	if (!o.interval.empty()) {
		c.interval_s = seconds_value("--interval", o.interval);
		if (c.interval_s <= 0)
			throw UsageError("--interval: must be above 0");
	}
	if (!o.slo.empty()) {
		if (!ap::parse_permille(o.slo))
			throw UsageError("--slo: '" + o.slo + "' is no share of accesses (0%..100%)");
		c.defaults.slo = o.slo;
	}
	for (auto [opt, v, to] : {std::tuple{"--min", &o.min, &c.defaults.min}, {"--max", &o.max, &c.defaults.max}}) {
		if (v->empty())
			continue;
		const bool pct = v->back() == '%';
		if ((pct && !ap::parse_permille(*v)) || (!pct && !poolmem::parse_size(*v)))
			throw UsageError(std::string(opt) + ": '" + *v + "' is no size or percentage of the VM's size");
		*to = *v;
	}
	if (!o.reclaim.empty())
		c.eager = o.reclaim == "eager";
	if (o.margin >= 0)
		c.margin_pct = static_cast<uint32_t>(o.margin);
	if (o.hysteresis >= 0)
		c.hysteresis_pct = static_cast<uint32_t>(o.hysteresis);
	return c;
}

std::string mib(uint64_t b) { return poolmem::format_size(b); }

std::string permille(uint32_t p)
{
	char s[32];
	std::snprintf(s, sizeof(s), "%u.%u%%", p / 10, p % 10);
	return s;
}

std::string signed_size(int64_t b)
{
	if (!b)
		return "0";
	return (b > 0 ? "+" : "-") + mib(static_cast<uint64_t>(b > 0 ? b : -b));
}

void print_decision(const ap::Decision &d)
{
	Table t({"VM", ">SIZE", ">QUOTA", ">USED", ">HOT", ">UNTOUCHED", ">POOL", ">MIN", ">MAX", ">TARGET", ">CHANGE",
		 "REASON"});
	for (const auto &v : d.vms)
		t.row({v.name, mib(v.size), mib(v.local_quota), mib(v.local_bytes), mib(v.hot), mib(v.untouched),
		       permille(v.pool_permille) + (v.slo_broken() ? "!" : ""), mib(v.min), mib(v.max), mib(v.target),
		       signed_size(static_cast<int64_t>(v.target) - static_cast<int64_t>(v.local_quota)), v.reason});
	t.print();
	const int64_t freed = static_cast<int64_t>(d.quota_sum) - static_cast<int64_t>(d.target_sum);
	std::printf("budget %s: local quotas %s now, %s targeted (%s %s)\n", mib(d.budget).c_str(),
		    mib(d.quota_sum).c_str(), mib(d.target_sum).c_str(), freed >= 0 ? "frees" : "needs",
		    mib(static_cast<uint64_t>(freed >= 0 ? freed : -freed)).c_str());
}

void run_advise(const GlobalOptions &g, const AdviseOptions &o)
{
	const ap::Config cfg = ap::with_store(config_of(o), ap::store_path);
	ap::History hist;
	if (!o.window.empty()) {
		const double w = seconds_value("--window", o.window);
		ap::decide(cfg, read_domains(g, false), hist); /* the counters to measure from */
		std::this_thread::sleep_for(std::chrono::duration<double>(w));
		for (auto &[name, s] : hist.vms)
			s.hot.clear(); /* this window's hot set, not the larger of two */
	}
	const ap::Decision d = ap::decide(cfg, read_domains(g, false), hist);
	if (o.json)
		print_json(g, ap::to_json(d));
	else
		print_decision(d);
}

volatile std::sig_atomic_t stop_requested = 0;
void on_stop(int) { stop_requested = 1; }

/// The state file, written whole: a reader never sees half of it.
void write_state(const std::string &path, const nlohmann::json &j)
{
	const fs::path p(path), tmp = p.string() + ".tmp";
	std::error_code ec;
	fs::create_directories(p.parent_path(), ec);
	{
		std::ofstream out(tmp);
		out << j.dump(2) << "\n";
		if (!out.flush())
			throw poolmem::Error(tmp.string(), "write", errno ? errno : EIO);
	}
	fs::rename(tmp, p, ec);
	if (ec)
		throw poolmem::Error(p.string(), "rename", ec.value());
}

void log_decision(const ap::Vm &v)
{
	std::printf("autopilot: %s: local quota %s -> %s (%s): hot %s (now %s), untouched %s, pool %s of accesses"
		    "%s, min %s, max %s, used %s\n",
		    v.name.c_str(), mib(v.local_quota).c_str(), mib(v.target).c_str(), v.reason.c_str(),
		    mib(v.hot).c_str(), mib(v.hot_now).c_str(), mib(v.untouched).c_str(), permille(v.pool_permille).c_str(),
		    v.slo_permille ? (" (SLO " + permille(v.slo_permille) + ")").c_str() : "", mib(v.min).c_str(),
		    mib(v.max).c_str(), mib(v.local_bytes).c_str());
}

struct RunTotals {
	uint64_t decisions = 0, changes = 0, refused = 0, moved_bytes = 0, slo_violations = 0;
};

/// Move up to BUDGET bytes of CHANGE (or, with CHANGE null, of NAME's
/// pending moves), in steps paced to RATE; stops early on SIGTERM. Chunks
/// referenced for 5 s: the next decision tries again.
poolmem::DomainSetResult apply_steps(poolmem::Control &ctl, const std::string &name, const poolmem::DomainChange *change,
				     uint64_t budget, uint64_t rate, uint64_t &moved)
{
	poolmem::MovePolicy policy;
	policy.rate = rate;
	policy.budget = budget;
	policy.timeout = 5;
	policy.pinned_tries = 1;
	const auto run = poolmem::set_moving(ctl, name, change, policy, {}, &stop_requested);
	moved += run.moved_bytes;
	return run.result;
}

void audit_change(const ap::Vm &v, const std::string &result, const std::string &error)
{
	poolmem::AuditEntry e;
	e.tool = "poolctl";
	e.verb = "autopilot set";
	e.domain = v.name;
	e.result = result;
	e.exit_code = result == "ok" ? 0 : EXIT_REFUSED;
	e.error = error;
	e.detail = "local quota " + mib(v.local_quota) + " -> " + mib(v.target) + " (" + v.reason + "; hot " +
		   mib(v.hot) + ", untouched " + mib(v.untouched) + ", pool " + permille(v.pool_permille) + ")";
	e.argv = {"poolctl", "autopilot", "run"};
	poolmem::audit(e);
}

void run_run(const GlobalOptions &g, const RunOptions &o)
{
	const ap::Config cfg = config_of(o);
	const double duration = o.duration.empty() ? 0 : seconds_value("--duration", o.duration);
	poolmem::Control ctl = open_control(g);
	if (ctl.abi_version() < 14) /* sample_hits_pool */
		throw poolmem::Error::plain("autopilot", "needs a module of kernel ABI 14 or later (loaded: " +
								 std::to_string(ctl.abi_version()) + ")",
					    EOPNOTSUPP);
	struct sigaction sa = {};
	sa.sa_handler = on_stop; /* no SA_RESTART: a step in progress returns EINTR */
	sigaction(SIGTERM, &sa, nullptr);
	sigaction(SIGINT, &sa, nullptr);
	std::setvbuf(stdout, nullptr, _IOLBF, 0);

	ap::History hist;
	ap::Config now = ap::with_store(cfg, ap::store_path); /* bad at the start: the error, nothing moves */
	RunTotals tot;
	const auto t0 = std::chrono::steady_clock::now();
	const long started = static_cast<long>(std::time(nullptr));
	std::printf("autopilot: running: budget %s, headroom %s, rate %s/s, interval %.1f s, %s reclaim, decision %s\n",
		    mib(cfg.budget).c_str(), mib(cfg.headroom).c_str(), mib(cfg.rate).c_str(), cfg.interval_s,
		    cfg.eager ? "eager" : "lazy", ap::decision_source_sha256());
	while (!stop_requested && (!duration || seconds_since(t0) < duration)) {
		const auto tick = std::chrono::steady_clock::now();
		const uint64_t budget = static_cast<uint64_t>(static_cast<double>(cfg.rate) * cfg.interval_s);
		uint64_t moved = 0;
		auto domains = read_domains(g, false);
		if (tot.decisions == 0) {
			/*
			 * First the moves an earlier run left when it was killed
			 * mid-move: the kernel knows them (a shrunk tier's quota
			 * stays at its usage until they are done: sysfs
			 * moves_pending_bytes); a step alone goes on with them, at
			 * the rate, and does nothing where none are left. All of
			 * them, before a decision: until then the quotas the
			 * decision starts from are the usages, not the targets.
			 */
			for (const auto &d : domains) {
				if (stop_requested || !d.windows.empty())
					continue;
				uint64_t here = 0;
				try {
					apply_steps(ctl, d.name, nullptr, UINT64_MAX, cfg.rate, here);
				} catch (const poolmem::Error &e) {
					if (e.code() != ENOENT)
						throw;
				}
				if (here)
					std::printf("autopilot: %s: moved %s an earlier run left\n", d.name.c_str(),
						    mib(here).c_str());
				moved += here;
			}
			tot.moved_bytes += moved;
			moved = 0;
			if (tot.moved_bytes)
				domains = read_domains(g, false);
		}
		/*
		 * The bounds set with vm create, vm set and profile create since
		 * the last decision; a store that does not read keeps the last
		 * good ones (and says so once per decision).
		 */
		try {
			now = ap::with_store(cfg, ap::store_path);
		} catch (const poolmem::Error &e) {
			std::printf("autopilot: %s; the bounds read before stay\n", e.what());
		}
		const ap::Decision dec = ap::decide(now, domains, hist);
		tot.decisions++;
		for (const auto &v : dec.vms) {
			tot.slo_violations += v.slo_broken();
			if (v.target != v.local_quota || tot.decisions == 1)
				log_decision(v);
		}
		for (const auto &ch : ap::plan(dec)) {
			if (stop_requested)
				break;
			const auto &v = *std::find_if(dec.vms.begin(), dec.vms.end(),
						      [&](const ap::Vm &x) { return x.name == ch.name; });
			poolmem::DomainChange c;
			c.local_quota = ch.local;
			c.pool_quota = ch.pool;
			poolmem::DomainSetResult r;
			try {
				r = apply_steps(ctl, ch.name, &c, budget - std::min(budget, moved), cfg.rate, moved);
			} catch (const poolmem::Error &e) {
				if (e.code() != ENOENT)
					throw;
				continue; /* the VM went away meanwhile */
			}
			if (r.err && r.err != EAGAIN && r.err != EINTR) {
				const std::string why = r.err == ENOSPC ? "no room: " + mib(r.need_bytes) + " must move, " +
										 mib(r.room_bytes) + " free where it may go"
									: std::strerror(r.err);
				std::printf("autopilot: %s: local quota %s -> %s refused: %s\n", ch.name.c_str(),
					    mib(ch.from).c_str(), mib(ch.local).c_str(), why.c_str());
				tot.refused++;
				audit_change(v, "refused", why);
				continue;
			}
			tot.changes++;
			audit_change(v, "ok", "");
		}
		tot.moved_bytes += moved;
		nlohmann::json st = ap::to_json(dec);
		st["pid"] = getpid();
		st["started"] = started;
		st["updated"] = static_cast<long>(std::time(nullptr));
		st["interval_seconds"] = cfg.interval_s;
		st["rate_bytes"] = cfg.rate;
		st["headroom_bytes"] = cfg.headroom;
		st["totals"] = {{"decisions", tot.decisions},
				{"changes", tot.changes},
				{"refused", tot.refused},
				{"moved_bytes", tot.moved_bytes},
				{"slo_violations", tot.slo_violations}};
		write_state(o.state, st);
		const double left = cfg.interval_s - seconds_since(tick);
		for (double slept = 0; slept < left && !stop_requested; slept += 0.1)
			std::this_thread::sleep_for(std::chrono::milliseconds(100));
	}
	std::printf("autopilot: stopped after %llu decisions, %llu changes, %s moved; the quotas stay as they are\n",
		    static_cast<unsigned long long>(tot.decisions), static_cast<unsigned long long>(tot.changes),
		    mib(tot.moved_bytes).c_str());
}

void run_status(const GlobalOptions &g, const StatusOptions &o)
{
	std::ifstream in(o.state);
	if (!in)
		throw poolmem::Error::plain(o.state, "no autopilot status (poolctl autopilot run has not run)", ENOENT);
	nlohmann::json st;
	try {
		st = nlohmann::json::parse(in);
	} catch (const nlohmann::json::exception &e) {
		throw poolmem::Error::plain(o.state, std::string("malformed: ") + e.what(), EINVAL);
	}
	const pid_t pid = st.value("pid", 0);
	const bool running = pid > 0 && (kill(pid, 0) == 0 || errno == EPERM);
	st["running"] = running;
	/* the quotas now, from the kernel, beside the targets */
	std::map<std::string, poolmem::DomainStats> now;
	for (auto &d : read_domains(g, false))
		now[d.name] = std::move(d);
	for (auto &v : st["vms"]) {
		auto d = now.find(v.value("name", ""));
		v["gone"] = d == now.end();
		if (d != now.end()) {
			v["local_quota_now_bytes"] = d->second.local_quota_bytes;
			v["local_now_bytes"] = d->second.local_bytes;
		}
	}
	if (o.json) {
		print_json(g, st);
		return;
	}
	const long age = static_cast<long>(std::time(nullptr)) - st.value("updated", 0L);
	std::printf("autopilot: %s (pid %d), last decision %ld s ago, decision %s\n",
		    running ? "running" : "not running", pid, age, st.value("decision_sha256", "?").substr(0, 12).c_str());
	Table t({"VM", ">TARGET", ">QUOTA", ">USED", ">HOT", ">POOL", "REASON"});
	for (const auto &v : st["vms"]) {
		const bool gone = v.value("gone", false);
		t.row({v.value("name", "?"), mib(v.value("target_bytes", 0ULL)),
		       gone ? "gone" : mib(v.value("local_quota_now_bytes", 0ULL)),
		       gone ? "-" : mib(v.value("local_now_bytes", 0ULL)), mib(v.value("hot_bytes", 0ULL)),
		       permille(v.value("pool_permille", 0U)), v.value("reason", "?")});
	}
	t.print();
	const auto &tot = st["totals"];
	std::printf("budget %s: %llu decisions, %llu changes (%llu refused), %s moved, %llu SLO violations\n",
		    mib(st.value("budget_bytes", 0ULL)).c_str(), tot.value("decisions", 0ULL), tot.value("changes", 0ULL),
		    tot.value("refused", 0ULL), mib(tot.value("moved_bytes", 0ULL)).c_str(),
		    tot.value("slo_violations", 0ULL));
}

} // namespace

void setup_autopilot(CLI::App &app, const GlobalOptions &g)
{
	auto *a = app.add_subcommand("autopilot", "the DRAM autopilot: each VM's local quota follows its hot set");
	a->require_subcommand(1);

	auto ad = std::make_shared<AdviseOptions>();
	auto *advise = a->add_subcommand("advise", "what the autopilot would set now, per VM, and why");
	add_ap_options(advise, *ad);
	advise->add_option("--window", ad->window,
			   "measure the pool share over this long (default: since each VM started)");
	advise->add_flag("--json", ad->json, "print as JSON (Documentation/json.md)");
	advise->callback([&g, ad] { run_advise(g, *ad); });

	auto ro = std::make_shared<RunOptions>();
	auto *run = a->add_subcommand("run", "apply the decisions every interval until SIGTERM (the service)");
	add_ap_options(run, *ro);
	run->add_option("--state", ro->state, "status file (default /run/poolmem-autopilot/status.json)");
	run->add_option("--duration", ro->duration, "stop after this long (default: until SIGTERM)");
	run->callback([&g, ro] { run_run(g, *ro); });

	auto so = std::make_shared<StatusOptions>();
	auto *status = a->add_subcommand("status", "the running autopilot's last decision, beside the quotas now");
	status->add_option("--state", so->state, "status file (default /run/poolmem-autopilot/status.json)");
	status->add_flag("--json", so->json, "print as JSON (Documentation/json.md)");
	status->callback([&g, so] { run_status(g, *so); });
}

} // namespace poolctl
