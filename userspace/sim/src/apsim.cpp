// The DRAM autopilot replayed: see apsim.hpp.
#include <poolmem/apsim.hpp>

#include <policy/pm_autopilot.h>

#include <algorithm>
#include <cmath>
#include <random>
#include <stdexcept>

namespace poolmem::sim {

namespace {

constexpr uint64_t chunk = 2ULL << 20;

uint64_t round_up(uint64_t v) { return (v + chunk - 1) / chunk * chunk; }

/// Each VM's active fraction of its memory at every step.
std::vector<std::vector<double>> active_sets(const ApSimInput &in, unsigned n)
{
	std::vector<std::vector<double>> out(n, std::vector<double>(in.steps));
	const double per_min = 60.0 / in.interval_s; /* steps a minute */
	for (unsigned v = 0; v < n; v++) {
		std::mt19937_64 rng(in.seed * 1000003 + v);
		std::uniform_real_distribution<double> u(0, 1);
		auto &a = out[v];
		/* STREAM in runs with idle gaps between (10 min each on average) */
		auto bursts = [&](double on, double off_level) {
			bool running = u(rng) < 0.5;
			double left = -std::log(1 - u(rng)) * 10 * per_min;
			for (unsigned t = 0; t < in.steps; t++) {
				if (left <= 0) {
					running = !running;
					left = -std::log(1 - u(rng)) * 10 * per_min;
				}
				left -= 1;
				a[t] = running ? on : off_level;
			}
		};
		switch (in.workload) {
		case ApWorkload::Stream50:
			bursts(0.5, 0.05);
			break;
		case ApWorkload::Stream80:
			bursts(0.8, 0.05);
			break;
		case ApWorkload::Seed003: {
			const double phase = u(rng) * 2 * M_PI;
			for (unsigned t = 0; t < in.steps; t++) {
				const double m = t / per_min; /* minutes */
				switch (v % 4) {
				case 0: /* lbm: a steady, large stencil */
					a[t] = 0.75;
					break;
				case 1: /* fotonik: grows and restarts, 20 min cycles */
					a[t] = 0.3 + 0.4 * std::fmod(m / 20 + phase, 1.0);
					break;
				case 2: /* fft: phases of 2-4 min, small or large */
					a[t] = std::fmod(std::floor(m / 3 + phase), 2.0) < 1 ? 0.2 : 0.9;
					break;
				default: /* fmm: moderate, wandering */
					a[t] = 0.4 + 0.1 * std::sin(m / 7 + phase);
					break;
				}
			}
			break;
		}
		}
	}
	return out;
}

enum class Policy { AllLocal, BestStatic, Autopilot };

/*
 * Run POLICY for N VMs with DRAM budget BUDGET; fills R. STATIC gives the
 * best static split's quotas. A VM's resident local memory stays when its
 * active set shrinks (the data is still there) and goes only when its
 * quota comes down; the part of the active set it holds is served
 * locally, and the rest grows into it at tiering's rate.
 */
void run(const ApSimInput &in, const std::vector<std::vector<double>> &act, unsigned n, Policy policy,
	 uint64_t budget, const std::vector<uint64_t> &statics, ApPolicyResult &r)
{
	const double size = static_cast<double>(in.vm_size);
	const double promote = static_cast<double>(in.tier_rate) * in.interval_s;
	std::vector<uint64_t> quota(n);
	std::vector<double> resident(n, 0), share(n, 0), peak(n, 0), vm_pool(n, 0), vm_all(n, 0);
	std::vector<std::vector<uint64_t>> seen(n);
	for (unsigned v = 0; v < n; v++)
		quota[v] = policy == Policy::AllLocal	  ? in.vm_size
			   : policy == Policy::BestStatic ? statics[v]
							  : std::min(in.vm_size, budget / n / chunk * chunk); /* an even start */
	uint64_t viol = 0;
	double pool_acc = 0, all_acc = 0, moved = 0;
	r.fits = true;
	r.dram_peak = 0;
	for (unsigned t = 0; t < in.steps; t++) {
		if (policy == Policy::Autopilot && t > 0) {
			/* the decision from what the last interval measured */
			std::vector<pm_ap_vm> vm(n);
			for (unsigned v = 0; v < n; v++) {
				auto &s = seen[v];
				s.push_back(round_up(static_cast<uint64_t>(act[v][t - 1] * size)));
				if (s.size() > in.windows)
					s.erase(s.begin());
				peak[v] = std::max(peak[v], act[v][t - 1]);
				vm[v] = pm_ap_vm{};
				vm[v].size = in.vm_size;
				vm[v].min = 0;
				vm[v].max = in.vm_size;
				vm[v].local_quota = quota[v];
				vm[v].chunk = chunk;
				vm[v].hot = *std::max_element(s.begin(), s.end());
				vm[v].untouched = in.vm_size - std::min(in.vm_size, round_up(static_cast<uint64_t>(peak[v] * size)));
				vm[v].local_used = static_cast<uint64_t>(resident[v]);
				vm[v].pool_permille = static_cast<uint32_t>(share[v] * 1000);
				vm[v].slo_permille = in.slo_permille;
			}
			pm_ap_host h{};
			h.budget = budget;
			h.step = static_cast<uint64_t>(static_cast<double>(in.rate) * in.interval_s);
			h.margin_pct = in.margin_pct;
			h.hysteresis_pct = in.hysteresis_pct;
			h.eager = in.eager;
			unsigned bad = 0;
			if (pm_ap_decide(&h, vm.data(), n, &bad) != PM_AP_OK)
				throw std::logic_error("pm_ap_decide refused the model's input");
			for (unsigned v = 0; v < n; v++)
				quota[v] = vm[v].target;
		}
		uint64_t sum = 0;
		for (unsigned v = 0; v < n; v++) {
			const double a = act[v][t] * size, q = static_cast<double>(quota[v]);
			if (resident[v] > q) {
				moved += resident[v] - q; /* a shrunk quota sends it to the pool */
				resident[v] = q;
			}
			if (policy == Policy::AllLocal) {
				resident[v] = std::max(resident[v], a); /* DRAM alone: all of it is local */
			} else if (std::min(q, a) > resident[v]) {
				const double up = std::min(std::min(q, a) - resident[v], promote);
				resident[v] += up;
				moved += up;
			}
			const double here = std::min(resident[v], a);
			share[v] = a > 0 ? (a - here) / a : 0;
			if (share[v] * 1000 > in.slo_permille + 1e-9)
				viol++;
			pool_acc += a - here;
			all_acc += a;
			vm_pool[v] += a - here;
			vm_all[v] += a;
			sum += quota[v];
		}
		r.dram_peak = std::max(r.dram_peak, sum);
		if (sum > budget)
			r.fits = false;
	}
	r.violations = static_cast<double>(viol) / (static_cast<double>(n) * in.steps);
	r.pool_share = all_acc > 0 ? pool_acc / all_acc : 0;
	r.worst_vm_share = 0;
	for (unsigned v = 0; v < n; v++)
		r.worst_vm_share = std::max(r.worst_vm_share, vm_all[v] > 0 ? vm_pool[v] / vm_all[v] : 0);
	r.moved_mib = moved / (1 << 20);
}

bool ok(const ApPolicyResult &r, uint32_t slo_permille)
{
	return r.fits && r.worst_vm_share * 1000 <= slo_permille + 1e-9;
}

/*
 * The best static split in hindsight: each VM's smallest fixed quota (in
 * chunks) under which its pool share over this very run meets the SLO.
 * Static VMs don't interact, so each is searched alone.
 */
std::vector<uint64_t> best_statics(const ApSimInput &in, const std::vector<std::vector<double>> &act, unsigned n)
{
	std::vector<uint64_t> out(n);
	for (unsigned v = 0; v < n; v++) {
		const std::vector<std::vector<double>> one{act[v]};
		uint64_t lo = 0, hi = in.vm_size / chunk;
		while (lo < hi) {
			const uint64_t mid = (lo + hi) / 2;
			ApPolicyResult r;
			run(in, one, 1, Policy::BestStatic, UINT64_MAX, {mid * chunk}, r);
			if (ok(r, in.slo_permille))
				hi = mid;
			else
				lo = mid + 1;
		}
		out[v] = hi * chunk;
	}
	return out;
}

const char *policy_name(Policy p)
{
	return p == Policy::AllLocal ? "all-local" : p == Policy::BestStatic ? "best-static" : "autopilot";
}

} // namespace

ApSimResult simulate_autopilot(const ApSimInput &in)
{
	if (!in.vm_size || in.vm_size % chunk || !in.steps || in.slo_permille > 1000 || !in.dram || in.interval_s <= 0)
		throw std::invalid_argument("autopilot model: the VM size must be a multiple of 2 MiB, and steps, DRAM "
					    "and the interval above 0, the SLO at most 100%");
	ApSimResult res;
	const unsigned lo = in.vms ? in.vms : 1, hi = in.vms ? in.vms : in.max_vms;
	const auto act = active_sets(in, hi);
	const auto statics = best_statics(in, act, hi);
	bool all_ok = true, static_ok = true, auto_ok = true;
	for (unsigned n = lo; n <= hi; n++) {
		ApSimRow row;
		row.vms = n;
		for (Policy p : {Policy::AllLocal, Policy::BestStatic, Policy::Autopilot}) {
			ApPolicyResult r;
			r.policy = policy_name(p);
			if (p == Policy::Autopilot && in.dram < n * chunk)
				r.fits = false; /* not a chunk each */
			else
				run(in, act, n, p, in.dram, statics, r);
			row.policies.push_back(r);
		}
		all_ok = all_ok && ok(row.policies[0], in.slo_permille);
		static_ok = static_ok && ok(row.policies[1], in.slo_permille);
		auto_ok = auto_ok && ok(row.policies[2], in.slo_permille);
		if (all_ok)
			res.fit_all_local = n;
		if (static_ok)
			res.fit_best_static = n;
		if (auto_ok)
			res.fit_autopilot = n;
		res.rows.push_back(std::move(row));
	}
	/* DRAM each policy needs for the SLO at need_vms VMs */
	res.need_vms = in.vms ? in.vms : std::max(1u, res.fit_all_local);
	const unsigned n = res.need_vms;
	res.need_all_local = n * in.vm_size;
	for (unsigned v = 0; v < n; v++)
		res.need_best_static += statics[v];
	/* the smallest budget, in 256 MiB steps, at which the autopilot keeps every VM within the SLO */
	const uint64_t unit = 256ULL << 20;
	uint64_t lo_b = 0, hi_b = (n * in.vm_size + unit - 1) / unit;
	while (lo_b < hi_b) {
		const uint64_t mid = (lo_b + hi_b) / 2;
		ApPolicyResult r;
		run(in, act, n, Policy::Autopilot, std::max<uint64_t>(mid * unit, n * chunk), statics, r);
		if (ok(r, in.slo_permille))
			hi_b = mid;
		else
			lo_b = mid + 1;
	}
	res.need_autopilot = std::max<uint64_t>(hi_b * unit, n * chunk);
	return res;
}

ApWorkload parse_ap_workload(const std::string &s)
{
	if (s == "stream50")
		return ApWorkload::Stream50;
	if (s == "stream80")
		return ApWorkload::Stream80;
	if (s == "seed003")
		return ApWorkload::Seed003;
	throw std::invalid_argument("unknown workload '" + s + "' (stream50, stream80, seed003)");
}

std::string ap_workload_name(ApWorkload w)
{
	return w == ApWorkload::Stream50 ? "stream50" : w == ApWorkload::Stream80 ? "stream80" : "seed003";
}

const char *autopilot_source_sha256() { return PM_AUTOPILOT_SHA256; }

} // namespace poolmem::sim
