// poolctl simulate: the placement policies in a discrete-event model, with
// the module's own policy code (userspace/sim), and capacity planning.
#include "commands.hpp"
#include "moves.hpp"
#include "table.hpp"

#include <poolmem/control.hpp>
#include <poolmem/error.hpp>
#include <poolmem/apsim.hpp>
#include <poolmem/autopilot.hpp>
#include <poolmem/sim.hpp>
#include <poolmem/size.hpp>

#include <nlohmann/json.hpp>

#include "policy/pm_policy.h"

#include <chrono>
#include <cstdio>
#include <map>
#include <thread>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <unistd.h>

namespace poolctl {

namespace {

struct SimOptions {
	std::string scenario, tier_policy, pool_select, compare, tiers, out, rr_start, rebalance_rate;
	uint64_t seed = 0;
	bool json = false, policy_source = false;
	bool backpressure = false, rebalance = false, free_moves = false;
};

struct RecordOptions {
	std::string out;
	double seconds = 10, interval = 0.5;
};

struct PlanOptions {
	std::string host_dram, pool, vm_size, touched = "0.3:1.0", overcommit = "1,1.25,1.5,2";
	uint32_t local_pct = 25;
	unsigned trials = 10000;
	bool json = false;
};

std::vector<std::string> split(const std::string &s)
{
	std::vector<std::string> v;
	std::stringstream ss(s);
	for (std::string x; std::getline(ss, x, ',');)
		if (!x.empty())
			v.push_back(x);
	return v;
}

std::string ns_text(double ns)
{
	char b[32];
	std::snprintf(b, sizeof(b), ns < 10000 ? "%.0f ns" : "%.1f us", ns < 10000 ? ns : ns / 1000);
	return b;
}

nlohmann::json result_json(const poolmem::sim::Result &r, bool series)
{
	nlohmann::json j = {
		{"tier_policy", r.tier_policy},
		{"pool_select", r.pool_select},
		{"events", r.events},
		{"accesses", r.accesses},
		{"local_accesses", r.local_accesses},
		{"mean_ns", r.mean_ns},
		{"p50_ns", r.p50_ns},
		{"p99_ns", r.p99_ns},
		{"p999_ns", r.p999_ns},
		{"max_ns", r.max_ns},
		{"over_1us_fraction", r.over_1us},
		{"chunks_allocated", r.chunks_allocated},
		{"chunks_freed", r.chunks_freed},
		{"sigbus", r.sigbus},
		{"enospc", r.enospc},
		{"vms_admitted", r.vms_admitted},
		{"vms_max", r.vms_max},
		{"vms_mean", r.vms_mean},
		{"imbalance_mean", r.imbalance_mean},
		{"imbalance_max", r.imbalance_max},
		{"events_per_second", r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s : 0},
		{"rebalanced_chunks", r.rebalanced_chunks},
		{"rebalanced_mib_per_s", r.rebalanced_mib_s},
	};
	nlohmann::json pools = nlohmann::json::array();
	for (const auto &p : r.pools)
		pools.push_back({{"name", p.name},
				 {"accesses", p.accesses},
				 {"allocations", p.allocations},
				 {"allocated_end_bytes", p.allocated_end},
				 {"allocated_peak_bytes", p.allocated_peak},
				 {"mean_ns", p.mean_ns}});
	j["pools"] = pools;
	if (series) {
		j["series"] = {{"t_s", r.t},
			       {"imbalance", r.imbalance},
			       {"pool_accesses", r.pool_accesses},
			       {"pool_af", r.pool_af},
			       {"pool_allocated_bytes", r.pool_allocated}};
		nlohmann::json cdf = nlohmann::json::array();
		for (const auto &[ns, f] : r.cdf)
			cdf.push_back({ns, f});
		j["cdf"] = cdf;
	}
	return j;
}

void write_file(const std::string &path, const std::string &text)
{
	std::ofstream f(path);
	if (!(f << text))
		throw std::runtime_error(path + ": cannot write");
}

/* DIR/results.json, DIR/summary.csv, and per run its series and CDF as CSV */
void write_out(const std::string &dir, const poolmem::sim::Scenario &s,
	       const std::vector<poolmem::sim::Result> &runs)
{
	std::filesystem::create_directories(dir);
	nlohmann::json all = {{"scenario", s.name}, {"seed", s.seed}, {"duration_s", s.duration_s},
			      {"hosts", s.hosts}, {"policy_source_sha256", poolmem::sim::policy_source_sha256()}};
	all["runs"] = nlohmann::json::array();
	std::string summary = "tier_policy,pool_select,mean_ns,p50_ns,p99_ns,p999_ns,over_1us_fraction,"
			      "imbalance_mean,imbalance_max,sigbus,enospc,vms_max,accesses\n";
	for (const auto &r : runs) {
		all["runs"].push_back(result_json(r, true));
		char line[512];
		std::snprintf(line, sizeof(line), "%s,%s,%.1f,%.0f,%.0f,%.0f,%.5f,%.1f,%lu,%lu,%lu,%lu,%lu\n",
			      r.tier_policy.c_str(), r.pool_select.c_str(), r.mean_ns, r.p50_ns, r.p99_ns, r.p999_ns,
			      r.over_1us, r.imbalance_mean, static_cast<unsigned long>(r.imbalance_max),
			      static_cast<unsigned long>(r.sigbus), static_cast<unsigned long>(r.enospc),
			      static_cast<unsigned long>(r.vms_max), static_cast<unsigned long>(r.accesses));
		summary += line;
		const std::string tag = r.tier_policy + "-" + r.pool_select;
		std::string series = "t_s,imbalance";
		for (const auto &p : r.pools)
			series += "," + p.name + "_accesses," + p.name + "_af," + p.name + "_allocated_bytes";
		series += "\n";
		for (size_t i = 0; i < r.t.size(); i++) {
			series += std::to_string(r.t[i]) + "," + std::to_string(r.imbalance[i]);
			for (size_t p = 0; p < r.pools.size(); p++)
				series += "," + std::to_string(r.pool_accesses[i][p]) + "," + std::to_string(r.pool_af[i][p]) +
					  "," + std::to_string(r.pool_allocated[i][p]);
			series += "\n";
		}
		write_file(dir + "/series-" + tag + ".csv", series);
		std::string cdf = "ns,fraction\n";
		for (const auto &[ns, f] : r.cdf)
			cdf += std::to_string(ns) + "," + std::to_string(f) + "\n";
		write_file(dir + "/cdf-" + tag + ".csv", cdf);
	}
	write_file(dir + "/results.json", all.dump(1) + "\n");
	write_file(dir + "/summary.csv", summary);
}

void run_simulate(const GlobalOptions &g, const SimOptions &o)
{
	if (o.policy_source) {
		std::printf("%s\n", poolmem::sim::policy_source_sha256());
		return;
	}
	if (o.scenario.empty())
		throw UsageError("simulate: a scenario file is needed (see poolctl-simulate(8))");
	/* as poolctl apply: a missing file is "not found" (exit 3), not a parse error */
	if (std::error_code ec; !std::filesystem::exists(o.scenario, ec))
		throw poolmem::Error::plain(o.scenario, "no such file", ENOENT);
	poolmem::sim::Scenario s = poolmem::sim::load_scenario(o.scenario);
	if (o.seed)
		s.seed = o.seed;
	if (o.backpressure)
		s.backpressure = true;
	if (o.rebalance)
		s.rebalance.enabled = true;
	if (o.free_moves)
		s.rebalance.copy = false;
	if (!o.rebalance_rate.empty()) {
		s.rebalance.rate_bytes = size_value("--rebalance-rate", o.rebalance_rate);
		if (!s.rebalance.rate_bytes)
			throw UsageError("--rebalance-rate: must be above 0");
	}
	if (!o.rr_start.empty()) {
		const int i = pm_name_index(pm_rr_start_names, PM_NR_RR_STARTS, o.rr_start.c_str());
		if (i < 0)
			throw UsageError("--rr-start: '" + o.rr_start + "' is not zero, random, sequence or salted");
		s.rr_start = static_cast<uint32_t>(i);
	}
	std::vector<uint32_t> tiers, selects;
	try {
		for (const auto &t : split(o.tiers.empty() ? o.tier_policy : o.tiers))
			tiers.push_back(poolmem::sim::parse_tier_policy_name(t));
		for (const auto &p : split(o.compare.empty() ? o.pool_select : o.compare))
			selects.push_back(poolmem::sim::parse_pool_select_name(p));
	} catch (const std::invalid_argument &e) {
		throw UsageError(e.what());
	}
	if (tiers.empty())
		tiers.push_back(s.tier_policy);
	if (selects.empty())
		selects.push_back(s.pool_select);

	const bool tty = isatty(STDERR_FILENO);
	std::vector<poolmem::sim::Result> runs;
	const size_t total = tiers.size() * selects.size();
	for (uint32_t t : tiers)
		for (uint32_t p : selects) {
			poolmem::sim::Scenario run = s;
			run.tier_policy = t;
			run.pool_select = p;
			if (tty)
				std::fprintf(stderr, "\r[%zu/%zu] %s, %s ...", runs.size() + 1, total,
					     poolmem::sim::tier_policy_name(t).c_str(),
					     poolmem::sim::pool_select_name(p).c_str());
			runs.push_back(poolmem::sim::simulate(run));
		}
	if (tty)
		std::fprintf(stderr, "\r%*s\r", 60, "");
	if (!o.out.empty())
		write_out(o.out, s, runs);
	if (o.json) {
		nlohmann::json j = nlohmann::json::array();
		for (const auto &r : runs)
			j.push_back(result_json(r, false));
		print_json(g, j);
		return;
	}
	std::printf("%s: %u hosts, %zu pools, %.3g s simulated, seed %lu, %s queues%s\n", s.name.c_str(), s.hosts,
		    s.pools.size(), s.duration_s, static_cast<unsigned long>(s.seed),
		    s.backpressure ? ("bounded (credits: host " + std::to_string(s.host_credits) + ", pool port " +
				      std::to_string(s.pool_credits) + ")")
					     .c_str()
				   : "unbounded",
		    s.rebalance.enabled ? (", rebalancing (" + poolmem::format_size(s.rebalance.rate_bytes) + "/s, " +
					   (s.rebalance.copy ? "copies charged" : "free moves") + "; pm_rebalance.c " +
					   std::string(poolmem::sim::rebalance_source_sha256()).substr(0, 12) + ")")
						  .c_str()
					: "");
	Table tb({"TIER-POLICY", "POOL-SELECT", ">MEAN", ">P99", ">P99.9", ">>=1us", ">IMBALANCE", ">SIGBUS",
		  ">ENOSPC", ">VMS", ">MOVED", ">EVENTS/S"});
	for (const auto &r : runs) {
		char over[16], imb[24], eps[24];
		std::snprintf(over, sizeof(over), "%.2f%%", r.over_1us * 100);
		std::snprintf(imb, sizeof(imb), "%.0f", r.imbalance_mean);
		std::snprintf(eps, sizeof(eps), "%.1fM", r.wall_s > 0 ? static_cast<double>(r.events) / r.wall_s / 1e6 : 0);
		char mv[32];
		std::snprintf(mv, sizeof(mv), "%.0f MiB/s", r.rebalanced_mib_s);
		tb.row({r.tier_policy, r.pool_select, ns_text(r.mean_ns), ns_text(r.p99_ns), ns_text(r.p999_ns), over, imb,
			std::to_string(r.sigbus), std::to_string(r.enospc), std::to_string(r.vms_max),
			s.rebalance.enabled ? mv : "-", eps});
	}
	tb.print();
	if (!o.out.empty())
		std::printf("results in %s (figures: scripts/sim-plot.py %s)\n", o.out.c_str(), o.out.c_str());
}

void run_plan(const GlobalOptions &g, const PlanOptions &o)
{
	poolmem::sim::PlanInput in;
	in.host_dram = size_value("--host-dram", o.host_dram);
	in.pool_capacity = o.pool.empty() ? 0 : size_value("--pool", o.pool);
	in.vm_size = size_value("--vm-size", o.vm_size);
	if (!in.host_dram)
		throw UsageError("--host-dram 0: the host needs DRAM for VMs");
	if (!in.vm_size)
		throw UsageError("--vm-size 0: a VM needs memory");
	if (o.local_pct > 100)
		throw UsageError("--local-pct " + std::to_string(o.local_pct) + ": 0 to 100");
	in.local_pct = o.local_pct;
	in.trials = o.trials;
	const auto colon = o.touched.find(':');
	try {
		in.touched_min = std::stod(o.touched.substr(0, colon));
		in.touched_max = colon == std::string::npos ? in.touched_min : std::stod(o.touched.substr(colon + 1));
		in.overcommit.clear();
		for (const auto &x : split(o.overcommit))
			in.overcommit.push_back(std::stod(x));
	} catch (const std::exception &) {
		throw UsageError("--touched MIN:MAX (fractions) and --overcommit R1,R2,... (ratios) take numbers");
	}
	if (!(in.touched_min >= 0 && in.touched_min <= in.touched_max && in.touched_max <= 1))
		throw UsageError("--touched " + o.touched + ": fractions 0 <= MIN <= MAX <= 1");
	for (double r : in.overcommit)
		if (!(r > 0 && r <= 100))
			throw UsageError("--overcommit: ratios above 0, at most 100");
	const auto p = poolmem::sim::plan(in);
	if (o.json) {
		nlohmann::json rows = nlohmann::json::array();
		for (const auto &r : p.rows)
			rows.push_back({{"overcommit", r.overcommit},
					{"vms", r.vms},
					{"density_vs_dram_only", r.density},
					{"sigbus_risk", r.sigbus_risk},
					{"pool_touched_mean_bytes", static_cast<uint64_t>(r.pool_touched_mean)}});
		print_json(g, {{"dram_only_vms", p.dram_only_vms}, {"rows", rows}});
		return;
	}
	std::printf("host: %s DRAM, %s pool; VMs of %s, %u%% local, touching %s of their memory\n",
		    poolmem::format_size(in.host_dram).c_str(), poolmem::format_size(in.pool_capacity).c_str(),
		    poolmem::format_size(in.vm_size).c_str(), in.local_pct, o.touched.c_str());
	std::printf("all-DRAM host: %u VMs\n", p.dram_only_vms);
	Table tb({">OVERCOMMIT", ">VMS", ">DENSITY", ">SIGBUS-RISK", ">POOL-TOUCHED"});
	for (const auto &r : p.rows) {
		char oc[16], d[16], risk[16];
		std::snprintf(oc, sizeof(oc), "%.2fx", r.overcommit);
		std::snprintf(d, sizeof(d), "%+.0f%%", (r.density - 1) * 100);
		std::snprintf(risk, sizeof(risk), "%.2f%%", r.sigbus_risk * 100);
		tb.row({oc, std::to_string(r.vms), d, risk,
			poolmem::format_size(static_cast<uint64_t>(r.pool_touched_mean))});
	}
	tb.print();
}

struct ApSimOptions {
	std::string workload = "stream50", vm_size = "16G", dram = "112G", slo = "5%", rate = "256M",
		    tier_rate = "512M", interval = "5s", reclaim = "lazy";
	unsigned vms = 0, max_vms = 20, steps = 720, windows = 6;
	uint64_t seed = 1;
	bool json = false;
};

/*
 * poolctl simulate autopilot: the DRAM autopilot's decision (the daemon's
 * own code) replayed against all-local and the best static split, on
 * VMs whose active sets change (apsim.hpp). VMs are added one at a time
 * as seed 000 draws its curve.
 */
void run_apsim(const GlobalOptions &g, const ApSimOptions &o)
{
	namespace sim = poolmem::sim;
	sim::ApSimInput in;
	try {
		in.workload = sim::parse_ap_workload(o.workload);
	} catch (const std::invalid_argument &e) {
		throw UsageError(std::string("--workload: ") + e.what());
	}
	in.vm_size = size_value("--vm-size", o.vm_size);
	in.dram = size_value("--dram", o.dram);
	in.rate = size_value("--rate", o.rate);
	in.tier_rate = size_value("--tier-rate", o.tier_rate);
	in.interval_s = seconds_value("--interval", o.interval);
	const auto slo = poolmem::autopilot::parse_permille(o.slo);
	if (!slo)
		throw UsageError("--slo: '" + o.slo + "' is no share of accesses (0%..100%)");
	in.slo_permille = *slo;
	in.vms = o.vms;
	in.max_vms = o.max_vms;
	in.steps = o.steps;
	in.seed = o.seed;
	in.windows = o.windows;
	in.eager = o.reclaim == "eager";
	if (!o.windows || o.windows > 10000)
		throw UsageError("--windows: 1 to 10000");
	if (!in.vm_size || in.vm_size % (2 << 20) || !in.dram || !in.steps || in.interval_s <= 0 || !in.max_vms ||
	    o.max_vms > 1000 || o.vms > 1000)
		throw UsageError("--vm-size (a multiple of 2 MiB), --dram, --steps, --interval and --max-vms (at most "
				 "1000) must be above 0");
	const auto r = sim::simulate_autopilot(in);
	if (o.json) {
		nlohmann::json rows = nlohmann::json::array();
		for (const auto &row : r.rows) {
			nlohmann::json ps = nlohmann::json::object();
			for (const auto &p : row.policies)
				ps[p.policy] = {{"fits", p.fits},
						{"slo_violations", p.violations},
						{"worst_vm_pool_share", p.worst_vm_share},
						{"pool_access_share", p.pool_share},
						{"dram_peak_bytes", p.dram_peak},
						{"moved_bytes", static_cast<uint64_t>(p.moved_mib * (1 << 20))}};
			rows.push_back({{"vms", row.vms}, {"policies", ps}});
		}
		print_json(g, {{"workload", o.workload},
			       {"decision_sha256", sim::autopilot_source_sha256()},
			       {"fit", {{"all-local", r.fit_all_local}, {"best-static", r.fit_best_static},
				        {"autopilot", r.fit_autopilot}}},
			       {"need_vms", r.need_vms},
			       {"need_bytes", {{"all-local", r.need_all_local}, {"best-static", r.need_best_static},
					       {"autopilot", r.need_autopilot}}},
			       {"rows", rows}});
		return;
	}
	std::printf("workload %s: VMs of %s, %s of DRAM, SLO %s of accesses from the pool, %u steps of %s, %s "
		    "reclaim, hot set over %u windows\n",
		    o.workload.c_str(), poolmem::format_size(in.vm_size).c_str(), poolmem::format_size(in.dram).c_str(),
		    o.slo.c_str(), in.steps, o.interval.c_str(), o.reclaim.c_str(), in.windows);
	std::printf("decision: pm_autopilot.c %s\n", sim::autopilot_source_sha256());
	Table tb({">VMS", ">ALL-LOCAL", ">STATIC:WORST", ">STEPS>SLO", ">DRAM", ">AUTOPILOT:WORST", ">STEPS>SLO", ">POOL",
		  ">DRAM", ">MOVED"});
	auto pct = [](double x) {
		char b[16];
		std::snprintf(b, sizeof(b), "%.1f%%", x * 100);
		return std::string(b);
	};
	for (const auto &row : r.rows) {
		const auto &a = row.policies[0], &st = row.policies[1], &ap = row.policies[2];
		char mv[32];
		std::snprintf(mv, sizeof(mv), "%.0f MiB", ap.moved_mib);
		tb.row({std::to_string(row.vms), a.fits ? "fits" : "-", st.fits ? pct(st.worst_vm_share) : "-",
			st.fits ? pct(st.violations) : "-", poolmem::format_size(st.dram_peak), pct(ap.worst_vm_share),
			pct(ap.violations), pct(ap.pool_share), poolmem::format_size(ap.dram_peak), mv});
	}
	tb.print();
	std::printf("VMs that fit %s, each within the SLO over the run: all-local %u, best static %u, autopilot %u\n",
		    poolmem::format_size(in.dram).c_str(), r.fit_all_local, r.fit_best_static, r.fit_autopilot);
	std::printf("DRAM for %u VMs at the SLO: all-local %s, best static %s, autopilot %s\n", r.need_vms,
		    poolmem::format_size(r.need_all_local).c_str(), poolmem::format_size(r.need_best_static).c_str(),
		    poolmem::format_size(r.need_autopilot).c_str());
}

/*
 * A trace of this host for poolctl simulate: every domain's creation (its
 * size), each chunk that became present (its first touch, an "access"
 * that allocates in the replay), each chunk that went away (a discard),
 * and each domain's end. The module does not export where a domain's
 * accesses go (tiering's heat is per domain), so a recorded trace replays
 * placement and allocation, not the access load.
 */
void run_record(const GlobalOptions &g, const RecordOptions &o)
{
	if (!(o.interval > 0) || !(o.seconds > 0))
		throw UsageError("--seconds and --interval must be above 0");
	std::ofstream out(o.out);
	if (!out)
		throw std::runtime_error(o.out + ": cannot write");
	out << "time_s,domain,offset,op\n";
	poolmem::Control ctl = open_control(g);
	struct Seen {
		uint64_t chunk = 0;
		std::vector<bool> present;
	};
	std::map<std::string, Seen> seen;
	const bool tty = isatty(STDERR_FILENO);
	const auto t0 = std::chrono::steady_clock::now();
	uint64_t rows = 0;
	for (unsigned step = 0;; step++) {
		const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		std::map<std::string, Seen> now;
		for (const auto &name : ctl.domain_names()) {
			poolmem::DomainInfo info;
			std::vector<poolmem::MapRange> map;
			try {
				info = ctl.domain_info(name);
				map = ctl.domain_map(name);
			} catch (const poolmem::Error &) {
				continue; /* destroyed meanwhile: its end is the next round's */
			}
			Seen &cur = now[name];
			cur.chunk = info.chunk_bytes;
			cur.present.assign(info.bytes / info.chunk_bytes, false);
			for (const auto &r : map)
				for (uint64_t off = r.offset; off < r.offset + r.length; off += info.chunk_bytes)
					if (off / info.chunk_bytes < cur.present.size())
						cur.present[off / info.chunk_bytes] = true;
			auto it = seen.find(name);
			char line[256];
			if (it == seen.end()) {
				std::snprintf(line, sizeof(line), "%.6f,%s,%lu,create\n", t, name.c_str(),
					      static_cast<unsigned long>(info.bytes));
				out << line;
				rows++;
			}
			for (size_t i = 0; i < cur.present.size(); i++) {
				const bool was = it != seen.end() && i < it->second.present.size() && it->second.present[i];
				if (cur.present[i] == was)
					continue;
				std::snprintf(line, sizeof(line), "%.6f,%s,%lu,%s\n", t, name.c_str(),
					      static_cast<unsigned long>(i * info.chunk_bytes), cur.present[i] ? "access" : "discard");
				out << line;
				rows++;
			}
		}
		for (const auto &[name, s] : seen)
			if (!now.count(name)) {
				char line[128];
				std::snprintf(line, sizeof(line), "%.6f,%s,0,destroy\n", t, name.c_str());
				out << line;
				rows++;
			}
		seen = std::move(now);
		out.flush();
		if (tty)
			std::fprintf(stderr, "\r%.1f/%.1f s, %zu domains, %lu rows", t, o.seconds, seen.size(),
				     static_cast<unsigned long>(rows));
		if (t >= o.seconds)
			break;
		std::this_thread::sleep_for(std::chrono::duration<double>(o.interval));
	}
	if (tty)
		std::fprintf(stderr, "\n");
	if (!out)
		throw std::runtime_error(o.out + ": write failed");
	std::printf("%s: %lu rows (create, access = first touch, discard, destroy)\n", o.out.c_str(),
		    static_cast<unsigned long>(rows));
}

} // namespace

void setup_simulate(CLI::App &app, const GlobalOptions &g)
{
	auto o = std::make_shared<SimOptions>();
	auto *sim = app.add_subcommand("simulate", "run the placement policies in a model (the module's own policy code)");
	sim->add_option("scenario", o->scenario, "scenario file (TOML, see poolctl-simulate(8))");
	sim->add_option("--tier-policy", o->tier_policy, "override the scenario's tier policy");
	sim->add_option("--pool-select", o->pool_select, "override the scenario's pool selection");
	sim->add_option("--compare", o->compare, "pool selections to run side by side, e.g. random,round-robin,nearest,smart-idle");
	sim->add_option("--tier-policies", o->tiers, "tier policies to run side by side, e.g. local-first,interleave");
	sim->add_option("--seed", o->seed, "override the scenario's seed");
	sim->add_option("--rr-start", o->rr_start,
			"where each domain's round-robin cursor starts: zero (before ABI 10), random, sequence, or "
			"salted (the module's: the host's domain count plus a per-host random salt)");
	sim->add_flag("--backpressure", o->backpressure,
		      "bounded queues: host and pool port credits hold accesses back (seed 003's NIC and switch ports)");
	sim->add_flag("--rebalance", o->rebalance,
		      "move hot chunks off contended pools (kmod/policy/pm_rebalance.c), copies charged to both pools");
	sim->add_option("--rebalance-rate", o->rebalance_rate, "bytes of chunks moved per second, at most (default 1G)")
		->type_name("SIZE");
	sim->add_flag("--free-moves", o->free_moves,
		      "with --rebalance: moves cost nothing and take no time (an upper bound on what they gain)");
	sim->add_option("--out", o->out, "write results.json, summary.csv and per-run series and CDF CSVs here");
	sim->add_flag("--json", o->json, "print JSON");
	sim->add_flag("--policy-source", o->policy_source, "print the SHA-256 of the policy source built in, and exit");
	sim->callback([&g, o, sim] {
		if (sim->get_subcommands().empty())
			run_simulate(g, *o);
	});

	auto p = std::make_shared<PlanOptions>();
	auto *pl = sim->add_subcommand("plan", "how many VMs of a size fit a host, by overcommit ratio, and the SIGBUS risk");
	pl->add_option("--host-dram", p->host_dram, "the host's DRAM for VMs")->required();
	pl->add_option("--pool", p->pool, "the host's pool memory (default 0)");
	pl->add_option("--vm-size", p->vm_size, "each VM's memory")->required();
	pl->add_option("--local-pct", p->local_pct, "each VM's local quota, % of its size (default 25)");
	pl->add_option("--touched", p->touched, "each VM touches a uniform fraction MIN:MAX of its memory (default 0.3:1.0)");
	pl->add_option("--overcommit", p->overcommit, "pool overcommit ratios (default 1,1.25,1.5,2)");
	pl->add_option("--trials", p->trials, "Monte Carlo trials per ratio (default 10000)");
	pl->add_flag("--json", p->json, "print JSON");
	pl->callback([&g, p] { run_plan(g, *p); });

	auto ao = std::make_shared<ApSimOptions>();
	auto *aps = sim->add_subcommand("autopilot", "the DRAM autopilot's decision against all-local and the best static split");
	aps->add_option("--workload", ao->workload, "stream50, stream80 (seed 000's STREAM VMs) or seed003 (its mix; default stream50)");
	aps->add_option("--vm-size", ao->vm_size, "each VM's memory (default 16G)");
	aps->add_option("--dram", ao->dram, "the host's DRAM for VMs: the budget (default 112G)");
	aps->add_option("--vms", ao->vms, "this many VMs only (default: the curve, 1 to --max-vms)");
	aps->add_option("--max-vms", ao->max_vms, "the curve's last point (default 20)");
	aps->add_option("--slo", ao->slo, "at most PCT% of a VM's accesses from the pool (default 5%)");
	aps->add_option("--rate", ao->rate, "the autopilot's quota changes per second (default 256M)");
	aps->add_option("--tier-rate", ao->tier_rate, "tiering's promotions per second (default 512M)");
	aps->add_option("--interval", ao->interval, "time between decisions (default 5s)");
	aps->add_option("--steps", ao->steps, "decisions in a run (default 720: an hour)");
	aps->add_option("--reclaim", ao->reclaim, "the decision's reclaim: lazy (default) or eager")
		->check(CLI::IsMember({"lazy", "eager"}));
	aps->add_option("--windows", ao->windows, "the hot set is the largest of this many decisions' measures (default 6)");
	aps->add_option("--seed", ao->seed, "the workload's random seed (default 1)");
	aps->add_flag("--json", ao->json, "print JSON");
	aps->callback([&g, ao] { run_apsim(g, *ao); });

	auto r = std::make_shared<RecordOptions>();
	auto *rec = sim->add_subcommand("record", "record this host's domains as a trace to replay (scenario key trace)");
	rec->add_option("out", r->out, "CSV file to write")->required();
	rec->add_option("--seconds", r->seconds, "how long to record (default 10)");
	rec->add_option("--interval", r->interval, "seconds between looks at the chunk maps (default 0.5)");
	rec->callback([&g, r] { run_record(g, *r); });
}

} // namespace poolctl
