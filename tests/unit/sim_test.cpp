// The policy simulator keeps to its model: queueing theory where it has an
// answer, conservation of chunks and accesses, determinism, the module's
// admission and SIGBUS rules, and the planner's arithmetic.
#include <poolmem/sim.hpp>

#include <gtest/gtest.h>

#include <cmath>

using namespace poolmem::sim;

namespace {

/* One VM on one pool, no local memory: every access goes to the pool. */
Scenario single_queue(double rho, double service_ns, bool deterministic)
{
	Scenario s;
	s.name = "mm1";
	s.seed = 7;
	s.duration_s = 0.4;
	s.chunk = 4ULL << 20;
	s.hosts = 1;
	s.local_per_host = 0;
	PoolSpec p;
	p.name = "p0";
	p.capacity = 1ULL << 30;
	p.service_ns = service_ns;
	p.latency_ns = 0;
	s.pools = {p};
	s.deterministic_service = deterministic;
	s.tier_policy = 0; // local-first, with no local quota
	s.pool_select = 0;
	s.initial_vms = 1;
	VmClass c;
	c.size = 64ULL << 20;
	c.local_pct = 0;
	c.touch_start = c.touch_end = 1;
	c.access_rate = rho / (service_ns * 1e-9);
	s.classes = {c};
	return s;
}

Scenario churn(uint64_t seed)
{
	Scenario s;
	s.name = "churn";
	s.seed = seed;
	s.duration_s = 0.02;
	s.chunk = 4ULL << 20;
	s.hosts = 8;
	s.local_per_host = 512ULL << 20;
	for (int i = 0; i < 4; i++) {
		PoolSpec p;
		p.name = "p" + std::to_string(i);
		p.capacity = 2ULL << 30;
		p.distance = 20 + i;
		s.pools.push_back(p);
	}
	s.tier_policy = 1;
	s.pool_select = 3;
	s.initial_vms = 8;
	s.arrival_rate = 2000;
	s.lifetime_s = 0.004;
	VmClass a, b;
	a.size = 512ULL << 20;
	a.touch_start = 0.1;
	a.touch_end = 0.9;
	a.ramp_s = 0.003;
	a.access_rate = 2e5;
	b = a;
	b.size = 1ULL << 30;
	b.local_pct = 50;
	b.hot_fraction = 0.2;
	b.hot_share = 0.8;
	s.classes = {a, b};
	Phase ph;
	ph.start_s = 0.005;
	ph.end_s = 0.01;
	ph.rate_scale = 4;
	ph.vm_fraction = 0.3;
	s.phases = {ph};
	return s;
}

/*
 * Every VM left at the end: every chunk came back and no pool holds any;
 * every access is counted once, in a pool or local. Returns the pools'.
 */
uint64_t expect_conserved(const Result &r)
{
	EXPECT_EQ(r.chunks_allocated, r.chunks_freed);
	uint64_t pool_acc = 0;
	for (const auto &p : r.pools) {
		EXPECT_EQ(p.allocated_end, 0u) << p.name;
		pool_acc += p.accesses;
	}
	EXPECT_EQ(pool_acc + r.local_accesses, r.accesses);
	return pool_acc;
}

} // namespace

TEST(Sim, MM1MeanSojournMatchesTheory)
{
	for (double rho : {0.3, 0.5, 0.7}) {
		const Result r = simulate(single_queue(rho, 100, false));
		const double want = 100 / (1 - rho); // M/M/1: E[T] = S / (1 - rho)
		EXPECT_GT(r.accesses, 500000u);
		EXPECT_NEAR(r.mean_ns, want, want * 0.05) << "rho " << rho;
		EXPECT_EQ(r.local_accesses, 0u);
	}
}

TEST(Sim, MD1MeanSojournMatchesTheory)
{
	const double rho = 0.6, S = 100;
	const Result r = simulate(single_queue(rho, S, true));
	const double want = S + rho * S / (2 * (1 - rho)); // Pollaczek-Khinchine, deterministic service
	EXPECT_NEAR(r.mean_ns, want, want * 0.05);
}

TEST(Sim, ConservesChunksAndAccesses)
{
	const Result r = simulate(churn(11));
	EXPECT_GT(r.vms_admitted, 20u);
	EXPECT_GT(r.chunks_allocated, 1000u);
	const uint64_t pool_acc = expect_conserved(r);
	/* the series' per-window accesses add up to the pools' (up to the last partial window) */
	uint64_t series = 0;
	for (const auto &w : r.pool_accesses)
		for (uint64_t a : w)
			series += a;
	EXPECT_LE(series, pool_acc);
	EXPECT_GT(series, pool_acc * 9 / 10);
}

TEST(Sim, SameSeedSameResult)
{
	const Result a = simulate(churn(5)), b = simulate(churn(5)), c = simulate(churn(6));
	EXPECT_EQ(a.accesses, b.accesses);
	EXPECT_EQ(a.mean_ns, b.mean_ns);
	EXPECT_EQ(a.p999_ns, b.p999_ns);
	EXPECT_EQ(a.imbalance, b.imbalance);
	for (size_t i = 0; i < a.pools.size(); i++)
		EXPECT_EQ(a.pools[i].allocations, b.pools[i].allocations);
	EXPECT_NE(a.accesses, c.accesses);
}

TEST(Sim, AdmissionRefusesAndExhaustionKills)
{
	Scenario s = churn(3);
	s.overcommit = 0.05; // the pools admit almost nothing
	Result r = simulate(s);
	EXPECT_GT(r.enospc, 0u);
	EXPECT_EQ(r.sigbus, 0u);

	s = churn(3);
	s.overcommit = 8; // admitted far beyond what the pools hold ...
	for (auto &p : s.pools)
		p.capacity = 64ULL << 20; // ... and they hold little
	r = simulate(s);
	EXPECT_GT(r.sigbus, 0u);
	EXPECT_EQ(r.chunks_allocated, r.chunks_freed);
}

TEST(Sim, NearestFillsTheNearestPoolFirst)
{
	Scenario s = churn(4);
	s.pool_select = 2; // nearest: p0 has the lowest distance
	s.arrival_rate = 0;
	s.lifetime_s = 0;
	for (auto &p : s.pools)
		p.capacity = 16ULL << 30; // p0 holds every VM's pool quota
	const Result r = simulate(s);
	EXPECT_GT(r.pools[0].allocations, 0u);
	EXPECT_EQ(r.pools[1].allocations + r.pools[2].allocations + r.pools[3].allocations, 0u);
}

TEST(Sim, PlanArithmetic)
{
	PlanInput in;
	in.host_dram = 128ULL << 30;
	in.pool_capacity = 256ULL << 30;
	in.vm_size = 16ULL << 30;
	in.local_pct = 25;
	in.touched_min = in.touched_max = 1.0;
	in.overcommit = {1.0, 1.25};
	in.trials = 100;
	const Plan p = plan(in);
	EXPECT_EQ(p.dram_only_vms, 8u);
	ASSERT_EQ(p.rows.size(), 2u);
	EXPECT_EQ(p.rows[0].vms, 21u); // 256G / 12G of pool quota each
	EXPECT_DOUBLE_EQ(p.rows[0].sigbus_risk, 0);
	EXPECT_EQ(p.rows[1].vms, 26u);
	EXPECT_DOUBLE_EQ(p.rows[1].sigbus_risk, 1); // 26 x 12G touched > 256G
}

TEST(Sim, PolicyNamesAreTheKernels)
{
	EXPECT_EQ(parse_pool_select_name("smart-idle"), 3u);
	EXPECT_EQ(tier_policy_name(1), "interleave");
	EXPECT_THROW(parse_pool_select_name("fastest"), std::invalid_argument);
}

/* ---- the DRAM autopilot replayed (poolctl simulate autopilot) ---- */

#include <poolmem/apsim.hpp>

namespace {

poolmem::sim::ApSimInput ap_input(poolmem::sim::ApWorkload w)
{
	poolmem::sim::ApSimInput in;
	in.workload = w;
	in.max_vms = 12;
	in.steps = 240;
	return in;
}

TEST(ApSim, AllLocalFitsTheDramAndTheRulesHold)
{
	for (auto w : {poolmem::sim::ApWorkload::Stream50, poolmem::sim::ApWorkload::Stream80,
		       poolmem::sim::ApWorkload::Seed003}) {
		const auto in = ap_input(w);
		const auto r = poolmem::sim::simulate_autopilot(in);
		/* DRAM alone: 112 GiB holds 7 VMs of 16 GiB, as seed 000's host */
		EXPECT_EQ(r.fit_all_local, 7u);
		ASSERT_EQ(r.rows.size(), in.max_vms);
		for (const auto &row : r.rows) {
			const auto &all = row.policies[0], &st = row.policies[1], &ap = row.policies[2];
			EXPECT_EQ(all.fits, row.vms <= 7) << row.vms;
			EXPECT_DOUBLE_EQ(all.pool_share, 0) << row.vms;
			/* the hindsight split meets the SLO by construction, wherever it fits */
			EXPECT_LE(st.worst_vm_share, 0.05 + 1e-9) << row.vms;
			/* the autopilot never holds more local quota than the budget */
			EXPECT_LE(ap.dram_peak, in.dram) << row.vms;
			EXPECT_TRUE(ap.fits) << row.vms;
		}
		/* the pooled policies fit more VMs than DRAM alone */
		EXPECT_GT(r.fit_best_static, r.fit_all_local);
		EXPECT_LE(r.need_best_static, r.need_all_local);
		EXPECT_LE(r.need_autopilot, r.need_all_local);
	}
}

TEST(ApSim, SameSeedSameResultAndTheDecisionMatters)
{
	auto in = ap_input(poolmem::sim::ApWorkload::Stream50);
	in.vms = 7;
	const auto a = poolmem::sim::simulate_autopilot(in), b = poolmem::sim::simulate_autopilot(in);
	EXPECT_EQ(a.need_autopilot, b.need_autopilot);
	EXPECT_DOUBLE_EQ(a.rows[0].policies[2].worst_vm_share, b.rows[0].policies[2].worst_vm_share);
	/* on bursty STREAM the autopilot needs less DRAM than DRAM alone by far */
	EXPECT_LT(a.need_autopilot, a.need_all_local * 6 / 10);
	/* a starved budget breaks the SLO: the result reflects the decision's input */
	in.dram = 16ULL << 30;
	const auto c = poolmem::sim::simulate_autopilot(in);
	EXPECT_GT(c.rows[0].policies[2].worst_vm_share, 0.05);
}

} // namespace

/* Back-pressure (Scenario::backpressure): where an access waits changes, not the order a FIFO serves. */
TEST(Sim, BackpressureKeepsOneQueuesTheory)
{
	for (unsigned credits : {1u, 4u, 1000u}) {
		Scenario s = single_queue(0.5, 100, false);
		s.backpressure = true;
		s.host_credits = credits;
		s.pool_credits = credits;
		const Result r = simulate(s);
		EXPECT_GT(r.accesses, 500000u);
		EXPECT_NEAR(r.mean_ns, 200, 10) << "credits " << credits; /* M/M/1: S / (1 - rho) */
	}
}

TEST(Sim, BackpressureConservesChunksAndAccesses)
{
	Scenario s = churn(11);
	s.backpressure = true;
	s.host_credits = 2;
	s.pool_credits = 4;
	/* every access made is done and counted, those in flight at the end too */
	expect_conserved(simulate(s));
}

/* A host whose credits wait at a slow pool holds back its accesses to a fast one. */
TEST(Sim, BackpressureSpreadsASlowPoolsWaitToItsSenders)
{
	Scenario s = single_queue(0.5, 100, false);
	s.pool_select = 0; /* round-robin: the VM's chunks alternate between the pools */
	PoolSpec fast = s.pools[0];
	fast.name = "p1";
	fast.service_ns = 1;
	s.pools.push_back(fast);
	s.pools[0].service_ns = 300; /* p0 gets half the accesses: rho 0.75 there */
	s.duration_s = 0.1;
	const Result open = simulate(s);
	s.backpressure = true;
	s.host_credits = 2;
	const Result bp = simulate(s);
	EXPECT_LT(open.pools[1].mean_ns, 10);
	EXPECT_GT(bp.pools[1].mean_ns, 10 * open.pools[1].mean_ns);
}

namespace {

/* Three pools, eight hosts; from 2 ms on, p0 carries other hosts' load. */
Scenario busy(bool external)
{
	Scenario s = churn(3);
	s.arrival_rate = 0;
	s.lifetime_s = 0;
	s.phases.clear();
	s.duration_s = 0.012;
	s.pools.resize(3);
	for (auto &p : s.pools)
		p.service_ns = 100;
	if (external) {
		s.pools[0].external_rate = 8e6; /* 80% of its service rate */
		s.pools[0].external_start_s = 0.002;
	}
	for (auto &c : s.classes)
		c.access_rate = 4e5;
	s.rebalance.period_s = 200e-6;
	s.rebalance.copy = false;
	s.rebalance.rate_bytes = 16ULL << 30;
	return s;
}

} // namespace

TEST(Sim, RebalanceMovesHotChunksOffABusyPoolOnly)
{
	Scenario s = busy(true);
	const Result before = simulate(s);
	s.rebalance.enabled = true;
	const Result after = simulate(s);
	EXPECT_GT(after.rebalanced_chunks, 0u);
	EXPECT_LT(after.pools[0].accesses, before.pools[0].accesses * 9 / 10);
	EXPECT_LT(after.p99_ns, before.p99_ns * 0.95);
	expect_conserved(after);

	/* even pools: nothing to move */
	Scenario even = busy(false);
	even.rebalance.enabled = true;
	EXPECT_EQ(simulate(even).rebalanced_chunks, 0u);
}

TEST(Sim, RebalanceCopiesCostThePoolsTheirService)
{
	Scenario s = busy(true);
	s.rebalance.enabled = true;
	const Result free_moves = simulate(s);
	s.rebalance.copy = true;
	s.rebalance.rate_bytes = 2ULL << 30;
	const Result copies = simulate(s);
	EXPECT_GT(copies.rebalanced_chunks, 0u);
	EXPECT_LT(copies.rebalanced_chunks, free_moves.rebalanced_chunks);
	EXPECT_GT(copies.mean_ns, free_moves.mean_ns);
}
