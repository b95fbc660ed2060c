// The discrete-event engine (see sim.hpp for the model).
#include <poolmem/sim.hpp>

#include "policy/pm_policy.h"
#include "policy/pm_rebalance.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <deque>
#include <fstream>
#include <queue>
#include <random>
#include <sstream>
#include <stdexcept>

namespace poolmem::sim {

namespace {

constexpr int16_t kUnallocated = -1;
constexpr int16_t kLocal = -2;
/*
 * Latency histogram, log-linear: 1 ns bins below 4096 ns, then 256 bins
 * per power of two (error under 0.4%) up to 2^44 ns.
 */
constexpr unsigned kLinear = 4096, kSub = 256, kLinearBits = 12, kTopBits = 44;
constexpr size_t kHistBins = kLinear + (kTopBits - kLinearBits) * kSub;

size_t hist_bin(double ns)
{
	if (ns < kLinear)
		return ns < 0 ? 0 : static_cast<size_t>(ns);
	int e;
	const double m = std::frexp(ns, &e); // ns = m * 2^e, m in [0.5, 1)
	if (e > static_cast<int>(kTopBits))
		return kHistBins - 1;
	return kLinear + static_cast<size_t>(e - 1 - kLinearBits) * kSub + static_cast<size_t>((m * 2 - 1) * kSub);
}

/* The upper edge of bin @b, in ns. */
double hist_edge(size_t b)
{
	if (b < kLinear)
		return static_cast<double>(b) + 1;
	const size_t o = (b - kLinear) / kSub, k = (b - kLinear) % kSub;
	return std::ldexp(1.0 + static_cast<double>(k + 1) / kSub, static_cast<int>(o + kLinearBits));
}

/// One FIFO server: an access starts when the server is free.
struct Server {
	double free_at = 0; // ns
	/// Serve an access arriving at @now_ns: returns its wait + service.
	double serve(double now_ns, double service_ns)
	{
		const double start = std::max(now_ns, free_at);
		free_at = start + service_ns;
		return free_at - now_ns;
	}
};

/// A pool access in flight under back-pressure: from HOST to POOL, made at GEN_NS.
struct Req {
	uint32_t host, pool;
	double gen_ns;
};

struct Pool {
	PoolSpec spec;
	Server srv;
	/* back-pressure: accesses queued or in service at the port (FIFO:
	 * they finish in this order), and those the full port holds back */
	std::deque<Req> serving, held;
	uint32_t rb_over = 0; // pm_rb_pool.over between checks
	int64_t rb_shift = 0; // pm_rb_pool.shift between checks
	uint64_t capacity_chunks = 0, allocated = 0, peak = 0; // chunks
	struct pm_af af {};
	uint64_t accesses = 0, allocations = 0, window_accesses = 0;
	double lat_sum = 0;
};

struct Host {
	Server srv;
	unsigned in_flight = 0; // pool accesses holding a credit (back-pressure)
	std::deque<Req> held;	// waiting for a credit
	uint32_t seq = 0, salt = 0; // pm_rr_cursor_start(): domains made here, a salt per host
	uint64_t local_chunks = 0, local_used = 0; // chunks
	uint64_t committed = 0;			   // bytes of local quotas admitted
};

struct Vm {
	uint32_t cls = 0, host = 0;
	uint64_t id = 0;
	uint64_t nchunks = 0;
	uint64_t quota[PM_NR_TIERS] = {}, used[PM_NR_TIERS] = {}; // chunks
	uint64_t pool_quota_bytes = 0, local_quota_bytes = 0;
	std::vector<int16_t> map;
	double born = 0;
	bool alive = false;
	uint32_t cursor = 0; // the domain's round-robin cursor (d->rr_cursor)
	std::vector<pm_af> heat; // per chunk, as a pool's Af counts (rebalancing only)
	uint64_t gen = 0;    // pending ACCESS events of an older life are stale
};

enum Kind : uint32_t { ARRIVE, DEPART, ACCESS, SAMPLE, TRACE, DONE, REBALANCE, COPY, MOVED, EXTERNAL };

constexpr uint32_t kExternalHost = UINT32_MAX; // Req.host of an access from outside the model

struct Event {
	double t; // seconds
	uint64_t seq;
	uint32_t kind;
	uint32_t vm;
	uint64_t gen;
	bool operator>(const Event &o) const { return t != o.t ? t > o.t : seq > o.seq; }
};

struct TraceRow {
	double t;
	std::string domain, op;
	uint64_t offset;
};

std::vector<TraceRow> read_trace(const std::string &path)
{
	std::ifstream in(path);
	if (!in)
		throw std::runtime_error(path + ": cannot open trace");
	std::vector<TraceRow> rows;
	std::string line;
	unsigned no = 0;
	while (std::getline(in, line)) {
		no++;
		if (line.empty() || line[0] == '#' || (no == 1 && line.rfind("time", 0) == 0))
			continue;
		std::istringstream ls(line);
		std::string f[4];
		for (auto &x : f)
			if (!std::getline(ls, x, ','))
				throw std::runtime_error(path + ":" + std::to_string(no) +
							 ": want time_s,domain,offset,op");
		TraceRow r;
		try {
			r.t = std::stod(f[0]);
			r.offset = std::stoull(f[2]);
		} catch (const std::exception &) {
			throw std::runtime_error(path + ":" + std::to_string(no) + ": bad number");
		}
		r.domain = f[1];
		r.op = f[3];
		if (r.op != "create" && r.op != "access" && r.op != "discard" && r.op != "destroy")
			throw std::runtime_error(path + ":" + std::to_string(no) + ": op '" + r.op +
						 "' is not create, access, discard or destroy");
		rows.push_back(r);
	}
	std::stable_sort(rows.begin(), rows.end(), [](const TraceRow &a, const TraceRow &b) { return a.t < b.t; });
	return rows;
}

class Engine {
public:
	explicit Engine(const Scenario &s) : s_(s), rng_(s.seed), cursor_rng_(s.seed ^ 0x5a17c0deULL), hist_(kHistBins, 0)
	{
		if (s.pools.empty() || s.pools.size() > PM_MAX_POOLS)
			throw std::runtime_error(s.name + ": 1 to 64 pools");
		if (s.classes.empty() && s.trace.empty())
			throw std::runtime_error(s.name + ": no VM class");
		for (const auto &p : s.pools) {
			Pool q;
			q.spec = p;
			q.capacity_chunks = p.capacity / s.chunk;
			pools_.push_back(q);
		}
		hosts_.resize(std::max(1u, s.hosts));
		for (auto &h : hosts_) {
			h.local_chunks = s.local_per_host / s.chunk;
			h.salt = static_cast<uint32_t>(cursor_rng_()); /* the module's, drawn at load */
		}
		double w = 0;
		for (const auto &c : s.classes)
			w += c.weight;
		class_weight_ = w;
		step_ = s.series_step_s > 0 ? s.series_step_s : s.af_window_s;
	}

	Result run()
	{
		const auto t0 = std::chrono::steady_clock::now();
		if (!s_.trace.empty()) {
			trace_ = read_trace(s_.trace);
			if (!trace_.empty())
				push(trace_[0].t, TRACE, 0);
		} else {
			for (unsigned i = 0; i < s_.initial_vms; i++)
				push(0, ARRIVE, 0);
			if (s_.arrival_rate > 0)
				push(exp_draw(s_.arrival_rate), ARRIVE, 1);
		}
		push(step_, SAMPLE, 0);
		if (s_.rebalance.enabled)
			push(s_.rebalance.period_s, REBALANCE, 0);
		for (uint32_t i = 0; i < pools_.size(); i++)
			if (pools_[i].spec.external_rate > 0)
				push(pools_[i].spec.external_start_s + exp_draw(pools_[i].spec.external_rate), EXTERNAL, i);
		while (!q_.empty()) {
			const Event e = q_.top();
			if (e.t > s_.duration_s)
				break;
			q_.pop();
			now_ = e.t;
			events_++;
			vm_time_integral(e.t);
			switch (e.kind) {
			case ARRIVE:
				arrive(e.vm == 1);
				break;
			case DEPART:
				if (e.vm < vms_.size() && vms_[e.vm].alive && vms_[e.vm].gen == e.gen)
					depart(e.vm);
				break;
			case ACCESS:
				if (vms_[e.vm].alive && vms_[e.vm].gen == e.gen)
					access_event(e.vm);
				break;
			case SAMPLE:
				sample();
				push(now_ + step_, SAMPLE, 0);
				break;
			case TRACE:
				trace_event();
				break;
			case DONE:
				done(e.vm);
				break;
			case REBALANCE:
				rebalance();
				push(now_ + s_.rebalance.period_s, REBALANCE, 0);
				break;
			case COPY:
				copy_step();
				break;
			case MOVED:
				moved();
				break;
			case EXTERNAL:
				external(e.vm);
				break;
			}
		}
		vm_time_integral(s_.duration_s);
		/* the accesses in flight at the end finish: their latency counts */
		while (!q_.empty()) {
			const Event e = q_.top();
			q_.pop();
			if (e.kind == DONE) {
				now_ = e.t;
				done(e.vm);
			}
		}
		if (move_.active) { /* a copy cut off by the end: its room goes back */
			pools_[move_.dst].allocated--;
			move_.active = false;
		}
		/* every VM leaves at the end: what they held must come back exactly */
		for (uint32_t v = 0; v < vms_.size(); v++)
			if (vms_[v].alive)
				depart(v);
		Result r = result();
		r.wall_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
		return r;
	}

private:
	const Scenario &s_;
	std::mt19937_64 rng_;
	/* the cursors' random numbers: their own stream, so that the start
	 * chosen changes nothing else in a run */
	std::mt19937_64 cursor_rng_;
	std::priority_queue<Event, std::vector<Event>, std::greater<Event>> q_;
	uint64_t seq_ = 0, events_ = 0;
	double now_ = 0, step_ = 0, class_weight_ = 0;
	std::vector<Pool> pools_;
	std::vector<Host> hosts_;
	std::vector<Vm> vms_;
	std::vector<uint32_t> free_slots_;
	std::vector<TraceRow> trace_;
	size_t trace_pos_ = 0;
	std::vector<std::pair<std::string, uint32_t>> trace_vms_;
	uint64_t pool_committed_ = 0; // bytes of pool quotas admitted, all pools
	uint64_t next_id_ = 0, alive_ = 0, vms_max_ = 0, admitted_ = 0, sigbus_ = 0, enospc_ = 0;
	double vm_seconds_ = 0, last_t_ = 0;
	uint64_t accesses_ = 0, local_accesses_ = 0, chunks_alloc_ = 0, chunks_freed_ = 0;
	double lat_sum_ = 0, lat_max_ = 0;
	uint64_t over_1us_ = 0;
	std::vector<uint64_t> hist_;
	/* time series */
	std::vector<double> ts_;
	std::vector<uint64_t> imb_;
	std::vector<std::vector<uint64_t>> ts_acc_, ts_af_, ts_alloc_;
	uint64_t imb_sum_ = 0, imb_max_ = 0, imb_n_ = 0;
	/* rebalancing: the move in progress (one at a time, at the rate) */
	struct Move {
		bool active = false;
		uint32_t vm = 0, src = 0, dst = 0;
		uint64_t idx = 0, gen = 0, lines_left = 0;
	} move_;
	double move_credit_ = 0; // bytes the rate allows to move now
	uint64_t rebalanced_ = 0, chunks_moved_bytes_ = 0;

	void push(double t, uint32_t kind, uint32_t vm, uint64_t gen = 0) { q_.push({t, seq_++, kind, vm, gen}); }
	double uniform() { return std::uniform_real_distribution<double>(0, 1)(rng_); }
	double exp_draw(double rate) { return -std::log1p(-uniform()) / rate; }
	uint64_t epoch() const { return static_cast<uint64_t>(now_ / s_.af_window_s); }

	void vm_time_integral(double t)
	{
		vm_seconds_ += static_cast<double>(alive_) * (t - last_t_);
		last_t_ = t;
	}

	/* a VM's place in [0, 1) for "this fraction of the VMs": a hash of its id */
	static double burst_key(uint64_t id)
	{
		return static_cast<double>((id * 0x9E3779B97F4A7C15ULL) >> 11) / static_cast<double>(1ULL << 53);
	}

	double phase_scale(const Vm &v, bool arrivals) const
	{
		double k = 1;
		for (const auto &p : s_.phases)
			if (now_ >= p.start_s && now_ < p.end_s) {
				if (arrivals)
					k *= p.arrival_scale;
				else if (burst_key(v.id) < p.vm_fraction)
					k *= p.rate_scale;
			}
		return k;
	}

	uint32_t pick_class()
	{
		double x = uniform() * class_weight_;
		for (uint32_t i = 0; i < s_.classes.size(); i++) {
			x -= s_.classes[i].weight;
			if (x < 0)
				return i;
		}
		return static_cast<uint32_t>(s_.classes.size() - 1);
	}

	/*
	 * Admission, as the module's: the host's DRAM must hold the local
	 * quota, and the pools together, at capacity times the overcommit
	 * ratio, the pool quota (the module checks per allowed pool; every
	 * pool is allowed here). The host is the least committed one that
	 * fits.
	 */
	int admit(uint64_t size, uint32_t local_pct, uint32_t cls)
	{
		const uint64_t local = pm_profile_quota(size, s_.chunk, local_pct, 0);
		const uint64_t pool = size - local;
		uint64_t pool_limit = 0;
		for (const auto &p : pools_)
			pool_limit += static_cast<uint64_t>(static_cast<double>(p.spec.capacity) * s_.overcommit);
		const uint64_t pool_room = pool_limit > pool_committed_ ? pool_limit - pool_committed_ : 0;
		int best = -1;
		for (uint32_t h = 0; h < hosts_.size(); h++)
			if (hosts_[h].committed + local <= s_.local_per_host &&
			    (best < 0 || hosts_[h].committed < hosts_[best].committed))
				best = static_cast<int>(h);
		if (best < 0 || pool > pool_room) {
			enospc_++;
			return -1;
		}
		uint32_t slot;
		if (!free_slots_.empty()) {
			slot = free_slots_.back();
			free_slots_.pop_back();
		} else {
			slot = static_cast<uint32_t>(vms_.size());
			vms_.emplace_back();
		}
		Vm &v = vms_[slot];
		const uint64_t gen = v.gen + 1;
		v = Vm{};
		v.gen = gen;
		v.cls = cls;
		v.host = static_cast<uint32_t>(best);
		v.id = next_id_++;
		v.cursor = pm_rr_cursor_start(s_.rr_start, hosts_[best].seq++, hosts_[best].salt,
					      static_cast<u32>(cursor_rng_()));
		v.nchunks = size / s_.chunk;
		v.local_quota_bytes = local;
		v.pool_quota_bytes = pool;
		v.quota[PM_TIER_LOCAL] = local / s_.chunk;
		v.quota[PM_TIER_POOL] = pool / s_.chunk;
		v.map.assign(v.nchunks, kUnallocated);
		if (s_.rebalance.enabled)
			v.heat.assign(v.nchunks, pm_af{});
		v.born = now_;
		v.alive = true;
		hosts_[best].committed += local;
		pool_committed_ += pool;
		admitted_++;
		alive_++;
		vms_max_ = std::max(vms_max_, alive_);
		return static_cast<int>(slot);
	}

	void arrive(bool poisson)
	{
		if (poisson)
			push(now_ + exp_draw(s_.arrival_rate * phase_scale(Vm{}, true)), ARRIVE, 1);
		const uint32_t c = pick_class();
		const auto &cl = s_.classes[c];
		const int slot = admit(cl.size, cl.local_pct, c);
		if (slot < 0)
			return;
		Vm &v = vms_[slot];
		if (s_.lifetime_s > 0)
			push(now_ + exp_draw(1 / s_.lifetime_s), DEPART, slot, v.gen);
		schedule_access(static_cast<uint32_t>(slot));
	}

	void release(Vm &v)
	{
		for (auto &m : v.map) {
			if (m == kLocal)
				hosts_[v.host].local_used--;
			else if (m >= 0)
				pools_[m].allocated--;
			if (m != kUnallocated)
				chunks_freed_++;
			m = kUnallocated;
		}
		v.used[0] = v.used[1] = 0;
	}

	void depart(uint32_t slot)
	{
		Vm &v = vms_[slot];
		release(v);
		hosts_[v.host].committed -= v.local_quota_bytes;
		pool_committed_ -= v.pool_quota_bytes;
		v.alive = false;
		v.gen++;
		alive_--;
		free_slots_.push_back(slot);
	}

	void schedule_access(uint32_t slot)
	{
		const Vm &v = vms_[slot];
		const double rate = s_.classes.empty() ? 0 : s_.classes[v.cls].access_rate * phase_scale(v, false);
		if (rate > 0)
			push(now_ + exp_draw(rate), ACCESS, slot, v.gen);
	}

	uint64_t touched_chunks(const Vm &v) const
	{
		const auto &c = s_.classes[v.cls];
		double f = c.touch_end;
		if (c.ramp_s > 0)
			f = c.touch_start + (c.touch_end - c.touch_start) * std::min(1.0, (now_ - v.born) / c.ramp_s);
		const auto n = static_cast<uint64_t>(std::ceil(f * static_cast<double>(v.nchunks)));
		return std::clamp<uint64_t>(n, 1, v.nchunks);
	}

	/* The module's placement of a first-touched chunk; false: SIGBUS. */
	bool place(Vm &v, uint64_t idx)
	{
		struct pm_tier_view tv {};
		for (int t = 0; t < PM_NR_TIERS; t++) {
			tv.used[t] = v.used[t];
			tv.quota[t] = v.quota[t];
		}
		u32 tiers[PM_NR_TIERS];
		const unsigned nt = pm_tier_order(s_.tier_policy, &tv, tiers);
		for (unsigned i = 0; i < nt; i++) {
			if (tiers[i] == PM_TIER_LOCAL) {
				Host &h = hosts_[v.host];
				if (h.local_used < h.local_chunks) {
					h.local_used++;
					v.used[PM_TIER_LOCAL]++;
					v.map[idx] = kLocal;
					chunks_alloc_++;
					return true;
				}
				continue;
			}
			struct pm_pool_view views[PM_MAX_POOLS];
			u32 order[PM_MAX_POOLS];
			const auto n = static_cast<unsigned>(pools_.size());
			for (unsigned p = 0; p < n; p++) {
				views[p].id = p;
				views[p].distance = pools_[p].spec.distance;
				views[p].allocated = pools_[p].allocated * s_.chunk;
				views[p].af = s_.pool_select == PM_SELECT_SMART_IDLE ? pm_af_value(&pools_[p].af, epoch()) : 0;
			}
			const u32 rnd = s_.pool_select == PM_SELECT_RANDOM ? static_cast<u32>(rng_()) : 0;
			const unsigned no = pm_pool_order(s_.pool_select, views, n, v.cursor, rnd, order);
			for (unsigned k = 0; k < no; k++) {
				Pool &p = pools_[order[k]];
				if (p.allocated >= p.capacity_chunks)
					continue;
				p.allocated++;
				p.peak = std::max(p.peak, p.allocated);
				p.allocations++;
				if (!s_.af_counts_accesses)
					pm_af_add(&p.af, epoch(), 1);
				v.used[PM_TIER_POOL]++;
				v.map[idx] = static_cast<int16_t>(order[k]);
				v.cursor++;
				chunks_alloc_++;
				return true;
			}
		}
		return false;
	}

	void record(double ns)
	{
		accesses_++;
		lat_sum_ += ns;
		lat_max_ = std::max(lat_max_, ns);
		if (ns >= 1000)
			over_1us_++;
		hist_[hist_bin(ns)]++;
	}

	/* One access by VM @slot to chunk @idx at now_. */
	bool access(uint32_t slot, uint64_t idx)
	{
		Vm &v = vms_[slot];
		if (v.map[idx] == kUnallocated && !place(v, idx)) {
			sigbus_++;
			depart(slot);
			return false;
		}
		const double now_ns = now_ * 1e9;
		const bool det = s_.deterministic_service;
		auto service = [&](double mean) { return det ? mean : -std::log1p(-uniform()) * mean; };
		double ns;
		if (v.map[idx] == kLocal) {
			ns = s_.local_latency_ns + hosts_[v.host].srv.serve(now_ns, service(s_.local_service_ns));
			local_accesses_++;
		} else {
			const auto pool = static_cast<uint32_t>(v.map[idx]);
			Pool &p = pools_[pool];
			p.accesses++;
			p.window_accesses++;
			if (s_.af_counts_accesses)
				pm_af_add(&p.af, epoch(), 1);
			if (!v.heat.empty())
				pm_af_add(&v.heat[idx], epoch(), 1);
			if (s_.backpressure) {
				/* its latency is known when it is done (done()) */
				issue({v.host, pool, now_ns});
				return true;
			}
			ns = p.spec.latency_ns + p.srv.serve(now_ns, service(p.spec.service_ns));
			p.lat_sum += ns;
		}
		record(ns);
		return true;
	}

	/* one access to pool @i from outside the model (PoolSpec::external_rate) */
	void external(uint32_t i)
	{
		Pool &p = pools_[i];
		if (now_ >= p.spec.external_end_s)
			return;
		pm_af_add(&p.af, epoch(), 1);
		if (s_.backpressure)
			offer({kExternalHost, i, now_ * 1e9});
		else
			p.srv.serve(now_ * 1e9, service_ns(p.spec.service_ns));
		push(now_ + exp_draw(p.spec.external_rate), EXTERNAL, i);
	}

	double service_ns(double mean)
	{
		return s_.deterministic_service ? mean : -std::log1p(-uniform()) * mean;
	}

	/*
	 * Back-pressure (Scenario::backpressure). A pool access takes one of
	 * its host's credits (the NIC's outstanding requests) until it is
	 * done, or waits for one; it then enters its pool's port, or waits
	 * there while the port holds pool_credits accesses. The port's
	 * waiting accesses go in as others finish, in order; an arbiter per
	 * pool, as seed 003's switch has virtual queues per output, so one
	 * full port holds back no access to another pool, except through
	 * its host's credits.
	 */
	void issue(const Req &r)
	{
		Host &h = hosts_[r.host];
		if (h.in_flight >= s_.host_credits) {
			h.held.push_back(r);
			return;
		}
		h.in_flight++;
		offer(r);
	}

	void offer(const Req &r)
	{
		Pool &p = pools_[r.pool];
		if (p.serving.size() >= s_.pool_credits) {
			p.held.push_back(r);
			return;
		}
		enter(r);
	}

	void enter(const Req &r)
	{
		Pool &p = pools_[r.pool];
		const double now_ns = now_ * 1e9;
		const double start = std::max(now_ns, p.srv.free_at);
		p.srv.free_at = start + service_ns(p.spec.service_ns);
		p.serving.push_back(r);
		push(p.srv.free_at * 1e-9, DONE, r.pool);
	}

	void done(uint32_t pool)
	{
		Pool &p = pools_[pool];
		const Req r = p.serving.front();
		p.serving.pop_front();
		if (!p.held.empty()) {
			const Req n = p.held.front();
			p.held.pop_front();
			enter(n);
		}
		if (r.host == kExternalHost)
			return;
		const double ns = now_ * 1e9 - r.gen_ns + p.spec.latency_ns;
		p.lat_sum += ns;
		record(ns);
		Host &h = hosts_[r.host];
		h.in_flight--;
		if (!h.held.empty()) {
			const Req n = h.held.front();
			h.held.pop_front();
			h.in_flight++;
			offer(n);
		}
	}

	/*
	 * Rebalancing (Scenario::rebalance), every period: the module's
	 * decision (pm_rb_check, pm_rb_dest) over the pools' Af, then the
	 * hottest chunk of a contended pool that pm_rb_dest() gives a place
	 * to moves there. One move at a time, at the rate: a chunk's copy
	 * takes chunk/rate seconds, reading the source and writing the
	 * destination a line (64 bytes) at a time, in batches of 8 lines.
	 * The chunk's accesses go to the source until the copy is done.
	 */
	void rebalance()
	{
		const auto n = static_cast<unsigned>(pools_.size());
		pm_rb_pool rb[PM_MAX_POOLS];
		for (unsigned i = 0; i < n; i++) {
			rb[i].af = pm_af_value(&pools_[i].af, epoch());
			rb[i].free = (pools_[i].capacity_chunks - std::min(pools_[i].capacity_chunks, pools_[i].allocated)) *
				     s_.chunk;
			rb[i].over = pools_[i].rb_over;
			rb[i].shift = pools_[i].rb_shift;
		}
		pm_rb_params prm{s_.rebalance.margin_pct, s_.rebalance.periods, 0};
		const u64 contended = pm_rb_check(&prm, rb, n);
		/* what the check and this period's moves leave for the next check */
		struct Keep {
			Engine *e;
			pm_rb_pool *rb;
			unsigned n;
			~Keep()
			{
				for (unsigned i = 0; i < n; i++) {
					e->pools_[i].rb_over = rb[i].over;
					e->pools_[i].rb_shift = rb[i].shift;
				}
			}
		} keep{this, rb, n};
		/* the rate: a byte budget that fills each period (a period's worth kept at most) */
		const double fill = static_cast<double>(s_.rebalance.rate_bytes) * s_.rebalance.period_s;
		move_credit_ = std::min(move_credit_ + fill, fill + static_cast<double>(s_.chunk));
		if (!contended || move_.active || move_credit_ < static_cast<double>(s_.chunk))
			return;
		/* the hottest chunk on a contended pool that may go somewhere */
		struct Cand {
			u64 heat;
			uint32_t vm, pool;
			uint64_t idx;
		};
		std::vector<Cand> c;
		for (uint32_t slot = 0; slot < vms_.size(); slot++) {
			Vm &v = vms_[slot];
			if (!v.alive || v.heat.empty())
				continue;
			for (uint64_t i = 0; i < v.nchunks; i++)
				if (v.map[i] >= 0 && (contended >> v.map[i] & 1))
					if (const u64 h = pm_af_value(&v.heat[i], epoch()))
						c.push_back({h, slot, static_cast<uint32_t>(v.map[i]), i});
		}
		std::sort(c.begin(), c.end(), [](const Cand &a, const Cand &b) {
			return a.heat != b.heat ? a.heat > b.heat : a.vm != b.vm ? a.vm < b.vm : a.idx < b.idx;
		});
		const u64 all = n == 64 ? ~0ULL : (1ULL << n) - 1;
		for (const auto &x : c) {
			const int dst = pm_rb_dest(rb, n, x.pool, all, contended, x.heat, s_.chunk);
			if (dst < 0)
				continue;
			pm_rb_moved(rb, x.pool, static_cast<uint32_t>(dst), x.heat, s_.chunk);
			move_credit_ -= static_cast<double>(s_.chunk);
			start_move(x.vm, x.idx, x.pool, static_cast<uint32_t>(dst));
			/* a copy takes its time, one at a time; free moves go on within the budget */
			if (move_.active || move_credit_ < static_cast<double>(s_.chunk))
				return;
		}
	}

	void start_move(uint32_t slot, uint64_t idx, uint32_t src, uint32_t dst)
	{
		pools_[dst].allocated++; /* the destination's room, held from the start */
		pools_[dst].peak = std::max(pools_[dst].peak, pools_[dst].allocated);
		move_ = {true, slot, src, dst, idx, vms_[slot].gen, s_.chunk / 64};
		if (!s_.rebalance.copy) {
			moved();
			return;
		}
		copy_step();
	}

	/* one batch of the copy: 8 lines read at the source, written at the destination */
	void copy_step()
	{
		if (!move_.active)
			return;
		const uint64_t lines = std::min<uint64_t>(8, move_.lines_left);
		for (uint32_t p : {move_.src, move_.dst}) {
			Server &srv = pools_[p].srv;
			srv.free_at = std::max(now_ * 1e9, srv.free_at) +
				      static_cast<double>(lines) * pools_[p].spec.service_ns;
		}
		move_.lines_left -= lines;
		const double gap = static_cast<double>(lines * 64) / static_cast<double>(s_.rebalance.rate_bytes);
		push(now_ + gap, move_.lines_left ? COPY : MOVED, 0);
	}

	void moved()
	{
		if (!move_.active)
			return;
		move_.active = false;
		Vm &v = vms_[move_.vm];
		if (!v.alive || v.gen != move_.gen || v.map[move_.idx] != static_cast<int16_t>(move_.src)) {
			pools_[move_.dst].allocated--; /* the VM left, or the chunk went, meanwhile */
			return;
		}
		v.map[move_.idx] = static_cast<int16_t>(move_.dst);
		pools_[move_.src].allocated--;
		chunks_moved_bytes_ += s_.chunk;
		rebalanced_++;
	}

	void access_event(uint32_t slot)
	{
		const Vm &v = vms_[slot];
		const auto &c = s_.classes[v.cls];
		const uint64_t n = touched_chunks(v);
		uint64_t idx;
		const auto hot = static_cast<uint64_t>(c.hot_fraction * static_cast<double>(n));
		if (hot > 0 && hot < n && uniform() < c.hot_share)
			idx = static_cast<uint64_t>(uniform() * static_cast<double>(hot));
		else if (hot > 0 && hot < n)
			idx = hot + static_cast<uint64_t>(uniform() * static_cast<double>(n - hot));
		else
			idx = static_cast<uint64_t>(uniform() * static_cast<double>(n));
		if (access(slot, std::min(idx, n - 1)))
			schedule_access(slot);
	}

	void trace_event()
	{
		const TraceRow &r = trace_[trace_pos_++];
		auto find = [&]() -> int {
			for (const auto &[name, slot] : trace_vms_)
				if (name == r.domain && vms_[slot].alive)
					return static_cast<int>(slot);
			return -1;
		};
		const int slot = find();
		if (r.op == "create") {
			const uint32_t pct = s_.classes.empty() ? 25 : s_.classes[0].local_pct;
			const uint64_t size = (r.offset + s_.chunk - 1) / s_.chunk * s_.chunk;
			if (slot < 0 && size) {
				const int ns = admit(size, pct, 0);
				if (ns >= 0)
					trace_vms_.emplace_back(r.domain, static_cast<uint32_t>(ns));
			}
		} else if (slot >= 0) {
			Vm &v = vms_[slot];
			const uint64_t idx = r.offset / s_.chunk;
			if (r.op == "destroy") {
				depart(static_cast<uint32_t>(slot));
			} else if (idx < v.nchunks && r.op == "access") {
				access(static_cast<uint32_t>(slot), idx);
			} else if (idx < v.nchunks && r.op == "discard" && v.map[idx] != kUnallocated) {
				if (v.map[idx] == kLocal) {
					hosts_[v.host].local_used--;
					v.used[PM_TIER_LOCAL]--;
				} else {
					pools_[v.map[idx]].allocated--;
					v.used[PM_TIER_POOL]--;
				}
				v.map[idx] = kUnallocated;
				chunks_freed_++;
			}
		}
		if (trace_pos_ < trace_.size())
			push(trace_[trace_pos_].t, TRACE, 0);
	}

	void sample()
	{
		uint64_t mx = 0, mn = UINT64_MAX;
		std::vector<uint64_t> acc, af, alloc;
		for (auto &p : pools_) {
			mx = std::max(mx, p.window_accesses);
			mn = std::min(mn, p.window_accesses);
			acc.push_back(p.window_accesses);
			af.push_back(pm_af_value(&p.af, epoch()));
			alloc.push_back(p.allocated * s_.chunk);
			p.window_accesses = 0;
		}
		ts_.push_back(now_);
		imb_.push_back(mx - mn);
		ts_acc_.push_back(acc);
		ts_af_.push_back(af);
		ts_alloc_.push_back(alloc);
		imb_sum_ += mx - mn;
		imb_max_ = std::max(imb_max_, mx - mn);
		imb_n_++;
	}

	double percentile(double q) const
	{
		const auto want = static_cast<uint64_t>(std::ceil(q * static_cast<double>(accesses_)));
		uint64_t seen = 0;
		for (size_t i = 0; i < hist_.size(); i++) {
			seen += hist_[i];
			if (seen >= want && want)
				return std::min(hist_edge(i), lat_max_);
		}
		return lat_max_;
	}

	Result result() const
	{
		Result r;
		r.tier_policy = tier_policy_name(s_.tier_policy);
		r.pool_select = pool_select_name(s_.pool_select);
		r.events = events_;
		r.accesses = accesses_;
		r.local_accesses = local_accesses_;
		r.mean_ns = accesses_ ? lat_sum_ / static_cast<double>(accesses_) : 0;
		r.p50_ns = percentile(0.5);
		r.p99_ns = percentile(0.99);
		r.p999_ns = percentile(0.999);
		r.max_ns = lat_max_;
		r.over_1us = accesses_ ? static_cast<double>(over_1us_) / static_cast<double>(accesses_) : 0;
		r.chunks_allocated = chunks_alloc_;
		r.chunks_freed = chunks_freed_;
		r.sigbus = sigbus_;
		r.enospc = enospc_;
		r.vms_admitted = admitted_;
		r.vms_max = vms_max_;
		r.vms_mean = s_.duration_s > 0 ? vm_seconds_ / s_.duration_s : 0;
		r.imbalance_mean = imb_n_ ? static_cast<double>(imb_sum_) / static_cast<double>(imb_n_) : 0;
		r.imbalance_max = imb_max_;
		for (const auto &p : pools_)
			r.pools.push_back({p.spec.name, p.accesses, p.allocations, p.allocated * s_.chunk, p.peak * s_.chunk,
					   p.accesses ? p.lat_sum / static_cast<double>(p.accesses) : 0});
		r.t = ts_;
		r.imbalance = imb_;
		r.pool_accesses = ts_acc_;
		r.pool_af = ts_af_;
		r.pool_allocated = ts_alloc_;
		r.rebalanced_chunks = rebalanced_;
		r.rebalanced_mib_s = s_.duration_s > 0 ? static_cast<double>(chunks_moved_bytes_) / 1048576.0 / s_.duration_s : 0;
		/* the CDF at about 200 points, denser where it rises */
		uint64_t seen = 0, next = 0;
		const uint64_t step = std::max<uint64_t>(1, accesses_ / 200);
		for (size_t i = 0; i < hist_.size() && accesses_; i++) {
			seen += hist_[i];
			if (hist_[i] && (seen >= next || seen == accesses_)) {
				r.cdf.emplace_back(std::min(hist_edge(i), lat_max_),
						   static_cast<double>(seen) / static_cast<double>(accesses_));
				next = seen + step;
			}
		}
		return r;
	}
};

} // namespace

Result simulate(const Scenario &s) { return Engine(s).run(); }

std::string tier_policy_name(uint32_t p) { return p < PM_NR_TIER_POLICIES ? pm_tier_policy_names[p] : "?"; }
std::string pool_select_name(uint32_t p) { return p < PM_NR_POOL_SELECTS ? pm_pool_select_names[p] : "?"; }

uint32_t parse_tier_policy_name(const std::string &s)
{
	const int i = pm_name_index(pm_tier_policy_names, PM_NR_TIER_POLICIES, s.c_str());
	if (i < 0)
		throw std::invalid_argument("unknown tier policy '" + s + "' (local-first, interleave, pool-first)");
	return static_cast<uint32_t>(i);
}

uint32_t parse_pool_select_name(const std::string &s)
{
	const int i = pm_name_index(pm_pool_select_names, PM_NR_POOL_SELECTS, s.c_str());
	if (i < 0)
		throw std::invalid_argument("unknown pool selection '" + s +
					    "' (round-robin, random, nearest, smart-idle)");
	return static_cast<uint32_t>(i);
}

/*
 * Capacity planning for one host. Admission is the module's: the local
 * quotas must fit the host's DRAM, the pool quotas the pool at capacity
 * times the overcommit ratio. A VM touches a uniform fraction of its
 * memory; with local-first, the touched part beyond the local quota is
 * pool memory. The risk is the share of Monte Carlo trials in which the
 * VMs' touched pool memory exceeds the pool (some fault then gets
 * SIGBUS: quotas are hard, the pool is not there).
 */
Plan plan(const PlanInput &in)
{
	if (!in.vm_size || !in.host_dram)
		throw std::invalid_argument("plan: the host's DRAM and the VM size must be set");
	Plan out;
	out.dram_only_vms = static_cast<unsigned>(in.host_dram / in.vm_size);
	const uint64_t local = pm_pct_of(in.vm_size, in.local_pct);
	const uint64_t pool = in.vm_size - local;
	std::mt19937_64 rng(in.seed);
	std::uniform_real_distribution<double> touch(in.touched_min, in.touched_max);
	for (double oc : in.overcommit) {
		PlanRow row;
		row.overcommit = oc;
		const unsigned by_local = local ? static_cast<unsigned>(in.host_dram / local) : UINT32_MAX;
		const unsigned by_pool =
			pool ? static_cast<unsigned>(static_cast<double>(in.pool_capacity) * oc / static_cast<double>(pool))
			     : UINT32_MAX;
		row.vms = std::min(by_local, by_pool);
		if (row.vms == UINT32_MAX)
			row.vms = 0;
		row.density = out.dram_only_vms ? static_cast<double>(row.vms) / out.dram_only_vms : 0;
		unsigned over = 0;
		double touched_sum = 0;
		for (unsigned t = 0; t < in.trials; t++) {
			double pool_touched = 0;
			for (unsigned v = 0; v < row.vms; v++) {
				const double bytes = touch(rng) * static_cast<double>(in.vm_size);
				pool_touched += std::max(0.0, bytes - static_cast<double>(local));
			}
			touched_sum += pool_touched;
			if (pool_touched > static_cast<double>(in.pool_capacity))
				over++;
		}
		row.sigbus_risk = in.trials ? static_cast<double>(over) / in.trials : 0;
		row.pool_touched_mean = in.trials ? touched_sum / in.trials : 0;
		out.rows.push_back(row);
	}
	return out;
}

} // namespace poolmem::sim

namespace poolmem::sim {
const char *policy_source_sha256() { return PM_POLICY_SHA256; }
const char *rebalance_source_sha256() { return PM_REBALANCE_SHA256; }
} // namespace poolmem::sim
