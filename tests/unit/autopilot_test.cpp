// The DRAM autopilot's decision (kmod/policy/pm_autopilot.c, issue 50):
// its rules on chosen cases, and its invariants on random ones.
#include "policy/pm_autopilot.h"

#include <gtest/gtest.h>

#include <random>
#include <vector>

namespace {

constexpr u64 MiB = 1ULL << 20;

pm_ap_vm vm(u64 size, u64 min, u64 max, u64 quota, u64 hot)
{
	pm_ap_vm v{};
	v.size = size;
	v.min = min;
	v.max = max;
	v.local_quota = quota;
	v.chunk = 2 * MiB;
	v.hot = hot;
	return v;
}

pm_ap_host host(u64 budget, u64 step = 0)
{
	pm_ap_host h{};
	h.budget = budget;
	h.step = step;
	h.margin_pct = 10;
	h.hysteresis_pct = 5;
	return h;
}

u64 sum_targets(const std::vector<pm_ap_vm> &v)
{
	u64 s = 0;
	for (const auto &x : v)
		s += x.target;
	return s;
}

pm_ap_error decide(const pm_ap_host &h, std::vector<pm_ap_vm> &v)
{
	unsigned bad = 0;
	return pm_ap_decide(&h, v.data(), static_cast<unsigned>(v.size()), &bad);
}

TEST(Autopilot, EveryHotSetLocalWhenTheyFit)
{
	/* the rig test's four VMs: hot sets of 16, 32, 64 and 128 MiB */
	std::vector<pm_ap_vm> v;
	for (u64 hot : {16, 32, 64, 128})
		v.push_back(vm(256 * MiB, 8 * MiB, 256 * MiB, 64 * MiB, hot * MiB));
	auto h = host(512 * MiB);
	ASSERT_EQ(decide(h, v), PM_AP_OK);
	for (size_t i = 0; i < v.size(); i++) {
		EXPECT_GE(v[i].target, v[i].hot) << i;
		EXPECT_LE(v[i].target, v[i].hot + v[i].hot / 10 + v[i].chunk) << i;
		EXPECT_EQ(v[i].reason, PM_AP_HOT) << i;
	}
	EXPECT_LE(sum_targets(v), h.budget);
}

TEST(Autopilot, ShortBudgetSharedBeyondTheMins)
{
	std::vector<pm_ap_vm> v;
	for (u64 hot : {16, 32, 64, 128})
		v.push_back(vm(256 * MiB, 8 * MiB, 256 * MiB, 64 * MiB, hot * MiB));
	auto h = host(160 * MiB);
	ASSERT_EQ(decide(h, v), PM_AP_OK);
	EXPECT_LE(sum_targets(v), h.budget);
	for (size_t i = 0; i < v.size(); i++) {
		EXPECT_GE(v[i].target, v[i].min) << i;
		EXPECT_LE(v[i].target, v[i].want) << i;
	}
	/* more hot memory, more DRAM */
	for (size_t i = 1; i < v.size(); i++)
		EXPECT_GT(v[i].target, v[i - 1].target) << i;
	EXPECT_EQ(v[3].reason, PM_AP_BUDGET);
}

TEST(Autopilot, MinAndMaxBound)
{
	std::vector<pm_ap_vm> v = {vm(256 * MiB, 32 * MiB, 64 * MiB, 32 * MiB, 2 * MiB),
				   vm(256 * MiB, 8 * MiB, 64 * MiB, 32 * MiB, 200 * MiB)};
	ASSERT_EQ(decide(host(1024 * MiB), v), PM_AP_OK);
	EXPECT_EQ(v[0].target, 32 * MiB);
	EXPECT_EQ(v[0].reason, PM_AP_MIN);
	EXPECT_EQ(v[1].target, 64 * MiB);
	EXPECT_EQ(v[1].reason, PM_AP_MAX);
}

TEST(Autopilot, UntouchedMemoryNeedsNoDram)
{
	/* a hot set larger than what was ever faulted is bounded by the latter */
	std::vector<pm_ap_vm> v = {vm(256 * MiB, 8 * MiB, 256 * MiB, 8 * MiB, 200 * MiB)};
	v[0].untouched = 192 * MiB;
	ASSERT_EQ(decide(host(1024 * MiB), v), PM_AP_OK);
	EXPECT_LE(v[0].target, 64 * MiB + 64 * MiB / 10 + 2 * MiB);
}

TEST(Autopilot, SloBrokenGrowsPastTheHotSet)
{
	std::vector<pm_ap_vm> v = {vm(256 * MiB, 8 * MiB, 256 * MiB, 64 * MiB, 32 * MiB)};
	v[0].slo_permille = 50;
	v[0].pool_permille = 200;
	ASSERT_EQ(decide(host(1024 * MiB), v), PM_AP_OK);
	EXPECT_GT(v[0].target, 64 * MiB);
	EXPECT_EQ(v[0].reason, PM_AP_SLO);
	/* within its SLO, the hot set decides */
	v[0].pool_permille = 10;
	ASSERT_EQ(decide(host(1024 * MiB), v), PM_AP_OK);
	EXPECT_LT(v[0].target, 64 * MiB);
}

TEST(Autopilot, FixedKeepsItsQuotaAndCountsAgainstTheBudget)
{
	std::vector<pm_ap_vm> v = {vm(256 * MiB, 8 * MiB, 256 * MiB, 200 * MiB, 8 * MiB),
				   vm(256 * MiB, 8 * MiB, 256 * MiB, 8 * MiB, 128 * MiB)};
	v[0].flags = PM_AP_F_FIXED;
	auto h = host(256 * MiB);
	ASSERT_EQ(decide(h, v), PM_AP_OK);
	EXPECT_EQ(v[0].target, 200 * MiB);
	EXPECT_EQ(v[0].reason, PM_AP_FIXED);
	EXPECT_LE(v[1].target, 56 * MiB);
	EXPECT_LE(sum_targets(v), h.budget);
}

TEST(Autopilot, SmallChangesWaitUnlessTheBudgetNeedsThem)
{
	std::vector<pm_ap_vm> v = {vm(1024 * MiB, 8 * MiB, 1024 * MiB, 500 * MiB, 470 * MiB)};
	/* wants 518 MiB (+18, under 5% of 500): held */
	ASSERT_EQ(decide(host(2048 * MiB), v), PM_AP_OK);
	EXPECT_EQ(v[0].target, 500 * MiB);
	EXPECT_EQ(v[0].reason, PM_AP_HOLD);
	/* a small shrink the budget needs goes through */
	v[0].hot = 420 * MiB; /* wants 462 */
	ASSERT_EQ(decide(host(480 * MiB), v), PM_AP_OK);
	EXPECT_LE(v[0].target, 480 * MiB);
}

TEST(Autopilot, MoveBudgetStepsTowardTheTarget)
{
	std::vector<pm_ap_vm> v;
	for (u64 hot : {16, 32, 64, 128})
		v.push_back(vm(256 * MiB, 8 * MiB, 256 * MiB, 64 * MiB, hot * MiB));
	auto h = host(512 * MiB, 32 * MiB);
	ASSERT_EQ(decide(h, v), PM_AP_OK);
	u64 moved = 0;
	for (const auto &x : v)
		moved += x.target > x.local_quota ? x.target - x.local_quota : x.local_quota - x.target;
	EXPECT_LE(moved, h.step + v.size() * 2 * MiB);
	EXPECT_GT(moved, 0u);
	/* applied round after round, the quotas reach the unlimited decision */
	for (int round = 0; round < 40; round++) {
		for (auto &x : v)
			x.local_quota = x.target;
		ASSERT_EQ(decide(h, v), PM_AP_OK);
		EXPECT_LE(sum_targets(v), h.budget);
	}
	auto free = v;
	ASSERT_EQ(decide(host(512 * MiB), free), PM_AP_OK);
	for (size_t i = 0; i < v.size(); i++)
		EXPECT_EQ(v[i].target, free[i].target) << i;
}

TEST(Autopilot, BadInputNamesTheVm)
{
	unsigned bad = 99;
	std::vector<pm_ap_vm> v = {vm(256 * MiB, 8 * MiB, 64 * MiB, 8 * MiB, 0),
				   vm(256 * MiB, 128 * MiB, 64 * MiB, 8 * MiB, 0)};
	auto h = host(1024 * MiB);
	EXPECT_EQ(pm_ap_decide(&h, v.data(), 2, &bad), PM_AP_ERR_BOUNDS);
	EXPECT_EQ(bad, 1u);
	v[1].min = 8 * MiB;
	v[1].slo_permille = 1001;
	EXPECT_EQ(pm_ap_decide(&h, v.data(), 2, &bad), PM_AP_ERR_SLO);
	EXPECT_EQ(bad, 1u);
	v[1].slo_permille = 0;
	v[0].min = v[1].min = 64 * MiB;
	h.budget = 100 * MiB;
	EXPECT_EQ(pm_ap_decide(&h, v.data(), 2, &bad), PM_AP_ERR_BUDGET);
	EXPECT_EQ(bad, 2u);
	v[0].chunk = 3 * MiB;
	EXPECT_EQ(pm_ap_decide(&h, v.data(), 2, &bad), PM_AP_ERR_BOUNDS);
	EXPECT_EQ(bad, 0u);
}

TEST(Autopilot, InvariantsOnRandomHosts)
{
	std::mt19937_64 rng(50);
	for (int t = 0; t < 2000; t++) {
		std::vector<pm_ap_vm> v;
		const unsigned n = 1 + rng() % 12;
		u64 mins = 0, cur = 0;
		for (unsigned i = 0; i < n; i++) {
			const u64 size = (1 + rng() % 512) * 2 * MiB;
			const u64 max = (1 + rng() % (size / (2 * MiB))) * 2 * MiB;
			const u64 min = (rng() % (max / (2 * MiB) + 1)) * 2 * MiB;
			auto x = vm(size, min, max, min + (rng() % ((max - min) / (2 * MiB) + 1)) * 2 * MiB,
				    (rng() % (size / MiB + 1)) * MiB);
			x.untouched = (rng() % 4 == 0) ? (rng() % (size / MiB + 1)) * MiB : 0;
			if (rng() % 3 == 0) {
				x.slo_permille = 1 + rng() % 100;
				x.pool_permille = rng() % 300;
			}
			if (rng() % 10 == 0)
				x.flags = PM_AP_F_FIXED;
			mins += x.flags ? x.local_quota : x.min;
			cur += x.local_quota;
			v.push_back(x);
		}
		const u64 budget = std::max(mins, cur) + (rng() % 256) * 2 * MiB;
		const u64 step = rng() % 2 ? 0 : (1 + rng() % 64) * 2 * MiB;
		auto h = host(budget, step);
		ASSERT_EQ(decide(h, v), PM_AP_OK) << t;
		EXPECT_LE(sum_targets(v), budget) << t;
		for (const auto &x : v) {
			if (x.flags) {
				EXPECT_EQ(x.target, x.local_quota) << t;
				continue;
			}
			EXPECT_LE(x.target, x.max) << t;
			/* below min only on the way up to it, a step at a time */
			EXPECT_TRUE(x.target >= x.min || x.reason == PM_AP_RATE) << t;
		}
	}
}

} // namespace
